/*
 * cli.h — the meshrt command line: argument parsing and the subcommands.
 * Only this layer prints errors and picks exit codes:
 *   0 ok, 1 failure at run time or in verification, 2 bad input or usage.
 */
#ifndef MRT_CLI_H
#define MRT_CLI_H

#include <limits.h>
#include <stdint.h>

#include "meshrt_mpi.h"

typedef struct mrt_cli_args {
    const char *cmd;  /* "check", "plan", "run", "calibrate" */
    const char *spec; /* NULL for calibrate */
    const char *mesh; /* --mesh AXIS=N,... or NULL */
    const char *dims; /* --dim DIM=N,... or NULL; --dim given several
                         times: all of them, joined by ',' in dims_buf */
    char dims_buf[4096];
    /* compare --sweep DIM=N,N,... (several: zipped), nsweep of them, and
     * --sweep-mesh MESH MESH ..., nsweep_mesh of them */
    const char *sweep[8];
    int nsweep;
    const char *sweep_mesh[64];
    int nsweep_mesh;
    int json, verify, repeat, help;
    int gemm_rows;      /* validate: no products timed first */
    const char *save;   /* --save DIR or NULL */
    const char *layout; /* --layout NAME (a `layouts:` alternative) or NULL */
    double replicated_share; /* check: --replicated-share (0.25) */
    int64_t memory;          /* check: --memory BYTES; 0: the machine's */
    mrt_plan_options plan;   /* --planner, --profile FILE (run: --machine
                              FILE), --explain */
    int profile;             /* run --profile: modeled against measured */
    const char *trace;       /* run --trace FILE or NULL */
    const char *report;    /* run --report FILE or NULL: the standard output */
    const char *out;       /* calibrate --out FILE or NULL */
    int quick;             /* calibrate --quick */
    const char *csv, *svg; /* compare: --csv FILE, --svg FILE, or NULL */
    const char *json_file; /* compare, search: --json FILE, or NULL */
    int64_t max_memory;    /* search --max-memory BYTES; 0: no cap */
    int top;               /* search --top K; 0: 5 */
    int exhaustive;        /* search --exhaustive: no pruning */
    int screen;            /* search: --screen 1, --no-screen -1, else 0 */
    int per_tensor;        /* search --per-tensor: parameters' own layouts */
    const char *activations; /* search --activations NAME,...|all, or NULL */
    const char *html;        /* compare --html FILE, or NULL */
    int ascii, steps;        /* show --ascii, --steps */
    int schedule;            /* show --schedule */
    int by_kind;             /* compare --by-kind: memory by kind */
    int timeline;            /* plan --timeline: the memory picture */
    const char *from, *to;   /* show --from LAYOUT --to LAYOUT, or NULL */
    int nnames;              /* show: the TENSOR arguments after SPEC */
    char **names;
} mrt_cli_args;

/* The commands, as bits of a mask. */
#define MRT_CLI_CHECK 1u
#define MRT_CLI_PLAN 2u
#define MRT_CLI_RUN 4u
#define MRT_CLI_COMPARE 8u
#define MRT_CLI_SEARCH 16u
#define MRT_CLI_CALIBRATE 32u
#define MRT_CLI_SHOW 64u
#define MRT_CLI_VALIDATE 128u
/* cmd's bit, or 0 for no command. */
unsigned mrt_cli_command_bit(const char *cmd);

/* One row of the table of options (args.c): what getopt_long reads,
 * which commands accept the option, and its usage text (usage.c). */
typedef struct mrt_cli_option {
    const char *name; /* "save": --save */
    int key;          /* getopt_long's value */
    const char *arg;  /* its argument in the usage, "DIR"; NULL: none */
    unsigned cmds;    /* MRT_CLI_* of the commands that accept it */
    const char *help; /* lines after the first indented; NULL: not listed */
} mrt_cli_option;
/* Ends with a row of name NULL. */
extern const mrt_cli_option mrt_cli_options[];

/* Parses argv after the subcommand name; fills err on bad usage. */
mrt_status mrt_cli_parse(int argc, char **argv, mrt_cli_args *a,
                         mrt_error *err);
/* Loads a->spec with a->mesh and a->dims (dims_override: instead of
 * a->dims, when not NULL).  On failure *spec is NULL. */
mrt_status mrt_cli_load_spec(const mrt_cli_args *a, const char *dims_override,
                             mrt_spec **spec, mrt_error *err);
/* Loads a->spec (with a->mesh and a->dims, then under a->layout) and plans it; on
 * failure *spec and *plan are NULL and err says why.  The caller
 * destroys both. */
mrt_status mrt_cli_load(const mrt_cli_args *a, mrt_spec **spec, mrt_plan **plan,
                        mrt_error *err);
/* Checks the plan against the spec's `expect:` budgets (the whole
 * program's and each op's).  Returns how many are exceeded; with print,
 * writes one "SPEC:LINE:COL: error: ..." line each on stderr. */
int mrt_cli_check_budgets(const mrt_spec *spec, const mrt_plan *plan,
                          int print);
/* 1 if the plan's peak memory is within its device memory (or none is
 * given); else 0, and with print one "SPEC: error: ..." line on stderr
 * (budget.c). */
int mrt_cli_plan_fits(const mrt_spec *spec, const mrt_plan *plan, int print);
/* Fills err (when it holds no error yet) with code, file (no position)
 * and the message; returns code. */
mrt_status mrt_cli_error(mrt_error *err, mrt_status code, const char *file,
                         const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Exit status for a status code. */
int mrt_cli_exit_code(mrt_status st);
/* Prints the error as one line on stderr. */
void mrt_cli_print_error(const mrt_error *err);
/* e's error line alone (no note), as tables and reports show it; returns
 * buf. */
#define MRT_CLI_ERROR_MAX 1024
const char *mrt_cli_error_line(const mrt_error *e, char *buf, size_t size);
/* For commands under MPI: the lowest failing rank's status and error on
 * every rank (mrt_comm_agree), the error printed by rank 0 only
 * (cmd_run.c). */
mrt_status mrt_cli_agree(mrt_status st, mrt_error *err);
/* SIGINT, SIGTERM and SIGHUP remove the temporary file being written,
 * print one line (rank 0 only; rank -1: not known yet, ask mpirun's
 * environment) and end the process by the signal (signals.c). */
void mrt_cli_signals_install(const char *cmd, int rank);
/* The rank mpirun gave this process, from its environment (before
 * MPI_Init), or 0 outside mpirun. */
int mrt_cli_launcher_rank(void);
/* The command has done its work (under MPI: just before MPI_Finalize):
 * a signal from now on is mpirun ending the job because another rank
 * has exited with an error, and prints nothing. */
void mrt_cli_signals_done(void);
/* Usage text of a subcommand (NULL: the overview) on f. */
void mrt_cli_usage(const char *cmd, FILE *f);

int mrt_cli_check(const mrt_cli_args *a);
int mrt_cli_plan(const mrt_cli_args *a);
/* plan --timeline, --svg FILE: the memory pictures (memory_picture.c);
 * the exit code. */
int mrt_cli_memory_picture(const mrt_cli_args *a, const mrt_plan *plan);
int mrt_cli_run(const mrt_cli_args *a);
int mrt_cli_calibrate(const mrt_cli_args *a);
int mrt_cli_compare(const mrt_cli_args *a);
int mrt_cli_search(const mrt_cli_args *a);
int mrt_cli_show(const mrt_cli_args *a);
/* validate: under MPI (cmd_validate.c) */
int mrt_cli_validate(const mrt_cli_args *a);
/* search --per-tensor on spec, loaded as a says (cmd_search_params.c). */
int mrt_cli_search_params(const mrt_cli_args *a, const mrt_spec *spec,
                          const mrt_search_options *opt);
/* The end of either search: its text report o on the standard output,
 * and its JSON in --json FILE if asked; the exit code (1 when nothing
 * was found, ntop == 0) (cmd_search.c). */
int mrt_cli_search_report(const mrt_cli_args *a, int ntop,
                          void (*text)(FILE *, const void *),
                          void (*json)(FILE *, const void *), const void *o);

/* A JSON number (mrt_json_format_number) in a buffer that lives until
 * the end of the enclosing block: several may be arguments of one
 * fprintf. */
#define MRT_CLI_JSON_NUM(fmt, v)                                               \
    mrt_json_format_number((char[MRT_JSON_NUMBER_MAX]){0}, fmt, v)

/* "12.1 ms", "3.38 MiB": figures for people (report.c).  Return buf. */
const char *mrt_cli_fmt_time(double seconds, char *buf, size_t size);
const char *mrt_cli_fmt_bytes(double bytes, char *buf, size_t size);

/* ---- compare: one row per partitioning (cmd_compare.c), written as
 * text, CSV, JSON (report.c) and SVG (report_svg.c). */
typedef mrt_compare_row mrt_cmp_row; /* meshrt.h */

typedef struct mrt_cmp_table {
    const char *spec;       /* its path */
    const char *planner;    /* "auto" or "meshtf" */
    char profile[PATH_MAX]; /* the cost model's profile, as plans name it */
    int nrows;
    mrt_cmp_row *row; /* borrowed from owner */
    int ncols;
    char (*col)[600];   /* axis-set names, e.g. "data,model" */
    int fastest;        /* row index, or -1 when no row planned */
    int training;       /* the spec has `train:`: phases are shown */
    mrt_compare *owner; /* the library's comparison */
} mrt_cmp_table;

/* Fills t (zeroed; t->spec and t->planner set by the caller) from
 * mrt_compare_create: a row for spec's own rules and one per
 * alternative (cmd_compare.c).  Fails only when out of memory;
 * mrt_cmp_table_free frees it either way. */
mrt_status mrt_cmp_build(mrt_cmp_table *t, const mrt_spec *spec,
                         const mrt_plan_options *opt);
void mrt_cmp_table_free(mrt_cmp_table *t);
/* `compare --sweep` (cmd_sweep.c): at most this many sizes (and
 * --sweep-mesh meshes), and at most MRT_CLI_SWEEP_DIMS dims zipped. */
#define MRT_CLI_SWEEP_DIMS 8
#define MRT_CLI_SWEEP_MAX MRT_SWEEP_MAX /* meshrt.h */
#define MRT_CLI_SWEEP_MAX_STR "64"      /* the same, for messages */
int mrt_cli_sweep(const mrt_cli_args *a);
/* One CSV field (RFC 4180 quoting), then a comma or, if last, CRLF. */
void mrt_cli_csv_field(const char *s, FILE *f, int last);

void mrt_cmp_print_text(const mrt_cmp_table *t, FILE *f);
/* compare --by-kind: each row's peak memory by kind (compare_memory.c);
 * and the line under the table naming the rows that do not fit. */
void mrt_cmp_print_memory(const mrt_cmp_table *t, FILE *f);
void mrt_cmp_print_fits(const mrt_cmp_table *t, FILE *f);
/* A row's "memory" object of compare --json. */
void mrt_cmp_write_memory_json(const mrt_plan_memory *m, FILE *f);
void mrt_cmp_write_csv(FILE *f, const void *table);
void mrt_cmp_write_json(FILE *f, const void *table);
void mrt_cmp_write_svg(FILE *f, const void *table);
/* report_svg.c's helpers for sweep_svg.c: s escaped as XML text (at
 * most max characters, then "..."); a tick step for an axis from 0 to
 * max seconds, and the unit (and its scale) its labels show. */
void mrt_cli_svg_text(const char *s, FILE *f, size_t max);
double mrt_cli_svg_tick(double max, double *scale, const char **unit);
/* sweep_svg.c: a sweep (an mrt_sweep, with the spec's path and what
 * grows) as a line chart of modeled time per step, a line per layout. */
typedef struct mrt_sweep_chart {
    const char *spec, *planner, *what; /* what: "dim batch", "the mesh" */
    int plural;                        /* what is several ("dims a,b") */
    const mrt_sweep *t;
} mrt_sweep_chart;
void mrt_sweep_write_svg(FILE *f, const void *chart);
/* The bytes per rank over each set of mesh axes, one stacked bar per
 * row (report_svg.c). */
void mrt_cmp_write_bytes_svg(FILE *f, const void *table);
/* compare --html: one self-contained page, the table, the charts and
 * each row's pictures (report_html.c); ctx is the mrt_cmp_html. */
typedef struct mrt_cmp_html {
    const mrt_cmp_table *table;
    const mrt_spec *spec;
    const mrt_plan_options *opt;
} mrt_cmp_html;
void mrt_cmp_write_html(FILE *f, const void *ctx);

#endif
