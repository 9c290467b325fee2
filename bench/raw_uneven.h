/*
 * raw_uneven.h — the raw MPI reference of a collective over uneven
 * splits for bench/collectives.c: the same move meshrt's executor makes,
 * written by hand with plain MPI (raw_uneven.c).
 */
#ifndef MRT_BENCH_RAW_UNEVEN_H
#define MRT_BENCH_RAW_UNEVEN_H

#include <mpi.h>

#include "runtime.h"

typedef struct mrt_bench_uneven {
    int g;              /* members of the step's group (0: not made) */
    int *count;         /* [3g] send counts, receive counts, displacements */
    MPI_Datatype *type; /* [2g] send types, receive types */
} mrt_bench_uneven;

/* The per-peer counts and committed subarray types of step s (an
 * all-to-all or all-gather over uneven splits) for the rank at coords,
 * whose group communicator over s->axes is comm.  Collective over comm.
 * MPI's error code; MPI_ERR_ARG when an extent does not fit an int.
 * *u is the caller's: mrt_bench_uneven_free. */
int mrt_bench_uneven_make(const mrt_plan *p, const mrt_step *s,
                          const int64_t coords[], MPI_Comm comm,
                          mrt_bench_uneven *u);
/* The one MPI_Alltoallw: from in (this rank's input shard) to out (its
 * output shard). */
int mrt_bench_uneven_call(const mrt_bench_uneven *u, const void *in, void *out,
                          MPI_Comm comm);
/* Frees the types and arrays; u may be zeroed or already freed. */
void mrt_bench_uneven_free(mrt_bench_uneven *u);

#endif
