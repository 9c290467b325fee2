/*
 * yaml_node.c — the nodes of a loaded YAML document, checked and read
 * with the error wording every YAML file of meshrt shares (yaml_node.h).
 *
 * Keys are checked in file order, each against the valid list and then
 * against the keys before it: by a scan in a small mapping (an op's
 * keys), through a name index in a larger one (`tensors:` or `dims:` of
 * a long program), so checking a mapping stays linear in its size.
 */
#include "yaml_node.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "name_index.h"
#include "work.h"

mrt_mark mrt_yaml_mark(const yaml_node_t *n)
{
    mrt_mark m = {0, 0};
    if (n) {
        m.line = (int)n->start_mark.line + 1;
        m.column = (int)n->start_mark.column + 1;
    }
    return m;
}

yaml_node_t *mrt_yaml_node(const mrt_yaml_doc *d, int index)
{
    return yaml_document_get_node(d->doc, index);
}

yaml_node_t *mrt_yaml_item(const mrt_yaml_doc *d, const yaml_node_t *seq, int i)
{
    return mrt_yaml_node(d, seq->data.sequence.items.start[i]);
}

const char *mrt_yaml_str(const yaml_node_t *n)
{
    if (!n || n->type != YAML_SCALAR_NODE)
        return NULL;
    const char *s = (const char *)n->data.scalar.value;
    return strlen(s) == n->data.scalar.length ? s : NULL;
}

mrt_status mrt_yaml_vfail(const mrt_yaml_doc *d, const yaml_node_t *n,
                          const char *fmt, va_list ap)
{
    char msg[sizeof d->err->message];
    vsnprintf(msg, sizeof msg, fmt, ap);
    return mrt_error_set(d->err, MRT_E_SPEC, d->path, mrt_yaml_mark(n), "%s",
                         msg);
}

mrt_status mrt_yaml_fail(const mrt_yaml_doc *d, const yaml_node_t *n,
                         const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mrt_status st = mrt_yaml_vfail(d, n, fmt, ap);
    va_end(ap);
    return st;
}

mrt_status mrt_yaml_nomem(const mrt_yaml_doc *d)
{
    mrt_mark none = {0, 0};
    return mrt_error_set(d->err, MRT_E_NOMEM, d->path, none, "out of memory");
}

int mrt_yaml_is_null(const yaml_node_t *n)
{
    if (!n || n->type != YAML_SCALAR_NODE ||
        n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return 0;
    const char *s = (const char *)n->data.scalar.value;
    return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
           !strcmp(s, "NULL");
}

const char *mrt_yaml_quote(const yaml_node_t *n, char *buf, size_t size)
{
    if (!n || n->type != YAML_SCALAR_NODE) {
        snprintf(buf, size, "?");
        return buf;
    }
    size_t len = n->data.scalar.length;
    if (len > MRT_YAML_QUOTE_MAX)
        snprintf(buf, size, "%.*s...", MRT_YAML_QUOTE_MAX,
                 (const char *)n->data.scalar.value);
    else
        snprintf(buf, size, "%s", (const char *)n->data.scalar.value);
    return buf;
}

const char *mrt_yaml_what(const yaml_node_t *n, char *buf, size_t size)
{
    char q[MRT_YAML_QUOTE_MAX + 8];
    if (!n)
        snprintf(buf, size, "nothing");
    else if (n->type == YAML_MAPPING_NODE)
        snprintf(buf, size, "a mapping");
    else if (n->type == YAML_SEQUENCE_NODE)
        snprintf(buf, size, "a sequence");
    else if (n->type != YAML_SCALAR_NODE)
        snprintf(buf, size, "nothing");
    else if (mrt_yaml_is_null(n))
        snprintf(buf, size, "nothing");
    else if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        snprintf(buf, size, "the string '%s'", mrt_yaml_quote(n, q, sizeof q));
    else
        snprintf(buf, size, "'%s'", mrt_yaml_quote(n, q, sizeof q));
    return buf;
}

static const char *type_name(yaml_node_type_t t)
{
    return t == YAML_MAPPING_NODE    ? "a mapping"
           : t == YAML_SEQUENCE_NODE ? "a sequence"
                                     : "a single value";
}

mrt_status mrt_yaml_expect(const mrt_yaml_doc *d, const yaml_node_t *n,
                           yaml_node_type_t type, const char *for_what)
{
    char what[MRT_YAML_QUOTE_MAX + 32];
    if (n && n->type == type &&
        !(type == YAML_SCALAR_NODE && mrt_yaml_is_null(n)))
        return MRT_OK;
    return mrt_yaml_fail(d, n, "expected %s for %s, got %s", type_name(type),
                         for_what, mrt_yaml_what(n, what, sizeof what));
}

static int key_is(const yaml_node_t *k, const char *s)
{
    /* as !strcmp(mrt_yaml_str(k), s), without measuring every key */
    size_t n = strlen(s);
    return k && k->type == YAML_SCALAR_NODE && k->data.scalar.length == n &&
           !memcmp(k->data.scalar.value, s, n);
}

/* The keys of one mapping, for the index of its keys. */
typedef struct key_list {
    const mrt_yaml_doc *d;
    const yaml_node_t *map;
} key_list;

static const char *key_name(const void *ctx, int i)
{
    const key_list *kl = ctx;
    return mrt_yaml_str(
        mrt_yaml_node(kl->d, kl->map->data.mapping.pairs.start[i].key));
}

/* The largest mapping scanned for duplicate keys one pair at a time. */
#define SCAN_KEYS_MAX 16

/* The earlier key equal to pair's, or NULL.  ix (NULL: scan) indexes the
 * keys before pair. */
static const yaml_node_t *earlier_key(const mrt_yaml_doc *d,
                                      const yaml_node_t *map,
                                      const yaml_node_pair_t *pair,
                                      const mrt_name_index *ix)
{
    const char *name = mrt_yaml_str(mrt_yaml_node(d, pair->key));
    if (ix) {
        key_list kl = {d, map};
        int i = mrt_name_index_find(ix, name, key_name, &kl);
        return i < 0 ? NULL
                     : mrt_yaml_node(d, map->data.mapping.pairs.start[i].key);
    }
    for (const yaml_node_pair_t *e = map->data.mapping.pairs.start; e < pair;
         e++) {
        const yaml_node_t *first = mrt_yaml_node(d, e->key);
        MRT_WORK(1);
        if (key_is(first, name))
            return first;
    }
    return NULL;
}

static mrt_status check_key(const mrt_yaml_doc *d, const yaml_node_t *map,
                            const yaml_node_pair_t *pair,
                            const char *const *valid, const char *in,
                            const mrt_name_index *ix)
{
    char q[MRT_YAML_QUOTE_MAX + 8], what[MRT_YAML_QUOTE_MAX + 32];
    const yaml_node_t *k = mrt_yaml_node(d, pair->key);
    if (!mrt_yaml_str(k) || mrt_yaml_is_null(k))
        return mrt_yaml_fail(d, k, "expected a name as a key in %s, got %s", in,
                             mrt_yaml_what(k, what, sizeof what));
    if (valid) {
        int ok = 0;
        for (int i = 0; valid[i] && !ok; i++)
            ok = key_is(k, valid[i]);
        char list[MRT_YAML_LIST_MAX] = ""; /* the message's, when it fails */
        for (int i = 0; !ok && valid[i]; i++) {
            size_t n = strlen(list);
            snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "",
                     valid[i]);
        }
        if (!ok)
            return mrt_yaml_fail(d, k, "unknown key '%s' in %s (expected: %s)",
                                 mrt_yaml_quote(k, q, sizeof q), in, list);
    }
    const yaml_node_t *first = earlier_key(d, map, pair, ix);
    if (first) {
        mrt_mark at = mrt_yaml_mark(first);
        return mrt_yaml_fail(d, k, "duplicate key '%s' in %s (first at %d:%d)",
                             mrt_yaml_quote(k, q, sizeof q), in, at.line,
                             at.column);
    }
    return MRT_OK;
}

mrt_status mrt_yaml_check_keys(const mrt_yaml_doc *d, const yaml_node_t *map,
                               const char *const *valid, const char *in)
{
    mrt_name_index index = {0},
                   *ix = mrt_yaml_count(map) > SCAN_KEYS_MAX ? &index : NULL;
    key_list kl = {d, map};
    mrt_status st = MRT_OK;
    for (const yaml_node_pair_t *pr = map->data.mapping.pairs.start;
         !st && pr < map->data.mapping.pairs.top; pr++) {
        st = check_key(d, map, pr, valid, in, ix);
        if (!st && ix &&
            mrt_name_index_add(ix, mrt_yaml_str(mrt_yaml_node(d, pr->key)),
                               (int)(pr - map->data.mapping.pairs.start),
                               key_name, &kl))
            st = mrt_yaml_nomem(d);
    }
    mrt_name_index_free(&index);
    return st;
}

yaml_node_t *mrt_yaml_get(const mrt_yaml_doc *d, const yaml_node_t *map,
                          const char *key)
{
    for (const yaml_node_pair_t *pr = map->data.mapping.pairs.start;
         pr < map->data.mapping.pairs.top; pr++)
        if (key_is(mrt_yaml_node(d, pr->key), key))
            return mrt_yaml_node(d, pr->value);
    return NULL;
}

int mrt_yaml_count(const yaml_node_t *n)
{
    if (n && n->type == YAML_MAPPING_NODE)
        return (int)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
    if (n && n->type == YAML_SEQUENCE_NODE)
        return (int)(n->data.sequence.items.top - n->data.sequence.items.start);
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

int mrt_yaml_name_ok(const char *s, size_t len)
{
    return len < MRT_NAME_MAX && strlen(s) == len && name_chars_ok(s, len);
}

mrt_status mrt_yaml_name(const mrt_yaml_doc *d, const yaml_node_t *n,
                         const char *kind, char out[MRT_NAME_MAX])
{
    char q[MRT_YAML_QUOTE_MAX + 8], what[MRT_YAML_QUOTE_MAX + 32];
    if (!n || n->type != YAML_SCALAR_NODE || mrt_yaml_is_null(n))
        return mrt_yaml_fail(d, n, "expected a %s name, got %s", kind,
                             mrt_yaml_what(n, what, sizeof what));
    const char *s = (const char *)n->data.scalar.value;
    size_t len = n->data.scalar.length;
    if (len >= MRT_NAME_MAX && strlen(s) == len && name_chars_ok(s, len))
        return mrt_yaml_fail(d, n,
                             "%s name '%s' is too long (at most %d "
                             "characters)",
                             kind, mrt_yaml_quote(n, q, sizeof q),
                             MRT_NAME_MAX - 1);
    if (!mrt_yaml_name_ok(s, len))
        return mrt_yaml_fail(d, n,
                             "invalid %s name '%s' (a name starts with "
                             "a letter or '_' and has only letters, digits "
                             "and '_')",
                             kind, mrt_yaml_quote(n, q, sizeof q));
    memcpy(out, s, len + 1);
    return MRT_OK;
}

int mrt_yaml_parse_u64(const char *s, size_t len, uint64_t *out)
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
static mrt_status integer(const mrt_yaml_doc *d, const yaml_node_t *n,
                          const char *what, const char *must, uint64_t max,
                          uint64_t *out)
{
    char q[MRT_YAML_QUOTE_MAX + 32];
    int bad = 1;
    if (n && n->type == YAML_SCALAR_NODE &&
        n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
        bad = mrt_yaml_parse_u64((const char *)n->data.scalar.value,
                                 n->data.scalar.length, out);
    if (bad == 0 && *out > max)
        bad = 2;
    if (bad == 2)
        return mrt_yaml_fail(d, n, "%s is too large: %s (at most %llu)", what,
                             mrt_yaml_quote(n, q, sizeof q),
                             (unsigned long long)max);
    if (bad)
        return mrt_yaml_fail(d, n, "%s must be %s, got %s", what, must,
                             mrt_yaml_what(n, q, sizeof q));
    return MRT_OK;
}

mrt_status mrt_yaml_size(const mrt_yaml_doc *d, const yaml_node_t *n,
                         const char *what, int64_t *out)
{
    uint64_t v = 0;
    char q[MRT_YAML_QUOTE_MAX + 32];
    mrt_status st = integer(d, n, what, "a positive integer", INT64_MAX, &v);
    if (st)
        return st;
    if (v == 0)
        return mrt_yaml_fail(d, n, "%s must be a positive integer, got %s",
                             what, mrt_yaml_what(n, q, sizeof q));
    *out = (int64_t)v;
    return MRT_OK;
}

mrt_status mrt_yaml_uint(const mrt_yaml_doc *d, const yaml_node_t *n,
                         const char *what, uint64_t *out)
{
    return integer(d, n, what, "an integer >= 0", UINT64_MAX, out);
}

mrt_status mrt_yaml_nonneg(const mrt_yaml_doc *d, const yaml_node_t *n,
                           const char *what, int64_t *out)
{
    uint64_t v = 0;
    mrt_status st = integer(d, n, what, "an integer >= 0", INT64_MAX, &v);
    if (!st)
        *out = (int64_t)v;
    return st;
}

int mrt_yaml_finite(const yaml_node_t *n, double *out)
{
    if (!n || n->type != YAML_SCALAR_NODE ||
        n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE || mrt_yaml_is_null(n))
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

mrt_status mrt_yaml_number(const mrt_yaml_doc *d, const yaml_node_t *n,
                           const char *what, double *out)
{
    char q[MRT_YAML_QUOTE_MAX + 32];
    if (mrt_yaml_finite(n, out))
        return MRT_OK;
    return mrt_yaml_fail(d, n, "%s must be a finite number, got %s", what,
                         mrt_yaml_what(n, q, sizeof q));
}

mrt_status mrt_yaml_count_max(const mrt_yaml_doc *d, const yaml_node_t *n,
                              const char *what, int64_t max, int64_t *out)
{
    int64_t v = 0;
    char q[MRT_YAML_QUOTE_MAX + 32];
    mrt_status st = mrt_yaml_size(d, n, what, &v);
    if (!st && v > max)
        st = mrt_yaml_fail(d, n, "%s is too large: %s (at most %lld)", what,
                           mrt_yaml_quote(n, q, sizeof q), (long long)max);
    if (!st)
        *out = v;
    return st;
}

mrt_status mrt_yaml_positive(const mrt_yaml_doc *d, const yaml_node_t *n,
                             const char *what, double *out)
{
    char q[MRT_YAML_QUOTE_MAX + 32];
    double v = 0;
    if (mrt_yaml_finite(n, &v) && v > 0) {
        *out = v;
        return MRT_OK;
    }
    return mrt_yaml_fail(d, n, "%s must be a positive number, got %s", what,
                         mrt_yaml_what(n, q, sizeof q));
}
