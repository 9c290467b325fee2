/*
 * build_planning.c — what a program says to the planner rather than
 * what it computes (meshrt.h, "building a program in code"): budgets
 * its plans must meet (mrt_ir_set_expect; an op's own through
 * mrt_ir_op.expect) and the links of its mesh axes, in place of the
 * machine profile's (mrt_ir_set_link).  The YAML front end calls the
 * `_at` forms for `expect:` and `network:`.
 *
 * Links are kept by axis name, as the profile keeps them, so a spec
 * derived on another mesh (a `layouts:` alternative) still finds them,
 * and obey a profile's limits (profile.h), so no modeled time is
 * infinite.
 */
#include <stdio.h>
#include <string.h>

#include "build.h"
#include "profile.h"

mrt_status mrt_ir_budget_check(mrt_ir_call *c, const mrt_ir_budget *b,
                               mrt_mark at, mrt_budget *out)
{
    *out = (mrt_budget){-1, -1, at};
    if (!b)
        return MRT_OK;
    if (b->comm_bytes_max < -1 || b->peak_memory_max < -1)
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "a budget is -1 (no limit) or a "
                           "number of bytes, got %lld and %lld",
                           (long long)b->comm_bytes_max,
                           (long long)b->peak_memory_max);
    out->comm_bytes_max = b->comm_bytes_max;
    out->peak_memory_max = b->peak_memory_max;
    return MRT_OK;
}

mrt_status mrt_ir_set_expect_at(mrt_ir *ir, const mrt_ir_budget *b, mrt_mark at,
                                mrt_error *err)
{
    mrt_ir_call c;
    mrt_budget out;
    mrt_status st = mrt_ir_begin(&c, ir, "mrt_ir_set_expect");
    c.entry = at;
    c.arg = "b";
    if (!st && !b)
        st = mrt_ir_fail(&c, MRT_E_USAGE, "NULL");
    if (!st && !(st = mrt_ir_budget_check(&c, b, at, &out)))
        ir->s->expect = out;
    return mrt_ir_end(&c, st, err);
}

mrt_status mrt_ir_set_expect(mrt_ir *ir, const mrt_ir_budget *b, mrt_error *err)
{
    return mrt_ir_set_expect_at(ir, b, (mrt_mark){0, 0}, err);
}

/* The axis of a link: one of the mesh's, not given a link yet. */
static mrt_status link_axis(mrt_ir_call *c, const char *axis,
                            const mrt_ir_link_at *at)
{
    const mrt_spec *s = c->ir->s;
    const mrt_mesh *m = &s->mesh;
    char q[MRT_SPEC_QUOTE_MAX + 8], list[MRT_SPEC_LIST_MAX];
    mrt_ir_at(c, "axis", &at->axis_mark);
    if (!axis)
        return mrt_ir_fail(c, MRT_E_USAGE, "NULL");
    if (mrt_mesh_find_axis(m, axis) < 0)
        return mrt_ir_fail(c, MRT_E_SPEC,
                           "unknown mesh axis '%s' in "
                           "'network' (%s has: %s)",
                           mrt_ir_quote(axis, q, sizeof q),
                           c->ir->mesh_what ? c->ir->mesh_what : "the mesh",
                           mrt_spec_join(list, sizeof list, m->name[0],
                                         sizeof m->name[0], m->naxes));
    for (int i = 0; i < s->nnet; i++)
        if (!strcmp(s->net_axis[i], axis))
            return mrt_ir_fail(c, MRT_E_SPEC,
                               "mesh axis '%s' has a link "
                               "already",
                               axis);
    return MRT_OK;
}

mrt_status mrt_ir_set_link_at(mrt_ir *ir, const char *axis, double latency_us,
                              double bandwidth_GBps, const mrt_ir_link_at *at,
                              mrt_error *err)
{
    static const mrt_ir_link_at none;
    mrt_ir_call c;
    char q[MRT_SPEC_QUOTE_MAX + 8], num[32];
    mrt_status st = mrt_ir_begin(&c, ir, "mrt_ir_set_link");
    if (!at)
        at = &none;
    c.entry = at->axis_mark;
    if (!st)
        st = link_axis(&c, axis, at);
    mrt_ir_at(&c, "latency_us", &at->latency_mark);
    snprintf(num, sizeof num, "%g", latency_us);
    if (!st && !(latency_us > 0)) /* (a file's is, or it fails to parse) */
        st = mrt_ir_fail(&c, MRT_E_SPEC,
                         "the latency_us of mesh axis '%s' "
                         "must be a positive number, got %s",
                         axis, num);
    if (!st && latency_us > MRT_PROFILE_LATENCY_US_MAX)
        st = mrt_ir_fail(&c, MRT_E_SPEC,
                         "the latency_us of mesh axis '%s' "
                         "is too large: %s (at most %g microseconds, as in a "
                         "machine profile)",
                         axis,
                         mrt_ir_quote(at->latency_text ? at->latency_text : num,
                                      q, sizeof q),
                         MRT_PROFILE_LATENCY_US_MAX);
    mrt_ir_at(&c, "bandwidth_GBps", &at->bandwidth_mark);
    snprintf(num, sizeof num, "%g", bandwidth_GBps);
    if (!st && !(bandwidth_GBps >= MRT_PROFILE_RATE_MIN &&
                 bandwidth_GBps <= MRT_PROFILE_RATE_MAX))
        st = mrt_ir_fail(
            &c, MRT_E_SPEC,
            "the bandwidth_GBps of mesh axis "
            "'%s' is out of range: %s (it must be from %g to %g "
            "GB/s, as in a machine profile)",
            axis,
            mrt_ir_quote(at->bandwidth_text ? at->bandwidth_text : num, q,
                         sizeof q),
            MRT_PROFILE_RATE_MIN, MRT_PROFILE_RATE_MAX);
    if (!st) { /* distinct mesh axes: nnet < MRT_MAX_AXES */
        mrt_spec *s = ir->s;
        int i = s->nnet++;
        snprintf(s->net_axis[i], sizeof s->net_axis[i], "%s", axis);
        s->net_latency_s[i] = latency_us * 1e-6;
        s->net_bandwidth_Bps[i] = bandwidth_GBps * 1e9;
        s->net_mark[i] = at->axis_mark;
    }
    return mrt_ir_end(&c, st, err);
}

mrt_status mrt_ir_set_link(mrt_ir *ir, const char *axis, double latency_us,
                           double bandwidth_GBps, mrt_error *err)
{
    return mrt_ir_set_link_at(ir, axis, latency_us, bandwidth_GBps, NULL, err);
}
