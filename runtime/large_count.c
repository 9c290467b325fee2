/*
 * large_count.c — transfers of any number of elements through MPI, whose
 * counts are ints.
 *
 * A shard of more than INT_MAX elements (8 GiB of float32) cannot be
 * described by an int count of a predefined type, and a count cast to
 * int wraps: past 2^31 MPI refuses it (MPI_ERR_COUNT, a fatal error under
 * the default handler), past 2^32 it silently moves a part of the buffer.
 * Open MPI 4.1 (Debian 12) has none of MPI 4's large-count calls
 * (MPI_Allreduce_c ...), so every count goes through here:
 *
 *   - a count that fits is handed over as it is (count, base type, op);
 *   - a larger one becomes one element of a derived type that holds all n
 *     elements contiguously: a vector of blocks of at most the limit, and
 *     the remainder after them (mrt_type_vector).  One element per rank
 *     keeps the per-rank block layout of the gathers, scatters and
 *     all-to-alls (rank j's block at j * n elements), which a split into
 *     several calls would not.  MPI's predefined reduction ops apply to
 *     predefined types only, so a reduction over the derived type takes a
 *     user-defined op that does the same sum or maximum.
 *
 * The limit is INT_MAX, or MESHRT_MPI_MAX_COUNT when that is set to a
 * smaller number (at least 2): the tests set it low so that the large-count
 * path runs, on every collective, with shards of a few kilobytes.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>

#include "half.h"
#include "runtime.h"

int64_t mrt_mpi_max_count(void)
{
    static int64_t limit;
    if (!limit) {
        const char *s = getenv("MESHRT_MPI_MAX_COUNT");
        char *end;
        long long v = s ? strtoll(s, &end, 10) : 0;
        /* at least 2, so that each split makes fewer pieces */
        limit = s && *s && !*end && v > 1 && v < INT_MAX ? v : INT_MAX;
    }
    return limit;
}

int mrt_type_vector(int64_t n, MPI_Aint stride, MPI_Datatype elem,
                    MPI_Datatype *out)
{
    MPI_Aint lb, ext;
    int64_t lim = mrt_mpi_max_count();
    *out = MPI_DATATYPE_NULL;
    MPI_Type_get_extent(elem, &lb, &ext);
    if (n < 1)
        return MPI_ERR_COUNT;
    if (n <= lim)
        return stride == ext
                   ? MPI_Type_contiguous((int)n, elem, out)
                   : MPI_Type_create_hvector((int)n, 1, stride, elem, out);
    /* q blocks of lim elements (a vector of vectors, itself split again
     * should q not fit either), then r more */
    int64_t q = n / lim, r = n % lim;
    MPI_Datatype block, part[2] = {MPI_DATATYPE_NULL, MPI_DATATYPE_NULL};
    MPI_Datatype whole = MPI_DATATYPE_NULL;
    int rc = MPI_Type_create_hvector((int)lim, 1, stride, elem, &block);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = mrt_type_vector(q, (MPI_Aint)lim * stride, block, &part[0]);
    MPI_Type_free(&block);
    if (rc == MPI_SUCCESS && r)
        rc = MPI_Type_create_hvector((int)r, 1, stride, elem, &part[1]);
    if (rc == MPI_SUCCESS && r) {
        int len[2] = {1, 1};
        MPI_Aint at[2] = {0, (MPI_Aint)(q * lim) * stride};
        rc = MPI_Type_create_struct(2, len, at, part, &whole);
    } else if (rc == MPI_SUCCESS) {
        whole = part[0];
        part[0] = MPI_DATATYPE_NULL;
    }
    /* the extent of n elements of a vector, whatever padding the struct
     * was given for alignment */
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_create_resized(
            whole, 0, (MPI_Aint)(n - 1) * stride + lb + ext, out);
    for (int i = 0; i < 2; i++)
        if (part[i] != MPI_DATATYPE_NULL)
            MPI_Type_free(&part[i]);
    if (whole != MPI_DATATYPE_NULL)
        MPI_Type_free(&whole);
    return rc;
}

/* The user-defined ops over the derived types: their elements are
 * contiguous runs of the base type (mrt_count_make makes no other), so
 * len elements are len * size bytes of it. */
#define ELEMENTWISE(name, T, expr)                                             \
    static void name(void *in, void *inout, int *len, MPI_Datatype *dt)        \
    {                                                                          \
        MPI_Count size;                                                        \
        MPI_Type_size_x(*dt, &size);                                           \
        const T *a = in;                                                       \
        T *b = inout;                                                          \
        int64_t n = (int64_t)*len * (int64_t)(size / (MPI_Count)sizeof(T));    \
        for (int64_t i = 0; i < n; i++)                                        \
            b[i] = (expr);                                                     \
    }
ELEMENTWISE(sum_f32, float, a[i] + b[i])
ELEMENTWISE(sum_f64, double, a[i] + b[i])
/* NaN wins, as in the local kernel and the unsharded reference: a NaN
 * in b stays (no comparison with it is true), one in a is taken. */
ELEMENTWISE(max_f32, float, a[i] > b[i] || isnan(a[i]) ? a[i] : b[i])
ELEMENTWISE(max_f64, double, a[i] > b[i] || isnan(a[i]) ? a[i] : b[i])
/* The 16-bit types (comm.c: bfloat16 as MPI_UINT16_T, float16 as
 * MPI_INT16_T): each pair widened to float32, combined, rounded back to
 * nearest even; MPI has no predefined op for them, so every reduction
 * of them takes these, whatever its count. */
#define W16(T) mrt_##T##_to_f32
ELEMENTWISE(sum_bf16, uint16_t,
            mrt_f32_to_bf16(W16(bf16)(a[i]) + W16(bf16)(b[i])))
ELEMENTWISE(sum_f16, uint16_t, mrt_f32_to_f16(W16(f16)(a[i]) + W16(f16)(b[i])))
ELEMENTWISE(max_bf16, uint16_t,
            W16(bf16)(a[i]) > W16(bf16)(b[i]) || isnan(W16(bf16)(a[i])) ? a[i]
                                                                        : b[i])
ELEMENTWISE(max_f16, uint16_t,
            W16(f16)(a[i]) > W16(f16)(b[i]) || isnan(W16(f16)(a[i])) ? a[i]
                                                                     : b[i])

static int is_16(MPI_Datatype base)
{
    return base == MPI_UINT16_T || base == MPI_INT16_T;
}

static int user_op(MPI_Datatype base, MPI_Op op, MPI_Op *out)
{
    int dbl = base == MPI_DOUBLE, bf = base == MPI_UINT16_T;
    MPI_User_function *fn = NULL;
    if (op == MPI_SUM && is_16(base))
        fn = bf ? sum_bf16 : sum_f16;
    else if (op == MPI_MAX && is_16(base))
        fn = bf ? max_bf16 : max_f16;
    else if (op == MPI_SUM)
        fn = dbl ? sum_f64 : sum_f32;
    else if (op == MPI_MAX)
        fn = dbl ? max_f64 : max_f32;
    if (!fn || (base != MPI_DOUBLE && base != MPI_FLOAT && !is_16(base)))
        return MPI_ERR_OP;
    return MPI_Op_create(fn, 1, out);
}

int mrt_count_make(int64_t n, MPI_Datatype base, MPI_Op op, mrt_count *out)
{
    *out = (mrt_count){.count = (int)n, .type = base, .op = op};
    int rc = MPI_SUCCESS;
    if (n <= mrt_mpi_max_count()) {
        /* MPI_MAX drops NaN (Open MPI keeps whichever operand its
         * comparison picks): the maximum is always ours */
        if ((op == MPI_MAX || (op == MPI_SUM && is_16(base))) &&
            (rc = user_op(base, op, &out->op)) == MPI_SUCCESS)
            out->owned_op = 1;
        return rc;
    }
    MPI_Aint lb, ext;
    MPI_Type_get_extent(base, &lb, &ext);
    out->count = 1;
    out->owned = 1;
    out->op = MPI_OP_NULL;
    rc = mrt_type_vector(n, ext, base, &out->type);
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_commit(&out->type);
    if (rc == MPI_SUCCESS && op != MPI_OP_NULL)
        out->owned_op = (rc = user_op(base, op, &out->op)) == MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        mrt_count_free(out);
    return rc;
}

/* Freeing a type or an op that a pending non-blocking call still uses is
 * allowed: MPI frees it once the call completes (Open MPI holds a
 * reference from the request). */
void mrt_count_free(mrt_count *c)
{
    if (c->owned && c->type != MPI_DATATYPE_NULL)
        MPI_Type_free(&c->type);
    if (c->owned_op && c->op != MPI_OP_NULL)
        MPI_Op_free(&c->op);
    c->owned = c->owned_op = 0;
}
