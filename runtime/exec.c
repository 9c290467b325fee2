/*
 * exec.c — the executor: walks the plan's steps in order, one small
 * function per step kind.  The arena that holds every value (at the
 * offsets the planner chose) and the workspace of the running step are
 * allocated once, in mrt_exec_create, and reused by every run.  With
 * uneven splits a rank's shard may be smaller than the plan's value
 * (which describes the largest shard, ops/plan.h): every step reads this
 * rank's own extents (mine), within the buffer sized for the largest.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernel.h"
#include "kernel_plan.h"
#include "runtime.h"
#include "step_widen.h"

/* This rank's extents of value v, and its element count. */
static int64_t mine(const mrt_exec *e, int v, int64_t ext[])
{
    int64_t buf[MRT_MAX_DIMS];
    const mrt_value *val = &e->plan->value[v];
    if (!ext)
        ext = buf;
    mrt_layout_shard_shape_at(&val->layout, &e->plan->mesh, e->comm->coords,
                              ext);
    int64_t n = 1;
    for (int i = 0; i < val->layout.ndims; i++)
        n *= ext[i];
    return n;
}

int64_t mrt_exec_mine(const mrt_exec *e, int v, int64_t ext[])
{
    return mine(e, v, ext);
}

static mrt_kview kview(const mrt_exec *e, int v, int64_t ext[])
{
    const mrt_value *val = &e->plan->value[v];
    mine(e, v, ext);
    return (mrt_kview){.ndims = val->layout.ndims,
                       .dim = val->layout.dim,
                       .ext = ext,
                       .data = e->buf[v]};
}

/* The block types of step k when its blocks are strided (datatype.c):
 * an all-to-all sends block j of its input along dim2 and receives block
 * j of its output along dim; a strided all-gather receives block j of its
 * output along dim. */
static int make_types(mrt_exec *e, int k)
{
    const mrt_plan *p = e->plan;
    const mrt_step *s = &p->step[k];
    const mrt_value *in = &p->value[s->in], *out = &p->value[s->out];
    int64_t il[MRT_MAX_DIMS], ol[MRT_MAX_DIMS];
    e->type[k][0] = e->type[k][1] = MPI_DATATYPE_NULL;
    if (mrt_step_is_uneven(p, s))
        return mrt_uneven_make(p, s, e->comm->coords, &e->uneven[k]);
    /* an empty shard in a dim the step does not move: the whole group
     * holds nothing and the step is skipped (do_step) */
    if (!mrt_step_is_strided(p, s) || mine(e, s->in, il) == 0)
        return MPI_SUCCESS;
    mine(e, s->out, ol);
    if (s->kind == MRT_STEP_REDUCE_SCATTER) /* block j of dim, to rank j */
        return mrt_block_type(in->layout.ndims, il, s->dim, s->group, in->dtype,
                              &e->type[k][0]);
    if (s->kind != MRT_STEP_ALLTOALL && s->kind != MRT_STEP_ALLGATHER)
        return MPI_SUCCESS;
    int rc = MPI_SUCCESS;
    if (s->kind == MRT_STEP_ALLTOALL)
        rc = mrt_block_type(in->layout.ndims, il, s->dim2, s->group, in->dtype,
                            &e->type[k][0]);
    if (rc == MPI_SUCCESS)
        rc = mrt_block_type(out->layout.ndims, ol, s->dim, s->group, in->dtype,
                            &e->type[k][1]);
    return rc;
}

/* The plan sizes the workspace for the largest shards; a kernel on a
 * smaller one (uneven splits) may fold its dims otherwise, so this rank
 * takes the most its own einsums need, if that is more. */
static int64_t my_workspace(mrt_exec *e)
{
    const mrt_plan *p = e->plan;
    int64_t most = p->max_workspace;
    for (int k = 0; k < p->nsteps; k++) {
        const mrt_step *s = &p->step[k];
        if (s->kind != MRT_STEP_EINSUM)
            continue;
        int64_t ea[MRT_MAX_DIMS], eb[MRT_MAX_DIMS], ec[MRT_MAX_DIMS];
        mrt_kview a = kview(e, s->in, ea), c = kview(e, s->out, ec);
        mrt_kview b = s->in2 >= 0 ? kview(e, s->in2, eb) : a;
        if (mine(e, s->in, NULL) == 0 || mine(e, s->out, NULL) == 0 ||
            (s->in2 >= 0 && mine(e, s->in2, NULL) == 0))
            continue; /* an empty shard: no kernel runs (do_einsum) */
        size_t ws = mrt_einsum_workspace(mrt_step_compute_dtype(p, s), &a,
                                         s->in2 >= 0 ? &b : NULL, &c);
        ws += (size_t)mrt_step_widen_bytes(p, s); /* the copies first */
        if (ws <= INT64_MAX && (int64_t)ws > most)
            most = (int64_t)ws;
    }
    return most;
}

mrt_status mrt_exec_create(const mrt_plan *p, mrt_comm *comm, mrt_exec **out,
                           mrt_error *err)
{
    mrt_exec *e = calloc(1, sizeof *e);
    *out = NULL;
    if (!e)
        goto nomem;
    e->plan = p;
    e->comm = comm;
    e->buf = calloc((size_t)p->nvalues + 1, sizeof *e->buf);
    e->step_time = calloc((size_t)p->nsteps + 1, sizeof *e->step_time);
    e->step_bytes = calloc((size_t)p->nsteps + 1, sizeof *e->step_bytes);
    e->step_inter = calloc((size_t)p->nsteps + 1, sizeof *e->step_inter);
    e->type = calloc((size_t)p->nsteps + 1, sizeof *e->type);
    e->uneven = calloc((size_t)p->nsteps + 1, sizeof *e->uneven);
    /* before anything can fail: mrt_exec_destroy frees every type that
     * is not MPI_DATATYPE_NULL, which is not all-zero bits in Open MPI */
    for (int k = 0; e->type && k < p->nsteps; k++)
        e->type[k][0] = e->type[k][1] = MPI_DATATYPE_NULL;
    e->req = calloc((size_t)p->nsteps + 1, sizeof *e->req);
    e->pending = calloc((size_t)p->nsteps + 1, sizeof *e->pending);
    e->start = calloc(3 * ((size_t)p->nsteps + 1), sizeof *e->start);
    e->exposed = e->start ? e->start + p->nsteps + 1 : NULL;
    e->inflight = e->start ? e->start + 2 * (p->nsteps + 1) : NULL;
    /* One arena for every value, at the offsets the planner gave them
     * (values whose lifetimes do not overlap share bytes), and one
     * workspace for the step that runs. */
    e->arena = mrt_alloc_big((size_t)p->arena_bytes + 64, 1);
    e->workspace = malloc((size_t)my_workspace(e) + 64);
    if (!e->buf || !e->step_time || !e->step_bytes || !e->step_inter ||
        !e->arena || !e->workspace || !e->type || !e->req || !e->pending ||
        !e->start || !e->uneven)
        goto nomem;
    for (int k = 0; k < p->nsteps; k++)
        e->req[k] = MPI_REQUEST_NULL;
    for (int v = 0; v < p->nvalues; v++)
        e->buf[v] = e->arena + p->value[v].offset;
    for (int k = 0; k < p->nsteps; k++)
        if (make_types(e, k) != MPI_SUCCESS) {
            mrt_exec_destroy(e);
            return mrt_error_set(err, MRT_E_RUNTIME, "", (mrt_mark){0},
                                 "could not make the MPI datatypes of step "
                                 "%d",
                                 k);
        }
    *out = e;
    return MRT_OK;
nomem:
    mrt_exec_destroy(e);
    return mrt_error_set(err, MRT_E_NOMEM, p->spec_path, (mrt_mark){0},
                         "out of memory: the plan needs %" PRId64 " bytes "
                         "per rank (rank %d could not allocate them)",
                         p->totals.peak_memory, comm->rank);
}

void mrt_exec_destroy(mrt_exec *e)
{
    if (!e)
        return;
    free(e->buf);
    free(e->arena);
    free(e->workspace);
    free(e->step_time);
    free(e->step_bytes);
    free(e->step_inter);
    for (int k = 0; e->type && k < e->plan->nsteps; k++)
        for (int j = 0; j < 2; j++)
            if (e->type[k][j] != MPI_DATATYPE_NULL)
                MPI_Type_free(&e->type[k][j]);
    free(e->type);
    for (int k = 0; e->uneven && k < e->plan->nsteps; k++)
        mrt_uneven_free(e->uneven[k]);
    free(e->uneven);
    free(e->req);
    free(e->pending);
    free(e->start);
    free(e);
}

/* The request of step s when it runs in the background, else NULL. */
static MPI_Request *request(mrt_exec *e, const mrt_step *s)
{
    if (e->blocking || s->wait < 0)
        return NULL;
    return &e->req[s - e->plan->step];
}

static int do_einsum(mrt_exec *e, const mrt_step *s)
{
    int64_t ea[MRT_MAX_DIMS], eb[MRT_MAX_DIMS], ec[MRT_MAX_DIMS];
    mrt_kview a = kview(e, s->in, ea), c = kview(e, s->out, ec);
    mrt_kview b = s->in2 >= 0 ? kview(e, s->in2, eb) : a;
    int64_t nc = mine(e, s->out, NULL);
    if (nc == 0) /* an empty shard (a dim smaller than its parts) */
        return MPI_SUCCESS;
    if (mine(e, s->in, NULL) == 0 ||
        (s->in2 >= 0 && mine(e, s->in2, NULL) == 0)) {
        /* a summed dim is empty here: this rank's part of the sum is 0 */
        memset(e->buf[s->out], 0,
               (size_t)nc * (size_t)e->plan->value[s->out].elsize);
        return MPI_SUCCESS;
    }
    if (mrt_widen_einsum(e, s, &a, s->in2 >= 0 ? &b : NULL, &c))
        return MPI_SUCCESS;
    mrt_widen w;
    mrt_widen_inputs(e, s, &w);
    a.data = w.data[0];
    b.data = s->in2 >= 0 ? w.data[1] : a.data;
    c.data = w.data[2];
    mrt_kernel_einsum(w.t, &a, s->in2 >= 0 ? &b : NULL, &c, w.rest);
    mrt_widen_output(e, s, &w);
    return MPI_SUCCESS;
}

static int do_slice(mrt_exec *e, const mrt_step *s)
{
    const mrt_plan *p = e->plan;
    const mrt_value *in = &p->value[s->in], *out = &p->value[s->out];
    int64_t soff[MRT_MAX_DIMS], doff[MRT_MAX_DIMS] = {0};
    int64_t il[MRT_MAX_DIMS], ol[MRT_MAX_DIMS], at[MRT_MAX_DIMS];
    if (mine(e, s->in, il) == 0 || mine(e, s->out, ol) == 0)
        return MPI_SUCCESS;
    /* where my block of the output starts in my block of the input (the
     * blocks nest: layout.c) */
    mrt_layout_shard_offset(&in->layout, &p->mesh, e->comm->coords, at);
    mrt_layout_shard_offset(&out->layout, &p->mesh, e->comm->coords, soff);
    for (int i = 0; i < in->layout.ndims; i++)
        soff[i] -= at[i];
    mrt_block_copy(in->layout.ndims, ol, e->buf[s->out], ol, doff,
                   e->buf[s->in], il, soff, (size_t)in->elsize);
    return MPI_SUCCESS;
}

static int do_allgather(mrt_exec *e, const mrt_step *s)
{
    const mrt_plan *p = e->plan;
    int k = (int)(s - p->step);
    int64_t n = mine(e, s->in, NULL);
    mrt_dtype t = p->value[s->in].dtype;
    if (e->uneven[k])
        return mrt_comm_alltoallw(e->comm, s->axes, e->buf[s->in],
                                  e->buf[s->out], e->uneven[k], t,
                                  request(e, s));
    if (e->type[k][1] == MPI_DATATYPE_NULL) /* blocks are contiguous */
        return mrt_comm_allgather(e->comm, s->axes, e->buf[s->in],
                                  e->buf[s->out], n, t, request(e, s));
    return mrt_comm_allgather_typed(e->comm, s->axes, e->buf[s->in], n, t,
                                    e->buf[s->out], e->type[k][1],
                                    request(e, s));
}

/* Block j of the input along dim2 goes to rank j; what rank j sends
 * becomes block j of the output along dim.  MPI reads and writes the
 * strided blocks in place (datatype.c). */
static int do_alltoall(mrt_exec *e, const mrt_step *s)
{
    const mrt_plan *p = e->plan;
    int k = (int)(s - p->step);
    const mrt_value *in = &p->value[s->in];
    if (e->uneven[k])
        return mrt_comm_alltoallw(e->comm, s->axes, e->buf[s->in],
                                  e->buf[s->out], e->uneven[k], in->dtype,
                                  request(e, s));
    return mrt_comm_alltoall_typed(
        e->comm, s->axes, e->buf[s->in], e->type[k][0], e->buf[s->out],
        e->type[k][1], mine(e, s->in, NULL) * in->elsize, request(e, s), 1);
}

/* A reduce-scatter whose blocks are strided: MPI's reductions want
 * contiguous operands, so it runs as the pairwise-exchange algorithm --
 * an all-to-all that reads block j of the input in place (a datatype)
 * and sends it to rank j, then the sum of the g blocks received (BLIS's
 * axpy).  The same bytes leave each rank as in any bandwidth-optimal
 * reduce-scatter, and no pass packs the input first. */
static int reduce_scatter_strided(mrt_exec *e, const mrt_step *s)
{
    const mrt_plan *p = e->plan;
    int k = (int)(s - p->step);
    const mrt_value *in = &p->value[s->in];
    MPI_Datatype t = mrt_mpi_type(in->dtype);
    int64_t n = mine(e, s->out, NULL);
    int rc = e->uneven[k]
                 ? mrt_comm_alltoallw(e->comm, s->axes, e->buf[s->in],
                                      e->workspace, e->uneven[k], in->dtype,
                                      NULL)
                 : mrt_comm_alltoall_typed(e->comm, s->axes, e->buf[s->in],
                                           e->type[k][0], e->workspace, t,
                                           mine(e, s->in, NULL) * in->elsize,
                                           NULL, n);
    if (rc != MPI_SUCCESS || n == 0)
        return rc;
    size_t bytes = (size_t)n * (size_t)in->elsize;
    memcpy(e->buf[s->out], e->workspace, bytes);
    for (int64_t j = 1; j < s->group; j++) /* 16-bit: rounded per add */
        mrt_kernel_add(in->dtype, n, (char *)e->workspace + (size_t)j * bytes,
                       e->buf[s->out]);
    return MPI_SUCCESS;
}

static int do_reduce_scatter(mrt_exec *e, const mrt_step *s)
{
    const mrt_plan *p = e->plan;
    if (mrt_step_needs_packing(p, s))
        return reduce_scatter_strided(e, s);
    return mrt_comm_reduce_scatter(e->comm, s->axes, e->buf[s->in],
                                   e->buf[s->out], mine(e, s->out, NULL),
                                   p->value[s->in].dtype, request(e, s));
}

/* Block number of the rank at coords along the axes list[from..n). */
static int64_t block_of(const mrt_mesh *m, const int8_t *list, int from, int n,
                        const int64_t coords[])
{
    int64_t b = 0;
    for (int j = from; j < n; j++)
        b = b * m->size[list[j]] + coords[list[j]];
    return b;
}

/* The coordinates holding block b along list[from..n), other axes as c. */
static void coords_of(const mrt_mesh *m, const int8_t *list, int from, int n,
                      int64_t b, int64_t c[])
{
    for (int j = n - 1; j >= from; j--) {
        c[list[j]] = b % m->size[list[j]];
        b /= m->size[list[j]];
    }
}

/* Reordered nesting: my block goes to the rank that holds it under the
 * new order; I receive the block the new order gives me from the rank
 * that holds it under the old one. */
static int do_permute(mrt_exec *e, const mrt_step *s)
{
    const mrt_plan *p = e->plan;
    const mrt_mesh *m = &p->mesh;
    const mrt_layout *from = &p->value[s->in].layout,
                     *to = &p->value[s->out].layout;
    int d = s->dim, n = from->naxes[d], k = 0;
    if (e->uneven[s - p->step])
        return mrt_comm_alltoallw(e->comm, s->axes, e->buf[s->in],
                                  e->buf[s->out], e->uneven[s - p->step],
                                  p->value[s->in].dtype, NULL);
    while (from->axes[d][k] == to->axes[d][k])
        k++;
    int64_t dc[MRT_MAX_AXES], sc[MRT_MAX_AXES];
    memcpy(dc, e->comm->coords, sizeof dc);
    memcpy(sc, e->comm->coords, sizeof sc);
    coords_of(m, to->axes[d], k, n,
              block_of(m, from->axes[d], k, n, e->comm->coords), dc);
    coords_of(m, from->axes[d], k, n,
              block_of(m, to->axes[d], k, n, e->comm->coords), sc);
    return mrt_comm_exchange(
        e->comm, s->axes, e->buf[s->in], e->buf[s->out], mine(e, s->in, NULL),
        (int)mrt_mesh_group_index(m, s->axes, dc),
        (int)mrt_mesh_group_index(m, s->axes, sc), p->value[s->in].dtype);
}

/* An elementwise map; one_hot needs the global offset of the shard. */
static int do_map(mrt_exec *e, const mrt_step *s)
{
    const mrt_plan *p = e->plan;
    int64_t ea[MRT_MAX_DIMS], eb[MRT_MAX_DIMS], ec[MRT_MAX_DIMS];
    mrt_kview a = kview(e, s->in, ea), c = kview(e, s->out, ec);
    mrt_kview b = s->in2 >= 0 ? kview(e, s->in2, eb) : a;
    int64_t off[MRT_MAX_DIMS] = {0};
    if (mine(e, s->out, NULL) == 0)
        return MPI_SUCCESS;
    if (s->fn == MRT_MAP_ONE_HOT)
        mrt_layout_shard_offset(&p->value[s->out].layout, &p->mesh,
                                e->comm->coords, off);
    mrt_widen w;
    mrt_widen_inputs(e, s, &w);
    a.data = w.data[0];
    b.data = s->in2 >= 0 ? w.data[1] : a.data;
    c.data = w.data[2];
    if (s->fn == MRT_MAP_ONE_HOT && p->value[s->in].dtype == MRT_I32)
        mrt_kernel_one_hot_index(w.t, &a, &c, s->hot, off[s->hot]);
    else
        mrt_kernel_map(w.t, s->fn, s->c, &c, &a, s->in2 >= 0 ? &b : NULL, off,
                       s->hot);
    mrt_widen_output(e, s, &w);
    return MPI_SUCCESS;
}

static int do_reduce_max(mrt_exec *e, const mrt_step *s)
{
    int64_t ea[MRT_MAX_DIMS], ec[MRT_MAX_DIMS];
    mrt_kview a = kview(e, s->in, ea), c = kview(e, s->out, ec);
    int64_t nc = mine(e, s->out, NULL);
    if (nc > 0 && mine(e, s->in, NULL) == 0) {
        /* a reduced dim is empty here: the maximum of nothing, which the
         * all-reduce of the maximum that follows ignores */
        for (int64_t i = 0; i < nc; i++)
            mrt_kernel_put(e->plan->value[s->out].dtype, e->buf[s->out], i,
                           -INFINITY);
        return MPI_SUCCESS;
    }
    if (nc == 0)
        return MPI_SUCCESS;
    mrt_widen w;
    mrt_widen_inputs(e, s, &w);
    a.data = w.data[0];
    c.data = w.data[2];
    mrt_kernel_reduce_max(w.t, &a, &c);
    mrt_widen_output(e, s, &w);
    return MPI_SUCCESS;
}

/* An embedding's lookup: the rows of my block of the table's vocab dim
 * (s->dim) for the ids inside it, zeros for the others. */
static int do_gather(mrt_exec *e, const mrt_step *s)
{
    const mrt_plan *p = e->plan;
    int64_t et[MRT_MAX_DIMS], ei[MRT_MAX_DIMS], ec[MRT_MAX_DIMS];
    int64_t off[MRT_MAX_DIMS];
    mrt_kview t = kview(e, s->in, et), ids = kview(e, s->in2, ei),
              c = kview(e, s->out, ec);
    if (mine(e, s->out, NULL) == 0)
        return MPI_SUCCESS;
    mrt_layout_shard_offset(&p->value[s->in].layout, &p->mesh, e->comm->coords,
                            off);
    mrt_widen w;
    mrt_widen_inputs(e, s, &w);
    t.data = w.data[0];
    ids.data = w.data[1];
    c.data = w.data[2];
    mrt_kernel_gather(
        w.t, &t, s->dim, off[s->dim],
        mrt_step_widens(p, s, s->in2) ? w.t : p->value[s->in2].dtype, &ids, &c);
    mrt_widen_output(e, s, &w);
    return MPI_SUCCESS;
}

/* Its gradient: the rows of g added into my block of the table at the
 * ids inside it. */
static int do_scatter_add(mrt_exec *e, const mrt_step *s)
{
    const mrt_plan *p = e->plan;
    int64_t ei[MRT_MAX_DIMS], eg[MRT_MAX_DIMS], ec[MRT_MAX_DIMS];
    int64_t off[MRT_MAX_DIMS];
    mrt_kview ids = kview(e, s->in, ei), g = kview(e, s->in2, eg),
              c = kview(e, s->out, ec);
    if (mine(e, s->out, NULL) == 0)
        return MPI_SUCCESS;
    mrt_layout_shard_offset(&p->value[s->out].layout, &p->mesh, e->comm->coords,
                            off);
    mrt_widen w;
    mrt_widen_inputs(e, s, &w);
    ids.data = w.data[0];
    g.data = w.data[1];
    c.data = w.data[2];
    mrt_kernel_scatter_add(
        w.t, mrt_step_widens(p, s, s->in) ? w.t : p->value[s->in].dtype, &ids,
        &g, s->dim, off[s->dim], &c);
    mrt_widen_output(e, s, &w);
    return MPI_SUCCESS;
}

/* The same elements under another dim name: a copy into the new value. */
static int do_rename(mrt_exec *e, const mrt_step *s)
{
    /* (a copy, converted when the tensors' types differ) */
    mrt_kernel_convert(e->plan->value[s->out].dtype, e->buf[s->out],
                       e->plan->value[s->in].dtype, e->buf[s->in],
                       mine(e, s->in, NULL));
    return MPI_SUCCESS;
}

/* A pipeline's transfer from stage from_stage to stage stage, along the
 * pipe axis (the group's positions are the stages). */
static int do_sendrecv(mrt_exec *e, const mrt_step *s)
{
    return mrt_comm_sendrecv(e->comm, s->axes, e->buf[s->in], e->buf[s->out],
                             mine(e, s->in, NULL), e->plan->value[s->in].dtype,
                             s->from_stage, s->stage);
}

static int do_step(mrt_exec *e, const mrt_step *s)
{
    if (!mrt_step_on_rank(e->plan, s, e->comm->coords))
        return MPI_SUCCESS; /* another pipeline stage's */
    /* A collective over dims split evenly moves blocks of one size: when
     * this rank's shard is empty (a dim smaller than its parts elsewhere),
     * so is every shard of its group, and none of them calls MPI.  Not so
     * for an all-to-all over a group, whose layouts may split unevenly
     * (its blocks are each rank's own): a rank with nothing to send may
     * still receive. */
    if (mrt_step_is_collective(s->kind) && s->kind != MRT_STEP_ALLTOALL_GROUP &&
        !e->uneven[s - e->plan->step] && mine(e, s->in, NULL) == 0)
        return MPI_SUCCESS;
    switch (s->kind) {
    case MRT_STEP_EINSUM: return do_einsum(e, s);
    case MRT_STEP_SLICE: return do_slice(e, s);
    case MRT_STEP_ALLGATHER: return do_allgather(e, s);
    case MRT_STEP_ALLTOALL: return do_alltoall(e, s);
    case MRT_STEP_ALLREDUCE:
        if (s->hier) /* across nodes: hier.c */
            return mrt_hier_allreduce(e->comm, s->axes, e->buf[s->in],
                                      e->buf[s->out], mine(e, s->in, NULL),
                                      mrt_mpi_type(e->plan->value[s->in].dtype),
                                      e->plan->value[s->in].elsize, s->max);
        return mrt_comm_allreduce(e->comm, s->axes, e->buf[s->in],
                                  e->buf[s->out], mine(e, s->in, NULL),
                                  e->plan->value[s->in].dtype, s->max,
                                  request(e, s));
    case MRT_STEP_REDUCE_SCATTER: return do_reduce_scatter(e, s);
    case MRT_STEP_PERMUTE: return do_permute(e, s);
    case MRT_STEP_MAP: return do_map(e, s);
    case MRT_STEP_REDUCE_MAX: return do_reduce_max(e, s);
    case MRT_STEP_RENAME: return do_rename(e, s);
    case MRT_STEP_ALLTOALL_GROUP: return mrt_exec_alltoall_group(e, s);
    case MRT_STEP_GATHER: return do_gather(e, s);
    case MRT_STEP_SCATTER_ADD: return do_scatter_add(e, s);
    case MRT_STEP_SENDRECV: return do_sendrecv(e, s);
    case MRT_STEP_KIND_COUNT: break;
    }
    return MPI_ERR_OTHER;
}

/* ---- collectives in the background --------------------------------- */

/* Completes pending collective number i (of e->pending): the wait is
 * time exposed, the span from its issue is time in flight. */
static int complete(mrt_exec *e, int i)
{
    int k = e->pending[i];
    double t0 = MPI_Wtime();
    int rc = MPI_Wait(&e->req[k], MPI_STATUS_IGNORE);
    double t1 = MPI_Wtime();
    e->exposed[k] += t1 - t0;
    e->step_time[k] += t1 - t0;
    e->inflight[k] += t1 - e->start[k];
    e->pending[i] = e->pending[--e->npending];
    if (!e->npending)
        e->window += t1 - e->window_start;
    return rc;
}

/* Completes the pending collectives step j reads (their wait is j or
 * earlier). */
static int complete_before(mrt_exec *e, int j)
{
    int rc = MPI_SUCCESS;
    for (int i = 0; i < e->npending;)
        if (e->plan->step[e->pending[i]].wait <= j)
            rc |= complete(e, i);
        else
            i++;
    return rc;
}

/* Lets MPI move the pending collectives along (Open MPI progresses a
 * non-blocking collective only inside MPI calls), noting those done. */
static int progress(mrt_exec *e)
{
    int rc = MPI_SUCCESS;
    for (int i = 0; i < e->npending;) {
        int k = e->pending[i], done = 0;
        double t0 = MPI_Wtime();
        rc |= MPI_Test(&e->req[k], &done, MPI_STATUS_IGNORE);
        double t1 = MPI_Wtime();
        e->exposed[k] += t1 - t0;
        e->step_time[k] += t1 - t0;
        if (done) {
            e->inflight[k] += t1 - e->start[k];
            e->pending[i] = e->pending[--e->npending];
            if (!e->npending)
                e->window += t1 - e->window_start;
        } else {
            i++;
        }
    }
    return rc;
}

double mrt_exec_stage_scalar(mrt_exec *e, int v, double x)
{
    const mrt_plan *p = e->plan;
    if (p->pipe.stages < 2 || p->value[v].stage < 0)
        return x;
    int64_t at[MRT_MAX_AXES] = {0};
    at[p->pipe.axis] = p->value[v].stage; /* a rank of its stage */
    MPI_Bcast(&x, 1, MPI_DOUBLE, (int)mrt_mesh_rank(&p->mesh, at),
              e->comm->world);
    return x;
}

/* 1 if this rank stands for step s in the report: at 0 on every axis
 * but the pipe axis, on the step's stage (a SENDRECV's sender's). */
static int stands_for(const mrt_exec *e, const mrt_step *s)
{
    const mrt_plan *p = e->plan;
    int stage = s->kind == MRT_STEP_SENDRECV ? s->from_stage : s->stage;
    for (int a = 0; a < p->mesh.naxes; a++)
        if (e->comm->coords[a] !=
            (a == p->pipe.axis ? (stage > 0 ? stage : 0) : 0))
            return 0;
    return 1;
}

void mrt_exec_stage_bytes(mrt_exec *e)
{
    const mrt_plan *p = e->plan;
    int n = p->nsteps;
    if (p->pipe.stages < 2)
        return;
    int64_t *mine = calloc(2 * (size_t)n + 1, sizeof *mine);
    int64_t *all = calloc(2 * (size_t)n + 1, sizeof *all);
    if (mine && all) {
        for (int k = 0; k < n; k++)
            if (stands_for(e, &p->step[k])) {
                mine[k] = e->step_bytes[k];
                mine[n + k] = e->step_inter[k];
            }
        MPI_Reduce(mine, all, 2 * n, MPI_INT64_T, MPI_SUM, 0, e->comm->world);
        if (e->comm->rank == 0) {
            memcpy(e->step_bytes, all, (size_t)n * sizeof *all);
            memcpy(e->step_inter, all + n, (size_t)n * sizeof *all);
        }
    } else { /* the ranks must still meet: rank 0 keeps its own */
        int64_t none = 0, sink;
        for (int k = 0; k < 2 * n; k++)
            MPI_Reduce(&none, &sink, 1, MPI_INT64_T, MPI_SUM, 0,
                       e->comm->world);
    }
    free(mine);
    free(all);
}

mrt_status mrt_exec_run(mrt_exec *e, mrt_error *err)
{
    const mrt_plan *p = e->plan;
    int rc = MPI_SUCCESS, k = 0;
    for (; k < p->nsteps && rc == MPI_SUCCESS; k++) {
        const mrt_step *s = &p->step[k];
        rc = complete_before(e, k);
        int64_t before = e->comm->ledger_bytes;
        int64_t before_inter = e->comm->ledger_inter;
        double t0 = MPI_Wtime();
        if (rc == MPI_SUCCESS)
            rc = do_step(e, s);
        double t1 = MPI_Wtime();
        e->step_time[k] += t1 - t0;
        e->step_bytes[k] = e->comm->ledger_bytes - before;
        e->step_inter[k] = e->comm->ledger_inter - before_inter;
        if (rc == MPI_SUCCESS && e->req[k] != MPI_REQUEST_NULL) {
            if (!e->npending)
                e->window_start = t0;
            e->start[k] = t0;
            e->exposed[k] += t1 - t0;
            e->pending[e->npending++] = k;
        }
        if (rc == MPI_SUCCESS && e->npending)
            rc = progress(e);
    }
    if (rc == MPI_SUCCESS)
        rc = complete_before(e, p->nsteps);
    if (rc != MPI_SUCCESS) {
        const mrt_step *s = &p->step[k > 0 ? k - 1 : 0];
        return mrt_error_set(err, MRT_E_RUNTIME, "", (mrt_mark){0},
                             "%s of tensor '%s' failed (MPI error %d)",
                             mrt_step_kind_name(s->kind),
                             p->tensor_name[p->value[s->in].tensor], rc);
    }
    return MRT_OK;
}
