/*
 * zero.c — an alternative's `zero: {stage, axes}` (ZeRO, Rajbhandari et
 * al. 2020), applied to the spec derived under it (derive.c's
 * mrt_spec_derive_alt, after the alternative's own entries):
 *
 *   stage 1  each parameter's optimizer state (master weights, moments,
 *            gradient copy) and the update's tensors sharded further over
 *            the axes: the update runs on a shard, and the updated
 *            parameter, kept in its own layout, is rebuilt from the
 *            shards by an all-gather;
 *   stage 2  the pieces of its gradient too: the gradient's all-reduce
 *            becomes a reduce-scatter onto the shard;
 *   stage 3  the parameter too, gathered for each use and not kept for
 *            the backward pass (reshard_after_forward): nothing of the
 *            parameter is replicated over the axes.
 *
 * Which dim is sharded: of the parameter's layout under the alternative,
 * the largest dim not split yet that the axes divide evenly (so every
 * rank holds 1/d of it: ZeRO's figures, to the byte); else the largest
 * dim not split yet; else (every dim split) the one with the largest
 * shard.  Ties: the first in shape order.  The axes go on it minor-most,
 * so a size they do not divide splits unevenly, as any uneven split
 * does (layout.h's block rule).  An axis that already
 * splits the parameter is not used again; a 0-dim parameter (a scalar)
 * is left alone.
 */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

/* How good dim d of l is to shard into `ways` more parts: 2 not split
 * and divided evenly, 1 not split, 0 split already; and its extent on
 * a rank (the tie-break: larger first). */
static int rank_dim(const mrt_layout *l, const mrt_mesh *m, int d, int64_t ways,
                    int64_t *extent)
{
    int64_t parts = 1;
    for (int k = 0; k < l->naxes[d]; k++)
        parts *= m->size[l->axes[d][k]];
    *extent = (l->size[d] + parts - 1) / parts;
    if (l->naxes[d])
        return 0;
    return l->size[d] % ways == 0 ? 2 : 1;
}

/* The dim of l to shard into `ways` more parts (see the top), or -1 for
 * a 0-dim layout. */
static int zero_dim(const mrt_layout *l, const mrt_mesh *m, int64_t ways)
{
    int best = -1, best_rank = -1;
    int64_t best_extent = -1;
    for (int d = 0; d < l->ndims; d++) {
        int64_t extent;
        int r = rank_dim(l, m, d, ways, &extent);
        if (r > best_rank || (r == best_rank && extent > best_extent)) {
            best = d;
            best_rank = r;
            best_extent = extent;
        }
    }
    return best;
}

/* t takes z's split on the dims it has (a tensor of the parameter's). */
static void restrict_to(mrt_spec_tensor *t, const mrt_layout *z)
{
    for (int i = 0; i < t->layout.ndims; i++) {
        int j = mrt_layout_find_dim(z, t->layout.dim[i]);
        t->layout.naxes[i] = j < 0 ? 0 : z->naxes[j];
        if (j >= 0)
            memcpy(t->layout.axes[i], z->axes[j], sizeof t->layout.axes[i]);
    }
    t->layout.partial = 0;
    t->own_layout = 1;
}

/* Parameter p's layout with the zero axes it does not use yet on its
 * zero dim, into *z; 0 when there is nothing to shard. */
static int zero_layout(const mrt_spec *s, const mrt_spec_layout *l, int p,
                       mrt_layout *z)
{
    *z = s->tensor[p].layout;
    unsigned free_axes = l->zero_axes & ~mrt_layout_used_axes(z);
    int64_t ways = 1;
    for (int a = 0; a < s->mesh.naxes; a++)
        if (free_axes & (1u << a))
            ways *= s->mesh.size[a];
    int d = zero_dim(z, &s->mesh, ways);
    if (d < 0 || !free_axes)
        return 0;
    for (int a = 0; a < s->mesh.naxes && z->naxes[d] < MRT_MAX_AXES; a++)
        if (free_axes & (1u << a))
            z->axes[d][z->naxes[d]++] = a;
    return 1;
}

/* 1 if tensor t follows parameter p's zero layout under stage `stage`:
 * its optimizer state, or (stage 3; stage 2: the pieces) its gradient. */
static int follows(const mrt_spec_tensor *t, int p, int stage)
{
    return t->opt_layout == p + 1 ||
           (t->grad_like == p + 1 &&
            (stage == 3 || (stage == 2 && t->grad_piece)));
}

/* mrt_spec_apply_zero without memory of its own: a walk of the tensors
 * per parameter. */
static void apply_slowly(mrt_spec *s, const mrt_spec_layout *l)
{
    const mrt_train *tr = &s->train;
    for (int k = 0; l->zero_stage && k < tr->nparams; k++) {
        int p = tr->param[k];
        mrt_layout z;
        if (!zero_layout(s, l, p, &z))
            continue;
        if (l->zero_stage == 3) {
            restrict_to(&s->tensor[p], &z);
            s->tensor[p].reshard = 1;
        }
        for (int i = 0; i < s->ntensors; i++) {
            mrt_spec_tensor *t = &s->tensor[i];
            if (follows(t, p, l->zero_stage))
                restrict_to(t, &z);
        }
    }
}

/* The zero layout of the k-th parameter into z[k] (has[k]: 0 when there
 * is nothing to shard), stage 3 restricting the parameter itself. */
static void param_layouts(mrt_spec *s, const mrt_spec_layout *l, mrt_layout *z,
                          char *has)
{
    const mrt_train *tr = &s->train;
    for (int k = 0; k < tr->nparams; k++) {
        int p = tr->param[k];
        has[k] = (char)zero_layout(s, l, p, &z[k]);
        if (has[k] && l->zero_stage == 3) {
            restrict_to(&s->tensor[p], &z[k]);
            s->tensor[p].reshard = 1;
        }
    }
}

/* Applies z to every tensor that follows a parameter, in one walk of the
 * tensors (nth[p]: parameter p's index in train.param, or -1); where two
 * parameters claim a tensor, the later one's layout wins. */
static void restrict_followers(mrt_spec *s, int stage, const mrt_layout *z,
                               const char *has, const int *nth)
{
    for (int i = 0; i < s->ntensors; i++) {
        mrt_spec_tensor *t = &s->tensor[i];
        int a = t->opt_layout - 1, b = t->grad_like - 1;
        int ka = a >= 0 && a < s->ntensors ? nth[a] : -1;
        int kb = b >= 0 && b < s->ntensors ? nth[b] : -1;
        ka = ka >= 0 && has[ka] && follows(t, a, stage) ? ka : -1;
        kb = kb >= 0 && has[kb] && follows(t, b, stage) ? kb : -1;
        int k = ka > kb ? ka : kb;
        if (k >= 0)
            restrict_to(t, &z[k]);
    }
}

void mrt_spec_apply_zero(mrt_spec *s, const mrt_spec_layout *l)
{
    const mrt_train *tr = &s->train;
    if (!l->zero_stage || tr->nparams < 1)
        return;
    /* one walk of the tensors, not one per parameter: 1,540 parameters
     * and ~10^5 tensors with 96 layers' microbatches */
    mrt_layout *z = malloc((size_t)tr->nparams * sizeof *z);
    char *has = malloc((size_t)tr->nparams);
    int *nth = malloc(((size_t)s->ntensors + 1) * sizeof *nth);
    if (z && has && nth) {
        for (int i = 0; i < s->ntensors; i++)
            nth[i] = -1;
        for (int k = 0; k < tr->nparams; k++)
            nth[tr->param[k]] = k;
        param_layouts(s, l, z, has);
        restrict_followers(s, l->zero_stage, z, has, nth);
    } else
        apply_slowly(s, l);
    free(z);
    free(has);
    free(nth);
}
