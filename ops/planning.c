/*
 * planning.c — the planning context (planning.h): its life, and the
 * calls every pass makes on the plan being built: append a value, append
 * a step (costed by step_cost.c), mark a point and roll back to it, and
 * record the first figure that overflows 64 bits.
 */
#include "planning.h"

#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "grow.h"

/* A result may leave its pending sums to its consumer only if exactly one
 * later op reads it and it is not an output: deferrable[t] says so. */
static int *deferrable_tensors(const mrt_spec *s)
{
    int *readers = calloc((size_t)s->ntensors + 1, sizeof *readers);
    if (!readers)
        return NULL;
    for (int i = 0; i < s->nops; i++)
        for (int k = 0; k < s->op[i].nin; k++)
            readers[s->op[i].in[k]]++;
    for (int k = 0; k < s->noutputs; k++)
        readers[s->output[k]] = 0;
    for (int t = 0; t < s->ntensors; t++)
        readers[t] = readers[t] == 1;
    return readers;
}

mrt_planning *mrt_planning_create(const mrt_spec *s,
                                  const mrt_plan_options *opt)
{
    mrt_planning *pl = calloc(1, sizeof *pl);
    if (!pl)
        return NULL;
    pl->spec = s;
    pl->opt = opt;
    pl->overflow_tensor = -1;
    pl->cur_stage = -1;
    pl->last_value = malloc(((size_t)s->ntensors + 1) * sizeof(int));
    pl->deferrable = deferrable_tensors(s);
    pl->lazy = pl->deferrable ? mrt_lazy_sums(s, pl->deferrable) : NULL;
    int nomem;
    pl->regather = mrt_regather_table(s, &nomem);
    if (!pl->last_value || !pl->deferrable || !pl->lazy || nomem) {
        mrt_planning_destroy(pl);
        return NULL;
    }
    return pl;
}

void mrt_planning_destroy(mrt_planning *pl)
{
    if (!pl)
        return;
    mrt_plan_destroy(pl->plan);
    mrt_plan_destroy(pl->spare);
    mrt_cheapest_memo_destroy(pl->memo);
    mrt_relayout_memo_destroy(pl->relayout_memo);
    free(pl->last_value);
    free(pl->deferrable);
    free(pl->lazy);
    free(pl->regather);
    free(pl->op_stage);
    free(pl->op_chunk);
    free(pl->param_stage);
    free(pl->sent);
    free(pl);
}

void mrt_planning_recycle(mrt_planning *pl, mrt_plan *spare)
{
    mrt_plan_destroy(pl->spare);
    pl->spare = spare;
}

mrt_planning_mark mrt_planning_get_mark(const mrt_planning *pl)
{
    const mrt_plan *p = pl->plan;
    return (mrt_planning_mark){.nsteps = p->nsteps,
                               .nvalues = p->nvalues,
                               .comm_bytes = p->comm_bytes,
                               .flops = p->flops,
                               .overflow_tensor = pl->overflow_tensor,
                               .overflow_what = pl->overflow_what};
}

void mrt_planning_rollback(mrt_planning *pl, mrt_planning_mark m)
{
    mrt_plan *p = pl->plan;
    for (int v = p->nvalues - 1; v >= m.nvalues; v--)
        pl->last_value[p->value[v].tensor] = p->value[v].prev;
    p->nsteps = m.nsteps;
    p->nvalues = m.nvalues;
    p->comm_bytes = m.comm_bytes;
    p->flops = m.flops;
    pl->overflow_tensor = m.overflow_tensor;
    pl->overflow_what = m.overflow_what;
}

void mrt_planning_overflow(mrt_planning *pl, int tensor, const char *what)
{
    if (pl->overflow_tensor >= 0)
        return;
    pl->overflow_tensor = tensor;
    pl->overflow_what = what;
}

mrt_status mrt_planning_nomem(const mrt_spec *s, mrt_error *err)
{
    return mrt_error_set(err, MRT_E_NOMEM, s->path, (mrt_mark){0},
                         "out of memory while planning");
}

mrt_status mrt_planning_overflow_error(const mrt_planning *pl, mrt_error *err)
{
    if (pl->overflow_tensor < 0)
        return MRT_OK;
    const mrt_spec *s = pl->spec;
    const mrt_spec_tensor *t = &s->tensor[pl->overflow_tensor];
    return mrt_error_set(err, MRT_E_SPEC, s->path, t->mark,
                         "tensor '%s' makes the plan's %s overflow 64 bits",
                         t->name, pl->overflow_what);
}

int mrt_planning_add_value(mrt_planning *pl, int tensor, const mrt_layout *l)
{
    mrt_plan *p = pl->plan;
    if (mrt_grow((void **)&p->value, &pl->cap_values, p->nvalues + 1,
                 sizeof *p->value))
        return -1;
    mrt_value *v = &p->value[p->nvalues];
    memset(v, 0, sizeof *v);
    v->tensor = tensor;
    v->layout = *l;
    mrt_layout_shard_shape(l, &p->mesh, v->local);
    v->count = mrt_layout_shard_count(l, &p->mesh);
    v->dtype = mrt_spec_tensor_dtype(pl->spec, tensor);
    v->elsize = mrt_dtype_size(v->dtype);
    v->last_use = -1;
    v->made_by = -1;
    v->stage = pl->cur_stage;
    v->prev = pl->last_value[tensor];
    pl->last_value[tensor] = p->nvalues;
    return p->nvalues++;
}

int mrt_planning_add_step(mrt_planning *pl, const mrt_step *s)
{
    mrt_plan *p = pl->plan;
    if (mrt_grow((void **)&p->step, &pl->cap_steps, p->nsteps + 1,
                 sizeof *p->step))
        return -1;
    mrt_step *t = &p->step[p->nsteps];
    *t = *s;
    if (t->kind != MRT_STEP_SENDRECV) {
        t->stage = pl->cur_stage;
        t->from_stage = -1;
    }
    p->value[t->out].made_by = t->op;
    mrt_planning_cost_step(pl, t);
    int64_t sum;
    if (mrt_checked_add(p->comm_bytes, t->bytes, &sum))
        mrt_planning_overflow(pl, p->value[t->in].tensor,
                              "bytes handed to MPI per rank");
    else
        p->comm_bytes = sum;
    p->flops += t->flops;
    return p->nsteps++;
}
