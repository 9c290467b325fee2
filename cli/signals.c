/*
 * signals.c — what SIGINT, SIGTERM and SIGHUP do to a meshrt command:
 * the temporary file being written, if any, is removed
 * (mrt_output_remove_partial), one line says the command was interrupted,
 * and the process ends by the same signal (status 128+N in a shell;
 * mpirun, which forwards these signals to every rank, then exits 1).
 *
 * Under mpirun every rank gets the signal, so only one prints: rank 0,
 * known from MPI once MPI_Init has run and from mpirun's environment
 * before.  Everything the handler does is async-signal-safe: the lines
 * are formatted when the handlers are installed, and it only calls
 * unlink, write, sigaction, sigprocmask and raise.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const int caught[] = {SIGINT, SIGTERM, SIGHUP};
static const char *const caught_name[] = {"SIGINT", "SIGTERM", "SIGHUP"};
#define NCAUGHT ((int)(sizeof caught / sizeof caught[0]))
_Static_assert(sizeof caught_name / sizeof caught_name[0] == NCAUGHT,
               "one name per signal");

static char line[NCAUGHT][160];
static size_t line_len[NCAUGHT];
static volatile sig_atomic_t quiet; /* a rank other than 0 */

static void on_signal(int sig)
{
    mrt_file_remove_partial();
    for (int k = 0; k < NCAUGHT && !quiet; k++)
        if (caught[k] == sig && write(STDERR_FILENO, line[k], line_len[k]))
            break;
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
}

/* The rank mpirun gave this process, from its environment (Open MPI,
 * PMIx, MPICH's hydra), or 0 outside mpirun. */
int mrt_cli_launcher_rank(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK",
                                       "PMI_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return atoi(v);
    }
    return 0;
}

void mrt_cli_signals_done(void)
{
    /* MPI_Finalize waits for every rank, so no rank exits (and makes
     * mpirun terminate the others) before all have got here */
    quiet = 1;
}

void mrt_cli_signals_install(const char *cmd, int rank)
{
    quiet = (rank < 0 ? mrt_cli_launcher_rank() : rank) != 0;
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    for (int k = 0; k < NCAUGHT; k++)
        sigaddset(&sa.sa_mask, caught[k]); /* one handler at a time */
    for (int k = 0; k < NCAUGHT; k++) {
        int n = snprintf(line[k], sizeof line[k],
                         "meshrt: error: interrupted by signal %d (%s): "
                         "'meshrt %.40s' did not finish\n",
                         caught[k], caught_name[k], cmd);
        line_len[k] = n < 0                        ? 0
                      : (size_t)n < sizeof line[k] ? (size_t)n
                                                   : sizeof line[k] - 1;
        struct sigaction old;
        /* A signal ignored when we started (nohup, a background job of a
         * shell without job control) stays ignored. */
        if (sigaction(caught[k], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaction(caught[k], &sa, NULL);
    }
}
