/*
 * kernel_pack.c — strided copy-and-sum, the data movement of the local
 * einsum kernel: permuting an operand into the workspace, summing away
 * dims that only one input has, and permuting a result into C.
 *
 * The loop nest is chosen for the cache, not for the index order: dims of
 * extent 1 are dropped, the rest are sorted so that the dim with the
 * smallest stride (the contiguous dim of the source or of the destination)
 * is innermost, with ties going to the destination's contiguous dim, and
 * neighbouring loops whose strides fold in both source and destination
 * are merged, so a dense copy becomes one memcpy.  When the source's
 * contiguous dim is not the innermost loop (a transpose), the two loops
 * run as 32 x 32 tiles, so each cache line fetched on either side is used
 * whole before it is evicted (measured on a 4000 x 4000 float
 * transpose: 15 times the time of a memcpy untiled, 4 times tiled).
 * A tile of a plain copy that is a true transpose (unit stride on the
 * source along one loop, on the destination along the other) moves in
 * 4 x 4 blocks of SSE registers (2 x 2 for float64), four elements per
 * load and store instead of one (measured on the 256 x 64 float blocks
 * of "b h k d" that the kernel transposes for BLIS: 0.8 ns an element
 * one by one, 0.2 in blocks).
 * The odometer over the outer loops works in bytes and is type-free; only
 * the inner loops are typed, picked from a table by dtype.  A sum first
 * zeroes the elements it will accumulate into, then adds in the same
 * cache-friendly order.
 */
#include "kernel_pack.h"

#include <assert.h>
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define TILE 32 /* elements per side of a transposing tile */

typedef struct loopnest {
    int nd;    /* outermost first */
    int tiled; /* the last two loops run as TILE x TILE tiles */
    int64_t ext[MRT_MAX_DIMS], ss[MRT_MAX_DIMS], ds[MRT_MAX_DIMS];
} loopnest;

/* ---- typed inner loops ---------------------------------------------- */

typedef void inner_fn(int64_t n, const void *src, int64_t si, void *dst,
                      int64_t di);

/* The typed inner loops, one small macro per loop, instantiated for
 * float and double.  set: dst = src (one memcpy when both are dense). */
#define SET_FN(T, SUF)                                                         \
    static void set_##SUF(int64_t n, const void *src, int64_t si, void *dst,   \
                          int64_t di)                                          \
    {                                                                          \
        const T *restrict s = src;                                             \
        T *restrict d = dst;                                                   \
        if (si == 1 && di == 1)                                                \
            memcpy(d, s, (size_t)n * sizeof(T));                               \
        else                                                                   \
            for (int64_t i = 0; i < n; i++)                                    \
                d[i * di] = s[i * si];                                         \
    }
/* add: dst += src, element by element (di != 0) */
#define ADD_FN(T, SUF)                                                         \
    static void add_##SUF(int64_t n, const void *src, int64_t si, void *dst,   \
                          int64_t di)                                          \
    {                                                                          \
        const T *restrict s = src;                                             \
        T *restrict d = dst;                                                   \
        for (int64_t i = 0; i < n; i++)                                        \
            d[i * di] += s[i * si];                                            \
    }
/* sum: the whole row into dst[0] (di == 0), in a register meanwhile */
#define SUM_FN(T, SUF)                                                         \
    static void sum_##SUF(int64_t n, const void *src, int64_t si, void *dst,   \
                          int64_t di)                                          \
    {                                                                          \
        const T *restrict s = src;                                             \
        T acc = *(T *)dst;                                                     \
        for (int64_t i = 0; i < n; i++)                                        \
            acc += s[i * si];                                                  \
        *(T *)dst = acc;                                                       \
    }
#define ZERO_FN(T, SUF)                                                        \
    static void zero_##SUF(int64_t n, const void *src, int64_t si, void *dst,  \
                           int64_t di)                                         \
    {                                                                          \
        T *restrict d = dst;                                                   \
        for (int64_t i = 0; i < n; i++)                                        \
            d[i * di] = 0;                                                     \
    }

SET_FN(float, f32)
SET_FN(double, f64)
ADD_FN(float, f32)
ADD_FN(double, f64)
SUM_FN(float, f32)
SUM_FN(double, f64)
ZERO_FN(float, f32)
ZERO_FN(double, f64)

enum { MODE_SET, MODE_ADD, MODE_SUM, MODE_ZERO, MODE_COUNT };

static inner_fn *const inner_table[MRT_COMPUTE_DTYPE_COUNT][MODE_COUNT] = {
    [MRT_F32] = {set_f32, add_f32, sum_f32, zero_f32},
    [MRT_F64] = {set_f64, add_f64, sum_f64, zero_f64},
};

/* A transposing tile of a plain copy: dst[o * dso + i] = src[o + i * ssi]
 * for o < no, i < ni (the source has unit stride along o, the
 * destination along i). */
typedef void tile_fn(int64_t no, int64_t ni, const void *src, int64_t ssi,
                     void *dst, int64_t dso);

/* The W x W blocks of a tile in SSE2 registers: 4 x 4 floats, 2 x 2
 * doubles (b: the block's source, e: its destination). */
#ifdef __SSE2__
enum { TILE_W_f32 = 4, TILE_W_f64 = 2 };

static inline void block_f32(const float *b, int64_t ssi, float *e, int64_t dso)
{
    __m128 r0 = _mm_loadu_ps(b), r1 = _mm_loadu_ps(b + ssi);
    __m128 r2 = _mm_loadu_ps(b + 2 * ssi);
    __m128 r3 = _mm_loadu_ps(b + 3 * ssi);
    _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
    _mm_storeu_ps(e, r0);
    _mm_storeu_ps(e + dso, r1);
    _mm_storeu_ps(e + 2 * dso, r2);
    _mm_storeu_ps(e + 3 * dso, r3);
}

static inline void block_f64(const double *b, int64_t ssi, double *e,
                             int64_t dso)
{
    __m128d r0 = _mm_loadu_pd(b), r1 = _mm_loadu_pd(b + ssi);
    _mm_storeu_pd(e, _mm_unpacklo_pd(r0, r1));
    _mm_storeu_pd(e + dso, _mm_unpackhi_pd(r0, r1));
}
#else
enum { TILE_W_f32 = 1, TILE_W_f64 = 1 }; /* no blocks: the plain loop */
static inline void block_f32(const float *b, int64_t ssi, float *e, int64_t dso)
{
    (void)b, (void)ssi, (void)e, (void)dso;
}
static inline void block_f64(const double *b, int64_t ssi, double *e,
                             int64_t dso)
{
    (void)b, (void)ssi, (void)e, (void)dso;
}
#endif

/* A tile: whole W x W blocks in registers, the rest element by element
 * (the columns past the last whole block, then the rows), a small macro
 * per loop.  copy: rows [o0, o1) and columns [i0, ni) one by one. */
#define TILE_COPY_FN(T, SUF)                                                   \
    static void copy_##SUF(int64_t o0, int64_t o1, int64_t i0, int64_t ni,     \
                           const T *s, int64_t ssi, T *d, int64_t dso)         \
    {                                                                          \
        for (int64_t o = o0; o < o1; o++)                                      \
            for (int64_t i = i0; i < ni; i++)                                  \
                d[o * dso + i] = s[o + i * ssi];                               \
    }
/* strips: the rows W at a time in blocks; returns the rows done */
#define TILE_STRIPS_FN(T, SUF)                                                 \
    static int64_t strips_##SUF(int64_t no, int64_t ni, const T *s,            \
                                int64_t ssi, T *d, int64_t dso)                \
    {                                                                          \
        const int64_t w = TILE_W_##SUF;                                        \
        int64_t o = 0;                                                         \
        for (; w > 1 && o + w <= no; o += w) {                                 \
            int64_t i = 0;                                                     \
            for (; i + w <= ni; i += w)                                        \
                block_##SUF(s + o + i * ssi, ssi, d + o * dso + i, dso);       \
            copy_##SUF(o, o + w, i, ni, s, ssi, d, dso);                       \
        }                                                                      \
        return o;                                                              \
    }
#define TILE_FN(T, SUF)                                                        \
    static void tile_##SUF(int64_t no, int64_t ni, const void *src,            \
                           int64_t ssi, void *dst, int64_t dso)                \
    {                                                                          \
        int64_t o = strips_##SUF(no, ni, src, ssi, dst, dso);                  \
        copy_##SUF(o, no, 0, ni, src, ssi, dst, dso);                          \
    }

TILE_COPY_FN(float, f32)
TILE_COPY_FN(double, f64)
TILE_STRIPS_FN(float, f32)
TILE_STRIPS_FN(double, f64)
TILE_FN(float, f32)
TILE_FN(double, f64)

static tile_fn *const tile_table[MRT_COMPUTE_DTYPE_COUNT] = {
    [MRT_F32] = tile_f32,
    [MRT_F64] = tile_f64,
};

/* ---- the loop nest -------------------------------------------------- */

/* Cache order: a loop is "outer" if its smallest nonzero stride is
 * larger; ties put the smaller destination stride inside. */
static int outer_than(const loopnest *L, int i, int j)
{
    int64_t ki = L->ds[i] && L->ds[i] < L->ss[i] ? L->ds[i] : L->ss[i];
    int64_t kj = L->ds[j] && L->ds[j] < L->ss[j] ? L->ds[j] : L->ss[j];
    return ki != kj ? ki > kj : L->ds[i] > L->ds[j];
}

static void swap_loops(loopnest *L, int i, int j)
{
    int64_t t;
    t = L->ext[i], L->ext[i] = L->ext[j], L->ext[j] = t;
    t = L->ss[i], L->ss[i] = L->ss[j], L->ss[j] = t;
    t = L->ds[i], L->ds[i] = L->ds[j], L->ds[j] = t;
}

/* When the source's contiguous loop is not the innermost (a transpose),
 * moves it just outside the innermost and runs the two as tiles, so the
 * cache lines of both sides are reused. */
static void choose_tiling(loopnest *L)
{
    int in = L->nd - 1, sl = -1;
    L->tiled = 0;
    for (int i = 0; i < in; i++)
        if (L->ss[i] < L->ss[in] && (sl < 0 || L->ss[i] < L->ss[sl]))
            sl = i;
    if (sl < 0 || L->ext[sl] < TILE || L->ext[in] < TILE)
        return;
    for (int i = sl; i < in - 1; i++)
        swap_loops(L, i, i + 1);
    L->tiled = 1;
}

/* Builds the nest over the dims of extent > 1; with summed == 0 the dims
 * with ds == 0 are left out too (the zeroing pass). */
static void build(loopnest *L, int nd, const int64_t ext[], const int64_t ss[],
                  const int64_t ds[], int summed)
{
    L->nd = 0;
    for (int i = 0; i < nd; i++) {
        if (ext[i] == 1 || (!summed && ds[i] == 0))
            continue;
        L->ext[L->nd] = ext[i];
        L->ss[L->nd] = ss[i];
        L->ds[L->nd] = ds[i];
        L->nd++;
    }
    for (int i = 1; i < L->nd; i++) /* insertion sort, outer first */
        for (int j = i; j > 0 && outer_than(L, j, j - 1); j--)
            swap_loops(L, j, j - 1);
    int n = 0; /* merge loops that fold in both source and destination */
    for (int i = 1; i < L->nd; i++) {
        if (L->ss[n] == L->ss[i] * L->ext[i] &&
            L->ds[n] == L->ds[i] * L->ext[i]) {
            L->ext[n] *= L->ext[i];
            L->ss[n] = L->ss[i];
            L->ds[n] = L->ds[i];
        } else {
            n++;
            L->ext[n] = L->ext[i], L->ss[n] = L->ss[i], L->ds[n] = L->ds[i];
        }
    }
    L->nd = L->nd ? n + 1 : 0;
    if (L->nd == 0) { /* a single element */
        L->nd = 1;
        L->ext[0] = 1, L->ss[0] = 0, L->ds[0] = 0;
    }
    choose_tiling(L);
}

/* The last two loops of L (outer o, inner i) from the given offsets:
 * plainly, or in TILE x TILE tiles (each by tf when not NULL, else row
 * by row). */
static void run_inner(const loopnest *L, int es, const char *src, char *dst,
                      inner_fn *f, tile_fn *tf)
{
    int i = L->nd - 1, o = L->nd - 2;
    if (!L->tiled) {
        f(L->ext[i], src, L->ss[i], dst, L->ds[i]);
        return;
    }
    for (int64_t bo = 0; bo < L->ext[o]; bo += TILE)
        for (int64_t bi = 0; bi < L->ext[i]; bi += TILE) {
            int64_t no = L->ext[o] - bo < TILE ? L->ext[o] - bo : TILE;
            int64_t ni = L->ext[i] - bi < TILE ? L->ext[i] - bi : TILE;
            if (tf) {
                tf(no, ni, src + (bo + bi * L->ss[i]) * es, L->ss[i],
                   dst + (bo * L->ds[o] + bi) * es, L->ds[o]);
                continue;
            }
            for (int64_t k = bo; k < bo + no; k++)
                f(ni, src + (k * L->ss[o] + bi * L->ss[i]) * es, L->ss[i],
                  dst + (k * L->ds[o] + bi * L->ds[i]) * es, L->ds[i]);
        }
}

/* Runs the innermost loop(s) for every index of the outer ones.  Offsets
 * are kept in bytes, never as out-of-range pointers.  tf: the tile
 * function, for a tiled plain copy that is a true transpose (NULL
 * otherwise). */
static void run(const loopnest *L, int es, const char *src, char *dst,
                inner_fn *f, tile_fn *tf)
{
    int64_t idx[MRT_MAX_DIMS] = {0}, so = 0, dof = 0;
    int nodo = L->nd - (L->tiled ? 2 : 1); /* loops of the odometer */
    for (;;) {
        run_inner(L, es, src + so, dst + dof, f, tf);
        int j = nodo - 1;
        for (; j >= 0; j--) {
            so += L->ss[j] * es;
            dof += L->ds[j] * es;
            if (++idx[j] < L->ext[j])
                break;
            so -= L->ss[j] * L->ext[j] * es;
            dof -= L->ds[j] * L->ext[j] * es;
            idx[j] = 0;
        }
        if (j < 0)
            return;
    }
}

void mrt_kernel_pack(mrt_dtype t, int nd, const int64_t ext[], const void *src,
                     const int64_t ss[], void *dst, const int64_t ds[])
{
    assert(nd >= 0 && nd <= MRT_MAX_DIMS);
    assert(t >= 0 && t < MRT_COMPUTE_DTYPE_COUNT);
    int es = mrt_dtype_size(t), sums = 0;
    for (int i = 0; i < nd; i++)
        sums |= ext[i] > 1 && ds[i] == 0;
    loopnest L;
    if (sums) {
        build(&L, nd, ext, ss, ds, 0);
        run(&L, es, src, dst, inner_table[t][MODE_ZERO], NULL);
    }
    build(&L, nd, ext, ss, ds, 1);
    int o = L.nd - 2, i = L.nd - 1;
    tile_fn *tf = !sums && L.tiled && L.ss[o] == 1 && L.ds[i] == 1
                      ? tile_table[t]
                      : NULL;
    /* a sum whose innermost loop has one destination element (ds 0)
     * keeps it in a register */
    int mode = !sums ? MODE_SET : L.ds[i] == 0 ? MODE_SUM : MODE_ADD;
    run(&L, es, src, dst, inner_table[t][mode], tf);
}
