/*
 * cost.h — the cost model: what a step costs in time, given a machine
 * profile, and the lower bound a contraction cannot beat.
 *
 * Collectives (per rank; n = bytes handed to MPI, p = ranks in the group,
 * L = ceil(log2 p)): bandwidth-optimal volumes (ring, or recursive halving
 * and doubling: the same bytes) with the message counts of the recursive
 * algorithms (Rabenseifner's all-reduce, recursive-doubling all-gather,
 * recursive-halving reduce-scatter, pairwise all-to-all):
 *   kind            wire bytes sent        messages    reduction flops
 *   allreduce       2 (p-1)/p n            2 L         (p-1)/p n/e
 *   allgather       (p-1) n                L           -
 *   reduce_scatter  (p-1)/p n              L           (p-1)/p n/e
 *   alltoall        (p-1)/p n              p-1         -
 *   permute         n                      1           -
 * (e = element size).  Time = alpha * messages + wire / bandwidth +
 * flops / reduce rate, with alpha and bandwidth of the slowest mesh axis
 * of the group (axes may differ: one inside a node, one across nodes);
 * with a profile that places ranks on nodes, of the group's tier: the
 * intra-node link when the group stays inside a node, else the
 * inter-node one.  On such a profile an all-reduce over a group of
 * q ranks on each of k nodes may run hierarchically: a reduce-scatter
 * inside each node (q ranks, n bytes), an all-reduce across nodes of the
 * 1/q shard (k ranks, b = ceil(n/q)), an all-gather inside (q ranks):
 *   wire  (q-1)/q n + 2 (k-1)/k b + (q-1) b,  messages 2 L(q) + 2 L(k),
 * each phase timed on its own link.
 * Local kernels: flops / GEMM rate; slices and other local steps: the
 * bytes they write and read / copy rate.  Plain figures in, seconds out:
 * which formula a plan step takes is ops/step_cost.c's.
 */
#ifndef MRT_COST_H
#define MRT_COST_H

#include <limits.h>
#include <stdint.h>

#include "layout.h"
#include "mesh.h"
#include "mesh_nodes.h"
#include "profile.h"

typedef struct mrt_comm_cost {
    double wire_bytes; /* bytes each rank sends on the wire */
    int64_t messages;  /* messages each rank sends */
    double flops;      /* reduction arithmetic per rank */
    double time_s;     /* modeled */
} mrt_comm_cost;

/* Kinds the model knows, in the order of ops/plan.h's step kinds that
 * call MPI. */
typedef enum mrt_coll {
    MRT_COLL_ALLREDUCE = 0,
    MRT_COLL_ALLGATHER,
    MRT_COLL_REDUCE_SCATTER,
    MRT_COLL_ALLTOALL,
    MRT_COLL_PERMUTE,
    MRT_COLL_COUNT
} mrt_coll;

/* How the groups over `axes` sit on the profile's nodes. */
mrt_mesh_span mrt_cost_span(const mrt_profile *p, const mrt_mesh *m,
                            unsigned axes);
/* Cost of a hierarchical all-reduce of `count` elements per rank over the
 * group `axes` (the formula above); an infinite time when the group
 * cannot run one (not aligned, or inside one node, or one rank a node). */
mrt_comm_cost mrt_cost_allreduce_hier(const mrt_profile *p, const mrt_mesh *m,
                                      unsigned axes, int64_t count, int elsize);
/* Cost of one collective handing `bytes` to MPI per rank over the group
 * of mesh axes `axes`. */
mrt_comm_cost mrt_cost_collective(const mrt_profile *p, const mrt_mesh *m,
                                  mrt_coll kind, unsigned axes, int64_t bytes,
                                  int elsize);
/* Cost of an all-to-all over the group `axes` whose pattern is not the
 * uniform one (ops/exchange.c counts what each rank sends, and to how
 * many peers, at most over the ranks). */
mrt_comm_cost mrt_cost_exchange(const mrt_profile *p, const mrt_mesh *m,
                                unsigned axes, double wire_bytes,
                                int64_t messages);
/* Seconds for `flops` of local GEMM work in dtype t. */
double mrt_cost_kernel(const mrt_profile *p, mrt_dtype t, double flops);
/* Seconds for `flops` of GEMM work in dtype t as products of m x k by
 * k x n: with the profile's GEMM rows, at the rate of a product of that
 * shape (small and thin products run below the peak), else as
 * mrt_cost_kernel. */
double mrt_cost_gemm(const mrt_profile *p, mrt_dtype t, double flops, double m,
                     double n, double k);
/* The same for operands of the given form (profile.h): the GEMM rows of
 * that form, else those of nn; a float64 product float64's rows when
 * the profile has them, else float32's times the peaks' ratio. */
double mrt_cost_gemm_form(const mrt_profile *p, mrt_dtype t, double flops,
                          double m, double n, double k, mrt_gemm_form form);
/* The rate (flop/s) the profile's cube rows of form nn give an s x s x
 * s product of type t, as measured (not the thin rows' rule); -1 when
 * it has none of that type. */
double mrt_cost_gemm_cube(const mrt_profile *p, mrt_dtype t, double s);
/* Seconds of the elementwise function `fn` (its name: "gelu") over
 * `elements` output elements of elsize bytes whose kernel computes in
 * type t (float64, or float32 for any other type: 16-bit values are
 * widened), from the profile's map rows of fn (per element, interpolated
 * in log elements between the rows, held at the ends): its float64 rows
 * as they are when t is float64 and the profile has them, else its
 * float32 rows scaled by elsize / 4 (a float64 map without float64 rows
 * at twice their time, a 16-bit one at half); -1 when the profile has no
 * row of fn in the type it takes. */
double mrt_cost_map(const mrt_profile *p, const char *fn, double elements,
                    mrt_dtype t, int elsize);
/* What local times are multiplied by when `ranks` ranks run on the
 * profile's host: ranks beyond its cores share them (the rates divide),
 * against the share the calibration's ranks had.  1 for a profile that
 * does not say how many ranks shared how many cores. */
double mrt_cost_share(const mrt_profile *p, int64_t ranks);
/* Seconds to copy `bytes` locally. */
double mrt_cost_copy(const mrt_profile *p, double bytes);
/* Seconds of a memory-bound local step (a slice, a map, a rename) that
 * writes `written` elements and reads `read`, of elsize bytes each. */
double mrt_cost_local(const mrt_profile *p, double written, double read,
                      int elsize);
/* Bytes of scratch MPI itself allocates while the collective runs, for a
 * send buffer of `bytes` over a group of `group` ranks (Open MPI 4.1's
 * algorithms, measured: docs/cost-model.md); -1 when that does not fit
 * in 64 bits. */
int64_t mrt_cost_mpi_scratch(mrt_coll kind, int64_t bytes, int64_t group);

/* The memory-independent lower bound on the words each processor must
 * communicate for C[M,N] = A[M,K] B[K,N] on P processors with one copy of
 * the data (Al Daas, Ballard, Grigori, Kumar, Rouse, 2022; the classical
 * 3 (MNK/P)^(2/3) regime of Ballard et al. 2012 plus its 1D and 2D
 * regimes).  With batch > 1, each of the batch products gets P / batch
 * processors when P > batch (and the bound is 0 when P <= batch): see
 * docs/cost-model.md.  Returns words (elements), >= 0. */
double mrt_cost_matmul_lower_bound(double m, double n, double k, double batch,
                                   double procs);

#endif
