/*
 * mpi_ops.c — every spec op kind, sharded, trained and verified, on
 * every two-axis mesh of the world size.
 *
 * Each path on the command line is a small float64 spec (tests/specs/ops/)
 * with a mesh {data, model}, an op under test fed by a parameter, a loss
 * and `train:`.  For every mesh {data: d, model: m} with d * m equal to
 * the number of ranks, the spec is loaded with that mesh as the override,
 * planned with the cost-aware planner and with Mesh-TensorFlow's (when it
 * plans the spec at all), and run with verification: every output and
 * every step's loss against the unsharded reference, and the gradients
 * against central finite differences.  Every mesh must load: a mesh that
 * does not divide a dim splits it unevenly (tests/specs/uneven/ are specs
 * whose dims divide no mesh of 2-4 ranks).
 *
 * Then a negative control: the relu spec (the argument named relu.yaml)
 * with its backward relu (a relu_grad map) replaced by a copy must fail
 * verification with MRT_E_VERIFY: the reference runs the same broken
 * backward program, so only the finite differences can catch it, and this
 * shows that they do.  Planting that fault is the one thing done below
 * meshrt.h (ops_fault.c); everything else goes through the public API.
 *
 * The ranks agree on every outcome before counting it (MPI_Allreduce), so
 * all leave together with the same status: 0 when nothing failed.  Rank 0
 * prints one line per spec, and for a failure the run's report.
 *
 * Usage: mpi_ops [--verbose] SPEC.yaml...
 */
#include <mpi.h>

#include "mpi_agree.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "meshrt_mpi.h"
#include "ops_fault.h"

#define MAX_MESHES 64

typedef struct mesh2 {
    int data, model;
} mesh2;

typedef struct tally {
    int loaded, runs, failed, meshtf_refused;
} tally;

typedef struct ctx {
    int rank, verbose;
    int failed; /* over everything */
} ctx;

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static const char *planner_name(mrt_planner p)
{
    return p == MRT_PLANNER_MESHTF ? "meshtf" : "auto";
}

/* Every {data, model} with data * model == P, data descending. */
static int meshes_of(int P, mesh2 *out)
{
    int n = 0;
    for (int d = P; d >= 1 && n < MAX_MESHES; d--)
        if (P % d == 0)
            out[n++] = (mesh2){d, P / d};
    return n;
}

/* Rank 0 prints a failure: what, the error (when e), the report. */
static void report_failure(const ctx *C, const char *label, const char *what,
                           const mrt_error *e, const char *report)
{
    if (C->rank != 0)
        return;
    char msg[1024] = "";
    if (e)
        mrt_error_format(e, msg, sizeof msg);
    printf("FAIL %s: %s%s%s%s%s\n", label, what, e ? ": " : "", msg,
           e ? " / " : "", e ? mrt_status_name(e->code) : "");
    if (report && *report)
        printf("--- report ---\n%s--------------\n", report);
    fflush(stdout);
}

/* Runs spec under plan with verification; the status every rank agrees
 * on, or -1 when the ranks disagree.  *report (rank 0's text) is the
 * caller's to free. */
static int run_verified(const mrt_spec *spec, const mrt_plan *plan,
                        char **report, mrt_error *err)
{
    size_t len = 0;
    *report = NULL;
    FILE *f = open_memstream(report, &len);
    mrt_run_options opt = {.verify = 1, .report = f ? f : stderr};
    mrt_status st = mrt_run(spec, plan, &opt, err);
    if (f)
        fclose(f);
    return same(st) ? (int)st : -1;
}

/* Plans spec with one planner and runs it verified.  Mesh-TF refusing the
 * spec (a spec error on every rank) is counted, not failed. */
static void plan_and_run(ctx *C, tally *T, const char *label,
                         const mrt_spec *spec, mrt_planner planner)
{
    mrt_error err = {0};
    mrt_plan *plan = NULL;
    mrt_plan_options popt = {.planner = planner};
    char full[512];
    snprintf(full, sizeof full, "%s, planner %s", label, planner_name(planner));
    mrt_status st = mrt_plan_create(spec, &popt, &plan, &err);
    if (planner == MRT_PLANNER_MESHTF && same(st) && st == MRT_E_SPEC) {
        T->meshtf_refused++;
        if (C->verbose && C->rank == 0)
            printf("  %s: meshtf does not plan it (%s)\n", full, err.message);
        mrt_plan_destroy(plan);
        return;
    }
    if (!all(st == MRT_OK)) {
        T->failed++;
        report_failure(C, full,
                       same(st) ? "plan failed"
                                : "plan failed on some ranks only",
                       &err, NULL);
        mrt_plan_destroy(plan);
        return;
    }
    char *report = NULL;
    int rst = run_verified(spec, plan, &report, &err);
    T->runs++;
    if (rst != MRT_OK) {
        T->failed++;
        report_failure(C, full,
                       rst < 0 ? "run returned different statuses "
                                 "on different ranks"
                               : "run failed",
                       rst < 0 ? NULL : &err, report);
    } else if (C->verbose && C->rank == 0) {
        printf("  %s: ok\n", full);
    }
    free(report);
    mrt_plan_destroy(plan);
}

static void test_spec(ctx *C, const char *path, const mesh2 *meshes,
                      int nmeshes)
{
    tally T = {0};
    for (int k = 0; k < nmeshes; k++) {
        char mesh[64], label[512];
        snprintf(mesh, sizeof mesh, "data=%d,model=%d", meshes[k].data,
                 meshes[k].model);
        snprintf(label, sizeof label, "%s on {%s}", base_name(path), mesh);
        mrt_error err = {0};
        mrt_spec *spec = NULL;
        mrt_status st = mrt_spec_load_ex(
            path, &(mrt_spec_load_options){.mesh = mesh}, &spec, &err);
        if (!same(st)) {
            T.failed++;
            report_failure(C, label, "the ranks disagree on loading it", &err,
                           NULL);
        } else if (st != MRT_OK) {
            T.failed++;
            report_failure(C, label, "load failed", &err, NULL);
        } else {
            T.loaded++;
            plan_and_run(C, &T, label, spec, MRT_PLANNER_AUTO);
            plan_and_run(C, &T, label, spec, MRT_PLANNER_MESHTF);
        }
        mrt_spec_destroy(spec);
    }
    if (T.loaded == 0) {
        T.failed++;
        report_failure(C, base_name(path),
                       "it loads under none of the "
                       "meshes of this world size",
                       NULL, NULL);
    }
    if (C->rank == 0) {
        printf("%-36s %s: %d/%d meshes, %d verified runs", base_name(path),
               T.failed ? "FAIL" : "ok", T.loaded, nmeshes, T.runs);
        if (T.meshtf_refused)
            printf(", meshtf refused %d", T.meshtf_refused);
        if (T.failed)
            printf(", %d FAILED", T.failed);
        printf("\n");
        fflush(stdout);
    }
    C->failed += T.failed;
}

/* The first line of a report that starts "finite differences" and says
 * FAILED (its length in *len), or NULL. */
static const char *fd_failure(const char *report, int *len)
{
    for (const char *l = report; l && *l;) {
        const char *eol = strchr(l, '\n');
        int n = eol ? (int)(eol - l) : (int)strlen(l);
        const char *bad = strstr(l, "FAILED");
        if (!strncmp(l, "finite differences", 18) && bad && bad < l + n) {
            *len = n;
            return l;
        }
        l = eol ? eol + 1 : NULL;
    }
    return NULL;
}

/* The relu spec with a broken backward relu must fail verification (the
 * finite differences), on the first mesh it loads under. */
static void negative_control(ctx *C, const char *path, const mesh2 *meshes,
                             int nmeshes)
{
    const char *why = NULL;
    char mesh[64] = "", label[256];
    mrt_error err = {0};
    mrt_spec *spec = NULL;
    mrt_plan *plan = NULL;
    mrt_plan_options popt = {.planner = MRT_PLANNER_AUTO};
    char *report = NULL;
    int rst = MRT_OK, show_err = 0;
    for (int k = 0; k < nmeshes; k++) {
        snprintf(mesh, sizeof mesh, "data=%d,model=%d", meshes[k].data,
                 meshes[k].model);
        memset(&err, 0, sizeof err);
        mrt_status st = mrt_spec_load_ex(
            path, &(mrt_spec_load_options){.mesh = mesh}, &spec, &err);
        if (all(st == MRT_OK))
            break;
        mrt_spec_destroy(spec);
        spec = NULL;
    }
    snprintf(label, sizeof label,
             "negative control (%s on {%s}, backward "
             "relu_grad -> copy)",
             base_name(path), mesh);
    if (!spec) {
        why = "the spec loads under no mesh";
        goto done;
    }
    if (!all(ops_fault_break_relu_grad(spec) == 0)) {
        why = "the spec has no backward relu_grad map";
        goto done;
    }
    if (!all(mrt_plan_create(spec, &popt, &plan, &err) == MRT_OK)) {
        why = "plan failed";
        show_err = 1;
        goto done;
    }
    rst = run_verified(spec, plan, &report, &err);
    show_err = rst > 0;
    int fd_len = 0, by_fd = C->rank == 0 && fd_failure(report, &fd_len);
    MPI_Bcast(&by_fd, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rst != MRT_E_VERIFY)
        why = rst == MRT_OK ? "verification passed a wrong gradient"
              : rst < 0     ? "the ranks returned different statuses"
                            : "it failed, but not with MRT_E_VERIFY";
    else if (!by_fd)
        why = "it failed verification, but not by the finite differences";
done:
    if (why) {
        C->failed++;
        report_failure(C, label, why, show_err ? &err : NULL, report);
    } else if (C->rank == 0) {
        int n = 0;
        const char *fd = fd_failure(report, &n);
        printf("%s: ok, it fails with MRT_E_VERIFY (%.*s)\n", label, n,
               fd ? fd : "");
        if (C->verbose && report)
            printf("%s", report);
        fflush(stdout);
    }
    free(report);
    mrt_plan_destroy(plan);
    mrt_spec_destroy(spec);
}

int main(int argc, char **argv)
{
    ctx C = {0};
    int P, nspecs = 0;
    const char *relu = NULL;
    /* as the command line does: BLIS's kernel family before MPI_Init */
    mrt_init(NULL);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &C.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    double t0 = MPI_Wtime();
    mesh2 meshes[MAX_MESHES];
    int nmeshes = meshes_of(P, meshes);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--verbose")) {
            C.verbose = 1;
            continue;
        }
        test_spec(&C, argv[i], meshes, nmeshes);
        nspecs++;
        if (!strcmp(base_name(argv[i]), "relu.yaml"))
            relu = argv[i];
    }
    if (relu)
        negative_control(&C, relu, meshes, nmeshes);
    else if (C.rank == 0)
        printf("negative control: not run (no relu.yaml among the specs)\n");
    if (nspecs == 0) {
        C.failed++;
        if (C.rank == 0)
            printf("usage: mpi_ops [--verbose] SPEC.yaml...\n");
    }
    if (C.rank == 0)
        printf("%d specs on %d ranks (%d meshes) in %.1f s: %d failed\n",
               nspecs, P, nmeshes, MPI_Wtime() - t0, C.failed);
    int status = C.failed == 0 ? 0 : 1;
    MPI_Finalize();
    return status;
}
