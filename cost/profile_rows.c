/*
 * profile_rows.c — the measured rows of a machine profile, read and
 * written (profile_io.c reads and writes the rest of the file):
 *
 *   collectives:            # what each collective took, by size
 *     - {kind: allreduce, group: 2, bytes: 65536, time_us: 17.9}
 *   gemm:                   # GEMM rate of an n x n x n product
 *     - {n: 64, gflops: 5.1}            # form nn (operands by rows), float32
 *     - {n: 64, form: nt, gflops: 4.2}  # B stored by columns
 *     - {n: 64, form: nt, dtype: float64, gflops: 2.9}  # in float64
 *     - {n: 64, thin: m, other: 1024, gflops: 70}  # 64 x 1024 x 1024
 *   products:               # the rate of one whole product shape
 *     - {m: 128, n: 1024, k: 512, form: tn, gflops: 41.2}
 *     - {m: 1024, n: 256, k: 512, form: tn, c: columns, gflops: 40}
 *   maps:                   # an elementwise function over so many elements
 *     - {fn: gelu, elements: 262144, ns_per_element: 3.1}   # in float32
 *     - {fn: gelu, dtype: float64, elements: 262144, ns_per_element: 19.7}
 *   ranks: 2                # ranks per host while these were measured
 *   cores: 2                # on this many cores
 *
 * `meshrt calibrate` writes them; the cost model (cost.c) interpolates
 * between them.  A profile without them is priced by the formulas alone.
 * Rows are kept sorted (kind, group, bytes; dtype, form, n; fn, dtype,
 * elements), whatever the file's order.  A map row's fn is a name
 * (lower-case letters, digits, '_'): the cost layer sits below the
 * program's list of functions, so a row for a name no map step has is
 * never used.  Its optional dtype is the type the function was timed in,
 * float32 (the default: a profile written before float64 rows existed
 * means float32) or float64, the two types the kernels compute in (a
 * 16-bit map is computed in float32: its rows are float32's).  A gemm
 * row's dtype is the same: float32 unless it says float64.  A gemm row
 * with `thin:` (m, n or k: the short side, of n; the other two of
 * `other`) is a thin product's rate, in form nn.  A products row is
 * one shape's rate (m x k times k x n, its form and type as a gemm
 * row's, `c: columns` when C is stored by columns); `meshrt validate`
 * times the shapes its plans run.
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
static const char *const gemm_keys[] = {"n",    "gflops", "form", "dtype",
                                        "thin", "other",  NULL};
static const char *const product_keys[] = {"m",    "n",     "k", "gflops",
                                           "form", "dtype", "c", NULL};
static const char *const map_keys[] = {"fn", "elements", "ns_per_element",
                                       "dtype", NULL};
static const char *const form_name[MRT_GEMM_FORM_COUNT] = {"nn", "nt", "tn",
                                                           "tt"};

static const char *const thin_name[MRT_GEMM_THIN_COUNT] = {"cube", "m", "n",
                                                           "k"};

const char *mrt_gemm_form_name(mrt_gemm_form f)
{
    return f >= 0 && f < MRT_GEMM_FORM_COUNT ? form_name[f] : "?";
}

const char *mrt_gemm_thin_name(mrt_gemm_thin s)
{
    return s >= 0 && s < MRT_GEMM_THIN_COUNT ? thin_name[s] : "?";
}

/* Mapping m (`in` names it) has only the keys of the list, and all but
 * the `optional` last ones. */
static mrt_status all_keys(const mrt_yaml_doc *d, const yaml_node_t *m,
                           const char *const keys[], int optional,
                           const char *in)
{
    mrt_status st = mrt_yaml_expect(d, m, YAML_MAPPING_NODE, in);
    if (!st)
        st = mrt_yaml_check_keys(d, m, keys, in);
    int n = 0;
    while (keys[n])
        n++;
    for (int i = 0; !st && i < n - optional; i++)
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
    mrt_status st = all_keys(d, m, coll_keys, 0, "a collective");
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

/* The optional `dtype` of row m (`in` names it) into *t: float32 when
 * absent (every profile written before float64 rows existed), float32
 * or float64 (the types the kernels compute in) when present. */
static mrt_status row_dtype(const mrt_yaml_doc *d, const yaml_node_t *m,
                            const char *in, int *t)
{
    char w[MRT_YAML_QUOTE_MAX + 32];
    const yaml_node_t *n = mrt_yaml_get(d, m, "dtype");
    const char *s = n ? mrt_yaml_str(n) : NULL;
    *t = MRT_F32;
    if (n && s && strcmp(s, "float64") == 0)
        *t = MRT_F64;
    else if (n && !(s && strcmp(s, "float32") == 0))
        return mrt_yaml_fail(d, n,
                             "'dtype' of %s must be float32 or float64 (the "
                             "types the kernels compute in), got %s",
                             in, mrt_yaml_what(n, w, sizeof w));
    return MRT_OK;
}

/* A gemm row's `thin:` and `other:`: both or neither, the short side
 * shorter than the other two (else it is no thin product). */
static mrt_status thin_side(const mrt_yaml_doc *d, const yaml_node_t *m,
                            mrt_gemm_row *r)
{
    char w[MRT_YAML_QUOTE_MAX + 32];
    const yaml_node_t *t = mrt_yaml_get(d, m, "thin"),
                      *o = mrt_yaml_get(d, m, "other");
    r->thin = MRT_GEMM_CUBE;
    r->other = 0;
    if (!t && !o)
        return MRT_OK;
    if (!t || !o)
        return mrt_yaml_fail(d, t ? t : o,
                             "a thin gemm row needs both 'thin' (its short "
                             "side) and 'other' (the size of the other two)");
    const char *s = mrt_yaml_str(t);
    for (int i = MRT_GEMM_THIN_M; s && i < MRT_GEMM_THIN_COUNT; i++)
        if (strcmp(s, thin_name[i]) == 0)
            r->thin = i;
    if (r->thin == MRT_GEMM_CUBE)
        return mrt_yaml_fail(d, t,
                             "'thin' of a gemm row must be m, n or k, "
                             "got %s",
                             mrt_yaml_what(t, w, sizeof w));
    mrt_status st = mrt_yaml_count_max(d, o, "'other' of a gemm row", 1 << 20,
                                       &r->other);
    if (!st && r->other <= r->n)
        return mrt_yaml_fail(d, o,
                             "'other' of a thin gemm row (%lld) must be "
                             "larger than its 'n' (%lld)",
                             (long long)r->other, (long long)r->n);
    return st;
}

/* The optional `form` of row m (`in` names it) into *form: nn when
 * absent. */
static mrt_status row_form(const mrt_yaml_doc *d, const yaml_node_t *m,
                           const char *in, int *form)
{
    char w[MRT_YAML_QUOTE_MAX + 32];
    const yaml_node_t *f = mrt_yaml_get(d, m, "form");
    const char *s = f ? mrt_yaml_str(f) : NULL;
    *form = f ? -1 : MRT_GEMM_NN;
    for (int i = 0; s && i < MRT_GEMM_FORM_COUNT; i++)
        if (strcmp(s, form_name[i]) == 0)
            *form = i;
    if (*form < 0)
        return mrt_yaml_fail(d, f,
                             "'form' of %s must be nn, nt, tn or tt, got %s",
                             in, mrt_yaml_what(f, w, sizeof w));
    return MRT_OK;
}

static mrt_status gemm_row(const mrt_yaml_doc *d, const yaml_node_t *m,
                           void *row)
{
    mrt_gemm_row *r = row;
    mrt_status st = all_keys(d, m, gemm_keys, 4, "a gemm row");
    if (!st)
        st = mrt_yaml_count_max(d, mrt_yaml_get(d, m, "n"), "'n' of a gemm row",
                                1 << 20, &r->n);
    if (!st)
        st = bounded(d, mrt_yaml_get(d, m, "gflops"), "'gflops' of a gemm row",
                     MRT_PROFILE_RATE_MAX, 1e9, &r->flops);
    if (!st)
        st = row_form(d, m, "a gemm row", &r->form);
    if (!st)
        st = row_dtype(d, m, "a gemm row", &r->dtype);
    if (!st)
        st = thin_side(d, m, r);
    return st;
}

static mrt_status product_row(const mrt_yaml_doc *d, const yaml_node_t *m,
                              void *row)
{
    mrt_product_row *r = row;
    mrt_status st = all_keys(d, m, product_keys, 3, "a products row");
    static const char *const side[] = {"m", "n", "k"};
    int64_t *len[] = {&r->m, &r->n, &r->k};
    for (int i = 0; i < 3 && !st; i++) {
        char what[32];
        snprintf(what, sizeof what, "'%s' of a products row", side[i]);
        st = mrt_yaml_count_max(d, mrt_yaml_get(d, m, side[i]), what, 1 << 24,
                                len[i]);
    }
    if (!st)
        st = bounded(d, mrt_yaml_get(d, m, "gflops"),
                     "'gflops' of a products row", MRT_PROFILE_RATE_MAX, 1e9,
                     &r->flops);
    if (!st)
        st = row_form(d, m, "a products row", &r->form);
    if (!st)
        st = row_dtype(d, m, "a products row", &r->dtype);
    const yaml_node_t *c = st ? NULL : mrt_yaml_get(d, m, "c");
    const char *cs = c ? mrt_yaml_str(c) : NULL;
    if (c && cs && strcmp(cs, "columns") == 0)
        r->form += MRT_PRODUCT_C_COLS;
    else if (c && !(cs && strcmp(cs, "rows") == 0)) {
        char w[MRT_YAML_QUOTE_MAX + 32];
        return mrt_yaml_fail(d, c,
                             "'c' of a products row must be rows or columns "
                             "(how C is stored), got %s",
                             mrt_yaml_what(c, w, sizeof w));
    }
    return st;
}

/* A function's name as the plan prints it: lower-case letters, digits
 * and '_', starting with a letter. */
static int fn_name(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n >= MRT_PROFILE_FN_MAX || s[0] < 'a' || s[0] > 'z')
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
              s[i] == '_'))
            return 0;
    return 1;
}

static mrt_status map_row(const mrt_yaml_doc *d, const yaml_node_t *m,
                          void *row)
{
    char w[MRT_YAML_QUOTE_MAX + 32];
    mrt_map_row *r = row;
    mrt_status st = all_keys(d, m, map_keys, 1, "a map row");
    const yaml_node_t *f = st ? NULL : mrt_yaml_get(d, m, "fn");
    const char *s = f ? mrt_yaml_str(f) : NULL;
    if (!st && !fn_name(s))
        return mrt_yaml_fail(d, f,
                             "'fn' of a map row must be a function's name "
                             "(lower-case letters, digits and '_', at most "
                             "%d), got %s",
                             MRT_PROFILE_FN_MAX - 1,
                             mrt_yaml_what(f, w, sizeof w));
    if (!st)
        snprintf(r->fn, sizeof r->fn, "%s", s);
    if (!st)
        st = mrt_yaml_size(d, mrt_yaml_get(d, m, "elements"),
                           "'elements' of a map row", &r->elements);
    if (!st)
        st = bounded(d, mrt_yaml_get(d, m, "ns_per_element"),
                     "'ns_per_element' of a map row", 1 / MRT_PROFILE_RATE_MIN,
                     1e-9, &r->s_per_elem);
    if (!st)
        st = row_dtype(d, m, "a map row", &r->dtype);
    return st;
}

static mrt_status coll_row_any(const mrt_yaml_doc *d, const yaml_node_t *m,
                               void *row)
{
    return coll_row(d, m, row);
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
    if (x->dtype != y->dtype)
        return x->dtype - y->dtype; /* float32 first */
    if (x->thin != y->thin)
        return x->thin - y->thin; /* cubes first */
    if (x->form != y->form)
        return x->form - y->form;
    return (x->n > y->n) - (x->n < y->n);
}

static int by_shape(const void *a, const void *b)
{
    const mrt_product_row *x = a, *y = b;
    if (x->dtype != y->dtype)
        return x->dtype - y->dtype; /* float32 first */
    if (x->form != y->form)
        return x->form - y->form;
    if (x->m != y->m)
        return x->m < y->m ? -1 : 1;
    if (x->n != y->n)
        return x->n < y->n ? -1 : 1;
    return (x->k > y->k) - (x->k < y->k);
}

const mrt_product_row *mrt_profile_product(const mrt_profile *p, int t,
                                           int form, int64_t m, int64_t n,
                                           int64_t k)
{
    mrt_product_row key = {.m = m, .n = n, .k = k, .form = form, .dtype = t};
    return bsearch(&key, p->prod, (size_t)p->nprod, sizeof key, by_shape);
}

int mrt_profile_set_product(mrt_profile *p, mrt_product_row r)
{
    mrt_product_row *had = (mrt_product_row *)mrt_profile_product(
        p, r.dtype, r.form, r.m, r.n, r.k);
    if (had) {
        had->flops = r.flops;
        return 1;
    }
    if (p->nprod >= MRT_PROFILE_PRODUCT_ROWS)
        return 0;
    p->prod[p->nprod++] = r;
    qsort(p->prod, (size_t)p->nprod, sizeof r, by_shape);
    return 1;
}

static int by_fn(const void *a, const void *b)
{
    const mrt_map_row *x = a, *y = b;
    int c = strcmp(x->fn, y->fn);
    if (c)
        return c;
    if (x->dtype != y->dtype)
        return x->dtype - y->dtype; /* float32 first */
    return (x->elements > y->elements) - (x->elements < y->elements);
}

/* How one list of rows is read and kept. */
typedef struct row_list {
    const char *key;
    mrt_status (*read)(const mrt_yaml_doc *, const yaml_node_t *, void *);
    int (*order)(const void *, const void *);
    size_t size; /* of a row */
    int max;     /* rows */
} row_list;

/* The items of sequence l->key of root, each read by l->read into rows;
 * *count of them, sorted. */
static mrt_status load_list(const mrt_yaml_doc *d, const yaml_node_t *root,
                            const row_list *l, int *count, void *rows)
{
    const yaml_node_t *seq = mrt_yaml_get(d, root, l->key);
    if (!seq)
        return MRT_OK;
    char in[64];
    snprintf(in, sizeof in, "'%s'", l->key);
    mrt_status st = mrt_yaml_expect(d, seq, YAML_SEQUENCE_NODE, in);
    int n = st ? 0 : mrt_yaml_count(seq);
    if (!st && n > l->max)
        return mrt_yaml_fail(d, seq, "%s has %d rows, at most %d", in, n,
                             l->max);
    for (int i = 0; !st && i < n; i++)
        st = l->read(d, mrt_yaml_item(d, seq, i),
                     (char *)rows + (size_t)i * l->size);
    if (!st) {
        *count = n;
        qsort(rows, (size_t)n, l->size, l->order);
    }
    return st;
}

void mrt_profile_sort_rows(mrt_profile *p)
{
    qsort(p->coll, (size_t)p->ncoll, sizeof p->coll[0], by_coll);
    qsort(p->gemm, (size_t)p->ngemm, sizeof p->gemm[0], by_n);
    qsort(p->prod, (size_t)p->nprod, sizeof p->prod[0], by_shape);
    qsort(p->map, (size_t)p->nmap, sizeof p->map[0], by_fn);
}

mrt_status mrt_profile_load_rows(const struct mrt_yaml_doc *d,
                                 const struct yaml_node_s *root, mrt_profile *p)
{
    static const row_list colls = {"collectives", coll_row_any, by_coll,
                                   sizeof(mrt_coll_row), MRT_PROFILE_ROWS};
    static const row_list gemms = {"gemm", gemm_row, by_n, sizeof(mrt_gemm_row),
                                   MRT_PROFILE_GEMM_ROWS};
    static const row_list prods = {"products", product_row, by_shape,
                                   sizeof(mrt_product_row),
                                   MRT_PROFILE_PRODUCT_ROWS};
    static const row_list maps = {"maps", map_row, by_fn, sizeof(mrt_map_row),
                                  MRT_PROFILE_MAP_ROWS};
    int64_t v;
    mrt_status st = load_list(d, root, &colls, &p->ncoll, p->coll);
    if (!st)
        st = load_list(d, root, &gemms, &p->ngemm, p->gemm);
    if (!st)
        st = load_list(d, root, &prods, &p->nprod, p->prod);
    for (int i = 1; !st && i < p->nprod; i++)
        if (!by_shape(&p->prod[i - 1], &p->prod[i]))
            st = mrt_yaml_fail(d, mrt_yaml_get(d, root, "products"),
                               "'products' lists %lld x %lld x %lld (%s) "
                               "twice",
                               (long long)p->prod[i].m, (long long)p->prod[i].n,
                               (long long)p->prod[i].k,
                               form_name[p->prod[i].form & 3]);
    if (!st)
        st = load_list(d, root, &maps, &p->nmap, p->map);
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
    for (int i = 0; i < p->ngemm; i++) {
        const mrt_gemm_row *g = &p->gemm[i];
        /* (float32 nn rows as before the keys existed) */
        char thin[64] = "";
        if (g->thin != MRT_GEMM_CUBE)
            snprintf(thin, sizeof thin, ", thin: %s, other: %lld",
                     thin_name[g->thin], (long long)g->other);
        fprintf(f, "  - {n: %lld%s%s%s%s, gflops: %.4g}\n", (long long)g->n,
                thin, g->form == MRT_GEMM_NN ? "" : ", form: ",
                g->form == MRT_GEMM_NN ? "" : form_name[g->form],
                g->dtype == MRT_F64 ? ", dtype: float64" : "", g->flops / 1e9);
    }
    if (p->nprod)
        fputs("products:\n", f);
    for (int i = 0; i < p->nprod; i++) {
        const mrt_product_row *r = &p->prod[i];
        fprintf(f,
                "  - {m: %lld, n: %lld, k: %lld, form: %s%s%s, gflops: %.4g}\n",
                (long long)r->m, (long long)r->n, (long long)r->k,
                form_name[r->form & 3],
                r->form & MRT_PRODUCT_C_COLS ? ", c: columns" : "",
                r->dtype == MRT_F64 ? ", dtype: float64" : "", r->flops / 1e9);
    }
    if (p->nmap)
        fputs("maps:\n", f);
    for (int i = 0; i < p->nmap; i++)
        fprintf(f, "  - {fn: %s%s, elements: %lld, ns_per_element: %.4g}\n",
                p->map[i].fn,
                p->map[i].dtype == MRT_F64 ? ", dtype: float64" : "",
                (long long)p->map[i].elements, p->map[i].s_per_elem * 1e9);
    if (p->ncoll)
        fputs("collectives:\n", f);
    for (int i = 0; i < p->ncoll; i++)
        fprintf(f, "  - {kind: %s, group: %lld, bytes: %lld, time_us: %.4g}\n",
                coll_kind[p->coll[i].kind], (long long)p->coll[i].group,
                (long long)p->coll[i].bytes, p->coll[i].time_s * 1e6);
}
