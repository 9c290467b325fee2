/*
 * runtime.h — the executor's internal pieces.  runtime/ is the only part
 * of meshrt that calls MPI, and this header (which includes mpi.h) is
 * for the code that calls it; the block copies and big buffers are
 * kernels/ (block.h, big_alloc.h), the local part of runtime/ local.h.
 *
 *   comm.c      sub-communicators of the mesh (one per set of axes, made
 *               once) and the thin collective layer that keeps the ledger
 *               of bytes handed to MPI (and of those across nodes)
 *   hier.c      the hierarchical all-reduce over a group spanning nodes
 *   datatype.c  MPI datatypes for strided blocks
 *   uneven.c    the collectives of dims split unevenly
 *   large_count.c  element counts beyond an int, for every MPI call
 *   exec.c      walking a plan: one case per step kind
 *   alltoall_group.c  the all-to-all over several axes at once
 *   shard.c     filling input shards, gathering shards into a full tensor
 *   reference.c the unsharded recomputation used by --verify, and
 *   verify.c    the rule by which a result agrees with it: no MPI, so
 *               declared in local.h (with mrt_shard_init) and built
 *               where mpi.h is refused
 *   verify_run.c --verify: every check of a run, reported
 *   runner.c    mrt_init and the runner: a plan set up on a
 *               communicator, the caller's inputs in, outputs out
 *   runner_execute.c  mrt_runner_execute and mrt_run: the runs, then
 *               trace, verify, save and the report, a function each
 *   run_measure.c  the run's timings and ledger reduced to rank 0
 *   run_report.c   the report written from them (run_report.h)
 */
#ifndef MRT_RUNTIME_H
#define MRT_RUNTIME_H

#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "big_alloc.h"
#include "block.h"
#include "local.h"
#include "meshrt_mpi.h"
#include "plan.h"
#include "spec.h"

/* ---- comm.c ---- */
typedef struct mrt_comm {
    MPI_Comm world;
    int rank, size;
    mrt_mesh mesh;
    int64_t coords[MRT_MAX_AXES];
    MPI_Comm group[1u << MRT_MAX_AXES]; /* by axis mask; MPI_COMM_NULL
                                          until made */
    int64_t ledger_bytes; /* bytes handed to MPI collectives so far */
    int64_t ledger_calls;
    /* Nodes (the plan's profile places ranks on nodes; hier.c): the
     * plan's ranks per node (0: one node); of ledger_bytes, those handed
     * to groups that cross nodes; by axis mask, whether the group
     * crosses nodes, its ranks on my node and its ranks of my place in
     * their nodes (made for hierarchical steps); and whether the real
     * nodes differ from the plan's (whose are used). */
    int64_t ranks_per_node;
    int64_t ledger_inter;
    unsigned char inter[1u << MRT_MAX_AXES];
    MPI_Comm node_group[1u << MRT_MAX_AXES];
    MPI_Comm cross_group[1u << MRT_MAX_AXES];
    int placement_differs;
} mrt_comm;

/* The MPI type of an element of type t (float, double, int32). */
MPI_Datatype mrt_mpi_type(mrt_dtype t);

/* Makes the sub-communicators for every axis set the plan uses (a
 * collective call on world).  The caller owns *out. */
mrt_status mrt_comm_create(const mrt_plan *plan, MPI_Comm world, mrt_comm **out,
                           mrt_error *err);
void mrt_comm_destroy(mrt_comm *c);
/* Collective: every rank returns the lowest failing rank's status, and
 * its error in *err (MRT_OK everywhere if no rank failed). */
mrt_status mrt_comm_agree(MPI_Comm w, mrt_status st, mrt_error *err);
/* The collectives; count is elements; each adds the bytes of its send
 * buffer to the ledger.  Return MPI's error code.  With a request
 * (`req` not NULL) the call is the non-blocking one: it completes when
 * the request does (MPI_Wait). */
/* (max: the elementwise maximum instead of the sum) */
int mrt_comm_allreduce(mrt_comm *c, unsigned axes, const void *in, void *out,
                       int64_t count, mrt_dtype t, int max, MPI_Request *req);
int mrt_comm_allgather(mrt_comm *c, unsigned axes, const void *in, void *out,
                       int64_t count, mrt_dtype t, MPI_Request *req);
/* Sends the whole buffer to group member dest and receives count
 * elements from member src (an MPI_Alltoallv with one peer each way). */
int mrt_comm_exchange(mrt_comm *c, unsigned axes, const void *in, void *out,
                      int64_t count, int dest, int src, mrt_dtype t);
int mrt_comm_reduce_scatter(mrt_comm *c, unsigned axes, const void *in,
                            void *out, int64_t count_per_rank, mrt_dtype t,
                            MPI_Request *req);

/* The collectives whose blocks are strided, through derived datatypes
 * (datatype.c): each rank's block of in (or of out) is one element of
 * the type.  `bytes` is what the ledger records: the send buffer. */
int mrt_comm_alltoall_typed(mrt_comm *c, unsigned axes, const void *in,
                            MPI_Datatype send_type, void *out,
                            MPI_Datatype recv_type, int64_t bytes,
                            MPI_Request *req, int64_t recv_count);
int mrt_comm_allgather_typed(mrt_comm *c, unsigned axes, const void *in,
                             int64_t count, mrt_dtype t, void *out,
                             MPI_Datatype recv_type, MPI_Request *req);
struct mrt_uneven;
/* The exchange of a collective over a dim split unevenly (uneven.c): an
 * MPI_Alltoallw; the ledger records the whole input shard. */
int mrt_comm_alltoallw(mrt_comm *c, unsigned axes, const void *in, void *out,
                       const struct mrt_uneven *u, mrt_dtype t,
                       MPI_Request *req);

/* Adds `bytes` handed to MPI over the group of `axes` to the ledger (and
 * to its inter-node part when the group crosses nodes). */
void mrt_comm_ledger(mrt_comm *c, unsigned axes, int64_t bytes);
/* A point-to-point transfer inside the group over axes, from the rank at
 * group position `from` (its in) to the one at `to` (into its out); the
 * others return at once.  The sender's bytes go to the ledger. */
int mrt_comm_sendrecv(mrt_comm *c, unsigned axes, const void *in, void *out,
                      int64_t count, mrt_dtype t, int64_t from, int64_t to);

/* ---- hier.c ---- */
/* Makes the node and cross sub-communicators of the group over axes
 * (collective over the group). */
mrt_status mrt_hier_make(mrt_comm *c, unsigned axes, mrt_error *err);
/* The ranks of world on this rank's host (same host name and network
 * namespace), in rank order, as a new communicator (collective). */
int mrt_hier_node_comm(MPI_Comm world, MPI_Comm *out);
/* Checks the plan's nodes against the real ones (mrt_hier_node_comm;
 * collective over world): sets c->placement_differs. */
void mrt_hier_check_placement(mrt_comm *c);
/* The all-reduce of a hierarchical step (plan.h's hier): reduce-scatter
 * inside the node, all-reduce across nodes, all-gather inside; blocking
 * (the plan's background wait then finds nothing pending). */
int mrt_hier_allreduce(mrt_comm *c, unsigned axes, const void *in, void *out,
                       int64_t count, MPI_Datatype base, int elsize, int max);

/* ---- large_count.c ---- */
/* The most elements one MPI count carries here: INT_MAX, or
 * MESHRT_MPI_MAX_COUNT when set lower (for the tests). */
int64_t mrt_mpi_max_count(void);
/* n copies of elem, stride bytes apart, for any n >= 1 (blocks of at
 * most mrt_mpi_max_count() and a remainder); lb 0 and the extent of an
 * MPI vector.  Not committed; the caller frees *out. */
int mrt_type_vector(int64_t n, MPI_Aint stride, MPI_Datatype elem,
                    MPI_Datatype *out);
/* n elements of base (MPI_FLOAT, MPI_DOUBLE or MPI_BYTE) as MPI takes
 * them: `count` of `type`, reduced with `op` (MPI_SUM or MPI_MAX, or
 * MPI_OP_NULL for a transfer).  Within the limit these are n, base and
 * op themselves (MPI_MAX excepted: a maximum is always a user-defined
 * op, under which NaN wins, as in the local kernel); beyond it, one
 * element of a derived type of all n and a user-defined op over it.  Every MPI call of runtime/ whose count can
 * exceed an int goes through here; mrt_count_free after the call. */
typedef struct mrt_count {
    int count;
    MPI_Datatype type;
    MPI_Op op;
    int owned;    /* type is ours to free */
    int owned_op; /* op is ours to free */
} mrt_count;
int mrt_count_make(int64_t n, MPI_Datatype base, MPI_Op op, mrt_count *out);
void mrt_count_free(mrt_count *c);

/* ---- datatype.c ---- */
/* The type of block 0 of a row-major array of extents ext[0..n) cut into
 * g equal blocks along dim d, resized so that block j is its element j.
 * The caller frees *out (MPI_Type_free). */
int mrt_block_type(int n, const int64_t ext[], int d, int64_t g, mrt_dtype t,
                   MPI_Datatype *out);
/* The type of a block of extents sub[0..n) at the start of a row-major
 * array of extents ext[0..n) of base (any sizes; a scalar for n = 0),
 * committed.  The caller frees *out. */
int mrt_subarray_type(int n, const int64_t ext[], const int64_t sub[],
                      MPI_Datatype base, MPI_Datatype *out);

/* The type of the block of extents sub[0..n) at start[0..n) of a
 * row-major array of extents ext[0..n) of base, `extra` bytes further
 * (sub[i] >= 1), committed.  The caller frees *out. */
int mrt_box_type(int n, const int64_t ext[], const int64_t sub[],
                 const int64_t start[], MPI_Datatype base, MPI_Aint extra,
                 MPI_Datatype *out);

/* ---- uneven.c ---- */
/* What a rank exchanges with each peer in a collective over a dim split
 * unevenly: per peer a count (0 or 1) and a datatype, to send and to
 * receive (a reduce-scatter receives block q into slot q of the
 * workspace, out_count elements each). */
typedef struct mrt_uneven {
    int64_t g;          /* ranks in the group */
    int *count;         /* [4g]: send counts, receive counts, zeros (the
                            displacements: the types hold the offsets) */
    MPI_Datatype *type; /* [2g]: send types, receive types */
    int64_t in_count, out_count; /* this rank's shards */
} mrt_uneven;
/* For step s of p on the rank at coords; *out is the caller's
 * (mrt_uneven_free).  Returns MPI's error code. */
int mrt_uneven_make(const mrt_plan *p, const mrt_step *s,
                    const int64_t coords[], mrt_uneven **out);
void mrt_uneven_free(mrt_uneven *u);

/* ---- exec.c ---- */
typedef struct mrt_exec {
    const mrt_plan *plan;
    mrt_comm *comm;
    void **buf;                 /* [nvalues] shard buffers, in the arena */
    char *arena;                /* every value, at the plan's offsets */
    void *workspace;            /* the running step's kernel or packing space */
    double *step_time;          /* [nsteps] seconds, summed over runs */
    int64_t *step_bytes;        /* [nsteps] bytes handed to MPI, last run */
    int64_t *step_inter;        /* [nsteps] of those, across nodes */
    MPI_Datatype (*type)[2];    /* [nsteps] send and receive block types of
                                the all-to-alls and strided all-gathers */
    struct mrt_uneven **uneven; /* [nsteps] the peers' counts and types of
                                   the collectives over uneven splits */
    int blocking;               /* run every collective blocking (the plan's
                              background ones too) */
    MPI_Request *req;           /* [nsteps] collectives in the background */
    int *pending;               /* their step numbers, npending of them */
    int npending;
    double *start;    /* [nsteps] when each was issued, last run */
    double *exposed;  /* [nsteps] seconds spent in MPI on each
                              background collective (issue, tests,
                              wait), summed over runs */
    double *inflight; /* [nsteps] seconds from issue to completion,
                              summed over runs */
    double window;    /* seconds with at least one collective in the
                              background, summed over runs */
    double window_start;
} mrt_exec;

mrt_status mrt_exec_create(const mrt_plan *plan, mrt_comm *comm, mrt_exec **out,
                           mrt_error *err);
void mrt_exec_destroy(mrt_exec *e);
/* Runs every step once. */
mrt_status mrt_exec_run(mrt_exec *e, mrt_error *err);
/* x, this rank's copy of scalar value v (the loss), as the stage that
 * holds v has it: broadcast from a rank of that stage when pipelined
 * (a collective call then); else x. */
double mrt_exec_stage_scalar(mrt_exec *e, int v, double x);
/* A pipeline's report (collective; nothing otherwise): rank 0's bytes
 * of each step become those of the rank that runs it at 0 on every
 * other axis (the sender of a SENDRECV), as the plan's step figures
 * are; each rank has checked its own against the plan before. */
void mrt_exec_stage_bytes(mrt_exec *e);

/* ---- alltoall_group.c ---- */
/* Runs an ALLTOALL_GROUP step (one MPI_Alltoallw); MPI's error code. */
int mrt_exec_alltoall_group(mrt_exec *e, const mrt_step *s);
/* This rank's element count of value v (and its extents into ext, when
 * not NULL). */
int64_t mrt_exec_mine(const mrt_exec *e, int v, int64_t ext[]);

/* A compute step's operands as its kernel reads and writes them
 * (widen.c, by the rule of ops/step_widen.h): in the compute type t,
 * the converted ones in copies at the start of the workspace. */
typedef struct mrt_widen {
    mrt_dtype t;
    void *data[3]; /* in, in2, out (in2 NULL when the step has none) */
    void *rest;    /* the workspace after the copies: the kernel's own */
} mrt_widen;
/* Widens the step's converted inputs into the workspace. */
void mrt_widen_inputs(mrt_exec *e, const mrt_step *s, mrt_widen *w);
/* Narrows the result into its value when it was computed in a copy. */
void mrt_widen_output(mrt_exec *e, const mrt_step *s, const mrt_widen *w);
/* Runs an einsum step of two inputs with 16-bit operands computed in
 * float32 panel by panel (mrt_kernel_einsum16), the views on the
 * values' own buffers; 0 when that path does not apply (then widen the
 * inputs, run the kernel, narrow the output). */
int mrt_widen_einsum(mrt_exec *e, const mrt_step *s, const mrt_kview *a,
                     const mrt_kview *b, const mrt_kview *c);

/* ---- shard.c ---- */
/* Gathers the shards of value v into a full tensor on rank 0: *full is a
 * new buffer there (the caller frees it), NULL elsewhere. */
mrt_status mrt_shard_gather(mrt_exec *e, int v, void **full, mrt_error *err);

/* ---- verify_run.c ---- */
/* The --verify phase of mrt_run, after the runs (a collective call):
 * recomputes the spec unsharded on rank 0 (`runs` SGD steps for a
 * `train:` spec, whose run losses are losses[0..runs), read on rank 0),
 * compares every step's loss, the gradients against finite differences
 * and every output gathered from e's shards, and reports each check on f
 * (rank 0, as text or, with opt->json, as JSON members).  Every rank
 * returns the same status: MRT_E_VERIFY when a check failed. */
mrt_status mrt_run_verify(const mrt_spec *s, mrt_exec *e,
                          const mrt_run_options *opt, const double *losses,
                          int runs, FILE *f, mrt_error *err);

/* ---- runner.c ---- */
struct mrt_runner {
    const mrt_spec *spec;
    const mrt_plan *plan;
    mrt_comm *comm;
    mrt_exec *exec;
    int caller_inputs; /* some input no longer holds its `init:` values */
    int trained;       /* a training run updated the parameters */
    int64_t steps_run; /* training steps run so far (Adam's bias
                          correction counts them) */
    int computed;      /* the last execute ran every step: the tensors
                          ops make hold values */
};
/* 1 once mrt_init has run in this process. */
int mrt_init_done(void);

#endif
