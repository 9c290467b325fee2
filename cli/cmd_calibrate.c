/*
 * cmd_calibrate.c — `mpirun -n P meshrt calibrate [--mesh AXIS=N,...]
 * [--out FILE] [--quick]`: measures the machine (runtime/calibrate.c),
 * prints what it found next to the model's predictions, and writes the
 * machine profile that plan and run read (to --out FILE, else to the
 * default path, ~/.config/meshrt/profile.yaml).
 *
 * Like run, every rank parses the same arguments and the ranks agree on
 * each outcome, so a bad --mesh or a mesh of the wrong size gives one
 * error line (printed by rank 0) and exit status 2 on every rank, never
 * a hang.  Through meshrt.h only: mrt_mesh_parse reads --mesh,
 * mrt_calibration_create measures, mrt_calibration_save writes.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* The mesh of --mesh "data=2,model=2" into *m, which must have the
 * world's size; NULL when none is given (one axis `world`). */
static mrt_status parse_mesh(const char *s, int ranks, mrt_mesh_info *m,
                             const mrt_mesh_info **mesh, mrt_error *err)
{
    *mesh = NULL;
    if (!s)
        return MRT_OK;
    /* the loader's parser; errors name the command */
    mrt_error why = {0};
    if (mrt_mesh_parse(s, m, &why) != MRT_OK)
        return mrt_cli_error(err, why.code, "meshrt", "%s", why.message);
    if (m->nranks != ranks)
        return mrt_cli_error(err, MRT_E_MESH, "meshrt",
                             "the mesh %s has %lld ranks but mpirun started "
                             "%d (run with -n %lld, or give a --mesh of %d "
                             "ranks)",
                             s, (long long)m->nranks, ranks,
                             (long long)m->nranks, ranks);
    *mesh = m;
    return MRT_OK;
}

/* Rank 0 prints the figures and writes the profile; with --out - the
 * profile is the standard output and the figures go to stderr. */
static mrt_status report(const mrt_calibration *c, const char *path,
                         int is_default, mrt_error *err)
{
    int to_stdout = strcmp(path, "-") == 0;
    mrt_calibration_print(c, to_stdout ? stderr : stdout);
    mrt_status st = mrt_calibration_save(c, path, err);
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
    mrt_mesh_info info;
    const mrt_mesh_info *mesh = NULL;
    mrt_calibration *c = NULL;
    char path[PATH_MAX];
    if (a->out)
        snprintf(path, sizeof path, "%s", a->out);
    else
        mrt_machine_get_default_path(path, sizeof path);
    mrt_status st = mrt_cli_agree(parse_mesh(a->mesh, size, &info, &mesh, &err),
                                  &err);
    if (st == MRT_OK) /* collective: agreed, and printed, as any other */
        st = mrt_cli_agree(
            mrt_calibration_create(MPI_COMM_WORLD, mesh, a->quick, &c, &err),
            &err);
    if (st == MRT_OK)
        st = mrt_cli_agree(rank == 0 ? report(c, path, !a->out, &err) : MRT_OK,
                           &err);
    mrt_calibration_destroy(c);
    mrt_cli_signals_done();
    MPI_Finalize();
    return mrt_cli_exit_code(st);
}
