/*
 * spec_precision.c — the top-level `precision:` key: a mapping of the
 * kinds params, compute, grads and optimizer to a floating type, each
 * optional (the spec's dtype by default).  The builder checks the types
 * (ir/build_precision.c), so YAML and C get the same errors.
 */
#include "spec_parse.h"

static const char *const precision_keys[] = {"params", "compute", "grads",
                                             "optimizer", NULL};

mrt_status mrt_spec_parse_precision(mrt_spec_parser *p, const yaml_node_t *map)
{
    char q[MRT_SPEC_QUOTE_MAX + 32];
    const char *type[MRT_PRECISION_KINDS] = {NULL};
    mrt_mark mark[MRT_PRECISION_KINDS] = {{0, 0}};
    mrt_status st = mrt_spec_expect(p, map, YAML_MAPPING_NODE, "'precision'");
    if (!st)
        st = mrt_spec_check_keys(p, map, precision_keys, "'precision'");
    for (int k = 0; !st && k < MRT_PRECISION_KINDS; k++) {
        const yaml_node_t *v = mrt_spec_get(p, map, precision_keys[k]);
        if (!v)
            continue;
        if (!mrt_spec_str(v) || mrt_spec_is_null(v))
            return mrt_spec_fail(p, v,
                                 "expected a type (float32, float64, "
                                 "bfloat16, float16) for precision %s, got %s",
                                 precision_keys[k],
                                 mrt_spec_what(v, q, sizeof q));
        type[k] = mrt_spec_str(v);
        mark[k] = mrt_spec_mark(v);
    }
    return st ? st
              : mrt_ir_set_precision_at(p->ir, type, mark, mrt_spec_mark(map),
                                        p->err);
}
