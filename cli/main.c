/*
 * main.c — `meshrt COMMAND SPEC [OPTIONS]`: picks the subcommand.
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* 0 if everything printed on the standard output reached it, else why
 * not (an errno).  The errno of the write that failed is long gone when
 * a command ends (MPI_Finalize's cleanup alone sets ENOENT many times),
 * and the C library dropped the bytes it could not write, so the
 * system is asked again with one byte: a full disk, a closed pipe, a
 * read-only or broken file refuse it the same way.  (If the cause went
 * away meanwhile, the byte lands after an output that is cut short
 * anyway, and the answer is EIO.) */
static int stdout_error(void)
{
    errno = 0;
    if (fflush(stdout) != 0 && errno) /* a write that failed just now */
        return errno;
    if (!ferror(stdout))
        return 0;
    errno = 0;
    ssize_t n = write(STDOUT_FILENO, "\n", 1);
    return n < 0 && errno ? errno : EIO;
}

/* A rank other than the launcher's rank 0, leaving on a usage error
 * that rank 0 prints: the first rank to exit with a failure makes
 * mpirun end the others, rank 0 perhaps before its line is out (1 run
 * in 10 at 4 ranks lost it).  Waiting a moment lets rank 0 leave first;
 * only this error path waits. */
static void linger(void)
{
    struct timespec t = {0, 300 * 1000 * 1000};
    nanosleep(&t, NULL);
}

int main(int argc, char **argv)
{
    /* The commands that run kernels pick BLIS's kernel family before
     * anything can call BLIS or start a thread (MPI_Init): mrt_init. */
    if (argc >= 2 &&
        (strcmp(argv[1], "run") == 0 || strcmp(argv[1], "calibrate") == 0 ||
         strcmp(argv[1], "validate") == 0))
        mrt_init(NULL);
    if (argc < 2 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        mrt_cli_usage(argc > 2 ? argv[2] : NULL, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("meshrt %s\n", mrt_version());
        return 0;
    }
    mrt_cli_args a = {.cmd = argv[1]};
    int (*cmd)(const mrt_cli_args *) = NULL;
    if (strcmp(a.cmd, "check") == 0)
        cmd = mrt_cli_check;
    else if (strcmp(a.cmd, "plan") == 0)
        cmd = mrt_cli_plan;
    else if (strcmp(a.cmd, "run") == 0)
        cmd = mrt_cli_run;
    else if (strcmp(a.cmd, "calibrate") == 0)
        cmd = mrt_cli_calibrate;
    else if (strcmp(a.cmd, "compare") == 0)
        cmd = mrt_cli_compare;
    else if (strcmp(a.cmd, "search") == 0)
        cmd = mrt_cli_search;
    else if (strcmp(a.cmd, "show") == 0)
        cmd = mrt_cli_show;
    else if (strcmp(a.cmd, "validate") == 0)
        cmd = mrt_cli_validate;
    mrt_error err = {0};
    if (!cmd) { /* through the error formatter, which escapes a newline */
        mrt_cli_error(&err, MRT_E_USAGE, "meshrt",
                      "unknown command '%.200s' "
                      "(commands: check, plan, run, calibrate, compare, "
                      "search, show, validate; see meshrt --help)",
                      a.cmd);
        mrt_cli_print_error(&err);
        return 2;
    }
    if (mrt_cli_parse(argc - 1, argv + 1, &a, &err) != MRT_OK) {
        if (mrt_cli_launcher_rank() == 0) /* one line for the job */
            mrt_cli_print_error(&err);
        else
            linger();
        return 2;
    }
    if (a.help) {
        mrt_cli_usage(a.cmd, stdout);
        return 0;
    }
    mrt_cli_signals_install(a.cmd, -1);
    /* Planning a long program grows and frees tables of hundreds of MB.
     * Left to glibc, each goes to its own mapping that realloc moves with
     * mremap; on a virtual machine with shadow page tables that remapping
     * and the faults after it were a third of `plan`'s time for 100,000
     * ops (bench_planning).  Commands that only plan keep them in the
     * heap.  `run` keeps the default: its shard arena relies on calloc's
     * large blocks being fresh zero mappings (kernels/big_alloc.c).  So
     * do `validate` and `calibrate`, which time collectives as `run`
     * makes them: Open MPI's allreduce and reduce-scatter take a
     * temporary buffer per call, and in the heap each was given back
     * to the system at free and faulted in again at the next call
     * (calibrate's allreduce of 1 MiB measured 500 us, a run's 70). */
    if (strcmp(a.cmd, "run") != 0 && strcmp(a.cmd, "validate") != 0 &&
        strcmp(a.cmd, "calibrate") != 0)
        mallopt(M_MMAP_THRESHOLD, 1 << 30);
    int code = cmd(&a);
    /* What was printed is an output too: a full disk is not success. */
    int e = stdout_error();
    if (e && code == 0) {
        mrt_cli_error(&err, MRT_E_RUNTIME, "meshrt",
                      "cannot write the "
                      "standard output: %s",
                      strerror(e));
        mrt_cli_print_error(&err);
    }
    return code ? code : e ? 1 : 0;
}
