/*
 * calibrate.h — measuring the machine a run is on, for the cost model:
 * what `mpirun -n P meshrt calibrate` does (docs/calibration.md).
 *
 * mrt_calibrate measures, on the ranks of `world` laid out as a mesh:
 * per mesh axis of more than one rank, the latency and bandwidth between
 * neighbours in the axis's groups (ping-pong); on several nodes, the
 * same between ranks of one node and between ranks of two nodes (the
 * profile's two tiers); on every rank at once, as
 * in a run, the local GEMM rate per dtype (BLIS, single-threaded), the
 * reduction rate and the copy rate; and then every collective kind the
 * model knows at a few sizes, timed next to what the model predicts with
 * the links just measured.  The result is an mrt_profile ready for
 * mrt_profile_save plus the figures behind it.
 */
#ifndef MRT_CALIBRATE_H
#define MRT_CALIBRATE_H

#include <mpi.h>
#include <stdio.h>

#include "meshrt_mpi.h"
#include "cost.h"
#include "profile.h"

#define MRT_CALIB_SIZES 3 /* sizes per collective kind */
#define MRT_CALIB_KINDS 4 /* allreduce, allgather, reduce_scatter, alltoall */

/* The link of one mesh axis, as measured. */
typedef struct mrt_calib_link {
    int axis;      /* mesh axis index */
    int64_t group; /* ranks per group along it */
    mrt_link link; /* latency: median half round trip of 8 bytes;
                          bandwidth: from 3 ping-pongs of several MiB */
} mrt_calib_link;

/* One collective: measured next to the model's prediction. */
typedef struct mrt_calib_coll {
    mrt_coll kind;
    unsigned axes; /* mesh axes of the group */
    int64_t group;
    int64_t bytes;     /* handed to MPI per rank (as in a plan step) */
    double measured_s; /* median over repetitions of the slowest rank */
    double model_s;    /* mrt_cost_collective with the measured profile */
} mrt_calib_coll;

typedef struct mrt_calibration {
    mrt_profile profile; /* the result */
    mrt_mesh mesh;
    int ranks, quick;
    char host[256]; /* rank 0's host name */
    int hosts;      /* distinct host names among the ranks */
    int gemm_n[MRT_COMPUTE_DTYPE_COUNT]; /* square GEMM sizes timed */
    int64_t reduce_elems, copy_bytes;
    int nlinks;
    mrt_calib_link link[MRT_MAX_AXES];
    int ncoll;
    mrt_calib_coll coll[(MRT_MAX_AXES + 1) * MRT_CALIB_KINDS * MRT_CALIB_SIZES];
    /* Nodes: the ranks on one host (runtime/hier.c).
     * When there are several nodes of equal size, filled in rank order
     * (as the cost model places ranks), both tiers are measured as the
     * axes are (ping-pong, every pair at once) and the profile gets its
     * nodes: block; otherwise nodes_note says why not. */
    int64_t ranks_per_node; /* 0: not measured */
    int nodes;
    mrt_link intra, inter;
    char nodes_note[160];
    double seconds; /* the whole calibration */
} mrt_calibration;

/* Measures; collective over world, whose size must equal mesh->nranks.
 * quick: smaller sizes and fewer repetitions (a few seconds, for
 * tests).  Every rank returns the same status (errors are those of the
 * lowest failing rank); *out is filled on every rank. */
mrt_status mrt_calibrate(MPI_Comm world, const mrt_mesh *mesh, int quick,
                         mrt_calibration *out, mrt_error *err);
/* The figures as a table with model/measured ratios. */
void mrt_calibration_print(const mrt_calibration *c, FILE *f);
/* The figures as YAML lines for the profile's `measured:` block (see
 * mrt_profile_save_measured); a new string the caller frees, or NULL
 * when out of memory. */
char *mrt_calibration_yaml(const mrt_calibration *c);
/* The BLIS kernel family this process uses, e.g. "zen3" (static). */
const char *mrt_blis_kernel_family(void);

/* ---- shared by calibrate.c and the files beside it ------------------- */

/* The arguments of mrt_machine_time_products and _collectives (named
 * fn in the error) checked: MRT_E_USAGE for a NULL comm, plans or plan;
 * *timed (when not NULL) set to 0 first. */
mrt_status mrt_calib_check_plans(MPI_Comm comm, mrt_plan *const *plans, int n,
                                 int *timed, const char *fn, mrt_error *err);

/* One collective of `bytes` per rank (float32 sums) over g, of n ranks,
 * from send into recv (bytes, n times bytes for an all-gather); bytes
 * a multiple of 4 n, and no more than INT_MAX floats. */
void mrt_calib_run_coll(mrt_coll kind, MPI_Comm g, int n, int64_t bytes,
                        void *send, void *recv);

/* v to 4 significant digits: all a measurement can claim. */
double mrt_calib_sig4(double v);
/* Seconds of the best of `reps` repetitions of run(arg), each from a
 * barrier, the slowest rank's.  Collective. */
double mrt_calib_best(MPI_Comm world, int reps, void (*run)(void *), void *arg);
/* The buffers the local rates are measured in (each of `bytes`, far
 * larger than a core's cache), the repetitions, and the size of the
 * peak's product. */
typedef struct mrt_calib_pools {
    float *a, *b, *c;
    size_t bytes;
    int reps, quick;
    int peak_n[MRT_COMPUTE_DTYPE_COUNT]; /* the peak's size, by type */
    double target_s;                     /* of work per repetition */
} mrt_calib_pools;
/* Three pools of `bytes` each on every rank, every page touched (zeros:
 * no subnormals), for repetitions of about target seconds, the best of
 * reps; out of memory on any rank is MRT_E_NOMEM everywhere, "out of
 * memory for WHAT (N MiB per rank)", with *pl all zero.  Collective. */
mrt_status mrt_calib_pools_create(MPI_Comm world, size_t bytes, int reps,
                                  double target, const char *what,
                                  mrt_calib_pools *pl, mrt_error *err);
/* Frees the pools and zeroes *pl. */
void mrt_calib_pools_destroy(mrt_calib_pools *pl);
/* The `gemm:` rows: products n x n x n in every form, in float32 and in
 * float64, operands not in cache, and each type's peak (p->gemm_flops)
 * as its largest nn row.
 * Collective. */
void mrt_calib_gemm_rows(MPI_Comm world, const mrt_calib_pools *pl,
                         mrt_profile *p);
/* The `maps:` rows: every elementwise function over shards of several
 * sizes in float32, and those whose float64 time is not float32's at
 * twice the bytes in float64 too (p->copy_Bps sizes the repetitions).
 * Collective. */
void mrt_calib_map_rows(MPI_Comm world, const mrt_calib_pools *pl,
                        mrt_profile *p);
/* One `gemm:` row's rate, flop/s: m x n x k products of type t in form
 * f, operands cycling through the pools (not in cache), a repetition
 * about `target` seconds, the best of pl->reps; 0 when the pools cannot
 * hold one operand set.  Collective. */
double mrt_calib_gemm_rate(MPI_Comm world, const mrt_calib_pools *pl,
                           mrt_dtype t, double target, int f, int m, int n,
                           int k);
/* The rates of rows[0, n) (each a product shape, form and type), timed
 * together as the gemm rows are: each sized to about pl->target_s a
 * repetition, then pl->reps rounds in which they take turns, each
 * keeping its best, so that a slow moment of a shared host falls on one
 * repetition of every shape rather than on every repetition of some;
 * flops 0 for a shape whose operands the pools cannot hold.  Collective:
 * every rank passes the same rows. */
void mrt_calib_product_rates(MPI_Comm world, const mrt_calib_pools *pl, int n,
                             mrt_product_row *rows);
/* The same in steps, for timing rounds apart (runtime/validate.c times
 * one between its rounds of runs): the shapes of rows[0, n) sized to
 * about pl->target_s a repetition (MRT_E_NOMEM on every rank when any
 * is out of memory, *out NULL); a round times each once, keeping each
 * one's best; the rates are those bests (flops 0 for a shape too large
 * for the pools or not yet timed).  pl must outlive the timer.  Create
 * and round are collective: every rank passes the same rows. */
typedef struct mrt_calib_products mrt_calib_products;
mrt_status mrt_calib_products_create(MPI_Comm world, const mrt_calib_pools *pl,
                                     int n, const mrt_product_row *rows,
                                     mrt_calib_products **out);
void mrt_calib_products_round(MPI_Comm world, mrt_calib_products *t);
void mrt_calib_products_rates(const mrt_calib_products *t,
                              mrt_product_row *rows);
void mrt_calib_products_destroy(mrt_calib_products *t);
/* The profile's collective rows timed in steps, as
 * mrt_machine_time_collectives times them (runtime/validate.c times one
 * round between its rounds of runs): create finds the rows a group of
 * the plans' mesh can time and warms them up (*out NULL, MRT_OK, when
 * none can: ranks on several hosts, a mesh not comm's ranks); a round
 * times each row once, up to `rounds`; set puts each row's median so
 * far into every plan's profile and returns the rows (0 before a
 * round).  Create and round are collective. */
typedef struct mrt_calib_collectives mrt_calib_collectives;
mrt_status mrt_calib_collectives_create(MPI_Comm comm, mrt_plan *const *plans,
                                        int n, int rounds,
                                        mrt_calib_collectives **out,
                                        mrt_error *err);
void mrt_calib_collectives_round(mrt_calib_collectives *c,
                                 const mrt_profile *p);
int mrt_calib_collectives_set(mrt_calib_collectives *c, mrt_plan *const *plans,
                              int n);
void mrt_calib_collectives_destroy(mrt_calib_collectives *c);
/* Those rows as a table. */
void mrt_calib_print_rates(const mrt_profile *p, FILE *f);

#endif
