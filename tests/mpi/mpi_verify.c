/*
 * mpi_verify.c — --verify must catch a wrong sharded result, also next
 * to NaN and infinities, and must pass a right one that has them.
 *
 * The spec (tests/specs/verify/nonfinite.yaml) has an output y that is
 * -inf at about half its elements and finite elsewhere.  On every
 * {data, model} mesh of the world size that divides it, the driver runs
 * the plan as mrt_run does (comm, exec, input shards, one run), then
 * calls the --verify phase itself (mrt_run_verify) on the result as it
 * is, and after corrupting y's shards:
 *   - one finite element moved (the bug of issue 9: the -inf made the
 *     relative error's denominator infinite and the check said ok);
 *   - one -inf turned into NaN, one into +inf;
 *   - one finite element turned into NaN;
 *   - every element NaN.
 * Every corruption must fail with MRT_E_VERIFY, and rank 0's report line
 * for y must say FAILED and name the corrupted element ("(element G)")
 * for the single-element cases.  The corruption is written on every rank
 * that holds the element (a replicated dim has several copies), and the
 * shard is restored after each case.
 *
 * The ranks agree on every outcome before counting it.  Exit status 0
 * when nothing failed.  Usage: mpi_verify SPEC.yaml
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel.h"
#include "meshrt_mpi.h"
#include "mpi_agree.h"
#include "runtime.h"

typedef struct ctx {
    int rank, failed;
    const char *label;
    const mrt_spec *spec;
    mrt_exec *e;
    int out;   /* index of y among the plan's outputs */
    int value; /* y's value */
} ctx;

/* The local index of global element g of value v on this rank, or -1
 * when its shard does not hold it. */
static int64_t local_index(const mrt_exec *e, int v, int64_t g)
{
    const mrt_value *val = &e->plan->value[v];
    const mrt_layout *l = &val->layout;
    int64_t idx[MRT_MAX_DIMS], off[MRT_MAX_DIMS], li = 0;
    for (int i = l->ndims - 1; i >= 0; i--) {
        idx[i] = g % l->size[i];
        g /= l->size[i];
    }
    mrt_layout_shard_offset(l, &e->plan->mesh, e->comm->coords, off);
    for (int i = 0; i < l->ndims; i++) {
        int64_t k = idx[i] - off[i];
        if (k < 0 || k >= val->local[i])
            return -1;
        li = li * val->local[i] + k;
    }
    return li;
}

static void set_element(ctx *C, int64_t g, double x)
{
    int64_t li = local_index(C->e, C->value, g);
    if (li >= 0)
        ((double *)C->e->buf[C->value])[li] = x;
}

/* Runs the --verify phase: its status (the same on every rank, or -1)
 * and rank 0's line for y in line. */
static int run_verify(ctx *C, char *line, size_t size)
{
    char *report = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&report, &len);
    mrt_run_options opt = {.verify = 1};
    mrt_error err = {0};
    mrt_status st = mrt_run_verify(C->spec, C->e, &opt, NULL, 1, f ? f : stderr,
                                   &err);
    if (f)
        fclose(f);
    line[0] = 0;
    char head[64];
    snprintf(head, sizeof head, "verify %s: ",
             C->e->plan->tensor_name[C->e->plan->output[C->out]]);
    const char *l = report ? strstr(report, head) : NULL;
    if (l) {
        size_t n = strcspn(l, "\n");
        snprintf(line, size, "%.*s", (int)(n < size ? n : size - 1), l);
    }
    free(report);
    return same(st) ? (int)st : -1;
}

/* One case: what it did, whether it must pass, the element it names (or
 * -1).  The shard is restored from keep afterwards. */
static void check_case(ctx *C, const char *what, int must_pass, int64_t g,
                       const void *keep, size_t bytes)
{
    char line[2048], want[64] = "";
    int st = run_verify(C, line, sizeof line);
    if (g >= 0)
        snprintf(want, sizeof want, "(element %lld)", (long long)g);
    const char *why = NULL;
    if (st < 0)
        why = "the ranks returned different statuses";
    else if (must_pass && st != MRT_OK)
        why = "verification failed a right result";
    else if (!must_pass && st != MRT_E_VERIFY)
        why = st == MRT_OK ? "verification passed a wrong result"
                           : "it failed, but not with MRT_E_VERIFY";
    else if (C->rank == 0 && !strstr(line, must_pass ? ": ok" : ": FAILED"))
        why = "the report line for y does not say so";
    else if (C->rank == 0 && *want && !strstr(line, want))
        why = "the report line does not name the corrupted element";
    int bad = why != NULL;
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    C->failed += bad;
    if (C->rank == 0)
        printf("%s %s, %s: %s\n    %s\n", bad ? "FAIL" : "ok  ", C->label, what,
               bad ? (why ? why : "?") : "as expected", line);
    memcpy(C->e->buf[C->value], keep, bytes);
}

/* The last element of the full y (rank 0) that is finite (want_finite)
 * or -inf, broadcast; -1 if there is none.  The last: on the last rank
 * when the first dim is split. */
static int64_t find(const double *full, int64_t n, int want_finite)
{
    int64_t g = -1;
    for (int64_t i = n - 1; full && i >= 0 && g < 0; i--)
        if (want_finite ? isfinite(full[i]) : full[i] == -INFINITY)
            g = i;
    MPI_Bcast(&g, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    return g;
}

static void cases(ctx *C)
{
    const mrt_plan *p = C->e->plan;
    const mrt_value *val = &p->value[C->value];
    size_t bytes = (size_t)val->count * sizeof(double);
    int64_t n = 1;
    for (int i = 0; i < val->layout.ndims; i++)
        n *= val->layout.size[i];
    void *keep = malloc(bytes + 1), *full = NULL;
    mrt_error err = {0};
    if (!all(keep != NULL &&
             mrt_shard_gather(C->e, C->value, &full, &err) == MRT_OK)) {
        C->failed++;
        free(keep);
        free(full);
        return;
    }
    memcpy(keep, C->e->buf[C->value], bytes);
    int64_t fin = find(full, n, 1), inf = find(full, n, 0);
    double v = C->rank == 0 && fin >= 0 ? ((double *)full)[fin] : 0;
    MPI_Bcast(&v, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    free(full);
    if (fin < 0 || inf < 0) {
        C->failed++;
        if (C->rank == 0)
            printf("FAIL %s: y has no %s element: the spec does not test "
                   "what it should\n",
                   C->label, fin < 0 ? "finite" : "-inf");
        free(keep);
        return;
    }
    check_case(C, "as computed", 1, -1, keep, bytes);
    set_element(C, fin, v + 3);
    check_case(C, "one finite element + 3", 0, fin, keep, bytes);
    set_element(C, inf, NAN);
    check_case(C, "one -inf -> NaN", 0, inf, keep, bytes);
    set_element(C, inf, INFINITY);
    check_case(C, "one -inf -> +inf", 0, inf, keep, bytes);
    set_element(C, fin, NAN);
    check_case(C, "one finite element -> NaN", 0, fin, keep, bytes);
    for (int64_t i = 0; i < val->count; i++)
        ((double *)C->e->buf[C->value])[i] = NAN;
    check_case(C, "every element NaN", 0, -1, keep, bytes);
    free(keep);
}

/* Loads, plans and runs the spec on one mesh, then the cases.  Returns
 * 0 when the mesh does not divide the spec (skipped). */
static int on_mesh(ctx *C, const char *path, int d, int m)
{
    char mesh[64], label[128];
    snprintf(mesh, sizeof mesh, "data=%d,model=%d", d, m);
    snprintf(label, sizeof label, "{%s}", mesh);
    C->label = label;
    mrt_error err = {0};
    mrt_spec *spec = NULL;
    mrt_plan *plan = NULL;
    mrt_comm *comm = NULL;
    mrt_exec *e = NULL;
    mrt_status st = mrt_spec_load_ex(
        path, &(mrt_spec_load_options){.mesh = mesh}, &spec, &err);
    if (all(st == MRT_E_SPEC && strstr(err.message, "not divisible"))) {
        mrt_spec_destroy(spec);
        return 0;
    }
    mrt_plan_options popt = {.planner = MRT_PLANNER_AUTO};
    if (st == MRT_OK)
        st = mrt_plan_create(spec, &popt, &plan, &err);
    if (all(st == MRT_OK))
        st = mrt_comm_agree(MPI_COMM_WORLD,
                            mrt_comm_create(plan, MPI_COMM_WORLD, &comm, &err),
                            &err);
    if (st == MRT_OK)
        st = mrt_comm_agree(MPI_COMM_WORLD,
                            mrt_exec_create(plan, comm, &e, &err), &err);
    for (int i = 0; st == MRT_OK && i < plan->ninputs; i++) {
        int t = plan->input[i], v = plan->tensor_value[t];
        st = mrt_shard_init(spec, t, &plan->value[v].layout, &plan->mesh,
                            comm->coords, e->buf[v], &err);
    }
    if (all(st == MRT_OK))
        st = mrt_comm_agree(MPI_COMM_WORLD, mrt_exec_run(e, &err), &err);
    int y = spec ? mrt_spec_find_tensor(spec, "y") : -1;
    C->out = -1;
    for (int k = 0; plan && k < plan->noutputs; k++)
        if (plan->output[k] == y)
            C->out = k;
    if (!all(st == MRT_OK && C->out >= 0 && plan->dtype == MRT_F64)) {
        C->failed++;
        if (C->rank == 0)
            printf("FAIL %s: could not run the spec, or it has no float64 "
                   "output y: %s\n",
                   label, err.message);
    } else {
        C->spec = spec;
        C->e = e;
        C->value = plan->tensor_value[y];
        cases(C);
    }
    mrt_exec_destroy(e);
    mrt_comm_destroy(comm);
    mrt_plan_destroy(plan);
    mrt_spec_destroy(spec);
    return 1;
}

int main(int argc, char **argv)
{
    ctx C = {0};
    int P;
    mrt_init(NULL); /* before MPI_Init (meshrt.h) */
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &C.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    mrt_kernel_init();
    int meshes = 0;
    if (argc != 2) {
        if (C.rank == 0)
            fprintf(stderr, "usage: mpi_verify SPEC.yaml\n");
        C.failed++;
    }
    for (int d = P; argc == 2 && d >= 1; d--)
        if (P % d == 0)
            meshes += on_mesh(&C, argv[1], d, P / d);
    if (argc == 2 && meshes == 0) {
        C.failed++;
        if (C.rank == 0)
            printf("FAIL: the spec loads under no mesh of %d ranks\n", P);
    }
    if (C.rank == 0)
        printf("mpi_verify: %d ranks, %d meshes, %s\n", P, meshes,
               C.failed ? "FAILED" : "ok");
    MPI_Finalize();
    return C.failed ? 1 : 0;
}
