/*
 * step_cost.c — the one place the planner costs a step: which of the
 * cost model's formulas (cost/cost.h, on plain figures: a collective of
 * kind K over the group of mesh axes A handing B bytes to MPI; a kernel's
 * flops; a local copy's bytes) applies to which step kind, and the
 * figures a step hands them, read from its values.  The steps the
 * planner emits (mrt_planning_cost_step) and the moves relayout_path.c
 * weighs (mrt_move_time) are costed here alike.
 *
 * On a profile with nodes, an all-reduce over a group that spans nodes
 * with several ranks on each runs hierarchically when the model says
 * that is faster than the flat one on the inter-node link; its `bytes`
 * are then those of its three calls.  The other collectives run flat,
 * priced on the inter-node link as soon as their group crosses a node.
 */
#include "checked.h"
#include "kernel_plan.h"
#include "mapfn.h"
#include "planning.h"
#include "step_widen.h"

/* The cost model's kind for each collective step kind. */
static const mrt_coll step_coll[MRT_STEP_KIND_COUNT] = {
    [MRT_STEP_ALLGATHER] = MRT_COLL_ALLGATHER,
    [MRT_STEP_ALLTOALL] = MRT_COLL_ALLTOALL,
    [MRT_STEP_ALLREDUCE] = MRT_COLL_ALLREDUCE,
    [MRT_STEP_REDUCE_SCATTER] = MRT_COLL_REDUCE_SCATTER,
    [MRT_STEP_PERMUTE] = MRT_COLL_PERMUTE,
    [MRT_STEP_ALLTOALL_GROUP] = MRT_COLL_ALLTOALL,
    [MRT_STEP_SENDRECV] = MRT_COLL_PERMUTE, /* one peer, the whole shard */
};

/* A collective of kind k over axes from layout a to b handing `bytes`
 * per rank to MPI.  An all-to-all over a group moves what the boxes of
 * the exchange say (exchange.c), not the uniform pattern. */
static mrt_comm_cost collective(const mrt_plan *p, mrt_step_kind k,
                                unsigned axes, int64_t bytes,
                                const mrt_layout *a, const mrt_layout *b,
                                int elsize)
{
    if (k == MRT_STEP_ALLTOALL_GROUP) {
        int64_t peers, most = mrt_exchange_volume(&p->mesh, a, b, axes, &peers);
        return mrt_cost_exchange(&p->profile, &p->mesh, axes,
                                 (double)most * elsize, peers);
    }
    return mrt_cost_collective(&p->profile, &p->mesh, step_coll[k], axes, bytes,
                               elsize);
}

double mrt_move_time(const mrt_plan *p, const mrt_layout *before,
                     const mrt_move *m)
{
    if (m->kind == MRT_STEP_SLICE)
        return mrt_cost_local(
                   &p->profile,
                   (double)mrt_layout_shard_count(&m->after, &p->mesh), 0,
                   p->elsize) *
               mrt_cost_share(&p->profile, p->mesh.nranks);
    if (!mrt_step_is_collective(m->kind))
        return 0;
    int64_t n = mrt_layout_shard_count(before, &p->mesh) * p->elsize;
    /* (weighs a move as of the plan's dtype: an int32 value of a float64
     * program moves half the bytes, which the step itself counts) */
    return collective(p, m->kind, m->axes, n, before, &m->after, p->elsize)
        .time_s;
}

/* An all-reduce of `all` elements over all ranks, `count` on the largest,
 * made hierarchical when that is cheaper: its bytes per rank (the
 * reduce-scatter's input, the 1/q shard twice) and per tier. */
static void try_hier(mrt_planning *pl, mrt_step *t, int64_t count, int64_t all)
{
    const mrt_plan *p = pl->plan;
    int e = p->value[t->in].elsize;
    mrt_mesh_span s = mrt_cost_span(&p->profile, &p->mesh, t->axes);
    if (t->kind != MRT_STEP_ALLREDUCE || count > INT_MAX || !s.aligned ||
        s.per_node < 2 || s.nodes < 2)
        return;
    mrt_comm_cost h = mrt_cost_allreduce_hier(&p->profile, &p->mesh, t->axes,
                                              count, e);
    if (!(h.time_s < t->cost.time_s))
        return;
    int64_t shard = (count + s.per_node - 1) / s.per_node;
    t->hier = 1;
    t->cost = h;
    t->bytes = (count + 2 * shard) * e;
    t->bytes_inter = shard * e;
    /* each node's q ranks hand their whole input, then 1/q of it twice:
     * all + 2 all / q over all ranks, exactly (all / q is whole) */
    if (all >= 0 &&
        mrt_checked_mul(all + 2 * (all / s.per_node), e, &t->bytes_total))
        mrt_planning_overflow(pl, p->value[t->in].tensor,
                              "bytes handed to MPI by all ranks");
    int64_t rs = mrt_cost_mpi_scratch(MRT_COLL_REDUCE_SCATTER, count * e,
                                      s.per_node);
    int64_t ar = mrt_cost_mpi_scratch(MRT_COLL_ALLREDUCE, t->bytes_inter,
                                      s.nodes);
    t->mpi_scratch = rs > ar ? rs : ar;
}

/* A collective step: its group, bytes (the whole local input), the bytes
 * of all ranks together, its cost and MPI's scratch. */
static void cost_collective(mrt_planning *pl, mrt_step *t)
{
    const mrt_plan *p = pl->plan;
    const mrt_value *in = &p->value[t->in];
    t->group = mrt_mesh_group_size(&p->mesh, t->axes);
    t->bytes = in->count * in->elsize; /* a shard: fits */
    int64_t all = mrt_layout_total_count(&in->layout, &p->mesh);
    if (all < 0 || mrt_checked_mul(all, in->elsize, &t->bytes_total))
        mrt_planning_overflow(pl, in->tensor,
                              "bytes handed to MPI by all ranks");
    t->cost = collective(p, t->kind, t->axes, t->bytes, &in->layout,
                         &p->value[t->out].layout, in->elsize);
    t->time_s = t->cost.time_s;
    /* (a strided reduce-scatter runs as an all-to-all into the
     * workspace: no scratch of MPI's) */
    t->mpi_scratch = mrt_step_needs_packing(p, t)
                         ? 0
                         : mrt_cost_mpi_scratch(step_coll[t->kind], t->bytes,
                                                t->group);
    t->hier = 0;
    t->bytes_inter = mrt_cost_span(&p->profile, &p->mesh, t->axes).tier ==
                             MRT_TIER_INTRA
                         ? 0
                         : t->bytes;
    if (t->kind == MRT_STEP_SENDRECV) { /* one stage's ranks send */
        t->group = 2;
        t->bytes_total /= p->pipe.stages > 1 ? p->pipe.stages : 1;
    }
    if (p->profile.ranks_per_node > 0)
        try_hier(pl, t, in->count, all);
    t->time_s = t->cost.time_s;
    if (t->mpi_scratch < 0) {
        mrt_planning_overflow(pl, in->tensor, MRT_PLAN_OVERFLOW_MEMORY);
        t->mpi_scratch = 0;
    }
}

static mrt_kview view_of(const mrt_value *v)
{
    return (mrt_kview){.ndims = v->layout.ndims,
                       .dim = v->layout.dim,
                       .ext = v->local,
                       .data = NULL};
}

/* Whether BLIS sees operand m stored by columns (a unit row stride, as
 * kernels/kernel.c hands it over). */
static int by_columns(const mrt_kmat *m)
{
    int64_t rs = m->rs, cs = m->cs;
    mrt_kplan_blis_strides(m->rows, m->cols, &rs, &cs);
    return rs == 1 && cs != 1;
}

/* The profile prices products by the form of their operands (it has
 * GEMM rows of a form other than nn: a calibration that timed them). */
static int prices_forms(const mrt_profile *p)
{
    for (int i = 0; i < p->ngemm; i++)
        if (p->gemm[i].form != MRT_GEMM_NN)
            return 1;
    return 0;
}

/* The kernel's plan of product step t (ops/kernel_plan.c) and the form
 * of the operands BLIS reads in it; *c_by_columns: whether the C it
 * writes is stored by columns. */
static int kernel_form(const mrt_plan *p, const mrt_step *t, mrt_kplan *k,
                       int *c_by_columns)
{
    mrt_kview a = view_of(&p->value[t->in]), b = view_of(&p->value[t->in2]),
              o = view_of(&p->value[t->out]);
    mrt_kplan_make(p->dtype, &a, &b, &o, k);
    *c_by_columns = by_columns(&k->op[MRT_KOP_C].mat);
    return (by_columns(&k->op[MRT_KOP_A].mat) ? 2 : 0) +
           (by_columns(&k->op[MRT_KOP_B].mat) ? 1 : 0);
}

/* Product step t as BLIS meets it, into *r, with its kernel plan in *k;
 * 0 when t is no product of two inputs.  The form says how A and B are
 * stored, plus 4 when the C the kernel writes is stored by columns:
 * BLIS decides between its paths on m, n and k as it is handed them,
 * before it transposes a column-stored C, so the transposed product
 * with C by rows is not the same call (zero.yaml's dW1 = Xᵀ dH, C
 * [d_model, d_ff] with the classes' M = d_ff, runs as 1024 x 256 x 512
 * with C by columns: packed, where 256 x 1024 x 512 with C by rows runs
 * unpacked; docs/calibration.md, round L). */
static int product_of(const mrt_plan *p, const mrt_step *t, mrt_kplan *k,
                      mrt_product_row *r)
{
    const mrt_einsum_shape *c = &t->cls;
    if (t->kind != MRT_STEP_EINSUM || c->ninputs < 2 || t->in2 < 0)
        return 0;
    int c_cols, form = kernel_form(p, t, k, &c_cols);
    *r = (mrt_product_row){.m = c->size[MRT_IDX_M],
                           .n = c->size[MRT_IDX_N],
                           .k = c->size[MRT_IDX_K],
                           .form = form + (c_cols ? MRT_PRODUCT_C_COLS : 0),
                           .dtype = mrt_dtype_compute(p->dtype)};
    return r->m >= 1 && r->n >= 1 && r->k >= 1;
}

int mrt_step_product(const mrt_plan *p, const mrt_step *t, mrt_product_row *r)
{
    mrt_kplan k;
    return product_of(p, t, &k, r);
}

/* n elements copied in step t's compute type: at the rate the profile's
 * `copy` map measured for copies of that size, else as many bytes
 * written and read at the copy rate (a pass through memory: calibrate's
 * copy rate is of 64 MiB, which prices a copy that stays in the caches
 * several times too slow). */
static double copy_time(const mrt_plan *p, const mrt_step *t, double n)
{
    double copy = mrt_cost_map(&p->profile, "copy", n,
                               mrt_step_compute_dtype(p, t), p->elsize);
    return copy >= 0 ? copy : mrt_cost_local(&p->profile, n, n, p->elsize);
}

/* The copies the kernel of plan k makes first for step t (operands
 * packed into the workspace, C unpacked), each at the rate of copies of
 * its size. */
static double copies_time(const mrt_plan *p, const mrt_step *t,
                          const mrt_kplan *k)
{
    double time = 0;
    for (int x = 0; x < MRT_KOP_COUNT; x++)
        if (k->op[x].copy)
            time += copy_time(p, t,
                              (double)k->batch.size *
                                  (double)k->op[x].mat.rows *
                                  (double)k->op[x].mat.cols);
    return time;
}

/* A product of two inputs as the kernel will run it (ops/kernel_plan.c):
 * the form of the operands BLIS reads, at that form's rate, and the
 * copies the kernel makes first. */
static double formed_gemm_time(const mrt_plan *p, const mrt_step *t)
{
    const mrt_einsum_shape *c = &t->cls;
    mrt_kplan k;
    int c_cols, form = kernel_form(p, t, &k, &c_cols);
    return mrt_cost_gemm_form(&p->profile, p->dtype, t->flops,
                              (double)c->size[MRT_IDX_M],
                              (double)c->size[MRT_IDX_N],
                              (double)c->size[MRT_IDX_K], (mrt_gemm_form)form) +
           copies_time(p, t, &k);
}

/* A product whose shape the profile timed (a `products:` row): at that
 * row's rate, and the kernel's copies; -1 when it has no row. */
static double timed_product_time(const mrt_plan *p, const mrt_step *t)
{
    mrt_kplan k;
    mrt_product_row r;
    if (!p->profile.nprod || !product_of(p, t, &k, &r))
        return -1;
    const mrt_product_row *own = mrt_profile_product(&p->profile, r.dtype,
                                                     r.form, r.m, r.n, r.k);
    return own ? t->flops / own->flops + copies_time(p, t, &k) : -1;
}

/* A local product: by its shape (the profile's GEMM rates by size, and
 * by form when it has them), slower when ranks share cores. */
static double einsum_time(const mrt_plan *p, const mrt_step *t)
{
    const mrt_einsum_shape *c = &t->cls;
    double share = mrt_cost_share(&p->profile, p->mesh.nranks);
    /* one input: a permuted sum, a pass over the input at the profile's
     * `sum` rate when it has one */
    double sum = c->ninputs < 2
                     ? mrt_cost_map(&p->profile, "sum",
                                    (double)p->value[t->in].count,
                                    mrt_step_compute_dtype(p, t), p->elsize)
                     : -1;
    if (sum >= 0)
        return sum * share;
    if (c->ninputs < 2)
        return mrt_cost_kernel(&p->profile, p->dtype, t->flops) * share;
    double timed = timed_product_time(p, t);
    if (timed >= 0)
        return timed * share;
    if (t->in2 >= 0 && prices_forms(&p->profile))
        return formed_gemm_time(p, t) * share;
    return mrt_cost_gemm(&p->profile, p->dtype, t->flops,
                         (double)c->size[MRT_IDX_M], (double)c->size[MRT_IDX_N],
                         (double)c->size[MRT_IDX_K]) *
           share;
}

/* A memory-bound local step: a map at its function's measured rate
 * when the profile has one; another step (a slice, a reduction) at the
 * measured rate of the `copy` map for shards of its size, an element
 * copied per element written and one read; else the bytes it writes and
 * reads at the copy rate. */
static double map_time(const mrt_plan *p, const mrt_step *t, double read)
{
    double out = (double)p->value[t->out].count;
    if (t->kind == MRT_STEP_MAP) {
        double m = mrt_cost_map(&p->profile, mrt_map_name(t->fn), out,
                                mrt_step_compute_dtype(p, t), p->elsize);
        if (m >= 0)
            return m;
    } else if (out > 0) {
        /* as many element copies as half the elements it touches, at
         * the rate of copies of that size (a reduction of a 1M-element
         * input into 256 elements streams the input from memory: the
         * rate of 256-element copies, in L1, was 4x too fast) */
        double n = (out + read) / 2;
        double copy = mrt_cost_map(&p->profile, "copy", n,
                                   mrt_step_compute_dtype(p, t), p->elsize);
        if (copy >= 0)
            return copy;
    }
    return mrt_cost_local(&p->profile, out, read, p->elsize);
}

/* The conversions around a step's kernel (ops/step_widen.h): each
 * converted operand copied once, at the `copy` map's rate (or the
 * copy rate) for its size; e.g. dropout's 1-byte mask into the compute
 * type. */
static double widen_time(const mrt_plan *p, const mrt_step *t)
{
    const int v[3] = {t->in, t->in2, t->out};
    double time = 0;
    for (int k = 0; k < 3; k++)
        if (mrt_step_widens(p, t, v[k])) {
            time += copy_time(p, t, (double)p->value[v[k]].count);
        }
    return time;
}

void mrt_step_price_einsum(const mrt_plan *p, mrt_step *t)
{
    t->time_s = einsum_time(p, t);
}

void mrt_step_price_collective(const mrt_plan *p, mrt_step *t)
{
    const mrt_value *in = &p->value[t->in];
    t->cost = t->hier ? mrt_cost_allreduce_hier(&p->profile, &p->mesh, t->axes,
                                                in->count, in->elsize)
                      : collective(p, t->kind, t->axes, in->count * in->elsize,
                                   &in->layout, &p->value[t->out].layout,
                                   in->elsize);
    t->time_s = t->cost.time_s;
}

void mrt_planning_cost_step(mrt_planning *pl, mrt_step *t)
{
    const mrt_plan *p = pl->plan;
    if (mrt_step_is_collective(t->kind)) {
        cost_collective(pl, t);
    } else if (t->kind == MRT_STEP_EINSUM) {
        t->time_s = einsum_time(p, t);
    } else if (t->kind == MRT_STEP_GATHER || t->kind == MRT_STEP_SCATTER_ADD) {
        /* memory-bound: the rows copied (or added) and the ids read */
        const mrt_value *ids =
            &p->value[t->kind == MRT_STEP_GATHER ? t->in2 : t->in];
        double rows =
            (double)p->value[t->kind == MRT_STEP_GATHER ? t->out : t->in2].count;
        t->group = 1;
        t->bytes = t->bytes_total = t->bytes_inter = 0;
        t->time_s = mrt_cost_local(
            &p->profile, rows,
            rows + (double)ids->count * ids->elsize / p->elsize, p->elsize);
        if (t->kind == MRT_STEP_SCATTER_ADD) /* and the table zeroed */
            t->time_s += mrt_cost_local(
                &p->profile, (double)p->value[t->out].count, 0, p->elsize);
        t->time_s *= mrt_cost_share(&p->profile, p->mesh.nranks);
    } else { /* memory-bound local steps: a slice only writes */
        double read = 0;
        if (t->kind != MRT_STEP_SLICE)
            read = (double)p->value[t->in].count +
                   (t->in2 >= 0 ? (double)p->value[t->in2].count : 0);
        t->group = 1;
        t->bytes = t->bytes_total = t->bytes_inter = 0;
        t->time_s = (map_time(p, t, read) + widen_time(p, t)) *
                    mrt_cost_share(&p->profile, p->mesh.nranks);
    }
}
