/*
 * cmd_search.c — `meshrt search SPEC`: the best global layout rules for
 * the program (mrt_search_rules_create does the search), printed as the K
 * fastest under the memory cap, the time-versus-memory Pareto front, the
 * counts and the time it took, and the winner as a `layout:` block to
 * paste into the spec.  --json FILE writes the same, atomically.
 * Exit status: 0 when some layout fits, 1 when none fits the memory cap,
 * 2 for bad input.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef struct search_out {
    const mrt_cli_args *a;
    const mrt_spec *spec;
    mrt_spec_info info;
    const mrt_search_rules_report *r;
} search_out;

static void print_mesh(const mrt_mesh_info *m, FILE *f)
{
    fputc('{', f);
    for (int i = 0; i < m->naxes; i++)
        fprintf(f, "%s%s: %" PRId64, i ? ", " : "", m->name[i], m->size[i]);
    fprintf(f, "} (%" PRId64 " rank%s)", m->nranks, m->nranks == 1 ? "" : "s");
}

static void print_results(const search_out *o, const mrt_search_rules_item *res,
                          int n, int numbered, FILE *f)
{
    char t[4][32], b[2][32], rules[2048];
    fprintf(f, "  %s%-10s %-10s %-10s %11s %11s  %s\n", numbered ? " # " : "",
            "time", "comm", "compute", "to MPI", "peak mem", "rules");
    for (int i = 0; i < n; i++) {
        const mrt_plan_totals *x = &res[i].totals;
        if (numbered)
            fprintf(f, "  %2d ", i + 1);
        else
            fputs("  ", f);
        fprintf(
            f, "%-10s %-10s %-10s %11s %11s  %s",
            mrt_cli_fmt_time(x->time_s, t[0], sizeof t[0]),
            mrt_cli_fmt_time(x->comm_time_s, t[1], sizeof t[1]),
            mrt_cli_fmt_time(x->compute_time_s, t[2], sizeof t[2]),
            mrt_cli_fmt_bytes((double)x->comm_bytes, b[0], sizeof b[0]),
            mrt_cli_fmt_bytes((double)x->peak_memory, b[1], sizeof b[1]),
            mrt_search_format_rules(o->spec, res[i].rule, rules, sizeof rules));
        if (res[i].orders)
            fprintf(f, "  (and %d other order%s of the same axes)",
                    res[i].orders, res[i].orders == 1 ? "" : "s");
        fputc('\n', f);
    }
}

static void print_counts(const search_out *o, FILE *f)
{
    const mrt_search_rules_report *r = o->r;
    const char *planner = mrt_planner_name(o->a->plan.planner);
    fprintf(f,
            "%" PRId64 " candidate%s: %" PRId64 " pruned by the time "
            "bound, %" PRId64 " by the memory bound, ",
            r->enumerated, r->enumerated == 1 ? "" : "s", r->pruned_time,
            r->pruned_memory);
    if (r->screened)
        fprintf(f, "%" PRId64 " left out by the screen, ", r->not_replanned);
    fprintf(f,
            "%" PRId64 " planned with the %s planner (%" PRId64
            " over the memory cap, %" PRId64 " invalid)\n",
            r->planned, planner, r->over_memory, r->invalid);
    fprintf(f,
            "searched in %.3f s (enumerating and bounding %.3f s, "
            "planning %.3f s)",
            r->elapsed_seconds, r->bound_seconds, r->plan_seconds);
    if (r->screened)
        fprintf(f,
                "\nscreened%s: all %" PRId64 " candidates were first "
                "planned with the fixed rule (one lowering per op;\nthe "
                "auto planner never does worse), and only the %d best of "
                "that screen and the %d lowest time\nbounds were planned "
                "with the auto planner: the lists below are the best of "
                "those, not\nnecessarily of all (--no-screen plans every "
                "candidate the bounds keep)\n",
                o->a->screen > 0 ? " (--screen)"
                                 : " (planning them all would be slow)",
                r->screen_plans, r->replan_each, r->replan_each);
    else
        fprintf(f,
                "; every candidate the bounds keep was planned with the "
                "%s planner, none screened by a cheaper one\n",
                planner);
    char line[MRT_CLI_ERROR_MAX];
    if (r->invalid)
        fprintf(f, "first invalid candidate: %s\n",
                mrt_cli_error_line(&r->first_error, line, sizeof line));
}

static void print_report(FILE *f, const void *ctx)
{
    const search_out *o = ctx;
    const mrt_spec *s = o->spec;
    const mrt_search_rules_report *r = o->r;
    char buf[64], b2[64];
    fprintf(f, "search %s on mesh ", o->info.path);
    print_mesh(&o->info.mesh, f);
    fprintf(f,
            ", %s\nplanner %s; costs modeled with the %s profile; "
            "figures per rank\n",
            mrt_dtype_name(o->info.dtype), mrt_planner_name(o->a->plan.planner),
            r->machine);
    fprintf(f, "dims searched (%d):", r->nsearched);
    for (int d = 0, n = 0; d < r->ndims; d++)
        if (r->searched[d])
            fprintf(f, "%s %s", n++ ? "," : "", mrt_spec_get_dim(s, d, NULL));
    if (r->max_memory > 0)
        fprintf(f, "; memory cap %s per rank%s",
                mrt_cli_fmt_bytes((double)r->max_memory, buf, sizeof buf),
                o->a->max_memory > 0 ? "" : " (the device memory)");
    fputc('\n', f);
    print_counts(o, f);
    if (r->has_spec)
        fprintf(f, "the spec's own layout: rules: %s (peak memory %s)\n",
                mrt_cli_fmt_time(r->spec_totals.time_s, buf, sizeof buf),
                mrt_cli_fmt_bytes((double)r->spec_totals.peak_memory, b2,
                                  sizeof b2));
    if (!r->ntop) {
        fputs("\nno candidate fits", f);
        if (r->max_memory > 0)
            fputs(o->a->max_memory > 0 ? " the memory cap"
                                       : " the device memory",
                  f);
        fputs("\n", f);
        return;
    }
    fprintf(f, "\nbest %d by modeled time:\n", r->ntop);
    print_results(o, r->top, r->ntop, 1, f);
    fprintf(f,
            "\ntime-versus-memory Pareto front (%d layout%s: none other "
            "is both as fast and as small, and better in one):\n",
            r->npareto, r->npareto == 1 ? "" : "s");
    print_results(o, r->pareto, r->npareto, 0, f);
    fprintf(f, "\nwinner: %s modeled",
            mrt_cli_fmt_time(r->top[0].totals.time_s, buf, sizeof buf));
    if (r->has_spec && r->top[0].totals.time_s > 0)
        fprintf(f, " (%.2fx the speed of the spec's own rules)",
                r->spec_totals.time_s / r->top[0].totals.time_s);
    fputs("; paste into the spec in place of its layout: block", f);
    if (o->a->mesh || o->a->dims)
        fprintf(f, " (for%s%s%s%s)", o->a->mesh ? " --mesh " : "",
                o->a->mesh ? o->a->mesh : "", o->a->dims ? " --dim " : "",
                o->a->dims ? o->a->dims : "");
    fputs(":\n\n", f);
    mrt_search_write_layout(s, r->top[0].rule, f);
}

/* ---- JSON ---- */

static void json_results(const search_out *o, const mrt_search_rules_item *res,
                         int n, FILE *f)
{
    const mrt_spec *s = o->spec;
    const mrt_mesh_info *m = &o->info.mesh;
    char buf[2048];
    fputc('[', f);
    for (int i = 0; i < n; i++) {
        const mrt_plan_totals *x = &res[i].totals;
        fputs(i ? ",\n   {\"rules\": {" : "\n   {\"rules\": {", f);
        for (int d = 0, k = 0; d < o->r->ndims; d++) {
            if (!res[i].rule[d].naxes)
                continue;
            fputs(k++ ? ", " : "", f);
            mrt_json_write_string(f, mrt_spec_get_dim(s, d, NULL));
            fputs(": [", f);
            for (int j = 0; j < res[i].rule[d].naxes; j++) {
                fputs(j ? ", " : "", f);
                mrt_json_write_string(f, m->name[res[i].rule[d].axis[j]]);
            }
            fputc(']', f);
        }
        fputs("}, \"text\": ", f);
        mrt_json_write_string(
            f, mrt_search_format_rules(s, res[i].rule, buf, sizeof buf));
        fprintf(f,
                ",\n    \"time_s\": %s, \"comm_time_s\": %s, "
                "\"compute_time_s\": %s, \"bound_s\": %s, "
                "\"comm_bytes\": %" PRId64 ", \"wire_bytes\": %s, "
                "\"messages\": %" PRId64 ", \"peak_memory\": %" PRId64
                ", \"candidate\": %" PRId64 ", \"other_orders\": %d}",
                MRT_CLI_JSON_NUM("%.9g", x->time_s),
                MRT_CLI_JSON_NUM("%.9g", x->comm_time_s),
                MRT_CLI_JSON_NUM("%.9g", x->compute_time_s),
                MRT_CLI_JSON_NUM("%.9g", res[i].bound_s), x->comm_bytes,
                MRT_CLI_JSON_NUM("%.17g", x->wire_bytes), x->messages,
                x->peak_memory, res[i].index, res[i].orders);
    }
    fputs(n ? "\n  ]" : "]", f);
}

static void write_json(FILE *f, const void *ctx)
{
    const search_out *o = ctx;
    const mrt_spec *s = o->spec;
    const mrt_search_rules_report *r = o->r;
    const mrt_mesh_info *m = &o->info.mesh;
    fputs("{\"spec\": ", f);
    mrt_json_write_string(f, o->info.path);
    fputs(", \"mesh\": {", f);
    for (int a = 0; a < m->naxes; a++) {
        fputs(a ? ", " : "", f);
        mrt_json_write_string(f, m->name[a]);
        fprintf(f, ": %" PRId64, m->size[a]);
    }
    fprintf(f, "}, \"planner\": \"%s\", \"profile\": ",
            mrt_planner_name(o->a->plan.planner));
    mrt_json_write_string(f, r->machine);
    fprintf(f,
            ",\n \"max_memory\": %" PRId64 ", \"top_k\": %d"
            ", \"exhaustive\": %s,\n \"candidates\": {\"enumerated\": %" PRId64
            ", \"pruned_by_time_bound\": %" PRId64
            ", \"pruned_by_memory_bound\": %" PRId64 ", \"planned\": %" PRId64
            ", \"over_memory\": %" PRId64 ", \"invalid\": %" PRId64
            ", \"screened\": %s, \"screen_plans\": %" PRId64
            ", \"left_out_by_screen\": %" PRId64
            "},\n \"seconds\": {\"bounds\": %s, \"planning\": %s"
            ", \"total\": %s},\n \"spec_layout\": ",
            o->r->max_memory, o->a->top > 0 ? o->a->top : 5,
            o->a->exhaustive ? "true" : "false", r->enumerated, r->pruned_time,
            r->pruned_memory, r->planned, r->over_memory, r->invalid,
            r->screened ? "true" : "false", r->screen_plans, r->not_replanned,
            MRT_CLI_JSON_NUM("%.6f", r->bound_seconds),
            MRT_CLI_JSON_NUM("%.6f", r->plan_seconds),
            MRT_CLI_JSON_NUM("%.6f", r->elapsed_seconds));
    if (r->has_spec)
        fprintf(f, "{\"time_s\": %s, \"peak_memory\": %" PRId64 "}",
                MRT_CLI_JSON_NUM("%.9g", r->spec_totals.time_s),
                r->spec_totals.peak_memory);
    else
        fputs("null", f);
    fputs(",\n \"top\": ", f);
    json_results(o, r->top, r->ntop, f);
    fputs(",\n \"pareto\": ", f);
    json_results(o, r->pareto, r->npareto, f);
    fputs(",\n \"winner_layout\": ", f);
    if (r->ntop) {
        char *text = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&text, &len);
        if (mem) {
            mrt_search_write_layout(s, r->top[0].rule, mem);
            fclose(mem);
        }
        mrt_json_write_string(f, text ? text : "");
        free(text);
    } else {
        fputs("null", f);
    }
    fputs("}\n", f);
}

int mrt_cli_search_report(const mrt_cli_args *a, int ntop,
                          void (*text)(FILE *, const void *),
                          void (*json)(FILE *, const void *), const void *o)
{
    mrt_error err = {0};
    text(stdout, o);
    fflush(stdout);
    int code = ntop ? 0 : 1;
    if (a->json_file &&
        mrt_file_write(a->json_file, "the results", json, o, &err)) {
        mrt_cli_print_error(&err);
        code = mrt_cli_exit_code(err.code);
    }
    return code;
}

int mrt_cli_search(const mrt_cli_args *a)
{
    mrt_error err = {0};
    mrt_spec *spec = NULL;
    mrt_search_rules_report *r = NULL;
    mrt_status st = mrt_cli_load_spec(a, NULL, &spec, &err);
    if (!st && a->layout) {
        mrt_spec *chosen = NULL;
        st = mrt_spec_select_alternative(spec, a->layout, &chosen, &err);
        mrt_spec_destroy(spec);
        spec = chosen;
    }
    mrt_search_options opt = {.plan = a->plan,
                              .top = a->top,
                              .max_memory = a->max_memory,
                              .exhaustive = a->exhaustive,
                              .screen = a->screen,
                              .activations = a->activations};
    if (!st && a->per_tensor) {
        int code = mrt_cli_search_params(a, spec, &opt);
        mrt_spec_destroy(spec);
        return code;
    }
    if (!st)
        st = mrt_search_rules_create(spec, &opt, &r, &err);
    if (st) {
        mrt_cli_print_error(&err);
        mrt_spec_destroy(spec);
        return mrt_cli_exit_code(st);
    }
    search_out o = {a, spec, {0}, r};
    mrt_spec_get_info(spec, &o.info);
    int code = mrt_cli_search_report(a, r->ntop, print_report, write_json, &o);
    mrt_search_rules_destroy(r);
    mrt_spec_destroy(spec);
    return code;
}
