/*
 * args.c — command-line parsing, usage texts and exit codes.
 */
#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* The one table of options: getopt_long's table, the check that a
 * command accepts an option, and the usage texts (usage.c) all come
 * from it.  An option whose help or argument differs between commands
 * has a row per variant; rows are in the order the usage texts list
 * them.  A help of two lines is one literal ("\n" between the lines);
 * a longer one is a literal per line, as the usage text wraps it. */
#define ALL                                                                    \
    (MRT_CLI_CHECK | MRT_CLI_PLAN | MRT_CLI_RUN | MRT_CLI_COMPARE |            \
     MRT_CLI_SEARCH | MRT_CLI_SHOW | MRT_CLI_VALIDATE)
const mrt_cli_option mrt_cli_options[] = {
    {"mesh", 'm', "AXIS=N,...", MRT_CLI_CHECK,
     "replace the spec's mesh (e.g. --mesh data=4,model=1)"},
    {"mesh", 'm', "AXIS=N,...",
     MRT_CLI_PLAN | MRT_CLI_RUN | MRT_CLI_SEARCH | MRT_CLI_SHOW |
         MRT_CLI_VALIDATE,
     "replace the spec's mesh"},
    {"mesh", 'm', "AXIS=N,...", MRT_CLI_COMPARE,
     "replace the spec's mesh (and that of every\nalternative without a mesh of its own)"},
    {"mesh", 'm', "AXIS=N,...", MRT_CLI_CALIBRATE,
     "measure the links of each axis of this mesh (its\nsize must be P; default: one axis 'world' of P)"},
    {"dim", 'D', "DIM=N,...", ALL,
     "give dims of the spec other sizes (e.g.\n--dim batch=128,d_ff=1024), as --mesh the mesh"},
    {"sweep", 'V', "DIM=N,N,...", MRT_CLI_COMPARE,
     "compare at each size of DIM: one row per layout,\n"
     "one column per size, each cell the modeled time\n"
     "per step and wire bytes per rank, and how the\n"
     "time grows (--csv: one line per cell; --svg: a\n"
     "line chart, a line per layout); given again for\n"
     "other dims, they move together (zipped: the same\n"
     "number of sizes each)"},
    {"sweep-mesh", 'I', "MESH MESH ...", MRT_CLI_COMPARE,
     "compare on each mesh (AXIS=N,..., as --mesh; the\n"
     "words after it that are meshes are more of them),\n"
     "of any rank count: figures per rank; zipped with\n"
     "--sweep when both are given"},
    {"layout", 'L', "NAME",
     MRT_CLI_CHECK | MRT_CLI_PLAN | MRT_CLI_RUN | MRT_CLI_SEARCH | MRT_CLI_SHOW,
     "use the alternative NAME of the spec's layouts:\ninstead of its layout: rules (and mesh)"},
    {"memory", 'M', "BYTES", MRT_CLI_CHECK,
     "memory of one rank (suffix K, M, G or T allowed;\ndefault: this machine's physical memory)"},
    {"replicated-share", 'S', "F", MRT_CLI_CHECK,
     "warn about a replicated tensor whose shard\nis over F of a rank's memory (default 0.25)"},
    {"max-memory", 'X', "BYTES", MRT_CLI_SEARCH,
     "keep only layouts whose peak memory per rank is\nat most BYTES (suffix K, M, G or T allowed)"},
    {"device-memory", 'd', "SIZE",
     MRT_CLI_PLAN | MRT_CLI_COMPARE | MRT_CLI_SEARCH,
     "the memory of one rank (a GPU's): 80GB, 80GiB,\n"
     "512M or bytes (default: the machine profile's\n"
     "device_memory:, if any); a plan whose peak is\n"
     "over it does not fit (plan exits 1, compare marks\n"
     "the row, search keeps only layouts that fit)"},
    {"by-kind", 'k', NULL, MRT_CLI_COMPARE,
     "also a table of each layout's peak memory per\n"
     "rank by kind (params, grads, optimizer state,\n"
     "activations, comm buffers, other, workspace)"},
    {"timeline", 'l', NULL, MRT_CLI_PLAN,
     "instead of the plan, picture each rank's memory\n"
     "by kind over the ops (a stacked bar per op)"},
    {"svg", 'G', "FILE", MRT_CLI_PLAN,
     "also draw the memory timeline as SVG in FILE"},
    {"top", 'N', "K", MRT_CLI_SEARCH,
     "how many of the best to list (default 5)"},
    {"verify", 'v', NULL, MRT_CLI_RUN,
     "recompute unsharded on rank 0 and compare element\nby element (NaN and infinities must match)"},
    {"save", 's', "DIR", MRT_CLI_RUN, "write each output as DIR/NAME.npy"},
    {"repeat", 'r', "N", MRT_CLI_RUN, "run N times; times are per run"},
    {"repeat", 'r', "N", MRT_CLI_VALIDATE,
     "time N runs of each partitioning (taking turns,\nafter one to warm up; default 3)"},
    {"json", 'j', NULL, MRT_CLI_PLAN, "one JSON object instead of text"},
    {"json", 'j', NULL, MRT_CLI_RUN, "report as one JSON object"},
    {"json", 'j', NULL, MRT_CLI_VALIDATE, "report as one JSON object"},
    {"gemm-rows", 'e', NULL, MRT_CLI_VALIDATE,
     "price by the profile as it is: every product by\n"
     "its gemm rows, collectives by its rows (by default\n"
     "each product shape the plans run is timed first\n"
     "and priced at its own rate, and the collective\n"
     "rows are timed again, both between the rounds of\n"
     "runs too)"},
    {"report", 'F', "FILE", MRT_CLI_RUN,
     "write the report to FILE instead of the standard\n"
     "output (rank 0, atomically; a refused write is\n"
     "an error): under mpirun, a report that must not\n"
     "be lost (mpirun drops what it cannot forward)"},
    {"csv", 'C', "FILE", MRT_CLI_COMPARE,
     "also write the table as CSV (- for the standard\noutput; a pipe or device is written through)"},
    /* compare and search write JSON to a file */
    {"json", 'J', "FILE", MRT_CLI_COMPARE, "also write it as JSON"},
    {"json", 'J', "FILE", MRT_CLI_SEARCH, "also write the results as JSON"},
    {"svg", 'G', "FILE", MRT_CLI_COMPARE,
     "also draw it: one bar per layout, communication\nand compute time stacked"},
    {"html", 'H', "FILE", MRT_CLI_COMPARE,
     "also write one self-contained HTML page: the\n"
     "table, the charts and each layout's pictures"},
    {"svg", 'G', "FILE", MRT_CLI_SHOW, "also draw the pictures as SVG in FILE"},
    {"ascii", 'a', NULL, MRT_CLI_SHOW,
     "draw with + - | instead of Unicode box drawing"},
    {"steps", 'p', NULL, MRT_CLI_SHOW,
     "every layout the plan gives each tensor, in step\n"
     "order: pending sums as a kernel leaves them, and\n"
     "after each reduction and move"},
    {"from", 'f', "LAYOUT", MRT_CLI_SHOW,
     "with --to and one TENSOR: the move the planner\n"
     "makes from LAYOUT ('{batch: data}' as in the spec,\n"
     "or an alternative's name) to the --to one"},
    {"to", 't', "LAYOUT", MRT_CLI_SHOW, "where --from moves the tensor to"},
    {"schedule", 'g', NULL, MRT_CLI_SHOW,
     "the pipeline's schedule instead: time x stage,\n"
     "each microbatch's forward and backward, the bubble"},
    {"explain", 'E', NULL, MRT_CLI_PLAN,
     "also list the alternatives weighed for each op"},
    {"exhaustive", 'Z', NULL, MRT_CLI_SEARCH,
     "plan every candidate, pruning nothing"},
    {"screen", 'Y', NULL, MRT_CLI_SEARCH,
     "plan every candidate with the fixed rule first and\n"
     "only the best of that with the auto planner (the\n"
     "default when planning them all would be slow)"},
    {"no-screen", 'W', NULL, MRT_CLI_SEARCH,
     "never screen: plan every candidate the bounds keep"},
    {"per-tensor", 'U', NULL, MRT_CLI_SEARCH,
     "also give each parameter (train: params, else\n"
     "every input) a layout of its own: every\n"
     "combination of those, and the rules for each"},
    {"activations", 'A', "NAME,...|all", MRT_CLI_SEARCH,
     "--per-tensor, and a layout of its own for these\n"
     "op results too (as the op's layout:); all: every\n"
     "op result while the combinations stay <= 4096"},
    {"profile", 'R', NULL, MRT_CLI_RUN,
     "also show, per op and per step, the modeled time\n"
     "against the measured one (max over ranks), the\n"
     "planned bytes against those handed to MPI, and\n"
     "the GFLOP/s of each einsum"},
    {"trace", 'T', "FILE", MRT_CLI_RUN,
     "write a Chrome trace (chrome://tracing, Perfetto)\n"
     "of the last run: one track per rank, one event\n"
     "per step (- for the standard output)"},
    {"out", 'O', "FILE", MRT_CLI_CALIBRATE,
     "where to write the profile (default:\n"
     "$MESHRT_PROFILE, else\n"
     "~/.config/meshrt/profile.yaml, which plan and run\n"
     "then use; -: the standard output, and the\n"
     "figures go to stderr)"},
    {"quick", 'Q', NULL, MRT_CLI_CALIBRATE,
     "smaller sizes, a few seconds (for tests)"},
    /* The machine profile is --machine FILE in every command: run's
     * --profile is its per-step report. */
    {"planner", 'P', "NAME", ALL,
     "auto (default: cost-aware), meshtf (exactly\n"
     "Mesh-TensorFlow's lowering, global rules only) or\n"
     "rules (pinned: every tensor in the layout its\n"
     "rules and own layouts give, the collectives those\n"
     "need, whatever the machine; what pin: true asks)"},
    {"machine", 'K', "FILE|NAME", ALL,
     "machine profile for the cost model: a file, or\n"
     "a name of profiles/ (dgx-a100, dgx-h100,\n"
     "cpu-100gbe; default: $MESHRT_PROFILE,\n"
     "~/.config/meshrt/profile.yaml, else built in;\n"
     "meshrt calibrate writes one)"},
    {"ranks-per-node", 'n', "N", ALL,
     "ranks on one node, over the profile's (ranks fill\n"
     "nodes in order; the mesh's last axes innermost)"},

    {"blocking", 'B', NULL, ALL,
     "issue every collective blocking (by default one\n"
     "whose result is read only steps later runs in\n"
     "the background, overlapped with those steps)"},
    {"help", 'h', NULL, ALL | MRT_CLI_CALIBRATE, NULL},
    {NULL, 0, NULL, 0, NULL}};

#define NOPTIONS (sizeof mrt_cli_options / sizeof mrt_cli_options[0] - 1)

static const char *const command_name[] = {"check",   "plan",    "run",
                                           "compare", "search",  "calibrate",
                                           "show",    "validate"};

unsigned mrt_cli_command_bit(const char *cmd)
{
    for (unsigned i = 0; i < sizeof command_name / sizeof *command_name; i++)
        if (strcmp(cmd, command_name[i]) == 0)
            return 1u << i;
    return 0;
}

/* "16G" -> 17179869184: a positive count of bytes, with an optional
 * binary suffix K, M, G or T.  Returns 0 when s is not one. */
static int64_t parse_bytes(const char *s)
{
    char *end;
    if (*s < '0' || *s > '9')
        return 0;
    double v = strtod(s, &end);
    const char *suffixes = "KMGT";
    const char *suf = *end ? strchr(suffixes, *end) : NULL;
    if (*end && (!suf || end[1]))
        return 0;
    for (int i = 0; suf && i <= suf - suffixes; i++)
        v *= 1024;
    if (!isfinite(v) || v < 1 || v >= 9.2e18)
        return 0;
    return (int64_t)v;
}

static mrt_status usage_error(mrt_error *err, const char *cmd, const char *fmt,
                              const char *arg)
{
    char msg[256];
    snprintf(msg, sizeof msg, fmt, arg);
    return mrt_cli_error(err, MRT_E_USAGE, "meshrt",
                         "%s (see meshrt %s --help)", msg, cmd);
}

/* Why cmd refuses an option its row does not list it for: the
 * option is named as the user wrote it (opt: "--save"). */
static mrt_status refuse(const mrt_cli_option *o, const char *opt,
                         const char *cmd, mrt_error *err)
{
    unsigned bit = mrt_cli_command_bit(cmd), only = 0;
    int n = 0;
    for (const mrt_cli_option *r = mrt_cli_options; r->name; r++)
        if (strcmp(r->name, o->name) == 0)
            only |= r->cmds;
    for (unsigned b = only; b; b &= b - 1)
        n++;
    if (bit == MRT_CLI_CALIBRATE)
        return usage_error(err, cmd,
                           "option %s is not valid for "
                           "'calibrate'",
                           opt);
    if (o->key == 'R')
        return usage_error(err, cmd,
                           "--profile is run's per-step "
                           "report%s; name a machine profile with "
                           "--machine FILE",
                           "");
    if (bit == MRT_CLI_COMPARE && strchr("LE", o->key))
        return usage_error(err, cmd,
                           "option %s is not valid for "
                           "'compare' (it shows every layout)",
                           opt);
    if (o->key == 'E')
        return usage_error(err, cmd, "%s is only valid for 'plan'", opt);
    if (n > 2)
        return usage_error(err, cmd, "option %s is not valid here", opt);
    char msg[128], *at = msg;
    at += snprintf(msg, sizeof msg, "option %%s is only valid for ");
    for (unsigned i = 0; i < sizeof command_name / sizeof *command_name; i++)
        if (only & (1u << i))
            at += snprintf(at, sizeof msg - (size_t)(at - msg), "%s'%s'",
                           at[-1] == '\'' ? " and " : "", command_name[i]);
    return usage_error(err, cmd, msg, opt);
}

/* getopt_long's table for cmd: one entry per option name, from the row
 * that lists cmd (else the first row of that name); row[i] is the row
 * of entry i. */
static int getopt_table(unsigned bit, struct option *table,
                        const mrt_cli_option **row)
{
    int n = 0;
    for (const mrt_cli_option *o = mrt_cli_options; o->name; o++) {
        /* one code per option name: two names on one code would make
         * the one set the other (take_plain, take_checked) */
        for (const mrt_cli_option *q = mrt_cli_options; q < o; q++)
            assert(q->key != o->key || strcmp(q->name, o->name) == 0);
        int k = 0;
        while (k < n && strcmp(row[k]->name, o->name) != 0)
            k++;
        if (k < n && ((row[k]->cmds & bit) || !(o->cmds & bit)))
            continue;
        row[k] = o;
        table[k] = (struct option){
            o->name, o->arg ? required_argument : no_argument, 0, o->key};
        n += k == n;
    }
    table[n] = (struct option){0, 0, 0, 0};
    return n;
}

/* An option that names a file or folder must name one: "" would
 * otherwise meet the system as a path that is not there. */
static mrt_status empty_path(int c, const char *opt, mrt_cli_args *a,
                             mrt_error *err)
{
    if (!optarg || optarg[0] || !strchr("sTOCGJKFH", c))
        return MRT_OK;
    if (c == 's')
        return usage_error(err, a->cmd,
                           "--save needs a folder name, not an "
                           "empty string%s",
                           "");
    return usage_error(err, a->cmd,
                       c == 'K' ? "%s needs a file name, not "
                                  "an empty string"
                                : "%s needs a file name (or - for "
                                  "the standard output), not an empty string",
                       opt);
}

/* The number of sizes in "DIM=N,N,..." (checked). */
static int sweep_count(const char *s)
{
    int n = 1;
    for (; *s; s++)
        n += *s == ',';
    return n;
}

/* --sweep DIM=N,N,...: a name, then positive sizes, at most
 * MRT_CLI_SWEEP_MAX of them (the dim itself is checked at load); a dim
 * swept once, at most MRT_CLI_SWEEP_DIMS dims. */
static mrt_status check_sweep(const char *s, mrt_cli_args *a, mrt_error *err)
{
    const char *eq = strchr(s, '=');
    int n = 0;
    if (!eq || eq == s)
        return usage_error(err, a->cmd,
                           "--sweep needs DIM=SIZE,SIZE,... "
                           "(e.g. batch=64,128,256), not '%.100s'",
                           s);
    if (a->nsweep == MRT_CLI_SWEEP_DIMS)
        return usage_error(err, a->cmd, "--sweep: at most %s dims", "8");
    for (int k = 0; k < a->nsweep; k++)
        if (!strncmp(a->sweep[k], s, (size_t)(eq - s) + 1)) {
            char dim[101];
            snprintf(dim, sizeof dim, "%.*s", (int)(eq - s), s);
            return usage_error(err, a->cmd, "--sweep: dim '%s' is swept twice",
                               dim);
        }
    for (const char *p = eq + 1;; p++) {
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (end == p || v < 1 || errno || (*end && *end != ','))
            return usage_error(err, a->cmd,
                               "--sweep: the sizes must be "
                               "positive integers, in '%.100s'",
                               s);
        if (++n > MRT_CLI_SWEEP_MAX)
            return usage_error(err, a->cmd,
                               "--sweep: at most " MRT_CLI_SWEEP_MAX_STR
                               " sizes, in '%.100s'",
                               s);
        if (!*end)
            return MRT_OK;
        p = end;
    }
}

/* Zipped sweeps move together: every --sweep (and --sweep-mesh) has as
 * many values; --sweep-mesh sets the mesh, as --mesh would. */
static mrt_status check_zipped(mrt_cli_args *a, mrt_error *err)
{
    char msg[240];
    int n = a->nsweep ? sweep_count(a->sweep[0]) : a->nsweep_mesh;
    for (int k = 1; k < a->nsweep; k++)
        if (sweep_count(a->sweep[k]) != n) {
            snprintf(msg, sizeof msg,
                     "--sweep: %.60s has %d sizes but %.60s has %d "
                     "(zipped sweeps move together: give each as many)",
                     a->sweep[0], n, a->sweep[k], sweep_count(a->sweep[k]));
            return usage_error(err, a->cmd, "%s", msg);
        }
    if (a->nsweep && a->nsweep_mesh && a->nsweep_mesh != n) {
        snprintf(msg, sizeof msg,
                 "--sweep-mesh: %d meshes but --sweep %.60s has %d sizes "
                 "(zipped: give as many)",
                 a->nsweep_mesh, a->sweep[0], n);
        return usage_error(err, a->cmd, "%s", msg);
    }
    if (a->nsweep_mesh && a->mesh)
        return usage_error(err, a->cmd,
                           "--mesh and --sweep-mesh both set the mesh%s", "");
    return MRT_OK;
}

/* 1 if s reads AXIS=N[,AXIS=N...] (a name, '=', digits; comma-joined). */
static int looks_like_mesh(const char *s)
{
    do {
        if (!(*s == '_' || (*s >= 'a' && *s <= 'z') ||
              (*s >= 'A' && *s <= 'Z')))
            return 0;
        while (*s == '_' || (*s >= 'a' && *s <= 'z') ||
               (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9'))
            s++;
        if (*s++ != '=' || *s < '0' || *s > '9')
            return 0;
        while (*s >= '0' && *s <= '9')
            s++;
    } while (*s == ',' && *++s);
    return *s == '\0';
}

/* --sweep-mesh MESH MESH ...: getopt takes one argument, so the meshes
 * are taken here, before it runs, in order: the option's argument and
 * every word after it that looks like a mesh (looks_like_mesh), which
 * leave argv (*argc shrinks).  A first argument that is not a mesh is
 * --sweep-mesh's usage error. */
static mrt_status sweep_meshes(int *argc, char **argv, mrt_cli_args *a,
                               mrt_error *err)
{
    int w = 1, i = 1;
    for (; i < *argc; i++) {
        argv[w++] = argv[i];
        if (!strcmp(argv[i], "--")) {
            i++;
            break;
        }
        int eq = !strncmp(argv[i], "--sweep-mesh=", 13);
        if (strcmp(argv[i], "--sweep-mesh") && !eq)
            continue;
        const char *first = eq              ? argv[i] + 13
                            : i + 1 < *argc ? argv[i + 1]
                                            : "";
        if (!looks_like_mesh(first))
            return usage_error(err, a->cmd,
                               "--sweep-mesh needs meshes AXIS=N,... (e.g. "
                               "--sweep-mesh data=8,model=1 data=4,model=2), "
                               "not '%.100s'",
                               first);
        if (!eq)
            argv[w++] = argv[++i];
        do {
            if (a->nsweep_mesh == MRT_CLI_SWEEP_MAX)
                return usage_error(err, a->cmd,
                                   "--sweep-mesh: at most %s meshes",
                                   MRT_CLI_SWEEP_MAX_STR);
            a->sweep_mesh[a->nsweep_mesh++] = first;
            first = i + 1 < *argc ? argv[i + 1] : "";
        } while (looks_like_mesh(first) && ++i);
    }
    for (; i < *argc; i++)
        argv[w++] = argv[i];
    *argc = w;
    return MRT_OK;
}

/* --dim DIM=N,...: a second --dim adds to the first (--dim layers=2
 * --dim vocab=61 is --dim layers=2,vocab=61); past dims_buf's room the
 * list is cut at a ',' and the loader reports what it lacks. */
static void add_dims(mrt_cli_args *a, const char *more)
{
    if (!a->dims) {
        a->dims = more;
        return;
    }
    size_t have = strlen(a->dims), add = strlen(more);
    if (have + 1 + add + 1 > sizeof a->dims_buf)
        return;
    if (a->dims != a->dims_buf)
        memmove(a->dims_buf, a->dims, have + 1);
    a->dims_buf[have] = ',';
    memcpy(a->dims_buf + have + 1, more, add + 1);
    a->dims = a->dims_buf;
}

/* The value of option c, into a, if it is one taken as it is (a flag or
 * a string kept for later): 1 if it was, 0 if it needs checking. */
static int take_plain(int c, mrt_cli_args *a)
{
    switch (c) {
    case 'm': a->mesh = optarg; break;
    case 'D': add_dims(a, optarg); break;
    case 'L': a->layout = optarg; break;
    case 'K': a->plan.machine = optarg; break;
    case 'B': a->plan.blocking = 1; break;
    case 'e': a->gemm_rows = 1; break;
    case 'E': a->plan.explain = 1; break;
    case 'R': a->profile = 1; break;
    case 'T': a->trace = optarg; break;
    case 'F': a->report = optarg; break;
    case 'O': a->out = optarg; break;
    case 'Q': a->quick = 1; break;
    case 'C': a->csv = optarg; break;
    case 'G': a->svg = optarg; break;
    case 'H': a->html = optarg; break;
    case 'k': a->by_kind = 1; break;
    case 'l': a->timeline = 1; break;
    case 'a': a->ascii = 1; break;
    case 'p': a->steps = 1; break;
    case 'g': a->schedule = 1; break;
    case 'f': a->from = optarg; break;
    case 't': a->to = optarg; break;
    case 'J': a->json_file = optarg; break;
    case 'j': a->json = 1; break;
    case 'v': a->verify = 1; break;
    case 's': a->save = optarg; break;
    case 'Z': a->exhaustive = 1; break;
    case 'Y':
    case 'W': a->screen = c == 'Y' ? 1 : -1; break;
    case 'U': a->per_tensor = 1; break;
    case 'A':
        a->per_tensor = 1;
        a->activations = optarg;
        break;
    case 'h': a->help = 1; break;
    default: return 0;
    }
    return 1;
}

/* --max-memory and --device-memory: sizes in bytes. */
static mrt_status take_size(int c, mrt_cli_args *a, mrt_error *err)
{
    if (c == 'X' && !(a->max_memory = parse_bytes(optarg)))
        return usage_error(err, a->cmd,
                           "--max-memory needs a "
                           "positive number of bytes (e.g. 512M), "
                           "not '%s'",
                           optarg);
    if (c == 'd' && mrt_parse_bytes(optarg, &a->plan.device_memory))
        return usage_error(err, a->cmd,
                           "--device-memory needs a size in bytes "
                           "(e.g. 80GB, 80GiB or 85899345920), not '%s'",
                           optarg);
    return MRT_OK;
}

/* The value of option c (accepted by a->cmd, not a plain one), checked,
 * into a. */
static mrt_status take_checked(int c, mrt_cli_args *a, mrt_error *err)
{
    char *end;
    mrt_status st;
    switch (c) {
    case 'V':
        if ((st = check_sweep(optarg, a, err)))
            return st;
        a->sweep[a->nsweep++] = optarg;
        break;
    case 'I': /* its meshes were taken out of argv (sweep_meshes) */ break;
    case 'P':
        if (strcmp(optarg, "auto") == 0)
            a->plan.planner = MRT_PLANNER_AUTO;
        else if (strcmp(optarg, "meshtf") == 0)
            a->plan.planner = MRT_PLANNER_MESHTF;
        else if (strcmp(optarg, "rules") == 0)
            a->plan.planner = MRT_PLANNER_RULES;
        else
            return usage_error(err, a->cmd,
                               "unknown planner '%s' "
                               "(planners: auto, meshtf, rules)",
                               optarg);
        break;
    case 'X':
    case 'd': return take_size(c, a, err);
    case 'N': {
        long n = strtol(optarg, &end, 10);
        if (*end || end == optarg || n < 1 || n > 1000)
            return usage_error(err, a->cmd,
                               "--top needs a count from 1 "
                               "to 1000, not '%s'",
                               optarg);
        a->top = (int)n;
        break;
    }
    case 'M':
        if (!(a->memory = parse_bytes(optarg)))
            return usage_error(err, a->cmd,
                               "--memory needs a positive "
                               "number of bytes (e.g. 16G), not '%s'",
                               optarg);
        break;
    case 'S':
        a->replicated_share = strtod(optarg, &end);
        if (*end || end == optarg || !(a->replicated_share > 0) ||
            a->replicated_share > 1)
            return usage_error(err, a->cmd,
                               "--replicated-share "
                               "needs a number above 0 and at most "
                               "1, not '%s'",
                               optarg);
        break;
    case 'n': {
        long n = strtol(optarg, &end, 10);
        if (*end || end == optarg || n < 1 || n > INT32_MAX)
            return usage_error(err, a->cmd,
                               "--ranks-per-node needs a count from 1 "
                               "to 2147483647, not '%s'",
                               optarg);
        a->plan.ranks_per_node = n;
        break;
    }
    case 'r': {
        long n = strtol(optarg, &end, 10);
        if (*end || n < 1 || n > 1000000)
            return usage_error(err, a->cmd,
                               "--repeat needs a count from 1 "
                               "to 1000000, not '%s'",
                               optarg);
        a->repeat = (int)n;
        break;
    }
    }
    return MRT_OK;
}

/* The value of option c (accepted by a->cmd), into a. */
static mrt_status take_option(int c, mrt_cli_args *a, mrt_error *err)
{
    if (take_plain(c, a))
        return MRT_OK;
    return take_checked(c, a, err);
}

/* 1 if writing path writes the standard output: "-", a name of it, or
 * the very file or pipe it is (`> out.json --json out.json`).  A device
 * (a terminal, /dev/null) only by name: two outputs into /dev/null
 * harm nothing. */
static int writes_stdout(const char *path)
{
    static const char *const names[] = {"-", "/dev/stdout", "/dev/fd/1",
                                        "/proc/self/fd/1"};
    struct stat p, o;
    if (!path)
        return 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(path, names[i]) == 0)
            return 1;
    return stat(path, &p) == 0 && fstat(STDOUT_FILENO, &o) == 0 &&
           p.st_dev == o.st_dev && p.st_ino == o.st_ino &&
           (S_ISREG(p.st_mode) || S_ISFIFO(p.st_mode));
}

/* The standard output holds one document: a JSON report (plan and run
 * --json) and the files named "-" (--json FILE, --csv, --svg, --trace,
 * --out, and run's --report with --json) are each one, and two of them would be mixed into something no
 * reader can parse (run --json --trace - put the trace inside the JSON
 * report).  A text report with one file after it stays allowed. */
static mrt_status one_stdout_writer(const mrt_cli_args *a, mrt_error *err)
{
    const struct {
        const char *opt, *path;
        int on;
    } w[] = {
        {"--json", "", a->json && !a->report}, /* the report */
        {"--report", a->report, a->json && writes_stdout(a->report)},
        {"--json", a->json_file, writes_stdout(a->json_file)},
        {"--csv", a->csv, writes_stdout(a->csv)},
        {"--svg", a->svg, writes_stdout(a->svg)},
        {"--html", a->html, writes_stdout(a->html)},
        {"--trace", a->trace, writes_stdout(a->trace)},
        {"--out", a->out, writes_stdout(a->out)},
    };
    int first = -1;
    for (int i = 0; i < (int)(sizeof w / sizeof w[0]); i++) {
        if (!w[i].on)
            continue;
        if (first >= 0)
            return mrt_cli_error(err, MRT_E_USAGE, "meshrt",
                                 "%s%s%.100s and "
                                 "%s %.100s would both write the standard "
                                 "output: name a file for one of them (see "
                                 "meshrt %s --help)",
                                 w[first].opt, *w[first].path ? " " : "",
                                 w[first].path, w[i].opt, w[i].path, a->cmd);
        first = i;
    }
    return MRT_OK;
}

mrt_status mrt_cli_parse(int argc, char **argv, mrt_cli_args *a, mrt_error *err)
{
    struct option table[NOPTIONS + 1];
    const mrt_cli_option *row[NOPTIONS];
    unsigned bit = mrt_cli_command_bit(a->cmd);
    getopt_table(bit, table, row);
    a->replicated_share = 0.25;
    a->memory = 0;
    if ((bit & MRT_CLI_COMPARE) && sweep_meshes(&argc, argv, a, err))
        return MRT_E_USAGE;
    optind = 1;
    opterr = 0;
    int c, li = -1;
    while ((c = getopt_long(argc, argv, "h", table, &li)) != -1) {
        if (c == '?')
            return usage_error(err, a->cmd,
                               "unknown or incomplete option "
                               "'%s'",
                               argv[optind - 1]);
        if (li < 0) /* -h */
            for (li = 0; table[li].val != c; li++)
                ;
        const mrt_cli_option *o = row[li];
        char name[64];
        snprintf(name, sizeof name, "--%s", o->name);
        li = -1;
        mrt_status st = empty_path(c, name, a, err);
        if (st == MRT_OK && !(o->cmds & bit))
            st = refuse(o, name, a->cmd, err);
        if (st == MRT_OK)
            st = take_option(c, a, err);
        if (st != MRT_OK)
            return st;
        if (a->help)
            return MRT_OK;
    }
    if (strcmp(a->cmd, "calibrate") == 0)
        return optind < argc ? usage_error(err, a->cmd,
                                           "'calibrate' takes "
                                           "no SPEC, but got '%s'",
                                           argv[optind])
                             : MRT_OK;
    if (a->per_tensor && a->plan.planner == MRT_PLANNER_MESHTF)
        return usage_error(err, a->cmd,
                           "--per-tensor needs the auto "
                           "planner: Mesh-TensorFlow's has no per-tensor "
                           "layouts%s",
                           "");
    if (a->per_tensor && a->layout)
        return usage_error(err, a->cmd,
                           "--per-tensor searches the spec's "
                           "own tensors: it takes no --layout%s",
                           "");
    if ((a->nsweep || a->nsweep_mesh) && a->html)
        return usage_error(err, a->cmd,
                           "--html draws one comparison, not a "
                           "--sweep (write --csv, --json or --svg)%s",
                           "");
    if (check_zipped(a, err))
        return MRT_E_USAGE;
    if (one_stdout_writer(a, err))
        return MRT_E_USAGE;
    if (optind >= argc)
        return usage_error(err, a->cmd, "missing SPEC%s", "");
    a->spec = argv[optind++];
    if (strcmp(a->cmd, "show") == 0) { /* show SPEC [TENSOR...] */
        a->names = argv + optind;
        a->nnames = argc - optind;
        return MRT_OK;
    }
    if (optind < argc && a->profile)
        return usage_error(err, a->cmd,
                           "unexpected argument '%s' (run's "
                           "--profile takes no FILE: name a machine profile "
                           "with --machine FILE)",
                           argv[optind]);
    if (optind < argc)
        return usage_error(err, a->cmd, "unexpected argument '%s'",
                           argv[optind]);
    return MRT_OK;
}

mrt_status mrt_cli_load_spec(const mrt_cli_args *a, const char *dims_override,
                             mrt_spec **spec, mrt_error *err)
{
    const mrt_spec_load_options ov = {
        .mesh = a->mesh, .dims = dims_override ? dims_override : a->dims};
    return mrt_spec_load_ex(a->spec, &ov, spec, err);
}

mrt_status mrt_cli_load(const mrt_cli_args *a, mrt_spec **spec, mrt_plan **plan,
                        mrt_error *err)
{
    *plan = NULL;
    mrt_status st = mrt_cli_load_spec(a, NULL, spec, err);
    if (st == MRT_OK && a->layout) {
        mrt_spec *chosen = NULL;
        st = mrt_spec_select_alternative(*spec, a->layout, &chosen, err);
        mrt_spec_destroy(*spec);
        *spec = chosen;
    }
    if (st == MRT_OK &&
        (st = mrt_plan_create(*spec, &a->plan, plan, err)) != MRT_OK) {
        mrt_spec_destroy(*spec);
        *spec = NULL;
    }
    return st;
}

mrt_status mrt_cli_error(mrt_error *err, mrt_status code, const char *file,
                         const char *fmt, ...)
{
    if (!err || err->code != MRT_OK)
        return code;
    *err = (mrt_error){.code = code};
    snprintf(err->file, sizeof err->file, "%s", file ? file : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return code;
}

int mrt_cli_exit_code(mrt_status st)
{
    if (st == MRT_OK)
        return 0;
    /* out of memory is a failure of the run (or of this machine), not
     * bad input */
    return st == MRT_E_RUNTIME || st == MRT_E_VERIFY || st == MRT_E_NOMEM ? 1
                                                                          : 2;
}

const char *mrt_cli_error_line(const mrt_error *e, char *buf, size_t size)
{
    mrt_error one = *e;
    one.context[0] = '\0';
    return mrt_error_format(&one, buf, size);
}

/* Bad input is one line on the command line (docs/spec.md): an error's
 * context note is for the library's callers. */
void mrt_cli_print_error(const mrt_error *err)
{
    char buf[MRT_CLI_ERROR_MAX];
    fprintf(stderr, "%s\n", mrt_cli_error_line(err, buf, sizeof buf));
}
