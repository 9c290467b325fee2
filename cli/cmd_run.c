/*
 * cmd_run.c — `mpirun -n P meshrt run SPEC ...`: every rank loads and
 * plans the spec, the ranks agree on the outcome (so a bad spec gives one
 * error line from rank 0 and exit 2 on every rank, never a hang), then
 * mrt_run executes.
 */
#include <mpi.h>
#include <stdio.h>

#include "cli.h"
#include "spec.h"

/* The lowest failing rank's status, on every rank; its error printed by
 * that rank only. */
static mrt_status agree_and_report(mrt_status st, const mrt_error *err)
{
    int rank, size, who;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int mine = st != MRT_OK ? rank : size;
    MPI_Allreduce(&mine, &who, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (who == size)
        return MRT_OK;
    if (rank == who)
        mrt_cli_print_error(err);
    int code = st;
    MPI_Bcast(&code, 1, MPI_INT, who, MPI_COMM_WORLD);
    return (mrt_status)code;
}

int mrt_cli_run(const mrt_cli_args *a)
{
    MPI_Init(NULL, NULL);
    mrt_error err = {0};
    mrt_spec *spec = NULL;
    mrt_plan *plan = NULL;
    mrt_status st = mrt_cli_load(a, &spec, &plan, &err);
    st = agree_and_report(st, &err);
    if (st == MRT_OK) {
        mrt_run_options opt = {.verify = a->verify, .save_dir = a->save,
                               .repeat = a->repeat, .json = a->json};
        st = mrt_run(spec, plan, &opt, &err);
        int rank;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (st != MRT_OK && rank == 0) /* mrt_run's errors agree already */
            mrt_cli_print_error(&err);
    }
    mrt_plan_destroy(plan);
    mrt_spec_destroy(spec);
    MPI_Finalize();
    return mrt_cli_exit_code(st);
}
