/*
 * spec_parse.h — private to the YAML front end (yaml/spec_*.c), not part
 * of the contract in spec.h: it reads the YAML and hands what it read,
 * with the line and column of each node, to the builder's expert calls
 * (ir/build.h), which check it and fill the program; no pass writes
 * the program itself.
 *
 * mrt_spec_load (spec_parse.c) loads the YAML document and walks it in a
 * fixed order of passes: mesh, dtype, dims (spec_parse.c), global layout
 * rules (spec_layout.c), network and expect (spec_planning.c), tensors
 * (spec_tensors.c), ops and outputs (spec_ops.c), and last the `layouts:`
 * alternatives (spec_alts.c), which the builder checks against every
 * tensor; then mrt_ir_finish.  Each pass reads the nodes it owns, resolves names
 * against what the earlier passes built, and stops at the first problem
 * with an MRT_E_SPEC error at the offending node.  A pass checks the
 * form of its nodes (types, keys, numbers) itself, everything else
 * through the builder; so in a file with two problems in one section, a
 * problem of form may be reported before an earlier one of meaning.  The helpers below
 * (spec_yaml.c) turn libyaml nodes into checked names and numbers, so
 * every pass words its errors the same way.
 */
#ifndef MRT_SPEC_PARSE_H
#define MRT_SPEC_PARSE_H

#include <stddef.h>
#include <yaml.h>

#include "build.h"
#include "spec_load.h"

typedef struct mrt_spec_parser {
    yaml_document_t *doc;
    mrt_ir *ir;          /* the builder the passes call (ir/build.h) */
    mrt_spec *spec;      /* ir's program, being filled; its path names the
                       file in errors */
    mrt_error *err;      /* may be NULL */
    int mesh_overridden; /* the mesh came from --mesh, not the file */
    int dims_overridden; /* some dim sizes came from --dim */
    const mrt_spec_tensor_rules *tl; /* layouts given to inputs, op results */
    int ntl;
} mrt_spec_parser;

/* ---- spec_yaml.c: nodes, errors, names and numbers ---------------- */

/* Item i (from 0) of sequence seq. */
yaml_node_t *mrt_spec_item(const mrt_spec_parser *p, const yaml_node_t *seq,
                           int i);
/* The 1-based position of n ({0, 0} for NULL). */
mrt_mark mrt_spec_mark(const yaml_node_t *n);
/* The node at index (1-based, as in pairs and items), or NULL. */
yaml_node_t *mrt_spec_node(const mrt_spec_parser *p, int index);
/* The text of a scalar without embedded NULs, else NULL. */
const char *mrt_spec_str(const yaml_node_t *n);
/* 1 if n is a scalar that YAML reads as null: empty, ~ or null. */
int mrt_spec_is_null(const yaml_node_t *n);
/* Records an MRT_E_SPEC error at n.  Returns MRT_E_SPEC. */
mrt_status mrt_spec_fail(const mrt_spec_parser *p, const yaml_node_t *n,
                         const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Records MRT_E_NOMEM (no position).  Returns MRT_E_NOMEM. */
mrt_status mrt_spec_nomem(const mrt_spec_parser *p);
/* What n is, for "got ...": "a mapping", "a sequence", "nothing", "'4'",
 * "the string '4'" (quoted scalars). */
const char *mrt_spec_what(const yaml_node_t *n, char *buf, size_t size);
/* The scalar text of n shortened to MRT_SPEC_QUOTE_MAX characters. */
const char *mrt_spec_quote(const yaml_node_t *n, char *buf, size_t size);
/* Checks that n has the type; else "expected a mapping for FOR, got X". */
mrt_status mrt_spec_expect(const mrt_spec_parser *p, const yaml_node_t *n,
                           yaml_node_type_t type, const char *for_what);
/* Checks the keys of mapping map: scalars, each once, and (if valid is
 * not NULL) each one of the NULL-terminated valid list.  `in` names the
 * mapping in messages ("tensor 'x'"). */
mrt_status mrt_spec_check_keys(const mrt_spec_parser *p, const yaml_node_t *map,
                               const char *const *valid, const char *in);
/* A section that maps names to entries (`tensors:`, `network:`,
 * `layouts:`): checks that map is a mapping with scalar keys, each once
 * (`in` names it in messages, "'tensors'"), and hands every (key, value)
 * to entry in file order, stopping at the first error. */
typedef mrt_status mrt_spec_entry_fn(mrt_spec_parser *p, const yaml_node_t *k,
                                     const yaml_node_t *v);
mrt_status mrt_spec_each_entry(mrt_spec_parser *p, const yaml_node_t *map,
                               const char *in, mrt_spec_entry_fn *entry);
/* The value of key in a mapping whose keys were checked, or NULL. */
yaml_node_t *mrt_spec_get(const mrt_spec_parser *p, const yaml_node_t *map,
                          const char *key);
/* Number of pairs of a mapping or items of a sequence (0 otherwise). */
int mrt_spec_count(const yaml_node_t *n);
/* A name ([A-Za-z_][A-Za-z0-9_]*, shorter than MRT_NAME_MAX) from scalar
 * n into out.  kind ("mesh axis", "dim", "tensor") words the errors. */
mrt_status mrt_spec_name(const mrt_spec_parser *p, const yaml_node_t *n,
                         const char *kind, char out[MRT_NAME_MAX]);
/* 1 if s (length len) is a valid name. */
int mrt_spec_name_ok(const char *s, size_t len);
/* A positive int64 from plain scalar n; `what` is "the size of dim 'x'". */
mrt_status mrt_spec_size(const mrt_spec_parser *p, const yaml_node_t *n,
                         const char *what, int64_t *out);
/* An integer in [0, INT64_MAX] from plain scalar n. */
mrt_status mrt_spec_nonneg(const mrt_spec_parser *p, const yaml_node_t *n,
                           const char *what, int64_t *out);
/* A positive finite number from plain scalar n. */
mrt_status mrt_spec_positive(const mrt_spec_parser *p, const yaml_node_t *n,
                             const char *what, double *out);
/* An integer in [0, UINT64_MAX] from plain scalar n. */
mrt_status mrt_spec_uint(const mrt_spec_parser *p, const yaml_node_t *n,
                         const char *what, uint64_t *out);
/* A finite number from plain scalar n. */
mrt_status mrt_spec_number(const mrt_spec_parser *p, const yaml_node_t *n,
                           const char *what, double *out);
/* A positive integer from plain scalar n, at most max. */
mrt_status mrt_spec_count_max(const mrt_spec_parser *p, const yaml_node_t *n,
                              const char *what, int64_t max, int64_t *out);
/* Checks that v, read from n, is within the range of the spec's dtype
 * (it becomes an element or a kernel's constant, and a float32 cannot
 * hold 1e39). */
mrt_status mrt_spec_fits_dtype(const mrt_spec_parser *p, const yaml_node_t *n,
                               const char *what, double v);
/* Parses decimal digits s[0..len): 0 ok, 1 not an integer, 2 overflow. */
int mrt_spec_parse_u64(const char *s, size_t len, uint64_t *out);

/* ---- spec_parse.c: the mesh --------------------------------------- */

/* A mesh mapping (axis -> size) read for the builder: names and sizes
 * checked here (`of` names it in messages: "'mesh'", "the mesh of
 * layout 'dp'"), the mesh there.  A key past MRT_MAX_AXES is counted
 * (n is one more) with its mark only: the builder refuses it. */
typedef struct mrt_spec_mesh {
    int n;
    char name[MRT_MAX_AXES][MRT_NAME_MAX];
    const char *axis[MRT_MAX_AXES + 1];
    int64_t size[MRT_MAX_AXES + 1];
    mrt_mark mark, axis_mark[MRT_MAX_AXES + 1], size_mark[MRT_MAX_AXES + 1];
} mrt_spec_mesh;
mrt_status mrt_spec_read_mesh(mrt_spec_parser *p, const yaml_node_t *map,
                              const char *of, mrt_spec_mesh *out);

/* ---- spec_layout.c: layout rules and home layouts ----------------- */

/* A layout mapping (dim -> axis | [axis, ...]) read for the builder:
 * its form checked here (`of` names it in messages), its names there. */
typedef struct mrt_spec_rules {
    int n;
    mrt_ir_rule_at *rule; /* [n], pointing into axes and marks */
    const char **axes;
    mrt_mark *marks;
    int used; /* axes and marks filled */
} mrt_spec_rules;
mrt_status mrt_spec_read_rules(mrt_spec_parser *p, const yaml_node_t *map,
                               const char *of, mrt_spec_rules *out);
/* mrt_spec_read_rules of the pairs of map that keep (not NULL) keeps:
 * a `layouts:` alternative's rules beside its mesh and sections. */
mrt_status mrt_spec_read_rules_if(mrt_spec_parser *p, const yaml_node_t *map,
                                  const char *of,
                                  int (*keep)(const mrt_spec_parser *,
                                              const yaml_node_pair_t *),
                                  mrt_spec_rules *out);
void mrt_spec_rules_free(mrt_spec_rules *r);
/* The top-level `layout:` mapping: each rule to the builder. */
mrt_status mrt_spec_parse_global_rules(mrt_spec_parser *p,
                                       const yaml_node_t *map);

/* The rules mrt_spec_load_layouts gives tensor (or op result) `name`, in
 * place of its `layout:`; NULL if none. */
const mrt_rule *mrt_spec_given_rules(const mrt_spec_parser *p,
                                     const char *name);

/* ---- spec_planning.c: `network:` and `expect:` ------------------- */

/* The `network:` mapping (axis -> {latency_us, bandwidth_GBps}). */
mrt_status mrt_spec_parse_network(mrt_spec_parser *p, const yaml_node_t *map);
/* An `expect:` mapping into b (both budgets -1 unless given); `of` names
 * it in messages ("'expect'", "the expect of op 2"). */
mrt_status mrt_spec_parse_budget(mrt_spec_parser *p, const yaml_node_t *map,
                                 const char *of, mrt_ir_budget *b);
/* The top-level `expect:` to the builder. */
mrt_status mrt_spec_parse_expect(mrt_spec_parser *p, const yaml_node_t *map);
/* spec_precision.c: the top-level `precision:`. */
mrt_status mrt_spec_parse_precision(mrt_spec_parser *p, const yaml_node_t *map);

/* ---- spec_alts.c: the `layouts:` alternatives --------------------- */

/* The `layouts:` mapping, once every tensor is made: each alternative
 * read and handed to the builder, which checks it against every tensor. */
mrt_status mrt_spec_parse_layouts(mrt_spec_parser *p, const yaml_node_t *map);

/* ---- spec_tensors.c: shapes, inputs and their init ---------------- */

/* A `shape:` sequence (of tensor `name`) read for the builder: dim
 * names and marks into dims[] and marks[] (MRT_MAX_DIMS of them; a
 * longer shape only sets *ndims, and the builder refuses it). */
mrt_status mrt_spec_read_shape(mrt_spec_parser *p, const char *name,
                               const yaml_node_t *n, int *ndims,
                               const char **dims, mrt_mark *marks,
                               mrt_mark *shape_mark);
/* One entry of `tensors:` (key k, value v) to the builder. */
mrt_status mrt_spec_parse_tensor(mrt_spec_parser *p, const yaml_node_t *k,
                                 const yaml_node_t *v);
/* The `tensors:` mapping: appends one tensor per entry. */
mrt_status mrt_spec_parse_tensors(mrt_spec_parser *p, const yaml_node_t *map);

/* ---- spec_ops.c and spec_train.c: ops, outputs, training ---------- */

/* The `train:` mapping, once the ops are parsed: appends the backward
 * program and the updates (ir/grad.c). */
mrt_status mrt_spec_parse_train(mrt_spec_parser *p, const yaml_node_t *n);

/* The `ops:` sequence: appends one op and its output tensor per item. */
mrt_status mrt_spec_parse_ops(mrt_spec_parser *p, const yaml_node_t *seq);
/* Item i (node n) of the ops sequence seq (`ops:`, or a block's),
 * read and handed to the builder. */
mrt_status mrt_spec_parse_op(mrt_spec_parser *p, const yaml_node_t *seq, int i,
                             const yaml_node_t *n);
/* 1 if item n of an ops sequence is a block (a mapping with `repeat:`). */
int mrt_spec_is_repeat(const mrt_spec_parser *p, const yaml_node_t *n);
/* A `repeat:` item of `ops:` (spec_blocks.c): the block's links, then
 * each instance's tensors and ops, to the builder's block calls. */
mrt_status mrt_spec_parse_repeat(mrt_spec_parser *p, const yaml_node_t *n);
/* The `outputs:` sequence, or NULL for the last op's output. */
mrt_status mrt_spec_parse_outputs(mrt_spec_parser *p, const yaml_node_t *seq);

#endif
