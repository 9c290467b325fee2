/*
 * spec_blocks.c — a repeated block, a `repeat:` item of `ops:`:
 *
 *   - repeat: layers        # a dim: one instance per index 0 .. N-1
 *     name: h               # instance i's tensors: h<i>.<inner name>
 *     in: {x: h_in}         # inner x is h_in in instance 0 ...
 *     carry: {x: r2}        # ... and instance i-1's r2 after that
 *     out: {h_out: r2}      # after the block, h_out is the last's r2
 *     tensors: {...}        # each instance's inputs, as `tensors:`
 *     ops: [...]            # each instance's ops, as `ops:`
 *     recompute: true       # its activations re-made in the backward
 *                           # pass, not kept (ir/recompute.c)
 *     regather: true        # what the forward pass gathered, gathered
 *                           # again in the backward pass
 *
 * read here and handed to the builder's block calls (ir/build_block.c),
 * which check the names and rename each instance's tensors and ops:
 * the loader reads the block's `tensors:` and `ops:` once per instance,
 * each entry with the ordinary readers (spec_tensors.c, spec_ops.c),
 * and every error points at the node it is about.
 */
#include <stdio.h>
#include <string.h>

#include "spec_parse.h"

static const char *const block_keys[] = {
    "repeat",  "name", "in",        "carry",    "out",
    "tensors", "ops",  "recompute", "regather", NULL};

int mrt_spec_is_repeat(const mrt_spec_parser *p, const yaml_node_t *n)
{
    if (!n || n->type != YAML_MAPPING_NODE)
        return 0;
    for (const yaml_node_pair_t *pr = n->data.mapping.pairs.start;
         pr < n->data.mapping.pairs.top; pr++) {
        const char *k = mrt_spec_str(mrt_spec_node(p, pr->key));
        if (k && !strcmp(k, "repeat"))
            return 1;
    }
    return 0;
}

/* The `in:`, `carry:` or `out:` mapping v (kind) of block `name`. */
static mrt_status read_links(mrt_spec_parser *p, const yaml_node_t *v,
                             mrt_ir_link_kind kind, const char *name)
{
    static const char *const key[] = {"in", "carry", "out"};
    char of[MRT_NAME_MAX + 32], a[MRT_NAME_MAX], b[MRT_NAME_MAX];
    snprintf(of, sizeof of, "'%s' of block '%s'", key[kind], name);
    mrt_status st = mrt_spec_expect(p, v, YAML_MAPPING_NODE, of);
    if (!st)
        st = mrt_spec_check_keys(p, v, NULL, of);
    for (yaml_node_pair_t *pr = st ? NULL : v->data.mapping.pairs.start;
         !st && pr < v->data.mapping.pairs.top; pr++) {
        const yaml_node_t *k = mrt_spec_node(p, pr->key);
        const yaml_node_t *x = mrt_spec_node(p, pr->value);
        mrt_mark at[2] = {mrt_spec_mark(k), mrt_spec_mark(x)};
        if (!(st = mrt_spec_name(p, k, "tensor", a)) &&
            !(st = mrt_spec_name(p, x, "tensor", b)))
            st = mrt_ir_block_link_at(p->ir, kind, a, b, at, p->err);
    }
    return st;
}

/* The block's name, dim and links (n has its keys checked). */
static mrt_status read_head(mrt_spec_parser *p, const yaml_node_t *n,
                            char name[MRT_NAME_MAX])
{
    static const char *const links[] = {"in", "carry", "out"};
    const yaml_node_t *nm = mrt_spec_get(p, n, "name");
    const yaml_node_t *dim = mrt_spec_get(p, n, "repeat");
    char q[MRT_SPEC_QUOTE_MAX + 32];
    if (!nm)
        return mrt_spec_fail(p, n,
                             "a block (repeat:) needs 'name' (its tensors "
                             "are named <name><i>.<inner name>)");
    mrt_status st = mrt_spec_name(p, nm, "block", name);
    if (st)
        return st;
    const char *d = mrt_spec_is_null(dim) ? NULL : mrt_spec_str(dim);
    if (!d || dim->type != YAML_SCALAR_NODE)
        return mrt_spec_fail(p, dim,
                             "expected a dim name for 'repeat' of block "
                             "'%s', got %s",
                             name, mrt_spec_what(dim, q, sizeof q));
    mrt_mark at[3] = {mrt_spec_mark(n), mrt_spec_mark(nm), mrt_spec_mark(dim)};
    if ((st = mrt_ir_block_begin_at(p->ir, name, d, at, p->err)))
        return st;
    const yaml_node_t *rc = mrt_spec_get(p, n, "recompute");
    int on = rc ? mrt_spec_plain_bool(rc) : 0;
    mrt_mark rc_at = rc ? mrt_spec_mark(rc) : (mrt_mark){0, 0};
    if (on < 0)
        return mrt_spec_fail(p, rc,
                             "recompute of block '%s' must be true or "
                             "false, got %s",
                             name, mrt_spec_what(rc, q, sizeof q));
    if (on && (st = mrt_ir_block_recompute_at(p->ir, 1, &rc_at, p->err)))
        return st;
    const yaml_node_t *rg = mrt_spec_get(p, n, "regather");
    if (rg && (on = mrt_spec_plain_bool(rg)) < 0)
        return mrt_spec_fail(p, rg,
                             "regather of block '%s' must be true or "
                             "false, got %s",
                             name, mrt_spec_what(rg, q, sizeof q));
    if (rg && on && (st = mrt_ir_block_regather_at(p->ir, 1, p->err)))
        return st;
    for (int k = 0; !st && k < 3; k++) {
        const yaml_node_t *v = mrt_spec_get(p, n, links[k]);
        if (v)
            st = read_links(p, v, (mrt_ir_link_kind)k, name);
    }
    return st;
}

/* One instance: the block's tensors, then its ops. */
static mrt_status read_instance(mrt_spec_parser *p, const yaml_node_t *n,
                                const char *name)
{
    char of[MRT_NAME_MAX + 32];
    const yaml_node_t *tensors = mrt_spec_get(p, n, "tensors");
    const yaml_node_t *ops = mrt_spec_get(p, n, "ops");
    mrt_status st = MRT_OK;
    snprintf(of, sizeof of, "'tensors' of block '%s'", name);
    if (tensors)
        st = mrt_spec_each_entry(p, tensors, of, mrt_spec_parse_tensor);
    int count = mrt_spec_count(ops);
    for (int i = 0; !st && i < count; i++) {
        const yaml_node_t *op = mrt_spec_item(p, ops, i);
        if (mrt_spec_is_repeat(p, op))
            return mrt_spec_fail(p, op,
                                 "a block inside block '%s' (repeat: does "
                                 "not nest)",
                                 name);
        st = mrt_spec_parse_op(p, ops, i, op);
    }
    return st;
}

mrt_status mrt_spec_parse_repeat(mrt_spec_parser *p, const yaml_node_t *n)
{
    char name[MRT_NAME_MAX] = "", of[MRT_NAME_MAX + 32];
    mrt_status st = mrt_spec_check_keys(p, n, block_keys, "a block (repeat:)");
    if (!st)
        st = read_head(p, n, name);
    const yaml_node_t *ops = st ? NULL : mrt_spec_get(p, n, "ops");
    snprintf(of, sizeof of, "'ops' of block '%s'", name);
    if (!st && !ops)
        st = mrt_spec_fail(p, n, "block '%s' has no 'ops'", name);
    if (!st)
        st = mrt_spec_expect(p, ops, YAML_SEQUENCE_NODE, of);
    if (!st && mrt_spec_count(ops) == 0)
        st = mrt_spec_fail(p, ops, "block '%s' has no op", name);
    for (int i = 0; !st && mrt_ir_block_next(p->ir, p->err) >= 0; i++)
        st = read_instance(p, n, name);
    if (!st && !p->ir->error.code)
        st = mrt_ir_block_end(p->ir, p->err);
    return st ? st : p->ir->error.code;
}
