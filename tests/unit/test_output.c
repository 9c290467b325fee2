/*
 * test_output.c — the file-output module (io/output.c): temporary
 * files with random names, created exclusively and with the umask's
 * mode; a signal handler that removes the partial file; what each kind of
 * path becomes (links, pipes, folders); the status of each failure.
 *
 * Files live in a fresh folder under /tmp, removed at the end.  The
 * callbacks look into the folder while the write is under way, which is
 * the only time the temporary file exists.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "output.h"

static char dir[256];

static int make_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/mrt_test_output.XXXXXX");
    return mkdtemp(dir) != NULL;
}

static void remove_dir(void)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char p[600];
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
    closedir(d);
    rmdir(dir);
}

/* The names in dir other than . and .., joined by spaces (sorted by
 * nothing: the tests look at one or two). */
static int list_dir(char *out, size_t size)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    int n = 0;
    size_t len = 0;
    struct dirent *e;
    out[0] = '\0';
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            len += (size_t)snprintf(out + len, size - len, "%s%s",
                                    n++ ? " " : "", e->d_name);
            ck_assert_uint_lt(len, size);
        }
    closedir(d);
    return n;
}

static void put_text(FILE *f, const void *ctx)
{
    fputs(ctx, f);
}

static void slurp(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(buf, 1, size - 1, f);
    buf[n] = '\0';
    fclose(f);
}

/* ---- temporary names ------------------------------------------------ */

struct seen {
    const char *skip; /* a name not to count (a planted link), or NULL */
    char name[300];   /* a temporary file seen during the write */
    int others;       /* how many temporary files there were */
    mode_t mode;      /* its lstat mode */
};

static void spy(FILE *f, const void *ctx)
{
    struct seen *s = (struct seen *)ctx;
    DIR *d = opendir(dir);
    struct dirent *e;
    s->others = 0;
    while (d && (e = readdir(d)))
        if (strstr(e->d_name, ".tmp.") &&
            !(s->skip && strcmp(e->d_name, s->skip) == 0)) {
            snprintf(s->name, sizeof s->name, "%s", e->d_name);
            s->others++;
        }
    if (d)
        closedir(d);
    char p[600];
    struct stat sb;
    snprintf(p, sizeof p, "%s/%s", dir, s->name);
    s->mode = lstat(p, &sb) == 0 ? sb.st_mode : 0;
    fputs("spied\n", f);
}

static int random_tail(const char *name, const char *prefix)
{
    size_t n = strlen(prefix);
    if (strncmp(name, prefix, n) != 0 || strlen(name + n) != 12)
        return 0;
    for (const char *c = name + n; *c; c++)
        if (!strchr("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                    "abcdefghijklmnopqrstuvwxyz",
                    *c))
            return 0;
    return 1;
}

START_TEST(temporary_names)
{
    char path[300], planted[350], victim[300], buf[64];
    snprintf(path, sizeof path, "%s/t.json", dir);
    snprintf(victim, sizeof victim, "%s/victim", dir);
    /* the predictable name of old: PATH.tmp.PID, as a link */
    snprintf(planted, sizeof planted, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(victim, "w");
    fputs("precious", f);
    fclose(f);
    ck_assert_int_eq(symlink(victim, planted), 0);

    const char *skip = strrchr(planted, '/') + 1;
    struct seen a = {.skip = skip}, b = {.skip = skip};
    mrt_error err = {0};
    ck_assert_int_eq(mrt_write_atomically(path, "a", spy, &a, &err), MRT_OK);
    ck_assert_int_eq(mrt_write_atomically(path, "b", spy, &b, &err), MRT_OK);
    /* One temporary file each besides the planted link, a regular file
     * named t.json.tmp. and 12 random characters, different each time. */
    ck_assert_int_eq(a.others, 1);
    ck_assert_int_eq(b.others, 1);
    ck_assert_msg(random_tail(a.name, "t.json.tmp."), "temporary name %s",
                  a.name);
    ck_assert(S_ISREG(a.mode));
    ck_assert_str_ne(a.name, b.name);
    slurp(victim, buf, sizeof buf);
    ck_assert_str_eq(buf, "precious");
    slurp(path, buf, sizeof buf);
    ck_assert_str_eq(buf, "spied\n");
    struct stat sb;
    ck_assert_int_eq(lstat(planted, &sb), 0);
    ck_assert(S_ISLNK(sb.st_mode));
    char names[1024];
    ck_assert_int_eq(list_dir(names, sizeof names), 3);
    unlink(planted);
    unlink(victim);
    unlink(path);
}
END_TEST

START_TEST(temporary_file_form)
{
    char path[300];
    snprintf(path, sizeof path, "%s/u.csv", dir);
    mode_t old = umask(027);
    struct seen s = {0};
    ck_assert_int_eq(mrt_write_atomically(path, "u", spy, &s, NULL), MRT_OK);
    ck_assert_int_eq(s.others, 1);
    ck_assert_msg(random_tail(s.name, "u.csv.tmp."), "temporary name %s",
                  s.name);
    ck_assert(S_ISREG(s.mode));
    ck_assert_int_eq(s.mode & 0777, 0640); /* 0666 less the umask */
    struct stat sb;
    ck_assert_int_eq(stat(path, &sb), 0);
    ck_assert_int_eq(sb.st_mode & 0777, 0640);
    umask(old);
    unlink(path);
}
END_TEST

/* ---- a signal in the middle of a write ------------------------------ */

static void on_term(int sig)
{
    mrt_output_remove_partial();
    _exit(40 + sig % 20);
}

static void half_then_signal(FILE *f, const void *ctx)
{
    for (int i = 0; i < 100000; i++)
        fputs("partial line of output\n", f);
    fflush(f);
    raise(SIGTERM);
    fputs("never\n", f);
}

START_TEST(signal_removes_partial)
{
    char path[300], buf[64], names[1024];
    snprintf(path, sizeof path, "%s/s.npy", dir);
    FILE *f = fopen(path, "w");
    fputs("old", f);
    fclose(f);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        struct sigaction sa = {.sa_handler = on_term};
        sigemptyset(&sa.sa_mask);
        sigaction(SIGTERM, &sa, NULL);
        mrt_write_atomically(path, "s", half_then_signal, NULL, NULL);
        _exit(0);
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(WEXITSTATUS(status), 40 + SIGTERM % 20);
    ck_assert_int_eq(list_dir(names, sizeof names), 1); /* no s.npy.tmp.* */
    ck_assert_str_eq(names, "s.npy");
    slurp(path, buf, sizeof buf);
    ck_assert_str_eq(buf, "old");
    /* With nothing being written, the call does nothing. */
    mrt_output_remove_partial();
    ck_assert_int_eq(list_dir(names, sizeof names), 1);
    unlink(path);
}
END_TEST

/* ---- what the path is ----------------------------------------------- */

START_TEST(kinds_of_path)
{
    char path[300], link[300], fifo[300], names[1024], buf[64];
    mrt_error err = {0};
    /* a link to a regular file: the file is replaced, the link kept */
    snprintf(path, sizeof path, "%s/real", dir);
    snprintf(link, sizeof link, "%s/link", dir);
    FILE *f = fopen(path, "w");
    fputs("old", f);
    fclose(f);
    ck_assert_int_eq(symlink("real", link), 0);
    ck_assert_int_eq(mrt_write_atomically(link, "x", put_text, "new", &err),
                     MRT_OK);
    struct stat sb;
    ck_assert_int_eq(lstat(link, &sb), 0);
    ck_assert(S_ISLNK(sb.st_mode));
    slurp(path, buf, sizeof buf);
    ck_assert_str_eq(buf, "new");
    ck_assert_int_eq(list_dir(names, sizeof names), 2);
    unlink(link);
    unlink(path);

    /* a dangling link: an error, and nothing created */
    ck_assert_int_eq(symlink("nowhere", link), 0);
    ck_assert_int_eq(mrt_write_atomically(link, "x", put_text, "new", &err),
                     MRT_E_IO);
    ck_assert_ptr_nonnull(strstr(err.message, "symbolic link to a missing"));
    ck_assert_int_eq(list_dir(names, sizeof names), 1);
    unlink(link);

    /* a named pipe: written through, and still a pipe */
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        FILE *r = fopen(fifo, "r");
        char got[64] = "";
        size_t n = r ? fread(got, 1, sizeof got - 1, r) : 0;
        got[n] = '\0';
        _exit(strcmp(got, "through the pipe") == 0 ? 0 : 1);
    }
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(
        mrt_write_atomically(fifo, "x", put_text, "through the pipe", &err),
        MRT_OK);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert_int_eq(lstat(fifo, &sb), 0);
    ck_assert(S_ISFIFO(sb.st_mode));
    ck_assert_int_eq(list_dir(names, sizeof names), 1);
    unlink(fifo);

    /* a folder: an error, and it stays a folder */
    snprintf(path, sizeof path, "%s/folder", dir);
    ck_assert_int_eq(mkdir(path, 0755), 0);
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(mrt_write_atomically(path, "x", put_text, "no", &err),
                     MRT_E_IO);
    ck_assert_ptr_nonnull(strstr(err.message, "it is a folder"));
    ck_assert_int_eq(list_dir(names, sizeof names), 1);
    rmdir(path);
}
END_TEST

START_TEST(failure_statuses)
{
    /* what the user named cannot be a file: bad input (exit 2) */
    ck_assert_int_eq(mrt_output_status(ENOENT), MRT_E_IO);
    ck_assert_int_eq(mrt_output_status(ENOTDIR), MRT_E_IO);
    ck_assert_int_eq(mrt_output_status(EISDIR), MRT_E_IO);
    ck_assert_int_eq(mrt_output_status(ENAMETOOLONG), MRT_E_IO);
    /* the system refused to store it: a run-time failure (exit 1) */
    ck_assert_int_eq(mrt_output_status(ENOSPC), MRT_E_RUNTIME);
    ck_assert_int_eq(mrt_output_status(EDQUOT), MRT_E_RUNTIME);
    ck_assert_int_eq(mrt_output_status(EACCES), MRT_E_RUNTIME);
    ck_assert_int_eq(mrt_output_status(EPERM), MRT_E_RUNTIME);
    ck_assert_int_eq(mrt_output_status(EROFS), MRT_E_RUNTIME);
    ck_assert_int_eq(mrt_output_status(EIO), MRT_E_RUNTIME);

    /* a missing folder: MRT_E_IO, on the path, nothing left */
    char path[300], names[1024];
    snprintf(path, sizeof path, "%s/no/such/t.csv", dir);
    mrt_error err = {0};
    ck_assert_int_eq(
        mrt_write_atomically(path, "the table", put_text, "x", &err), MRT_E_IO);
    ck_assert_str_eq(err.file, path);
    ck_assert_ptr_nonnull(strstr(err.message, "cannot write the table: "));
    ck_assert_int_eq(list_dir(names, sizeof names), 0);
}
END_TEST

int main(void)
{
    if (!make_dir()) {
        perror("mkdtemp");
        return 1;
    }
    Suite *s = suite_create("output");
    TCase *tc = tcase_create("output");
    tcase_add_test(tc, temporary_names);
    tcase_add_test(tc, temporary_file_form);
    tcase_add_test(tc, signal_removes_partial);
    tcase_add_test(tc, kinds_of_path);
    tcase_add_test(tc, failure_statuses);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    remove_dir();
    return failed ? 1 : 0;
}
