/*
 * spec_planning.c — the two top-level keys that speak to the planner
 * rather than describe the program: `network:` (what a message costs on
 * each mesh axis, overriding the machine profile's links) and `expect:`
 * (budgets the plan must meet; ops may carry their own).  Read here and
 * handed to the builder (ir/build_planning.c), which checks the axes and
 * the links' ranges.  Budgets left out are -1: no limit.
 */
#include <stdio.h>
#include <string.h>

#include "spec_parse.h"

static const char *const link_keys[] = {"latency_us", "bandwidth_GBps", NULL};
static const char *const budget_keys[] = {"comm_bytes_max", "peak_memory_max",
                                          NULL};

/* One link: key k (an axis), value v, read and handed to the builder. */
static mrt_status parse_link(mrt_spec_parser *p, const yaml_node_t *k,
                             const yaml_node_t *v)
{
    char of[MRT_NAME_MAX + 48], what[MRT_NAME_MAX + 48];
    const char *name = mrt_spec_str(k);
    double latency_us = 0, bandwidth_GBps = 0;
    mrt_ir_link_at at = {.axis_mark = mrt_spec_mark(k)};
    if (!name || mrt_mesh_find_axis(&p->spec->mesh, name) < 0) /* first */
        return mrt_ir_set_link_at(p->ir, name, 0, 0, &at, p->err);
    snprintf(of, sizeof of, "the network of mesh axis '%s'", name);
    mrt_status st = mrt_spec_expect(p, v, YAML_MAPPING_NODE, of);
    if (!st)
        st = mrt_spec_check_keys(p, v, link_keys, of);
    for (int i = 0; !st && link_keys[i]; i++)
        if (!mrt_spec_get(p, v, link_keys[i]))
            st = mrt_spec_fail(p, v,
                               "%s has no '%s' (give latency_us and "
                               "bandwidth_GBps)",
                               of, link_keys[i]);
    if (st)
        return st;
    const yaml_node_t *lat = mrt_spec_get(p, v, "latency_us");
    const yaml_node_t *bw = mrt_spec_get(p, v, "bandwidth_GBps");
    snprintf(what, sizeof what, "the latency_us of mesh axis '%s'", name);
    st = mrt_spec_positive(p, lat, what, &latency_us);
    snprintf(what, sizeof what, "the bandwidth_GBps of mesh axis '%s'", name);
    if (!st)
        st = mrt_spec_positive(p, bw, what, &bandwidth_GBps);
    if (st)
        return st;
    at.latency_mark = mrt_spec_mark(lat); /* numbers, so scalars */
    at.latency_text = (const char *)lat->data.scalar.value;
    at.bandwidth_mark = mrt_spec_mark(bw);
    at.bandwidth_text = (const char *)bw->data.scalar.value;
    return mrt_ir_set_link_at(p->ir, name, latency_us, bandwidth_GBps, &at,
                              p->err);
}

mrt_status mrt_spec_parse_network(mrt_spec_parser *p, const yaml_node_t *map)
{
    return mrt_spec_each_entry(p, map, "'network'", parse_link);
}

mrt_status mrt_spec_parse_budget(mrt_spec_parser *p, const yaml_node_t *map,
                                 const char *of, mrt_ir_budget *b)
{
    char what[96];
    int64_t *field[] = {&b->comm_bytes_max, &b->peak_memory_max};
    b->comm_bytes_max = b->peak_memory_max = -1;
    mrt_status st = mrt_spec_expect(p, map, YAML_MAPPING_NODE, of);
    if (!st)
        st = mrt_spec_check_keys(p, map, budget_keys, of);
    for (int i = 0; !st && budget_keys[i]; i++) {
        const yaml_node_t *v = mrt_spec_get(p, map, budget_keys[i]);
        snprintf(what, sizeof what, "%s in %s", budget_keys[i], of);
        if (v)
            st = mrt_spec_nonneg(p, v, what, field[i]);
    }
    return st;
}

mrt_status mrt_spec_parse_expect(mrt_spec_parser *p, const yaml_node_t *map)
{
    mrt_ir_budget b;
    mrt_status st = mrt_spec_parse_budget(p, map, "'expect'", &b);
    return st ? st
              : mrt_ir_set_expect_at(p->ir, &b, mrt_spec_mark(map), p->err);
}
