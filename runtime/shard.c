/*
 * shard.c — a rank's piece of a global tensor: filling input shards from
 * their init rule (random and fill are functions of the global index, so
 * every layout sees the same tensor; a .npy file is read whole and the
 * rank's block copied out), and gathering shards back into the full
 * tensor on rank 0 for --verify and --save.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "init.h"
#include "npy.h"
#include "runtime.h"

static void store(void *buf, mrt_dtype t, int64_t i, double x)
{
    if (t == MRT_F64)
        ((double *)buf)[i] = x;
    else
        ((float *)buf)[i] = (float)x;
}

/* Walks the shard's elements in row-major order with their global flat
 * index, for the index-defined inits. */
static void fill_indexed(const mrt_spec_tensor *st, const int64_t local[],
                         const int64_t off[], mrt_dtype t, void *buf)
{
    const mrt_layout *l = &st->layout;
    int64_t gstride[MRT_MAX_DIMS], g = 1, count = 1;
    for (int i = l->ndims - 1; i >= 0; i--) {
        gstride[i] = g;
        g *= l->size[i];
        count *= local[i];
    }
    int64_t idx[MRT_MAX_DIMS] = {0};
    for (int64_t k = 0; k < count; k++) {
        uint64_t gi = 0;
        for (int i = 0; i < l->ndims; i++)
            gi += (uint64_t)((off[i] + idx[i]) * gstride[i]);
        double x = st->init == MRT_INIT_FILL
                       ? st->fill
                       : mrt_init_random_value(st->seed, gi);
        if (st->init == MRT_INIT_LABELS) /* [-1, 1) onto 0..classes-1 */
            x = floor((x + 1) / 2 * st->fill);
        store(buf, t, k, x);
        for (int i = l->ndims - 1; i >= 0 && ++idx[i] == local[i]; i--)
            idx[i] = 0;
    }
}

static mrt_status fill_from_file(const mrt_spec *s, const mrt_spec_tensor *st,
                                 const int64_t local[], const int64_t off[],
                                 void *buf, mrt_error *err)
{
    mrt_npy_header h;
    void *data = NULL;
    mrt_status rc = mrt_npy_read(st->file, &h, &data, err);
    if (rc != MRT_OK)
        return rc;
    int n = st->layout.ndims;
    int64_t zero[MRT_MAX_DIMS] = {0};
    if (h.dtype == s->dtype) {
        mrt_block_copy(n, local, buf, local, zero, data, st->layout.size, off,
                       (size_t)mrt_dtype_size(s->dtype));
    } else { /* convert the whole file once, then copy the block */
        void *conv = malloc((size_t)h.count * (size_t)mrt_dtype_size(s->dtype));
        if (!conv) {
            free(data);
            return mrt_error_set(err, MRT_E_NOMEM, st->file, (mrt_mark){0},
                                 "out of memory reading the file");
        }
        for (int64_t i = 0; i < h.count; i++)
            store(conv, s->dtype, i,
                  h.dtype == MRT_F64 ? ((double *)data)[i]
                                     : (double)((float *)data)[i]);
        mrt_block_copy(n, local, buf, local, zero, conv, st->layout.size, off,
                       (size_t)mrt_dtype_size(s->dtype));
        free(conv);
    }
    free(data);
    return MRT_OK;
}

mrt_status mrt_shard_init(const mrt_spec *s, int t, const mrt_layout *l,
                          const mrt_mesh *m, const int64_t coords[],
                          void *buf, mrt_error *err)
{
    const mrt_spec_tensor *st = &s->tensor[t];
    int64_t local[MRT_MAX_DIMS], off[MRT_MAX_DIMS] = {0};
    mrt_layout_shard_shape(l, m, local);
    if (coords)
        mrt_layout_shard_offset(l, m, coords, off);
    if (st->init == MRT_INIT_FILE)
        return fill_from_file(s, st, local, off, buf, err);
    fill_indexed(st, local, off, s->dtype, buf);
    return MRT_OK;
}

mrt_status mrt_shard_gather(mrt_exec *e, int v, void **full, mrt_error *err)
{
    const mrt_plan *p = e->plan;
    const mrt_value *val = &p->value[v];
    mrt_comm *c = e->comm;
    *full = NULL;
    size_t shard = (size_t)val->count * (size_t)p->elsize;
    int64_t total = 1;
    for (int i = 0; i < val->layout.ndims; i++)
        total *= val->layout.size[i]; /* a spec tensor's count: fits */
    /* MPI_Gather counts are ints: a larger shard is refused, not cut
     * (and shard * ranks then fits a size_t) */
    if (shard > INT_MAX)
        return mrt_error_set(err, MRT_E_RUNTIME, "", (mrt_mark){0},
                             "cannot gather '%s' on rank 0: its shard of "
                             "%zu bytes is over MPI's count of %d",
                             p->tensor_name[val->tensor], shard, INT_MAX);
    char *all = NULL;
    int ok = 1;
    if (c->rank == 0) {
        all = malloc(shard * (size_t)c->size + 1);
        *full = malloc((size_t)total * (size_t)p->elsize + 1);
        ok = all && *full;
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, c->world);
    if (!ok) {
        free(all);
        free(*full);
        *full = NULL;
        return mrt_error_set(err, MRT_E_NOMEM, "", (mrt_mark){0},
                             "out of memory gathering '%s' on rank 0",
                             p->tensor_name[val->tensor]);
    }
    MPI_Gather(e->buf[v], (int)shard, MPI_BYTE, all, (int)shard, MPI_BYTE, 0,
               c->world);
    if (c->rank == 0) {
        int64_t coords[MRT_MAX_AXES], off[MRT_MAX_DIMS], zero[MRT_MAX_DIMS] = {0};
        for (int r = 0; r < c->size; r++) {
            mrt_mesh_coords(&p->mesh, r, coords);
            mrt_layout_shard_offset(&val->layout, &p->mesh, coords, off);
            mrt_block_copy(val->layout.ndims, val->local, *full,
                           val->layout.size, off, all + (size_t)r * shard,
                           val->local, zero, (size_t)p->elsize);
        }
    }
    free(all);
    return MRT_OK;
}
