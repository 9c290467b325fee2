/*
 * calibrate_api.c — meshrt.h's calibration object: mrt_calibrate
 * (calibrate.c) behind create/destroy, on a mesh given as plain data,
 * and the profile it measured saved with its figures.  What `meshrt
 * calibrate` calls; a program may calibrate on a communicator of its
 * own the same way.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate.h"
#include "profile_io.h"
#include "runtime.h"

static const mrt_mark no_mark = {0, 0};

/* The mesh of info, or one axis `world` of all the ranks of comm. */
static mrt_status mesh_of(const mrt_mesh_info *info, int ranks, mrt_mesh *m,
                          mrt_error *err)
{
    memset(m, 0, sizeof *m);
    if (!info) {
        snprintf(m->name[0], MRT_NAME_MAX, "world");
        m->naxes = 1;
        m->size[0] = m->nranks = ranks;
        return MRT_OK;
    }
    if (info->naxes < 1 || info->naxes > MRT_MAX_AXES)
        return mrt_error_set(err, MRT_E_USAGE, "", no_mark,
                             "mrt_calibration_create: argument 'mesh': %d "
                             "axes (1 to %d allowed)",
                             info->naxes, MRT_MAX_AXES);
    m->naxes = info->naxes;
    m->nranks = 1;
    for (int i = 0; i < info->naxes; i++) {
        if (info->size[i] < 1)
            return mrt_error_set(err, MRT_E_USAGE, "", no_mark,
                                 "mrt_calibration_create: argument 'mesh': "
                                 "axis '%.63s' has size %lld",
                                 info->name[i], (long long)info->size[i]);
        snprintf(m->name[i], MRT_NAME_MAX, "%s", info->name[i]);
        m->size[i] = info->size[i];
        m->nranks *= info->size[i];
    }
    if (m->nranks != ranks)
        return mrt_error_set(err, MRT_E_MESH, "", no_mark,
                             "mrt_calibration_create: the mesh has %lld "
                             "ranks but the communicator %d",
                             (long long)m->nranks, ranks);
    return MRT_OK;
}

/* MRT_E_USAGE unless every rank of comm was given the same mesh and
 * quick (else their measurements would not match up).  Collective. */
static mrt_status same_everywhere(MPI_Comm comm, const mrt_mesh *m, int quick,
                                  mrt_error *err)
{
    uint64_t h = 1469598103934665603ull, mine[2], lo[2];
    int64_t parts[2 + MRT_MAX_AXES] = {quick != 0, m->naxes};
    for (int i = 0; i < m->naxes; i++) {
        parts[2 + i] = m->size[i];
        for (const char *c = m->name[i]; *c; c++)
            h = (h ^ (unsigned char)*c) * 1099511628211ull;
    }
    for (int i = 0; i < 2 + MRT_MAX_AXES; i++)
        h = (h ^ (uint64_t)parts[i]) * 1099511628211ull;
    mine[0] = h;
    mine[1] = ~h; /* the min of ~h is ~(the max of h) */
    MPI_Allreduce(mine, lo, 2, MPI_UINT64_T, MPI_MIN, comm);
    if (lo[0] == ~lo[1])
        return MRT_OK;
    return mrt_error_set(err, MRT_E_USAGE, "", no_mark,
                         "mrt_calibration_create: the ranks were given "
                         "different meshes or quick settings");
}

mrt_status mrt_calibration_create(MPI_Comm comm, const mrt_mesh_info *mesh,
                                  int quick, mrt_calibration **out,
                                  mrt_error *err)
{
    int ranks, mpi_up = 0, mpi_down = 0;
    mrt_mesh m;
    if (out)
        *out = NULL;
    MPI_Initialized(&mpi_up);
    if (mpi_up)
        MPI_Finalized(&mpi_down);
    /* no communicator: nobody to agree with */
    if (!mpi_up || mpi_down || comm == MPI_COMM_NULL)
        return mrt_error_set(err, MRT_E_USAGE, "", no_mark,
                             "mrt_calibration_create needs MPI initialised "
                             "(and not finalised) and a communicator (not "
                             "MPI_COMM_NULL)");
    MPI_Comm_size(comm, &ranks);
    mrt_status st = out ? mesh_of(mesh, ranks, &m, err)
                        : mrt_error_set(err, MRT_E_USAGE, "", no_mark,
                                        "mrt_calibration_create: argument "
                                        "'out': NULL");
    mrt_calibration *c = st ? NULL : malloc(sizeof *c);
    if (!st && !c)
        st = mrt_error_set(err, MRT_E_NOMEM, "", no_mark, "out of memory");
    /* every rank's arguments and memory, before any rank measures */
    st = mrt_comm_agree(comm, st, err);
    if (st == MRT_OK)
        st = same_everywhere(comm, &m, quick, err);
    if (st == MRT_OK)
        st = mrt_calibrate(comm, &m, quick, c, err);
    if (st != MRT_OK) {
        free(c);
        return st;
    }
    *out = c;
    return MRT_OK;
}

void mrt_calibration_destroy(mrt_calibration *c)
{
    free(c);
}

mrt_status mrt_calibration_save(const mrt_calibration *c, const char *path,
                                mrt_error *err)
{
    if (!c || !path)
        return mrt_error_set(err, MRT_E_USAGE, "", no_mark,
                             "mrt_calibration_save: argument '%s': NULL",
                             !c ? "c" : "path");
    char *yaml = mrt_calibration_yaml(c);
    mrt_status st = yaml ? mrt_profile_save_measured(path, &c->profile, yaml,
                                                     err)
                         : mrt_error_set(err, MRT_E_NOMEM, path, no_mark,
                                         "out of memory");
    free(yaml);
    return st;
}
