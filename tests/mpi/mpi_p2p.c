/*
 * mpi_p2p.c — a pipeline's point-to-point bytes counted independently of
 * meshrt's ledger: `mpi_p2p SPEC MESH B H` (MESH "data=D,pipe=P", the
 * ranks row-major, so rank r is on stage r mod P; B and H the batch and
 * d_model of a float64 uniform stack, examples/pipeline.yaml).
 *
 * This program defines MPI_Send and MPI_Recv itself (the MPI profiling
 * interface: the library's calls land here, and go on to PMPI_Send and
 * PMPI_Recv), and counts the bytes of every send and receive — the
 * datatype's size times the count, as MPI sees them — while one run of
 * the plan executes (no verify, no save: nothing else sends).  Each
 * rank's count must equal what the plan says it hands MPI in its
 * sendrecv steps (those whose sending stage is its stage), its received
 * bytes those whose receiving stage is, and the totals over the ranks
 * 2 (P - 1) m times a boundary activation's shard b/m/D x h x 8 bytes
 * on each of the D data ranks: 2 (P - 1) B H 8, whatever m and D.  The
 * ranks agree before the exit status: 0 when every check holds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "meshrt_mpi.h"

static int counting;
static long long sent, received, sends;

int MPI_Send(const void *buf, int count, MPI_Datatype t, int dest, int tag,
             MPI_Comm comm)
{
    int size = 0;
    if (counting) {
        PMPI_Type_size(t, &size);
        sent += (long long)count * size;
        sends++;
    }
    return PMPI_Send(buf, count, t, dest, tag, comm);
}

int MPI_Recv(void *buf, int count, MPI_Datatype t, int src, int tag,
             MPI_Comm comm, MPI_Status *status)
{
    int size = 0;
    if (counting) {
        PMPI_Type_size(t, &size);
        received += (long long)count * size;
    }
    return PMPI_Recv(buf, count, t, src, tag, comm, status);
}

/* What the plan says rank's stage sends and receives in its sendrecv
 * steps, and how many sends it makes. */
static void planned(const mrt_plan *p, int stage, long long *out, long long *in,
                    long long *n)
{
    *out = *in = *n = 0;
    for (int i = 0; i < mrt_plan_step_count(p); i++) {
        mrt_plan_step_info s;
        if (mrt_plan_get_step(p, i, &s, NULL) != MRT_OK ||
            s.kind != MRT_PLAN_STEP_SENDRECV)
            continue;
        if (s.from_stage == stage)
            *out += s.bytes, ++*n;
        if (s.stage == stage)
            *in += s.bytes;
    }
}

int main(int argc, char **argv)
{
    mrt_error ierr = {0};
    if (mrt_init(&ierr) != MRT_OK) {
        fprintf(stderr, "mpi_p2p: %s\n", ierr.message);
        return 1;
    }
    MPI_Init(&argc, &argv);
    int rank, size, pipe = 0, data = 0;
    long long B = argc == 5 ? atoll(argv[3]) : 0,
              H = argc == 5 ? atoll(argv[4]) : 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 5 || B < 1 || H < 1 ||
        sscanf(argv[2], "data=%d,pipe=%d", &data, &pipe) != 2 ||
        data * pipe != size) {
        if (rank == 0)
            fprintf(stderr,
                    "usage: mpi_p2p SPEC data=D,pipe=P B H (D*P ranks)\n");
        MPI_Finalize();
        return 2;
    }
    mrt_spec *spec = NULL;
    mrt_plan *plan = NULL;
    mrt_error err = {0};
    mrt_spec_load_options lo = {.mesh = argv[2]};
    mrt_status st = mrt_spec_load_ex(argv[1], &lo, &spec, &err);
    if (st == MRT_OK)
        st = mrt_plan_create(spec, NULL, &plan, &err);
    mrt_run_options opt = {0};
    counting = 1;
    if (st == MRT_OK)
        st = mrt_run(spec, plan, &opt, &err);
    counting = 0;
    long long want_out = 0, want_in = 0, want_n = 0, tot[2] = {0}, all[2];
    if (st == MRT_OK)
        planned(plan, rank % pipe, &want_out, &want_in, &want_n);
    int ok = st == MRT_OK && sent == want_out && received == want_in &&
             sends == want_n && (pipe < 2 || want_out + want_in > 0);
    if (!ok)
        fprintf(stderr,
                "rank %d: %s; MPI was handed %lld bytes in %lld sends "
                "(plan: %lld in %lld), received %lld (plan: %lld)\n",
                rank, st == MRT_OK ? "ok" : err.message, sent, sends, want_out,
                want_n, received, want_in);
    tot[0] = sent, tot[1] = received;
    MPI_Allreduce(tot, all, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    ok = ok && all[0] == all[1] && all[0] == 2LL * (pipe - 1) * B * H * 8;
    int all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi_p2p %s %s: %lld bytes sent, %lld received: %s\n", argv[2],
               argv[1], all[0], all[1], all_ok ? "ok" : "FAILED");
    mrt_plan_destroy(plan);
    mrt_spec_destroy(spec);
    MPI_Finalize();
    return all_ok ? 0 : 1;
}
