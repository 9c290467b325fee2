/*
 * shard.c — a rank's piece of a global tensor: filling input shards from
 * their init rule (random and fill are functions of the global index, so
 * every layout sees the same tensor, and so are the masks of causal
 * softmax and dropout; a .npy file is read whole and the
 * rank's block copied out, only while it is still the file the loader
 * checked: mrt_npy_read_same), and gathering shards back into the full
 * tensor on rank 0 for --verify and --save.  In a pipeline only the
 * ranks of the stage that holds a value send it (rank 0 may hold none).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "init.h"
#include "kernel.h"
#include "npy.h"
#include "runtime.h"

/* (labels into int32: integers in range, build_tensor.c; into a 16-bit
 * type: rounded to nearest even, through float32) */
static void store(void *buf, mrt_dtype t, int64_t i, double x)
{
    mrt_kernel_put(t, buf, i, x);
}

/* Element gi (global flat index) of an index-defined init, at global
 * coordinates q and k along a causal mask's two dims. */
static double indexed_value(const mrt_spec_tensor *st, uint64_t gi, int64_t q,
                            int64_t k)
{
    switch (st->init) {
    case MRT_INIT_FILL: return st->fill;
    case MRT_INIT_LABELS: /* [-1, 1) onto 0..classes-1 */
        return floor((mrt_init_random_value(st->seed, gi) + 1) / 2 * st->fill);
    case MRT_INIT_CAUSAL: return mrt_init_causal_value(q, k);
    case MRT_INIT_DROPOUT:
        return mrt_init_dropout_keep(st->seed, gi, st->fill); /* 0 or 1 */
    default: return mrt_init_random_value(st->seed, gi);
    }
}

/* Walks the shard's elements in row-major order with their global flat
 * index (and, for a causal mask, their global coordinates along its two
 * dims), for the index-defined inits. */
static void fill_indexed(const mrt_spec_tensor *st, const int64_t size[],
                         const int64_t local[], const int64_t off[],
                         mrt_dtype t, void *buf)
{
    const mrt_layout *l = &st->layout;
    int64_t gstride[MRT_MAX_DIMS], g = 1, count = 1;
    for (int i = l->ndims - 1; i >= 0; i--) {
        gstride[i] = g;
        g *= size[i];
        count *= local[i];
    }
    int causal = st->init == MRT_INIT_CAUSAL;
    int qi = causal ? mrt_layout_find_dim(l, st->mask_dim[0]) : 0;
    int ki = causal ? mrt_layout_find_dim(l, st->mask_dim[1]) : 0;
    int64_t idx[MRT_MAX_DIMS] = {0};
    for (int64_t k = 0; k < count; k++) {
        uint64_t gi = 0;
        for (int i = 0; i < l->ndims; i++)
            gi += (uint64_t)((off[i] + idx[i]) * gstride[i]);
        double x = indexed_value(st, gi, off[qi] + idx[qi], off[ki] + idx[ki]);
        store(buf, t, k, x);
        for (int i = l->ndims - 1; i >= 0 && ++idx[i] == local[i]; i--)
            idx[i] = 0;
    }
}

static mrt_status fill_from_file(const mrt_spec *s, const mrt_spec_tensor *st,
                                 const int64_t size[], const int64_t local[],
                                 const int64_t off[], void *buf, mrt_error *err)
{
    const mrt_npy_header h = st->file_header;
    void *data = NULL;
    mrt_error e = {0};
    /* the file as the loader checked it (shape, dtype, range), or a
     * run-time error at the init that names it */
    mrt_status rc = mrt_npy_read_same(st->file, &h, &data, &e);
    if (rc != MRT_OK) /* the loader read it: a failure now is the run's */
        return mrt_error_set(err, rc == MRT_E_NOMEM ? rc : MRT_E_RUNTIME,
                             s->path, st->init_mark, "init file '%s': %s",
                             st->file, e.message);
    int n = st->layout.ndims;
    int64_t zero[MRT_MAX_DIMS] = {0};
    if (h.dtype == mrt_spec_tensor_dtype(s, (int)(st - s->tensor))) {
        mrt_block_copy(n, local, buf, local, zero, data, size, off,
                       (size_t)mrt_dtype_size(h.dtype));
    } else { /* convert the whole file once, then copy the block (a
              * float32 or float64 file into a 16-bit tensor: rounded) */
        mrt_dtype to = mrt_spec_tensor_dtype(s, (int)(st - s->tensor));
        void *conv = malloc((size_t)h.count * (size_t)mrt_dtype_size(to));
        if (!conv) {
            free(data);
            return mrt_error_set(err, MRT_E_NOMEM, st->file, (mrt_mark){0},
                                 "out of memory reading the file");
        }
        mrt_kernel_convert(to, conv, h.dtype, data, h.count);
        mrt_block_copy(n, local, buf, local, zero, conv, size, off,
                       (size_t)mrt_dtype_size(to));
        free(conv);
    }
    free(data);
    return MRT_OK;
}

mrt_status mrt_shard_init(const mrt_spec *s, int t, const mrt_layout *l,
                          const mrt_mesh *m, const int64_t coords[], void *buf,
                          mrt_error *err)
{
    const mrt_spec_tensor *st = &s->tensor[t];
    int64_t local[MRT_MAX_DIMS], off[MRT_MAX_DIMS] = {0};
    mrt_layout_shard_shape_at(l, m, coords, local);
    if (coords)
        mrt_layout_shard_offset(l, m, coords, off);
    /* a microbatch's input is its rows of the full input (microbatch.c) */
    int64_t size[MRT_MAX_DIMS];
    memcpy(size, st->layout.size, sizeof size);
    int mi = s->train.microbatches > 1 && st->producer < 0
                 ? mrt_layout_find_dim(&st->layout, s->train.micro_dim)
                 : -1;
    if (mi >= 0) {
        off[mi] += st->micro * size[mi];
        size[mi] *= s->train.microbatches;
    }
    if (st->init == MRT_INIT_FILE)
        return fill_from_file(s, st, size, local, off, buf, err);
    fill_indexed(st, size, local, off, mrt_spec_tensor_dtype(s, t), buf);
    return MRT_OK;
}

/* Rank 0 receives each other rank's shard straight into its place in the
 * full tensor (a strided block: one element of a subarray type), one
 * rank after the other -- replicas write the same block, and receives
 * in flight together must not overlap -- and copies its own.  No buffer
 * of every rank's shard is needed, and no count is cast to int: the
 * shard's elements go through mrt_count_make. */
enum { GATHER_TAG = 7 };

static int receive_shards(mrt_exec *e, int v, char *full)
{
    const mrt_plan *p = e->plan;
    const mrt_value *val = &p->value[v];
    const mrt_layout *l = &val->layout;
    MPI_Datatype base = mrt_mpi_type(val->dtype);
    int64_t coords[MRT_MAX_AXES], off[MRT_MAX_DIMS], zero[MRT_MAX_DIMS] = {0};
    int64_t local[MRT_MAX_DIMS];
    int rc = MPI_SUCCESS;
    /* each rank's own extents (uneven splits); an empty shard sends
     * nothing */
    for (int r = 0; r < e->comm->size && rc == MPI_SUCCESS; r++) {
        mrt_mesh_coords(&p->mesh, r, coords);
        mrt_layout_shard_offset(l, &p->mesh, coords, off);
        if (mrt_layout_shard_count_at(l, &p->mesh, coords) == 0 ||
            !mrt_value_on_rank(p, v, coords)) /* another pipeline stage */
            continue;
        mrt_layout_shard_shape_at(l, &p->mesh, coords, local);
        int64_t at = 0;
        for (int i = 0; i < l->ndims; i++)
            at = at * l->size[i] + off[i];
        if (r == 0) {
            mrt_block_copy(l->ndims, local, full, l->size, off, e->buf[v],
                           local, zero, (size_t)val->elsize);
            continue;
        }
        MPI_Datatype block = MPI_DATATYPE_NULL;
        rc = mrt_subarray_type(l->ndims, l->size, local, base, &block);
        if (rc == MPI_SUCCESS)
            rc = MPI_Recv(full + at * val->elsize, 1, block, r, GATHER_TAG,
                          e->comm->world, MPI_STATUS_IGNORE);
        if (block != MPI_DATATYPE_NULL)
            MPI_Type_free(&block);
    }
    return rc;
}

static int send_shard(mrt_exec *e, int v)
{
    const mrt_plan *p = e->plan;
    mrt_count n;
    int64_t count = mrt_layout_shard_count_at(&p->value[v].layout, &p->mesh,
                                              e->comm->coords);
    if (count == 0 || !mrt_value_on_rank(p, v, e->comm->coords))
        return MPI_SUCCESS;
    int rc = mrt_count_make(count, mrt_mpi_type(p->value[v].dtype), MPI_OP_NULL,
                            &n);
    if (rc == MPI_SUCCESS)
        rc = MPI_Send(e->buf[v], n.count, n.type, 0, GATHER_TAG,
                      e->comm->world);
    mrt_count_free(&n);
    return rc;
}

mrt_status mrt_shard_gather(mrt_exec *e, int v, void **full, mrt_error *err)
{
    const mrt_plan *p = e->plan;
    const mrt_value *val = &p->value[v];
    mrt_comm *c = e->comm;
    *full = NULL;
    int64_t total = 1;
    for (int i = 0; i < val->layout.ndims; i++)
        total *= val->layout.size[i]; /* a spec tensor's count: fits */
    size_t bytes = (size_t)total * (size_t)val->elsize;
    int ok = 1;
    if (c->rank == 0) {
        *full = mrt_alloc_big(bytes + 1, 0);
        ok = *full != NULL;
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, c->world);
    if (!ok)
        return mrt_error_set(err, MRT_E_NOMEM, p->spec_path, (mrt_mark){0},
                             "out of memory: gathering '%s' on rank 0 needs "
                             "%zu bytes",
                             p->tensor_name[val->tensor], bytes);
    int rc = c->rank == 0 ? receive_shards(e, v, *full) : send_shard(e, v);
    if (rc != MPI_SUCCESS) {
        free(*full);
        *full = NULL;
        return mrt_error_set(err, MRT_E_RUNTIME, p->spec_path, (mrt_mark){0},
                             "gathering '%s' on rank 0 failed (MPI error %d)",
                             p->tensor_name[val->tensor], rc);
    }
    return MRT_OK;
}
