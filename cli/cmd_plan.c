/* placeholder: not written yet */
typedef int mrt_placeholder_t;
