/*
 * tview.h — what the kernel tests share: a tensor named by letters (one
 * letter per dim, dim id = letter - 'a'), extents written "i3j4k5", and
 * element access in either dtype.
 */
#ifndef MRT_TEST_TVIEW_H
#define MRT_TEST_TVIEW_H

#include <stdint.h>
#include <stdlib.h>

#include "classify.h"
#include "layout.h"

typedef struct tview {
    int ndims;
    int dim[MRT_MAX_DIMS];
    int64_t ext[MRT_MAX_DIMS];
    int64_t count;
    void *data;
} tview;

/* "i3j4k5" -> ext['i' - 'a'] = 3, ...; other letters 1. */
static inline void parse_ext(const char *s, int64_t ext[26])
{
    for (int i = 0; i < 26; i++)
        ext[i] = 1;
    while (*s) {
        int l = *s++ - 'a';
        ext[l] = strtoll(s, (char **)&s, 10);
    }
}

static inline mrt_kview kv(const tview *v)
{
    return (mrt_kview){v->ndims, v->dim, v->ext, v->data};
}

static inline double get(mrt_dtype t, const void *p, int64_t i)
{
    return t == MRT_F64 ? ((const double *)p)[i] : ((const float *)p)[i];
}

static inline void put(mrt_dtype t, void *p, int64_t i, double v)
{
    if (t == MRT_F64)
        ((double *)p)[i] = v;
    else
        ((float *)p)[i] = (float)v;
}

#endif
