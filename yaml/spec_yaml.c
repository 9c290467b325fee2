/*
 * spec_yaml.c — the spec parser's view of libyaml nodes: the helpers of
 * io/yaml_node.h (positions, type checks, keys, names and numbers, with
 * the wording every YAML file of meshrt shares), over the parser's
 * document, path and error; and the two that know the spec: a number
 * that must fit the spec's dtype, and a section of named entries.
 */
#include <float.h>
#include <math.h>
#include <stdarg.h>

#include "spec_parse.h"
#include "yaml_node.h"

_Static_assert(MRT_SPEC_QUOTE_MAX == MRT_YAML_QUOTE_MAX,
               "the builder and the YAML reader quote the same length");

/* The parser as io/yaml_node.h's document. */
static mrt_yaml_doc doc_of(const mrt_spec_parser *p)
{
    return (mrt_yaml_doc){p->doc, p->spec->path, p->err};
}

mrt_mark mrt_spec_mark(const yaml_node_t *n)
{
    return mrt_yaml_mark(n);
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
    return mrt_yaml_str(n);
}

mrt_status mrt_spec_fail(const mrt_spec_parser *p, const yaml_node_t *n,
                         const char *fmt, ...)
{
    mrt_yaml_doc d = doc_of(p);
    va_list ap;
    va_start(ap, fmt);
    mrt_status st = mrt_yaml_vfail(&d, n, fmt, ap);
    va_end(ap);
    return st;
}

mrt_status mrt_spec_nomem(const mrt_spec_parser *p)
{
    mrt_yaml_doc d = doc_of(p);
    return mrt_yaml_nomem(&d);
}

int mrt_spec_is_null(const yaml_node_t *n)
{
    return mrt_yaml_is_null(n);
}

const char *mrt_spec_quote(const yaml_node_t *n, char *buf, size_t size)
{
    return mrt_yaml_quote(n, buf, size);
}

const char *mrt_spec_what(const yaml_node_t *n, char *buf, size_t size)
{
    return mrt_yaml_what(n, buf, size);
}

mrt_status mrt_spec_expect(const mrt_spec_parser *p, const yaml_node_t *n,
                           yaml_node_type_t type, const char *for_what)
{
    mrt_yaml_doc d = doc_of(p);
    return mrt_yaml_expect(&d, n, type, for_what);
}

mrt_status mrt_spec_check_keys(const mrt_spec_parser *p, const yaml_node_t *map,
                               const char *const *valid, const char *in)
{
    mrt_yaml_doc d = doc_of(p);
    return mrt_yaml_check_keys(&d, map, valid, in);
}

yaml_node_t *mrt_spec_get(const mrt_spec_parser *p, const yaml_node_t *map,
                          const char *key)
{
    mrt_yaml_doc d = doc_of(p);
    return mrt_yaml_get(&d, map, key);
}

int mrt_spec_count(const yaml_node_t *n)
{
    return mrt_yaml_count(n);
}

int mrt_spec_name_ok(const char *s, size_t len)
{
    return mrt_yaml_name_ok(s, len);
}

/* 1 if s (length len) has a tensor name's characters: a name's, and
 * '.' inside ("h3.attn.wq"), not last nor twice in a row. */
static int tensor_name_ok(const char *s, size_t len)
{
    int ok = len > 0 && strlen(s) == len &&
             (s[0] == '_' || ((s[0] | 32) >= 'a' && (s[0] | 32) <= 'z'));
    for (size_t i = 1; ok && i < len; i++)
        ok = s[i] == '_' || (s[i] >= '0' && s[i] <= '9') ||
             ((s[i] | 32) >= 'a' && (s[i] | 32) <= 'z') ||
             (s[i] == '.' && i + 1 < len && s[i + 1] != '.');
    return ok;
}

mrt_status mrt_spec_name(const mrt_spec_parser *p, const yaml_node_t *n,
                         const char *kind, char out[MRT_NAME_MAX])
{
    mrt_yaml_doc d = doc_of(p);
    char q[MRT_SPEC_QUOTE_MAX + 8];
    const char *s = mrt_spec_str(n);
    out[0] = '\0'; /* a string whatever happens, for a caller's message */
    if (strcmp(kind, "tensor") || !s || mrt_spec_is_null(n) ||
        n->data.scalar.length != strlen(s) || n->data.scalar.length == 0)
        return mrt_yaml_name(&d, n, kind, out);
    size_t len = strlen(s);
    if (len >= MRT_NAME_MAX && tensor_name_ok(s, len))
        return mrt_spec_fail(p, n,
                             "tensor name '%s' is too long (at most %d "
                             "characters)",
                             mrt_spec_quote(n, q, sizeof q), MRT_NAME_MAX - 1);
    if (!tensor_name_ok(s, len))
        return mrt_spec_fail(p, n,
                             "invalid tensor name '%s' (a tensor name "
                             "starts with a letter or '_' and has only "
                             "letters, digits, '_' and '.', with no '.' last "
                             "or twice in a row)",
                             mrt_spec_quote(n, q, sizeof q));
    snprintf(out, MRT_NAME_MAX, "%s", s);
    return MRT_OK;
}

int mrt_spec_parse_u64(const char *s, size_t len, uint64_t *out)
{
    return mrt_yaml_parse_u64(s, len, out);
}

mrt_status mrt_spec_size(const mrt_spec_parser *p, const yaml_node_t *n,
                         const char *what, int64_t *out)
{
    mrt_yaml_doc d = doc_of(p);
    return mrt_yaml_size(&d, n, what, out);
}

mrt_status mrt_spec_uint(const mrt_spec_parser *p, const yaml_node_t *n,
                         const char *what, uint64_t *out)
{
    mrt_yaml_doc d = doc_of(p);
    return mrt_yaml_uint(&d, n, what, out);
}

mrt_status mrt_spec_nonneg(const mrt_spec_parser *p, const yaml_node_t *n,
                           const char *what, int64_t *out)
{
    mrt_yaml_doc d = doc_of(p);
    return mrt_yaml_nonneg(&d, n, what, out);
}

mrt_status mrt_spec_number(const mrt_spec_parser *p, const yaml_node_t *n,
                           const char *what, double *out)
{
    mrt_yaml_doc d = doc_of(p);
    return mrt_yaml_number(&d, n, what, out);
}

mrt_status mrt_spec_positive(const mrt_spec_parser *p, const yaml_node_t *n,
                             const char *what, double *out)
{
    mrt_yaml_doc d = doc_of(p);
    return mrt_yaml_positive(&d, n, what, out);
}

mrt_status mrt_spec_count_max(const mrt_spec_parser *p, const yaml_node_t *n,
                              const char *what, int64_t max, int64_t *out)
{
    mrt_yaml_doc d = doc_of(p);
    return mrt_yaml_count_max(&d, n, what, max, out);
}

mrt_status mrt_spec_fits_dtype(const mrt_spec_parser *p, const yaml_node_t *n,
                               const char *what, double v)
{
    char q[MRT_SPEC_QUOTE_MAX + 32];
    if (p->spec->dtype != MRT_F32 || fabs(v) <= FLT_MAX)
        return MRT_OK;
    return mrt_spec_fail(p, n,
                         "%s is out of float32's range: %s (at most "
                         "%.8g in magnitude; or use dtype: float64)",
                         what, mrt_spec_quote(n, q, sizeof q), (double)FLT_MAX);
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
