/*
 * test_memory.c — the arena and the memory kinds, on the examples.
 *
 *  - arena_is_sound: in every example and alternative (gpt2 at its test
 *    sizes), no two values whose lifetimes overlap share
 *    a byte of the arena (the packing by size of memory_pack.c, or first
 *    fit, whichever plan_finish.c kept), and the arena is at most 10%
 *    over the most value bytes live at once (issue 19: first fit was 16%
 *    over on the MLP);
 *  - mlp_kinds: the MLP's values by kind: w1 and w2 as they enter are
 *    params, w1:next params, grad:w1 grads, the forward h (read by the
 *    backward pass) an activation, the loss other; and the kinds at the
 *    peak add up to the live peak.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memory.h"
#include "planning.h"

static mrt_plan *plan_of(const char *path, const char *dims, const char *alt)
{
    mrt_error err = {0};
    mrt_spec *s = NULL, *sel = NULL;
    mrt_spec_load_options lo = {.dims = dims};
    if (mrt_spec_load_ex(path, &lo, &s, &err) != MRT_OK)
        ck_abort_msg("%s: %d:%d: %s", path, err.line, err.column, err.message);
    if (alt) {
        if (mrt_spec_select_alternative(s, alt, &sel, &err) != MRT_OK)
            ck_abort_msg("%s --layout %s: %s", path, alt, err.message);
        mrt_spec_destroy(s);
        s = sel;
    }
    mrt_plan *p = NULL;
    if (mrt_plan_create(s, NULL, &p, &err) != MRT_OK)
        ck_abort_msg("%s: plan: %s", path, err.message);
    mrt_spec_destroy(s);
    return p;
}

static void check_arena(const mrt_plan *p, const char *what)
{
    for (int a = 0; a < p->nvalues; a++) {
        const mrt_value *x = &p->value[a];
        int64_t xb = x->count * x->elsize;
        for (int b = a + 1; xb && b < p->nvalues; b++) {
            const mrt_value *y = &p->value[b];
            int64_t yb = y->count * y->elsize;
            if (!yb || x->def > y->last_use || y->def > x->last_use ||
                y->alias_of == a + 1 || x->alias_of == b + 1)
                continue; /* an in-place update shares its buffer */
            ck_assert_msg(x->offset + xb <= y->offset ||
                              y->offset + yb <= x->offset,
                          "%s: values %d and %d live together and overlap",
                          what, a, b);
        }
        ck_assert_msg(x->offset + xb <= p->arena_bytes, "%s: past the arena",
                      what);
    }
    mrt_plan_memory m;
    ck_assert_int_eq(mrt_plan_get_memory(p, -1, &m, NULL), MRT_OK);
    ck_assert_msg(m.arena * 10 <= m.values_peak * 11,
                  "%s: arena %lld over 1.1 x the values' peak %lld", what,
                  (long long)m.arena, (long long)m.values_peak);
}

static const struct {
    const char *path, *dims;
} examples[] = {
    {"examples/mlp.yaml", NULL},
    {"examples/blocks.yaml", NULL},
    {"examples/transformer_layer.yaml", NULL},
    {"examples/transformer_layer_sp.yaml", NULL},
    {"examples/transformer_einsums.yaml", NULL},
    {"examples/zero.yaml", NULL},
    {"examples/gpt2.yaml",
     "layers=2,vocab=61,length=8,klen=8,d_model=16,heads=2,d_k=8,d_ff=32,"
     "batch=4"},
    {"examples/attention.yaml", NULL},
    {"examples/contraction.yaml", NULL},
    {"examples/deferred_sum.yaml", NULL},
};

/* The number of alternatives of the example's layouts:. */
static int alternatives(const char *path, const char *dims)
{
    mrt_spec *s = NULL;
    mrt_spec_load_options lo = {.dims = dims};
    ck_assert_int_eq(mrt_spec_load_ex(path, &lo, &s, NULL), MRT_OK);
    int n = 0;
    while (mrt_spec_get_alternative(s, n))
        n++;
    mrt_spec_destroy(s);
    return n;
}

START_TEST(arena_is_sound)
{
    int planned = 0;
    for (size_t e = 0; e < sizeof examples / sizeof *examples; e++) {
        int nalt = alternatives(examples[e].path, examples[e].dims);
        for (int a = -1; a < nalt; a++) {
            char alt[256] = "", what[512];
            if (a >= 0) {
                mrt_spec *s = NULL;
                mrt_spec_load_options lo = {.dims = examples[e].dims};
                mrt_spec_load_ex(examples[e].path, &lo, &s, NULL);
                snprintf(alt, sizeof alt, "%s", mrt_spec_get_alternative(s, a));
                mrt_spec_destroy(s);
            }
            snprintf(what, sizeof what, "%s %s", examples[e].path, alt);
            mrt_plan *p = plan_of(examples[e].path, examples[e].dims,
                                  a >= 0 ? alt : NULL);
            check_arena(p, what);
            mrt_plan_destroy(p);
            planned++;
        }
    }
    ck_assert_int_ge(planned, 30); /* every alternative was found */
}
END_TEST

static int kind_of(const mrt_plan *p, const char *tensor, int input)
{
    for (int v = 0; v < p->nvalues; v++)
        if (!strcmp(p->tensor_name[p->value[v].tensor], tensor) &&
            (p->value[v].made_by < 0) == input)
            return p->value[v].kind;
    ck_abort_msg("no value of %s", tensor);
    return -1;
}

START_TEST(mlp_kinds)
{
    mrt_plan *p = plan_of("examples/mlp.yaml", NULL, "mixed");
    ck_assert_int_eq(kind_of(p, "w1", 1), MRT_MEM_PARAMS);
    ck_assert_int_eq(kind_of(p, "w2", 1), MRT_MEM_PARAMS);
    ck_assert_int_eq(kind_of(p, "w1:next", 0), MRT_MEM_PARAMS);
    ck_assert_int_eq(kind_of(p, "grad:w1", 0), MRT_MEM_GRADS);
    ck_assert_int_eq(kind_of(p, "grad:x", 0), MRT_MEM_GRADS);
    ck_assert_int_eq(kind_of(p, "h", 0), MRT_MEM_ACTIVATIONS);
    ck_assert_int_eq(kind_of(p, "x", 1), MRT_MEM_ACTIVATIONS);
    ck_assert_int_eq(kind_of(p, "loss", 0), MRT_MEM_OTHER);
    mrt_plan_memory m;
    ck_assert_int_eq(mrt_plan_get_memory(p, -1, &m, NULL), MRT_OK);
    int64_t sum = 0;
    for (int k = 0; k < MRT_MEM_KIND_COUNT; k++)
        sum += m.by_kind[k];
    ck_assert_int_eq(sum, m.live_peak);
    ck_assert_int_eq(m.live_peak, p->live_peak);
    ck_assert_int_eq(m.live_peak + m.fragmentation, p->totals.peak_memory);
    mrt_plan_destroy(p);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("memory");
    TCase *tc = tcase_create("memory");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, arena_is_sound);
    tcase_add_test(tc, mlp_kinds);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
