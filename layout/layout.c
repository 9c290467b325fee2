/*
 * layout.c — shard shapes and offsets of a tensor under a layout.
 *
 * A dim split over axes [a0, a1, ...] (major first) is cut into
 * size(a0) blocks, each of those into size(a1) blocks, and so on: the
 * rank's block number is the mixed-radix number of its coordinates on
 * those axes.  Each cut is as even as it can be: block b of n elements
 * cut into p holds n/p + (b < n%p) of them (mrt_layout_block_extent and
 * mrt_layout_block_start, the one place the rule is written).  Cutting
 * level by level keeps the blocks nested: the blocks under [a0, a1] are
 * pieces of those under [a0], so a slice stays local and an all-gather
 * over a1 rebuilds a block of [a0] (one flat cut into size(a0)*size(a1)
 * blocks would not nest when the sizes do not divide: 10 over 2x2 gives
 * 3, 3, 2, 2 while 10 over 2 gives 5, 5).
 */
#include "layout.h"

#include "checked.h"

#include <stdio.h>
#include <string.h>

int mrt_dtype_size(mrt_dtype t)
{
    return t == MRT_F64                    ? 8
           : t == MRT_BF16 || t == MRT_F16 ? 2
           : t == MRT_U8                   ? 1
                                           : 4; /* F32, I32 */
}

static const char *const dtype_names[] = {
    [MRT_F32] = "float32",   [MRT_F64] = "float64", [MRT_I32] = "int32",
    [MRT_BF16] = "bfloat16", [MRT_F16] = "float16", [MRT_U8] = "uint8",
};
_Static_assert(sizeof dtype_names / sizeof dtype_names[0] == MRT_DTYPE_COUNT,
               "one name per dtype");

const char *mrt_dtype_name(mrt_dtype t)
{
    return t >= 0 && t < MRT_DTYPE_COUNT ? dtype_names[t] : NULL;
}

unsigned mrt_layout_used_axes(const mrt_layout *l)
{
    unsigned mask = 0;
    for (int i = 0; i < l->ndims; i++)
        for (int j = 0; j < l->naxes[i]; j++)
            mask |= 1u << l->axes[i][j];
    return mask;
}

int mrt_layout_find_dim(const mrt_layout *l, int dim)
{
    for (int i = 0; i < l->ndims; i++)
        if (l->dim[i] == dim)
            return i;
    return -1;
}

int64_t mrt_layout_parts(const mrt_layout *l, const mrt_mesh *m, int i)
{
    int64_t p = 1;
    for (int j = 0; j < l->naxes[i]; j++)
        p *= m->size[l->axes[i][j]];
    return p;
}

int64_t mrt_layout_block_extent(int64_t n, int64_t p, int64_t b)
{
    return n / p + (b < n % p);
}

int64_t mrt_layout_block_start(int64_t n, int64_t p, int64_t b)
{
    return b * (n / p) + (b < n % p ? b : n % p);
}

void mrt_layout_dim_range(const mrt_layout *l, const mrt_mesh *m, int i,
                          const int64_t coords[], int64_t *start,
                          int64_t *extent)
{
    int64_t n = l->size[i], at = 0;
    for (int j = 0; j < l->naxes[i]; j++) {
        int64_t p = m->size[l->axes[i][j]],
                b = coords ? coords[l->axes[i][j]] : 0;
        at += mrt_layout_block_start(n, p, b);
        n = mrt_layout_block_extent(n, p, b);
    }
    *start = at;
    *extent = n;
}

void mrt_layout_shard_shape(const mrt_layout *l, const mrt_mesh *m,
                            int64_t local[])
{
    mrt_layout_shard_shape_at(l, m, NULL, local);
}

void mrt_layout_shard_shape_at(const mrt_layout *l, const mrt_mesh *m,
                               const int64_t coords[], int64_t local[])
{
    int64_t at;
    for (int i = 0; i < l->ndims; i++)
        mrt_layout_dim_range(l, m, i, coords, &at, &local[i]);
}

static int64_t product(const mrt_layout *l, const int64_t local[])
{
    int64_t n = 1;
    for (int i = 0; i < l->ndims; i++)
        n *= local[i];
    return n;
}

int64_t mrt_layout_shard_count(const mrt_layout *l, const mrt_mesh *m)
{
    int64_t local[MRT_MAX_DIMS];
    mrt_layout_shard_shape(l, m, local);
    return product(l, local);
}

int64_t mrt_layout_shard_count_at(const mrt_layout *l, const mrt_mesh *m,
                                  const int64_t coords[])
{
    int64_t local[MRT_MAX_DIMS];
    mrt_layout_shard_shape_at(l, m, coords, local);
    return product(l, local);
}

/* Every combination of blocks is held by the same number of ranks (the
 * mesh's ranks over the blocks' product), so the shards of all ranks
 * hold that many copies of the whole tensor. */
int64_t mrt_layout_total_count(const mrt_layout *l, const mrt_mesh *m)
{
    int64_t ranks = 1, n = 1;
    for (int a = 0; a < m->naxes; a++)
        ranks *= m->size[a];
    for (int i = 0; i < l->ndims; i++) {
        ranks /= mrt_layout_parts(l, m, i);
        if (mrt_checked_mul(n, l->size[i], &n))
            return -1;
    }
    return mrt_checked_mul(n, ranks, &n) ? -1 : n;
}

int mrt_layout_even(const mrt_layout *l, const mrt_mesh *m)
{
    for (int i = 0; i < l->ndims; i++)
        if (l->size[i] % mrt_layout_parts(l, m, i))
            return 0;
    return 1;
}

void mrt_layout_shard_offset(const mrt_layout *l, const mrt_mesh *m,
                             const int64_t coords[], int64_t off[])
{
    int64_t n;
    for (int i = 0; i < l->ndims; i++)
        mrt_layout_dim_range(l, m, i, coords, &off[i], &n);
}

int mrt_layout_equal(const mrt_layout *a, const mrt_layout *b)
{
    if (a->ndims != b->ndims || a->partial != b->partial)
        return 0;
    for (int i = 0; i < a->ndims; i++) {
        if (a->dim[i] != b->dim[i] || a->size[i] != b->size[i] ||
            a->naxes[i] != b->naxes[i])
            return 0;
        for (int j = 0; j < a->naxes[i]; j++)
            if (a->axes[i][j] != b->axes[i][j])
                return 0;
    }
    return 1;
}

/* Appends s at buf + n as snprintf(buf + n, size - n, "%s", s) would (cut
 * to fit, terminated); returns n plus the length of s.  (Plans print a
 * layout per op and step: snprintf per piece was a tenth of printing.) */
static int put(char *buf, int size, int n, const char *s)
{
    int len = (int)strlen(s);
    if (n < size) {
        int k = len < size - n - 1 ? len : size - n - 1;
        memcpy(buf + n, s, (size_t)k);
        buf[n + k] = '\0';
    }
    return n + len;
}

char *mrt_layout_str(const mrt_layout *l, const mrt_mesh *m,
                     char *const *dim_names, char *buf, int size)
{
    int n = put(buf, size, 0, "[");
    for (int i = 0; i < l->ndims && n < size; i++) {
        n = put(buf, size, put(buf, size, n, i ? ", " : ""),
                dim_names[l->dim[i]]);
        for (int j = 0; j < l->naxes[i] && n < size; j++)
            n = put(buf, size, put(buf, size, n, j ? "+" : "/"),
                    m->name[l->axes[i][j]]);
    }
    if (n < size)
        n = put(buf, size, n, "]");
    if (l->partial && n < size) {
        char axes[256];
        mrt_mesh_axes_str(m, l->partial, axes, sizeof axes);
        n = put(buf, size, put(buf, size, n, " partial("), axes);
        put(buf, size, n, ")");
    }
    return buf;
}
