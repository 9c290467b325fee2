/*
 * args.c — command-line parsing, usage texts and exit codes.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "spec.h"

/* The machine profile is --machine FILE in every command: run's
 * --profile is its per-step report. */
#define PLANNER_OPTIONS                                                     \
    "  --planner NAME     auto (default: cost-aware) or meshtf (exactly\n"      \
    "                     Mesh-TensorFlow's lowering, global rules only)\n"     \
    "  --machine FILE     machine profile for the cost model (default:\n"       \
    "                     $MESHRT_PROFILE, ~/.config/meshrt/profile.yaml,\n"   \
    "                     else built in; meshrt calibrate writes one)\n"     \
    "  --blocking         issue every collective blocking (by default one\n"  \
    "                     whose result is read only steps later runs in\n"    \
    "                     the background, overlapped with those steps)\n"
#define RUN_PLANNER_OPTIONS PLANNER_OPTIONS
#define DIM_OPTION                                                          \
    "  --dim DIM=N,...    give dims of the spec other sizes (e.g.\n"          \
    "                     --dim batch=128,d_ff=1024), as --mesh the mesh\n"
#define LAYOUT_OPTION                                                       \
    "  --layout NAME      use the alternative NAME of the spec's layouts:\n"  \
    "                     instead of its layout: rules (and mesh)\n"

static const char *const usage_overview =
    "usage: meshrt COMMAND SPEC [OPTIONS]\n"
    "\n"
    "Plans and runs einsum programs on a logical processor mesh.\n"
    "\n"
    "commands:\n"
    "  check SPEC            validate a spec and show each tensor's shards\n"
    "  plan SPEC             show the plan: kernels, collectives, bytes\n"
    "  run SPEC              execute under MPI: mpirun -n P meshrt run SPEC\n"
    "  compare SPEC          the spec's layout next to each of its layouts:\n"
    "  search SPEC           the best global layout rules for the program\n"
    "  calibrate             measure this machine for the cost model:\n"
    "                        mpirun -n P meshrt calibrate (no SPEC)\n"
    "\n"
    "meshrt COMMAND --help shows the options of a command.\n"
    "exit status: 0 ok, 1 run-time or verification failure or out of\n"
    "memory, 2 bad input.\n";

static const char *const usage_check =
    "usage: meshrt check SPEC [--mesh AXIS=N,...] [--dim DIM=N,...]\n"
    "                         [--layout NAME]\n"
    "                         [--memory BYTES] [--replicated-share F]\n"
    "\n"
    "Validates SPEC and prints a summary: the mesh and, for every tensor,\n"
    "its layout and the shape of its shard on each rank.  Warns (on stderr,\n"
    "exit status still 0) about ops that compute the same result on every\n"
    "rank of a mesh axis, about large tensors kept replicated, and about a\n"
    "plan whose peak memory per rank is over a rank's memory.\n"
    "  --mesh AXIS=N,...  replace the spec's mesh (e.g. --mesh data=4,model=1)\n"
    DIM_OPTION
    LAYOUT_OPTION
    "  --memory BYTES     memory of one rank (suffix K, M, G or T allowed;\n"
    "                     default: this machine's physical memory)\n"
    "  --replicated-share F  warn about a replicated tensor whose shard\n"
    "                     is over F of a rank's memory (default 0.25)\n"
    PLANNER_OPTIONS;

static const char *const usage_plan =
    "usage: meshrt plan SPEC [--mesh AXIS=N,...] [--dim DIM=N,...]\n"
    "                        [--layout NAME] [--json]\n"
    "                        [--explain] [--planner auto|meshtf]\n"
    "                        [--machine FILE]\n"
    "\n"
    "Prints the plan for the spec's mesh (no MPI needed, any mesh size):\n"
    "for every op its local kernel (GEMM shape, flops per rank) and every\n"
    "collective with its kind, mesh axes, group size, bytes per rank and\n"
    "modeled cost; totals with the peak memory per rank (a warning on\n"
    "stderr if that is over this machine's memory).  A plan over a\n"
    "budget of the spec's expect: is an error (exit status 1).\n"
    "  --mesh AXIS=N,...  replace the spec's mesh\n"
    DIM_OPTION
    LAYOUT_OPTION
    "  --json             one JSON object instead of text\n"
    "  --explain          also list the alternatives weighed for each op\n"
    PLANNER_OPTIONS;

static const char *const usage_run =
    "usage: mpirun -n P meshrt run SPEC [--mesh AXIS=N,...] [--dim DIM=N,...]\n"
    "                                  [--layout NAME]\n"
    "                                  [--verify] [--save DIR] [--repeat N]\n"
    "                                  [--json] [--profile] [--trace FILE]\n"
    "\n"
    "Runs the plan on P MPI ranks (P must equal the mesh size) and reports\n"
    "per-op times and the bytes handed to MPI next to the plan's figures.\n"
    "A plan over a budget of the spec's expect: does not run (exit status 1).\n"
    "  --mesh AXIS=N,...  replace the spec's mesh\n"
    DIM_OPTION
    LAYOUT_OPTION
    "  --verify           recompute unsharded on rank 0 and compare element\n"
    "                     by element (NaN and infinities must match)\n"
    "  --save DIR         write each output as DIR/NAME.npy\n"
    "  --repeat N         run N times; times are per run\n"
    "  --json             report as one JSON object\n"
    "  --profile          also show, per op and per step, the modeled time\n"
    "                     against the measured one (max over ranks), the\n"
    "                     planned bytes against those handed to MPI, and\n"
    "                     the GFLOP/s of each einsum\n"
    "  --trace FILE       write a Chrome trace (chrome://tracing, Perfetto)\n"
    "                     of the last run: one track per rank, one event\n"
    "                     per step (- for the standard output)\n"
    RUN_PLANNER_OPTIONS;

static const char *const usage_compare =
    "usage: meshrt compare SPEC [--mesh AXIS=N,...] [--dim DIM=N,...]\n"
    "                           [--sweep DIM=N,N,...] [--planner auto|meshtf]\n"
    "                           [--machine FILE] [--csv FILE] [--json FILE]\n"
    "                           [--svg FILE]\n"
    "\n"
    "Plans the spec under its own layout: rules (row 'spec') and under each\n"
    "alternative of its layouts: block, and prints one row each: the bytes\n"
    "per rank handed to MPI over each set of mesh axes and in all, the\n"
    "modeled wire bytes and messages, the modeled communication, compute\n"
    "and total time, and the peak memory per rank; '*' marks the fastest.\n"
    "An alternative that does not fit the program, or the --mesh or --dim\n"
    "given, gets its error instead.\n"
    "  --mesh AXIS=N,...  replace the spec's mesh (and that of every\n"
    "                     alternative without a mesh of its own)\n"
    DIM_OPTION
    "  --sweep DIM=N,N,...  compare at each size of DIM: one row per layout,\n"
    "                     one column per size, each cell the modeled time\n"
    "                     per step and wire bytes per rank, and how the\n"
    "                     time grows (--csv: one line per cell; no --svg)\n"
    "  --csv FILE         also write the table as CSV (- for the standard\n"
    "                     output; a pipe or device is written through)\n"
    "  --json FILE        also write it as JSON\n"
    "  --svg FILE         also draw it: one bar per layout, communication\n"
    "                     and compute time stacked\n"
    PLANNER_OPTIONS
    "exit status 0 if at least one layout plans (at one size at least),\n"
    "2 if none does.\n";

static const char *const usage_search =
    "usage: meshrt search SPEC [--mesh AXIS=N,...] [--dim DIM=N,...]\n"
    "                          [--layout NAME]\n"
    "                          [--max-memory BYTES] [--top K]\n"
    "                          [--planner auto|meshtf]\n"
    "                          [--machine FILE] [--json FILE]\n"
    "                          [--exhaustive | --screen | --no-screen]\n"
    "                          [--per-tensor] [--activations NAME,...|all]\n"
    "\n"
    "Tries every set of global layout rules for the program (each dim on an\n"
    "ordered list of mesh axes of size > 1, each axis on one dim at most,\n"
    "every split even) and prints the K fastest by modeled time, the\n"
    "time-versus-memory Pareto front, and the winner as a layout: block to\n"
    "paste into the spec.  Candidates that provably cannot enter either\n"
    "list are pruned by a lower bound on their time and memory, unplanned.\n"
    "  --mesh AXIS=N,...  replace the spec's mesh\n"
    DIM_OPTION
    LAYOUT_OPTION
    "  --max-memory BYTES keep only layouts whose peak memory per rank is\n"
    "                     at most BYTES (suffix K, M, G or T allowed)\n"
    "  --top K            how many of the best to list (default 5)\n"
    "  --json FILE        also write the results as JSON\n"
    "  --exhaustive       plan every candidate, pruning nothing\n"
    "  --screen           plan every candidate with the fixed rule first and\n"
    "                     only the best of that with the auto planner (the\n"
    "                     default when planning them all would be slow)\n"
    "  --no-screen        never screen: plan every candidate the bounds keep\n"
    "  --per-tensor       also give each parameter (train: params, else\n"
    "                     every input) a layout of its own: every\n"
    "                     combination of those, and the rules for each\n"
    "  --activations NAME,...|all\n"
    "                     --per-tensor, and a layout of its own for these\n"
    "                     op results too (as the op's layout:); all: every\n"
    "                     op result while the combinations stay <= 4096\n"
    PLANNER_OPTIONS
    "exit status 0, 1 if no layout fits --max-memory, 2 for bad input.\n";

static const char *const usage_calibrate =
    "usage: mpirun -n P meshrt calibrate [--mesh AXIS=N,...] [--out FILE]\n"
    "                                    [--quick]\n"
    "\n"
    "Measures this machine for the cost model and writes a machine profile\n"
    "(docs/calibration.md): per mesh axis the latency and bandwidth between\n"
    "neighbours, the local GEMM (BLIS), reduction and copy rates, then each\n"
    "collective at a few sizes next to the model's prediction.\n"
    "  --mesh AXIS=N,...  measure the links of each axis of this mesh (its\n"
    "                     size must be P; default: one axis 'world' of P)\n"
    "  --out FILE         where to write the profile (default:\n"
    "                     $MESHRT_PROFILE, else\n"
    "                     ~/.config/meshrt/profile.yaml, which plan and run\n"
    "                     then use; -: the standard output, and the\n"
    "                     figures go to stderr)\n"
    "  --quick            smaller sizes, a few seconds (for tests)\n";

void mrt_cli_usage(const char *cmd, FILE *f)
{
    const char *text = usage_overview;
    if (cmd && strcmp(cmd, "check") == 0)
        text = usage_check;
    else if (cmd && strcmp(cmd, "plan") == 0)
        text = usage_plan;
    else if (cmd && strcmp(cmd, "run") == 0)
        text = usage_run;
    else if (cmd && strcmp(cmd, "calibrate") == 0)
        text = usage_calibrate;
    else if (cmd && strcmp(cmd, "compare") == 0)
        text = usage_compare;
    else if (cmd && strcmp(cmd, "search") == 0)
        text = usage_search;
    fputs(text, f);
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

static mrt_status usage_error(mrt_error *err, const char *cmd,
                              const char *fmt, const char *arg)
{
    char msg[256];
    snprintf(msg, sizeof msg, fmt, arg);
    return mrt_error_set(err, MRT_E_USAGE, "meshrt", (mrt_mark){0},
                         "%s (see meshrt %s --help)", msg, cmd);
}

/* The options of run's report and of calibrate, and what calibrate
 * refuses; other options are left to the caller (MRT_OK). */
static mrt_status own_option(int c, const char *opt, mrt_cli_args *a,
                             mrt_error *err)
{
    int run = strcmp(a->cmd, "run") == 0;
    int calibrate = strcmp(a->cmd, "calibrate") == 0;
    if (calibrate && !strchr("mOQh?", c))
        return usage_error(err, a->cmd, "option %s is not valid for "
                           "'calibrate'", opt);
    switch (c) {
    case 'R': case 'T':
        if (!run && c == 'R')
            return usage_error(err, a->cmd, "--profile is run's per-step "
                               "report%s; name a machine profile with "
                               "--machine FILE", "");
        if (!run)
            return usage_error(err, a->cmd, "option %s is only valid for "
                               "'run'", opt);
        if (c == 'R')
            a->profile = 1;
        else
            a->trace = optarg;
        break;
    case 'O': case 'Q':
        if (!calibrate)
            return usage_error(err, a->cmd, "option %s is only valid for "
                               "'calibrate'", opt);
        if (c == 'O')
            a->out = optarg;
        else
            a->quick = 1;
        break;
    case 'K': a->plan.profile = optarg; break;
    }
    return MRT_OK;
}

/* An option that names a file or folder must name one: "" would
 * otherwise meet the system as a path that is not there. */
static mrt_status empty_path(int c, const char *opt, mrt_cli_args *a,
                             mrt_error *err)
{
    if (!optarg || optarg[0] || !strchr("sTOCGJK", c))
        return MRT_OK;
    if (c == 's')
        return usage_error(err, a->cmd, "--save needs a folder name, not an "
                           "empty string%s", "");
    return usage_error(err, a->cmd, c == 'K' ? "%s needs a file name, not "
                       "an empty string" : "%s needs a file name (or - for "
                       "the standard output), not an empty string", opt);
}

static int writes_reports(const char *cmd)
{
    return strcmp(cmd, "compare") == 0 || strcmp(cmd, "search") == 0;
}

/* The options of compare and search; others are left to the caller. */
static mrt_status report_option(int c, const char *opt, mrt_cli_args *a,
                                mrt_error *err)
{
    int compare = strcmp(a->cmd, "compare") == 0;
    int search = strcmp(a->cmd, "search") == 0;
    char *end;
    switch (c) {
    case 'C': case 'G':
        if (!compare)
            return usage_error(err, a->cmd, "option %s is only valid for "
                               "'compare'", opt);
        if (c == 'C')
            a->csv = optarg;
        else
            a->svg = optarg;
        break;
    case 'J': a->json_file = optarg; break;
    case 'X': case 'N': case 'Z': case 'Y': case 'W':
        if (!search)
            return usage_error(err, a->cmd, "option %s is only valid for "
                               "'search'", opt);
        if (c == 'Z') {
            a->exhaustive = 1;
        } else if (c == 'Y' || c == 'W') {
            a->screen = c == 'Y' ? 1 : -1;
        } else if (c == 'X') {
            if (!(a->max_memory = parse_bytes(optarg)))
                return usage_error(err, a->cmd, "--max-memory needs a "
                                   "positive number of bytes (e.g. 512M), "
                                   "not '%s'", optarg);
        } else {
            long n = strtol(optarg, &end, 10);
            if (*end || end == optarg || n < 1 || n > 1000)
                return usage_error(err, a->cmd, "--top needs a count from 1 "
                                   "to 1000, not '%s'", optarg);
            a->top = (int)n;
        }
        break;
    case 'L': case 'E':
        if (compare)
            return usage_error(err, a->cmd, "option %s is not valid for "
                               "'compare' (it shows every layout)", opt);
        break;
    }
    return MRT_OK;
}

/* --sweep DIM=N,N,...: a name, then positive sizes, at most
 * MRT_CLI_SWEEP_MAX of them (the dim itself is checked at load). */
static mrt_status check_sweep(const char *s, mrt_cli_args *a, mrt_error *err)
{
    const char *eq = strchr(s, '=');
    int n = 0;
    if (!eq || eq == s)
        return usage_error(err, a->cmd, "--sweep needs DIM=SIZE,SIZE,... "
                           "(e.g. batch=64,128,256), not '%.100s'", s);
    for (const char *p = eq + 1;; p++) {
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (end == p || v < 1 || errno || (*end && *end != ','))
            return usage_error(err, a->cmd, "--sweep: the sizes must be "
                               "positive integers, in '%.100s'", s);
        if (++n > MRT_CLI_SWEEP_MAX)
            return usage_error(err, a->cmd, "--sweep: at most "
                               MRT_CLI_SWEEP_MAX_STR " sizes, in '%.100s'", s);
        if (!*end)
            return MRT_OK;
        p = end;
    }
}

mrt_status mrt_cli_parse(int argc, char **argv, mrt_cli_args *a,
                         mrt_error *err)
{
    static const struct option opts[] = {
        {"mesh", required_argument, 0, 'm'}, {"json", no_argument, 0, 'j'},
        {"verify", no_argument, 0, 'v'},     {"save", required_argument, 0, 's'},
        {"repeat", required_argument, 0, 'r'}, {"help", no_argument, 0, 'h'},
        {"planner", required_argument, 0, 'P'},
        {"blocking", no_argument, 0, 'B'},
        {"profile", no_argument, 0, 'R'},
        {"explain", no_argument, 0, 'E'},
        {"layout", required_argument, 0, 'L'},
        {"memory", required_argument, 0, 'M'},
        {"replicated-share", required_argument, 0, 'S'},
        {"machine", required_argument, 0, 'K'},
        {"trace", required_argument, 0, 'T'},
        {"out", required_argument, 0, 'O'},
        {"quick", no_argument, 0, 'Q'},
        {"csv", required_argument, 0, 'C'},
        {"svg", required_argument, 0, 'G'},
        {"max-memory", required_argument, 0, 'X'},
        {"top", required_argument, 0, 'N'},
        {"exhaustive", no_argument, 0, 'Z'},
        {"screen", no_argument, 0, 'Y'},
        {"no-screen", no_argument, 0, 'W'},
        {"dim", required_argument, 0, 'D'},
        {"per-tensor", no_argument, 0, 'U'},
        {"activations", required_argument, 0, 'A'},
        {"sweep", required_argument, 0, 'V'},
        {0, 0, 0, 0}};
    struct option table[sizeof opts / sizeof opts[0]];
    memcpy(table, opts, sizeof opts);
    /* compare and search write JSON to a file: --json FILE. */
    for (size_t i = 0; table[i].name && writes_reports(a->cmd); i++)
        if (strcmp(table[i].name, "json") == 0)
            table[i] = (struct option){"json", required_argument, 0, 'J'};
    int run = strcmp(a->cmd, "run") == 0, plan = strcmp(a->cmd, "plan") == 0;
    int check = strcmp(a->cmd, "check") == 0;
    a->replicated_share = 0.25;
    a->memory = 0;
    optind = 1;
    opterr = 0;
    int c, li = -1;
    while ((c = getopt_long(argc, argv, "h", table, &li)) != -1) {
        char *end, name[64];
        snprintf(name, sizeof name, "--%s", li >= 0 ? table[li].name : "help");
        li = -1;
        mrt_status st = empty_path(c, name, a, err);
        if (st == MRT_OK)
            st = own_option(c, name, a, err);
        if (st == MRT_OK)
            st = report_option(c, name, a, err);
        if (st != MRT_OK)
            return st;
        switch (c) {
        case 'R': case 'T': case 'O': case 'Q': case 'K': break;
        case 'C': case 'G': case 'X': case 'N': case 'Z': case 'J': break;
        case 'Y': case 'W': break;
        case 'm': a->mesh = optarg; break;
        case 'D': a->dims = optarg; break;
        case 'U':
            if (strcmp(a->cmd, "search"))
                return usage_error(err, a->cmd, "option --per-tensor is only "
                                   "valid for 'search'%s", "");
            a->per_tensor = 1;
            break;
        case 'A':
            if (strcmp(a->cmd, "search"))
                return usage_error(err, a->cmd, "option --activations is "
                                   "only valid for 'search'%s", "");
            a->per_tensor = 1;
            a->activations = optarg;
            break;
        case 'V':
            if (strcmp(a->cmd, "compare"))
                return usage_error(err, a->cmd, "option --sweep is only "
                                   "valid for 'compare'%s", "");
            if ((st = check_sweep(optarg, a, err)))
                return st;
            a->sweep = optarg;
            break;
        case 'B': a->plan.blocking = 1; break;
        case 'P':
            if (strcmp(optarg, "auto") == 0)
                a->plan.planner = MRT_PLANNER_AUTO;
            else if (strcmp(optarg, "meshtf") == 0)
                a->plan.planner = MRT_PLANNER_MESHTF;
            else
                return usage_error(err, a->cmd, "unknown planner '%s' "
                                   "(planners: auto, meshtf)", optarg);
            break;
        case 'E':
            if (!plan)
                return usage_error(err, a->cmd, "%s is only valid for 'plan'",
                                   "--explain");
            a->plan.explain = 1;
            break;
        case 'L': a->layout = optarg; break;
        case 'M': case 'S':
            if (!check)
                return usage_error(err, a->cmd, "option %s is only valid for "
                                   "'check'", c == 'M' ? "--memory"
                                                       : "--replicated-share");
            if (c == 'M' && !(a->memory = parse_bytes(optarg)))
                return usage_error(err, a->cmd, "--memory needs a positive "
                                   "number of bytes (e.g. 16G), not '%s'",
                                   optarg);
            if (c == 'S') {
                a->replicated_share = strtod(optarg, &end);
                if (*end || end == optarg || !(a->replicated_share > 0) ||
                    a->replicated_share > 1)
                    return usage_error(err, a->cmd, "--replicated-share "
                                       "needs a number above 0 and at most "
                                       "1, not '%s'", optarg);
            }
            break;
        case 'h': a->help = 1; return MRT_OK;
        case 'j':
            if (!run && !plan)
                return usage_error(err, a->cmd, "option --json is not valid here", "");
            a->json = 1;
            break;
        case 'v': case 's': case 'r':
            if (!run)
                return usage_error(err, a->cmd, "option %s is only valid for 'run'",
                                   argv[optind - 1]);
            if (c == 'v')
                a->verify = 1;
            else if (c == 's')
                a->save = optarg;
            else {
                long n = strtol(optarg, &end, 10);
                if (*end || n < 1 || n > 1000000)
                    return usage_error(err, a->cmd, "--repeat needs a count from 1 to "
                                            "1000000, not '%s'", optarg);
                a->repeat = (int)n;
            }
            break;
        default:
            return usage_error(err, a->cmd, "unknown or incomplete option '%s'",
                               argv[optind - 1]);
        }
    }
    if (strcmp(a->cmd, "calibrate") == 0)
        return optind < argc ? usage_error(err, a->cmd, "'calibrate' takes "
                                           "no SPEC, but got '%s'",
                                           argv[optind])
                             : MRT_OK;
    if (a->per_tensor && a->plan.planner == MRT_PLANNER_MESHTF)
        return usage_error(err, a->cmd, "--per-tensor needs the auto "
                           "planner: Mesh-TensorFlow's has no per-tensor "
                           "layouts%s", "");
    if (a->per_tensor && a->layout)
        return usage_error(err, a->cmd, "--per-tensor searches the spec's "
                           "own tensors: it takes no --layout%s", "");
    if (a->sweep && a->svg)
        return usage_error(err, a->cmd, "--svg draws one comparison, not a "
                           "--sweep (write --csv or --json)%s", "");
    if (optind >= argc)
        return usage_error(err, a->cmd, "missing SPEC%s", "");
    a->spec = argv[optind++];
    if (optind < argc && a->profile)
        return usage_error(err, a->cmd, "unexpected argument '%s' (run's "
                           "--profile takes no FILE: name a machine profile "
                           "with --machine FILE)", argv[optind]);
    if (optind < argc)
        return usage_error(err, a->cmd, "unexpected argument '%s'", argv[optind]);
    return MRT_OK;
}

mrt_status mrt_cli_load_spec(const mrt_cli_args *a, const char *dims_override,
                             mrt_spec **spec, mrt_error *err)
{
    const mrt_spec_overrides ov = {a->mesh,
                                   dims_override ? dims_override : a->dims};
    return mrt_spec_load_opts(a->spec, &ov, spec, err);
}

mrt_status mrt_cli_load(const mrt_cli_args *a, mrt_spec **spec,
                        mrt_plan **plan, mrt_error *err)
{
    *plan = NULL;
    mrt_status st = mrt_cli_load_spec(a, NULL, spec, err);
    if (st == MRT_OK && a->layout) {
        mrt_spec *chosen = NULL;
        st = mrt_spec_select_layout(*spec, a->layout, &chosen, err);
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

int mrt_cli_exit_code(mrt_status st)
{
    if (st == MRT_OK)
        return 0;
    /* out of memory is a failure of the run (or of this machine), not
     * bad input */
    return st == MRT_E_RUNTIME || st == MRT_E_VERIFY || st == MRT_E_NOMEM
               ? 1
               : 2;
}

void mrt_cli_print_error(const mrt_error *err)
{
    char buf[1024];
    fprintf(stderr, "%s\n", mrt_error_format(err, buf, sizeof buf));
}
