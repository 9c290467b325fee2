/* placeholder: not written yet */
int main(void) { return 77; }
