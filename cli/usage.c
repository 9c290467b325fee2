/*
 * usage.c — the usage texts: the overview, and for each command its
 * synopsis and what it does, then its options, printed from the table
 * of options (args.c) so that a new option shows in every command that
 * accepts it, in one place.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

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
    "  show SPEC [TENSOR...] pictures: which rank holds which block\n"
    "  calibrate             measure this machine for the cost model:\n"
    "                        mpirun -n P meshrt calibrate (no SPEC)\n"
    "  validate SPEC         the cost model against this machine, for each\n"
    "                        layout: mpirun -n P meshrt validate SPEC\n"
    "\n"
    "meshrt COMMAND --help shows the options of a command.\n"
    "exit status: 0 ok, 1 run-time or verification failure or out of\n"
    "memory, 2 bad input.\n";

/* A command's text before its options, and after them (or NULL). */
typedef struct usage_text {
    const char *cmd;
    const char *head, *tail;
} usage_text;

static const usage_text usage[] = {
    {"check",
     "usage: meshrt check SPEC [--mesh AXIS=N,...] [--dim DIM=N,...]\n"
     "                         [--layout NAME]\n"
     "                         [--memory BYTES] [--replicated-share F]\n"
     "\n"
     "Validates SPEC and prints a summary: the mesh and, for every tensor,\n"
     "its shape, its layout, the shape of rank 0's shard (the largest when\n"
     "a dim is split unevenly: other ranks may hold less; meshrt show draws\n"
     "every rank's) and the mesh axes it is replicated over; the plan's\n"
     "bytes per rank and flops, and the names of the spec's layouts:.\n"
     "Warns (on stderr, exit status still 0) about ops that compute the\n"
     "same result on every rank of a mesh axis, about large tensors kept\n"
     "replicated, and about a plan whose peak memory per rank is over a\n"
     "rank's memory.\n",
     NULL},
    {"plan",
     "usage: meshrt plan SPEC [--mesh AXIS=N,...] [--dim DIM=N,...]\n"
     "                        [--layout NAME] [--json]\n"
     "                        [--explain] [--planner auto|meshtf|rules]\n"
     "                        [--machine FILE|NAME] [--ranks-per-node N]\n"
     "\n"
     "Prints the plan for the spec's mesh (no MPI needed, any mesh size):\n"
     "for every op its local kernel (GEMM shape, flops per rank) and every\n"
     "collective with its kind, mesh axes, group size, bytes per rank and\n"
     "modeled cost; totals with the peak memory per rank (a warning on\n"
     "stderr if that is over this machine's memory).  A plan over a\n"
     "budget of the spec's expect: is an error (exit status 1).\n",
     NULL},
    {"run",
     "usage: mpirun -n P meshrt run SPEC [--mesh AXIS=N,...] [--dim DIM=N,...]\n"
     "                                  [--layout NAME]\n"
     "                                  [--verify] [--save DIR] [--repeat N]\n"
     "                                  [--json] [--report FILE] [--profile]\n"
     "                                  [--trace FILE]\n"
     "\n"
     "Runs the plan on P MPI ranks (P must equal the mesh size) and reports\n"
     "per-op times and the bytes handed to MPI next to the plan's figures.\n"
     "A plan over a budget of the spec's expect: does not run (exit status 1).\n",
     NULL},
    {"compare",
     "usage: meshrt compare SPEC [--mesh AXIS=N,...] [--dim DIM=N,...]\n"
     "                           [--sweep DIM=N,N,... ...] [--sweep-mesh MESH ...]\n"
     "                           [--planner auto|meshtf|rules]\n"
     "                           [--machine FILE] [--csv FILE] [--json FILE]\n"
     "                           [--svg FILE] [--html FILE]\n"
     "\n"
     "Plans the spec under its own layout: rules (row 'spec') and under each\n"
     "alternative of its layouts: block, and prints one row each: the bytes\n"
     "per rank handed to MPI over each set of mesh axes and in all, the\n"
     "modeled wire bytes and messages, the modeled communication, compute\n"
     "and total time, and the peak memory per rank; '*' marks the fastest.\n"
     "An alternative that does not fit the program, or the --mesh or --dim\n"
     "given, gets its error instead.  A pinned row (pin: true, or every row\n"
     "under --planner rules) keeps its layouts on any machine; its column\n"
     "'auto saves' is what the auto planner would save by leaving them\n"
     "(time, wire bytes), and a line under the table names the collectives\n"
     "auto drops and adds.\n",
     "exit status 0 if at least one layout plans (at one size at least),\n"
     "2 if none does.\n"},
    {"search",
     "usage: meshrt search SPEC [--mesh AXIS=N,...] [--dim DIM=N,...]\n"
     "                          [--layout NAME]\n"
     "                          [--max-memory BYTES] [--top K]\n"
     "                          [--planner auto|meshtf|rules]\n"
     "                          [--machine FILE] [--json FILE]\n"
     "                          [--exhaustive | --screen | --no-screen]\n"
     "                          [--per-tensor] [--activations NAME,...|all]\n"
     "\n"
     "Tries every set of global layout rules for the program (each dim on an\n"
     "ordered list of mesh axes of size > 1, each axis on one dim at most,\n"
     "every split even) and prints the K fastest by modeled time, the\n"
     "time-versus-memory Pareto front, and the winner as a layout: block to\n"
     "paste into the spec.  Candidates that provably cannot enter either\n"
     "list are pruned by a lower bound on their time and memory, unplanned.\n",
     "exit status 0, 1 if no layout fits --max-memory, 2 for bad input.\n"},
    {"show",
     "usage: meshrt show SPEC [TENSOR...] [--mesh AXIS=N,...] [--dim DIM=N,...]\n"
     "                        [--layout NAME] [--steps] [--ascii] [--svg FILE]\n"
     "       meshrt show SPEC TENSOR --from LAYOUT --to LAYOUT [--ascii]\n"
     "                        [--svg FILE]\n"
     "       meshrt show SPEC --schedule [--layout NAME] [--ascii] [--svg FILE]\n"
     "\n"
     "Draws how each TENSOR (default: every input) is spread over the mesh,\n"
     "as planned (no MPI): its blocks, a grid over its last two dims (one\n"
     "grid per block of the dims before them), each block with its extents,\n"
     "bytes and the ranks holding it; then the mesh, a grid over its last\n"
     "two axes (one per coordinate of the axes before them), each rank with\n"
     "the block #k it holds.  It says which axes replicate the tensor and\n"
     "over which it is a pending sum (+: each rank holds an addend).  An op\n"
     "result is shown as its op leaves it.  With --from and --to, the move\n"
     "the planner makes between two layouts: each collective, its axes and\n"
     "bytes per rank, between the pictures before and after.  With\n"
     "--schedule, a pipelined plan's schedule: a row per stage, a column per\n"
     "span of time (to scale in SVG), each microbatch's forward (F3),\n"
     "backward (B3) and weight gradient (W3, zero_bubble), . for idle.\n",
     NULL},
    {"calibrate",
     "usage: mpirun -n P meshrt calibrate [--mesh AXIS=N,...] [--out FILE]\n"
     "                                    [--quick]\n"
     "\n"
     "Measures this machine for the cost model and writes a machine profile\n"
     "(docs/calibration.md): per mesh axis the latency and bandwidth between\n"
     "neighbours, the local GEMM (BLIS), reduction and copy rates, then each\n"
     "collective at a few sizes next to the model's prediction.\n",
     NULL},
    {"validate",
     "usage: mpirun -n P meshrt validate SPEC [--machine FILE] [--mesh AXIS=N,...]\n"
     "                                       [--dim DIM=N,...] [--repeat N] [--json]\n"
     "\n"
     "Runs the spec under its own rules and under each alternative of its\n"
     "layouts: on P ranks and sets the measured times (the slowest rank's)\n"
     "against the modeled ones: per step kind and size class, per op and end\n"
     "to end, with the error factors (measured / modeled), Kendall's tau\n"
     "between the modeled and the measured order, and the model's pick\n"
     "against the measured fastest (docs/calibration.md).  After a run of\n"
     "each to warm up, the partitionings take turns, N runs each; each keeps\n"
     "its fastest.\n",
     NULL},
};

/* Help column: an option and its argument take 18 characters after the
 * two of indent, then a blank; longer ones two blanks, or a line of
 * their own when they would squeeze the text. */
#define HELP_COLUMN 21

static void print_option(const mrt_cli_option *o, FILE *f)
{
    char head[64];
    snprintf(head, sizeof head, "--%s%s%s", o->name, o->arg ? " " : "",
             o->arg ? o->arg : "");
    int n = (int)strlen(head);
    if (n <= HELP_COLUMN - 3)
        fprintf(f, "  %-*s ", HELP_COLUMN - 3, head);
    else if (n <= HELP_COLUMN + 2)
        fprintf(f, "  %s  ", head);
    else
        fprintf(f, "  %s\n%*s", head, HELP_COLUMN, "");
    for (const char *p = o->help; *p;) {
        const char *nl = strchr(p, '\n');
        int len = nl ? (int)(nl - p) : (int)strlen(p);
        fprintf(f, "%.*s\n", len, p);
        if (!nl)
            break;
        p = nl + 1;
        fprintf(f, "%*s", HELP_COLUMN, "");
    }
}

void mrt_cli_usage(const char *cmd, FILE *f)
{
    unsigned bit = cmd ? mrt_cli_command_bit(cmd) : 0;
    const usage_text *u = NULL;
    for (size_t i = 0; bit && i < sizeof usage / sizeof usage[0]; i++)
        if (strcmp(usage[i].cmd, cmd) == 0)
            u = &usage[i];
    if (!u) {
        fputs(usage_overview, f);
        return;
    }
    fputs(u->head, f);
    for (const mrt_cli_option *o = mrt_cli_options; o->name; o++)
        if ((o->cmds & bit) && o->help)
            print_option(o, f);
    if (u->tail)
        fputs(u->tail, f);
}
