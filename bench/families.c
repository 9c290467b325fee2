/*
 * families.c — context for the BLIS kernel choice (kernels/blis_arch.c):
 * single-threaded dgemm and sgemm GFLOP/s of every x86 kernel family
 * this BLIS ships, each in its own child process (BLIS fixes its family
 * at its first call, from BLIS_ARCH_TYPE, which BLIS 0.9 reads as a
 * number).  A family whose instructions the CPU lacks dies of SIGILL in
 * its child and is reported so.  Not a target: rows have no goal.
 *
 * usage: bench_families [N [REPS]]   (n x n x n products; default 1536, 3)
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <blis.h>

#include "bench.h"
#include "blis_arch.h"

static const char *const families[] = {"skx",       "zen3",    "zen2",
                                       "zen",       "haswell", "sandybridge",
                                       "excavator", "penryn",  "generic"};
#define NFAM (int)(sizeof families / sizeof families[0])

/* In the child: median GFLOP/s of dgemm and sgemm into out[0..2). */
static void measure(int n, int reps, double out[2])
{
    bli_thread_set_num_threads(1);
    size_t nn = (size_t)n * (size_t)n;
    double *a = malloc(3 * nn * sizeof *a), t[MRT_BENCH_MAX_REPS];
    if (!a)
        _exit(1);
    for (int dt = 0; dt < 2; dt++) {
        mrt_bench_fill(a, dt ? MRT_F32 : MRT_F64, (int64_t)(2 * nn), 1);
        for (int r = 0; r < reps; r++) {
            double t0 = mrt_bench_now();
            if (dt == 0) {
                double one = 1, zero = 0;
                bli_dgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, n, n, n, &one,
                          a, n, 1, a + nn, n, 1, &zero, a + 2 * nn, n, 1);
            } else {
                float one = 1, zero = 0, *f = (float *)a;
                bli_sgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, n, n, n, &one,
                          f, n, 1, f + nn, n, 1, &zero, f + 2 * nn, n, 1);
            }
            t[r] = mrt_bench_now() - t0;
        }
        out[dt] = 2.0 * n * n * (double)n / mrt_bench_median(t, reps) * 1e-9;
    }
    free(a);
}

/* The family BLIS picks with BLIS_ARCH_TYPE unset, asked in a child. */
static const char *own_family(void)
{
    int fd[2], id = -1;
    if (pipe(fd) != 0)
        return "unknown";
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        unsetenv("BLIS_ARCH_TYPE");
        id = (int)bli_arch_query_id();
        _exit(write(fd[1], &id, sizeof id) == sizeof id ? 0 : 1);
    }
    close(fd[1]);
    if (pid < 0 || read(fd[0], &id, sizeof id) != sizeof id)
        id = -1;
    close(fd[0]);
    if (pid > 0)
        waitpid(pid, NULL, 0);
    return id >= 0 && id < BLIS_NUM_ARCHS ? bli_arch_string((arch_t)id)
                                          : "unknown";
}

/* Forks a child running family id; 0 and the rates, or the signal that
 * killed it, or -1. */
static int run_family(int id, int n, int reps, double out[2])
{
    int fd[2];
    if (pipe(fd) != 0)
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        char v[16];
        snprintf(v, sizeof v, "%d", id);
        setenv("BLIS_ARCH_TYPE", v, 1);
        close(fd[0]);
        measure(n, reps, out);
        _exit(write(fd[1], out, 2 * sizeof *out) == 2 * sizeof *out ? 0 : 1);
    }
    close(fd[1]);
    ssize_t got = pid > 0 ? read(fd[0], out, 2 * sizeof *out) : -1;
    close(fd[0]);
    int status = 0;
    if (pid > 0)
        waitpid(pid, &status, 0);
    if (WIFSIGNALED(status))
        return WTERMSIG(status);
    return got == 2 * sizeof *out && WIFEXITED(status) &&
                   WEXITSTATUS(status) == 0
               ? 0
               : -1;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1536;
    int reps = argc > 2 ? atoi(argv[2]) : 3;
    if (n < 64)
        n = 1536;
    if (reps < 1 || reps > MRT_BENCH_MAX_REPS)
        reps = 3;
    /* The parent never starts BLIS, so each child starts it afresh. */
    mrt_cpu cpu = mrt_cpu_detect();
    const char *best = mrt_blis_best_family(&cpu);
    printf("# BLIS on its own picks %s here; meshrt's table: %s\n",
           own_family(), best);
    double rate[NFAM][2], generic = 0;
    int sig[NFAM];
    for (int i = 0; i < NFAM; i++) {
        int id = mrt_blis_family_id(families[i]);
        sig[i] = id < 0 ? -1 : run_family(id, n, reps, rate[i]);
        if (sig[i] == 0 && strcmp(families[i], "generic") == 0)
            generic = rate[i][0];
    }
    for (int i = 0; i < NFAM; i++) {
        char name[64];
        snprintf(name, sizeof name, "family %s, dgemm GFLOP/s", families[i]);
        const char *mark = strcmp(families[i], best) == 0
                               ? "; meshrt's table picks it for this CPU"
                               : "";
        if (sig[i] == 0)
            mrt_bench_result(0, name, rate[i][0], "-",
                             "sgemm %.1f GFLOP/s; dgemm %.1fx generic's; "
                             "n = %d, one thread%s",
                             rate[i][1], generic > 0 ? rate[i][0] / generic : 0,
                             n, mark);
        else if (sig[i] > 0)
            mrt_bench_result(0, name, -1, "-",
                             "killed by %s: this CPU lacks its instructions%s",
                             strsignal(sig[i]), mark);
        else
            mrt_bench_result(0, name, -1, "-", "not in this BLIS%s", mark);
    }
    return 0;
}
