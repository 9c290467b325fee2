/*
 * uneven.c — the collectives of a dim split unevenly (layout.h): the
 * blocks the ranks of a group exchange differ in size, so every peer gets
 * its own count and datatype (one MPI_Alltoallw).
 *
 * A relayout step changes the split of one dim (two for an all-to-all)
 * over the axes of its group; the other dims are split by other axes, the
 * same on every rank of the group.  Each rank holds a box of the global
 * tensor before the step and needs a box after it; it sends peer q the
 * part of its box that q needs (the intersection of the two boxes) and
 * receives from q the part of q's box that it needs, each a strided block
 * read and written in place through a datatype.  That one rule is an
 * all-gather (q needs my whole block), an all-to-all (a piece of my block
 * along the other dim), and a permute (whatever the two nestings share).
 * A reduce-scatter is the same exchange of the pending sums, received
 * into the workspace, one block per peer, then summed (runtime/exec.c).
 * The bytes handed to MPI are the rank's whole input shard, as in every
 * other collective (ops/plan.h).
 */
#include <stdlib.h>

#include "runtime.h"

/* The coordinates of member q of my group over mask (the inverse of
 * mrt_mesh_group_index: mixed radix, last axis fastest). */
static void member_coords(const mrt_mesh *m, unsigned mask, int64_t q,
                          const int64_t mine[], int64_t c[])
{
    for (int a = 0; a < MRT_MAX_AXES; a++)
        c[a] = a < m->naxes ? mine[a] : 0;
    for (int a = m->naxes - 1; a >= 0; a--)
        if (mask & (1u << a)) {
            c[a] = q % m->size[a];
            q /= m->size[a];
        }
}

typedef struct box {
    int64_t at[MRT_MAX_DIMS], ext[MRT_MAX_DIMS];
} box;

static box box_of(const mrt_layout *l, const mrt_mesh *m, const int64_t c[])
{
    box b;
    for (int i = 0; i < l->ndims; i++)
        mrt_layout_dim_range(l, m, i, c, &b.at[i], &b.ext[i]);
    return b;
}

/* x ∩ y in sub (extents) and start (relative to `rel`); 0 if empty. */
static int64_t intersect(int n, const box *x, const box *y, const box *rel,
                         int64_t sub[], int64_t start[])
{
    int64_t count = 1;
    for (int i = 0; i < n; i++) {
        int64_t lo = x->at[i] > y->at[i] ? x->at[i] : y->at[i];
        int64_t hx = x->at[i] + x->ext[i], hy = y->at[i] + y->ext[i];
        int64_t hi = hx < hy ? hx : hy;
        sub[i] = hi > lo ? hi - lo : 0;
        start[i] = lo - rel->at[i];
        count *= sub[i];
    }
    return count;
}

void mrt_uneven_free(mrt_uneven *u)
{
    if (!u)
        return;
    for (int64_t j = 0; u->type && j < 2 * u->g; j++)
        if (u->type[j] != MPI_DATATYPE_NULL && u->type[j] != MPI_BYTE)
            MPI_Type_free(&u->type[j]);
    free(u->type);
    free(u->count);
    free(u);
}

int mrt_uneven_make(const mrt_plan *p, const mrt_step *s,
                    const int64_t coords[], mrt_uneven **out)
{
    const mrt_mesh *m = &p->mesh;
    const mrt_layout *li = &p->value[s->in].layout,
                     *lo = &p->value[s->out].layout;
    int n = li->ndims, rs = s->kind == MRT_STEP_REDUCE_SCATTER, rc = 0;
    mrt_uneven *u = calloc(1, sizeof *u);
    *out = NULL;
    if (!u)
        return MPI_ERR_NO_MEM;
    u->g = s->group;
    u->type = malloc(2 * (size_t)u->g * sizeof *u->type);
    u->count = calloc(4 * (size_t)u->g, sizeof *u->count); /* + displs */
    if (!u->type || !u->count) {
        mrt_uneven_free(u);
        return MPI_ERR_NO_MEM;
    }
    for (int64_t j = 0; j < 2 * u->g; j++)
        u->type[j] = MPI_DATATYPE_NULL;
    mrt_dtype vt = p->value[s->in].dtype;
    MPI_Datatype base = mrt_mpi_type(vt);
    box in_me = box_of(li, m, coords), out_me = box_of(lo, m, coords);
    u->in_count = mrt_layout_shard_count_at(li, m, coords);
    u->out_count = mrt_layout_shard_count_at(lo, m, coords);
    for (int64_t q = 0; q < u->g && rc == MPI_SUCCESS; q++) {
        int64_t c[MRT_MAX_AXES], sub[MRT_MAX_DIMS], start[MRT_MAX_DIMS];
        member_coords(m, s->axes, q, coords, c);
        box in_q = box_of(li, m, c), out_q = box_of(lo, m, c);
        MPI_Datatype *st = &u->type[q], *rt = &u->type[u->g + q];
        if (intersect(n, &in_me, &out_q, &in_me, sub, start) > 0) {
            u->count[q] = 1;
            rc = mrt_box_type(n, in_me.ext, sub, start, base, 0, st);
        } else {
            *st = MPI_BYTE;
        }
        int64_t got = intersect(n, &in_q, &out_me, &out_me, sub, start);
        if (rc == MPI_SUCCESS && got > 0 && rs) { /* slot q, contiguous */
            int64_t zero[MRT_MAX_DIMS] = {0};
            u->count[u->g + q] = 1;
            rc = mrt_box_type(n, sub, sub, zero, base,
                              (MPI_Aint)(q * got * mrt_dtype_size(vt)), rt);
        } else if (rc == MPI_SUCCESS && got > 0) {
            u->count[u->g + q] = 1;
            rc = mrt_box_type(n, out_me.ext, sub, start, base, 0, rt);
        } else {
            *rt = MPI_BYTE;
        }
    }
    if (rc != MPI_SUCCESS) {
        mrt_uneven_free(u);
        return rc;
    }
    *out = u;
    return MPI_SUCCESS;
}
