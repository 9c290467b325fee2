/*
 * profile.h — a machine profile for the cost model: what a message costs
 * on each mesh axis (latency and bandwidth) and how fast the local kernels
 * run.  Profiles come from the built-in default, from a file written by
 * `meshrt calibrate` (YAML, see docs/cost-model.md), and from a spec's
 * `network:` block, which overrides the links of the axes it names.
 */
#ifndef MRT_PROFILE_H
#define MRT_PROFILE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "layout.h"
#include "meshrt.h"
#include "mesh.h"

/* What a profile value may be, in the units of the file (microseconds,
 * GB/s, GFLOP/s; docs/calibration.md).  A latency is at most 1000 s; a
 * rate (bandwidth, GEMM, reduction and copy rates) at least 1 byte or
 * flop per second and at most 1e21.  Within these, every modeled time is
 * a finite number of seconds: bytes and flops per rank fit in 64 bits or
 * in a double far below its overflow, and nothing divides by a subnormal
 * rate. */
#define MRT_PROFILE_LATENCY_US_MAX 1e9
#define MRT_PROFILE_RATE_MIN 1e-9
#define MRT_PROFILE_RATE_MAX 1e12

/* One link class: what a message costs on one mesh axis. */
typedef struct mrt_link {
    double latency_s;     /* alpha, seconds per message */
    double bandwidth_Bps; /* bytes per second, 1/beta */
} mrt_link;

/* What calibrate measured beyond the links and peak rates (docs/
 * calibration.md): collectives by kind, group size and bytes per rank
 * (interpolated between the sizes), the float32 GEMM rate by the form of
 * its operands and its size (an n x n x n product), the rate of each
 * elementwise function by size, and how many ranks shared how many
 * cores. */
#define MRT_PROFILE_ROWS 64
typedef struct mrt_coll_row {
    int kind;      /* mrt_coll (cost.h) */
    int64_t group; /* ranks in the group */
    int64_t bytes; /* handed to MPI per rank */
    double time_s;
} mrt_coll_row;
/* How the two inputs of a product are stored as BLIS sees them (kernels/
 * kernel.c hands it general strides): n, a matrix stored by rows (unit
 * column stride); t, by columns (unit row stride: BLIS reads it as a
 * transposed one).  The gradients' products take transposed operands. */
typedef enum mrt_gemm_form {
    MRT_GEMM_NN = 0, /* A by rows, B by rows */
    MRT_GEMM_NT,     /* B by columns (dY W^T) */
    MRT_GEMM_TN,     /* A by columns (X^T dY) */
    MRT_GEMM_TT,
    MRT_GEMM_FORM_COUNT
} mrt_gemm_form;
/* "nn", "nt", "tn", "tt". */
const char *mrt_gemm_form_name(mrt_gemm_form f);
/* Which side of a thin product is short: C (M x N) = A (M x K) B (K x N)
 * with one of M, N, K small and the other two `other`.  BLIS's cost
 * over its flops depends on which: a short M packs all of B for few
 * rows of A, a short K writes C once per few flops, a short N packs A
 * for few columns (docs/calibration.md, round I: 64 x 1024 x 1024 ran
 * at 57-75 GFLOP/s here, 1024 x 64 x 1024 at 111-130, 1024 x 1024 x 64
 * at 165-177; a 128^3 cube at 113). */
typedef enum mrt_gemm_thin {
    MRT_GEMM_CUBE = 0, /* n x n x n */
    MRT_GEMM_THIN_M,   /* n x other x other */
    MRT_GEMM_THIN_N,   /* other x n x other */
    MRT_GEMM_THIN_K,   /* other x other x n */
    MRT_GEMM_THIN_COUNT
} mrt_gemm_thin;
/* "cube", "m", "n", "k". */
const char *mrt_gemm_thin_name(mrt_gemm_thin s);
/* A product's rate in float32, or in float64 (BLIS's dgemm: its rate
 * by size is not float32's scaled by the two peaks' ratio). */
#define MRT_PROFILE_GEMM_ROWS 128 /* forms x sizes, thin sides, both types */
typedef struct mrt_gemm_row {
    int64_t n;
    int form;      /* mrt_gemm_form */
    double flops;  /* flop/s */
    int dtype;     /* MRT_F32 (a row without `dtype:`) or MRT_F64 */
    int thin;      /* mrt_gemm_thin: MRT_GEMM_CUBE, or the short side n */
    int64_t other; /* a thin row's other two sides */
} mrt_gemm_row;
/* The measured rate of one product shape, C (m x n) = A (m x k) B
 * (k x n) in a form and type: what `meshrt validate` times for the
 * products its plans run (runtime/calibrate_products.c) before it
 * prices them, as FlexFlow's simulator times each operator once.  On
 * BLIS the rate of a shape is no smooth function of its sides: below
 * a threshold of any side (float32 on zen3: m < 512, n < 200, k < 240)
 * BLIS takes its unpacked small-matrix path, whose rate moves with the
 * operands' strides (256 x 1024 x 1024 ran at 35 GFLOP/s here, 512 x
 * 1024 x 1024 at 89, 300^3 at 86; docs/calibration.md, round L), so a
 * shape the profile has is priced by its own row, any other by the
 * gemm rows. */
#define MRT_PROFILE_PRODUCT_ROWS 256
#define MRT_PRODUCT_C_COLS 4 /* added to a form: C stored by columns */
typedef struct mrt_product_row {
    int64_t m, n, k;
    int form;     /* mrt_gemm_form, + MRT_PRODUCT_C_COLS for a C stored by
                     columns (`c: columns`) */
    int dtype;    /* MRT_F32 or MRT_F64 */
    double flops; /* flop/s */
} mrt_product_row;
/* The rate of one elementwise function (a map step: relu, gelu, add,
 * ...; named as the plan names it) over `elements` output elements of
 * float32, or of float64 (the kernels' other compute type: its
 * transcendentals are libm's, not float32's vectorised ones, so its
 * time is not float32's scaled by the bytes), each input as large as
 * the output. */
#define MRT_PROFILE_MAP_ROWS 192 /* every function, 3 sizes, both types */
#define MRT_PROFILE_FN_MAX 24
typedef struct mrt_map_row {
    char fn[MRT_PROFILE_FN_MAX];
    int64_t elements;
    double s_per_elem; /* seconds per output element */
    int dtype;         /* MRT_F32 (a row without `dtype:`) or MRT_F64 */
} mrt_map_row;

/* A machine: the links per named mesh axis (or per tier: inside a node,
 * across nodes) and the local rates. */
typedef struct mrt_profile {
    char source[PATH_MAX]; /* "built-in default", a file, ... */
    int naxes;             /* links given per axis name */
    char axis[MRT_MAX_AXES][MRT_NAME_MAX];
    mrt_link link[MRT_MAX_AXES];
    mrt_link fallback; /* for axes not named above */
    /* nodes: the ranks on one node (0: one node) and, when there are
     * several, the links inside a node and across nodes, which then
     * price every group (mesh_nodes.h) instead of the per-axis links */
    int64_t ranks_per_node;
    mrt_link intra, inter;
    double gemm_flops[MRT_COMPUTE_DTYPE_COUNT]; /* local GEMM rate, flop/s */
    double reduce_flops; /* elementwise add rate, flop/s */
    double copy_Bps;     /* local copy rate, bytes/s */
    char kernel[64];     /* BLIS kernel family, if measured */
    int ncoll;           /* measured collectives, if any */
    mrt_coll_row coll[MRT_PROFILE_ROWS];
    int ngemm; /* measured GEMM rates by type, form and size, n ascending */
    mrt_gemm_row gemm[MRT_PROFILE_GEMM_ROWS];
    int nprod; /* measured rates of whole product shapes */
    mrt_product_row prod[MRT_PROFILE_PRODUCT_ROWS];
    int nmap; /* measured map rates by function, type and size */
    mrt_map_row map[MRT_PROFILE_MAP_ROWS];
    int ranks, cores;      /* ranks per host that shared `cores` cores while
                         the rates were measured; 0: not known */
    int64_t device_memory; /* `device_memory:` bytes of one rank's memory
                              (a GPU's); 0: not known */
} mrt_profile;

/* The profile used when nothing better is known: a shared-memory node
 * (2 us, 5 GB/s per link; 20 GFLOP/s float32 and 10 float64 GEMM). */
void mrt_profile_default(mrt_profile *p);
/* Sets (or adds) the link of the axis called name. */
void mrt_profile_set_link(mrt_profile *p, const char *name, mrt_link l);
/* The link of axis a of mesh m (by name, else the fallback). */
mrt_link mrt_profile_link(const mrt_profile *p, const mrt_mesh *m, int a);
/* Sets the ranks per node (n > 0), keeping the profile's tiers; a
 * profile that had none takes its fallback link for both (plan
 * --ranks-per-node on a profile without nodes:). */
void mrt_profile_set_ranks_per_node(mrt_profile *p, int64_t n);

/* The measured rows of the profile file's mapping root (profile_rows.c):
 * `collectives:`, `gemm:`, `products:`, `maps:`, `ranks:`, `cores:`;
 * keys absent keep
 * p's. */
struct mrt_yaml_doc;
struct yaml_node_s;
mrt_status mrt_profile_load_rows(const struct mrt_yaml_doc *d,
                                 const struct yaml_node_s *root,
                                 mrt_profile *p);
/* Sorts the rows as the cost model reads them: collectives by kind,
 * group and bytes, GEMM rates by type (float32 first), form and n, map
 * rates by function, type (float32 first) and elements. */
void mrt_profile_sort_rows(mrt_profile *p);
/* The row of the product m x n x k of form and type t in p, or NULL. */
const mrt_product_row *mrt_profile_product(const mrt_profile *p, int t,
                                           int form, int64_t m, int64_t n,
                                           int64_t k);
/* Adds (or sets) that row's rate; 0 when the table is full. */
int mrt_profile_set_product(mrt_profile *p, mrt_product_row r);
/* Writes those rows as YAML lines (nothing when p has none). */
void mrt_profile_put_rows(FILE *f, const mrt_profile *p);

/* Reads a profile file (as written by mrt_profile_save) over *p, which
 * should hold the default first: keys the file lacks keep their values.
 * Errors carry the file's path and the position of the bad node. */
mrt_status mrt_profile_load(const char *path, mrt_profile *p, mrt_error *err);
/* The file of `--machine machine` into path: machine itself when it has
 * a '/' or ends in ".yaml", else NAME.yaml of the profiles folder
 * (profile_find.c says which); MRT_E_USAGE for an unknown name. */
mrt_status mrt_profile_find(const char *machine, char *path, size_t size,
                            mrt_error *err);
/* Writes p as YAML to path, atomically (temporary file, then rename). */
mrt_status mrt_profile_save(const char *path, const mrt_profile *p,
                            mrt_error *err);
/* The profile file used when none is named: $MESHRT_PROFILE if set, else
 * $XDG_CONFIG_HOME/meshrt/profile.yaml (~/.config/...); writes it into buf.
 * Returns buf. */
char *mrt_profile_default_path(char *buf, int size);

#endif
