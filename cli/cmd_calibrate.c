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
#include "spec_load.h"

static const mrt_mark no_mark = {0, 0};

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
    /* the loader's parser (spec_load.h); errors name the command */
    mrt_error why = {0};
    if (mrt_spec_parse_mesh_string(s, m, &why) != MRT_OK)
        return mrt_error_set(err, why.code, "meshrt", no_mark, "%s",
                             why.message);
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
