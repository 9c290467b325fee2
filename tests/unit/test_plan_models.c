/*
 * test_plan_models.c — the planner on real models (issue 18, item 5):
 * a dim the mesh does not divide plans like one it does, and a tensor
 * read by several ops gets one reduction of its summed gradient.
 *
 * Uneven: examples/transformer_layer.yaml (each alternative) and
 * transformer_layer_sp.yaml (Megatron's sequence parallelism), planned
 * with a vocab of 64 and 65 (and 256 and 257) on meshes of 3 and 4 ranks:
 * the same collectives op by op (kind as printed, sum or max, axes), and
 * the bytes
 * all ranks hand to MPI equal, except for tensors with the vocab dim,
 * whose bytes scale with the vocab exactly (65/64): the uneven blocks and
 * nothing else.  Before the fix auto found no execution layout splitting
 * an uneven vocab and fell back to the fixed rule (sequence parallelism:
 * 16 collectives instead of 14, 1.7x the wire bytes at GPT-2's sizes).
 *
 * One reduction: the tied embedding of tests/specs/grad_sum/tied.yaml
 * (the lookup as a one-hot einsum, and the output head; tied_embedding.yaml
 * the same with the embedding op) and the input xn
 * of transformer_layer.yaml's q, k and v projections (its gradient asked
 * for with `grads: [x]`): under every strategy (auto, the rule, Mesh-TF)
 * the contributions are added while pending and reduced by one
 * all-reduce, of one shard's bytes.  Before, Mesh-TF and the rule reduced
 * once per use (2 and 3 all-reduces).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planning.h"

static mrt_spec *spec;
static mrt_plan *plan;

static void teardown(void)
{
    mrt_plan_destroy(plan);
    mrt_spec_destroy(spec);
    plan = NULL;
    spec = NULL;
}

/* The whole file at path, NUL-terminated (the caller frees it). */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    ck_assert(s && fread(s, 1, (size_t)n, f) == (size_t)n);
    s[n] = '\0';
    fclose(f);
    return s;
}

/* Loads path (or text, named path) with the overrides, selects the
 * alternative `alt` (NULL: the global rules) and plans it with strategy
 * (MRT_STRATEGY_COUNT: the auto planner): the plan is the caller's. */
static mrt_plan *plan_of(const char *path, const char *text, const char *mesh,
                         const char *dims, const char *alt,
                         mrt_strategy strategy)
{
    mrt_error err = {0};
    mrt_spec *s = NULL, *sel = NULL;
    mrt_spec_load_options lo = {.mesh = mesh,
                                .dims = dims,
                                .text = text,
                                .len = text ? strlen(text) : 0};
    if (mrt_spec_load_ex(path, &lo, &s, &err) != MRT_OK)
        ck_abort_msg("%s: %d:%d: %s", path, err.line, err.column, err.message);
    if (alt) {
        if (mrt_spec_select_alternative(s, alt, &sel, &err) != MRT_OK)
            ck_abort_msg("%s --layout %s: %s", path, alt, err.message);
        mrt_spec_destroy(s);
        s = sel;
    }
    mrt_plan *p = NULL;
    mrt_plan_options opt = {0};
    mrt_status st = strategy == MRT_STRATEGY_COUNT
                        ? mrt_plan_create(s, &opt, &p, &err)
                        : mrt_plan_create_with(s, &opt, strategy, &p, &err);
    if (st != MRT_OK)
        ck_abort_msg("%s: plan: %s", path, err.message);
    mrt_spec_destroy(s);
    return p;
}

/* 1 if value v's layout has spec dim `dim` (by name). */
static int has_dim(const mrt_plan *p, int v, const char *dim)
{
    const mrt_layout *l = &p->value[v].layout;
    for (int i = 0; i < l->ndims; i++)
        if (!strcmp(p->dim_names[l->dim[i]], dim))
            return 1;
    return 0;
}

/* The next collective step of p from *k on (its index), or -1. */
static int next_collective(const mrt_plan *p, int *k)
{
    while (*k < p->nsteps && !mrt_step_is_collective(p->step[*k].kind))
        (*k)++;
    return *k < p->nsteps ? (*k)++ : -1;
}

/* Plans of vocab ve and vu (uneven) have the same collectives, and bytes
 * differing only by the vocab's blocks. */
static void check_like_even(const char *path, const char *mesh, const char *alt,
                            mrt_strategy strategy, int ve, int vu)
{
    char de[32], du[32];
    snprintf(de, sizeof de, "vocab=%d", ve);
    snprintf(du, sizeof du, "vocab=%d", vu);
    mrt_plan *e = plan_of(path, NULL, mesh, de, alt, strategy);
    mrt_plan *u = plan_of(path, NULL, mesh, du, alt, strategy);
    const char *at = alt ? alt : "(global rules)";
    ck_assert_msg(e->fell_back == u->fell_back,
                  "%s %s on %s: auto fell back to the rule at vocab %d only",
                  path, at, mesh, u->fell_back ? vu : ve);
    int n = 0;
    for (int ke = 0, ku = 0;; n++) {
        int a = next_collective(e, &ke), b = next_collective(u, &ku);
        ck_assert_msg((a < 0) == (b < 0),
                      "%s %s on %s: %d collectives at vocab %d, more at %d",
                      path, at, mesh, n, a < 0 ? ve : vu, a < 0 ? vu : ve);
        if (a < 0)
            break;
        const mrt_step *x = &e->step[a], *y = &u->step[b];
        /* kinds as the plan prints them: an all-to-all over one axis may
         * be a group all-to-all of it, the same collective */
        ck_assert_msg(
            !strcmp(mrt_step_kind_name(x->kind), mrt_step_kind_name(y->kind)) &&
                x->axes == y->axes && x->max == y->max && x->op == y->op,
            "%s %s on %s: collective %d is %s%s over %#x (op %d) "
            "at vocab %d, %s%s over %#x (op %d) at %d",
            path, at, mesh, n, mrt_step_kind_name(x->kind),
            x->max ? "(max)" : "", x->axes, x->op, ve,
            mrt_step_kind_name(y->kind), y->max ? "(max)" : "", y->axes, y->op,
            vu);
        int vocab = has_dim(e, x->in, "vocab") || has_dim(e, x->out, "vocab");
        ck_assert_msg(vocab ? x->bytes_total * vu == y->bytes_total * ve
                            : x->bytes_total == y->bytes_total,
                      "%s %s on %s: collective %d (%s) moves %lld bytes at "
                      "vocab %d, %lld at %d",
                      path, at, mesh, n, mrt_step_kind_name(x->kind),
                      (long long)x->bytes_total, ve, (long long)y->bytes_total,
                      vu);
    }
    ck_assert_int_gt(n, 0);
    mrt_plan_destroy(e);
    mrt_plan_destroy(u);
}

static const char *const meshes[] = {"rows=1,cols=4", "rows=2,cols=2",
                                     "rows=1,cols=3"};
static const int vocabs[][2] = {{64, 65}, {256, 257}};

START_TEST(uneven_vocab_plans_like_even)
{
    static const char *const alts[] = {NULL, "data_parallel", "model_parallel",
                                       "combined"};
    const mrt_strategy strategies[] = {MRT_STRATEGY_COUNT, MRT_STRATEGY_MESHTF};
    for (int m = 0; m < 3; m++)
        for (int a = 0; a < 4; a++)
            for (int s = 0; s < 2; s++)
                for (int v = 0; v < 2; v++)
                    check_like_even("examples/transformer_layer.yaml",
                                    meshes[m], alts[a], strategies[s],
                                    vocabs[v][0], vocabs[v][1]);
}
END_TEST

START_TEST(uneven_vocab_plans_like_even_with_sequence_parallelism)
{
    for (int m = 0; m < 3; m++)
        for (int v = 0; v < 2; v++)
            check_like_even("examples/transformer_layer_sp.yaml", meshes[m],
                            NULL, MRT_STRATEGY_COUNT, vocabs[v][0],
                            vocabs[v][1]);
}
END_TEST

/* 1 if tensor name t is x's gradient or one of its pieces ("grad:x",
 * "grad:x:d2", "grad:x:acc"). */
static int grad_piece(const char *t, const char *x)
{
    size_t n = strlen(x);
    return !strncmp(t, "grad:", 5) && !strncmp(t + 5, x, n) &&
           (t[5 + n] == '\0' || t[5 + n] == ':');
}

/* x's gradient in p: exactly one collective on its pieces, an all-reduce
 * (sum) over `axes` of one shard of x: `shard_bytes` per rank. */
static void check_one_reduction(const mrt_plan *p, const char *x, unsigned axes,
                                int64_t shard_bytes, const char *what)
{
    int n = 0;
    const mrt_step *one = NULL;
    for (int k = 0; k < p->nsteps; k++) {
        const mrt_step *s = &p->step[k];
        if (!mrt_step_is_collective(s->kind) ||
            !grad_piece(p->tensor_name[p->value[s->in].tensor], x))
            continue;
        n++;
        one = s;
    }
    ck_assert_msg(n == 1, "%s: %d collectives on dL/d%s (want 1)", what, n, x);
    ck_assert_msg(one->kind == MRT_STEP_ALLREDUCE && !one->max &&
                      one->axes == axes,
                  "%s: dL/d%s's reduction is %s over %#x (want allreduce "
                  "over %#x)",
                  what, x, mrt_step_kind_name(one->kind), one->axes, axes);
    ck_assert_msg(one->bytes == shard_bytes,
                  "%s: dL/d%s's all-reduce moves %lld bytes (want %lld)", what,
                  x, (long long)one->bytes, (long long)shard_bytes);
}

static const mrt_strategy every[] = {MRT_STRATEGY_COUNT, MRT_STRATEGY_RULES,
                                     MRT_STRATEGY_MESHTF};
static const char *const strategy_names[] = {"auto", "rule", "meshtf"};

START_TEST(tied_weight_gradient_is_reduced_once)
{
    /* wte [vocab, d_model] = 17 x 8 float64, vocab split over model: the
     * largest shard 5 x 8 over model=4 (17 = 5 + 4 + 4 + 4), 9 x 8 over
     * 2, all of it over 1; its gradient all-reduced over data once. */
    static const struct {
        const char *mesh;
        int64_t rows;
    } cases[] = {{"data=2,model=1", 17},
                 {"data=2,model=2", 9},
                 {"data=4,model=1", 17},
                 {"data=3,model=1", 17}};
    static const char *const specs[] = {
        "tests/specs/grad_sum/tied.yaml",
        "tests/specs/grad_sum/tied_embedding.yaml"};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int s = 0; s < 6; s++) {
            plan = plan_of(specs[s / 3], NULL, cases[c].mesh, NULL, NULL,
                           every[s % 3]);
            char what[128];
            snprintf(what, sizeof what, "%s on %s, %s", specs[s / 3],
                     cases[c].mesh, strategy_names[s % 3]);
            check_one_reduction(plan, "wte", 1u << 0, cases[c].rows * 8 * 8,
                                what);
            mrt_plan_destroy(plan);
            plan = NULL;
        }
}
END_TEST

START_TEST(shared_input_gradient_is_reduced_once)
{
    /* transformer_layer.yaml with dL/dx asked for: xn [batch, length,
     * d_model] is read by the q, k and v projections, which sum over
     * heads.  model_parallel: heads over [rows, cols], batch whole: one
     * all-reduce over both axes of all of xn, 8 x 16 x 32 float64.
     * combined: heads over cols, batch over rows: over cols, a half. */
    char *text = slurp("examples/transformer_layer.yaml");
    const char *from = "train: {loss: loss, params:";
    char *at = strstr(text, from);
    ck_assert(at != NULL);
    size_t need = strlen(text) + 32;
    char *edited = malloc(need);
    ck_assert(edited != NULL);
    snprintf(edited, need, "%.*strain: {loss: loss, grads: [x], params:%s",
             (int)(at - text), text, at + strlen(from));
    static const struct {
        const char *alt;
        unsigned axes;
        int64_t bytes;
    } cases[] = {{"model_parallel", 3u, 8 * 16 * 32 * 8},
                 {"combined", 1u << 1, 4 * 16 * 32 * 8}};
    for (size_t c = 0; c < 2; c++)
        for (int v = 0; v < 2; v++)
            for (int s = 0; s < 3; s++) {
                const char *dims = v ? "vocab=65" : "vocab=64";
                plan = plan_of("examples/transformer_layer.yaml", edited, NULL,
                               dims, cases[c].alt, every[s]);
                char what[128];
                snprintf(what, sizeof what, "transformer_layer.yaml %s %s, %s",
                         cases[c].alt, dims, strategy_names[s]);
                check_one_reduction(plan, "xn", cases[c].axes, cases[c].bytes,
                                    what);
                mrt_plan_destroy(plan);
                plan = NULL;
            }
    free(edited);
    free(text);
}
END_TEST

/* The products a plan runs (plan_products.c), each once, and only those
 * the profile has no row of; planned again on a profile with their rows
 * (mrt_plan_options.machine_of; pinned, so that it runs the same
 * products), every product step is priced at least
 * at its own row's time (the kernel's copies come on top) and the
 * products of one shape at one time. */
START_TEST(products_priced_at_their_own_rate)
{
    /* pinned: the auto planner may choose other products at other rates */
    plan = plan_of("examples/mlp.yaml", NULL, "rows=2,cols=1", NULL, NULL,
                   MRT_STRATEGY_RULES);
    mrt_product_row rows[MRT_PROFILE_PRODUCT_ROWS];
    int n = mrt_plan_products(plan, 0, rows, 0, MRT_PROFILE_PRODUCT_ROWS);
    ck_assert_int_ge(n, 3); /* forward, and the gradients' other forms */
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            ck_assert(rows[i].m != rows[j].m || rows[i].n != rows[j].n ||
                      rows[i].k != rows[j].k || rows[i].form != rows[j].form);
    ck_assert_int_eq(mrt_plan_products(plan, 0, rows, n, n), n); /* all seen */
    for (int i = 0; i < n; i++) {
        rows[i].flops = 1e9 * (i + 1); /* a rate of its own for each */
        ck_assert(mrt_profile_set_product(&plan->profile, rows[i]));
    }
    ck_assert_int_eq(mrt_plan_products(plan, 0, rows, 0, n), 0);
    ck_assert_int_eq(mrt_plan_products(plan, 1, rows, 0, n), n); /* all */
    mrt_plan_options opt = {.machine_of = plan};
    mrt_plan *again = NULL;
    mrt_error err = {0};
    mrt_spec_load_options lo = {.mesh = "rows=2,cols=1"};
    mrt_spec *s = NULL;
    ck_assert_int_eq(mrt_spec_load_ex("examples/mlp.yaml", &lo, &s, &err),
                     MRT_OK);
    ck_assert_int_eq(
        mrt_plan_create_with(s, &opt, MRT_STRATEGY_RULES, &again, &err),
        MRT_OK);
    mrt_spec_destroy(s);
    ck_assert_int_eq(again->profile.nprod, n);
    int priced = 0;
    for (int i = 0; i < again->nsteps; i++) {
        const mrt_step *t = &again->step[i];
        mrt_product_row r;
        if (!mrt_step_product(again, t, &r))
            continue;
        const mrt_product_row *own = mrt_profile_product(
            &again->profile, r.dtype, r.form, r.m, r.n, r.k);
        ck_assert(own != NULL);
        double share = mrt_cost_share(&again->profile, again->mesh.nranks);
        double want = t->flops / own->flops * share;
        ck_assert_msg(t->time_s >= want * (1 - 1e-9) && t->time_s < 2 * want,
                      "step %d: %g s against its row's %g", i, t->time_s, want);
        priced++;
    }
    ck_assert_int_ge(priced, n);
    mrt_plan_destroy(again);
}
END_TEST

/* examples/transformer_layer.yaml in float32 (text) on rows=2,cols=1,
 * pinned, planned again on of's profile as it stands
 * (mrt_plan_options.machine_of). */
static mrt_plan *replanned(const mrt_plan *of, const char *f32)
{
    mrt_plan_options opt = {.machine_of = of};
    mrt_spec_load_options lo = {
        .mesh = "rows=2,cols=1", .text = f32, .len = strlen(f32)};
    mrt_error err = {0};
    mrt_spec *s = NULL;
    mrt_plan *p = NULL;
    ck_assert_int_eq(
        mrt_spec_load_ex("examples/transformer_layer.yaml", &lo, &s, &err),
        MRT_OK);
    ck_assert_int_eq(
        mrt_plan_create_with(s, &opt, MRT_STRATEGY_RULES, &p, &err), MRT_OK);
    mrt_spec_destroy(s);
    return p;
}

/* The copies a product's kernel makes first (operands packed, C
 * unpacked) at the rate the profile's `copy` map measured for copies of
 * their size, as a slice's or a conversion's copies are: calibrate's
 * copy rate is a 64 MiB memcpy's, out of the caches, and priced those
 * copies 3 to 7 times what they took (docs/calibration.md, round M).
 * With every product timed (a products row each), a product step's time
 * less its row's is its copies: the same whatever the copy rate, and
 * twice as long when the copy map's rows are twice as slow. */
START_TEST(kernel_copies_at_the_copy_maps_rate)
{
    char *f32 = slurp("examples/transformer_layer.yaml");
    char *dtype = strstr(f32, "dtype: float64");
    ck_assert(dtype != NULL);
    memcpy(dtype, "dtype: float32", 14);
    plan = plan_of("examples/transformer_layer.yaml", f32, "rows=2,cols=1",
                   NULL, NULL, MRT_STRATEGY_RULES);
    mrt_product_row rows[MRT_PROFILE_PRODUCT_ROWS];
    int n = mrt_plan_products(plan, 0, rows, 0, MRT_PROFILE_PRODUCT_ROWS);
    ck_assert_int_ge(n, 3);
    for (int i = 0; i < n; i++) {
        rows[i].flops = 5e10;
        ck_assert(mrt_profile_set_product(&plan->profile, rows[i]));
    }
    mrt_profile *pr = &plan->profile;
    pr->nmap = 0;
    const int64_t sizes[3] = {1 << 12, 1 << 16, 1 << 22};
    for (int i = 0; i < 3; i++)
        pr->map[pr->nmap++] = (mrt_map_row){.fn = "copy",
                                            .elements = sizes[i],
                                            .s_per_elem = (i + 1) * 1e-10,
                                            .dtype = MRT_F32};
    /* products by their operands' forms, as a calibration prices them
     * (the layouts' kernels then copy some operands) */
    for (int i = 0, rows_nn = pr->ngemm; i < rows_nn; i++)
        if (pr->gemm[i].form == MRT_GEMM_NN && !pr->gemm[i].thin &&
            pr->ngemm < MRT_PROFILE_GEMM_ROWS) {
            mrt_gemm_row r = pr->gemm[i];
            r.form = MRT_GEMM_NT;
            r.flops /= 2;
            pr->gemm[pr->ngemm++] = r;
        }
    mrt_profile_sort_rows(pr);
    mrt_plan *a = replanned(plan, f32); /* the copy map's rates */
    pr->copy_Bps /= 1000;
    mrt_plan *b = replanned(plan, f32); /* a copy rate 1000 times slower */
    for (int i = 0; i < pr->nmap; i++)
        pr->map[i].s_per_elem *= 2;
    mrt_plan *c = replanned(plan, f32); /* the copy map twice as slow */
    ck_assert_int_eq(a->nsteps, b->nsteps);
    ck_assert_int_eq(a->nsteps, c->nsteps);
    int copied = 0;
    for (int i = 0; i < a->nsteps; i++) {
        mrt_product_row r;
        if (!mrt_step_product(a, &a->step[i], &r))
            continue;
        double share = mrt_cost_share(&a->profile, a->mesh.nranks);
        double own = a->step[i].flops / 5e10 * share;
        double ca = a->step[i].time_s - own, cc = c->step[i].time_s - own;
        ck_assert_msg(ca >= -1e-12, "step %d: %g s below its row's %g", i,
                      a->step[i].time_s, own);
        ck_assert_msg(fabs(b->step[i].time_s - a->step[i].time_s) <=
                          1e-9 * a->step[i].time_s,
                      "step %d: %g s at the slow copy rate, %g s before", i,
                      b->step[i].time_s, a->step[i].time_s);
        ck_assert_msg(fabs(cc - 2 * ca) <= 1e-9 * a->step[i].time_s,
                      "step %d: copies %g s, %g s at half the rate", i, ca, cc);
        copied += ca > 1e-9;
    }
    ck_assert_int_ge(copied, 1); /* some kernel copies an operand */
    mrt_plan_destroy(a);
    mrt_plan_destroy(b);
    mrt_plan_destroy(c);
    free(f32);
}
END_TEST

/* Spec path (in float32) on mesh, and its plan by the spec's rules on
 * options opt, into *sp and *pp. */
static void load_and_plan(const char *path, const char *mesh,
                          const mrt_plan_options *opt, mrt_spec **sp,
                          mrt_plan **pp)
{
    char *f32 = slurp(path);
    char *dtype = strstr(f32, "dtype: float64");
    if (dtype)
        memcpy(dtype, "dtype: float32", 14);
    mrt_spec_load_options lo = {.mesh = mesh, .text = f32, .len = strlen(f32)};
    mrt_error err = {0};
    ck_assert_int_eq(mrt_spec_load_ex(path, &lo, sp, &err), MRT_OK);
    ck_assert_int_eq(
        mrt_plan_create_with(*sp, opt, MRT_STRATEGY_RULES, pp, &err), MRT_OK);
    free(f32);
}

/* A plan's products priced again at new `products:` rows
 * (mrt_plan_reprice, which validate uses after timing them
 * again between its rounds of runs) is priced as a plan made anew at
 * those rows: every step's time, the totals, and a pipelined plan's
 * schedule replayed (its makespan and bubble), with its collectives
 * priced again at slower links too.  On a pipelined stack and a
 * transformer layer. */
START_TEST(repriced_products_as_planned_anew)
{
    static const char *const path[] = {"examples/pipeline.yaml",
                                       "examples/transformer_layer.yaml"};
    static const char *const mesh[] = {"data=1,pipe=2", "rows=2,cols=1"};
    for (int e = 0; e < 2; e++) {
        mrt_spec *s = NULL, *s2 = NULL;
        mrt_plan *a = NULL, *b = NULL;
        load_and_plan(path[e], mesh[e], &(mrt_plan_options){0}, &s, &a);
        mrt_product_row rows[MRT_PROFILE_PRODUCT_ROWS];
        int n = mrt_plan_products(a, 1, rows, 0, MRT_PROFILE_PRODUCT_ROWS);
        ck_assert_int_ge(n, 2);
        for (int i = 0; i < n; i++) {
            rows[i].flops = 2e10;
            ck_assert(mrt_profile_set_product(&a->profile, rows[i]));
        }
        mrt_error err = {0};
        ck_assert_int_eq(mrt_plan_reprice(a, s, &err), MRT_OK);
        double slow = a->totals.compute_time_s;
        for (int i = 0; i < n; i++) {
            rows[i].flops = 4e10;
            ck_assert(mrt_profile_set_product(&a->profile, rows[i]));
        }
        /* and the links (the collectives' prices) three times slower */
        mrt_profile *pr = &a->profile;
        for (int l = 0; l < MRT_MAX_AXES; l++)
            pr->link[l].bandwidth_Bps /= 3;
        pr->fallback.bandwidth_Bps /= 3;
        double comm = a->totals.comm_time_s;
        /* anew, at the new rows */
        load_and_plan(path[e], mesh[e], &(mrt_plan_options){.machine_of = a},
                      &s2, &b);
        ck_assert_int_eq(mrt_plan_reprice(a, s, &err), MRT_OK);
        ck_assert_int_eq(a->nsteps, b->nsteps);
        for (int k = 0; k < a->nsteps; k++)
            ck_assert_msg(fabs(a->step[k].time_s - b->step[k].time_s) <=
                              1e-12 + 1e-9 * b->step[k].time_s,
                          "%s step %d: %g s repriced, %g s planned anew",
                          path[e], k, a->step[k].time_s, b->step[k].time_s);
        ck_assert_msg(fabs(a->totals.time_s - b->totals.time_s) <=
                          1e-9 * b->totals.time_s,
                      "%s: %g s repriced, %g s planned anew", path[e],
                      a->totals.time_s, b->totals.time_s);
        ck_assert(fabs(a->totals.compute_time_s - b->totals.compute_time_s) <=
                  1e-9 * b->totals.compute_time_s);
        ck_assert_msg(a->totals.comm_time_s > 1.05 * comm,
                      "%s: collectives %g s, %g s before", path[e],
                      a->totals.comm_time_s, comm);
        ck_assert_msg(a->totals.compute_time_s < 0.99 * slow,
                      "%s: compute %g s, %g s before", path[e],
                      a->totals.compute_time_s, slow);
        ck_assert_int_eq(a->pipe.stages, e == 0 ? 2 : 1);
        if (a->pipe.stages > 1)
            ck_assert(fabs(a->pipe.bubble_fraction - b->pipe.bubble_fraction) <=
                      1e-9);
        mrt_plan_destroy(a);
        mrt_plan_destroy(b);
        mrt_spec_destroy(s);
        mrt_spec_destroy(s2);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("plan_models");
    TCase *tc = tcase_create("plan_models");
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, uneven_vocab_plans_like_even);
    tcase_add_test(tc, uneven_vocab_plans_like_even_with_sequence_parallelism);
    tcase_add_test(tc, tied_weight_gradient_is_reduced_once);
    tcase_add_test(tc, shared_input_gradient_is_reduced_once);
    tcase_add_test(tc, products_priced_at_their_own_rate);
    tcase_add_test(tc, kernel_copies_at_the_copy_maps_rate);
    tcase_add_test(tc, repriced_products_as_planned_anew);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
