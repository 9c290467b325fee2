/*
 * null_args.c — every public function with each pointer argument NULL,
 * one call per process (tests/unit/null_args.sh runs them, so a crash
 * fails its case alone).
 *
 *     null_args list         every case, "FUNCTION ARGUMENT" a line ("-"
 *                            for a function without pointer arguments:
 *                            it is called once, as documented)
 *     null_args FUNCTION ARG runs one case: exit 0 when the call did what
 *                            meshrt.h says, 1 otherwise (a crash: killed)
 *
 * The table lists the arguments of each function; a name ending in '?'
 * is one the header says may be NULL (err, options...): the call must
 * not crash and must return what the header says.  Any other pointer
 * argument NULL is MRT_E_USAGE for a status-returning call (with the
 * error filled), and for the others what the header says they return.
 * null_args.sh checks that the table names every MRT_API function of
 * meshrt.h and meshrt_mpi.h, so a new function without its cases fails.
 * Through the public headers and the shared libmeshrt only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "meshrt_mpi.h"

static const char *arg; /* the argument this process passes as NULL */

/* v, or NULL when it is the argument under test. */
#define N(name, v) (strcmp(arg, #name) ? (v) : NULL)
#define ERR N(err?, &err)

static const char spec_text[] = "mesh: {data: 1}\n"
                                "dims: {batch: 4, d: 4}\n"
                                "layout: {batch: data}\n"
                                "tensors:\n"
                                "  x: {shape: [batch, d]}\n"
                                "ops:\n"
                                "  - {op: relu, in: [x], out: y}\n"
                                "layouts:\n"
                                "  rep: {}\n";

static mrt_spec *spec(void)
{
    mrt_spec *s = NULL;
    if (mrt_spec_load_string("null.yaml", spec_text, sizeof spec_text - 1, &s,
                             NULL) != MRT_OK)
        exit(3);
    return s;
}

static mrt_plan *plan(const mrt_spec *s)
{
    mrt_plan *p = NULL;
    if (mrt_plan_create(s, NULL, &p, NULL) != MRT_OK)
        exit(3);
    return p;
}

/* A builder with a dim d and an input x[d]. */
static mrt_ir *ir(int with_tensor)
{
    const char *axis[] = {"data"};
    const int64_t size[] = {1};
    mrt_ir *b = NULL;
    if (mrt_ir_create("p", 1, axis, size, &b, NULL) ||
        mrt_ir_add_dim(b, "d", 4, NULL))
        exit(3);
    const char *shape[] = {"d"};
    mrt_ir_tensor t = {.name = "x", .ndims = 1, .shape = shape};
    if (with_tensor && mrt_ir_add_tensor(b, &t, NULL))
        exit(3);
    return b;
}

static int optional(void)
{
    return arg[strlen(arg) - 1] == '?';
}

/* A status call's verdict: MRT_E_USAGE with the error filled for a
 * required argument; anything but a crash for an optional one. */
static int status_ok(mrt_status st, const mrt_error *err)
{
    if (optional())
        return 1;
    return st == MRT_E_USAGE &&
           (!err || (err->code == MRT_E_USAGE && err->message[0]));
}

static void write_nothing(FILE *f, const void *ctx)
{
    (void)f, (void)ctx;
}

/* ---- one function per public function: 1 when it behaved ---------- */

static int c_plain(void) /* functions with no pointer arguments */
{
    return mrt_version() && mrt_status_name(MRT_E_SPEC) &&
           mrt_dtype_name(MRT_F32) && mrt_planner_name(MRT_PLANNER_AUTO) &&
           mrt_plan_step_kind_name(MRT_PLAN_STEP_MAP) &&
           mrt_optimizer_name(MRT_OPTIMIZER_ADAM);
}

static int c_error_format(void)
{
    mrt_error e = {.code = MRT_E_SPEC, .message = "m"};
    char buf[64] = "x";
    char *r = mrt_error_format(N(e, &e), N(buf, buf), sizeof buf);
    return !strcmp(arg, "buf") ? r == NULL : r == buf && buf[0] == '\0';
}

static int c_spec_load_ex(void)
{
    mrt_error err = {0};
    mrt_spec *s = (mrt_spec *)&err;
    mrt_spec_load_options o = {.text = spec_text, .len = sizeof spec_text - 1};
    mrt_status st = mrt_spec_load_ex(N(path, "null.yaml"), N(opt?, &o),
                                     N(out, &s), ERR);
    if (strcmp(arg, "out"))
        mrt_spec_destroy(s == (mrt_spec *)&err ? NULL : s);
    return status_ok(st, ERR);
}

static int c_spec_load(void)
{
    mrt_error err = {0};
    mrt_spec *s = NULL;
    mrt_status st = mrt_spec_load(N(path, "no-such.yaml"), N(out, &s), ERR);
    return optional() ? st == MRT_E_IO : status_ok(st, ERR);
}

static int c_spec_load_string(void)
{
    mrt_error err = {0};
    mrt_spec *s = NULL;
    mrt_status st = mrt_spec_load_string(N(name?, "n.yaml"),
                                         N(text, spec_text),
                                         sizeof spec_text - 1, N(out, &s),
                                         ERR);
    mrt_spec_destroy(s);
    return optional() ? st == MRT_OK : status_ok(st, ERR);
}

static int c_ir_create(void)
{
    mrt_error err = {0};
    const char *axis[] = {"data"};
    const int64_t size[] = {2};
    mrt_ir *b = NULL;
    mrt_status st = mrt_ir_create(N(name?, "p"), 1, N(axis, axis),
                                  N(size, size), N(out, &b), ERR);
    mrt_ir_destroy(b);
    return optional() ? st == MRT_OK : status_ok(st, ERR);
}

/* The builder's calls: ir NULL or the described argument NULL. */
static int c_ir_set_dtype(void)
{
    mrt_error err = {0};
    mrt_ir *b = ir(0);
    mrt_status st = mrt_ir_set_dtype(N(ir, b), MRT_F64, ERR);
    mrt_ir_destroy(b);
    return optional() ? st == MRT_OK : status_ok(st, ERR);
}

static int c_ir_add_dim(void)
{
    mrt_error err = {0};
    mrt_ir *b = ir(0);
    mrt_status st = mrt_ir_add_dim(N(ir, b), N(name, "e"), 2, ERR);
    mrt_ir_destroy(b);
    return optional() ? st == MRT_OK : status_ok(st, ERR);
}

static int c_ir_set_rule(void)
{
    mrt_error err = {0};
    mrt_ir *b = ir(0);
    mrt_ir_rule r = {.dim = "d", .axes = {"data"}};
    mrt_status st = mrt_ir_set_rule(N(ir, b), N(rule, &r), ERR);
    mrt_ir_destroy(b);
    return optional() ? st == MRT_OK : status_ok(st, ERR);
}

static int c_ir_add_tensor(void)
{
    mrt_error err = {0};
    mrt_ir *b = ir(0);
    const char *shape[] = {"d"};
    mrt_ir_tensor t = {.name = "x", .ndims = 1, .shape = shape};
    mrt_status st = mrt_ir_add_tensor(N(ir, b), N(t, &t), ERR);
    mrt_ir_destroy(b);
    return optional() ? st == MRT_OK : status_ok(st, ERR);
}

static int c_ir_add_op(void)
{
    mrt_error err = {0};
    mrt_ir *b = ir(1);
    mrt_ir_op op = {.kind = MRT_IR_RELU, .in = {"x"}, .out = "y"};
    mrt_status st = mrt_ir_add_op(N(ir, b), N(op, &op), ERR);
    mrt_ir_destroy(b);
    return optional() ? st == MRT_OK : status_ok(st, ERR);
}

static int c_ir_set_expect(void)
{
    mrt_error err = {0};
    mrt_ir *b = ir(1);
    mrt_ir_budget bu = {-1, -1};
    mrt_status st = mrt_ir_set_expect(N(ir, b), N(b, &bu), ERR);
    mrt_ir_destroy(b);
    return optional() ? st == MRT_OK : status_ok(st, ERR);
}

static int c_ir_set_link(void)
{
    mrt_error err = {0};
    mrt_ir *b = ir(1);
    mrt_status st = mrt_ir_set_link(N(ir, b), N(axis, "data"), 1, 1, ERR);
    mrt_ir_destroy(b);
    return optional() ? st == MRT_OK : status_ok(st, ERR);
}

static int c_ir_set_outputs(void)
{
    mrt_error err = {0};
    mrt_ir *b = ir(1);
    const char *names[] = {"x"};
    mrt_status st = mrt_ir_set_outputs(N(ir, b), 1, N(names, names), ERR);
    mrt_ir_destroy(b);
    return optional() ? st == MRT_OK : status_ok(st, ERR);
}

/* A builder with block h over d (input z: x, carried from r) open. */
static mrt_ir *block_ir(void)
{
    mrt_ir *b = ir(1);
    if (mrt_ir_block_begin(b, "h", "d", NULL))
        exit(3);
    return b;
}

static int c_ir_block_begin(void)
{
    mrt_error err = {0};
    mrt_ir *b = ir(1);
    mrt_status st = mrt_ir_block_begin(N(ir, b), N(name, "h"),
                                       N(repeat_dim, "d"), ERR);
    mrt_ir_destroy(b);
    return optional() ? st == MRT_OK : status_ok(st, ERR);
}

static int c_ir_block_link(void)
{
    mrt_error err = {0};
    mrt_ir *b = block_ir();
    mrt_status st = mrt_ir_block_in(N(ir, b), N(inner, "z"), N(outer, "x"),
                                    ERR);
    mrt_ir_destroy(b);
    return optional() ? st == MRT_OK : status_ok(st, ERR);
}

static int c_ir_block_carry(void)
{
    mrt_error err = {0};
    mrt_ir *b = block_ir();
    if (mrt_ir_block_in(b, "z", "x", NULL))
        exit(3);
    mrt_status st = mrt_ir_block_carry(N(ir, b), N(inner, "z"), N(from, "r"),
                                       ERR);
    mrt_ir_destroy(b);
    return optional() ? st == MRT_OK : status_ok(st, ERR);
}

static int c_ir_block_out(void)
{
    mrt_error err = {0};
    mrt_ir *b = block_ir();
    mrt_status st = mrt_ir_block_out(N(ir, b), N(outer, "o"), N(inner, "r"),
                                     ERR);
    mrt_ir_destroy(b);
    return optional() ? st == MRT_OK : status_ok(st, ERR);
}

static int c_ir_block_next(void)
{
    mrt_error err = {0};
    mrt_ir *b = block_ir();
    int i = mrt_ir_block_next(N(ir, b), ERR);
    mrt_ir_destroy(b);
    return optional() ? i == 0 : i == -1 && status_ok(MRT_E_USAGE, ERR);
}

static int c_ir_block_regather(void)
{
    mrt_error err = {0};
    mrt_ir *b = block_ir();
    mrt_status st = mrt_ir_block_regather(N(ir, b), 1, ERR);
    mrt_ir_destroy(b);
    return optional() ? st == MRT_OK : status_ok(st, ERR);
}

static int c_ir_block_recompute(void)
{
    mrt_error err = {0};
    mrt_ir *b = block_ir();
    mrt_status st = mrt_ir_block_recompute(N(ir, b), 1, ERR);
    mrt_ir_destroy(b);
    return optional() ? st == MRT_OK : status_ok(st, ERR);
}

static int c_ir_block_end(void)
{
    mrt_error err = {0};
    mrt_ir *b = block_ir();
    mrt_ir_op op = {.kind = MRT_IR_RELU, .in = {"x"}, .out = "r"};
    for (int i; (i = mrt_ir_block_next(b, NULL)) >= 0;)
        if (mrt_ir_add_op(b, &op, NULL))
            exit(3);
    mrt_status st = mrt_ir_block_end(N(ir, b), ERR);
    mrt_ir_destroy(b);
    return optional() ? st == MRT_OK : status_ok(st, ERR);
}

static int c_ir_set_train(void)
{
    mrt_error err = {0};
    mrt_ir *b = ir(1);
    mrt_ir_train t = {.loss = "x"};
    mrt_status st = mrt_ir_set_train(N(ir, b), N(t, &t), ERR);
    mrt_ir_destroy(b);
    return optional() ? 1 : status_ok(st, ERR);
}

static int c_ir_add_alternative(void)
{
    mrt_error err = {0};
    mrt_ir *b = ir(1);
    mrt_ir_alternative a = {.name = "rep"};
    mrt_status st = mrt_ir_add_alternative(N(ir, b), N(alt, &a), ERR);
    mrt_ir_destroy(b);
    return optional() ? st == MRT_OK : status_ok(st, ERR);
}

static int c_ir_finish(void)
{
    mrt_error err = {0};
    mrt_ir *b = ir(1);
    mrt_ir_op op = {.kind = MRT_IR_RELU, .in = {"x"}, .out = "y"};
    if (mrt_ir_add_op(b, &op, NULL))
        exit(3);
    mrt_spec *s = NULL;
    mrt_status st = mrt_ir_finish(N(ir, b), N(out, &s), ERR);
    mrt_spec_destroy(s);
    mrt_ir_destroy(b);
    return optional() ? st == MRT_OK : status_ok(st, ERR);
}

static int c_destroy(void) /* every destroy accepts NULL */
{
    mrt_spec_destroy(NULL);
    mrt_ir_destroy(NULL);
    mrt_plan_destroy(NULL);
    mrt_compare_destroy(NULL);
    mrt_sweep_destroy(NULL);
    mrt_search_rules_destroy(NULL);
    mrt_search_tensors_destroy(NULL);
    mrt_calibration_destroy(NULL);
    mrt_runner_destroy(NULL);
    mrt_validation_destroy(NULL);
    mrt_schedule_destroy(NULL);
    return 1;
}

static int c_plan_create(void)
{
    mrt_error err = {0};
    mrt_spec *s = spec();
    mrt_plan *p = NULL;
    mrt_status st = mrt_plan_create(N(spec, s), N(opt?, NULL), N(out, &p),
                                    ERR);
    mrt_plan_destroy(p);
    mrt_spec_destroy(s);
    return optional() ? st == MRT_OK : status_ok(st, ERR);
}

/* Printers print nothing for a NULL plan or stream. */
static int c_plan_print(int which)
{
    mrt_spec *s = spec();
    mrt_plan *p = plan(s);
    FILE *f = tmpfile();
    if (!f)
        return 0;
    const mrt_plan *pp = N(plan, p);
    FILE *ff = N(f, f);
    if (which == 0)
        mrt_plan_print(pp, ff);
    else if (which == 1)
        mrt_plan_print_json(pp, ff);
    else
        mrt_plan_print_explain(pp, ff);
    long n = ftell(f);
    fclose(f);
    mrt_plan_destroy(p);
    mrt_spec_destroy(s);
    return n == 0;
}
static int c_plan_print_text(void)
{
    return c_plan_print(0);
}
static int c_plan_print_json(void)
{
    return c_plan_print(1);
}
static int c_plan_print_explain(void)
{
    return c_plan_print(2);
}

static int c_plan_get_totals(void)
{
    mrt_plan_totals t = mrt_plan_get_totals(NULL);
    return t.comm_bytes == 0 && t.flops == 0 && t.time_s == 0 &&
           t.peak_memory == 0 && mrt_plan_step_count(NULL) == 0;
}

/* A NULL plan or buffer: 0 (nothing written); a plan that is not
 * pipelined too. */
static int c_plan_stage_layers(void)
{
    char buf[64] = "x";
    mrt_spec *s = spec();
    mrt_plan *p = plan(s);
    int ok = mrt_plan_stage_layers(NULL, buf, sizeof buf) == 0 &&
             mrt_plan_stage_layers(p, NULL, 64) == 0 &&
             mrt_plan_stage_layers(p, buf, sizeof buf) == 0 && buf[0] == 'x';
    mrt_plan_destroy(p);
    mrt_spec_destroy(s);
    return ok;
}

static int c_plan_get_step(void)
{
    mrt_error err = {0};
    mrt_spec *s = spec();
    mrt_plan *p = plan(s);
    mrt_plan_step_info si;
    mrt_status st = mrt_plan_get_step(N(plan, p), 0, N(out, &si), ERR);
    mrt_plan_destroy(p);
    mrt_spec_destroy(s);
    return optional() ? st == MRT_OK : status_ok(st, ERR);
}

/* A plan's values (meshrt show's getters). */
static int c_plan_value_count(void)
{
    return mrt_plan_value_count(NULL) == 0 &&
           mrt_plan_find_value(NULL, "x") == -1;
}

static int c_plan_get_value(void)
{
    mrt_error err = {0};
    mrt_spec *s = spec();
    mrt_plan *p = plan(s);
    mrt_plan_value_info vi;
    mrt_status st = mrt_plan_get_value(N(plan, p), 0, N(out, &vi), ERR);
    mrt_plan_destroy(p);
    mrt_spec_destroy(s);
    return optional() ? st == MRT_OK : status_ok(st, ERR);
}

/* A plan's memory by kind. */
static int c_memory_names(void)
{
    return mrt_memory_kind_name(MRT_MEM_KIND_COUNT) == NULL &&
           mrt_plan_value_kind(NULL, 0) == -1 && mrt_plan_op_count(NULL) == 0 &&
           mrt_plan_op_user(NULL, 0) == -1 &&
           mrt_plan_op_phase(NULL, 0) == -1 &&
           mrt_plan_op_name(NULL, 0) == NULL;
}

static int c_parse_bytes(void)
{
    int64_t b = 7;
    mrt_status st = mrt_parse_bytes(N(s, "80GB"), N(bytes, &b));
    return st == MRT_E_USAGE && b == 7;
}

static int c_plan_get_memory(void)
{
    mrt_error err = {0};
    mrt_spec *s = spec();
    mrt_plan *p = plan(s);
    mrt_plan_memory m;
    mrt_status st = mrt_plan_get_memory(N(plan, p), -1, N(out, &m), ERR);
    mrt_plan_destroy(p);
    mrt_spec_destroy(s);
    return optional() ? st == MRT_OK : status_ok(st, ERR);
}

static int c_plan_memory_timeline(void)
{
    mrt_spec *s = spec();
    mrt_plan *p = plan(s);
    int64_t rows[4][MRT_MEM_KIND_COUNT];
    int n = mrt_plan_memory_timeline(N(plan, p), -1, N(rows?, rows));
    mrt_plan_destroy(p);
    mrt_spec_destroy(s);
    return strcmp(arg, "plan") ? n == 1 : n == -1;
}

static int c_plan_find_value(void)
{
    mrt_spec *s = spec();
    mrt_plan *p = plan(s);
    int v = mrt_plan_find_value(N(plan, p), N(name, "x"));
    mrt_plan_destroy(p);
    mrt_spec_destroy(s);
    return v == -1;
}

static int c_plan_get_shard(void)
{
    mrt_error err = {0};
    mrt_spec *s = spec();
    mrt_plan *p = plan(s);
    int64_t start[2], extent[2];
    mrt_status st = mrt_plan_get_shard(N(plan, p), 0, 0, N(start, start),
                                       N(extent, extent), ERR);
    mrt_plan_destroy(p);
    mrt_spec_destroy(s);
    return optional() ? st == MRT_OK : status_ok(st, ERR);
}

static int c_plan_get_mesh(void)
{
    mrt_spec *s = spec();
    mrt_plan *p = plan(s);
    mrt_mesh_info m;
    memset(&m, 0xff, sizeof m);
    mrt_plan_get_mesh(N(plan, p), N(out, &m));
    mrt_plan_destroy(p);
    mrt_spec_destroy(s);
    return strcmp(arg, "plan") || (m.naxes == 0 && m.nranks == 0);
}

static int c_spec_get_link(void)
{
    mrt_spec *s = spec();
    double lat = 0, bw = 0;
    int k = mrt_spec_get_link(N(spec, s), N(axis, "data"), N(latency_us?, &lat),
                              N(bandwidth_GBps?, &bw));
    mrt_spec_destroy(s);
    return k == 0; /* the spec has no network: */
}

/* -1 for a NULL spec or plan; a NULL out counts only. */
static int c_plan_check_budgets(void)
{
    mrt_spec *s = spec();
    mrt_plan *p = plan(s);
    mrt_budget_violation v[2];
    int n = mrt_plan_check_budgets(N(spec, s), N(plan, p), N(out?, v), 2);
    mrt_plan_destroy(p);
    mrt_spec_destroy(s);
    return optional() ? n == 0 : n == -1;
}

static int c_plan_warnings(void)
{
    mrt_spec *s = spec();
    mrt_plan *p = plan(s);
    mrt_warning w[4];
    int n = mrt_plan_warnings(N(spec, s), N(plan, p), N(opt?, NULL),
                              N(out?, w), 4);
    mrt_plan_destroy(p);
    mrt_spec_destroy(s);
    return optional() ? n >= 0 : n == -1;
}

static int c_compare_create(void)
{
    mrt_error err = {0};
    mrt_spec *s = spec();
    mrt_compare *c = NULL;
    mrt_status st = mrt_compare_create(N(spec, s), N(opt?, NULL), N(out, &c),
                                       ERR);
    mrt_compare_destroy(c);
    mrt_spec_destroy(s);
    return optional() ? st == MRT_OK : status_ok(st, ERR);
}

static int c_sweep_create(void)
{
    mrt_error err = {0};
    mrt_sweep *w = NULL;
    const int64_t values[] = {4, 8};
    mrt_spec_load_options o = {.text = spec_text, .len = sizeof spec_text - 1};
    mrt_status st = mrt_sweep_create(N(path, "null.yaml"), N(load?, &o),
                                     N(dim, "d"), 2, N(values, values),
                                     N(opt?, NULL), N(out, &w), ERR);
    mrt_sweep_destroy(w);
    return optional() ? 1 : status_ok(st, ERR);
}

static int c_sweep_create_points(void)
{
    mrt_error err = {0};
    mrt_sweep *w = NULL;
    const mrt_sweep_point pts[] = {{.dims = "d=4"}, {.dims = "d=8"}};
    mrt_spec_load_options o = {.text = spec_text, .len = sizeof spec_text - 1};
    mrt_status st = mrt_sweep_create_points(
        N(path, "null.yaml"), N(load?, &o), N(what?, "d"), 2, N(points, pts),
        N(opt?, NULL), N(out, &w), ERR);
    mrt_sweep_destroy(w);
    return optional() ? 1 : status_ok(st, ERR);
}

static int c_spec_get_info(void)
{
    mrt_spec *s = spec();
    mrt_spec_info in;
    memset(&in, 0xff, sizeof in);
    mrt_spec_get_info(N(spec, s), N(out, &in));
    mrt_spec_destroy(s);
    return strcmp(arg, "spec") || (in.path == NULL && in.ntensors == 0);
}

static int c_spec_get_dim(void)
{
    mrt_spec *s = spec();
    int64_t size = 0;
    const char *d = mrt_spec_get_dim(N(spec, s), 0, N(size?, &size));
    mrt_spec_destroy(s);
    return optional() ? d != NULL : d == NULL;
}

static int c_spec_find_dim(void)
{
    mrt_spec *s = spec();
    int i = mrt_spec_find_dim(N(spec, s), N(name, "d"));
    mrt_spec_destroy(s);
    return i == -1;
}

static int c_spec_get_tensor(void)
{
    mrt_error err = {0};
    mrt_spec *s = spec();
    mrt_spec_tensor_info ti;
    mrt_status st = mrt_spec_get_tensor(N(spec, s), 0, N(out, &ti), ERR);
    mrt_spec_destroy(s);
    return optional() ? st == MRT_OK : status_ok(st, ERR);
}

static int c_spec_get_alternative(void)
{
    return mrt_spec_get_alternative(NULL, 0) == NULL;
}

static int c_spec_select_alternative(void)
{
    mrt_error err = {0};
    mrt_spec *s = spec(), *d = NULL;
    mrt_status st = mrt_spec_select_alternative(N(spec, s), N(name, "rep"),
                                                N(out, &d), ERR);
    mrt_spec_destroy(d);
    mrt_spec_destroy(s);
    return optional() ? st == MRT_OK : status_ok(st, ERR);
}

static int c_search_rules_create(void)
{
    mrt_error err = {0};
    mrt_spec *s = spec();
    mrt_search_rules_report *r = NULL;
    mrt_status st = mrt_search_rules_create(N(spec, s), N(opt?, NULL),
                                            N(out, &r), ERR);
    mrt_search_rules_destroy(r);
    mrt_spec_destroy(s);
    return optional() ? st == MRT_OK : status_ok(st, ERR);
}

static int c_search_tensors_create(void)
{
    mrt_error err = {0};
    mrt_spec *s = spec();
    mrt_search_tensors_report *r = NULL;
    mrt_status st = mrt_search_tensors_create(N(spec, s), N(opt?, NULL),
                                              N(out, &r), ERR);
    mrt_search_tensors_destroy(r);
    mrt_spec_destroy(s);
    return optional() ? 1 : status_ok(st, ERR);
}

/* NULL spec or rules: "" in buf; NULL buf: NULL. */
static int c_search_format_rules(void)
{
    mrt_spec *s = spec();
    mrt_search_axes rules[2] = {{0}};
    char buf[256] = "x";
    char *r = mrt_search_format_rules(N(spec, s), N(rules, rules), N(buf, buf),
                                      sizeof buf);
    mrt_spec_destroy(s);
    return !strcmp(arg, "buf") ? r == NULL : r == buf && buf[0] == '\0';
}

static int c_search_write_layout(void)
{
    mrt_spec *s = spec();
    mrt_search_axes rules[2] = {{0}};
    FILE *f = tmpfile();
    if (!f)
        return 0;
    mrt_search_write_layout(N(spec, s), N(rules, rules), N(f, f));
    long n = ftell(f);
    fclose(f);
    mrt_spec_destroy(s);
    return n == 0;
}

static int c_machine_get_default_path(void)
{
    return mrt_machine_get_default_path(NULL, 16) == NULL;
}

static int c_mesh_parse(void)
{
    mrt_error err = {0};
    mrt_mesh_info m;
    mrt_status st = mrt_mesh_parse(N(s, "data=2"), N(out, &m), ERR);
    return optional() ? st == MRT_OK : status_ok(st, ERR);
}

static int c_file_write(void)
{
    mrt_error err = {0};
    char path[] = "/tmp/null_args_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 0;
    mrt_status st = mrt_file_write(N(path, path), N(what, "a file"),
                                   N(write, write_nothing), N(ctx?, NULL),
                                   ERR);
    remove(path);
    return optional() ? st == MRT_OK : status_ok(st, ERR);
}

/* f NULL: nothing; s NULL: the JSON null. */
static int c_json_write_string(void)
{
    FILE *f = tmpfile();
    char buf[16] = "";
    if (!f)
        return 0;
    mrt_json_write_string(N(f, f), N(s, "a"));
    rewind(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    return !strcmp(arg, "f") ? n == 0 : !strcmp(buf, "null");
}

/* buf NULL: NULL; fmt NULL: "%.17g". */
static int c_json_format_number(void)
{
    char buf[MRT_JSON_NUMBER_MAX];
    const char *r = mrt_json_format_number(N(buf, buf), N(fmt, "%.3f"), 0.5);
    return !strcmp(arg, "buf") ? r == NULL : r && !strcmp(r, "0.5");
}

/* ---- meshrt_mpi.h: MPI started as a singleton ---------------------- */

static void mpi_up(void)
{
    if (mrt_init(NULL) != MRT_OK || MPI_Init(NULL, NULL) != MPI_SUCCESS)
        exit(3);
}

static int c_mpi_plain(void)
{
    mpi_up();
    int ok = mrt_comm_agree(MPI_COMM_WORLD, MRT_OK, NULL) == MRT_OK &&
             mrt_init(NULL) == MRT_OK; /* later calls do nothing */
    MPI_Finalize();
    return ok;
}

static int c_calibration_create(void)
{
    mrt_error err = {0};
    mpi_up();
    mrt_calibration *c = NULL;
    mrt_status st = MRT_OK;
    if (!strcmp(arg, "out"))
        st = mrt_calibration_create(MPI_COMM_WORLD, NULL, 1, NULL, ERR);
    int ok = status_ok(st, ERR);
    mrt_calibration_destroy(c);
    MPI_Finalize();
    return ok;
}

static int c_calibration_print(void)
{
    mrt_calibration_print(NULL, stdout);
    return 1;
}

static int c_calibration_save(void)
{
    mrt_error err = {0};
    mrt_status st = mrt_calibration_save(NULL, "/tmp/x.yaml", ERR);
    return status_ok(st, ERR);
}

typedef struct runner_fix {
    mrt_spec *s;
    mrt_plan *p;
    mrt_runner *r;
} runner_fix;

static runner_fix runner(void)
{
    mpi_up();
    runner_fix x = {spec(), NULL, NULL};
    x.p = plan(x.s);
    if (mrt_runner_create(x.s, x.p, MPI_COMM_WORLD, &x.r, NULL))
        exit(3);
    return x;
}

static void runner_down(runner_fix *x)
{
    mrt_runner_destroy(x->r);
    mrt_plan_destroy(x->p);
    mrt_spec_destroy(x->s);
    MPI_Finalize();
}

static int c_runner_create(void)
{
    mrt_error err = {0};
    mpi_up();
    mrt_spec *s = spec();
    mrt_plan *p = plan(s);
    mrt_runner *r = NULL;
    mrt_status st = mrt_runner_create(N(spec, s), N(plan, p), MPI_COMM_WORLD,
                                      N(out, &r), ERR);
    int ok = optional() ? st == MRT_OK : status_ok(st, ERR);
    mrt_runner_destroy(r);
    mrt_plan_destroy(p);
    mrt_spec_destroy(s);
    MPI_Finalize();
    return ok;
}

static int c_runner_tensor_info(void)
{
    mrt_error err = {0};
    runner_fix x = runner();
    mrt_tensor_info ti;
    mrt_status st = mrt_runner_tensor_info(N(r, x.r), N(name, "x"), N(out, &ti),
                                           ERR);
    int ok = optional() ? st == MRT_OK : status_ok(st, ERR);
    runner_down(&x);
    return ok;
}

static int c_runner_set_input(void)
{
    mrt_error err = {0};
    runner_fix x = runner();
    static float data[16];
    mrt_status st = mrt_runner_set_input(N(r, x.r), N(name, "x"), N(data, data),
                                         MRT_WHOLE, ERR);
    int ok = optional() ? st == MRT_OK : status_ok(st, ERR);
    runner_down(&x);
    return ok;
}

static int c_runner_execute(void)
{
    mrt_error err = {0};
    runner_fix x = runner();
    mrt_status st = mrt_runner_execute(N(r, x.r), N(opt?, NULL), ERR);
    int ok = optional() ? st == MRT_OK : status_ok(st, ERR);
    runner_down(&x);
    return ok;
}

static int c_runner_restart(void)
{
    mrt_error err = {0};
    runner_fix x = runner();
    mrt_status st = mrt_runner_restart(N(r, x.r), ERR);
    int ok = optional() ? st == MRT_OK : status_ok(st, ERR);
    runner_down(&x);
    return ok;
}

static int c_runner_get_output(void)
{
    mrt_error err = {0};
    runner_fix x = runner();
    static float data[16];
    mrt_status st = mrt_runner_execute(x.r, NULL, NULL);
    if (!st)
        st = mrt_runner_get_output(N(r, x.r), N(name, "y"), N(data, data),
                                   MRT_WHOLE, ERR);
    int ok = optional() ? st == MRT_OK : status_ok(st, ERR);
    runner_down(&x);
    return ok;
}

static int c_validation_create(void)
{
    mrt_error err = {0};
    mpi_up();
    mrt_validation *v = NULL;
    mrt_status st = mrt_validation_create(MPI_COMM_WORLD, 1, N(out, &v), ERR);
    int ok = optional() ? st == MRT_OK : status_ok(st, ERR);
    mrt_validation_destroy(v);
    MPI_Finalize();
    return ok;
}

/* A validation of the spec's plan added and run (or a failure added,
 * or a NULL one run), with the argument named NULL. */
static int c_validation(void)
{
    mrt_error err = {0};
    mpi_up();
    mrt_spec *s = spec();
    mrt_plan *p = plan(s);
    mrt_validation *v = NULL;
    if (mrt_validation_create(MPI_COMM_WORLD, 1, &v, NULL))
        exit(3);
    mrt_status st;
    const mrt_error *e = ERR;
    if (!strcmp(arg, "why?") || !strcmp(arg, "vf")) {
        st = mrt_validation_add_failed(N(vf, v), "x", N(why?, &err));
        e = NULL; /* no error argument */
    } else if (!strcmp(arg, "vr")) {
        st = mrt_validation_run(NULL, ERR);
    } else {
        st = mrt_validation_add(N(v, v), N(name?, "x"), N(spec, s), N(plan, p),
                                ERR);
        if (st == MRT_OK)
            st = mrt_validation_run(v, ERR);
        mrt_validation_print(v, 0, stdout);
    }
    int ok = optional() ? st == MRT_OK : status_ok(st, e);
    mrt_validation_destroy(v);
    mrt_plan_destroy(p);
    mrt_spec_destroy(s);
    MPI_Finalize();
    return ok;
}

/* The products of the spec's plan timed (it has none: nothing to time)
 * with the argument named NULL. */
static int c_machine_time_products(void)
{
    mrt_error err = {0};
    mpi_up();
    mrt_spec *s = spec();
    mrt_plan *p = plan(s);
    int timed = -1;
    mrt_status st = mrt_machine_time_products(MPI_COMM_WORLD, N(plans, &p), 1,
                                              0, N(timed?, &timed), ERR);
    int ok = optional() ? st == MRT_OK : status_ok(st, ERR);
    mrt_plan_destroy(p);
    mrt_spec_destroy(s);
    MPI_Finalize();
    return ok;
}

static int c_machine_time_collectives(void)
{
    mrt_error err = {0};
    mpi_up();
    mrt_spec *s = spec();
    mrt_plan *p = plan(s);
    int timed = -1;
    mrt_status st = mrt_machine_time_collectives(
        MPI_COMM_WORLD, N(plans, &p), 1, N(timed?, &timed), ERR);
    int ok = optional() ? st == MRT_OK : status_ok(st, ERR);
    mrt_plan_destroy(p);
    mrt_spec_destroy(s);
    MPI_Finalize();
    return ok;
}

static int c_validation_set_products(void)
{
    mrt_validation_set_products(NULL, 3);
    return 1;
}

static int c_validation_set_collectives(void)
{
    mrt_validation_set_collectives(NULL, 3);
    return 1;
}

static int c_validation_print(void)
{
    mrt_validation_print(NULL, 0, stdout);
    mrt_validation_print(NULL, 1, NULL);
    return 1;
}

static int c_run(void)
{
    mrt_error err = {0};
    mpi_up();
    mrt_spec *s = spec();
    mrt_plan *p = plan(s);
    mrt_status st = mrt_run(N(spec, s), N(plan, p), N(opt?, NULL), ERR);
    int ok = optional() ? st == MRT_OK : status_ok(st, ERR);
    mrt_plan_destroy(p);
    mrt_spec_destroy(s);
    MPI_Finalize();
    return ok;
}

static int c_schedule_create(void)
{
    mrt_error err = {0};
    mrt_schedule *s = NULL;
    mrt_status st = mrt_schedule_create(N(kind, "1f1b"), 2, 1, 4, N(out, &s),
                                        ERR);
    mrt_schedule_destroy(s);
    return optional() ? st == MRT_OK : status_ok(st, ERR);
}

static int c_plan_get_schedule(void) /* NULL for NULL, and no pipeline */
{
    mrt_spec *s = spec();
    mrt_plan *p = plan(s);
    const mrt_schedule *sc = mrt_plan_get_schedule(N(plan, p));
    mrt_plan_destroy(p);
    mrt_spec_destroy(s);
    return sc == NULL;
}

static int c_schedule_get(void)
{
    mrt_error err = {0};
    mrt_schedule *s = NULL;
    if (mrt_schedule_create("gpipe", 2, 1, 2, &s, NULL))
        exit(3);
    mrt_schedule_info info;
    mrt_schedule_slot_info slot;
    memset(&info, 0xff, sizeof info);
    mrt_schedule_get_info(N(s, s), N(out, &info));
    int ok = strcmp(arg, "s") || info.stages == 0;
    mrt_status st = mrt_schedule_get_slot(N(s, s), 0, 0, N(out, &slot), ERR);
    ok = ok && (optional() ? st == MRT_OK : status_ok(st, ERR));
    ok = ok &&
         mrt_schedule_in_flight(N(s, s), 0) == (strcmp(arg, "s") ? 2 : -1);
    mrt_schedule_destroy(s);
    return ok;
}

/* ---- the table ----------------------------------------------------- */

static const struct {
    const char *fn;   /* the public function (several for shared cases) */
    const char *args; /* its pointer arguments, "a,b?,err?"; "-": none */
    int (*run)(void);
} cases[] = {
    {"mrt_version", "-", c_plain},
    {"mrt_status_name", "-", c_plain},
    {"mrt_dtype_name", "-", c_plain},
    {"mrt_planner_name", "-", c_plain},
    {"mrt_optimizer_name", "-", c_plain},
    {"mrt_plan_step_kind_name", "-", c_plain},
    {"mrt_error_format", "e,buf", c_error_format},
    {"mrt_spec_load_ex", "path,opt?,out,err?", c_spec_load_ex},
    {"mrt_spec_load", "path,out,err?", c_spec_load},
    {"mrt_spec_load_string", "name?,text,out,err?", c_spec_load_string},
    {"mrt_spec_destroy", "-", c_destroy},
    {"mrt_ir_create", "name?,axis,size,out,err?", c_ir_create},
    {"mrt_ir_destroy", "-", c_destroy},
    {"mrt_ir_set_dtype", "ir,err?", c_ir_set_dtype},
    {"mrt_ir_add_dim", "ir,name,err?", c_ir_add_dim},
    {"mrt_ir_set_rule", "ir,rule,err?", c_ir_set_rule},
    {"mrt_ir_add_tensor", "ir,t,err?", c_ir_add_tensor},
    {"mrt_ir_add_op", "ir,op,err?", c_ir_add_op},
    {"mrt_ir_set_expect", "ir,b,err?", c_ir_set_expect},
    {"mrt_ir_set_link", "ir,axis,err?", c_ir_set_link},
    {"mrt_ir_set_outputs", "ir,names,err?", c_ir_set_outputs},
    {"mrt_ir_block_begin", "ir,name,repeat_dim,err?", c_ir_block_begin},
    {"mrt_ir_block_in", "ir,inner,outer,err?", c_ir_block_link},
    {"mrt_ir_block_carry", "ir,inner,from,err?", c_ir_block_carry},
    {"mrt_ir_block_out", "ir,outer,inner,err?", c_ir_block_out},
    {"mrt_ir_block_next", "ir,err?", c_ir_block_next},
    {"mrt_ir_block_end", "ir,err?", c_ir_block_end},
    {"mrt_ir_block_recompute", "ir,err?", c_ir_block_recompute},
    {"mrt_ir_block_regather", "ir,err?", c_ir_block_regather},
    {"mrt_ir_set_train", "ir,t,err?", c_ir_set_train},
    {"mrt_ir_add_alternative", "ir,alt,err?", c_ir_add_alternative},
    {"mrt_ir_finish", "ir,out,err?", c_ir_finish},
    {"mrt_plan_create", "spec,opt?,out,err?", c_plan_create},
    {"mrt_plan_destroy", "-", c_destroy},
    {"mrt_plan_print", "plan,f", c_plan_print_text},
    {"mrt_plan_print_json", "plan,f", c_plan_print_json},
    {"mrt_plan_print_explain", "plan,f", c_plan_print_explain},
    {"mrt_plan_get_totals", "plan", c_plan_get_totals},
    {"mrt_plan_step_count", "plan", c_plan_get_totals},
    {"mrt_plan_stage_layers", "plan,buf", c_plan_stage_layers},
    {"mrt_plan_get_step", "plan,out,err?", c_plan_get_step},
    {"mrt_plan_value_count", "-", c_plan_value_count},
    {"mrt_plan_get_value", "plan,out,err?", c_plan_get_value},
    {"mrt_memory_kind_name", "-", c_memory_names},
    {"mrt_plan_value_kind", "-", c_memory_names},
    {"mrt_plan_op_count", "-", c_memory_names},
    {"mrt_plan_op_user", "-", c_memory_names},
    {"mrt_plan_op_phase", "-", c_memory_names},
    {"mrt_plan_op_name", "-", c_memory_names},
    {"mrt_plan_get_memory", "plan,out,err?", c_plan_get_memory},
    {"mrt_parse_bytes", "s,bytes", c_parse_bytes},
    {"mrt_plan_memory_timeline", "plan,rows?", c_plan_memory_timeline},
    {"mrt_plan_find_value", "plan,name", c_plan_find_value},
    {"mrt_plan_get_shard", "plan,start,extent,err?", c_plan_get_shard},
    {"mrt_plan_get_mesh", "plan,out", c_plan_get_mesh},
    {"mrt_schedule_create", "kind,out,err?", c_schedule_create},
    {"mrt_schedule_destroy", "-", c_destroy},
    {"mrt_plan_get_schedule", "plan", c_plan_get_schedule},
    {"mrt_schedule_get_info", "s,out", c_schedule_get},
    {"mrt_schedule_get_slot", "s,out,err?", c_schedule_get},
    {"mrt_schedule_in_flight", "s", c_schedule_get},
    {"mrt_spec_get_link", "spec,axis,latency_us?,bandwidth_GBps?",
     c_spec_get_link},
    {"mrt_plan_check_budgets", "spec,plan,out?", c_plan_check_budgets},
    {"mrt_plan_warnings", "spec,plan,opt?,out?", c_plan_warnings},
    {"mrt_compare_create", "spec,opt?,out,err?", c_compare_create},
    {"mrt_compare_destroy", "-", c_destroy},
    {"mrt_sweep_create", "path,load?,dim,values,opt?,out,err?", c_sweep_create},
    {"mrt_sweep_create_points", "path,load?,what?,points,opt?,out,err?",
     c_sweep_create_points},
    {"mrt_sweep_destroy", "-", c_destroy},
    {"mrt_spec_get_info", "spec,out", c_spec_get_info},
    {"mrt_spec_get_dim", "spec,size?", c_spec_get_dim},
    {"mrt_spec_find_dim", "spec,name", c_spec_find_dim},
    {"mrt_spec_get_tensor", "spec,out,err?", c_spec_get_tensor},
    {"mrt_spec_get_alternative", "spec", c_spec_get_alternative},
    {"mrt_spec_select_alternative", "spec,name,out,err?",
     c_spec_select_alternative},
    {"mrt_search_rules_create", "spec,opt?,out,err?", c_search_rules_create},
    {"mrt_search_rules_destroy", "-", c_destroy},
    {"mrt_search_tensors_create", "spec,opt?,out,err?",
     c_search_tensors_create},
    {"mrt_search_tensors_destroy", "-", c_destroy},
    {"mrt_search_format_rules", "spec,rules,buf", c_search_format_rules},
    {"mrt_search_write_layout", "spec,rules,f", c_search_write_layout},
    {"mrt_machine_get_default_path", "buf", c_machine_get_default_path},
    {"mrt_mesh_parse", "s,out,err?", c_mesh_parse},
    {"mrt_file_write", "path,what,write,ctx?,err?", c_file_write},
    {"mrt_file_remove_partial", "-", c_plain},
    {"mrt_json_write_string", "f,s", c_json_write_string},
    {"mrt_json_format_number", "buf,fmt", c_json_format_number},
    {"mrt_calibration_create", "out", c_calibration_create},
    {"mrt_calibration_destroy", "-", c_destroy},
    {"mrt_calibration_print", "c", c_calibration_print},
    {"mrt_calibration_save", "c", c_calibration_save},
    {"mrt_comm_agree", "-", c_mpi_plain},
    {"mrt_init", "-", c_mpi_plain},
    {"mrt_runner_create", "spec,plan,out,err?", c_runner_create},
    {"mrt_runner_destroy", "-", c_destroy},
    {"mrt_runner_tensor_info", "r,name,out,err?", c_runner_tensor_info},
    {"mrt_runner_set_input", "r,name,data,err?", c_runner_set_input},
    {"mrt_runner_execute", "r,opt?,err?", c_runner_execute},
    {"mrt_runner_restart", "r,err?", c_runner_restart},
    {"mrt_runner_get_output", "r,name,data,err?", c_runner_get_output},
    {"mrt_run", "spec,plan,opt?,err?", c_run},
    {"mrt_validation_create", "out,err?", c_validation_create},
    {"mrt_validation_destroy", "-", c_destroy},
    {"mrt_validation_add", "v,spec,plan,name?,err?", c_validation},
    {"mrt_validation_add_failed", "vf,why?", c_validation},
    {"mrt_validation_run", "vr", c_validation},
    {"mrt_validation_print", "v,f", c_validation_print},
    {"mrt_validation_set_products", "v", c_validation_set_products},
    {"mrt_validation_set_collectives", "v", c_validation_set_collectives},
    {"mrt_machine_time_products", "plans,timed?,err?", c_machine_time_products},
    {"mrt_machine_time_collectives", "plans,timed?,err?",
     c_machine_time_collectives},
};

int main(int argc, char **argv)
{
    size_t n = sizeof cases / sizeof cases[0];
    if (argc == 2 && !strcmp(argv[1], "list")) {
        for (size_t i = 0; i < n; i++) {
            char args[128];
            snprintf(args, sizeof args, "%s", cases[i].args);
            for (char *a = strtok(args, ","); a; a = strtok(NULL, ","))
                printf("%s %s\n", cases[i].fn, a);
        }
        return 0;
    }
    if (argc != 3)
        return fprintf(stderr, "usage: null_args list | FUNCTION ARG\n"), 2;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(cases[i].fn, argv[1])) {
            arg = argv[2];
            /* optional arguments keep their '?' for N() and optional() */
            return cases[i].run() ? 0 : 1;
        }
    return fprintf(stderr, "null_args: no case for %s\n", argv[1]), 2;
}
