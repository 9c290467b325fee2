/*
 * spec_planning.c — the two top-level keys that speak to the planner
 * rather than describe the program: `network:` (what a message costs on
 * each mesh axis, overriding the machine profile's links) and `expect:`
 * (budgets the plan must meet; ops may carry their own).
 *
 * Network links are kept by axis name, as the profile keeps them, so a
 * spec derived on another mesh (a `layouts:` alternative) still finds
 * them, and obey a profile's limits (profile.h), so that no modeled time
 * is infinite.  Budgets left out are -1: no limit.
 */
#include <stdio.h>
#include <string.h>

#include "profile.h"
#include "spec_parse.h"

static const char *const link_keys[] = {"latency_us", "bandwidth_GBps", NULL};
static const char *const budget_keys[] = {"comm_bytes_max", "peak_memory_max",
                                          NULL};

/* One link: key k (an axis of the spec's mesh), value v. */
static mrt_status parse_link(mrt_spec_parser *p, const yaml_node_t *k,
                             const yaml_node_t *v)
{
    mrt_spec *s = p->spec;
    char q[MRT_SPEC_QUOTE_MAX + 8], list[MRT_SPEC_LIST_MAX];
    char of[MRT_NAME_MAX + 48], what[MRT_NAME_MAX + 48];
    const char *name = mrt_spec_str(k);
    double latency_us = 0, bandwidth_GBps = 0;
    if (!name || mrt_mesh_find_axis(&s->mesh, name) < 0)
        return mrt_spec_fail(p, k, "unknown mesh axis '%s' in 'network' "
                             "(%s has: %s)", mrt_spec_quote(k, q, sizeof q),
                             p->mesh_overridden ? "the mesh given by --mesh"
                                                : "the mesh",
                             mrt_spec_join(list, sizeof list, s->mesh.name[0],
                                           sizeof s->mesh.name[0],
                                           s->mesh.naxes));
    snprintf(of, sizeof of, "the network of mesh axis '%s'", name);
    mrt_status st = mrt_spec_expect(p, v, YAML_MAPPING_NODE, of);
    if (!st)
        st = mrt_spec_check_keys(p, v, link_keys, of);
    for (int i = 0; !st && link_keys[i]; i++)
        if (!mrt_spec_get(p, v, link_keys[i]))
            st = mrt_spec_fail(p, v, "%s has no '%s' (give latency_us and "
                               "bandwidth_GBps)", of, link_keys[i]);
    if (st)
        return st;
    const yaml_node_t *lat = mrt_spec_get(p, v, "latency_us");
    const yaml_node_t *bw = mrt_spec_get(p, v, "bandwidth_GBps");
    snprintf(what, sizeof what, "the latency_us of mesh axis '%s'", name);
    st = mrt_spec_positive(p, lat, what, &latency_us);
    if (!st && latency_us > MRT_PROFILE_LATENCY_US_MAX)
        st = mrt_spec_fail(p, lat, "%s is too large: %s (at most %g "
                           "microseconds, as in a machine profile)", what,
                           mrt_spec_quote(lat, q, sizeof q),
                           MRT_PROFILE_LATENCY_US_MAX);
    snprintf(what, sizeof what, "the bandwidth_GBps of mesh axis '%s'", name);
    if (!st)
        st = mrt_spec_positive(p, bw, what, &bandwidth_GBps);
    if (!st && (bandwidth_GBps < MRT_PROFILE_RATE_MIN ||
                bandwidth_GBps > MRT_PROFILE_RATE_MAX))
        st = mrt_spec_fail(p, bw, "%s is out of range: %s (it must be from "
                           "%g to %g GB/s, as in a machine profile)", what,
                           mrt_spec_quote(bw, q, sizeof q),
                           MRT_PROFILE_RATE_MIN, MRT_PROFILE_RATE_MAX);
    if (st)
        return st;
    /* Axes are distinct mesh axes (keys were checked), so nnet <= naxes. */
    int i = s->nnet++;
    snprintf(s->net_axis[i], sizeof s->net_axis[i], "%s", name);
    s->net_latency_s[i] = latency_us * 1e-6;
    s->net_bandwidth_Bps[i] = bandwidth_GBps * 1e9;
    s->net_mark[i] = mrt_spec_mark(k);
    return MRT_OK;
}

mrt_status mrt_spec_parse_network(mrt_spec_parser *p, const yaml_node_t *map)
{
    mrt_status st = mrt_spec_expect(p, map, YAML_MAPPING_NODE, "'network'");
    if (!st)
        st = mrt_spec_check_keys(p, map, NULL, "'network'");
    for (yaml_node_pair_t *pr = st ? NULL : map->data.mapping.pairs.start;
         !st && pr < map->data.mapping.pairs.top; pr++)
        st = parse_link(p, mrt_spec_node(p, pr->key),
                        mrt_spec_node(p, pr->value));
    return st;
}

mrt_status mrt_spec_parse_budget(mrt_spec_parser *p, const yaml_node_t *map,
                                 const char *of, mrt_budget *b)
{
    char what[96];
    int64_t *field[] = {&b->comm_bytes_max, &b->peak_memory_max};
    b->comm_bytes_max = b->peak_memory_max = -1;
    b->mark = mrt_spec_mark(map);
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
