/*
 * cmd_show.c — `meshrt show SPEC [TENSOR...]`: pictures of how tensors
 * are spread over the mesh, planned with no MPI (show_value.c draws
 * them).  Without TENSOR it shows every input of the program (its
 * parameters and data); a named op result is shown as its op leaves it
 * (a pending sum, when the planner keeps one for the consumer).
 * --steps shows every layout the plan gives each tensor, in step order;
 * --from and --to picture the move between two layouts (show_move.c);
 * --schedule a pipelined plan's schedule (show_schedule.c).
 * Text on the standard output (Unicode box drawing, or --ascii), and
 * --svg FILE the same pictures as SVG, written atomically.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "show.h"

static void write_svg(FILE *f, const void *page)
{
    mrt_draw_page_svg(page, f);
}

mrt_status mrt_show_output(const mrt_cli_args *a, const mrt_draw_page *page)
{
    mrt_error err = {0};
    if (page->failed) {
        mrt_cli_error(&err, MRT_E_NOMEM, "meshrt",
                      "out of memory while "
                      "drawing");
        mrt_cli_print_error(&err);
        return MRT_E_NOMEM;
    }
    mrt_draw_page_text(page, a->ascii, stdout);
    fflush(stdout);
    if (a->svg &&
        mrt_file_write(a->svg, "the pictures", write_svg, page, &err)) {
        mrt_cli_print_error(&err);
        return err.code;
    }
    return MRT_OK;
}

/* "value 3 after step 12: allreduce over cols, 8 KiB per rank". */
static void step_title(const mrt_plan *plan, const mrt_plan_value_info *vi,
                       char *buf, size_t n)
{
    mrt_plan_step_info s;
    char bytes[32];
    if (vi->input) {
        snprintf(buf, n, "%s as it enters the program", vi->name);
        return;
    }
    mrt_plan_get_step(plan, vi->step, &s, NULL);
    int len = snprintf(buf, n, "%s after step %d: %s", vi->name, vi->step,
                       mrt_plan_step_kind_name(s.kind));
    if (s.collective)
        snprintf(buf + len, n - (size_t)len, " over %s, %s per rank", s.axes,
                 mrt_cli_fmt_bytes((double)s.bytes, bytes, sizeof bytes));
    else if (vi->op_result)
        snprintf(buf + len, n - (size_t)len, " (the op's result)");
}

/* Every value of the tensor called name, in step order. */
static int show_steps(mrt_draw_page *page, const mrt_plan *plan,
                      const char *name)
{
    for (int i = 0; i < mrt_plan_value_count(plan); i++) {
        mrt_plan_value_info vi;
        char title[512];
        if (mrt_plan_get_value(plan, i, &vi, NULL) ||
            strcmp(vi.name, name) != 0)
            continue;
        step_title(plan, &vi, title, sizeof title);
        if (mrt_show_value(page, plan, i, title) != 0)
            return -1;
        mrt_draw_page_line(page, 0, "%s", "");
    }
    return 0;
}

/* The TENSOR arguments must name tensors of the plan. */
static mrt_status check_names(const mrt_cli_args *a, const mrt_plan *plan,
                              mrt_error *err)
{
    for (int k = 0; k < a->nnames; k++)
        if (mrt_plan_find_value(plan, a->names[k]) < 0)
            return mrt_cli_error(err, MRT_E_USAGE, a->spec,
                                 "no tensor '%.100s' in the program "
                                 "(meshrt check lists them)",
                                 a->names[k]);
    return MRT_OK;
}

static int show_all(mrt_draw_page *page, const mrt_cli_args *a,
                    const mrt_plan *plan)
{
    for (int i = 0; a->nnames == 0 && i < mrt_plan_value_count(plan); i++) {
        mrt_plan_value_info vi;
        if (mrt_plan_get_value(plan, i, &vi, NULL) || !vi.input ||
            strchr(vi.name, ':')) /* train:'s own, as grad:loss */
            continue;
        if (a->steps ? show_steps(page, plan, vi.name)
                     : mrt_show_value(page, plan, i, NULL))
            return -1;
        if (!a->steps)
            mrt_draw_page_line(page, 0, "%s", "");
    }
    for (int k = 0; k < a->nnames; k++) {
        int v = mrt_plan_find_value(plan, a->names[k]);
        if (a->steps ? show_steps(page, plan, a->names[k])
                     : mrt_show_value(page, plan, v, NULL))
            return -1;
        if (!a->steps)
            mrt_draw_page_line(page, 0, "%s", "");
    }
    return 0;
}

int mrt_cli_show(const mrt_cli_args *a)
{
    if (a->from || a->to)
        return mrt_show_move(a);
    mrt_error err = {0};
    mrt_spec *spec = NULL;
    mrt_plan *plan = NULL;
    mrt_draw_page page = {0};
    mrt_status st = mrt_cli_load(a, &spec, &plan, &err);
    if (st == MRT_OK)
        st = check_names(a, plan, &err);
    if (st == MRT_OK && a->schedule && !mrt_plan_get_schedule(plan))
        st = mrt_cli_error(&err, MRT_E_USAGE, a->spec,
                           "the plan has no pipeline to show (a pipeline "
                           "splits a repeated block's dim over a mesh axis: "
                           "docs/spec.md, \"Pipelines\")");
    if (st != MRT_OK)
        mrt_cli_print_error(&err);
    else {
        if (a->schedule)
            mrt_show_schedule(&page, mrt_plan_get_schedule(plan));
        else
            show_all(&page, a, plan);
        st = mrt_show_output(a, &page);
    }
    mrt_draw_page_free(&page);
    mrt_plan_destroy(plan);
    mrt_spec_destroy(spec);
    return mrt_cli_exit_code(st);
}
