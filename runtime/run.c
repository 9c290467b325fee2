/*
 * run.c — mrt_run: set up the mesh on MPI, fill the input shards, walk
 * the plan (N times with --repeat), then report per-op times and the
 * bytes handed to MPI next to the plan's prediction, verify against the
 * unsharded reference and save outputs as asked.
 *
 * Every rank returns the same status: after each phase that can fail on
 * one rank only, the ranks agree (the lowest failing rank's error is
 * broadcast to all), so no rank is left waiting in a collective.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kernel.h"
#include "npy.h"
#include "runtime.h"

/* All ranks end up with the first failing rank's status and error. */
static mrt_status agree(MPI_Comm w, mrt_status st, mrt_error *err)
{
    int rank, size, who;
    MPI_Comm_rank(w, &rank);
    MPI_Comm_size(w, &size);
    int mine = st != MRT_OK ? rank : size;
    MPI_Allreduce(&mine, &who, 1, MPI_INT, MPI_MIN, w);
    if (who == size)
        return MRT_OK;
    mrt_error e = {0};
    if (rank == who && err)
        e = *err;
    e.code = st;
    MPI_Bcast(&e, (int)sizeof e, MPI_BYTE, who, w);
    if (err)
        *err = e;
    return e.code;
}

/* A hash of what each rank will do, to confirm all built the same plan. */
static uint64_t plan_hash(const mrt_plan *p)
{
    uint64_t h = 1469598103934665603ull;
    for (int k = 0; k < p->nsteps; k++) {
        const mrt_step *s = &p->step[k];
        uint64_t parts[4] = {(uint64_t)s->kind, s->axes, (uint64_t)s->bytes,
                             (uint64_t)p->value[s->out].count};
        for (int i = 0; i < 4; i++)
            h = (h ^ parts[i]) * 1099511628211ull;
    }
    return h;
}

static mrt_status check_world(const mrt_spec *s, const mrt_plan *p,
                              mrt_error *err)
{
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != p->mesh.nranks) {
        char mesh[512];
        int n = 0;
        for (int a = 0; a < p->mesh.naxes; a++)
            n += snprintf(mesh + n, sizeof mesh - (size_t)n, "%s%s=%" PRId64,
                          a ? "," : "", p->mesh.name[a], p->mesh.size[a]);
        return mrt_error_set(
            err, MRT_E_MESH, s->path, s->mesh_mark,
            "the mesh %s has %" PRId64 " ranks but mpirun started %d "
            "(run with -n %" PRId64 ", or choose a mesh of %d ranks with "
            "--mesh)",
            mesh, p->mesh.nranks, size, p->mesh.nranks, size);
    }
    uint64_t h = plan_hash(p), lo, hi;
    MPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    if (lo != hi)
        return mrt_error_set(err, MRT_E_RUNTIME, s->path, (mrt_mark){0},
                             "the ranks built different plans");
    return MRT_OK;
}

static mrt_status init_inputs(const mrt_spec *s, mrt_exec *e, mrt_error *err)
{
    const mrt_plan *p = e->plan;
    mrt_status st = MRT_OK;
    for (int t = 0; t < p->ninputs && st == MRT_OK; t++) {
        int v = p->tensor_value[t];
        st = mrt_shard_init(s, t, &p->value[v].layout, &p->mesh,
                            e->comm->coords, e->buf[v], err);
    }
    return st;
}

/* Steps whose bytes handed to MPI differ from the plan, on any rank. */
static int64_t byte_mismatches(const mrt_exec *e)
{
    int64_t bad = 0, all;
    for (int k = 0; k < e->plan->nsteps; k++)
        bad += e->step_bytes[k] != e->plan->step[k].bytes;
    MPI_Allreduce(&bad, &all, 1, MPI_INT64_T, MPI_SUM, e->comm->world);
    return all;
}

/* The op's time per run, the maximum over ranks (valid on rank 0). */
static double op_time(const mrt_exec *e, int i, int runs)
{
    const mrt_plan_op *o = &e->plan->op[i];
    double t = 0, tmax = 0;
    for (int k = o->first_step; k < o->first_step + o->nsteps; k++)
        t += e->step_time[k];
    t /= runs;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, e->comm->world);
    return tmax;
}

static int64_t op_bytes(const mrt_exec *e, int i)
{
    const mrt_plan_op *o = &e->plan->op[i];
    int64_t b = 0;
    for (int k = o->first_step; k < o->first_step + o->nsteps; k++)
        b += e->step_bytes[k];
    return b;
}

static void report_times(const mrt_spec *s, const mrt_exec *e,
                         const mrt_run_options *opt, int runs, FILE *f)
{
    const mrt_plan *p = e->plan;
    int root = e->comm->rank == 0;
    int64_t bad = byte_mismatches(e), measured = 0;
    double total = 0;
    if (root && !opt->json)
        fprintf(f, "run %s: %d ranks, %s, %d run%s\n  %-3s %-12s %14s %16s %16s\n",
                s->path, e->comm->size, mrt_dtype_name(p->dtype), runs,
                runs == 1 ? "" : "s", "op", "out", "ms/run", "bytes to MPI",
                "planned bytes");
    if (root && opt->json)
        fprintf(f, "{\"spec\": \"%s\", \"ranks\": %d, \"runs\": %d, \"ops\": [",
                s->path, e->comm->size, runs);
    for (int i = 0; i < p->nops; i++) {
        double t = op_time(e, i, runs);
        int64_t b = op_bytes(e, i);
        const char *name = p->tensor_name[p->value[p->op[i].out_value].tensor];
        total += t;
        measured += b;
        if (root && !opt->json)
            fprintf(f, "  %-3d %-12s %14.3f %16" PRId64 " %16" PRId64 "\n", i,
                    name, t * 1e3, b, p->op[i].comm_bytes);
        if (root && opt->json)
            fprintf(f, "%s{\"out\": \"%s\", \"time_s\": %.9g, \"bytes\": %" PRId64
                       ", \"planned_bytes\": %" PRId64 "}",
                    i ? ", " : "", name, t, b, p->op[i].comm_bytes);
    }
    if (root && !opt->json)
        fprintf(f, "  %-16s %14.3f %16" PRId64 " %16" PRId64 "  %s\n", "total",
                total * 1e3, measured, p->comm_bytes,
                bad ? "MISMATCH" : "bytes match the plan");
    if (root && opt->json)
        fprintf(f, "], \"totals\": {\"time_s\": %.9g, \"bytes\": %" PRId64
                   ", \"planned_bytes\": %" PRId64 ", \"bytes_match\": %s}",
                total, measured, p->comm_bytes, bad ? "false" : "true");
}

/* Max |x - r| / max |r| over the tensor. */
static double rel_error(mrt_dtype t, const void *x, const void *r, int64_t n)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        double a = t == MRT_F64 ? ((const double *)x)[i] : ((const float *)x)[i];
        double b = t == MRT_F64 ? ((const double *)r)[i] : ((const float *)r)[i];
        num = fmax(num, fabs(a - b));
        den = fmax(den, fabs(b));
        if (isnan(a) != isnan(b))
            return INFINITY;
    }
    return den > 0 ? num / den : num;
}

static int64_t global_count(const mrt_layout *l)
{
    int64_t n = 1;
    for (int i = 0; i < l->ndims; i++)
        n *= l->size[i];
    return n;
}

static mrt_status verify(const mrt_spec *s, mrt_exec *e,
                         const mrt_run_options *opt, FILE *f, mrt_error *err)
{
    const mrt_plan *p = e->plan;
    int root = e->comm->rank == 0;
    void **ref = NULL;
    mrt_status st = root ? mrt_reference_run(s, &ref, err) : MRT_OK;
    if ((st = agree(e->comm->world, st, err)) != MRT_OK)
        return st;
    double tol = p->dtype == MRT_F64 ? 1e-10 : 1e-4;
    int failed = 0;
    if (root && opt->json)
        fputs(", \"verify\": [", f);
    for (int k = 0; k < p->noutputs && st == MRT_OK; k++) {
        int t = p->output[k];
        void *full = NULL;
        st = agree(e->comm->world,
                   mrt_shard_gather(e, p->tensor_value[t], &full, err), err);
        if (st == MRT_OK && root) {
            double re = rel_error(p->dtype, full, ref[k],
                                  global_count(&p->value[p->tensor_value[t]].layout));
            int ok = re <= tol;
            failed += !ok;
            if (opt->json)
                fprintf(f, "%s{\"tensor\": \"%s\", \"max_rel_error\": %.3g, "
                           "\"tolerance\": %.0e, \"ok\": %s}",
                        k ? ", " : "", p->tensor_name[t], re, tol,
                        ok ? "true" : "false");
            else
                fprintf(f, "verify %s: max relative error %.3g against the "
                           "unsharded reference (tolerance %.0e): %s\n",
                        p->tensor_name[t], re, tol, ok ? "ok" : "FAILED");
        }
        free(full);
    }
    if (root && opt->json)
        fputc(']', f);
    if (ref)
        for (int k = 0; k < p->noutputs; k++)
            free(ref[k]);
    free(ref);
    if (st != MRT_OK)
        return st;
    MPI_Bcast(&failed, 1, MPI_INT, 0, e->comm->world);
    if (failed)
        return mrt_error_set(err, MRT_E_VERIFY, s->path, (mrt_mark){0},
                             "%d output%s differ from the unsharded reference",
                             failed, failed == 1 ? "" : "s");
    return MRT_OK;
}

static mrt_status save(const mrt_spec *s, mrt_exec *e, const char *dir,
                       mrt_error *err)
{
    const mrt_plan *p = e->plan;
    int root = e->comm->rank == 0;
    mrt_status st = MRT_OK;
    if (root && mkdir(dir, 0777) != 0 && errno != EEXIST)
        st = mrt_error_set(err, MRT_E_IO, dir, (mrt_mark){0},
                           "cannot create the folder: %s", strerror(errno));
    st = agree(e->comm->world, st, err);
    for (int k = 0; k < p->noutputs && st == MRT_OK; k++) {
        int t = p->output[k];
        const mrt_layout *l = &p->value[p->tensor_value[t]].layout;
        void *full = NULL;
        st = mrt_shard_gather(e, p->tensor_value[t], &full, err);
        if (st == MRT_OK && root) {
            char path[PATH_MAX + MRT_NAME_MAX + 8];
            snprintf(path, sizeof path, "%s/%s.npy", dir, p->tensor_name[t]);
            st = mrt_npy_write(path, p->dtype, l->ndims, l->size, full, err);
        }
        free(full);
        st = agree(e->comm->world, st, err);
    }
    return st;
}

mrt_status mrt_run(const mrt_spec *s, const mrt_plan *p,
                   const mrt_run_options *opt, mrt_error *err)
{
    FILE *f = opt->report ? opt->report : stdout;
    mrt_comm *comm = NULL;
    mrt_exec *e = NULL;
    mrt_status st = agree(MPI_COMM_WORLD, check_world(s, p, err), err);
    if (st != MRT_OK)
        return st;
    mrt_kernel_init();
    st = agree(MPI_COMM_WORLD, mrt_comm_create(p, MPI_COMM_WORLD, &comm, err),
               err);
    if (st == MRT_OK)
        st = agree(MPI_COMM_WORLD, mrt_exec_create(p, comm, &e, err), err);
    if (st == MRT_OK)
        st = agree(MPI_COMM_WORLD, init_inputs(s, e, err), err);
    int runs = opt->repeat > 1 ? opt->repeat : 1;
    for (int r = 0; r < runs && st == MRT_OK; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        st = agree(MPI_COMM_WORLD, mrt_exec_run(e, err), err);
    }
    int reported = st == MRT_OK;
    if (reported)
        report_times(s, e, opt, runs, f);
    if (st == MRT_OK && opt->verify)
        st = verify(s, e, opt, f, err);
    if (st == MRT_OK && opt->save_dir)
        st = save(s, e, opt->save_dir, err);
    if (reported && comm->rank == 0 && opt->json)
        fputs("}\n", f);
    if (st == MRT_OK && comm && byte_mismatches(e))
        st = mrt_error_set(err, MRT_E_RUNTIME, s->path, (mrt_mark){0},
                           "the bytes handed to MPI differ from the plan");
    fflush(f);
    mrt_exec_destroy(e);
    mrt_comm_destroy(comm);
    return st;
}
