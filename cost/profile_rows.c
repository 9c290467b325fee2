/*
 * profile_rows.c — the measured rows of a machine profile, read and
 * written (profile_io.c reads and writes the rest of the file):
 *
 *   collectives:            # what each collective took, by size
 *     - {kind: allreduce, group: 2, bytes: 65536, time_us: 17.9}
 *   gemm:                   # float32 GEMM rate of an n x n x n product
 *     - {n: 64, gflops: 5.1}
 *   ranks: 2                # ranks per host while these were measured
 *   cores: 2                # on this many cores
 *
 * `meshrt calibrate` writes them; the cost model (cost.c) interpolates
 * between them.  A profile without them is priced by the formulas alone.
 * Rows are kept sorted (kind, group, bytes; n), whatever the file's
 * order.
 */
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "cost.h"
#include "profile.h"
#include "yaml_node.h"

static const char *const coll_kind[MRT_COLL_COUNT] = {
    "allreduce", "allgather", "reduce_scatter", "alltoall", "permute"};
static const char *const coll_keys[] = {"kind", "group", "bytes", "time_us",
                                        NULL};
static const char *const gemm_keys[] = {"n", "gflops", NULL};

/* Mapping m (`in` names it) has only the keys of the list, and all. */
static mrt_status all_keys(const mrt_yaml_doc *d, const yaml_node_t *m,
                           const char *const keys[], const char *in)
{
    mrt_status st = mrt_yaml_expect(d, m, YAML_MAPPING_NODE, in);
    if (!st)
        st = mrt_yaml_check_keys(d, m, keys, in);
    for (int i = 0; !st && keys[i]; i++)
        if (!mrt_yaml_get(d, m, keys[i]))
            st = mrt_yaml_fail(d, m, "%s needs '%s'", in, keys[i]);
    return st;
}

/* A positive number at most hi (a plain scalar), times scale. */
static mrt_status bounded(const mrt_yaml_doc *d, const yaml_node_t *n,
                          const char *what, double hi, double scale,
                          double *out)
{
    double v;
    if (mrt_yaml_finite(n, &v) && v > 0 && v <= hi) {
        *out = v * scale;
        return MRT_OK;
    }
    char w[MRT_YAML_QUOTE_MAX + 32];
    return mrt_yaml_fail(d, n,
                         "%s must be a number above 0 and at most %g, got %s",
                         what, hi, mrt_yaml_what(n, w, sizeof w));
}

static mrt_status coll_row(const mrt_yaml_doc *d, const yaml_node_t *m,
                           mrt_coll_row *r)
{
    char w[MRT_YAML_QUOTE_MAX + 32];
    mrt_status st = all_keys(d, m, coll_keys, "a collective");
    const yaml_node_t *k = st ? NULL : mrt_yaml_get(d, m, "kind");
    const char *s = k ? mrt_yaml_str(k) : NULL;
    r->kind = -1;
    for (int i = 0; s && i < MRT_COLL_COUNT; i++)
        if (strcmp(s, coll_kind[i]) == 0)
            r->kind = i;
    if (!st && r->kind < 0)
        return mrt_yaml_fail(d, k,
                             "'kind' of a collective must be allreduce, "
                             "allgather, reduce_scatter, alltoall or "
                             "permute, got %s",
                             mrt_yaml_what(k, w, sizeof w));
    if (!st)
        st = mrt_yaml_count_max(d, mrt_yaml_get(d, m, "group"),
                                "'group' of a collective", 1 << 24, &r->group);
    if (!st)
        st = mrt_yaml_size(d, mrt_yaml_get(d, m, "bytes"),
                           "'bytes' of a collective", &r->bytes);
    if (!st)
        st = bounded(d, mrt_yaml_get(d, m, "time_us"),
                     "'time_us' of a collective", MRT_PROFILE_LATENCY_US_MAX,
                     1e-6, &r->time_s);
    return st;
}

static mrt_status gemm_row(const mrt_yaml_doc *d, const yaml_node_t *m,
                           mrt_gemm_row *r)
{
    mrt_status st = all_keys(d, m, gemm_keys, "a gemm row");
    if (!st)
        st = mrt_yaml_count_max(d, mrt_yaml_get(d, m, "n"), "'n' of a gemm row",
                                1 << 20, &r->n);
    if (!st)
        st = bounded(d, mrt_yaml_get(d, m, "gflops"), "'gflops' of a gemm row",
                     MRT_PROFILE_RATE_MAX, 1e9, &r->flops);
    return st;
}

static int by_coll(const void *a, const void *b)
{
    const mrt_coll_row *x = a, *y = b;
    if (x->kind != y->kind)
        return x->kind - y->kind;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    return (x->bytes > y->bytes) - (x->bytes < y->bytes);
}

static int by_n(const void *a, const void *b)
{
    const mrt_gemm_row *x = a, *y = b;
    return (x->n > y->n) - (x->n < y->n);
}

/* The items of sequence `key` of root, each read by one of the two row
 * readers into rows of `size` bytes; *count of them. */
static mrt_status load_list(const mrt_yaml_doc *d, const yaml_node_t *root,
                            const char *key, int *count, void *rows,
                            size_t size)
{
    const yaml_node_t *seq = mrt_yaml_get(d, root, key);
    if (!seq)
        return MRT_OK;
    char in[64];
    snprintf(in, sizeof in, "'%s'", key);
    mrt_status st = mrt_yaml_expect(d, seq, YAML_SEQUENCE_NODE, in);
    int n = st ? 0 : mrt_yaml_count(seq);
    if (!st && n > MRT_PROFILE_ROWS)
        return mrt_yaml_fail(d, seq, "%s has %d rows, at most %d", in, n,
                             MRT_PROFILE_ROWS);
    for (int i = 0; !st && i < n; i++) {
        const yaml_node_t *m = mrt_yaml_item(d, seq, i);
        char *row = (char *)rows + (size_t)i * size;
        st = size == sizeof(mrt_coll_row) ? coll_row(d, m, (mrt_coll_row *)row)
                                          : gemm_row(d, m, (mrt_gemm_row *)row);
    }
    if (!st) {
        *count = n;
        qsort(rows, (size_t)n, size,
              size == sizeof(mrt_coll_row) ? by_coll : by_n);
    }
    return st;
}

void mrt_profile_sort_rows(mrt_profile *p)
{
    qsort(p->coll, (size_t)p->ncoll, sizeof p->coll[0], by_coll);
    qsort(p->gemm, (size_t)p->ngemm, sizeof p->gemm[0], by_n);
}

mrt_status mrt_profile_load_rows(const struct mrt_yaml_doc *d,
                                 const struct yaml_node_s *root, mrt_profile *p)
{
    int64_t v;
    mrt_status st = load_list(d, root, "collectives", &p->ncoll, p->coll,
                              sizeof p->coll[0]);
    if (!st)
        st = load_list(d, root, "gemm", &p->ngemm, p->gemm, sizeof p->gemm[0]);
    const yaml_node_t *n;
    if (!st && (n = mrt_yaml_get(d, root, "ranks")) &&
        !(st = mrt_yaml_count_max(d, n, "'ranks'", 1 << 24, &v)))
        p->ranks = (int)v;
    if (!st && (n = mrt_yaml_get(d, root, "cores")) &&
        !(st = mrt_yaml_count_max(d, n, "'cores'", 1 << 24, &v)))
        p->cores = (int)v;
    return st;
}

void mrt_profile_put_rows(FILE *f, const mrt_profile *p)
{
    if (p->ranks && p->cores)
        fprintf(f, "ranks: %d\ncores: %d\n", p->ranks, p->cores);
    if (p->ngemm)
        fputs("gemm:\n", f);
    for (int i = 0; i < p->ngemm; i++)
        fprintf(f, "  - {n: %lld, gflops: %.4g}\n", (long long)p->gemm[i].n,
                p->gemm[i].flops / 1e9);
    if (p->ncoll)
        fputs("collectives:\n", f);
    for (int i = 0; i < p->ncoll; i++)
        fprintf(f, "  - {kind: %s, group: %lld, bytes: %lld, time_us: %.4g}\n",
                coll_kind[p->coll[i].kind], (long long)p->coll[i].group,
                (long long)p->coll[i].bytes, p->coll[i].time_s * 1e6);
}
