/*
 * plan_same.c — whether two plans do the same work: the same steps, in
 * the same order, on values of the same tensors in the same layouts at
 * the same places in the arena.  Two partitionings of a spec often
 * lower to one plan on a small mesh (on a 1 x 2 mesh a rule for the
 * size-1 axis changes nothing), and `meshrt validate` then runs and
 * ranks them as one: timing the same computation twice and ordering the
 * copies by their run-to-run noise would test the noise, not the model.
 */
#include "plan.h"

static int same_mesh(const mrt_mesh *a, const mrt_mesh *b)
{
    if (a->naxes != b->naxes)
        return 0;
    for (int i = 0; i < a->naxes; i++)
        if (a->size[i] != b->size[i])
            return 0;
    return 1;
}

/* The mesh's axes of size 1: splitting a dim over one, or summing over
 * it, changes nothing, so two layouts that differ only there are one. */
static unsigned unit_axes(const mrt_mesh *m)
{
    unsigned u = 0;
    for (int i = 0; i < m->naxes; i++)
        if (m->size[i] == 1)
            u |= 1u << i;
    return u;
}

/* Layouts a and b alike but for axes in `unit`. */
static int same_layout(const mrt_layout *a, const mrt_layout *b, unsigned unit)
{
    if (a->ndims != b->ndims || (a->partial & ~unit) != (b->partial & ~unit))
        return 0;
    for (int i = 0; i < a->ndims; i++) {
        if (a->dim[i] != b->dim[i] || a->size[i] != b->size[i])
            return 0;
        int j = 0, k = 0;
        for (;;) { /* the axes of size > 1 that split dim i, in order */
            while (j < a->naxes[i] && (unit >> a->axes[i][j] & 1u))
                j++;
            while (k < b->naxes[i] && (unit >> b->axes[i][k] & 1u))
                k++;
            if (j == a->naxes[i] || k == b->naxes[i])
                break;
            if (a->axes[i][j++] != b->axes[i][k++])
                return 0;
        }
        if (j != a->naxes[i] || k != b->naxes[i])
            return 0;
    }
    return 1;
}

static int same_step(const mrt_step *a, const mrt_step *b, unsigned unit)
{
    return a->kind == b->kind && a->in == b->in && a->in2 == b->in2 &&
           a->out == b->out && a->dim == b->dim && a->dim2 == b->dim2 &&
           (a->axes & ~unit) == (b->axes & ~unit) && a->group == b->group &&
           a->bytes == b->bytes && a->flops == b->flops && a->fn == b->fn &&
           a->c == b->c && a->hot == b->hot && a->max == b->max &&
           a->hier == b->hier && a->wait == b->wait && a->stage == b->stage &&
           a->from_stage == b->from_stage;
}

static int same_value(const mrt_value *a, const mrt_value *b, unsigned unit)
{
    return a->tensor == b->tensor &&
           same_layout(&a->layout, &b->layout, unit) && a->count == b->count &&
           a->dtype == b->dtype && a->offset == b->offset &&
           a->alias_of == b->alias_of && a->stage == b->stage;
}

int mrt_plan_same_work(const mrt_plan *a, const mrt_plan *b)
{
    if (!a || !b || a->program != b->program || a->dtype != b->dtype ||
        a->nsteps != b->nsteps || a->nvalues != b->nvalues ||
        a->arena_bytes != b->arena_bytes || !same_mesh(&a->mesh, &b->mesh) ||
        a->pipe.stages != b->pipe.stages ||
        a->pipe.microbatches != b->pipe.microbatches ||
        a->pipe.virtual_stages != b->pipe.virtual_stages ||
        a->pipe.schedule != b->pipe.schedule)
        return 0;
    unsigned unit = unit_axes(&a->mesh);
    for (int k = 0; k < a->nsteps; k++)
        if (!same_step(&a->step[k], &b->step[k], unit))
            return 0;
    for (int v = 0; v < a->nvalues; v++)
        if (!same_value(&a->value[v], &b->value[v], unit))
            return 0;
    return 1;
}
