/*
 * test_reshard.c — relayouts against Shardy's (tests/reshard_cases.h):
 * for every ported case, meshrt's plan of the one relayout op must put no
 * more bytes on the wire than the collectives Shardy's test expects,
 * priced with meshrt's own conventions (cost.h: an all-gather over g
 * ranks sends (g-1) n, an all-to-all (g-1)/g n, a collective-permute n,
 * an all-slice nothing, n being the shard it starts from).  Also: the
 * issue's case on a 2x2x2 mesh moves 6 MiB (one all-to-all over two
 * axes), a relayout op ends with its last move (no copy after it), and
 * the plan's bytes are the whole input shard of each collective.  No MPI:
 * tests/mpi/mpi_reshard.c runs the same cases.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "reshard_cases.h"

static mrt_spec *spec;
static mrt_plan *plan;

static void plan_case(const reshard_case *c, const char *dtype)
{
    char yaml[2048];
    int len = snprintf(yaml, sizeof yaml,
                       "mesh: %s\ndtype: %s\ndims: %s\ntensors:\n"
                       "  t: {shape: %s, layout: %s}\n"
                       "ops:\n  - {op: relayout, in: [t], out: u, "
                       "layout: %s}\n"
                       "outputs: [u]\n",
                       c->mesh, dtype, c->dims, c->shape, c->from, c->to);
    ck_assert(len > 0 && (size_t)len < sizeof yaml);
    mrt_error err = {0};
    mrt_status st = mrt_spec_load_string("reshard.yaml", yaml, (size_t)len,
                                         &spec, &err);
    if (st != MRT_OK)
        ck_abort_msg("%s: spec: %d:%d: %s", c->name, err.line, err.column,
                     err.message);
    st = mrt_plan_create(spec, NULL, &plan, &err);
    if (st != MRT_OK)
        ck_abort_msg("%s: plan: %s", c->name, err.message);
}

static void teardown(void)
{
    mrt_plan_destroy(plan);
    mrt_spec_destroy(spec);
    plan = NULL;
    spec = NULL;
}

/* The plan's id of tensor `name` (the plan keeps the spec's names). */
static int plan_tensor(const char *name)
{
    for (int t = 0; t < plan->ntensors; t++)
        if (!strcmp(plan->tensor_name[t], name))
            return t;
    ck_abort_msg("no tensor '%s' in the plan", name);
    return -1;
}

/* Shardy's collectives for case c priced in wire bytes per rank, from a
 * shard of n bytes. */
static double shardy_bytes(const reshard_case *c, double n)
{
    char list[256];
    double wire = 0;
    snprintf(list, sizeof list, "%s", c->shardy);
    for (char *save = NULL, *tok = strtok_r(list, " ", &save); tok;
         tok = strtok_r(NULL, " ", &save)) {
        char *axes = strchr(tok, ':');
        double g = 1;
        if (axes) {
            *axes++ = '\0';
            for (char *s2 = NULL, *a = strtok_r(axes, ",", &s2); a;
                 a = strtok_r(NULL, ",", &s2)) {
                int k = mrt_mesh_find_axis(&plan->mesh, a);
                ck_assert_msg(k >= 0, "%s: axis %s", c->name, a);
                g *= (double)plan->mesh.size[k];
            }
        }
        if (!strcmp(tok, "slice")) {
            n /= g;
        } else if (!strcmp(tok, "ag")) {
            wire += (g - 1) * n;
            n *= g;
        } else if (!strcmp(tok, "a2a")) {
            wire += (g - 1) / g * n;
        } else {
            ck_assert_str_eq(tok, "cp");
            wire += n;
        }
    }
    return wire;
}

/* The relayout op's wire bytes per rank, checking its steps on the way. */
static double meshrt_bytes(const reshard_case *c)
{
    const mrt_plan_op *o = &plan->op[0];
    double wire = 0;
    ck_assert_msg(o->nsteps > 0, "%s: no steps", c->name);
    for (int k = o->first_step; k < o->first_step + o->nsteps; k++) {
        const mrt_step *s = &plan->step[k];
        ck_assert_msg(s->kind != MRT_STEP_MAP, "%s: a copy after the moves",
                      c->name);
        if (!mrt_step_is_collective(s->kind))
            continue;
        ck_assert_int_eq(s->bytes, plan->value[s->in].count * plan->elsize);
        wire += s->cost.wire_bytes;
    }
    ck_assert_int_eq(plan->value[o->out_value].tensor, plan_tensor("u"));
    return wire;
}

START_TEST(shardy_case)
{
    const reshard_case *c = &reshard_cases[_i];
    plan_case(c, "float32");
    const mrt_value *in = &plan->value[plan->tensor_value[plan_tensor("t")]];
    double n = (double)(in->count * plan->elsize);
    double ours = meshrt_bytes(c), theirs = shardy_bytes(c, n);
    printf("%-48s meshrt %10.0f  shardy %10.0f bytes/rank (%.2fx)\n", c->name,
           ours, theirs, theirs > 0 ? ours / theirs : 0);
    ck_assert_msg(ours <= theirs * (1 + 1e-9),
                  "%s: meshrt %.0f bytes on the wire, Shardy %.0f", c->name,
                  ours, theirs);
    teardown();
}
END_TEST

/* The issue's case: [i/mx, j, l/[my,mz]] -> [i/mx, j/[my,mz], l] at 256^3
 * float32 (an 8 MiB shard): one all-to-all over my x mz, 3/4 of the
 * shard on the wire (6 MiB); moving one axis at a time cost 16 MiB. */
START_TEST(issue_case)
{
    reshard_case c = {
        "issue",     "{mx: 2, my: 2, mz: 2}", "{i: 256, j: 256, l: 256}",
        "[i, j, l]", "{i: mx, l: [my, mz]}",  "{i: mx, j: [my, mz]}",
        ""};
    plan_case(&c, "float32");
    ck_assert_double_eq(meshrt_bytes(&c), 6.0 * (1 << 20));
    const mrt_plan_op *o = &plan->op[0];
    ck_assert_int_eq(o->nsteps, 1);
    const mrt_step *s = &plan->step[o->first_step];
    ck_assert_int_eq(s->kind, MRT_STEP_ALLTOALL_GROUP);
    ck_assert_int_eq(s->axes, 6u); /* my, mz */
    ck_assert_int_eq(s->group, 4);
    ck_assert_int_eq(s->bytes, 8 << 20);
    ck_assert_int_eq(plan->comm_bytes, 8 << 20);
    teardown();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("reshard");
    TCase *tc = tcase_create("shardy");
    tcase_add_loop_test(tc, shardy_case, 0, RESHARD_NCASES);
    tcase_add_test(tc, issue_case);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
