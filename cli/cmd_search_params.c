/*
 * cmd_search_params.c — `meshrt search SPEC --per-tensor`: the search of
 * mrt_search_tensors_create (search/search_tensors.c: global rules, and a
 * layout of its own for each parameter), printed as the K fastest, the
 * time-versus-memory Pareto front and the winner to paste: a `layout:`
 * block and the parameters' own `layout:`s, and (--activations) the ops'
 * own `layout:`s.  --json FILE writes the same, atomically.  Exit status
 * as search's: 0, 1 when nothing fits --max-memory, 2 bad input.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef struct params_out {
    const mrt_cli_args *a;
    const mrt_spec *spec;
    mrt_spec_info info;
    const mrt_search_tensors_report *r;
} params_out;

static const mrt_search_axes *own_of(const params_out *o,
                                     const mrt_search_tensors_item *x, int i)
{
    return &x->own[(size_t)i * (size_t)o->r->ndims];
}

/* Searched tensor i, as the spec has it. */
static mrt_spec_tensor_info tensor_of(const params_out *o, int i)
{
    mrt_spec_tensor_info t = {.name = ""};
    mrt_spec_get_tensor(o->spec, o->r->tensor[i], &t, NULL);
    return t;
}

static const char *name_of(const params_out *o, int i)
{
    return tensor_of(o, i).name;
}

/* Parameter i has a layout: of its own in the spec. */
static int s_own(const params_out *o, int i)
{
    return tensor_of(o, i).own_layout;
}

static const char *dim_of(const params_out *o, int d)
{
    return mrt_spec_get_dim(o->spec, d, NULL);
}

/* "rules: batch: rows; w1: {d_in: rows}; w2: rules" */
static void print_layouts(const params_out *o, const mrt_search_tensors_item *x,
                          FILE *f)
{
    char buf[2048];
    fprintf(f, "rules: %s",
            mrt_search_format_rules(o->spec, x->rule, buf, sizeof buf));
    for (int i = 0; i < o->r->ntensors; i++) {
        fprintf(f, "; %s: ", name_of(o, i));
        if (x->follows[i])
            fputs(s_own(o, i) ? "as in the spec" : "rules", f);
        else
            fprintf(f, "{%s}",
                    mrt_search_format_rules(o->spec, own_of(o, x, i), buf,
                                            sizeof buf));
    }
}

static void print_list(const params_out *o, const mrt_search_tensors_item *x,
                       int n, FILE *f)
{
    char t[3][32], b[2][32];
    fprintf(f, "   #  %-10s %-10s %-10s %11s %11s  %s\n", "time", "comm",
            "compute", "to MPI", "peak mem", "layouts");
    for (int i = 0; i < n; i++) {
        const mrt_plan_totals *y = &x[i].totals;
        fprintf(f, "  %2d  %-10s %-10s %-10s %11s %11s  ", i + 1,
                mrt_cli_fmt_time(y->time_s, t[0], sizeof t[0]),
                mrt_cli_fmt_time(y->comm_time_s, t[1], sizeof t[1]),
                mrt_cli_fmt_time(y->compute_time_s, t[2], sizeof t[2]),
                mrt_cli_fmt_bytes((double)y->comm_bytes, b[0], sizeof b[0]),
                mrt_cli_fmt_bytes((double)y->peak_memory, b[1], sizeof b[1]));
        print_layouts(o, &x[i], f);
        fputc('\n', f);
    }
}

/* The report's opening: what was searched, and how many candidates
 * fared how. */
static void print_counts(const params_out *o, FILE *f)
{
    const mrt_search_tensors_report *r = o->r;
    const mrt_spec *s = o->spec;
    fprintf(f,
            "search %s, per tensor: global rules and a layout for each "
            "of %d %s%s (",
            o->info.path, r->ntensors, r->nacts ? "tensor" : "parameter",
            r->ntensors == 1 ? "" : "s");
    for (int i = 0; i < r->ntensors; i++)
        fprintf(f, "%s%s", i ? ", " : "", name_of(o, i));
    fprintf(f, "): %" PRId64 " combination%s of their layouts\n", r->combos,
            r->combos == 1 ? "" : "s");
    if (r->nacts)
        fprintf(f,
                "of which %d activation%s (op results, laid out as by "
                "their op's layout:)\n",
                r->nacts, r->nacts == 1 ? "" : "s");
    if (r->nleft) {
        fprintf(f,
                "the cap of %d combinations cut the space: not searched "
                "with a layout of their own: ",
                MRT_SEARCH_MAX_COMBOS);
        for (int i = 0; i < r->nleft; i++) {
            mrt_spec_tensor_info t = {.name = ""};
            mrt_spec_get_tensor(s, r->left[i], &t, NULL);
            fprintf(f, "%s%s", i ? ", " : "", t.name);
        }
        fputc('\n', f);
    }
    fprintf(f,
            "%" PRId64 " candidates in all: %" PRId64 " planned, %" PRId64
            " pruned by the bounds, %" PRId64 " invalid, %" PRId64
            " over the memory cap; %" PRId64 " combination%s did not "
            "load\n",
            r->enumerated, r->planned, r->pruned, r->invalid, r->over_memory,
            r->failed, r->failed == 1 ? "" : "s");
    char line[MRT_CLI_ERROR_MAX];
    if (r->first_error.code != MRT_OK)
        fprintf(f, "first invalid: %s\n",
                mrt_cli_error_line(&r->first_error, line, sizeof line));
    if (r->screened)
        fputs("some combinations were screened (planning them all would "
              "be slow): the lists are not necessarily exact "
              "(--no-screen)\n",
              f);
}

/* The layouts of their own that the winner gives tensors and ops. */
static void print_own_layouts(const params_out *o, FILE *f)
{
    const mrt_search_tensors_report *r = o->r;
    const mrt_mesh_info *m = &o->info.mesh;
    int any = 0, anyop = 0;
    for (int i = 0; i < r->ntensors; i++) {
        if (r->top[0].follows[i])
            continue;
        int act = i >= r->ntensors - r->nacts;
        if (!act && !any++)
            fputs("\nand give these tensors (under tensors:) their own "
                  "layout:\n\n",
                  f);
        if (act && !anyop++)
            fputs("\nand give these ops (under ops:, the op by its out:) "
                  "their own layout:\n\n",
                  f);
        const mrt_search_axes *own = own_of(o, &r->top[0], i);
        int n = 0;
        fprintf(f, act ? "  out: %s, layout: {" : "  %s: layout: {",
                name_of(o, i));
        for (int d = 0; d < r->ndims; d++) {
            if (!own[d].naxes)
                continue;
            fprintf(f, "%s%s: ", n++ ? ", " : "", dim_of(o, d));
            if (own[d].naxes > 1)
                fputc('[', f);
            for (int j = 0; j < own[d].naxes; j++)
                fprintf(f, "%s%s", j ? ", " : "", m->name[own[d].axis[j]]);
            if (own[d].naxes > 1)
                fputc(']', f);
        }
        fputs("}\n", f);
    }
}

/* The text report: the counts, the best list, the Pareto front and the
 * winner's layout block. */
static void print_report(FILE *f, const void *ctx)
{
    const params_out *o = ctx;
    const mrt_search_tensors_report *r = o->r;
    const mrt_spec *s = o->spec;
    char buf[2048];
    print_counts(o, f);
    if (!r->ntop) {
        fprintf(f, "\nno candidate fits%s\n",
                o->a->max_memory > 0           ? " the memory cap"
                : o->a->plan.device_memory > 0 ? " the device memory"
                                               : "");
        return;
    }
    fprintf(f, "\nbest %d by modeled time:\n", r->ntop);
    print_list(o, r->top, r->ntop, f);
    fprintf(f, "\ntime-versus-memory Pareto front (%d):\n", r->npareto);
    print_list(o, r->pareto, r->npareto, f);
    fprintf(f,
            "\nwinner: %s modeled; paste into the spec in place of its "
            "layout: block",
            mrt_cli_fmt_time(r->top[0].totals.time_s, buf, sizeof buf));
    if (o->a->mesh || o->a->dims)
        fprintf(f, " (for%s%s%s%s)", o->a->mesh ? " --mesh " : "",
                o->a->mesh ? o->a->mesh : "", o->a->dims ? " --dim " : "",
                o->a->dims ? o->a->dims : "");
    fputs(":\n\n", f);
    mrt_search_write_layout(s, r->top[0].rule, f);
    print_own_layouts(o, f);
}

static void json_rules(const params_out *o, const mrt_search_axes *rules,
                       FILE *f)
{
    fputc('{', f);
    for (int d = 0, k = 0; d < o->r->ndims; d++) {
        if (!rules[d].naxes)
            continue;
        fputs(k++ ? ", " : "", f);
        mrt_json_write_string(f, dim_of(o, d));
        fputs(": [", f);
        for (int j = 0; j < rules[d].naxes; j++) {
            fputs(j ? ", " : "", f);
            mrt_json_write_string(f, o->info.mesh.name[rules[d].axis[j]]);
        }
        fputc(']', f);
    }
    fputc('}', f);
}

static void json_list(const params_out *o, const mrt_search_tensors_item *x,
                      int n, FILE *f)
{
    fputc('[', f);
    for (int i = 0; i < n; i++) {
        const mrt_plan_totals *y = &x[i].totals;
        fputs(i ? ",\n   {\"rules\": " : "\n   {\"rules\": ", f);
        json_rules(o, x[i].rule, f);
        fputs(", \"tensors\": {", f);
        for (int p = 0; p < o->r->ntensors; p++) {
            fputs(p ? ", " : "", f);
            mrt_json_write_string(f, name_of(o, p));
            fputs(": ", f);
            if (x[i].follows[p])
                fputs("null", f);
            else
                json_rules(o, own_of(o, &x[i], p), f);
        }
        fprintf(f,
                "},\n    \"time_s\": %s, \"comm_time_s\": %s, "
                "\"compute_time_s\": %s, \"comm_bytes\": %" PRId64
                ", \"wire_bytes\": %s, \"peak_memory\": %" PRId64 "}",
                MRT_CLI_JSON_NUM("%.9g", y->time_s),
                MRT_CLI_JSON_NUM("%.9g", y->comm_time_s),
                MRT_CLI_JSON_NUM("%.9g", y->compute_time_s), y->comm_bytes,
                MRT_CLI_JSON_NUM("%.17g", y->wire_bytes), y->peak_memory);
    }
    fputs(n ? "\n  ]" : "]", f);
}

static void write_json(FILE *f, const void *ctx)
{
    const params_out *o = ctx;
    const mrt_search_tensors_report *r = o->r;
    fputs("{\"spec\": ", f);
    mrt_json_write_string(f, o->info.path);
    fputs(", \"per_tensor\": true, \"params\": [", f);
    for (int i = 0; i < r->ntensors - r->nacts; i++) {
        fputs(i ? ", " : "", f);
        mrt_json_write_string(f, name_of(o, i));
    }
    fputs("], \"activations\": [", f);
    for (int i = r->ntensors - r->nacts; i < r->ntensors; i++) {
        fputs(i > r->ntensors - r->nacts ? ", " : "", f);
        mrt_json_write_string(f, name_of(o, i));
    }
    fprintf(f,
            "],\n \"combinations\": %" PRId64 ", \"exhaustive\": %s, "
            "\"candidates\": {\"enumerated\": %" PRId64
            ", \"planned\": %" PRId64 ", \"pruned\": %" PRId64
            ", \"invalid\": %" PRId64 ", \"over_memory\": %" PRId64
            ", \"screened\": %s},\n"
            " \"top\": ",
            r->combos, o->a->exhaustive ? "true" : "false", r->enumerated,
            r->planned, r->pruned, r->invalid, r->over_memory,
            r->screened ? "true" : "false");
    json_list(o, r->top, r->ntop, f);
    fputs(",\n \"pareto\": ", f);
    json_list(o, r->pareto, r->npareto, f);
    fputs("}\n", f);
}

int mrt_cli_search_params(const mrt_cli_args *a, const mrt_spec *spec,
                          const mrt_search_options *opt)
{
    mrt_error err = {0};
    mrt_search_tensors_report *r = NULL;
    mrt_status st = mrt_search_tensors_create(spec, opt, &r, &err);
    if (st) {
        mrt_cli_print_error(&err);
        return mrt_cli_exit_code(st);
    }
    params_out o = {a, spec, {0}, r};
    mrt_spec_get_info(spec, &o.info);
    int code = mrt_cli_search_report(a, r->ntop, print_report, write_json, &o);
    mrt_search_tensors_destroy(r);
    return code;
}
