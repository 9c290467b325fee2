/*
 * calibrate.c — `meshrt calibrate`: measures links, local rates and
 * collectives on the ranks it runs on (see calibrate.h for what, and
 * docs/calibration.md for how to read the figures).
 *
 * How, and why that way:
 *  - Links: ping-pong between neighbours of each group along a mesh axis
 *    (group members 0-1, 2-3, ...; with an odd group the last one rests),
 *    every group at once, because in a run every group of the axis talks
 *    at once.  Only the rank that starts a round trip times it.  Latency
 *    is the median half round trip of 8 bytes; bandwidth, the median over
 *    three large sizes of bytes / (half round trip - latency).  Across
 *    pairs, the slowest counts: a collective waits for its slowest link.
 *  - Tiers: the same ping-pong between ranks that share a node (a host
 *    name and network namespace: runtime/hier.c) and between nodes, when
 *    the nodes are of one size and filled in rank order (the order the
 *    cost model assumes).
 *  - Local rates: every rank at once, as in a run (ranks that share a
 *    core share it here too); per repetition the slowest rank counts,
 *    and the best repetition is kept.  GEMM is BLIS single-threaded, as the
 *    executor runs it; the reduction rate is a sum of two arrays (the
 *    work MPI does in a reduction); the copy rate is memcpy.
 *  - Collectives: each kind at three sizes over each axis (and over all
 *    axes when there are several), timed from a barrier; per repetition
 *    the slowest rank counts, and the median repetition is reported next
 *    to mrt_cost_collective's prediction with the profile just measured.
 * Every buffer is allocated up front and the ranks agree on that before
 * any measurement, so no rank is left alone in a collective.
 */
#include <blis.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "calibrate.h"
#include "kernel.h"
#include "runtime.h"
#include "spec.h"

/* Sizes and repetitions of a full and of a quick calibration. */
typedef struct budget {
    int lat_reps, bw_reps;
    int64_t bw_bytes[3];
    int gemm_n[MRT_COMPUTE_DTYPE_COUNT], gemm_reps;
    int64_t reduce_elems, copy_bytes;
    int local_reps;
    int64_t coll_bytes[MRT_CALIB_SIZES];
    int coll_reps_small, coll_reps_large; /* up to 256 KiB, above */
} budget;

#define MiB (1ll << 20)
static const budget full_budget = {
    200,      5,  {4 * MiB, 8 * MiB, 16 * MiB}, {1536, 1024}, 3, 4 * MiB,
    64 * MiB, 15, {64 << 10, 1 * MiB, 8 * MiB}, 20,           9};
static const budget quick_budget = {
    50,       3, {1 * MiB, 2 * MiB, 4 * MiB},    {384, 256}, 2, 1 * MiB,
    16 * MiB, 3, {16 << 10, 256 << 10, 1 * MiB}, 10,         3};
#define GATHER_MAX (64 * MiB) /* largest all-gather result */
/* Every message below is one of these fixed sizes, at most GATHER_MAX
 * bytes, so the int counts of the MPI calls here cannot overflow (the
 * sizes that come from a spec go through runtime/large_count.c). */
_Static_assert(GATHER_MAX <= INT_MAX, "calibration messages fit an int");

static const mrt_coll kinds[MRT_CALIB_KINDS] = {
    MRT_COLL_ALLREDUCE, MRT_COLL_ALLGATHER, MRT_COLL_REDUCE_SCATTER,
    MRT_COLL_ALLTOALL};
static const char *const coll_names[MRT_COLL_COUNT] = {
    [MRT_COLL_ALLREDUCE] = "allreduce",
    [MRT_COLL_ALLGATHER] = "allgather",
    [MRT_COLL_REDUCE_SCATTER] = "reduce_scatter",
    [MRT_COLL_ALLTOALL] = "alltoall",
    [MRT_COLL_PERMUTE] = "permute"};
_Static_assert(sizeof coll_names / sizeof coll_names[0] == MRT_COLL_COUNT,
               "one name per collective kind");

const char *mrt_blis_kernel_family(void)
{
    return bli_arch_string(bli_arch_query_id());
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, by_value);
    return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

/* A measurement to 4 significant digits: all it can claim, and what
 * the profile file then shows. */
double mrt_calib_sig4(double v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.4g", v);
    return strtod(buf, NULL);
}

/* The buffers every measurement uses, allocated once. */
typedef struct bufs {
    char *send, *recv;  /* messages and collectives */
    double *t, *tmax;   /* repetition times */
    void *a, *b, *c;    /* GEMM operands; reduction and copy arrays */
    size_t local_bytes; /* of each of a, b, c */
} bufs;

/* ---- links ---------------------------------------------------------- */

/* Median half round trip of `bytes` with partner (after a warm-up);
 * 0 on the rank that answers, whose clock does not see a round trip. */
static double pingpong(MPI_Comm g, int partner, int first, char *buf,
                       int64_t bytes, int reps, double *t)
{
    for (int r = -1; r < reps; r++) {
        double t0 = MPI_Wtime();
        if (first) {
            MPI_Send(buf, (int)bytes, MPI_BYTE, partner, 0, g);
            MPI_Recv(buf, (int)bytes, MPI_BYTE, partner, 0, g,
                     MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, (int)bytes, MPI_BYTE, partner, 0, g,
                     MPI_STATUS_IGNORE);
            MPI_Send(buf, (int)bytes, MPI_BYTE, partner, 0, g);
        }
        if (r >= 0)
            t[r] = (MPI_Wtime() - t0) / 2;
    }
    return first ? median(t, reps) : 0;
}

static mrt_link measure_link(MPI_Comm world, MPI_Comm g, const budget *z,
                             bufs *b)
{
    int j, n;
    MPI_Comm_rank(g, &j);
    MPI_Comm_size(g, &n);
    int partner = (j ^ 1) < n ? j ^ 1 : -1, first = !(j & 1);
    double mine[4] = {0}, worst[4];
    MPI_Barrier(world);
    if (partner >= 0)
        mine[0] = pingpong(g, partner, first, b->send, 8, z->lat_reps, b->t);
    for (int s = 0; s < 3; s++) {
        MPI_Barrier(world);
        if (partner >= 0)
            mine[1 + s] = pingpong(g, partner, first, b->send, z->bw_bytes[s],
                                   z->bw_reps, b->t);
    }
    MPI_Allreduce(mine, worst, 4, MPI_DOUBLE, MPI_MAX, world);
    double est[3];
    for (int s = 0; s < 3; s++)
        est[s] = (double)z->bw_bytes[s] / fmax(worst[1 + s] - worst[0], 1e-9);
    return (mrt_link){.latency_s = mrt_calib_sig4(worst[0]),
                      .bandwidth_Bps = mrt_calib_sig4(median(est, 3))};
}

/* ---- local rates ---------------------------------------------------- */

static void gemm(mrt_dtype t, int n, void *a, void *b, void *c)
{
    if (t == MRT_F64) {
        double one = 1, zero = 0;
        bli_dgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, n, n, n, &one, a, n, 1,
                  b, n, 1, &zero, c, n, 1);
    } else {
        float one = 1, zero = 0;
        bli_sgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, n, n, n, &one, a, n, 1,
                  b, n, 1, &zero, c, n, 1);
    }
}

static volatile double sink; /* keeps the timed loops from being dropped */

/* What one repetition of local measurement `what` does. */
enum local { LOCAL_GEMM_F32, LOCAL_GEMM_F64, LOCAL_REDUCE, LOCAL_COPY };

static void run_local(enum local what, const budget *z, bufs *b)
{
    switch (what) {
    case LOCAL_GEMM_F32:
        gemm(MRT_F32, z->gemm_n[MRT_F32], b->a, b->b, b->c);
        break;
    case LOCAL_GEMM_F64:
        gemm(MRT_F64, z->gemm_n[MRT_F64], b->a, b->b, b->c);
        break;
    case LOCAL_REDUCE: {
        float *x = b->a, *y = b->b;
        for (int64_t i = 0; i < z->reduce_elems; i++)
            y[i] += x[i];
        sink = y[z->reduce_elems / 2];
        break;
    }
    case LOCAL_COPY:
        memcpy(b->b, b->a, (size_t)z->copy_bytes);
        sink = ((char *)b->b)[z->copy_bytes / 2];
        break;
    }
}

/* What local_rate times: one repetition of `what`. */
typedef struct local_job {
    enum local what;
    const budget *z;
    bufs *b;
} local_job;

static void run_job(void *arg)
{
    const local_job *j = arg;
    run_local(j->what, j->z, j->b);
}

/* Work units per second: per repetition, from a barrier to the end of
 * the slowest rank (a step of a run takes that long); the best
 * repetition. */
static double local_rate(MPI_Comm world, enum local what, double work,
                         const budget *z, bufs *b)
{
    local_job j = {what, z, b};
    return mrt_calib_sig4(work /
                          mrt_calib_best(world, z->local_reps, run_job, &j));
}

static void measure_local(MPI_Comm world, const budget *z, bufs *b,
                          mrt_calibration *c)
{
    mrt_profile *p = &c->profile;
    memset(b->a, 0, b->local_bytes); /* touch every page before timing */
    memset(b->b, 0, b->local_bytes);
    memset(b->c, 0, b->local_bytes);
    for (int t = 0; t < MRT_COMPUTE_DTYPE_COUNT; t++) {
        double n = c->gemm_n[t] = z->gemm_n[t];
        p->gemm_flops[t] = local_rate(
            world, t == MRT_F64 ? LOCAL_GEMM_F64 : LOCAL_GEMM_F32,
            2 * n * n * n, z, b);
    }
    c->reduce_elems = z->reduce_elems;
    p->reduce_flops = local_rate(world, LOCAL_REDUCE, (double)z->reduce_elems,
                                 z, b);
    c->copy_bytes = z->copy_bytes;
    p->copy_Bps = local_rate(world, LOCAL_COPY, (double)z->copy_bytes, z, b);
    snprintf(p->kernel, sizeof p->kernel, "%s", mrt_blis_kernel_family());
    int quick = z == &quick_budget;
    /* (short repetitions, more of them: one that no other process
     * interrupted is likelier among 7) */
    mrt_calib_pools pl = {b->a,
                          b->b,
                          b->c,
                          b->local_bytes,
                          quick ? 7 : 15,
                          quick,
                          {z->gemm_n[MRT_F32], z->gemm_n[MRT_F64]},
                          quick ? 0.001 : 0.01};
    mrt_calib_gemm_rows(world, &pl, p);
    mrt_calib_map_rows(world, &pl, p);
}

/* ---- collectives ---------------------------------------------------- */

void mrt_calib_run_coll(mrt_coll kind, MPI_Comm g, int n, int64_t bytes,
                        void *send, void *recv)
{
    int count = (int)(bytes / 4), per = count / n;
    switch (kind) {
    case MRT_COLL_ALLREDUCE:
        MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, g);
        break;
    case MRT_COLL_ALLGATHER:
        MPI_Allgather(send, count, MPI_FLOAT, recv, count, MPI_FLOAT, g);
        break;
    case MRT_COLL_REDUCE_SCATTER:
        MPI_Reduce_scatter_block(send, recv, per, MPI_FLOAT, MPI_SUM, g);
        break;
    case MRT_COLL_ALLTOALL:
        MPI_Alltoall(send, per, MPI_FLOAT, recv, per, MPI_FLOAT, g);
        break;
    default: break;
    }
}

static void measure_coll(MPI_Comm world, MPI_Comm g, unsigned axes,
                         const budget *z, bufs *b, mrt_calibration *c)
{
    int n;
    MPI_Comm_size(g, &n);
    for (int k = 0; k < MRT_CALIB_KINDS; k++)
        for (int s = 0; s < MRT_CALIB_SIZES; s++) {
            int64_t bytes = z->coll_bytes[s];
            if (kinds[k] == MRT_COLL_ALLGATHER && bytes * n > GATHER_MAX)
                bytes = GATHER_MAX / n;
            bytes -= bytes % (4 * n); /* whole floats per group member */
            int reps = bytes <= (256 << 10) ? z->coll_reps_small
                                            : z->coll_reps_large;
            for (int r = -1; r < reps; r++) {
                MPI_Barrier(world);
                double t0 = MPI_Wtime();
                mrt_calib_run_coll(kinds[k], g, n, bytes, b->send, b->recv);
                if (r >= 0)
                    b->t[r] = MPI_Wtime() - t0;
            }
            MPI_Allreduce(b->t, b->tmax, reps, MPI_DOUBLE, MPI_MAX, world);
            mrt_calib_coll *m = &c->coll[c->ncoll++];
            *m = (mrt_calib_coll){.kind = kinds[k],
                                  .axes = axes,
                                  .group = n,
                                  .bytes = bytes,
                                  .measured_s = median(b->tmax, reps)};
            m->model_s = mrt_cost_collective(&c->profile, &c->mesh, kinds[k],
                                             axes, bytes, 4)
                             .time_s;
        }
}

/* ---- the whole calibration ------------------------------------------ */

static mrt_status alloc_bufs(const budget *z, int ranks, bufs *b,
                             mrt_error *err)
{
    size_t msg = (size_t)z->bw_bytes[2], coll = (size_t)z->coll_bytes[2];
    size_t gather = coll * (size_t)ranks;
    if (gather > GATHER_MAX)
        gather = GATHER_MAX;
    size_t recv = gather > coll ? gather : coll;
    size_t local = (size_t)z->copy_bytes;
    for (int t = 0; t < MRT_COMPUTE_DTYPE_COUNT; t++) {
        size_t g = (size_t)z->gemm_n[t] * (size_t)z->gemm_n[t] * 8;
        local = g > local ? g : local;
    }
    if ((size_t)z->reduce_elems * 4 > local)
        local = (size_t)z->reduce_elems * 4;
    b->local_bytes = local;
    b->send = calloc(1, msg > coll ? msg : coll);
    b->recv = calloc(1, recv);
    b->t = calloc(256, sizeof *b->t);
    b->tmax = calloc(256, sizeof *b->tmax);
    b->a = malloc(local);
    b->b = malloc(local);
    b->c = malloc(local);
    if (b->send && b->recv && b->t && b->tmax && b->a && b->b && b->c)
        return MRT_OK;
    return mrt_error_set(err, MRT_E_NOMEM, "", (mrt_mark){0},
                         "out of memory "
                         "for the calibration buffers (about %zu MiB per "
                         "rank)",
                         (2 * recv + 3 * local) >> 20);
}

static void free_bufs(bufs *b)
{
    free(b->send);
    free(b->recv);
    free(b->t);
    free(b->tmax);
    free(b->a);
    free(b->b);
    free(b->c);
}

/* Host names: rank 0's, and how many distinct ones the ranks have. */
static void find_hosts(MPI_Comm world, mrt_calibration *c)
{
    char mine[256] = "", *all = NULL;
    gethostname(mine, sizeof mine - 1);
    int rank;
    MPI_Comm_rank(world, &rank);
    if (rank == 0)
        all = calloc((size_t)c->ranks, sizeof mine);
    MPI_Gather(mine, sizeof mine, MPI_CHAR, all, sizeof mine, MPI_CHAR, 0,
               world);
    c->hosts = 1;
    for (int r = 1; all && r < c->ranks; r++) {
        int seen = 0;
        for (int q = 0; q < r && !seen; q++)
            seen = !strcmp(all + (size_t)r * sizeof mine,
                           all + (size_t)q * sizeof mine);
        c->hosts += !seen;
    }
    free(all);
    MPI_Bcast(&c->hosts, 1, MPI_INT, 0, world);
    MPI_Bcast(mine, sizeof mine, MPI_CHAR, 0, world);
    snprintf(c->host, sizeof c->host, "%s", mine);
}

static void describe(mrt_calibration *c)
{
    char when[32], mesh[512] = "", others[64] = "";
    time_t now = time(NULL);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    int n = 0;
    for (int a = 0; a < c->mesh.naxes; a++)
        n += snprintf(mesh + n, sizeof mesh - (size_t)n, "%s%s=%lld",
                      a ? "," : "", c->mesh.name[a],
                      (long long)c->mesh.size[a]);
    if (c->hosts > 1)
        snprintf(others, sizeof others, " and %d more host%s", c->hosts - 1,
                 c->hosts == 2 ? "" : "s");
    snprintf(c->profile.source, sizeof c->profile.source,
             "calibrated on %s%s with %d rank%s (mesh %s%s), %s", c->host,
             others, c->ranks, c->ranks == 1 ? "" : "s", mesh,
             c->quick ? ", quick" : "", when);
}

/* The worst of the measured links, for axes the profile does not name. */
static void set_links(mrt_calibration *c)
{
    mrt_link worst = {0, INFINITY};
    for (int i = 0; i < c->nlinks; i++) {
        const mrt_link *l = &c->link[i].link;
        mrt_profile_set_link(&c->profile, c->mesh.name[c->link[i].axis], *l);
        worst.latency_s = fmax(worst.latency_s, l->latency_s);
        worst.bandwidth_Bps = fmin(worst.bandwidth_Bps, l->bandwidth_Bps);
    }
    if (c->nlinks)
        c->profile.fallback = worst;
}

/* The collectives timed become the profile's rows (the first of each
 * kind, group size and bytes: axes of one size are alike here), and the
 * profile says how many ranks shared how many cores on a host. */
static void keep_rows(mrt_calibration *c)
{
    mrt_profile *p = &c->profile;
    p->ncoll = 0;
    for (int i = 0; i < c->ncoll && p->ncoll < MRT_PROFILE_ROWS; i++) {
        const mrt_calib_coll *m = &c->coll[i];
        int seen = 0;
        for (int j = 0; j < p->ncoll; j++)
            seen |= p->coll[j].kind == (int)m->kind &&
                    p->coll[j].group == m->group &&
                    p->coll[j].bytes == m->bytes;
        if (!seen && m->measured_s > 0)
            p->coll[p->ncoll++] = (mrt_coll_row){(int)m->kind, m->group,
                                                 m->bytes, m->measured_s};
    }
    mrt_profile_sort_rows(p);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    p->cores = cores > 0 ? (int)cores : 0;
    p->ranks = (c->ranks + c->hosts - 1) / (c->hosts > 0 ? c->hosts : 1);
}

/* ---- nodes ---------------------------------------------------------- */

/* The ranks per node when the nodes are of one size and filled in rank
 * order (ranks 0 .. R-1 on the first), else 0 with c->nodes_note set. */
static int64_t nodes_in_order(MPI_Comm world, MPI_Comm shared,
                              mrt_calibration *c)
{
    int rank, n, lead, bad = 0, sizes[2], all[2];
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(shared, &n);
    lead = rank - rank % n; /* the node's first rank, if in order */
    int first = rank;
    MPI_Allreduce(&rank, &first, 1, MPI_INT, MPI_MIN, shared);
    bad = first != lead;
    sizes[0] = n, sizes[1] = -n;
    MPI_Allreduce(sizes, all, 2, MPI_INT, MPI_MIN, world);
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_LOR, world);
    c->nodes = c->ranks / n;
    if (all[0] != -all[1] || bad)
        snprintf(c->nodes_note, sizeof c->nodes_note,
                 "the nodes are not of one size filled in rank order: "
                 "no tiers measured");
    else if (c->nodes < 2)
        snprintf(c->nodes_note, sizeof c->nodes_note,
                 "one node: the inter-node tier cannot be measured here");
    else
        return n;
    return 0;
}

/* Both tiers: pairs of ranks inside each node, and pairs of nodes (the
 * ranks of one place in their nodes), every pair at once. */
static void measure_tiers(MPI_Comm world, const budget *z, bufs *b,
                          mrt_calibration *c)
{
    MPI_Comm shared, cross;
    int rank, place;
    MPI_Comm_rank(world, &rank);
    mrt_hier_node_comm(world, &shared);
    int64_t rpn = nodes_in_order(world, shared, c);
    MPI_Comm_rank(shared, &place);
    MPI_Comm_split(world, place, rank, &cross);
    if (rpn > 0) {
        c->ranks_per_node = rpn;
        c->intra = rpn > 1 ? measure_link(world, shared, z, b)
                           : c->profile.fallback;
        c->inter = measure_link(world, cross, z, b);
        c->profile.ranks_per_node = rpn;
        c->profile.intra = c->intra;
        c->profile.inter = c->inter;
    }
    MPI_Comm_free(&cross);
    MPI_Comm_free(&shared);
}

static void measure(MPI_Comm world, const budget *z, bufs *b,
                    mrt_calibration *c)
{
    int rank;
    MPI_Comm_rank(world, &rank);
    int64_t coords[MRT_MAX_AXES];
    mrt_mesh_coords(&c->mesh, rank, coords);
    /* One group set per axis of more than one rank, then all of them
     * together when there are several. */
    MPI_Comm group[MRT_MAX_AXES + 1];
    unsigned mask[MRT_MAX_AXES + 1], all = 0;
    int naxes = 0, ngroups;
    for (int a = 0; a < c->mesh.naxes; a++)
        if (c->mesh.size[a] > 1) {
            mask[naxes++] = 1u << a;
            all |= 1u << a;
        }
    ngroups = naxes;
    if (naxes > 1)
        mask[ngroups++] = all;
    for (int i = 0; i < ngroups; i++)
        MPI_Comm_split(
            world, (int)mrt_mesh_group_color(&c->mesh, mask[i], coords),
            (int)mrt_mesh_group_index(&c->mesh, mask[i], coords), &group[i]);
    for (int i = 0; i < naxes; i++) {
        mrt_calib_link *l = &c->link[c->nlinks++];
        l->axis = __builtin_ctz(mask[i]);
        l->group = c->mesh.size[l->axis];
        l->link = measure_link(world, group[i], z, b);
    }
    set_links(c);
    measure_tiers(world, z, b, c);
    measure_local(world, z, b, c);
    for (int i = 0; i < ngroups; i++)
        measure_coll(world, group[i], mask[i], z, b, c);
    for (int i = 0; i < ngroups; i++)
        MPI_Comm_free(&group[i]);
    keep_rows(c);
}

mrt_status mrt_calibrate(MPI_Comm world, const mrt_mesh *mesh, int quick,
                         mrt_calibration *c, mrt_error *err)
{
    const budget *z = quick ? &quick_budget : &full_budget;
    double t0 = MPI_Wtime();
    memset(c, 0, sizeof *c);
    mrt_profile_default(&c->profile);
    c->mesh = *mesh;
    c->quick = quick;
    MPI_Comm_size(world, &c->ranks);
    if (c->ranks != mesh->nranks)
        return mrt_comm_agree(
            world,
            mrt_error_set(err, MRT_E_MESH, "", (mrt_mark){0},
                          "the mesh has %lld ranks but the world %d",
                          (long long)mesh->nranks, c->ranks),
            err);
    bufs b = {0};
    mrt_status st = mrt_comm_agree(world, alloc_bufs(z, c->ranks, &b, err),
                                   err);
    if (st == MRT_OK) {
        mrt_kernel_init();
        find_hosts(world, c);
        measure(world, z, &b, c);
        describe(c);
    }
    free_bufs(&b);
    c->seconds = MPI_Wtime() - t0;
    MPI_Bcast(&c->seconds, 1, MPI_DOUBLE, 0, world);
    return st;
}

/* ---- reporting ------------------------------------------------------ */

static const char *axes_str(const mrt_calibration *c, unsigned axes,
                            const char *sep, char *buf, int size)
{
    int n = 0;
    buf[0] = '\0';
    for (int a = 0; a < c->mesh.naxes; a++)
        if (axes & (1u << a))
            n += snprintf(buf + n, (size_t)(size - n), "%s%s", n ? sep : "",
                          c->mesh.name[a]);
    return buf;
}

void mrt_calibration_print(const mrt_calibration *c, FILE *f)
{
    if (!c || !f)
        return;
    const mrt_profile *p = &c->profile;
    char axes[256];
    fprintf(f, "calibrate: %s\n", p->source);
    if (c->nlinks == 0)
        fprintf(f,
                "links: none to measure on one rank; the default link "
                "(%.3g us, %.3g GB/s) is kept\n",
                p->fallback.latency_s * 1e6, p->fallback.bandwidth_Bps / 1e9);
    else
        fprintf(f,
                "links (ping-pong between group neighbours, all groups at "
                "once; the slowest pair):\n  %-16s %6s %12s %12s\n",
                "axis", "group", "latency", "bandwidth");
    for (int i = 0; i < c->nlinks; i++)
        fprintf(f, "  %-16s %6lld %9.3f us %7.3f GB/s\n",
                c->mesh.name[c->link[i].axis], (long long)c->link[i].group,
                c->link[i].link.latency_s * 1e6,
                c->link[i].link.bandwidth_Bps / 1e9);
    if (c->ranks_per_node > 0)
        fprintf(f,
                "nodes: %d of %lld ranks (by host; ping-pong "
                "between pairs inside a node, and between nodes):\n"
                "  %-16s %9.3f us %7.3f GB/s\n  %-16s %9.3f us %7.3f GB/s\n",
                c->nodes, (long long)c->ranks_per_node, "intra-node",
                c->intra.latency_s * 1e6, c->intra.bandwidth_Bps / 1e9,
                "inter-node", c->inter.latency_s * 1e6,
                c->inter.bandwidth_Bps / 1e9);
    else
        fprintf(f, "nodes: %s\n", c->nodes_note);
    fprintf(f,
            "local rates per rank (every rank busy at once, as in a run; "
            "best run of the slowest rank):\n"
            "  GEMM float32   %8.2f GFLOP/s  (BLIS %s, single-threaded, "
            "n = %d)\n"
            "  GEMM float64   %8.2f GFLOP/s  (n = %d)\n"
            "  reduction      %8.3f GFLOP/s  (sum of two arrays of %lld "
            "floats)\n"
            "  copy           %8.2f GB/s     (memcpy of %lld MiB)\n",
            p->gemm_flops[MRT_F32] / 1e9, p->kernel, c->gemm_n[MRT_F32],
            p->gemm_flops[MRT_F64] / 1e9, c->gemm_n[MRT_F64],
            p->reduce_flops / 1e9, (long long)c->reduce_elems,
            p->copy_Bps / 1e9, (long long)(c->copy_bytes >> 20));
    mrt_calib_print_rates(p, f);
    if (c->ncoll)
        fprintf(f,
                "collectives (float32; median repetition of the slowest "
                "rank) against the model with these links:\n"
                "  %-15s %-12s %5s %10s %12s %12s %7s\n",
                "kind", "axes", "group", "bytes", "measured", "model", "ratio");
    for (int i = 0; i < c->ncoll; i++) {
        const mrt_calib_coll *m = &c->coll[i];
        fprintf(f, "  %-15s %-12s %5lld %10lld %9.1f us %9.1f us %7.2f\n",
                coll_names[m->kind],
                axes_str(c, m->axes, ",", axes, sizeof axes),
                (long long)m->group, (long long)m->bytes, m->measured_s * 1e6,
                m->model_s * 1e6, m->measured_s / m->model_s);
    }
    if (c->ncoll)
        fprintf(f, "  (ratio = measured / model: above 1 the model is "
                   "optimistic, below 1 pessimistic)\n");
    fprintf(f, "calibration took %.1f s\n", c->seconds);
}

char *mrt_calibration_yaml(const mrt_calibration *c)
{
    char *text = NULL, axes[256];
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    fprintf(f, "ranks: %d\nhosts: %d\nquick: %s\nseconds: %.3g\nmesh: {",
            c->ranks, c->hosts, c->quick ? "true" : "false", c->seconds);
    for (int a = 0; a < c->mesh.naxes; a++)
        fprintf(f, "%s%s: %lld", a ? ", " : "", c->mesh.name[a],
                (long long)c->mesh.size[a]);
    fprintf(f, "}\nlinks:%s\n", c->nlinks ? "" : " {}");
    for (int i = 0; i < c->nlinks; i++)
        fprintf(f,
                "  %s: {group: %lld, latency_us: %.4g, bandwidth_GBps: "
                "%.4g}\n",
                c->mesh.name[c->link[i].axis], (long long)c->link[i].group,
                c->link[i].link.latency_s * 1e6,
                c->link[i].link.bandwidth_Bps / 1e9);
    if (c->ranks_per_node > 0)
        fprintf(f,
                "nodes: {count: %d, ranks_per_node: %lld, intra: "
                "{latency_us: %.4g, bandwidth_GBps: %.4g}, inter: "
                "{latency_us: %.4g, bandwidth_GBps: %.4g}}\n",
                c->nodes, (long long)c->ranks_per_node,
                c->intra.latency_s * 1e6, c->intra.bandwidth_Bps / 1e9,
                c->inter.latency_s * 1e6, c->inter.bandwidth_Bps / 1e9);
    fprintf(f,
            "local: {gemm_n_float32: %d, gemm_n_float64: %d, "
            "reduce_elements: %lld, copy_bytes: %lld}\n",
            c->gemm_n[MRT_F32], c->gemm_n[MRT_F64], (long long)c->reduce_elems,
            (long long)c->copy_bytes);
    fprintf(f, "collectives:%s\n", c->ncoll ? "" : " []");
    for (int i = 0; i < c->ncoll; i++) {
        const mrt_calib_coll *m = &c->coll[i];
        fprintf(f,
                "  - {kind: %s, axes: [%s], group: %lld, bytes: %lld, "
                "measured_us: %.4g, model_us: %.4g, ratio: %.3g}\n",
                coll_names[m->kind],
                axes_str(c, m->axes, ", ", axes, sizeof axes),
                (long long)m->group, (long long)m->bytes, m->measured_s * 1e6,
                m->model_s * 1e6, m->measured_s / m->model_s);
    }
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}
