/*
 * trace.c — the Chrome trace-event file of `run --trace FILE`.
 *
 * Every rank ran the same steps of the same plan, so only the timings
 * differ between ranks: those (one duration per step) and the host names
 * are gathered to rank 0, which writes everything else from the plan.
 * Times are MPI_Wtime on each rank, in microseconds from the barrier
 * before the run: step k starts when step k-1 ends (the executor runs
 * them back to back), so a rank that waits in a collective shows a long
 * collective, and the ranks' tracks line up at the barrier.  A
 * pipelined rank's track has the steps of its stage only, under one
 * event per slot of the schedule ("F3", cat "slot": microbatch 3's
 * forward), so the trace shows the schedule as it ran.
 *
 * The file (pid 0, one tid per rank):
 *   {"traceEvents": [
 *     {"name": "process_name", "ph": "M", ...},      one per file
 *     {"name": "thread_name", "ph": "M", "tid": R, ...}, one per rank
 *     {"name": "allreduce y", "cat": "allreduce", "ph": "X", "pid": 0,
 *      "tid": R, "ts": ..., "dur": ..., "args": {"step", "op", "bytes",
 *      "axes", "group", "predicted_us"}},             one per step and rank
 *   ], "displayTimeUnit": "ms", "otherData": {...}}
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output.h"
#include "schedule.h"
#include "trace.h"

#define HOST_MAX 64

/* "rank 3 (data=1, model=1) on HOST" */
static void track_name(const mrt_plan *p, int rank, const char *host, char *buf,
                       size_t size)
{
    int64_t c[MRT_MAX_AXES];
    mrt_mesh_coords(&p->mesh, rank, c);
    size_t n = (size_t)snprintf(buf, size, "rank %d (", rank);
    for (int a = 0; a < p->mesh.naxes && n < size; a++)
        n += (size_t)snprintf(buf + n, size - n, "%s%s=%" PRId64, a ? ", " : "",
                              p->mesh.name[a], c[a]);
    if (n < size)
        snprintf(buf + n, size - n, ") on %s", host);
}

static void put_step(FILE *f, const mrt_plan *p, int k, int rank, double ts,
                     double dur)
{
    const mrt_step *s = &p->step[k];
    char name[2 * MRT_NAME_MAX], axes[256];
    snprintf(name, sizeof name, "%s %s", mrt_step_kind_name(s->kind),
             p->tensor_name[p->value[s->out].tensor]);
    fputs(",\n  {\"name\": ", f);
    mrt_json_string(f, name);
    fprintf(f,
            ", \"cat\": \"%s\", \"ph\": \"X\", \"pid\": 0, \"tid\": %d, "
            "\"ts\": %s, \"dur\": %s, \"args\": {\"step\": %d, "
            "\"op\": %d, \"bytes\": %" PRId64 ", \"axes\": ",
            mrt_step_kind_name(s->kind), rank, MRT_JSON_NUM("%.3f", ts * 1e6),
            MRT_JSON_NUM("%.3f", dur * 1e6), k, s->op, s->bytes);
    mrt_json_string(f, mrt_mesh_axes_str(&p->mesh, s->axes, axes, sizeof axes));
    fprintf(f, ", \"group\": %" PRId64 ", \"predicted_us\": %s}}", s->group,
            MRT_JSON_NUM("%.3f", s->time_s * 1e6));
}

/* A pipelined plan's slots on rank r's track (d: its step durations):
 * one event per slot of its stage, "F3" (microbatch 3's forward; B
 * backward, W weight gradient; with virtual stages the chunk's letter),
 * from its first step's start to the end of its last before the next
 * slot begins (an op that waited for a later slot, as a gradient summed
 * over the microbatches, runs in that one's time); coords: the rank's. */
static void put_slots(FILE *f, const mrt_plan *p, int r, const double *d,
                      const int64_t *coords)
{
    const mrt_schedule *sc = p->schedule;
    int n = sc->stages * sc->per_stage;
    double *first = malloc((size_t)n * sizeof *first);
    double *last = malloc((size_t)n * sizeof *last);
    for (int i = 0; first && last && i < n; i++)
        first[i] = last[i] = -1;
    double ts = 0;
    int cur = -1;
    for (int k = 0; first && last && k < p->nsteps; ts += d[k], k++) {
        int q = sc->op_slot[p->step[k].op];
        if (q < 0 || sc->slot[q].stage != coords[p->pipe.axis])
            continue;
        if (first[q] < 0) {
            first[q] = ts;
            cur = q;
        }
        if (q == cur)
            last[q] = ts + d[k];
    }
    for (int i = 0; first && last && i < n; i++) {
        if (first[i] < 0)
            continue;
        const mrt_slot *sl = &sc->slot[i];
        char name[32];
        int n0 = snprintf(name, sizeof name, "%c%d", "FBW"[sl->phase],
                          sl -> micro);
        if (sc->virtual_stages > 1)
            snprintf(name + n0, sizeof name - (size_t)n0, "%c",
                     'a' + sl->chunk / sc->stages % 26);
        fprintf(f,
                ",\n  {\"name\": \"%s\", \"cat\": \"slot\", \"ph\": \"X\", "
                "\"pid\": 0, \"tid\": %d, \"ts\": %s, \"dur\": %s, "
                "\"args\": {\"stage\": %d, \"chunk\": %d, \"micro\": %d, "
                "\"phase\": \"%c\", \"modeled_start_us\": %s}}",
                name, r, MRT_JSON_NUM("%.3f", first[i] * 1e6),
                MRT_JSON_NUM("%.3f", (last[i] - first[i]) * 1e6), sl->stage,
                sl->chunk, sl->micro, "FBW"[sl->phase],
                MRT_JSON_NUM("%.3f", sl->start_s * 1e6));
    }
    free(first);
    free(last);
}

/* The whole file, from every rank's durations (rank-major). */
static void put_trace(FILE *f, const mrt_plan *p, int ranks, const double *dur,
                      const char *hosts, const char *title)
{
    char buf[512];
    fputs("{\"traceEvents\": [\n  {\"name\": \"process_name\", \"ph\": "
          "\"M\", \"pid\": 0, \"tid\": 0, \"args\": {\"name\": ",
          f);
    snprintf(buf, sizeof buf, "meshrt run %s", title);
    mrt_json_string(f, buf);
    fputs("}}", f);
    for (int r = 0; r < ranks; r++) {
        track_name(p, r, hosts + (size_t)r * HOST_MAX, buf, sizeof buf);
        fprintf(f,
                ",\n  {\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": "
                "0, \"tid\": %d, \"args\": {\"name\": ",
                r);
        mrt_json_string(f, buf);
        fprintf(f,
                "}},\n  {\"name\": \"thread_sort_index\", \"ph\": \"M\", "
                "\"pid\": 0, \"tid\": %d, \"args\": {\"sort_index\": %d}}",
                r, r);
    }
    for (int r = 0; r < ranks; r++) {
        const double *d = dur + (size_t)r * (size_t)p->nsteps;
        int64_t c[MRT_MAX_AXES];
        mrt_mesh_coords(&p->mesh, r, c);
        double ts = 0;
        for (int k = 0; k < p->nsteps; ts += d[k], k++)
            if (mrt_step_on_rank(p, &p->step[k], c))
                put_step(f, p, k, r, ts, d[k]);
        if (p->pipe.stages > 1 && p->schedule && p->schedule->op_slot)
            put_slots(f, p, r, d, c);
    }
    fputs("\n], \"displayTimeUnit\": \"ms\", \"otherData\": {\"spec\": ", f);
    mrt_json_string(f, title);
    fprintf(f,
            ", \"ranks\": %d, \"clock\": \"MPI_Wtime, microseconds from "
            "the barrier before the run\"}}\n",
            ranks);
}

struct trace_out {
    const mrt_plan *p;
    int ranks;
    const double *dur;
    const char *hosts, *title;
};

static void put_trace_out(FILE *f, const void *ctx)
{
    const struct trace_out *o = ctx;
    put_trace(f, o->p, o->ranks, o->dur, o->hosts, o->title);
}

/* Writes the trace atomically (temporary file next to path, rename). */
static mrt_status write_file(const char *path, const mrt_plan *p, int ranks,
                             const double *dur, const char *hosts,
                             const char *title, mrt_error *err)
{
    struct trace_out out = {p, ranks, dur, hosts, title};
    return mrt_write_atomically(path, "the trace", put_trace_out, &out, err);
}

mrt_status mrt_trace_write(const mrt_exec *e, const double *dur,
                           const char *path, const char *title, mrt_error *err)
{
    const mrt_plan *p = e->plan;
    int root = e->comm->rank == 0, ranks = e->comm->size;
    char host[HOST_MAX] = "";
    gethostname(host, sizeof host - 1);
    /* Rank 0's buffers: if they cannot be had, the others still take
     * part in the gathers (into nothing), so nobody hangs. */
    double *all = NULL;
    char *hosts = NULL;
    int have = 1;
    if (root) {
        all = calloc((size_t)ranks * (size_t)p->nsteps + 1, sizeof *all);
        hosts = calloc((size_t)ranks, HOST_MAX);
        have = all && hosts;
    }
    MPI_Bcast(&have, 1, MPI_INT, 0, e->comm->world);
    mrt_status st = MRT_OK;
    if (have) {
        /* int counts: nsteps is an int, HOST_MAX a constant */
        MPI_Gather(dur, p->nsteps, MPI_DOUBLE, all, p->nsteps, MPI_DOUBLE, 0,
                   e->comm->world);
        MPI_Gather(host, HOST_MAX, MPI_CHAR, hosts, HOST_MAX, MPI_CHAR, 0,
                   e->comm->world);
        if (root)
            st = write_file(path, p, ranks, all, hosts, title, err);
    } else if (root) {
        st = mrt_error_set(err, MRT_E_NOMEM, path, (mrt_mark){0},
                           "out of memory for the trace");
    }
    free(all);
    free(hosts);
    return st;
}
