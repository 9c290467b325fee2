/*
 * meshrt.h — the one public header of meshrt.
 *
 * meshrt runs einsum programs on a logical processor mesh, Mesh-TensorFlow
 * style.  A C user loads a spec (mrt_spec_load), plans it for a mesh
 * (mrt_plan_create: no MPI needed, any mesh size), prints or inspects the
 * plan, and runs it on MPI ranks (mrt_run).  Every function that can meet
 * bad input returns an mrt_status and fills an optional mrt_error; nothing
 * here prints or exits.  Objects come in create/destroy pairs; destroy
 * functions accept NULL.
 */
#ifndef MESHRT_H
#define MESHRT_H

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(MRT_BUILDING)
#define MRT_API __attribute__((visibility("default")))
#else
#define MRT_API
#endif

/* Status codes.  0 is success; the command line maps MRT_E_RUNTIME,
 * MRT_E_NOMEM and MRT_E_VERIFY to exit status 1 and every other error
 * to 2. */
typedef enum mrt_status {
    MRT_OK = 0,
    MRT_E_SYNTAX,  /* the YAML is not well formed */
    MRT_E_SPEC,    /* well-formed YAML that is not a valid spec */
    MRT_E_IO,      /* a file could not be read, or an output path cannot
                      be a file (missing folder, a folder, too long) */
    MRT_E_USAGE,   /* bad command-line use or bad API arguments */
    MRT_E_MESH,    /* the mesh does not fit the MPI world */
    MRT_E_NOMEM,   /* out of memory */
    MRT_E_RUNTIME, /* an MPI call or a kernel failed while running, or the
                      system refused to store an output (disk full,
                      read-only, permission denied) */
    MRT_E_VERIFY,  /* results differ from the unsharded reference */
    MRT_STATUS_COUNT
} mrt_status;

/* The first error met.  line and column are 1-based; 0 means "no
 * position" (an error about a whole file or about the command line). */
typedef struct mrt_error {
    mrt_status code;
    char file[256];
    int line, column;
    char message[512];
} mrt_error;

/* Name of a status code, e.g. "spec error". */
MRT_API const char *mrt_status_name(mrt_status s);
/* Formats "FILE:LINE:COL: error: MESSAGE" (parts without a value are
 * left out) into buf.  Returns buf. */
MRT_API char *mrt_error_format(const mrt_error *e, char *buf, size_t size);

/* ---- specs -------------------------------------------------------- */

typedef struct mrt_spec mrt_spec; /* a parsed, validated spec */

/* Loads the YAML spec at path.  mesh_override is NULL or a string
 * "AXIS=N,AXIS=N" that replaces the spec's mesh before anything is
 * resolved against it.  On success *out is a new spec the caller owns
 * (free with mrt_spec_destroy). */
MRT_API mrt_status mrt_spec_load(const char *path, const char *mesh_override,
                                 mrt_spec **out, mrt_error *err);
/* What mrt_spec_load_opts changes in the spec as it loads it, before
 * anything is resolved against it (NULL members: nothing). */
typedef struct mrt_spec_overrides {
    const char *mesh; /* "AXIS=N,AXIS=N": replaces the spec's mesh */
    const char *dims; /* "DIM=N,DIM=N": new sizes for dims the spec names
                         (an unknown dim is an MRT_E_USAGE error) */
} mrt_spec_overrides;
/* mrt_spec_load with overrides (ov may be NULL).  With any override, a
 * `layouts:` alternative that no longer fits is kept with its error,
 * which selecting it returns (meshrt compare shows it in its row). */
MRT_API mrt_status mrt_spec_load_opts(const char *path,
                                      const mrt_spec_overrides *ov,
                                      mrt_spec **out, mrt_error *err);
MRT_API void mrt_spec_destroy(mrt_spec *spec);

/* ---- plans -------------------------------------------------------- */

typedef struct mrt_plan mrt_plan;

/* How einsums are lowered. */
typedef enum mrt_planner {
    MRT_PLANNER_AUTO = 0, /* cost-aware: the cheapest execution layout per
                             op, pending sums kept where that pays */
    MRT_PLANNER_MESHTF,   /* Mesh-TensorFlow's lowering, exactly: global
                             rules only, all-reduce, no search */
    MRT_PLANNER_COUNT
} mrt_planner;

typedef struct mrt_plan_options {
    mrt_planner planner;
    const char *profile; /* machine profile file; NULL: the default file
                            (see mrt_profile_default_path) when it exists,
                            else the built-in profile */
    int explain;         /* keep the alternatives weighed for each op */
    int blocking;        /* issue every collective blocking; by default a
                            collective whose result is read only some
                            steps later runs in the background */
} mrt_plan_options;

/* Lowers every op of spec into local kernels and collectives; opt may be
 * NULL (auto planner, default profile).  The plan does not borrow spec:
 * it copies what it needs.  The caller owns *out. */
MRT_API mrt_status mrt_plan_create(const mrt_spec *spec,
                                   const mrt_plan_options *opt,
                                   mrt_plan **out, mrt_error *err);
MRT_API void mrt_plan_destroy(mrt_plan *plan);
/* Human-readable plan; deterministic, so it can be golden-tested. */
MRT_API void mrt_plan_print(const mrt_plan *plan, FILE *f);
/* The same as one JSON object (see docs/plan.md for its fields). */
MRT_API void mrt_plan_print_json(const mrt_plan *plan, FILE *f);
/* The alternatives weighed for each op (plan made with explain = 1). */
MRT_API void mrt_plan_print_explain(const mrt_plan *plan, FILE *f);

/* Totals per rank of the whole plan. */
typedef struct mrt_plan_totals {
    int64_t comm_bytes;  /* handed to MPI */
    double wire_bytes;   /* sent on the wire (modeled) */
    int64_t messages;    /* modeled */
    int64_t collectives; /* MPI calls */
    double flops;        /* local kernels */
    double comm_time_s;  /* modeled */
    double compute_time_s;
    double time_s;       /* comm + compute, modeled */
    int64_t peak_memory; /* bytes per rank a run holds at its peak: the
                            buffer of every shard (placed by lifetime),
                            the kernels' workspace, and MPI's own scratch
                            for the collectives */
    /* The same split by the part of a training step the steps belong to:
     * [0] forward, [1] backward, [2] update (all forward without
     * `train:`). */
    int64_t phase_comm_bytes[3];
    double phase_wire_bytes[3];
    int64_t phase_collectives[3];
    double phase_time_s[3];
} mrt_plan_totals;
MRT_API mrt_plan_totals mrt_plan_get_totals(const mrt_plan *plan);
/* Bytes per rank handed to MPI by the whole plan, and flops per rank. */
MRT_API int64_t mrt_plan_comm_bytes(const mrt_plan *plan);
MRT_API double mrt_plan_flops(const mrt_plan *plan);

/* ---- running ------------------------------------------------------ */

typedef struct mrt_run_options {
    int verify;           /* recompute unsharded on rank 0 and compare */
    const char *save_dir; /* NULL, or write each output as DIR/NAME.npy */
    int repeat;           /* 0 or 1: run once; N: time N runs */
    int json;             /* report as JSON instead of text */
    FILE *report;         /* where rank 0 writes its report (stdout if NULL) */
    int profile;          /* also report each op and step: modeled against
                             measured time, planned against measured
                             bytes, GFLOP/s of the einsums */
    const char *trace;    /* NULL, or write a Chrome trace-event JSON file
                             of the last run here (one track per rank;
                             "-": the standard output) */
} mrt_run_options;

/* Runs plan on MPI_COMM_WORLD (MPI must be initialised, and the world
 * size must equal the mesh size).  Collective: every rank calls it and
 * every rank returns the same status. */
MRT_API mrt_status mrt_run(const mrt_spec *spec, const mrt_plan *plan,
                           const mrt_run_options *opt, mrt_error *err);

#ifdef __cplusplus
}
#endif
#endif
