/*
 * cmd_calibrate.c — `mpirun -n P meshrt calibrate [--mesh AXIS=N,...]
 * [--out FILE] [--quick]`: measures the machine (runtime/calibrate.c),
 * prints what it found next to the model's predictions, and writes the
 * machine profile that plan and run read (to --out FILE, else to the
 * default path, ~/.config/meshrt/profile.yaml).
 *
 * Like run, every rank parses the same arguments and the ranks agree on
 * each outcome, so a bad --mesh or a mesh of the wrong size gives one
 * error line (from the lowest failing rank) and exit status 2 on every
 * rank, never a hang.
 */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate.h"
#include "cli.h"
#include "profile_io.h"
#include "spec.h"

static const mrt_mark no_mark = {0, 0};

static int name_ok(const char *s, size_t n)
{
    if (n == 0 || n >= MRT_NAME_MAX || (s[0] >= '0' && s[0] <= '9'))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!strchr("abcdefghijklmnopqrstuvwxyz"
                    "ABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789", s[i]) || !s[i])
            return 0;
    return 1;
}

/* Adds "AXIS=SIZE" (item[0..n)) to m; else says why and returns 0. */
static int add_axis(const char *item, size_t n, mrt_mesh *m, char *why,
                    size_t size)
{
    const char *eq = memchr(item, '=', n);
    if (!eq)
        return snprintf(why, size, "'%.*s' is not AXIS=SIZE", (int)n, item),
               0;
    size_t len = (size_t)(eq - item);
    char *end;
    long v = strtol(eq + 1, &end, 10);
    if (!name_ok(item, len))
        return snprintf(why, size, "'%.*s' is not a valid axis name",
                        (int)len, item), 0;
    if (end != item + n || end == eq + 1 || eq[1] == '-' || eq[1] == '+' ||
        v < 1 || v > INT_MAX)
        return snprintf(why, size, "the size of axis '%.*s' must be a "
                        "positive integer, got '%.*s'", (int)len, item,
                        (int)(item + n - eq - 1), eq + 1), 0;
    for (int a = 0; a < m->naxes; a++)
        if (strlen(m->name[a]) == len && !strncmp(m->name[a], item, len))
            return snprintf(why, size, "axis '%.*s' is given twice",
                            (int)len, item), 0;
    if (m->naxes == MRT_MAX_AXES)
        return snprintf(why, size, "more than %d axes", MRT_MAX_AXES), 0;
    if (v > INT_MAX / m->nranks)
        return snprintf(why, size, "more than %d ranks", INT_MAX), 0;
    snprintf(m->name[m->naxes], MRT_NAME_MAX, "%.*s", (int)len, item);
    m->size[m->naxes++] = v;
    m->nranks *= v;
    return 1;
}

/* The mesh of --mesh "data=2,model=2", or one axis `world` of all the
 * ranks; its size must be the world's. */
static mrt_status parse_mesh(const char *s, int ranks, mrt_mesh *m,
                             mrt_error *err)
{
    memset(m, 0, sizeof *m);
    m->nranks = 1;
    if (!s) {
        snprintf(m->name[0], MRT_NAME_MAX, "world");
        m->naxes = 1;
        m->size[0] = m->nranks = ranks;
        return MRT_OK;
    }
    char why[256] = "expected AXIS=SIZE[,AXIS=SIZE...]";
    for (const char *p = s;;) {
        size_t n = strcspn(p, ",");
        if (!add_axis(p, n, m, why, sizeof why))
            return mrt_error_set(err, MRT_E_USAGE, "meshrt", no_mark,
                                 "invalid --mesh '%.100s': %s", s, why);
        if (!p[n])
            break;
        p += n + 1;
    }
    if (m->nranks != ranks)
        return mrt_error_set(err, MRT_E_MESH, "meshrt", no_mark,
                             "the mesh %s has %lld ranks but mpirun started "
                             "%d (run with -n %lld, or give a --mesh of %d "
                             "ranks)", s, (long long)m->nranks, ranks,
                             (long long)m->nranks, ranks);
    return MRT_OK;
}

/* Rank 0 prints the figures and writes the profile; with --out - the
 * profile is the standard output and the figures go to stderr. */
static mrt_status report(const mrt_calibration *c, const char *path,
                         int is_default, mrt_error *err)
{
    int to_stdout = strcmp(path, "-") == 0;
    mrt_calibration_print(c, to_stdout ? stderr : stdout);
    char *yaml = mrt_calibration_yaml(c);
    mrt_status st = yaml ? mrt_profile_save_measured(path, &c->profile, yaml,
                                                     err)
                         : mrt_error_set(err, MRT_E_NOMEM, path, no_mark,
                                         "out of memory");
    free(yaml);
    if (st == MRT_OK && !to_stdout)
        printf("wrote the machine profile to %s%s\n", path,
               is_default ? " (plan and run read it from now on)" : "");
    fflush(stdout);
    return st;
}

int mrt_cli_calibrate(const mrt_cli_args *a)
{
    MPI_Init(NULL, NULL);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    mrt_cli_signals_install(a->cmd, rank); /* after MPI_Init's own */
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    mrt_error err = {0};
    mrt_mesh mesh;
    mrt_calibration *c = NULL;
    char path[PATH_MAX];
    if (a->out)
        snprintf(path, sizeof path, "%s", a->out);
    else
        mrt_profile_default_path(path, sizeof path);
    mrt_status st = mrt_cli_agree(parse_mesh(a->mesh, size, &mesh, &err),
                                  &err);
    if (st == MRT_OK) {
        c = malloc(sizeof *c);
        st = mrt_cli_agree(c ? MRT_OK
                             : mrt_error_set(&err, MRT_E_NOMEM, "meshrt",
                                             no_mark, "out of memory"),
                           &err);
    }
    if (st == MRT_OK) {
        /* Its status is agreed already; rank 0 holds the error. */
        st = mrt_calibrate(MPI_COMM_WORLD, &mesh, a->quick, c, &err);
        if (st != MRT_OK && rank == 0)
            mrt_cli_print_error(&err);
    }
    if (st == MRT_OK)
        st = mrt_cli_agree(rank == 0 ? report(c, path, !a->out, &err)
                                     : MRT_OK,
                           &err);
    free(c);
    mrt_cli_signals_done();
    MPI_Finalize();
    return mrt_cli_exit_code(st);
}
