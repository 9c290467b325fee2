/*
 * plan_json.c — the plan as one JSON object, for scripts and tests.
 *
 * { "spec", "mesh": {axis: size}, "ranks", "dtype",
 *   "inputs": [{"name", "layout", "shard"}],
 *   "ops": [{"out", "layout", "kernel": {"M","N","K","batch"}, "flops",
 *            "comm_bytes", "collectives": [{"kind", "tensor", "dtype", "axes",
 *            "group", "bytes", "bytes_total"}], "steps": [...]}],
 *   "totals": {"comm_bytes", "comm_bytes_total", "flops", "collectives"},
 *   "blocks": [{"name", "count", "recompute", "rerun_flops",
 *               "activations": {...}}] (with train: and blocks) }
 * and, on a profile with nodes, per collective "tier", "hierarchical" and
 * "bytes_inter", and in the totals "ranks_per_node", "comm_bytes_intra",
 * "comm_bytes_inter" and "axis_tiers".
 * Byte counts are per rank: what each rank hands to MPI (with uneven
 * shards, the largest rank's); the `_total` ones are summed over ranks.  Every
 * non-integer figure goes through mrt_json_num (null if not finite).
 */
#include <inttypes.h>
#include <stdio.h>

#include "output.h"
#include "memory.h"
#include "plan.h"
#include "schedule.h"

static void json_layout(const mrt_plan *p, const mrt_layout *l, FILE *f)
{
    char buf[512];
    mrt_json_string(f,
                    mrt_layout_str(l, &p->mesh, p->dim_names, buf, sizeof buf));
}

static void json_shard(const mrt_value *v, FILE *f)
{
    fputc('[', f);
    for (int i = 0; i < v->layout.ndims; i++)
        fprintf(f, "%s%" PRId64, i ? ", " : "", v->local[i]);
    fputc(']', f);
}

static void json_axes(const mrt_plan *p, unsigned mask, FILE *f)
{
    fputc('[', f);
    int n = 0;
    for (int a = 0; a < p->mesh.naxes; a++)
        if (mask & (1u << a)) {
            fputs(n++ ? ", " : "", f);
            mrt_json_string(f, p->mesh.name[a]);
        }
    fputc(']', f);
}

static void json_step(const mrt_plan *p, const mrt_step *s, FILE *f)
{
    fprintf(f, "{\"kind\": \"%s\", ", mrt_step_kind_name(s->kind));
    if (s->kind == MRT_STEP_MAP)
        fprintf(f, "\"fn\": \"%s\", ", mrt_map_name(s->fn));
    if (s->kind == MRT_STEP_ALLREDUCE)
        fprintf(f, "\"op\": \"%s\", ", s->max ? "max" : "sum");
    fputs("\"tensor\": ", f);
    mrt_json_string(f, p->tensor_name[p->value[s->in].tensor]);
    fprintf(f, ", \"dtype\": \"%s\"", /* the type it reads (moves) */
            mrt_dtype_name(p->value[s->in].dtype));
    fputs(", \"axes\": ", f);
    json_axes(p, s->axes, f);
    fprintf(f,
            ", \"group\": %" PRId64 ", \"bytes\": %" PRId64
            ", \"bytes_total\": %" PRId64
            ", \"wire_bytes\": %s, \"messages\": %" PRId64 ", \"time_s\": %s, ",
            s->group, s->bytes, s->bytes_total,
            MRT_JSON_NUM("%.17g", s->cost.wire_bytes), s->cost.messages,
            MRT_JSON_NUM("%.6g", s->time_s));
    if (mrt_step_is_collective(s->kind))
        fprintf(f, "\"background_until\": %d, ", s->wait);
    if (p->pipe.stages > 1)
        fprintf(f, "\"stage\": %d, ", s->stage);
    if (s->kind == MRT_STEP_SENDRECV)
        fprintf(f, "\"from_stage\": %d, ", s->from_stage);
    if (mrt_step_is_collective(s->kind) && p->profile.ranks_per_node > 0)
        fprintf(
            f,
            "\"tier\": \"%s\", \"hierarchical\": %s, \"bytes_inter\": "
            "%" PRId64 ", ",
            mrt_tier_name(mrt_cost_span(&p->profile, &p->mesh, s->axes).tier),
            s->hier ? "true" : "false", s->bytes_inter);
    fputs("\"from\": ", f);
    json_layout(p, &p->value[s->in].layout, f);
    fputs(", \"to\": ", f);
    json_layout(p, &p->value[s->out].layout, f);
    fputc('}', f);
}

static void json_op(const mrt_plan *p, int i, FILE *f)
{
    const mrt_plan_op *o = &p->op[i];
    const mrt_value *res = &p->value[o->out_value];
    static const char *const phase[] = {"forward", "backward", "update"};
    fputs("    {\"out\": ", f);
    mrt_json_string(f, p->tensor_name[res->tensor]);
    fprintf(f, ", \"op\": \"%s\", \"phase\": \"%s\", \"spec_op\": %d", o->what,
            phase[o->phase], o->user);
    if (p->pipe.stages > 1) /* its pipeline stage and virtual stage */
        fprintf(f, ", \"stage\": %d, \"chunk\": %d", o->stage, o->chunk);
    fputs(", \"layout\": ", f);
    json_layout(p, &res->layout, f);
    fputs(", \"shard\": ", f);
    json_shard(res, f);
    for (int k = o->first_step; k < o->first_step + o->nsteps; k++) {
        const mrt_step *s = &p->step[k];
        if (s->kind != MRT_STEP_EINSUM)
            continue;
        fprintf(f,
                ", \"kernel\": {\"M\": %" PRId64 ", \"N\": %" PRId64
                ", \"K\": %" PRId64 ", \"batch\": %" PRId64 "}",
                s->cls.size[MRT_IDX_M], s->cls.size[MRT_IDX_N],
                s->cls.size[MRT_IDX_K], s->cls.size[MRT_IDX_BATCH]);
    }
    fprintf(f,
            ", \"flops\": %s, \"comm_bytes\": %" PRId64
            ", \"time_s\": %s, \"comm_time_s\": %s",
            MRT_JSON_NUM("%.17g", o->flops), o->comm_bytes,
            MRT_JSON_NUM("%.6g", o->time_s),
            MRT_JSON_NUM("%.6g", o->comm_time_s));
    if (o->lower_bound_bytes >= 0)
        fprintf(f, ", \"lower_bound_bytes\": %s, \"inputs_replicated\": %s",
                MRT_JSON_NUM("%.17g", o->lower_bound_bytes),
                o->bound_replicated ? "true" : "false");
    fputs(",\n     \"collectives\": [", f);
    int n = 0;
    for (int k = o->first_step; k < o->first_step + o->nsteps; k++)
        if (mrt_step_is_collective(p->step[k].kind)) {
            fputs(n++ ? ",\n       " : "\n       ", f);
            json_step(p, &p->step[k], f);
        }
    fputs("],\n     \"steps\": [", f);
    for (int k = o->first_step; k < o->first_step + o->nsteps; k++) {
        fputs(k > o->first_step ? ",\n       " : "\n       ", f);
        json_step(p, &p->step[k], f);
    }
    fputs("]}", f);
}

/* On a profile with nodes, after comm_bytes_by_axis's entries: the bytes
 * per tier and each axis's tier (inside the totals). */
static void json_tiers(const mrt_plan *p, FILE *f)
{
    if (p->profile.ranks_per_node <= 0)
        return;
    int64_t inter = mrt_plan_bytes_inter(p);
    fprintf(f,
            "}, \"ranks_per_node\": %lld, \"comm_bytes_intra\": %" PRId64
            ", \"comm_bytes_inter\": %" PRId64 ", \"axis_tiers\": {",
            (long long)p->profile.ranks_per_node, p->totals.comm_bytes - inter,
            inter);
    for (int a = 0; a < p->mesh.naxes; a++) {
        fputs(a ? ", " : "", f);
        mrt_json_string(f, p->mesh.name[a]);
        fprintf(
            f, ": \"%s\"",
            mrt_tier_name(mrt_cost_span(&p->profile, &p->mesh, 1u << a).tier));
    }
}

void mrt_plan_print_json(const mrt_plan *p, FILE *f)
{
    if (!p || !f)
        return;
    fputs("{\"spec\": ", f);
    mrt_json_string(f, p->spec_path);
    fputs(", \"mesh\": {", f);
    for (int a = 0; a < p->mesh.naxes; a++) {
        fputs(a ? ", " : "", f);
        mrt_json_string(f, p->mesh.name[a]);
        fprintf(f, ": %" PRId64, p->mesh.size[a]);
    }
    fprintf(f,
            "}, \"ranks\": %" PRId64 ", \"dtype\": \"%s\", \"planner\": \"%s\""
            ", \"profile\": ",
            p->mesh.nranks, mrt_dtype_name(p->dtype),
            mrt_planner_name(p->planner));
    mrt_json_string(f, p->profile.source);
    fputs(", \"ignored_layouts\": ", f);
    mrt_json_string(f, p->ignored);
    fputs(",\n \"inputs\": [", f);
    for (int i = 0; i < p->ninputs; i++) {
        int t = p->input[i];
        const mrt_value *v = &p->value[p->tensor_value[t]];
        fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", f);
        mrt_json_string(f, p->tensor_name[t]);
        fputs(", \"layout\": ", f);
        json_layout(p, &v->layout, f);
        fputs(", \"shard\": ", f);
        json_shard(v, f);
        fputc('}', f);
    }
    fputs("],\n \"ops\": [\n", f);
    int64_t ncoll = 0;
    for (int i = 0; i < p->nops; i++) {
        json_op(p, i, f);
        fputs(i + 1 < p->nops ? ",\n" : "\n", f);
    }
    for (int k = 0; k < p->nsteps; k++)
        ncoll += mrt_step_is_collective(p->step[k].kind);
    const mrt_plan_totals *t = &p->totals;
    fprintf(f,
            " ],\n \"totals\": {\"comm_bytes\": %" PRId64
            ", \"comm_bytes_total\": %" PRId64
            ", \"flops\": %s, \"collectives\": %" PRId64
            ", \"wire_bytes\": %s, \"messages\": %" PRId64
            ", \"time_s\": %s, \"comm_time_s\": %s"
            ", \"compute_time_s\": %s, \"peak_memory\": %" PRId64
            ",\n   \"comm_bytes_by_axis\": {",
            t->comm_bytes, t->comm_bytes_total, MRT_JSON_NUM("%.17g", t->flops),
            ncoll, MRT_JSON_NUM("%.17g", t->wire_bytes), t->messages,
            MRT_JSON_NUM("%.6g", t->time_s),
            MRT_JSON_NUM("%.6g", t->comm_time_s),
            MRT_JSON_NUM("%.6g", t->compute_time_s), t->peak_memory);
    int n = 0;
    char axes[256];
    for (unsigned m = 1; m < (1u << p->mesh.naxes); m++)
        if (p->axis_bytes[m]) {
            fputs(n++ ? ", " : "", f);
            mrt_json_string(f,
                            mrt_mesh_axes_str(&p->mesh, m, axes, sizeof axes));
            fprintf(f, ": %" PRId64, p->axis_bytes[m]);
        }
    json_tiers(p, f);
    static const char *const phase[] = {"forward", "backward", "update"};
    fputs("},\n   \"phases\": {", f);
    for (int ph = 0; ph < 3; ph++)
        fprintf(f,
                "%s\"%s\": {\"comm_bytes\": %" PRId64
                ", \"wire_bytes\": %s, \"collectives\": %" PRId64
                ", \"time_s\": %s}",
                ph ? ", " : "", phase[ph], t->phase_comm_bytes[ph],
                MRT_JSON_NUM("%.17g", t->phase_wire_bytes[ph]),
                t->phase_collectives[ph],
                MRT_JSON_NUM("%.6g", t->phase_time_s[ph]));
    fputs("}},\n \"memory\": ", f);
    mrt_memory_print_json(p, f);
    mrt_plan_blocks_json(p, f);
    mrt_schedule_print_json(p, f);
    fputs("}\n", f);
}
