/*
 * memory_kind.c — what each value of a plan holds, for the memory
 * breakdown (meshrt.h's mrt_memory_kind): one function decides, and every
 * printer reads the kind mrt_planning_finish stored in the value.
 *
 * The rules, first match wins:
 *   optimizer    a tensor of a parameter's optimizer state (opt_state)
 *   params       a `train:` parameter as it enters the program, and its
 *                update (`w:next`, in the parameter's layout)
 *   grads        a parameter's or a `grads:` input's gradient, and its
 *                pieces (the contributions of each use)
 *   comm         any other value of a parameter: a copy a move made
 *   activations  a forward value, or an input, that a backward step reads
 *                (what the backward pass needs the forward pass to keep)
 *   comm         a value a collective makes for the op that reads it
 *                (a move of an input: gathered weights, moved activations)
 *   other        the rest: temporaries, an op's reduced result no backward
 *                step reads, inputs only the forward pass reads, the loss
 * Workspace (and MPI's scratch) is no value: it is per step.
 */
#include <stdlib.h>

#include "memory.h"

const char *mrt_memory_kind_name(mrt_memory_kind k)
{
    static const char *const name[] = {"params",      "grads", "optimizer",
                                       "activations", "comm",  "other",
                                       "workspace"};
    _Static_assert(sizeof name / sizeof *name == MRT_MEM_KIND_COUNT,
                   "a name per memory kind");
    return (unsigned)k < MRT_MEM_KIND_COUNT ? name[k] : NULL;
}

int mrt_plan_value_kind(const mrt_plan *plan, int i)
{
    if (!plan || i < 0 || i >= plan->nvalues)
        return -1;
    return plan->value[i].kind;
}

/* The role of tensor t by the spec alone: MRT_MEM_PARAMS for a
 * parameter, GRADS for a gradient, OPTIMIZER for optimizer state, else
 * -1.  param[t] is 1 for the parameters and `grads:` inputs. */
static int tensor_role(const mrt_spec *s, const char *wanted, int t)
{
    const mrt_spec_tensor *x = &s->tensor[t];
    if (x->opt_state) /* master weights, moments, gradient copy */
        return MRT_MEM_OPTIMIZER;
    if (x->grad_like && wanted[x->grad_like - 1] == 2)
        return x->grad_piece ? MRT_MEM_GRADS : MRT_MEM_PARAMS;
    if (x->grad_like && x->grad_piece && wanted[x->grad_like - 1])
        return MRT_MEM_GRADS;
    if (wanted[t] == 2)
        return MRT_MEM_PARAMS;
    return -1;
}

/* wanted[t]: 2 for a `train:` parameter, 1 for a `grads:` input, 3 for a
 * gradient the train block names (malloc'd; NULL when out of memory). */
static char *wanted_tensors(const mrt_spec *s)
{
    char *w = calloc((size_t)s->ntensors + 1, 1);
    if (!w || s->train.loss < 0)
        return w;
    for (int i = 0; i < s->train.nparams; i++) {
        w[s->train.param[i]] = 2;
        if (s->train.grad[i] >= 0 && !w[s->train.grad[i]])
            w[s->train.grad[i]] = 3;
    }
    for (int i = 0; i < s->train.nextra; i++) {
        w[s->train.extra[i]] = 1;
        if (s->train.extra_grad[i] >= 0 && !w[s->train.extra_grad[i]])
            w[s->train.extra_grad[i]] = 3;
    }
    return w;
}

/* The kind of value v: read_back[v] is 1 if a backward step reads it. */
static mrt_memory_kind kind_of(const mrt_plan *p, const mrt_spec *s,
                               const char *wanted, const char *read_back, int v)
{
    const mrt_value *x = &p->value[v];
    if (s->tensor[x->tensor].opt_state) /* its state (and next state) */
        return MRT_MEM_OPTIMIZER;
    int role = wanted[x->tensor] == 3 ? MRT_MEM_GRADS
                                      : tensor_role(s, wanted, x->tensor);
    if (role == MRT_MEM_PARAMS && wanted[x->tensor] == 2)
        return x->made_by < 0 ? MRT_MEM_PARAMS : MRT_MEM_COMM;
    if (role >= 0)
        return (mrt_memory_kind)role;
    int fwd = x->made_by < 0 || p->op[x->made_by].phase == MRT_PHASE_FORWARD;
    if (fwd && read_back[v])
        return MRT_MEM_ACTIVATIONS;
    if (x->def >= 0 && mrt_step_is_collective(p->step[x->def].kind) &&
        p->op[x->made_by].out_value != v)
        return MRT_MEM_COMM;
    return MRT_MEM_OTHER;
}

mrt_status mrt_memory_classify(mrt_plan *p, const mrt_spec *s)
{
    char *wanted = wanted_tensors(s);
    char *read_back = calloc((size_t)p->nvalues + 1, 1);
    if (!wanted || !read_back) {
        free(wanted);
        free(read_back);
        return MRT_E_NOMEM;
    }
    for (int k = 0; k < p->nsteps; k++) {
        const mrt_step *st = &p->step[k];
        if (p->op[st->op].phase != MRT_PHASE_BACKWARD)
            continue;
        read_back[st->in] = 1;
        if (st->in2 >= 0)
            read_back[st->in2] = 1;
    }
    for (int v = 0; v < p->nvalues; v++)
        p->value[v].kind = kind_of(p, s, wanted, read_back, v);
    free(wanted);
    free(read_back);
    return MRT_OK;
}
