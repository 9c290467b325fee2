/*
 * test_scale.c — planning grows linearly with the program, not
 * quadratically (issue 9: 30,000 training ops took 68 s to plan).
 *
 * The check does not time anything: the machines are shared and noisy.
 * It plans a generated training program of n layers and one of 4n, and
 * compares the elementary steps the loader and the planner count where a
 * careless structure is super-linear (base/work.h: names compared in
 * lookups, values examined while the arena is placed).  A linear pass
 * does 4 times the steps on the program 4 times as long, an n log n one
 * a little more, a quadratic one 16 times: the bound is 8, for each
 * stage (load with expansion and gradients, plan, print).
 *
 * The program stresses every lookup the loader does by name: long names
 * that share their first 40 characters (the gradients' scratch tensors
 * are named after them), weights read by many layers (each read adds a
 * gradient contribution), an input tensor and a dim per layer (the
 * `tensors:` and `dims:` mappings grow with the program), and every
 * layer's result listed under `outputs:`.
 *
 * It loads, plans and prints through meshrt.h; the two internal headers
 * are what it tests: the step counters of base/work.h, and the arena's
 * placement (ops/first_fit.c) against the scan it replaced.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "first_fit.h"
#include "meshrt.h"
#include "work.h"

#define NWEIGHTS 8 /* pairs: up and down; 16 parameters */
/* Long names that share their first 40 characters. */
#define ACT "activation_of_a_layer_with_a_long_long_name_"

/* Writes the program of `layers` layers to a new temporary file, whose
 * name goes to path. */
static void write_spec(int layers, char path[64])
{
    snprintf(path, 64, "/tmp/mrt_test_scale_XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "mesh: {x: 2, y: 2}\n"
               "dims:\n  batch: 8\n  d_model: 8\n  d_ff: 16\n");
    for (int i = 0; i < layers; i++)
        fprintf(f, "  f%d: 16\n", i);
    fprintf(f, "layout: {batch: x, d_ff: y}\n"
               "tensors:\n"
               "  h0: {shape: [batch, d_model]}\n"
               "  target: {shape: [batch, d_model]}\n");
    for (int w = 0; w < NWEIGHTS; w++)
        fprintf(f,
                "  up%d: {shape: [d_model, d_ff]}\n"
                "  down%d: {shape: [d_ff, d_model]}\n",
                w, w);
    for (int i = 0; i < layers; i++)
        fprintf(f, "  bias%d: {shape: [d_model], init: {fill: 0.01}}\n", i);
    fprintf(f, "ops:\n");
    for (int i = 0; i < layers; i++) {
        int w = i % NWEIGHTS;
        char h[64];
        snprintf(h, sizeof h, i ? ACT "%d" : "h0", i);
        fprintf(f,
                "  - {op: einsum, in: [%s, up%d], out: " ACT "up%d, "
                "shape: [batch, d_ff]}\n"
                "  - {op: rename, in: [" ACT "up%d], from: d_ff, to: f%d, "
                "out: " ACT "f%d}\n"
                "  - {op: tanh, in: [" ACT "f%d], out: " ACT "t%d}\n"
                "  - {op: rename, in: [" ACT "t%d], from: f%d, to: d_ff, "
                "out: " ACT "g%d}\n"
                "  - {op: einsum, in: [" ACT "g%d, down%d], out: " ACT "dn%d, "
                "shape: [batch, d_model]}\n"
                "  - {op: add, in: [" ACT "dn%d, bias%d], out: " ACT "b%d}\n"
                "  - {op: add, in: [" ACT "b%d, %s], out: " ACT "%d}\n",
                h, w, i, i, i, i, i, i, i, i, i, i, w, i, i, i, i, i, h, i + 1);
    }
    fprintf(f, "  - {op: mse, in: [" ACT "%d, target], out: loss}\n", layers);
    fprintf(f, "outputs: [loss");
    for (int i = 1; i <= layers; i++)
        fprintf(f, ", " ACT "%d", i);
    fprintf(f, "]\ntrain: {loss: loss, lr: 0.01, params: [");
    for (int w = 0; w < NWEIGHTS; w++)
        fprintf(f, "%sup%d, down%d", w ? ", " : "", w, w);
    fprintf(f, "]}\n");
    ck_assert_int_eq(fclose(f), 0);
}

typedef struct work {
    uint64_t load, plan, print;
    int nsteps;
} work;

/* The steps of loading, planning (the auto planner: search, rule and
 * Mesh-TF) and printing (text and JSON) the program of `layers`. */
static work measure(int layers)
{
    char path[64];
    write_spec(layers, path);
    work w = {0};
    mrt_error err = {0};
    mrt_spec *s = NULL;
    mrt_plan *p = NULL;
    uint64_t t0 = mrt_work_steps;
    mrt_status st = mrt_spec_load(path, &s, &err);
    unlink(path);
    if (st != MRT_OK)
        ck_abort_msg("spec: %d:%d: %s", err.line, err.column, err.message);
    uint64_t t1 = mrt_work_steps;
    if (mrt_plan_create(s, NULL, &p, &err) != MRT_OK)
        ck_abort_msg("plan: %s", err.message);
    uint64_t t2 = mrt_work_steps;
    FILE *null = fopen("/dev/null", "w");
    ck_assert_ptr_nonnull(null);
    mrt_plan_print(p, null);
    mrt_plan_print_json(p, null);
    fclose(null);
    w.load = t1 - t0;
    w.plan = t2 - t1;
    w.print = mrt_work_steps - t2;
    w.nsteps = mrt_plan_step_count(p);
    mrt_plan_destroy(p);
    mrt_spec_destroy(s);
    return w;
}

/* big / small, printed; the stage counts something that grows with the
 * program (a lookup per name, a value per op), so the ratio is defined. */
static double ratio(const char *stage, uint64_t small, uint64_t big)
{
    ck_assert_msg(small > 0, "%s counted no steps", stage);
    double r = (double)big / (double)small;
    printf("%-5s %12llu steps, on 4x the program %12llu: x%.2f\n", stage,
           (unsigned long long)small, (unsigned long long)big, r);
    fflush(stdout);
    return r;
}

START_TEST(planning_is_linear)
{
    const int n = 150;
    work a = measure(n), b = measure(4 * n);
    printf("plan steps: %d and %d\n", a.nsteps, b.nsteps);
    /* the program did grow 4 times (forward, backward and update) */
    ck_assert_int_gt(b.nsteps, 3 * a.nsteps);
    double load = ratio("load", a.load, b.load);
    double plan = ratio("plan", a.plan, b.plan);
    /* printing looks nothing up by name: it may count nothing at all */
    double print = a.print ? ratio("print", a.print, b.print) : 0;
    ck_assert_uint_eq(!a.print, !b.print);
    ck_assert_msg(load < 8 && plan < 8 && print < 8,
                  "4x the program takes x%.2f the steps to load, x%.2f to "
                  "plan, x%.2f to print (linear: 4, quadratic: 16)",
                  load, plan, print);
}
END_TEST

/* The placement the arena had before first_fit.c, a scan of the live
 * blocks sorted by offset for each new block: first_fit.c must place
 * every block where it did. */
static void place_by_scan(int n, const int *def, const int *last,
                          const int64_t *size, int64_t *off)
{
    int *active = malloc((size_t)n * sizeof *active), nactive = 0;
    for (int v = 0; v < n; v++) {
        int k = 0;
        for (int i = 0; i < nactive; i++)
            if (last[active[i]] >= def[v])
                active[k++] = active[i];
        nactive = k;
        int64_t at = 0;
        int pos = 0;
        for (; pos < nactive; pos++) {
            int o = active[pos];
            if (off[o] - at >= size[v])
                break;
            at = off[o] + size[o] > at ? off[o] + size[o] : at;
        }
        off[v] = at;
        memmove(active + pos + 1, active + pos,
                (size_t)(nactive - pos) * sizeof *active);
        active[pos] = v;
        nactive++;
    }
    free(active);
}

START_TEST(first_fit_matches_a_scan)
{
    enum { N = 3000 };
    static int def[N], last[N];
    static int64_t size[N], want[N];
    srand(7 + (unsigned)_i);
    int t = -1;
    for (int v = 0; v < N; v++) {
        /* a few inputs (-1), then steps in order, now and then two
         * values per step; some live to the end, most briefly; sizes
         * mostly small, some large, a few 0 */
        t += v < 5 ? 0 : rand() % 3 == 0 ? 0 : 1;
        def[v] = t;
        int r = rand() % 10;
        last[v] = r == 0 ? N : r < 3 ? t : t + rand() % (r < 8 ? 8 : 400);
        size[v] = 64 * (rand() % 6 == 0 ? 1 + rand() % 200 : rand() % 5);
    }
    place_by_scan(N, def, last, size, want);
    mrt_fit *f = mrt_fit_create(N);
    ck_assert_ptr_nonnull(f);
    for (int v = 0; v < N; v++) {
        mrt_fit_expire(f, def[v]);
        int64_t at = mrt_fit_place(f, v, size[v], last[v]);
        ck_assert_msg(at == want[v], "block %d: offset %lld, the scan %lld", v,
                      (long long)at, (long long)want[v]);
    }
    mrt_fit_destroy(f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("scale");
    TCase *tc = tcase_create("scale");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, planning_is_linear);
    tcase_add_loop_test(tc, first_fit_matches_a_scan, 0, 5);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
