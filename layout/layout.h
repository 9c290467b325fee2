/*
 * layout.h — how one tensor is spread over the mesh.
 *
 * A layout lists the tensor's dims in storage order (row-major, last dim
 * fastest, on every rank) with their global sizes, and for each dim the
 * mesh axes that split it, major first: a dim of size 64 split over
 * [data, model] on a {data: 2, model: 2} mesh is cut into 4 blocks of 16,
 * and the rank at (d, m) holds block 2*d + m.  Splits may be uneven: n
 * elements cut into p blocks give block b n/p + (b < n%p) elements,
 * starting at b*(n/p) + min(b, n%p) (the first n%p blocks get one more,
 * as in ScaLAPACK's and MPI_Dims' block distributions; a dim smaller than
 * p leaves the last blocks empty).  A split over [a0, a1] cuts by that
 * rule over a0, then each piece over a1 (layout.c says why).
 * mrt_layout_block_extent and mrt_layout_block_start are the rule, the
 * one place it is written; the rank at coordinates 0 holds the largest
 * block of every dim.
 * Axes that split no dim
 * replicate the tensor along them.  `partial` marks axes over which the
 * shards are pending sums: the true tensor is the sum of the shards of the
 * group over those axes.  Each axis appears at most once in a layout.
 */
#ifndef MRT_LAYOUT_H
#define MRT_LAYOUT_H

#include <stdint.h>

#include "meshrt.h"
#include "mesh.h"

#define MRT_MAX_DIMS 12 /* dims of one tensor */

/* Element types (mrt_dtype, meshrt.h).  Shards are dense, row-major, of
 * their value's type. */
/* Bytes per element: 8 (float64), 4 (float32, int32), 2 (bfloat16,
 * float16), 1 (uint8: dropout masks). */
int mrt_dtype_size(mrt_dtype t);
/* 1 for the 16-bit floating types (bfloat16, float16): stored and sent
 * in 2 bytes, computed in float32. */
static inline int mrt_dtype_is_16(mrt_dtype t)
{
    return t == MRT_BF16 || t == MRT_F16;
}
/* The type a kernel computes values of type t in: float64 for float64,
 * float32 for every other type (16-bit values are widened). */
static inline mrt_dtype mrt_dtype_compute(mrt_dtype t)
{
    return t == MRT_F64 ? MRT_F64 : MRT_F32;
}

typedef struct mrt_layout {
    int ndims;
    int dim[MRT_MAX_DIMS];                   /* spec dim ids, storage order */
    int64_t size[MRT_MAX_DIMS];              /* global sizes */
    int8_t naxes[MRT_MAX_DIMS];              /* how many axes split dim i */
    int8_t axes[MRT_MAX_DIMS][MRT_MAX_AXES]; /* those axes, major first
                                 (bytes: a plan holds a layout per value) */
    unsigned partial;                        /* axes of pending sums */
} mrt_layout;

/* Mask of the axes that split any dim. */
unsigned mrt_layout_used_axes(const mrt_layout *l);
/* Index (0..ndims) of spec dim id `dim` in l, or -1. */
int mrt_layout_find_dim(const mrt_layout *l, int dim);
/* Number of blocks dim i is cut into. */
int64_t mrt_layout_parts(const mrt_layout *l, const mrt_mesh *m, int i);
/* The block rule: elements in block b of n cut into p blocks, and the
 * index of its first element (0 <= b < p). */
int64_t mrt_layout_block_extent(int64_t n, int64_t p, int64_t b);
int64_t mrt_layout_block_start(int64_t n, int64_t p, int64_t b);
/* The global index of the first element of dim i held by the rank at
 * coords (mesh coordinates; NULL: the rank at 0), and how many. */
void mrt_layout_dim_range(const mrt_layout *l, const mrt_mesh *m, int i,
                          const int64_t coords[], int64_t *start,
                          int64_t *extent);
/* Local extents of every dim of the largest shard (rank 0's: block 0 of
 * every dim), what memory and costs are sized for. */
void mrt_layout_shard_shape(const mrt_layout *l, const mrt_mesh *m,
                            int64_t local[]);
/* Elements in the largest shard. */
int64_t mrt_layout_shard_count(const mrt_layout *l, const mrt_mesh *m);
/* Local extents of the shard held by the rank at coords. */
void mrt_layout_shard_shape_at(const mrt_layout *l, const mrt_mesh *m,
                               const int64_t coords[], int64_t local[]);
/* Elements in the shard held by the rank at coords. */
int64_t mrt_layout_shard_count_at(const mrt_layout *l, const mrt_mesh *m,
                                  const int64_t coords[]);
/* Elements in the shards of all the mesh's ranks together (replicas
 * counted once per rank); -1 when that does not fit in 64 bits. */
int64_t mrt_layout_total_count(const mrt_layout *l, const mrt_mesh *m);
/* 1 if every dim's size is divisible by its number of blocks. */
int mrt_layout_even(const mrt_layout *l, const mrt_mesh *m);
/* Global offset of the shard held by the rank at coords, per dim. */
void mrt_layout_shard_offset(const mrt_layout *l, const mrt_mesh *m,
                             const int64_t coords[], int64_t off[]);
/* 1 if a and b are the same distribution (dims, sizes, axes, partial). */
int mrt_layout_equal(const mrt_layout *a, const mrt_layout *b);
/* Appends a readable form like "[batch/data, d_ff/model+data] partial(model)"
 * to buf, using dim names from names[dim id]. */
char *mrt_layout_str(const mrt_layout *l, const mrt_mesh *m,
                     char *const *dim_names, char *buf, int size);

#endif
