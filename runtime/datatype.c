/*
 * datatype.c — MPI derived datatypes for the blocks a collective moves,
 * so that MPI reads and writes them in place.
 *
 * An all-to-all sends block j of the input, cut along one dim, to rank j
 * of the group, and an all-gather of a dim that is not the leading one
 * puts block j of the output where rank j's shard belongs.  Those blocks
 * are strided.  Packing them into a contiguous buffer before the call
 * (and unpacking after) costs a copy of everything MPI then copies again;
 * a datatype that describes block 0, with its extent resized to the
 * distance between blocks, lets MPI's own copy do the gathering: block j
 * of a buffer is then element j of that type.
 *
 * A block is a vector per dim, outermost first (the type map of an MPI
 * subarray), built by mrt_type_vector so that no extent or product of
 * extents has to fit an int: MPI_Type_create_subarray takes int sizes.
 */
#include "runtime.h"

/* Not committed (mrt_block_type resizes it first). */
static int block_of(int n, const int64_t ext[], const int64_t sub[],
                    MPI_Datatype base, MPI_Datatype *out)
{
    MPI_Aint lb, stride;
    MPI_Type_get_extent(base, &lb, &stride);
    MPI_Datatype t = base;
    int rc = MPI_SUCCESS;
    if (n == 0)
        return MPI_Type_contiguous(1, base, out);
    for (int i = n - 1; i >= 0 && rc == MPI_SUCCESS; i--) {
        MPI_Datatype next;
        rc = mrt_type_vector(sub[i], stride, t, &next);
        if (t != base)
            MPI_Type_free(&t);
        t = rc == MPI_SUCCESS ? next : MPI_DATATYPE_NULL;
        stride *= (MPI_Aint)ext[i];
    }
    *out = t;
    return rc;
}

int mrt_subarray_type(int n, const int64_t ext[], const int64_t sub[],
                      MPI_Datatype base, MPI_Datatype *out)
{
    int rc = block_of(n, ext, sub, base, out);
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_commit(out);
    return rc;
}

int mrt_block_type(int n, const int64_t ext[], int d, int64_t g, mrt_dtype t,
                   MPI_Datatype *out)
{
    int64_t sub[MRT_MAX_DIMS], stride = 1;
    *out = MPI_DATATYPE_NULL;
    if (n == 0 || ext[d] % g)
        return MPI_ERR_ARG;
    for (int i = 0; i < n; i++) {
        sub[i] = ext[i];
        if (i > d)
            stride *= ext[i];
    }
    sub[d] = ext[d] / g;
    MPI_Datatype base = mrt_mpi_type(t), block;
    int rc = block_of(n, ext, sub, base, &block);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Aint step = (MPI_Aint)(sub[d] * stride * mrt_dtype_size(t));
    rc = MPI_Type_create_resized(block, 0, step, out);
    MPI_Type_free(&block);
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_commit(out);
    return rc;
}

int mrt_box_type(int n, const int64_t ext[], const int64_t sub[],
                 const int64_t start[], MPI_Datatype base, MPI_Aint extra,
                 MPI_Datatype *out)
{
    MPI_Aint lb, size, stride = 1, at = 0;
    MPI_Type_get_extent(base, &lb, &size);
    for (int i = n - 1; i >= 0; i--) {
        at += (MPI_Aint)start[i] * stride;
        stride *= (MPI_Aint)ext[i];
    }
    MPI_Datatype block;
    int len = 1, rc = block_of(n, ext, sub, base, &block);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Aint disp = extra + at * size;
    rc = MPI_Type_create_struct(1, &len, &disp, &block, out);
    MPI_Type_free(&block);
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_commit(out);
    return rc;
}
