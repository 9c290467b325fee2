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
static mrt_status mesh_of(const mrt_mesh_info *info, int ranks,
                          mrt_mesh *m, mrt_error *err)
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
                             "axes (1 to %d allowed)", info->naxes,
                             MRT_MAX_AXES);
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

mrt_status mrt_calibration_create(MPI_Comm comm, const mrt_mesh_info *mesh,
                                  int quick, mrt_calibration **out,
                                  mrt_error *err)
{
    int ranks;
    mrt_mesh m;
    if (out)
        *out = NULL;
    if (comm == MPI_COMM_NULL) /* no ranks to agree with */
        return mrt_error_null(err, "mrt_calibration_create", "comm");
    /* the ranks agree on the arguments first: none waits for another */
    mrt_status st = mrt_comm_agree(
        comm, out ? MRT_OK : mrt_error_null(err, "mrt_calibration_create",
                                            "out"), err);
    if (st)
        return st;
    MPI_Comm_size(comm, &ranks);
    st = mesh_of(mesh, ranks, &m, err);
    mrt_calibration *c = st ? NULL : malloc(sizeof *c);
    if (!st && !c)
        st = mrt_error_set(err, MRT_E_NOMEM, "", no_mark, "out of memory");
    /* the mesh is the same on every rank, memory may not be */
    st = mrt_comm_agree(comm, st, err);
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
        return mrt_error_null(err, "mrt_calibration_save",
                              !c ? "c" : "path");
    char *yaml = mrt_calibration_yaml(c);
    mrt_status st = yaml ? mrt_profile_save_measured(path, &c->profile, yaml,
                                                     err)
                         : mrt_error_set(err, MRT_E_NOMEM, path, no_mark,
                                         "out of memory");
    free(yaml);
    return st;
}
