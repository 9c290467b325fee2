/*
 * layout.c — shard shapes and offsets of a tensor under a layout.
 *
 * A dim split over axes [a0, a1, ...] (major first) is cut into
 * size(a0) * size(a1) * ... even blocks; the rank's block number is the
 * mixed-radix number of its coordinates on those axes.
 */
#include "layout.h"

#include <stdio.h>
#include <string.h>

int mrt_dtype_size(mrt_dtype t) { return t == MRT_F64 ? 8 : 4; }

const char *mrt_dtype_name(mrt_dtype t)
{
    return t == MRT_F64 ? "float64" : "float32";
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

void mrt_layout_shard_shape(const mrt_layout *l, const mrt_mesh *m,
                            int64_t local[])
{
    for (int i = 0; i < l->ndims; i++)
        local[i] = l->size[i] / mrt_layout_parts(l, m, i);
}

int64_t mrt_layout_shard_count(const mrt_layout *l, const mrt_mesh *m)
{
    int64_t local[MRT_MAX_DIMS], n = 1;
    mrt_layout_shard_shape(l, m, local);
    for (int i = 0; i < l->ndims; i++)
        n *= local[i];
    return n;
}

void mrt_layout_shard_offset(const mrt_layout *l, const mrt_mesh *m,
                             const int64_t coords[], int64_t off[])
{
    for (int i = 0; i < l->ndims; i++) {
        int64_t block = 0;
        for (int j = 0; j < l->naxes[i]; j++) {
            int a = l->axes[i][j];
            block = block * m->size[a] + coords[a];
        }
        off[i] = block * (l->size[i] / mrt_layout_parts(l, m, i));
    }
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
