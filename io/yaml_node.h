/*
 * yaml_node.h — the nodes of a loaded YAML document (yaml_load.h) as
 * meshrt reads them, for every file it reads as YAML (specs through
 * yaml/, machine profiles through cost/): positions, kind checks, keys,
 * names and numbers, each with the error wording the files share
 * ("expected a mapping for 'mesh', got a sequence").
 *
 * libyaml's marks are zero-based; mrt_yaml_mark is the one place that
 * makes them 1-based.  Numbers must be plain (unquoted) scalars: "4" in
 * quotes is a string in YAML, and we say so rather than guess.  Every
 * error is MRT_E_SPEC at the node (MRT_E_NOMEM without a position), in
 * the file the mrt_yaml_doc names; the first error wins (error.h).
 */
#ifndef MRT_YAML_NODE_H
#define MRT_YAML_NODE_H

#include <stddef.h>
#include <stdarg.h>
#include <stdint.h>
#include <yaml.h>

#include "error.h"
#include "mesh.h"

#define MRT_YAML_QUOTE_MAX 60 /* longest user text quoted back */
#define MRT_YAML_LIST_MAX 200 /* longest list of valid keys in a message */

/* A loaded document, the file it came from (for messages) and where its
 * errors go.  All borrowed. */
typedef struct mrt_yaml_doc {
    yaml_document_t *doc;
    const char *path;
    mrt_error *err; /* may be NULL */
} mrt_yaml_doc;

/* The 1-based position of n ({0, 0} for NULL). */
mrt_mark mrt_yaml_mark(const yaml_node_t *n);
/* The node at index (1-based, as in pairs and items), or NULL. */
yaml_node_t *mrt_yaml_node(const mrt_yaml_doc *d, int index);
/* Item i (from 0) of sequence seq. */
yaml_node_t *mrt_yaml_item(const mrt_yaml_doc *d, const yaml_node_t *seq,
                           int i);
/* The text of a scalar without embedded NULs, else NULL. */
const char *mrt_yaml_str(const yaml_node_t *n);
/* 1 if n is a plain scalar that YAML reads as null: empty, ~ or null
 * (0 for NULL: no node is not a null scalar). */
int mrt_yaml_is_null(const yaml_node_t *n);
/* Number of pairs of a mapping or items of a sequence (0 otherwise). */
int mrt_yaml_count(const yaml_node_t *n);

/* Records an MRT_E_SPEC error at n.  Returns MRT_E_SPEC. */
mrt_status mrt_yaml_fail(const mrt_yaml_doc *d, const yaml_node_t *n,
                         const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
mrt_status mrt_yaml_vfail(const mrt_yaml_doc *d, const yaml_node_t *n,
                          const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
/* Records MRT_E_NOMEM (no position).  Returns MRT_E_NOMEM. */
mrt_status mrt_yaml_nomem(const mrt_yaml_doc *d);
/* What n is, for "got ...": "a mapping", "a sequence", "nothing", "'4'",
 * "the string '4'" (quoted scalars). */
const char *mrt_yaml_what(const yaml_node_t *n, char *buf, size_t size);
/* The scalar text of n shortened to MRT_YAML_QUOTE_MAX characters (then
 * "..."); "?" if n is no scalar. */
const char *mrt_yaml_quote(const yaml_node_t *n, char *buf, size_t size);

/* Checks that n has the type (a null scalar is no single value); else
 * "expected a mapping for FOR, got X". */
mrt_status mrt_yaml_expect(const mrt_yaml_doc *d, const yaml_node_t *n,
                           yaml_node_type_t type, const char *for_what);
/* Checks the keys of mapping map: scalars, each once, and (if valid is
 * not NULL) each one of the NULL-terminated valid list.  `in` names the
 * mapping in messages ("tensor 'x'").  Linear in the keys. */
mrt_status mrt_yaml_check_keys(const mrt_yaml_doc *d, const yaml_node_t *map,
                               const char *const *valid, const char *in);
/* The value of key in a mapping whose keys were checked, or NULL. */
yaml_node_t *mrt_yaml_get(const mrt_yaml_doc *d, const yaml_node_t *map,
                          const char *key);

/* 1 if s (length len) is a valid name: [A-Za-z_][A-Za-z0-9_]*, shorter
 * than MRT_NAME_MAX, no NUL. */
int mrt_yaml_name_ok(const char *s, size_t len);
/* A name from scalar n into out.  kind ("mesh axis", "dim", "tensor")
 * words the errors. */
mrt_status mrt_yaml_name(const mrt_yaml_doc *d, const yaml_node_t *n,
                         const char *kind, char out[MRT_NAME_MAX]);

/* Parses decimal digits s[0..len): 0 ok, 1 not an integer, 2 overflow. */
int mrt_yaml_parse_u64(const char *s, size_t len, uint64_t *out);
/* 1 and *out if n is a plain scalar that reads as a finite number
 * (decimal digits, sign, point and exponent only: no "inf", no hex);
 * else 0, *out untouched. */
int mrt_yaml_finite(const yaml_node_t *n, double *out);
/* Numbers from plain scalar n; `what` words the errors ("the size of
 * dim 'x'"):  a positive int64; an integer in [0, INT64_MAX]; one in
 * [0, UINT64_MAX]; a positive integer at most max; a finite number; a
 * positive finite number. */
mrt_status mrt_yaml_size(const mrt_yaml_doc *d, const yaml_node_t *n,
                         const char *what, int64_t *out);
mrt_status mrt_yaml_nonneg(const mrt_yaml_doc *d, const yaml_node_t *n,
                           const char *what, int64_t *out);
mrt_status mrt_yaml_uint(const mrt_yaml_doc *d, const yaml_node_t *n,
                         const char *what, uint64_t *out);
mrt_status mrt_yaml_count_max(const mrt_yaml_doc *d, const yaml_node_t *n,
                              const char *what, int64_t max, int64_t *out);
mrt_status mrt_yaml_number(const mrt_yaml_doc *d, const yaml_node_t *n,
                           const char *what, double *out);
mrt_status mrt_yaml_positive(const mrt_yaml_doc *d, const yaml_node_t *n,
                             const char *what, double *out);

#endif
