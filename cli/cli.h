/*
 * cli.h — the meshrt command line: argument parsing and the subcommands.
 * Only this layer prints errors and picks exit codes:
 *   0 ok, 1 failure at run time or in verification, 2 bad input or usage.
 */
#ifndef MRT_CLI_H
#define MRT_CLI_H

#include "meshrt.h"

typedef struct mrt_cli_args {
    const char *cmd;   /* "check", "plan", "run" */
    const char *spec;
    const char *mesh;  /* --mesh AXIS=N,... or NULL */
    int json, verify, repeat, help;
    const char *save;  /* --save DIR or NULL */
    mrt_plan_options plan; /* --planner, --profile, --explain */
} mrt_cli_args;

/* Parses argv after the subcommand name; fills err on bad usage. */
mrt_status mrt_cli_parse(int argc, char **argv, mrt_cli_args *a,
                         mrt_error *err);
/* Loads a->spec (with a->mesh) and plans it; on failure *spec and *plan
 * are NULL and err says why.  The caller destroys both. */
mrt_status mrt_cli_load(const mrt_cli_args *a, mrt_spec **spec,
                        mrt_plan **plan, mrt_error *err);
/* Exit status for a status code. */
int mrt_cli_exit_code(mrt_status st);
/* Prints the error as one line on stderr. */
void mrt_cli_print_error(const mrt_error *err);
/* Usage text of a subcommand (NULL: the overview) on f. */
void mrt_cli_usage(const char *cmd, FILE *f);

int mrt_cli_check(const mrt_cli_args *a);
int mrt_cli_plan(const mrt_cli_args *a);
int mrt_cli_run(const mrt_cli_args *a);

#endif
