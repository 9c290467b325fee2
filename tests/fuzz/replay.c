/*
 * replay.c — runs a fuzz target over saved inputs without libFuzzer, so
 * the corpus of tests/fuzz is exercised by every `meson test` (gcc or
 * clang, no sanitizer needed): `replay_spec DIR|FILE...` calls
 * LLVMFuzzerTestOneInput once per file (a folder's files in name order).
 *
 * A broken check in the target aborts with its reason; a crash is a
 * crash.  Exit status: 0 when every input ran, 1 when there was none or
 * one could not be read (an empty corpus must not pass silently).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

/* Runs the target on the file at path; 0 on success. */
static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return 1;
    }
    size_t cap = 4096, n = 0, got;
    uint8_t *buf = malloc(cap);
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *grown = realloc(buf, cap *= 2);
            if (!grown)
                free(buf);
            buf = grown;
        }
    }
    int bad = !buf || ferror(f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        free(buf);
        return 1;
    }
    /* a copy of exactly n bytes, so reading past the input is caught by
     * ASan as it is under libFuzzer */
    uint8_t *exact = malloc(n ? n : 1);
    if (!exact) {
        free(buf);
        return 1;
    }
    memcpy(exact, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every regular file of folder dir; adds their number to *count. */
static int replay_dir(const char *dir, int *count)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **names = NULL;
    int n = 0, failed = 0;
    if (!d) {
        fprintf(stderr, "replay: cannot open folder %s\n", dir);
        return 1;
    }
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char **grown = realloc(names, (size_t)(n + 1) * sizeof *names);
        if (!grown)
            break;
        names = grown;
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        if (!(names[n] = malloc(len)))
            break;
        snprintf(names[n++], len, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, by_name);
    for (int i = 0; i < n; i++) {
        struct stat sb;
        if (stat(names[i], &sb) == 0 && S_ISREG(sb.st_mode)) {
            failed |= replay_file(names[i]);
            ++*count;
        }
        free(names[i]);
    }
    free(names);
    return failed;
}

int main(int argc, char **argv)
{
    int count = 0, failed = 0;
    for (int i = 1; i < argc; i++) {
        struct stat sb;
        if (stat(argv[i], &sb) == 0 && S_ISDIR(sb.st_mode))
            failed |= replay_dir(argv[i], &count);
        else {
            failed |= replay_file(argv[i]);
            count++;
        }
    }
    printf("replay: %d inputs\n", count);
    if (count == 0)
        fprintf(stderr, "replay: no inputs (usage: %s DIR|FILE...)\n", argv[0]);
    return failed || count == 0;
}
