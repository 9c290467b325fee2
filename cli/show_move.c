/*
 * show_move.c — `meshrt show SPEC TENSOR --from LAYOUT --to LAYOUT`: the
 * move the planner makes for TENSOR between two layouts, each collective
 * with its mesh axes and bytes per rank, between the pictures of the
 * tensor before and after.
 *
 * A LAYOUT is written as a `layout:` of the spec ('{batch: data, d_ff:
 * [model, pipe]}') or names an alternative of its `layouts:` (the
 * tensor's layout there, and its mesh).  The move is planned as the
 * planner plans any `relayout` op (ops/relayout.c, the cheapest path of
 * ops/relayout_path.c): a program of that one op is written with the
 * spec's mesh, dims, dtype and network links, loaded from memory through
 * meshrt.h and planned with the same options, so a LAYOUT is read and
 * checked by the spec's own loader; its errors are given on the option
 * ("--from:1:9: error: unknown mesh axis ...").
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "show.h"

#define LAYOUT_INDENT 6

typedef struct side {
    const char *opt;  /* "--from" */
    const char *text; /* the layout as YAML */
    char own[2048];   /* an alternative's layout, written out */
    mrt_mesh_info mesh;
    int line, nlines; /* where it is in the program written */
} side;

/* value v's layout as YAML flow: "{batch: data, d_ff: [model, pipe]}". */
static void layout_yaml(const mrt_plan_value_info *vi, const mrt_mesh_info *m,
                        char *buf, size_t n)
{
    size_t len = (size_t)snprintf(buf, n, "{");
    int first = 1;
    for (int d = 0; d < vi->ndims; d++) {
        if (!vi->naxes[d])
            continue;
        len += (size_t)snprintf(buf + len, len < n ? n - len : 0, "%s%s: %s",
                                first ? "" : ", ", vi->dim[d],
                                vi->naxes[d] > 1 ? "[" : "");
        for (int k = 0; k < vi->naxes[d]; k++)
            len += (size_t)snprintf(buf + len, len < n ? n - len : 0, "%s%s",
                                    k ? ", " : "", m->name[vi->axis[d][k]]);
        len += (size_t)snprintf(buf + len, len < n ? n - len : 0, "%s",
                                vi->naxes[d] > 1 ? "]" : "");
        first = 0;
    }
    snprintf(buf + len, len < n ? n - len : 0, "}");
}

/* An alternative's name: the tensor's layout under it, and its mesh. */
static mrt_status resolve(side *s, const mrt_cli_args *a, const mrt_spec *spec,
                          const char *tensor, mrt_error *err)
{
    mrt_spec_info info;
    mrt_spec_get_info(spec, &info);
    s->mesh = info.mesh;
    for (int i = 0; i < info.nalternatives; i++) {
        if (strcmp(mrt_spec_get_alternative(spec, i), s->text) != 0)
            continue;
        mrt_spec *alt = NULL;
        mrt_plan *plan = NULL;
        mrt_status st = mrt_spec_select_alternative(spec, s->text, &alt, err);
        if (!st)
            st = mrt_plan_create(alt, &a->plan, &plan, err);
        mrt_plan_value_info vi;
        if (!st && !mrt_plan_get_value(plan, mrt_plan_find_value(plan, tensor),
                                       &vi, NULL)) {
            mrt_plan_get_mesh(plan, &s->mesh);
            layout_yaml(&vi, &s->mesh, s->own, sizeof s->own);
            s->text = s->own;
        }
        mrt_plan_destroy(plan);
        mrt_spec_destroy(alt);
        return st;
    }
    return MRT_OK;
}

/* s's layout under `layout:`, each line indented; its lines noted. */
static void put_layout(FILE *f, side *s, int *line)
{
    s->line = *line;
    s->nlines = 0;
    for (const char *p = s->text; p;) {
        const char *nl = strchr(p, '\n');
        int len = nl ? (int)(nl - p) : (int)strlen(p);
        fprintf(f, "%*s%.*s\n", LAYOUT_INDENT, "", len, p);
        s->nlines++;
        p = nl ? nl + 1 : NULL;
    }
    *line += s->nlines;
}

/* The program of one relayout of t from `from` to `to`, in YAML: *text
 * (the caller frees it), or NULL when out of memory. */
static char *program(const mrt_spec *spec, const mrt_spec_tensor_info *t,
                     side *from, side *to, const char *out)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    if (!f)
        return NULL;
    mrt_spec_info info;
    mrt_spec_get_info(spec, &info);
    const mrt_mesh_info *m = &from->mesh;
    fprintf(f, "mesh: {");
    for (int i = 0; i < m->naxes; i++)
        fprintf(f, "%s%s: %" PRId64, i ? ", " : "", m->name[i], m->size[i]);
    fprintf(f, "}\ndtype: %s\ndims: {", mrt_dtype_name(info.dtype));
    for (int d = 0; d < t->ndims; d++)
        fprintf(f, "%s%s: %" PRId64, d ? ", " : "", t->dim[d], t->shape[d]);
    fprintf(f, "}\n");
    int line = 4, links = 0;
    for (int i = 0; i < m->naxes; i++) {
        double lat, bw;
        if (!mrt_spec_get_link(spec, m->name[i], &lat, &bw))
            continue;
        fprintf(f, "%s  %s: {latency_us: %.17g, bandwidth_GBps: %.17g}\n",
                links++ ? "" : "network:\n", m->name[i], lat, bw);
        line += 1 + (links == 1);
    }
    fprintf(f, "tensors:\n  %s:\n    shape: [", t->name);
    for (int d = 0; d < t->ndims; d++)
        fprintf(f, "%s%s", d ? ", " : "", t->dim[d]);
    fprintf(f, "]\n    init: {fill: 0}\n    layout:\n");
    line += 5;
    put_layout(f, from, &line);
    fprintf(f,
            "ops:\n  - op: relayout\n    in: [%s]\n    out: %s\n"
            "    layout:\n",
            t->name, out);
    line += 5;
    put_layout(f, to, &line);
    fprintf(f, "outputs: [%s]\n", out);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* An error in the program written: on the option when it is in one of
 * the layouts, else on the command with no position (the user never
 * saw that program). */
static void blame(mrt_error *err, const side *from, const side *to)
{
    const side *s[2] = {from, to};
    if (!(err->line >= from->line && err->line < from->line + from->nlines) &&
        !(err->line >= to->line && err->line < to->line + to->nlines)) {
        err->line = err->column = 0;
        err->context[0] = '\0';
    }
    for (int k = 0; k < 2; k++)
        if (err->line >= s[k]->line && err->line < s[k]->line + s[k]->nlines) {
            snprintf(err->file, sizeof err->file, "%s", s[k]->opt);
            err->line -= s[k]->line - 1;
            if (err->column > LAYOUT_INDENT)
                err->column -= LAYOUT_INDENT;
            err->context[0] = '\0';
        }
}

static mrt_status find_tensor(const mrt_spec *spec, const char *name,
                              mrt_spec_tensor_info *t, mrt_error *err)
{
    mrt_spec_info info;
    mrt_spec_get_info(spec, &info);
    for (int i = 0; i < info.ntensors; i++)
        if (!mrt_spec_get_tensor(spec, i, t, NULL) &&
            strcmp(t->name, name) == 0)
            return t->ndims ? MRT_OK
                            : mrt_cli_error(err, MRT_E_USAGE, info.path,
                                            "'%.100s' is a scalar: it has "
                                            "one layout, nothing moves",
                                            name);
    return mrt_cli_error(err, MRT_E_USAGE, info.path,
                         "no tensor '%.100s' in the program (meshrt check "
                         "lists them)",
                         name);
}

/* The steps of the move, one line each, and their total. */
static void moves(mrt_draw_page *pg, const mrt_plan *plan)
{
    char b[32], w[32], t[32];
    int n = mrt_plan_step_count(plan), k = 0;
    mrt_draw_page_line(pg, 0, "the move, as the planner makes it:");
    for (int i = 0; i < n; i++) {
        mrt_plan_step_info s;
        if (mrt_plan_get_step(plan, i, &s, NULL) || s.kind == MRT_PLAN_STEP_MAP)
            continue; /* the relayout op's local copy, if any */
        if (s.collective)
            mrt_draw_page_line(
                pg, 2,
                "%d. %s over %s (groups of %" PRId64 "): %s per rank "
                "to MPI, %s on the wire, %s",
                ++k, mrt_plan_step_kind_name(s.kind), s.axes, s.group,
                mrt_cli_fmt_bytes((double)s.bytes, b, sizeof b),
                mrt_cli_fmt_bytes(s.wire_bytes, w, sizeof w),
                mrt_cli_fmt_time(s.time_s, t, sizeof t));
        else
            mrt_draw_page_line(pg, 2, "%d. %s%s%s (local, no bytes), %s", ++k,
                               mrt_plan_step_kind_name(s.kind),
                               s.naxes ? " along " : "", s.axes,
                               mrt_cli_fmt_time(s.time_s, t, sizeof t));
    }
    mrt_plan_totals tot = mrt_plan_get_totals(plan);
    if (!k)
        mrt_draw_page_line(pg, 2, "nothing moves: the layouts are the same");
    mrt_draw_page_line(pg, 2,
                       "in all %s per rank to MPI in %" PRId64
                       " collective%s, %s modeled",
                       mrt_cli_fmt_bytes((double)tot.comm_bytes, b, sizeof b),
                       tot.collectives, tot.collectives == 1 ? "" : "s",
                       mrt_cli_fmt_time(tot.comm_time_s, t, sizeof t));
    mrt_draw_page_line(pg, 0, "%s", "");
}

static mrt_status draw_move(mrt_draw_page *pg, const mrt_plan *plan,
                            const side *from, const side *to, const char *t,
                            const char *out)
{
    char title[2560];
    snprintf(title, sizeof title, "before: %s in %s", t, from->text);
    if (mrt_show_value(pg, plan, mrt_plan_find_value(plan, t), title))
        return MRT_E_NOMEM;
    mrt_draw_page_line(pg, 0, "%s", "");
    moves(pg, plan);
    snprintf(title, sizeof title, "after: %s in %s", t, to->text);
    if (mrt_show_value(pg, plan, mrt_plan_find_value(plan, out), title))
        return MRT_E_NOMEM;
    return MRT_OK;
}

static mrt_status check_move_args(const mrt_cli_args *a, mrt_error *err)
{
    if (!a->from || !a->to)
        return mrt_cli_error(err, MRT_E_USAGE, "meshrt",
                             "%s needs %s too: show SPEC TENSOR --from "
                             "LAYOUT --to LAYOUT (see meshrt show --help)",
                             a->from ? "--from" : "--to",
                             a->from ? "--to" : "--from");
    if (a->nnames != 1)
        return mrt_cli_error(err, MRT_E_USAGE, "meshrt",
                             "--from and --to move one tensor: name one "
                             "TENSOR, not %d (see meshrt show --help)",
                             a->nnames);
    if (a->layout || a->steps)
        return mrt_cli_error(err, MRT_E_USAGE, "meshrt",
                             "--from and --to name the layouts: no %s "
                             "(see meshrt show --help)",
                             a->layout ? "--layout" : "--steps");
    return MRT_OK;
}

static mrt_status same_mesh(const side *f, const side *t, mrt_error *err)
{
    int same = f->mesh.naxes == t->mesh.naxes;
    for (int i = 0; same && i < f->mesh.naxes; i++)
        same = strcmp(f->mesh.name[i], t->mesh.name[i]) == 0 &&
               f->mesh.size[i] == t->mesh.size[i];
    return same ? MRT_OK
                : mrt_cli_error(err, MRT_E_USAGE, "meshrt",
                                "--from and --to are on different meshes: "
                                "a move stays on one mesh");
}

int mrt_show_move(const mrt_cli_args *a)
{
    mrt_error err = {0};
    mrt_spec *spec = NULL, *prog = NULL;
    mrt_plan *plan = NULL;
    mrt_draw_page page = {0};
    mrt_spec_tensor_info t;
    side from = {.opt = "--from", .text = a->from};
    side to = {.opt = "--to", .text = a->to};
    const char *out = a->names && a->nnames == 1 &&
                              strcmp(a->names[0], "moved") == 0
                          ? "moved_"
                          : "moved";
    char *text = NULL;
    mrt_status st = check_move_args(a, &err);
    if (!st)
        st = mrt_cli_load_spec(a, NULL, &spec, &err);
    if (!st)
        st = find_tensor(spec, a->names[0], &t, &err);
    if (!st)
        st = resolve(&from, a, spec, t.name, &err);
    if (!st)
        st = resolve(&to, a, spec, t.name, &err);
    if (!st)
        st = same_mesh(&from, &to, &err);
    if (!st && !(text = program(spec, &t, &from, &to, out)))
        st = mrt_cli_error(&err, MRT_E_NOMEM, "meshrt", "out of memory");
    mrt_spec_load_options lo = {.text = text, .len = text ? strlen(text) : 0};
    if (!st && (st = mrt_spec_load_ex("meshrt show", &lo, &prog, &err)))
        blame(&err, &from, &to);
    if (!st)
        st = mrt_plan_create(prog, &a->plan, &plan, &err);
    if (!st)
        st = draw_move(&page, plan, &from, &to, t.name, out);
    if (st)
        mrt_cli_print_error(&err);
    else
        st = mrt_show_output(a, &page);
    mrt_draw_page_free(&page);
    free(text);
    mrt_plan_destroy(plan);
    mrt_spec_destroy(prog);
    mrt_spec_destroy(spec);
    return mrt_cli_exit_code(st);
}
