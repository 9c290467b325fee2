/*
 * args.c — command-line parsing, usage texts and exit codes.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "spec.h"

#define PLANNER_OPTIONS                                                     \
    "  --planner NAME     auto (default: cost-aware) or meshtf (exactly\n"      \
    "                     Mesh-TensorFlow's lowering, global rules only)\n"     \
    "  --profile FILE     machine profile for the cost model (default:\n"       \
    "                     $MESHRT_PROFILE, ~/.config/meshrt/profile.yaml,\n"   \
    "                     else built in)\n"

static const char *const usage_overview =
    "usage: meshrt COMMAND SPEC [OPTIONS]\n"
    "\n"
    "Plans and runs einsum programs on a logical processor mesh.\n"
    "\n"
    "commands:\n"
    "  check SPEC            validate a spec and show each tensor's shards\n"
    "  plan SPEC             show the plan: kernels, collectives, bytes\n"
    "  run SPEC              execute under MPI: mpirun -n P meshrt run SPEC\n"
    "\n"
    "meshrt COMMAND --help shows the options of a command.\n"
    "exit status: 0 ok, 1 run-time or verification failure, 2 bad input.\n";

static const char *const usage_check =
    "usage: meshrt check SPEC [--mesh AXIS=N,...]\n"
    "\n"
    "Validates SPEC and prints a summary: the mesh and, for every tensor,\n"
    "its layout and the shape of its shard on each rank.\n"
    "  --mesh AXIS=N,...  replace the spec's mesh (e.g. --mesh data=4,model=1)\n"
    PLANNER_OPTIONS;

static const char *const usage_plan =
    "usage: meshrt plan SPEC [--mesh AXIS=N,...] [--json] [--explain]\n"
    "                        [--planner auto|meshtf] [--profile FILE]\n"
    "\n"
    "Prints the plan for the spec's mesh (no MPI needed, any mesh size):\n"
    "for every op its local kernel (GEMM shape, flops per rank) and every\n"
    "collective with its kind, mesh axes, group size, bytes per rank and\n"
    "modeled cost; totals with the peak memory per rank.\n"
    "  --mesh AXIS=N,...  replace the spec's mesh\n"
    "  --json             one JSON object instead of text\n"
    "  --explain          also list the alternatives weighed for each op\n"
    PLANNER_OPTIONS;

static const char *const usage_run =
    "usage: mpirun -n P meshrt run SPEC [--mesh AXIS=N,...] [--verify]\n"
    "                                  [--save DIR] [--repeat N] [--json]\n"
    "\n"
    "Runs the plan on P MPI ranks (P must equal the mesh size) and reports\n"
    "per-op times and the bytes handed to MPI next to the plan's figures.\n"
    "  --mesh AXIS=N,...  replace the spec's mesh\n"
    "  --verify           recompute unsharded on rank 0 and compare\n"
    "  --save DIR         write each output as DIR/NAME.npy\n"
    "  --repeat N         run N times; times are per run\n"
    "  --json             report as one JSON object\n"
    PLANNER_OPTIONS;

void mrt_cli_usage(const char *cmd, FILE *f)
{
    const char *text = usage_overview;
    if (cmd && strcmp(cmd, "check") == 0)
        text = usage_check;
    else if (cmd && strcmp(cmd, "plan") == 0)
        text = usage_plan;
    else if (cmd && strcmp(cmd, "run") == 0)
        text = usage_run;
    fputs(text, f);
}

static mrt_status usage_error(mrt_error *err, const char *cmd,
                              const char *fmt, const char *arg)
{
    char msg[256];
    snprintf(msg, sizeof msg, fmt, arg);
    return mrt_error_set(err, MRT_E_USAGE, "meshrt", (mrt_mark){0},
                         "%s (see meshrt %s --help)", msg, cmd);
}

mrt_status mrt_cli_parse(int argc, char **argv, mrt_cli_args *a,
                         mrt_error *err)
{
    static const struct option opts[] = {
        {"mesh", required_argument, 0, 'm'}, {"json", no_argument, 0, 'j'},
        {"verify", no_argument, 0, 'v'},     {"save", required_argument, 0, 's'},
        {"repeat", required_argument, 0, 'r'}, {"help", no_argument, 0, 'h'},
        {"planner", required_argument, 0, 'P'},
        {"profile", required_argument, 0, 'F'},
        {"explain", no_argument, 0, 'E'},
        {0, 0, 0, 0}};
    int run = strcmp(a->cmd, "run") == 0, plan = strcmp(a->cmd, "plan") == 0;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        char *end;
        switch (c) {
        case 'm': a->mesh = optarg; break;
        case 'F': a->plan.profile = optarg; break;
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
    if (optind >= argc)
        return usage_error(err, a->cmd, "missing SPEC%s", "");
    a->spec = argv[optind++];
    if (optind < argc)
        return usage_error(err, a->cmd, "unexpected argument '%s'", argv[optind]);
    return MRT_OK;
}

mrt_status mrt_cli_load(const mrt_cli_args *a, mrt_spec **spec,
                        mrt_plan **plan, mrt_error *err)
{
    *plan = NULL;
    mrt_status st = mrt_spec_load(a->spec, a->mesh, spec, err);
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
    return st == MRT_E_RUNTIME || st == MRT_E_VERIFY ? 1 : 2;
}

void mrt_cli_print_error(const mrt_error *err)
{
    char buf[1024];
    fprintf(stderr, "%s\n", mrt_error_format(err, buf, sizeof buf));
}
