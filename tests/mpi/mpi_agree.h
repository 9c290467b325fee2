/*
 * mpi_agree.h — what the multi-rank test drivers ask of all ranks at once.
 */
#ifndef MRT_TEST_MPI_AGREE_H
#define MRT_TEST_MPI_AGREE_H

#include <mpi.h>

/* 1 on every rank if v is 1 on every rank. */
static inline int all(int v)
{
    int r;
    MPI_Allreduce(&v, &r, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return r;
}

/* 1 on every rank if every rank has the same v. */
static inline int same(int v)
{
    int lo, hi;
    MPI_Allreduce(&v, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&v, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return lo == hi;
}

#endif
