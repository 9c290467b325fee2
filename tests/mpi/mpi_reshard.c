/*
 * mpi_reshard.c — every relayout of tests/reshard_cases.h (Shardy's
 * reshard cases) run and verified on the meshes of the world size.
 *
 * A case's mesh has 2 to 6 axes; on P ranks its axes get the sizes of
 * every way of writing P as a product over them (P itself on one axis,
 * or 2 and 2 on two axes for P = 4), up to MAX_MESHES of them, and every
 * dim is 24 long (divisible by every split of 1-4 ranks).  Each such spec
 * (float64: one tensor, the relayout op, the result as output) is planned
 * by the cost-aware planner and run with verification against the
 * unsharded reference, and the bytes handed to MPI must equal the plan's
 * (mrt_run checks that).  Also counted: how many runs used an all-to-all
 * over a group of several axes, which must be some on 4 ranks (else the
 * test would not test it).
 *
 * The ranks agree on every outcome before counting it, so all leave
 * together with the same status: 0 when nothing failed.
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "meshrt_mpi.h"
#include "mpi_agree.h"
#include "reshard_cases.h"

#define MAX_MESHES 6

/* The axis names of a mesh written "{x: 2, y: 2}". */
static int axis_names(const char *mesh, char names[][16])
{
    int n = 0;
    for (const char *s = mesh; (s = strpbrk(s, "{,")) && n < 8; s++) {
        s += strspn(s, "{, ");
        int len = (int)strcspn(s, ":");
        snprintf(names[n++], 16, "%.*s", len, s);
    }
    return n;
}

/* Mesh k of P ranks over the axes, as YAML; 0 when there is none. */
static int mesh_of(int P, char names[][16], int naxes, int k, char *out,
                   size_t size)
{
    int sz[8], at = 0;
    for (int a = 0; a < naxes; a++)
        sz[a] = 1;
    if (P == 1 && k > 0)
        return 0;
    if (P == 4) { /* 2 and 2 on two axes first, then 4 on one */
        for (int i = 0; i < naxes; i++)
            for (int j = i + 1; j < naxes; j++)
                if (at++ == k) {
                    sz[i] = sz[j] = 2;
                    goto found;
                }
    }
    for (int i = 0; i < naxes; i++)
        if (at++ == k) {
            sz[i] = P;
            goto found;
        }
    return 0;
found:;
    size_t len = (size_t)snprintf(out, size, "{");
    for (int a = 0; a < naxes; a++)
        len += (size_t)snprintf(out + len, size - len, "%s%s: %d",
                                a ? ", " : "", names[a], sz[a]);
    snprintf(out + len, size - len, "}");
    return 1;
}

/* "{a: 24, b: 24}" for the dims of shape "[a, b]". */
static void dims_of(const char *shape, char *out, size_t size)
{
    size_t len = (size_t)snprintf(out, size, "{");
    int n = 0;
    for (const char *s = shape + 1; *s && *s != ']';) {
        s += strspn(s, ", ");
        int l = (int)strcspn(s, ",]");
        len += (size_t)snprintf(out + len, size - len, "%s%.*s: 24",
                                n++ ? ", " : "", l, s);
        s += l;
    }
    snprintf(out + len, size - len, "}");
}

/* Plans and runs case c on mesh; 1 if all went well.  *group: the plan
 * has an all-to-all over a group of several axes. */
static int run_case(int rank, const reshard_case *c, const char *mesh,
                    int *group)
{
    char yaml[2048], dims[256];
    dims_of(c->shape, dims, sizeof dims);
    int ylen = snprintf(
        yaml, sizeof yaml,
        "mesh: %s\ndtype: float64\ndims: %s\ntensors:\n"
        "  t: {shape: %s, layout: %s, init: {random: 5}}\n"
        "ops:\n  - {op: relayout, in: [t], out: u, layout: %s}\n"
        "outputs: [u]\n",
        mesh, dims, c->shape, c->from, c->to);
    mrt_error err = {0};
    mrt_spec *spec = NULL;
    mrt_plan *plan = NULL;
    mrt_status st = ylen > 0 && (size_t)ylen < sizeof yaml
                        ? mrt_spec_load_string("reshard.yaml", yaml,
                                               (size_t)ylen, &spec, &err)
                        : MRT_E_USAGE;
    if (st == MRT_OK)
        st = mrt_plan_create(spec, NULL, &plan, &err);
    *group = 0;
    for (int k = 0; st == MRT_OK && k < mrt_plan_step_count(plan); k++) {
        mrt_plan_step_info si;
        if (mrt_plan_get_step(plan, k, &si, NULL) == MRT_OK)
            *group |= si.kind == MRT_PLAN_STEP_ALLTOALL_GROUP;
    }
    char *report = NULL;
    size_t len = 0;
    if (all(st == MRT_OK)) {
        FILE *r = open_memstream(&report, &len);
        mrt_run_options opt = {.verify = 1, .report = r ? r : stderr};
        st = mrt_run(spec, plan, &opt, &err);
        if (r)
            fclose(r);
    }
    int ok = all(st == MRT_OK);
    if (!ok && rank == 0) {
        char msg[1024];
        printf("FAIL %s on %s: %s\n%s", c->name, mesh,
               mrt_error_format(&err, msg, sizeof msg), report ? report : "");
        printf("--- spec ---\n%s", yaml);
    }
    free(report);
    mrt_plan_destroy(plan);
    mrt_spec_destroy(spec);
    return ok;
}

int main(int argc, char **argv)
{
    mrt_init(NULL); /* before MPI_Init (meshrt.h) */
    MPI_Init(&argc, &argv);
    int rank, P, failed = 0, runs = 0, grouped = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    for (int i = 0; i < RESHARD_NCASES; i++) {
        const reshard_case *c = &reshard_cases[i];
        char names[8][16], mesh[256];
        int naxes = axis_names(c->mesh, names), n = 0, bad = 0;
        for (int k = 0;
             k < MAX_MESHES && mesh_of(P, names, naxes, k, mesh, sizeof mesh);
             k++, n++) {
            int group;
            bad += !run_case(rank, c, mesh, &group);
            grouped += all(group);
        }
        runs += n;
        failed += bad;
        if (rank == 0)
            printf("%-48s %s on %d meshes of %d ranks\n", c->name,
                   bad ? "FAIL" : "ok", n, P);
    }
    if (P == 4 && grouped == 0) {
        failed++;
        if (rank == 0)
            printf("FAIL: no run used an all-to-all over several axes\n");
    }
    if (rank == 0)
        printf("%d runs, %d with an all-to-all over several axes, %d "
               "failed\n",
               runs, grouped, failed);
    MPI_Finalize();
    return failed ? 1 : 0;
}
