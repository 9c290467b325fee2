/*
 * step_query.c — what a step does to memory, as the runtime and the
 * planner both ask it: whether a collective's blocks are strided or
 * uneven, whether it needs the workspace, and the bytes one rank hands
 * to MPI in it.
 */
#include "plan.h"

/* 1 for every all-to-all, and for an all-gather or reduce-scatter when
 * a dim before `dim` has a local extent other than 1: its group's blocks
 * along dim are then strided (when every dim before it has extent 1 they
 * are contiguous, and the collective needs no packing). */
int mrt_step_is_strided(const mrt_plan *p, const mrt_step *s)
{
    const mrt_value *in = &p->value[s->in];
    if (s->kind == MRT_STEP_ALLTOALL)
        return 1;
    if (s->kind != MRT_STEP_ALLGATHER && s->kind != MRT_STEP_REDUCE_SCATTER)
        return 0;
    for (int i = 0; i < s->dim; i++)
        if (in->local[i] != 1)
            return 1;
    return 0;
}

/* The elements the rank at coords holds of its node's 1/q shard in a
 * hierarchical all-reduce of count elements (the block rule: the first
 * count mod q ranks of the node hold one more). */
static int64_t hier_shard(const mrt_plan *p, const mrt_step *s, int64_t count,
                          const int64_t coords[])
{
    mrt_mesh_span sp = mrt_cost_span(&p->profile, &p->mesh, s->axes);
    int64_t i = mrt_mesh_node_index(&p->mesh, p->profile.ranks_per_node,
                                    s->axes, coords);
    return count / sp.per_node + (i < count % sp.per_node);
}

int mrt_step_on_rank(const mrt_plan *p, const mrt_step *s,
                     const int64_t coords[])
{
    if (p->pipe.stages < 2 || s->stage < 0)
        return 1;
    int64_t c = coords[p->pipe.axis];
    return c == s->stage ||
           (s->kind == MRT_STEP_SENDRECV && c == s->from_stage);
}

int mrt_value_on_rank(const mrt_plan *p, int v, const int64_t coords[])
{
    return p->pipe.stages < 2 || p->value[v].stage < 0 ||
           coords[p->pipe.axis] == p->value[v].stage;
}

/* 1 if the rank at coords hands MPI the send buffer of step s: it runs
 * s, and of a SENDRECV it is the sender. */
static int hands_bytes(const mrt_plan *p, const mrt_step *s,
                       const int64_t coords[])
{
    if (!mrt_step_is_collective(s->kind) || !mrt_step_on_rank(p, s, coords))
        return 0;
    return s->kind != MRT_STEP_SENDRECV ||
           coords[p->pipe.axis] == s->from_stage;
}

int64_t mrt_step_rank_bytes(const mrt_plan *p, const mrt_step *s,
                            const int64_t coords[])
{
    if (!hands_bytes(p, s, coords))
        return 0;
    int64_t n = mrt_layout_shard_count_at(&p->value[s->in].layout, &p->mesh,
                                          coords);
    if (s->hier)
        n += 2 * hier_shard(p, s, n, coords);
    return n * p->value[s->in].elsize;
}

int64_t mrt_step_rank_bytes_inter(const mrt_plan *p, const mrt_step *s,
                                  const int64_t coords[])
{
    if (!hands_bytes(p, s, coords) || !s->bytes_inter)
        return 0;
    int64_t n = mrt_layout_shard_count_at(&p->value[s->in].layout, &p->mesh,
                                          coords);
    if (s->hier)
        return hier_shard(p, s, n, coords) * p->value[s->in].elsize;
    return n * p->value[s->in].elsize;
}

int64_t mrt_plan_bytes_inter(const mrt_plan *p)
{
    int64_t b = 0;
    for (int k = 0; k < p->nsteps; k++)
        b += p->step[k].bytes_inter;
    return b;
}

static int uneven_dim(const mrt_plan *p, const mrt_layout *l, int i)
{
    return i >= 0 && l->size[i] % mrt_layout_parts(l, &p->mesh, i) != 0;
}

int mrt_step_is_uneven(const mrt_plan *p, const mrt_step *s)
{
    const mrt_layout *in = &p->value[s->in].layout,
                     *out = &p->value[s->out].layout;
    if (s->kind != MRT_STEP_ALLGATHER && s->kind != MRT_STEP_ALLTOALL &&
        s->kind != MRT_STEP_REDUCE_SCATTER && s->kind != MRT_STEP_PERMUTE)
        return 0;
    return uneven_dim(p, in, s->dim) || uneven_dim(p, out, s->dim) ||
           (s->kind == MRT_STEP_ALLTOALL &&
            (uneven_dim(p, in, s->dim2) || uneven_dim(p, out, s->dim2)));
}

int mrt_step_needs_packing(const mrt_plan *p, const mrt_step *s)
{
    /* all-to-alls and all-gathers read and write their strided blocks in
     * place through MPI datatypes (runtime/datatype.c); a strided
     * reduce-scatter receives the blocks it sums into the workspace
     * (runtime/exec.c: an all-to-all, then the sum) */
    return s->kind == MRT_STEP_REDUCE_SCATTER &&
           (mrt_step_is_strided(p, s) || mrt_step_is_uneven(p, s));
}
