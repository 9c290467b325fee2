/*
 * block.c — copying a rectangular block between two dense row-major
 * arrays.  Dims at the end that are whole in both arrays fold into one
 * contiguous run, so the inner loop is a single memcpy.
 */
#include <string.h>

#include "block.h"
#include "layout.h" /* MRT_MAX_DIMS */

void mrt_block_copy(int n, const int64_t ext[], void *dst, const int64_t dext[],
                    const int64_t doff[], const void *src, const int64_t sext[],
                    const int64_t soff[], size_t elsize)
{
    /* Fold trailing dims copied whole on both sides into the run. */
    int inner = n;
    size_t run = elsize;
    while (inner > 0 && ext[inner - 1] == dext[inner - 1] &&
           ext[inner - 1] == sext[inner - 1]) {
        run *= (size_t)ext[inner - 1];
        inner--;
    }
    if (inner > 0) { /* the last partial dim still joins the run */
        run *= (size_t)ext[inner - 1];
        inner--;
    }
    int64_t dstride[MRT_MAX_DIMS], sstride[MRT_MAX_DIMS];
    int64_t ds = 1, ss = 1;
    for (int i = n - 1; i >= 0; i--) {
        dstride[i] = ds;
        sstride[i] = ss;
        ds *= dext[i];
        ss *= sext[i];
    }
    int64_t dbase = 0, sbase = 0;
    for (int i = 0; i < n; i++) {
        dbase += doff[i] * dstride[i];
        sbase += soff[i] * sstride[i];
    }
    int64_t idx[MRT_MAX_DIMS] = {0};
    for (;;) {
        int64_t d = dbase, s = sbase;
        for (int i = 0; i < inner; i++) {
            d += idx[i] * dstride[i];
            s += idx[i] * sstride[i];
        }
        memcpy((char *)dst + d * (int64_t)elsize,
               (const char *)src + s * (int64_t)elsize, run);
        int i = inner - 1;
        while (i >= 0 && ++idx[i] == ext[i])
            idx[i--] = 0;
        if (i < 0)
            break;
    }
}
