/*
 * rules_enum.c — the candidates of the rules search (search_rules.h): every
 * set of global rules, in a fixed order, built axis by axis.  Each mesh
 * axis of size > 1 goes nowhere, or onto a set of searched dims no two of
 * which share a tensor (so no tensor splits an axis twice), at each
 * position of each one's list; splits the planner refuses are cut as
 * soon as they appear, so the walk never visits a candidate it must
 * throw away.
 */
#include <stdlib.h>
#include <string.h>

#include "classify.h" /* MRT_MAX_EINSUM_DIMS */
#include "search_rules.h"
#include "split.h"

int mrt_rules_dim_searched(const mrt_spec *s, int all_dims, int d)
{
    for (int t = 0; t < s->ntensors; t++)
        if ((all_dims || !s->tensor[t].own_layout) &&
            mrt_layout_find_dim(&s->tensor[t].layout, d) >= 0)
            return 1;
    return 0;
}

typedef struct rules_enum {
    const mrt_spec *s;
    int na, ax[MRT_MAX_AXES]; /* the axes of size > 1 */
    int nd, *dims;            /* searched dims */
    mrt_rule *rule;           /* [ndims], the candidate being built */
    int64_t *parts;           /* [ndims], blocks per dim so far */
    unsigned char *together;  /* [nd * nd]: searched dims i and j appear in
                                 one tensor, so no axis may split both */
    int (*visit)(void *, const mrt_rule *);
    void *ctx;
} rules_enum;

static int place_axis(rules_enum *en, int k);

/* Axis number k goes into the lists of a set of searched dims no two of
 * which share a tensor (as the rules `heads: model, d_ff: model` do):
 * dims from i on, each skipped first, then placed at each position from
 * the end (so mesh order comes first).  `on` lists the dims (by index)
 * that already took the axis.  Splits the planner refuses (mrt_split_ok:
 * uneven ones, today) are cut at once. */
static int place_on(rules_enum *en, int k, int i, int *on, int non)
{
    if (i == en->nd)
        return place_axis(en, k + 1);
    int rc = place_on(en, k, i + 1, on, non);
    int a = en->ax[k], d = en->dims[i];
    for (int j = 0; j < non; j++)
        if (en->together[i * en->nd + on[j]])
            return rc;
    mrt_rule *r = &en->rule[d];
    int64_t saved = en->parts[d];
    if (rc || !mrt_split_ok(en->s->dim_size[d], saved * en->s->mesh.size[a]))
        return rc;
    en->parts[d] = saved * en->s->mesh.size[a];
    on[non] = i;
    for (int pos = r->naxes; pos >= 0 && !rc; pos--) {
        memmove(&r->axes[pos + 1], &r->axes[pos],
                (size_t)(r->naxes - pos) * sizeof r->axes[0]);
        r->axes[pos] = a;
        r->naxes++;
        rc = place_on(en, k, i + 1, on, non + 1);
        r->naxes--;
        memmove(&r->axes[pos], &r->axes[pos + 1],
                (size_t)(r->naxes - pos) * sizeof r->axes[0]);
    }
    en->parts[d] = saved;
    return rc;
}

/* Axis number k goes nowhere first, then onto each valid set of dims. */
static int place_axis(rules_enum *en, int k)
{
    if (k == en->na)
        return en->visit(en->ctx, en->rule);
    int on[MRT_MAX_EINSUM_DIMS * 4];
    return place_on(en, k, 0, on, 0);
}

/* Which searched dims share a tensor that follows the global rules (all
 * tensors do, for Mesh-TF's planner: all_dims). */
static void find_together(rules_enum *en, int all_dims)
{
    const mrt_spec *s = en->s;
    for (int t = 0; t < s->ntensors; t++) {
        const mrt_layout *l = &s->tensor[t].layout;
        if (!all_dims && s->tensor[t].own_layout)
            continue;
        for (int x = 0; x < en->nd; x++)
            for (int y = 0; y < en->nd; y++)
                if (x != y && mrt_layout_find_dim(l, en->dims[x]) >= 0 &&
                    mrt_layout_find_dim(l, en->dims[y]) >= 0)
                    en->together[x * en->nd + y] = 1;
    }
}

int mrt_rules_enumerate(const mrt_spec *s, int all_dims,
                        int (*visit)(void *ctx, const mrt_rule *rules),
                        void *ctx)
{
    rules_enum en = {.s = s, .visit = visit, .ctx = ctx};
    en.dims = calloc((size_t)s->ndims + 1, sizeof *en.dims);
    en.rule = calloc((size_t)s->ndims + 1, sizeof *en.rule);
    en.parts = calloc((size_t)s->ndims + 1, sizeof *en.parts);
    en.together = calloc((size_t)s->ndims * (size_t)s->ndims + 1, 1);
    int rc = -1;
    if (en.dims && en.rule && en.parts && en.together) {
        for (int a = 0; a < s->mesh.naxes; a++)
            if (s->mesh.size[a] > 1)
                en.ax[en.na++] = a;
        for (int d = 0; d < s->ndims; d++) {
            en.parts[d] = 1;
            if (mrt_rules_dim_searched(s, all_dims, d))
                en.dims[en.nd++] = d;
        }
        find_together(&en, all_dims);
        rc = place_axis(&en, 0);
    }
    free(en.dims);
    free(en.rule);
    free(en.parts);
    free(en.together);
    return rc;
}
