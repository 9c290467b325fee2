/*
 * cost.c — the formulas of the cost model (see cost.h for the table).
 */
#include "cost.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "checked.h"

/* The link of a group: with nodes, its tier's (inter as soon as it
 * crosses a node); else the slowest link among its axes. */
static mrt_link group_link(const mrt_profile *p, const mrt_mesh *m,
                           unsigned axes)
{
    if (p->ranks_per_node > 0)
        return mrt_cost_span(p, m, axes).tier == MRT_TIER_INTRA ? p->intra
                                                                : p->inter;
    mrt_link worst = {0, INFINITY};
    for (int a = 0; a < m->naxes; a++) {
        if (!(axes & (1u << a)))
            continue;
        mrt_link l = mrt_profile_link(p, m, a);
        worst.latency_s = fmax(worst.latency_s, l.latency_s);
        worst.bandwidth_Bps = fmin(worst.bandwidth_Bps, l.bandwidth_Bps);
    }
    return worst;
}

/* Time at b on the line through (b0, t0) and (b1, t1). */
static double on_line(double b, double b0, double t0, double b1, double t1)
{
    return t0 + (t1 - t0) * (b - b0) / (b1 - b0);
}

/* The measured time of a collective handing `bytes` over a group of g
 * ranks, from the profile's rows of that kind and group: linear between
 * two rows; below the first, on the line from (0, `small`: the model's
 * latency part) to it; beyond the last, on the line through the last
 * two (never falling).  -1 when the profile has no such rows. */
static double measured_collective(const mrt_profile *p, mrt_coll kind,
                                  int64_t g, int64_t bytes, double small)
{
    int first = -1, n = 0;
    for (int i = 0; i < p->ncoll; i++)
        if (p->coll[i].kind == (int)kind && p->coll[i].group == g) {
            first = first < 0 ? i : first;
            n++;
        }
    if (n == 0)
        return -1;
    const mrt_coll_row *r = &p->coll[first]; /* sorted by bytes */
    double b = (double)bytes;
    if (b <= (double)r[0].bytes || n == 1)
        return b <= (double)r[0].bytes
                   ? on_line(b, 0, fmin(small, r[0].time_s), (double)r[0].bytes,
                             r[0].time_s)
                   : r[0].time_s * b / (double)r[0].bytes;
    int i = 1;
    while (i < n - 1 && b > (double)r[i].bytes)
        i++;
    double t = on_line(b, (double)r[i - 1].bytes, r[i - 1].time_s,
                       (double)r[i].bytes, r[i].time_s);
    return b > (double)r[n - 1].bytes ? fmax(t, r[n - 1].time_s) : t;
}

mrt_mesh_span mrt_cost_span(const mrt_profile *p, const mrt_mesh *m,
                            unsigned axes)
{
    return mrt_mesh_span_of(m, p->ranks_per_node, axes);
}

static int64_t ceil_log2(int64_t g)
{
    int64_t lg = 0;
    while ((1ll << lg) < g)
        lg++;
    return lg;
}

/* One phase of a hierarchical all-reduce added to c: wire bytes and
 * messages on link l, and reduction flops. */
static void add_phase(mrt_comm_cost *c, mrt_link l, double wire, int64_t msgs,
                      double flops)
{
    c->wire_bytes += wire;
    c->messages += msgs;
    c->flops += flops;
    c->time_s += l.latency_s * (double)msgs + wire / l.bandwidth_Bps;
}

mrt_comm_cost mrt_cost_allreduce_hier(const mrt_profile *p, const mrt_mesh *m,
                                      unsigned axes, int64_t count, int elsize)
{
    mrt_comm_cost c = {0};
    mrt_mesh_span s = mrt_cost_span(p, m, axes);
    if (!s.aligned || s.per_node < 2 || s.nodes < 2)
        return (mrt_comm_cost){.time_s = INFINITY};
    double q = (double)s.per_node, k = (double)s.nodes;
    double n = (double)count * elsize;
    double b = (double)((count + s.per_node - 1) / s.per_node) * elsize;
    add_phase(&c, p->intra, (q - 1) / q * n, ceil_log2(s.per_node),
              (q - 1) / q * n / elsize);
    add_phase(&c, p->inter, 2 * (k - 1) / k * b, 2 * ceil_log2(s.nodes),
              (k - 1) / k * b / elsize);
    add_phase(&c, p->intra, (q - 1) * b, ceil_log2(s.per_node), 0);
    c.time_s += c.flops / p->reduce_flops;
    return c;
}

/* measured_collective over the group of `axes`, when that group is
 * inside a node: the measured rows are by group size, and the links of
 * several tiers are the formulas'; -1 otherwise. */
static double measured_in_node(const mrt_profile *p, const mrt_mesh *m,
                               unsigned axes, mrt_coll kind, int64_t bytes,
                               double small)
{
    if (p->ranks_per_node > 0 &&
        mrt_cost_span(p, m, axes).tier != MRT_TIER_INTRA)
        return -1;
    return measured_collective(p, kind, mrt_mesh_group_size(m, axes), bytes,
                               small);
}

mrt_comm_cost mrt_cost_collective(const mrt_profile *p, const mrt_mesh *m,
                                  mrt_coll kind, unsigned axes, int64_t bytes,
                                  int elsize)
{
    mrt_comm_cost c = {0};
    double g = (double)mrt_mesh_group_size(m, axes), n = (double)bytes;
    if (g <= 1)
        return c;
    double share = (g - 1) / g;
    int64_t lg = ceil_log2((int64_t)g);
    switch (kind) {
    case MRT_COLL_ALLREDUCE:
        c.wire_bytes = 2 * share * n;
        c.messages = 2 * lg;
        c.flops = share * n / elsize;
        break;
    case MRT_COLL_ALLGATHER:
        c.wire_bytes = (g - 1) * n;
        c.messages = lg;
        break;
    case MRT_COLL_REDUCE_SCATTER:
        c.wire_bytes = share * n;
        c.messages = lg;
        c.flops = share * n / elsize;
        break;
    case MRT_COLL_ALLTOALL:
        c.wire_bytes = share * n;
        c.messages = (int64_t)g - 1;
        break;
    case MRT_COLL_PERMUTE:
        c.wire_bytes = n;
        c.messages = 1;
        break;
    case MRT_COLL_COUNT: break;
    }
    mrt_link l = group_link(p, m, axes);
    c.time_s = l.latency_s * (double)c.messages +
               c.wire_bytes / l.bandwidth_Bps + c.flops / p->reduce_flops;
    double t = measured_in_node(p, m, axes, kind, bytes,
                                l.latency_s * (double)c.messages);
    if (t >= 0)
        c.time_s = t;
    return c;
}

mrt_comm_cost mrt_cost_exchange(const mrt_profile *p, const mrt_mesh *m,
                                unsigned axes, double wire_bytes,
                                int64_t messages)
{
    mrt_comm_cost c = {.wire_bytes = wire_bytes, .messages = messages};
    if (mrt_mesh_group_size(m, axes) <= 1)
        return (mrt_comm_cost){0};
    mrt_link l = group_link(p, m, axes);
    c.time_s = l.latency_s * (double)messages + wire_bytes / l.bandwidth_Bps;
    /* With measured all-to-all rows of the group (inside a node), the
     * time of the uniform all-to-all that puts as many bytes on the wire
     * (it sends (g - 1) / g of what it is handed): the links alone priced
     * one of 1 MiB a rank at 16 us where it took 67 (docs/calibration.md,
     * round J), as they do the uniform one (the calibration's table). */
    double g = (double)mrt_mesh_group_size(m, axes);
    double t = measured_in_node(p, m, axes, MRT_COLL_ALLTOALL,
                                (int64_t)(wire_bytes * g / (g - 1)), c.time_s);
    if (t >= 0)
        c.time_s = t;
    return c;
}

double mrt_cost_kernel(const mrt_profile *p, mrt_dtype t, double flops)
{
    return flops / p->gemm_flops[mrt_dtype_compute(t)]; /* 16-bit: float32 */
}

/* The first of the *n rows of fn in type t (rows are sorted by
 * function, type, elements); -1 when there are none. */
static int map_rows(const mrt_profile *p, const char *fn, int t, int *n)
{
    int lo = -1;
    *n = 0;
    for (int i = 0; fn && i < p->nmap; i++)
        if (p->map[i].dtype == t && strcmp(p->map[i].fn, fn) == 0 && !(*n)++)
            lo = i;
    return lo;
}

double mrt_cost_map(const mrt_profile *p, const char *fn, double elements,
                    mrt_dtype t, int elsize)
{
    int n, lo = -1;
    /* float64's own rows: its transcendentals are libm's, many times
     * float32's vectorised ones (kernels/fast_math.h), not twice */
    if (mrt_dtype_compute(t) == MRT_F64)
        lo = map_rows(p, fn, MRT_F64, &n);
    double scale = 1;
    if (lo < 0) {
        lo = map_rows(p, fn, MRT_F32, &n);
        scale = elsize / 4.0; /* measured in float32: other widths move
                                 their bytes */
    }
    if (lo < 0)
        return -1;
    const mrt_map_row *r = p->map + lo;
    double e = elements, per = r[n - 1].s_per_elem;
    if (e <= (double)r[0].elements)
        per = r[0].s_per_elem;
    for (int i = 1; i < n && e > (double)r[0].elements; i++)
        if (e <= (double)r[i].elements) {
            per = on_line(log(e), log((double)r[i - 1].elements),
                          r[i - 1].s_per_elem, log((double)r[i].elements),
                          r[i].s_per_elem);
            break;
        }
    return e * per * scale;
}

double mrt_cost_share(const mrt_profile *p, int64_t ranks)
{
    if (!p->ranks || !p->cores || ranks < 1)
        return 1;
    double cal = fmin(1, (double)p->cores / p->ranks),
           run = fmin(1, (double)p->cores / (double)ranks);
    return cal / run;
}

double mrt_cost_copy(const mrt_profile *p, double bytes)
{
    return bytes / p->copy_Bps;
}

double mrt_cost_local(const mrt_profile *p, double written, double read,
                      int elsize)
{
    return mrt_cost_copy(p, (written + read) * elsize);
}

double mrt_cost_matmul_lower_bound(double m, double n, double k, double batch,
                                   double procs)
{
    if (batch > 1) {
        if (procs <= batch)
            return 0;
        procs /= batch;
    }
    if (procs <= 1)
        return 0;
    /* Sort so that d1 >= d2 >= d3. */
    double d[3] = {m, n, k};
    for (int i = 0; i < 2; i++)
        for (int j = i + 1; j < 3; j++)
            if (d[j] > d[i]) {
                double t = d[i];
                d[i] = d[j];
                d[j] = t;
            }
    double d1 = d[0], d2 = d[1], d3 = d[2], P = procs, w;
    double owned = (d1 * d2 + d1 * d3 + d2 * d3) / P;
    if (P <= d1 / d2)
        w = d2 * d3 + (d1 * d2 + d1 * d3) / P; /* one large dim: 1D */
    else if (P <= d1 * d2 / (d3 * d3))
        w = 2 * sqrt(d1 * d2 * d3 * d3 / P) + d1 * d2 / P; /* 2D */
    else
        w = 3 * cbrt(d1 * d2 * d3 / P) * cbrt(d1 * d2 * d3 / P); /* 3D */
    return fmax(0, w - owned);
}

/* Open MPI 4.1 (Debian 12), shared memory, measured as the growth of the
 * resident set across one call on 2 to 4 ranks with 16 MiB per rank:
 * MPI_Reduce_scatter_block keeps a copy of its whole input (two from 4
 * ranks up), MPI_Allreduce about half of it; the all-gather and the
 * all-to-all under 1.5 MiB, counted as none. */
int64_t mrt_cost_mpi_scratch(mrt_coll kind, int64_t bytes, int64_t group)
{
    int64_t twice;
    switch (kind) {
    case MRT_COLL_REDUCE_SCATTER:
        if (group < 4)
            return bytes;
        return mrt_checked_add(bytes, bytes, &twice) ? -1 : twice;
    case MRT_COLL_ALLREDUCE: return bytes / 2;
    default: return 0;
    }
}
