/*
 * datatype.c — MPI derived datatypes for the blocks a collective moves,
 * so that MPI reads and writes them in place.
 *
 * An all-to-all sends block j of the input, cut along one dim, to rank j
 * of the group, and an all-gather of a dim that is not the leading one
 * puts block j of the output where rank j's shard belongs.  Those blocks
 * are strided.  Packing them into a contiguous buffer before the call
 * (and unpacking after) costs a copy of everything MPI then copies again;
 * a datatype that describes block 0 (an MPI subarray), with its extent
 * resized to the distance between blocks, lets MPI's own copy do the
 * gathering: block j of a buffer is then element j of that type.
 */
#include <limits.h>

#include "runtime.h"

int mrt_block_type(int n, const int64_t ext[], int d, int64_t g, mrt_dtype t,
                   MPI_Datatype *out)
{
    int sizes[MRT_MAX_DIMS], sub[MRT_MAX_DIMS], starts[MRT_MAX_DIMS];
    int64_t stride = 1;
    *out = MPI_DATATYPE_NULL;
    if (n == 0 || ext[d] % g)
        return MPI_ERR_ARG;
    for (int i = 0; i < n; i++) {
        if (ext[i] > INT_MAX)
            return MPI_ERR_COUNT;
        sizes[i] = sub[i] = (int)ext[i];
        starts[i] = 0;
        if (i > d)
            stride *= ext[i];
    }
    sub[d] = (int)(ext[d] / g);
    MPI_Datatype base = t == MRT_F64 ? MPI_DOUBLE : MPI_FLOAT, block;
    int rc = MPI_Type_create_subarray(n, sizes, sub, starts, MPI_ORDER_C,
                                      base, &block);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Aint step = (MPI_Aint)(sub[d] * stride * mrt_dtype_size(t));
    rc = MPI_Type_create_resized(block, 0, step, out);
    MPI_Type_free(&block);
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_commit(out);
    return rc;
}
