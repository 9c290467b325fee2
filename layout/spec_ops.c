/*
 * spec_ops.c — the `ops:` and `outputs:` sections.
 *
 * Ops run in file order; each reads one or two tensors that already
 * exist (inputs, or outputs of earlier ops) and makes a new named tensor,
 * numbered after the inputs in op order.  An einsum's output dims are
 * named in its `shape:`; each must come from an input (dims of the inputs
 * that the output leaves out are summed over).  Ops are numbered from 1
 * in messages, as a user counts them.  An op may carry its own budget
 * (`expect:`, parsed by spec_planning.c).  `outputs:` defaults to the
 * last op's output.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec_parse.h"

static const char *const op_keys[] = {"op",     "in",     "out", "shape",
                                      "layout", "expect", NULL};
static const char *const op_required[] = {"op", "in", "out", "shape", NULL};
static const char *const op_names[] = {[MRT_OP_EINSUM] = "einsum"};
_Static_assert(sizeof op_names / sizeof op_names[0] == MRT_OP_KIND_COUNT,
               "one name per op kind");

/* The number (from 1) of the first op after op `after` whose `out:` is
 * name, or 0. */
static int later_maker(const mrt_spec_parser *p, const yaml_node_t *seq,
                       int after, const char *name)
{
    int count = mrt_spec_count(seq);
    for (int i = after + 1; i < count; i++) {
        const yaml_node_t *n = mrt_spec_item(p, seq, i);
        const char *out = n && n->type == YAML_MAPPING_NODE
                              ? mrt_spec_str(mrt_spec_get(p, n, "out")) : NULL;
        if (out && !strcmp(out, name))
            return i + 1;
    }
    return 0;
}

/* Input j (node a) of op i. */
static mrt_status op_input(mrt_spec_parser *p, const yaml_node_t *seq, int i,
                           const yaml_node_t *a, int j)
{
    mrt_spec *s = p->spec;
    char q[MRT_SPEC_QUOTE_MAX + 32], list[MRT_SPEC_LIST_MAX];
    const char *name = mrt_spec_str(a);
    if (!name || mrt_spec_is_null(a))
        return mrt_spec_fail(p, a, "expected a tensor name in the inputs of "
                             "op %d, got %s", i + 1,
                             mrt_spec_what(a, q, sizeof q));
    int id = mrt_spec_find_tensor(s, name);
    int later = id < 0 ? later_maker(p, seq, i, name) : 0;
    if (later)
        return mrt_spec_fail(p, a, "op %d reads tensor '%s' before op %d "
                             "makes it", i + 1, name, later);
    if (id < 0)
        return mrt_spec_fail(p, a, "unknown tensor '%s' in the inputs of op "
                             "%d (the tensors so far: %s)",
                             mrt_spec_quote(a, q, sizeof q), i + 1,
                             mrt_spec_join(list, sizeof list, s->tensor[0].name,
                                           sizeof s->tensor[0], s->ntensors));
    s->op[i].in[j] = id;
    s->op[i].in_mark[j] = mrt_spec_mark(a);
    return MRT_OK;
}

static mrt_status op_inputs(mrt_spec_parser *p, const yaml_node_t *seq, int i,
                            const yaml_node_t *n)
{
    char of[64];
    snprintf(of, sizeof of, "the inputs of op %d", i + 1);
    mrt_status st = mrt_spec_expect(p, n, YAML_SEQUENCE_NODE, of);
    if (st)
        return st;
    int count = mrt_spec_count(n);
    if (count < 1 || count > 2)
        return mrt_spec_fail(p, n, "op %d has %d inputs (an einsum takes 1 "
                             "or 2)", i + 1, count);
    p->spec->op[i].nin = count;
    for (int j = 0; !st && j < count; j++)
        st = op_input(p, seq, i, mrt_spec_item(p, n, j), j);
    return st;
}

/* The output tensor of op i, named by n, into t. */
static mrt_status op_output(mrt_spec_parser *p, int i, const yaml_node_t *n,
                            mrt_spec_tensor *t)
{
    const mrt_spec *s = p->spec;
    mrt_status st = mrt_spec_name(p, n, "tensor", t->name);
    if (st)
        return st;
    int old = mrt_spec_find_tensor(s, t->name);
    if (old >= 0)
        return mrt_spec_fail(p, n, "tensor '%s' already exists (defined at "
                             "%d:%d)", t->name, s->tensor[old].mark.line,
                             s->tensor[old].mark.column);
    t->mark = mrt_spec_mark(n);
    t->producer = i;
    t->init = MRT_INIT_NONE;
    return MRT_OK;
}

/* Every dim of op i's output t (shape node sh) comes from an input. */
static mrt_status check_dims_known(mrt_spec_parser *p, int i,
                                   const mrt_spec_tensor *t,
                                   const yaml_node_t *sh)
{
    const mrt_spec *s = p->spec;
    const mrt_spec_op *op = &s->op[i];
    char ins[2][MRT_NAME_MAX + MRT_SPEC_LIST_MAX];
    for (int d = 0; d < t->layout.ndims; d++) {
        int found = 0;
        for (int j = 0; j < op->nin; j++)
            found |= mrt_layout_find_dim(&s->tensor[op->in[j]].layout,
                                         t->layout.dim[d]) >= 0;
        if (found)
            continue;
        for (int j = 0; j < op->nin; j++) {
            const mrt_spec_tensor *in = &s->tensor[op->in[j]];
            char shape[MRT_SPEC_LIST_MAX];
            snprintf(ins[j], sizeof ins[j], "%s: %s", in->name,
                     mrt_spec_shape_str(s, &in->layout, shape, sizeof shape));
        }
        return mrt_spec_fail(p, mrt_spec_item(p, sh, d),
                             "dim '%s' of '%s' is %s (%s%s%s)",
                             s->dim_name[t->layout.dim[d]], t->name,
                             op->nin == 2 ? "in neither input"
                                          : "not in its input",
                             ins[0], op->nin == 2 ? ", " : "",
                             op->nin == 2 ? ins[1] : "");
    }
    return MRT_OK;
}

/* The keys and kind of op i (mapping n). */
static mrt_status op_kind(mrt_spec_parser *p, int i, const yaml_node_t *n)
{
    char of[32], q[MRT_SPEC_QUOTE_MAX + 32];
    snprintf(of, sizeof of, "op %d", i + 1);
    mrt_status st = mrt_spec_expect(p, n, YAML_MAPPING_NODE, of);
    if (!st)
        st = mrt_spec_check_keys(p, n, op_keys, of);
    for (int k = 0; !st && op_required[k]; k++)
        if (!mrt_spec_get(p, n, op_required[k]))
            st = mrt_spec_fail(p, n, "op %d has no '%s' (an op needs: op, "
                               "in, out, shape)", i + 1, op_required[k]);
    if (st)
        return st;
    const yaml_node_t *kind = mrt_spec_get(p, n, "op");
    for (int k = 0; k < MRT_OP_KIND_COUNT; k++)
        if (mrt_spec_str(kind) && !strcmp(mrt_spec_str(kind), op_names[k])) {
            p->spec->op[i].kind = (mrt_op_kind)k;
            p->spec->op[i].mark = mrt_spec_mark(n);
            return MRT_OK;
        }
    return mrt_spec_fail(p, kind, "unknown op %s (known ops: einsum)",
                         mrt_spec_what(kind, q, sizeof q));
}

static mrt_status parse_op(mrt_spec_parser *p, const yaml_node_t *seq, int i,
                           const yaml_node_t *n)
{
    mrt_spec *s = p->spec;
    char of[48];
    s->op[i].expect = (mrt_budget){-1, -1, {0, 0}};
    mrt_status st = op_kind(p, i, n);
    if (!st)
        st = op_inputs(p, seq, i, mrt_spec_get(p, n, "in"));
    if (st)
        return st;
    assert(s->ntensors < p->tensor_cap); /* counted before parsing */
    mrt_spec_tensor *t = &s->tensor[s->ntensors];
    const yaml_node_t *shape = mrt_spec_get(p, n, "shape");
    if ((st = op_output(p, i, mrt_spec_get(p, n, "out"), t)) ||
        (st = mrt_spec_parse_shape(p, shape, t)) ||
        (st = check_dims_known(p, i, t, shape)) ||
        (st = mrt_spec_resolve_layout(p, t,
                                      mrt_spec_get(p, n, "layout"))))
        return st;
    snprintf(of, sizeof of, "the expect of op %d", i + 1);
    if (mrt_spec_get(p, n, "expect") &&
        (st = mrt_spec_parse_budget(p, mrt_spec_get(p, n, "expect"), of,
                                    &s->op[i].expect)))
        return st;
    if (mrt_spec_index_tensor(s, s->ntensors))
        return mrt_spec_nomem(p);
    s->op[i].out = s->ntensors++;
    s->nops++;
    return MRT_OK;
}

mrt_status mrt_spec_parse_ops(mrt_spec_parser *p, const yaml_node_t *seq)
{
    mrt_status st = mrt_spec_expect(p, seq, YAML_SEQUENCE_NODE, "'ops'");
    if (st)
        return st;
    int count = mrt_spec_count(seq);
    if (count == 0)
        return mrt_spec_fail(p, seq, "'ops' is empty (a spec needs at least "
                             "one op)");
    for (int i = 0; !st && i < count; i++)
        st = parse_op(p, seq, i, mrt_spec_item(p, seq, i));
    return st;
}

/* Output j, named by node n. */
static mrt_status output(mrt_spec_parser *p, const yaml_node_t *n, int j)
{
    mrt_spec *s = p->spec;
    char q[MRT_SPEC_QUOTE_MAX + 32], list[MRT_SPEC_LIST_MAX];
    const char *name = mrt_spec_str(n);
    if (!name || mrt_spec_is_null(n))
        return mrt_spec_fail(p, n, "expected a tensor name in 'outputs', "
                             "got %s", mrt_spec_what(n, q, sizeof q));
    int id = mrt_spec_find_tensor(s, name);
    if (id < 0)
        return mrt_spec_fail(p, n, "unknown tensor '%s' in 'outputs' (the "
                             "tensors are: %s)", mrt_spec_quote(n, q, sizeof q),
                             mrt_spec_join(list, sizeof list, s->tensor[0].name,
                                           sizeof s->tensor[0], s->ntensors));
    for (int k = 0; k < j; k++)
        if (s->output[k] == id)
            return mrt_spec_fail(p, n, "tensor '%s' is listed twice in "
                                 "'outputs'", name);
    s->output[j] = id;
    s->noutputs = j + 1;
    return MRT_OK;
}

mrt_status mrt_spec_parse_outputs(mrt_spec_parser *p, const yaml_node_t *seq)
{
    mrt_spec *s = p->spec;
    int count = seq ? mrt_spec_count(seq) : 1;
    mrt_status st = seq ? mrt_spec_expect(p, seq, YAML_SEQUENCE_NODE,
                                          "'outputs'") : MRT_OK;
    if (!st && count == 0)
        st = mrt_spec_fail(p, seq, "'outputs' is empty (name at least one "
                           "tensor, or leave it out for the last op's "
                           "output)");
    if (st)
        return st;
    if (!(s->output = calloc((size_t)count, sizeof *s->output)))
        return mrt_spec_nomem(p);
    if (!seq) {
        s->output[0] = s->op[s->nops - 1].out;
        s->noutputs = 1;
        return MRT_OK;
    }
    for (int j = 0; !st && j < count; j++)
        st = output(p, mrt_spec_item(p, seq, j), j);
    return st;
}
