/*
 * spec_yaml.c — the spec parser's view of libyaml nodes: positions,
 * type checks, keys, names and numbers, each with the error wording
 * every pass shares ("expected a mapping for 'mesh', got a sequence").
 *
 * libyaml's marks are zero-based; mrt_spec_mark is the one place that
 * makes them 1-based.  Numbers must be plain (unquoted) scalars: "4" in
 * quotes is a string in YAML, and we say so rather than guess.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "name_index.h"
#include "spec_parse.h"
#include "work.h"

mrt_mark mrt_spec_mark(const yaml_node_t *n)
{
    mrt_mark m = {0, 0};
    if (n) {
        m.line = (int)n->start_mark.line + 1;
        m.column = (int)n->start_mark.column + 1;
    }
    return m;
}

yaml_node_t *mrt_spec_node(const mrt_spec_parser *p, int index)
{
    return yaml_document_get_node(p->doc, index);
}

yaml_node_t *mrt_spec_item(const mrt_spec_parser *p, const yaml_node_t *seq,
                           int i)
{
    return mrt_spec_node(p, seq->data.sequence.items.start[i]);
}

const char *mrt_spec_str(const yaml_node_t *n)
{
    if (!n || n->type != YAML_SCALAR_NODE)
        return NULL;
    const char *s = (const char *)n->data.scalar.value;
    return strlen(s) == n->data.scalar.length ? s : NULL;
}

mrt_status mrt_spec_fail(const mrt_spec_parser *p, const yaml_node_t *n,
                         const char *fmt, ...)
{
    char msg[sizeof p->err->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return mrt_error_set(p->err, MRT_E_SPEC, p->spec->path, mrt_spec_mark(n),
                         "%s", msg);
}

mrt_status mrt_spec_nomem(const mrt_spec_parser *p)
{
    mrt_mark none = {0, 0};
    return mrt_error_set(p->err, MRT_E_NOMEM, p->spec->path, none,
                         "out of memory");
}

int mrt_spec_is_null(const yaml_node_t *n)
{
    if (!n || n->type != YAML_SCALAR_NODE ||
        n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return 0;
    const char *s = (const char *)n->data.scalar.value;
    return !*s || !strcmp(s, "~") || !strcmp(s, "null") ||
           !strcmp(s, "Null") || !strcmp(s, "NULL");
}

const char *mrt_spec_quote(const yaml_node_t *n, char *buf, size_t size)
{
    if (!n || n->type != YAML_SCALAR_NODE) {
        snprintf(buf, size, "?");
        return buf;
    }
    size_t len = n->data.scalar.length;
    if (len > MRT_SPEC_QUOTE_MAX)
        snprintf(buf, size, "%.*s...", MRT_SPEC_QUOTE_MAX,
                 (const char *)n->data.scalar.value);
    else
        snprintf(buf, size, "%s", (const char *)n->data.scalar.value);
    return buf;
}

const char *mrt_spec_what(const yaml_node_t *n, char *buf, size_t size)
{
    char q[MRT_SPEC_QUOTE_MAX + 8];
    if (!n)
        snprintf(buf, size, "nothing");
    else if (n->type == YAML_MAPPING_NODE)
        snprintf(buf, size, "a mapping");
    else if (n->type == YAML_SEQUENCE_NODE)
        snprintf(buf, size, "a sequence");
    else if (n->type != YAML_SCALAR_NODE)
        snprintf(buf, size, "nothing");
    else if (mrt_spec_is_null(n))
        snprintf(buf, size, "nothing");
    else if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        snprintf(buf, size, "the string '%s'", mrt_spec_quote(n, q, sizeof q));
    else
        snprintf(buf, size, "'%s'", mrt_spec_quote(n, q, sizeof q));
    return buf;
}

static const char *type_name(yaml_node_type_t t)
{
    return t == YAML_MAPPING_NODE    ? "a mapping"
           : t == YAML_SEQUENCE_NODE ? "a sequence"
                                     : "a single value";
}

mrt_status mrt_spec_expect(const mrt_spec_parser *p, const yaml_node_t *n,
                           yaml_node_type_t type, const char *for_what)
{
    char what[MRT_SPEC_QUOTE_MAX + 32];
    if (n && n->type == type &&
        !(type == YAML_SCALAR_NODE && mrt_spec_is_null(n)))
        return MRT_OK;
    return mrt_spec_fail(p, n, "expected %s for %s, got %s", type_name(type),
                         for_what, mrt_spec_what(n, what, sizeof what));
}

static int key_is(const yaml_node_t *k, const char *s)
{
    /* as !strcmp(mrt_spec_str(k), s), without measuring every key */
    size_t n = strlen(s);
    return k && k->type == YAML_SCALAR_NODE && k->data.scalar.length == n &&
           !memcmp(k->data.scalar.value, s, n);
}

/* The keys of one mapping, for the index of its keys. */
typedef struct key_list {
    const mrt_spec_parser *p;
    const yaml_node_t *map;
} key_list;

static const char *key_name(const void *ctx, int i)
{
    const key_list *kl = ctx;
    return mrt_spec_str(mrt_spec_node(kl->p,
                                      kl->map->data.mapping.pairs.start[i].key));
}

/* Small mappings (an op's keys) are searched for duplicates by a scan;
 * larger ones (`tensors:`, `dims:` of a long program) through an index,
 * so checking a mapping stays linear in its size. */
#define SCAN_KEYS_MAX 16

/* The earlier key equal to pair's, or NULL.  ix (NULL: scan) indexes the
 * keys before pair. */
static const yaml_node_t *earlier_key(const mrt_spec_parser *p,
                                      const yaml_node_t *map,
                                      const yaml_node_pair_t *pair,
                                      const mrt_name_index *ix)
{
    const char *name = mrt_spec_str(mrt_spec_node(p, pair->key));
    if (ix) {
        key_list kl = {p, map};
        int i = mrt_name_index_find(ix, name, key_name, &kl);
        return i < 0 ? NULL
                     : mrt_spec_node(p, map->data.mapping.pairs.start[i].key);
    }
    for (const yaml_node_pair_t *e = map->data.mapping.pairs.start;
         e < pair; e++) {
        const yaml_node_t *first = mrt_spec_node(p, e->key);
        MRT_WORK(1);
        if (key_is(first, name))
            return first;
    }
    return NULL;
}

static mrt_status check_key(const mrt_spec_parser *p, const yaml_node_t *map,
                            const yaml_node_pair_t *pair,
                            const char *const *valid, const char *in,
                            const mrt_name_index *ix)
{
    char q[MRT_SPEC_QUOTE_MAX + 8], what[MRT_SPEC_QUOTE_MAX + 32];
    const yaml_node_t *k = mrt_spec_node(p, pair->key);
    if (!mrt_spec_str(k) || mrt_spec_is_null(k))
        return mrt_spec_fail(p, k, "expected a name as a key in %s, got %s",
                             in, mrt_spec_what(k, what, sizeof what));
    if (valid) {
        int ok = 0;
        for (int i = 0; valid[i] && !ok; i++)
            ok = key_is(k, valid[i]);
        char list[MRT_SPEC_LIST_MAX] = ""; /* the message's, when it fails */
        for (int i = 0; !ok && valid[i]; i++) {
            size_t n = strlen(list);
            snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "",
                     valid[i]);
        }
        if (!ok)
            return mrt_spec_fail(p, k, "unknown key '%s' in %s (expected: %s)",
                                 mrt_spec_quote(k, q, sizeof q), in, list);
    }
    const yaml_node_t *first = earlier_key(p, map, pair, ix);
    if (first) {
        mrt_mark at = mrt_spec_mark(first);
        return mrt_spec_fail(p, k, "duplicate key '%s' in %s (first at %d:%d)",
                             mrt_spec_quote(k, q, sizeof q), in, at.line,
                             at.column);
    }
    return MRT_OK;
}

mrt_status mrt_spec_check_keys(const mrt_spec_parser *p,
                               const yaml_node_t *map,
                               const char *const *valid, const char *in)
{
    mrt_name_index index = {0}, *ix =
        mrt_spec_count(map) > SCAN_KEYS_MAX ? &index : NULL;
    key_list kl = {p, map};
    mrt_status st = MRT_OK;
    for (const yaml_node_pair_t *pr = map->data.mapping.pairs.start;
         !st && pr < map->data.mapping.pairs.top; pr++) {
        st = check_key(p, map, pr, valid, in, ix);
        if (!st && ix &&
            mrt_name_index_add(ix, mrt_spec_str(mrt_spec_node(p, pr->key)),
                               (int)(pr - map->data.mapping.pairs.start),
                               key_name, &kl))
            st = mrt_spec_nomem(p);
    }
    mrt_name_index_free(&index);
    return st;
}

yaml_node_t *mrt_spec_get(const mrt_spec_parser *p, const yaml_node_t *map,
                          const char *key)
{
    for (const yaml_node_pair_t *pr = map->data.mapping.pairs.start;
         pr < map->data.mapping.pairs.top; pr++)
        if (key_is(mrt_spec_node(p, pr->key), key))
            return mrt_spec_node(p, pr->value);
    return NULL;
}

int mrt_spec_count(const yaml_node_t *n)
{
    if (n && n->type == YAML_MAPPING_NODE)
        return (int)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
    if (n && n->type == YAML_SEQUENCE_NODE)
        return (int)(n->data.sequence.items.top -
                     n->data.sequence.items.start);
    return 0;
}

/* 1 if s[0..len) has only name characters and no NUL. */
static int name_chars_ok(const char *s, size_t len)
{
    if (len == 0 || strlen(s) < len)
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        int alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    c == '_';
        if (!alpha && (i == 0 || c < '0' || c > '9'))
            return 0;
    }
    return 1;
}

int mrt_spec_name_ok(const char *s, size_t len)
{
    return len < MRT_NAME_MAX && strlen(s) == len && name_chars_ok(s, len);
}

mrt_status mrt_spec_name(const mrt_spec_parser *p, const yaml_node_t *n,
                         const char *kind, char out[MRT_NAME_MAX])
{
    char q[MRT_SPEC_QUOTE_MAX + 8], what[MRT_SPEC_QUOTE_MAX + 32];
    if (!n || n->type != YAML_SCALAR_NODE || mrt_spec_is_null(n))
        return mrt_spec_fail(p, n, "expected a %s name, got %s", kind,
                             mrt_spec_what(n, what, sizeof what));
    const char *s = (const char *)n->data.scalar.value;
    size_t len = n->data.scalar.length;
    if (len >= MRT_NAME_MAX && strlen(s) == len && name_chars_ok(s, len))
        return mrt_spec_fail(p, n, "%s name '%s' is too long (at most %d "
                             "characters)", kind,
                             mrt_spec_quote(n, q, sizeof q), MRT_NAME_MAX - 1);
    if (!mrt_spec_name_ok(s, len))
        return mrt_spec_fail(p, n, "invalid %s name '%s' (a name starts with "
                             "a letter or '_' and has only letters, digits "
                             "and '_')", kind, mrt_spec_quote(n, q, sizeof q));
    memcpy(out, s, len + 1);
    return MRT_OK;
}

int mrt_spec_parse_u64(const char *s, size_t len, uint64_t *out)
{
    uint64_t v = 0;
    if (len == 0)
        return 1;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 1;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return 2;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

/* The digits of a plain scalar, or an error naming what it is instead. */
static mrt_status integer(const mrt_spec_parser *p, const yaml_node_t *n,
                          const char *what, const char *must, uint64_t max,
                          uint64_t *out)
{
    char q[MRT_SPEC_QUOTE_MAX + 32];
    int bad = 1;
    if (n && n->type == YAML_SCALAR_NODE &&
        n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
        bad = mrt_spec_parse_u64((const char *)n->data.scalar.value,
                                 n->data.scalar.length, out);
    if (bad == 0 && *out > max)
        bad = 2;
    if (bad == 2)
        return mrt_spec_fail(p, n, "%s is too large: %s (at most %llu)", what,
                             mrt_spec_quote(n, q, sizeof q),
                             (unsigned long long)max);
    if (bad)
        return mrt_spec_fail(p, n, "%s must be %s, got %s", what, must,
                             mrt_spec_what(n, q, sizeof q));
    return MRT_OK;
}

mrt_status mrt_spec_size(const mrt_spec_parser *p, const yaml_node_t *n,
                         const char *what, int64_t *out)
{
    uint64_t v = 0;
    char q[MRT_SPEC_QUOTE_MAX + 32];
    mrt_status st = integer(p, n, what, "a positive integer", INT64_MAX, &v);
    if (st)
        return st;
    if (v == 0)
        return mrt_spec_fail(p, n, "%s must be a positive integer, got %s",
                             what, mrt_spec_what(n, q, sizeof q));
    *out = (int64_t)v;
    return MRT_OK;
}

mrt_status mrt_spec_uint(const mrt_spec_parser *p, const yaml_node_t *n,
                         const char *what, uint64_t *out)
{
    return integer(p, n, what, "an integer >= 0", UINT64_MAX, out);
}

mrt_status mrt_spec_nonneg(const mrt_spec_parser *p, const yaml_node_t *n,
                           const char *what, int64_t *out)
{
    uint64_t v = 0;
    mrt_status st = integer(p, n, what, "an integer >= 0", INT64_MAX, &v);
    if (!st)
        *out = (int64_t)v;
    return st;
}

/* 1 and the value if n is a plain scalar that reads as a finite number
 * (decimal digits, sign, point and exponent only: no "inf", no hex). */
static int finite_number(const yaml_node_t *n, double *out)
{
    if (!n || n->type != YAML_SCALAR_NODE ||
        n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE ||
        mrt_spec_is_null(n))
        return 0;
    const char *s = (const char *)n->data.scalar.value;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    int numeric = strspn(s, "+-0123456789.eE") == n->data.scalar.length;
    if (!numeric || end != s + n->data.scalar.length || !isfinite(v))
        return 0;
    *out = v;
    return 1;
}

mrt_status mrt_spec_number(const mrt_spec_parser *p, const yaml_node_t *n,
                           const char *what, double *out)
{
    char q[MRT_SPEC_QUOTE_MAX + 32];
    if (finite_number(n, out))
        return MRT_OK;
    return mrt_spec_fail(p, n, "%s must be a finite number, got %s", what,
                         mrt_spec_what(n, q, sizeof q));
}

mrt_status mrt_spec_count_max(const mrt_spec_parser *p, const yaml_node_t *n,
                              const char *what, int64_t max, int64_t *out)
{
    int64_t v = 0;
    char q[MRT_SPEC_QUOTE_MAX + 32];
    mrt_status st = mrt_spec_size(p, n, what, &v);
    if (!st && v > max)
        st = mrt_spec_fail(p, n, "%s is too large: %s (at most %lld)", what,
                           mrt_spec_quote(n, q, sizeof q), (long long)max);
    if (!st)
        *out = v;
    return st;
}

mrt_status mrt_spec_fits_dtype(const mrt_spec_parser *p, const yaml_node_t *n,
                               const char *what, double v)
{
    char q[MRT_SPEC_QUOTE_MAX + 32];
    if (p->spec->dtype != MRT_F32 || fabs(v) <= FLT_MAX)
        return MRT_OK;
    return mrt_spec_fail(p, n, "%s is out of float32's range: %s (at most "
                         "%.8g in magnitude; or use dtype: float64)", what,
                         mrt_spec_quote(n, q, sizeof q), (double)FLT_MAX);
}

mrt_status mrt_spec_positive(const mrt_spec_parser *p, const yaml_node_t *n,
                             const char *what, double *out)
{
    char q[MRT_SPEC_QUOTE_MAX + 32];
    double v = 0;
    if (finite_number(n, &v) && v > 0) {
        *out = v;
        return MRT_OK;
    }
    return mrt_spec_fail(p, n, "%s must be a positive number, got %s", what,
                         mrt_spec_what(n, q, sizeof q));
}

mrt_status mrt_spec_each_entry(mrt_spec_parser *p, const yaml_node_t *map,
                               const char *in, mrt_spec_entry_fn *entry)
{
    mrt_status st = mrt_spec_expect(p, map, YAML_MAPPING_NODE, in);
    if (!st)
        st = mrt_spec_check_keys(p, map, NULL, in);
    for (yaml_node_pair_t *pr = st ? NULL : map->data.mapping.pairs.start;
         !st && pr < map->data.mapping.pairs.top; pr++)
        st = entry(p, mrt_spec_node(p, pr->key), mrt_spec_node(p, pr->value));
    return st;
}
