/*
 * spec_parse.c — mrt_spec_load: reads the spec file, loads it into a
 * libyaml document (yaml_load.c; every node keeps its position), checks the
 * top-level keys and runs the passes in a fixed order — mesh, dtype,
 * dims, layout, network, expect, tensors, ops, outputs, layouts —
 * whatever order the file uses — and finishes the builder.  The mesh, dtype and dims passes live
 * here; the others in spec_layout.c, spec_planning.c, spec_tensors.c,
 * spec_ops.c and spec_alts.c.
 *
 * Errors: a missing file is MRT_E_IO with no position; malformed YAML is
 * MRT_E_SYNTAX at libyaml's problem mark; a bad --mesh or --dim string
 * (mrt_spec_load_opts: a dim the spec does not name, a size that is not
 * a positive integer) is MRT_E_USAGE with no file; everything else is MRT_E_SPEC at the node.
 * The parser and document are freed on every path, and *out is set only
 * on success.  mrt_spec_load_text is the same loader over text already in
 * memory (the fuzz target of tests/fuzz feeds it directly).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mesh_parse.h"
#include "spec_parse.h"
#include "yaml_load.h"

#define MRT_SPEC_FILE_MAX (64L << 20) /* a spec is text; refuse anything huge */
#define MRT_SPEC_DEPTH_MAX 64         /* a spec needs about 5 levels */

static const mrt_mark no_mark = {0, 0};

/* In the order the passes check them (docs/spec.md's table). */
static const char *const top_keys[] = {
    "mesh",    "dtype", "precision", "dims",    "layout", "network", "expect",
    "tensors", "ops",   "outputs",   "layouts", "train",  NULL};
static const char *const required_keys[] = {"mesh", "dims", "tensors", "ops",
                                            NULL};

/* ---- the file and the YAML document ------------------------------- */

/* The folder of the spec at path, for the files it names. */
static mrt_status spec_dir(const char *path, char dir[PATH_MAX], mrt_error *err)
{
    size_t len = strlen(path);
    if (len >= PATH_MAX)
        return mrt_error_set(err, MRT_E_IO, path, no_mark,
                             "cannot open spec: path too long");
    const char *slash = strrchr(path, '/');
    if (!slash)
        strcpy(dir, ".");
    else if (slash == path)
        strcpy(dir, "/");
    else
        snprintf(dir, PATH_MAX, "%.*s", (int)(slash - path), path);
    return MRT_OK;
}

static mrt_status read_file(const char *path, char **text, size_t *len,
                            mrt_error *err)
{
    return mrt_yaml_read_file(path, "spec", MRT_SPEC_FILE_MAX, text, len, err);
}

/* ---- mesh ---------------------------------------------------------- */

/* s without leading and trailing blanks (cut in place). */
static char *trim(char *s)
{
    s += strspn(s, " \t");
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    return s;
}

mrt_status mrt_spec_read_mesh(mrt_spec_parser *p, const yaml_node_t *map,
                              const char *of, mrt_spec_mesh *out)
{
    char what[MRT_NAME_MAX + 32];
    mrt_status st = mrt_spec_expect(p, map, YAML_MAPPING_NODE, of);
    memset(out, 0, sizeof *out);
    if (!st)
        st = mrt_spec_check_keys(p, map, NULL, of);
    out->mark = mrt_spec_mark(map);
    for (yaml_node_pair_t *pr = st ? NULL : map->data.mapping.pairs.start;
         !st && pr < map->data.mapping.pairs.top; pr++) {
        int n = out->n++;
        const yaml_node_t *k = mrt_spec_node(p, pr->key);
        const yaml_node_t *v = mrt_spec_node(p, pr->value);
        out->axis_mark[n] = mrt_spec_mark(k);
        out->size_mark[n] = mrt_spec_mark(v);
        if (n == MRT_MAX_AXES) /* the builder refuses it at its key */
            break;
        st = mrt_spec_name(p, k, "mesh axis", out->name[n]);
        if (!st) {
            snprintf(what, sizeof what, "the size of mesh axis '%s'",
                     out->name[n]);
            st = mrt_spec_size(p, v, what, &out->size[n]);
        }
        out->axis[n] = out->name[n];
    }
    return st;
}

/* The top-level `mesh:` to the builder: names and sizes read here,
 * the mesh checked there. */
static mrt_status parse_top_mesh(mrt_spec_parser *p, const yaml_node_t *map)
{
    mrt_spec_mesh m;
    mrt_status st = mrt_spec_read_mesh(p, map, "'mesh'", &m);
    if (!st)
        st = mrt_ir_set_mesh_at(p->ir, m.n, m.axis, m.size, m.mark, m.axis_mark,
                                m.size_mark, p->err);
    return st;
}

/* ---- dtype and dims ------------------------------------------------ */

static mrt_status parse_dtype(mrt_spec_parser *p, const yaml_node_t *n)
{
    char q[MRT_SPEC_QUOTE_MAX + 32];
    if (!n)
        return MRT_OK;
    if (!mrt_spec_str(n) || mrt_spec_is_null(n))
        return mrt_spec_fail(p, n,
                             "expected float32, float64, bfloat16 or float16 "
                             "for 'dtype', "
                             "got %s",
                             mrt_spec_what(n, q, sizeof q));
    return mrt_ir_set_dtype_at(p->ir, mrt_spec_str(n), mrt_spec_mark(n),
                               p->err);
}

static mrt_status parse_dims(mrt_spec_parser *p, const yaml_node_t *map)
{
    char what[MRT_NAME_MAX + 32], name[MRT_NAME_MAX];
    mrt_status st = mrt_spec_expect(p, map, YAML_MAPPING_NODE, "'dims'");
    if (!st)
        st = mrt_spec_check_keys(p, map, NULL, "'dims'");
    for (yaml_node_pair_t *pr = st ? NULL : map->data.mapping.pairs.start;
         !st && pr < map->data.mapping.pairs.top; pr++) {
        const yaml_node_t *k = mrt_spec_node(p, pr->key);
        int64_t size;
        st = mrt_spec_name(p, k, "dim", name);
        if (!st) {
            snprintf(what, sizeof what, "the size of dim '%s'", name);
            st = mrt_spec_size(p, mrt_spec_node(p, pr->value), what, &size);
        }
        if (!st)
            st = mrt_ir_add_dim_at(p->ir, name, size, mrt_spec_mark(k), p->err);
    }
    return st;
}

/* ---- --dim: new sizes for dims the spec names ------------------------ */

/* Applies one "DIM=SIZE" (text[0..n)) of a --dim string; else returns 0
 * and says why. */
static int dim_item(mrt_ir *ir, const char *text, size_t n, char *seen,
                    char *why, size_t size)
{
    const mrt_spec *s = ir->s;
    char item[128], list[MRT_SPEC_LIST_MAX];
    uint64_t v = 0;
    snprintf(item, sizeof item, "%.*s", (int)(n < 127 ? n : 127), text);
    char *eq = strchr(item, '=');
    if (!eq)
        return snprintf(why, size, "'%s' is not DIM=SIZE", trim(item)), 0;
    *eq = '\0';
    char *name = trim(item), *num = trim(eq + 1);
    int d = mrt_spec_name_ok(name, strlen(name)) ? mrt_spec_find_dim(s, name)
                                                 : -1;
    if (d < 0)
        return snprintf(why, size, "no dim '%.70s' in %.200s (dims: %s)", name,
                        s->path,
                        mrt_spec_join(list, sizeof list, s->dim_name[0],
                                      sizeof s->dim_name[0], s->ndims)),
               0;
    if (mrt_spec_parse_u64(num, strlen(num), &v) || v == 0 || v > INT64_MAX)
        return snprintf(why, size,
                        "the size of dim '%s' must be a positive "
                        "integer, got '%.30s'",
                        name, num),
               0;
    if (seen[d])
        return snprintf(why, size, "dim '%s' is given twice", name), 0;
    seen[d] = 1;
    mrt_ir_resize_dim(ir, name, (int64_t)v); /* (checked: cannot fail) */
    return 1;
}

/* Gives the dims named in a --dim string like "batch=128,d_ff=512"
 * (blanks allowed) their new sizes, before any shape is read. */
static mrt_status apply_dims(mrt_spec_parser *p, const char *text)
{
    char why[MRT_SPEC_LIST_MAX + 256] = "expected DIM=SIZE[,DIM=SIZE...]";
    char *seen = calloc((size_t)p->spec->ndims + 1, 1);
    if (!seen)
        return mrt_spec_nomem(p);
    for (const char *at = text; *text;) {
        size_t n = strcspn(at, ",");
        if (!dim_item(p->ir, at, n, seen, why, sizeof why))
            break;
        if (!at[n]) {
            free(seen);
            p->dims_overridden = 1;
            return MRT_OK;
        }
        at += n + 1;
    }
    free(seen);
    return mrt_error_set(p->err, MRT_E_USAGE, "", no_mark, "--dim: %s", why);
}

/* ---- the whole document ------------------------------------------- */

static mrt_status check_top(mrt_spec_parser *p, const yaml_node_t *root)
{
    char what[MRT_SPEC_QUOTE_MAX + 32];
    if (!root)
        return mrt_error_set(p->err, MRT_E_SPEC, p->spec->path,
                             (mrt_mark){1, 1},
                             "the spec is empty (it needs "
                             "the keys mesh, dims, tensors, ops)");
    if (root->type != YAML_MAPPING_NODE)
        return mrt_spec_fail(p, root,
                             "expected a mapping at the top of the "
                             "spec, got %s",
                             mrt_spec_what(root, what, sizeof what));
    mrt_status st = mrt_spec_check_keys(p, root, top_keys, "the spec");
    for (int i = 0; !st && required_keys[i]; i++)
        if (!mrt_spec_get(p, root, required_keys[i]))
            st = mrt_spec_fail(p, root,
                               "missing key '%s' (a spec needs: "
                               "mesh, dims, tensors, ops)",
                               required_keys[i]);
    return st;
}

static mrt_status alloc_tensors(mrt_spec_parser *p, const yaml_node_t *root)
{
    const yaml_node_t *tensors = mrt_spec_get(p, root, "tensors");
    const yaml_node_t *ops = mrt_spec_get(p, root, "ops");
    int nin = tensors && tensors->type == YAML_MAPPING_NODE
                  ? mrt_spec_count(tensors)
                  : 0;
    int nops = ops && ops->type == YAML_SEQUENCE_NODE ? mrt_spec_count(ops) : 0;
    /* Room for the inputs, the gradient seed and one primitive op per
     * spec op; composite ops and training grow the arrays. */
    return mrt_ir_reserve(p->ir, nin + nops + 2, nops + 1) ? mrt_spec_nomem(p)
                                                           : MRT_OK;
}

static mrt_status parse_root(mrt_spec_parser *p, const yaml_node_t *root,
                             const mrt_mesh *mesh_override,
                             const char *dims_override, mrt_spec **done)
{
    mrt_status st = check_top(p, root);
    if (!st)
        st = parse_top_mesh(p, mrt_spec_get(p, root, "mesh"));
    if (!st && mesh_override) {
        mrt_ir_override_mesh(p->ir, mesh_override, "the mesh given by --mesh");
        p->mesh_overridden = 1;
    }
    if (!st)
        st = parse_dtype(p, mrt_spec_get(p, root, "dtype"));
    if (!st && mrt_spec_get(p, root, "precision"))
        st = mrt_spec_parse_precision(p, mrt_spec_get(p, root, "precision"));
    if (!st)
        st = parse_dims(p, mrt_spec_get(p, root, "dims"));
    if (!st && dims_override)
        st = apply_dims(p, dims_override);
    if (!st && mrt_spec_get(p, root, "layout"))
        st = mrt_spec_parse_global_rules(p, mrt_spec_get(p, root, "layout"));
    if (!st && mrt_spec_get(p, root, "network"))
        st = mrt_spec_parse_network(p, mrt_spec_get(p, root, "network"));
    if (!st && mrt_spec_get(p, root, "expect"))
        st = mrt_spec_parse_expect(p, mrt_spec_get(p, root, "expect"));
    if (!st)
        st = alloc_tensors(p, root);
    if (!st)
        st = mrt_spec_parse_tensors(p, mrt_spec_get(p, root, "tensors"));
    if (!st)
        st = mrt_spec_parse_ops(p, mrt_spec_get(p, root, "ops"));
    if (!st && mrt_spec_get(p, root, "train"))
        st = mrt_spec_parse_train(p, mrt_spec_get(p, root, "train"));
    if (!st)
        st = mrt_spec_parse_outputs(p, mrt_spec_get(p, root, "outputs"));
    if (!st && mrt_spec_get(p, root, "layouts"))
        st = mrt_spec_parse_layouts(p, mrt_spec_get(p, root, "layouts"));
    if (!st)
        st = mrt_ir_finish(p->ir, done, p->err);
    return st;
}

mrt_status mrt_spec_load(const char *path, mrt_spec **out, mrt_error *err)
{
    if (out)
        *out = NULL;
    if (!path || !out)
        return mrt_error_null(err, "mrt_spec_load", !path ? "path" : "out");
    return mrt_spec_load_layouts(path, NULL, NULL, 0, out, err);
}

mrt_status mrt_spec_load_ex(const char *path, const mrt_spec_load_options *opt,
                            mrt_spec **out, mrt_error *err)
{
    if (out)
        *out = NULL;
    if (!path || !out)
        return mrt_error_null(err, "mrt_spec_load_ex", !path ? "path" : "out");
    if (opt && !opt->text && opt->len)
        return mrt_error_null(err, "mrt_spec_load_ex", "opt->text");
    return mrt_spec_load_layouts(path, opt, NULL, 0, out, err);
}

static mrt_status load_text(const char *path, const char *text, size_t len,
                            const mrt_spec_load_options *ov,
                            const mrt_spec_tensor_rules *tl, int ntl,
                            mrt_spec **out, mrt_error *err);

mrt_status mrt_spec_load_layouts(const char *path,
                                 const mrt_spec_load_options *ov,
                                 const mrt_spec_tensor_rules *tl, int ntl,
                                 mrt_spec **out, mrt_error *err)
{
    char *text = NULL;
    size_t len = 0;
    mrt_status st;

    if (out)
        *out = NULL;
    if (!path || !out)
        return mrt_error_null(err, "mrt_spec_load", !path ? "path" : "out");
    if (ov && ov->text)
        return load_text(path, ov->text, ov->len, ov, tl, ntl, out, err);
    if (strlen(path) >= PATH_MAX) /* as set_paths says it, before reading */
        return mrt_error_set(err, MRT_E_IO, path, no_mark,
                             "cannot open spec: path too long");
    if ((st = read_file(path, &text, &len, err)))
        return st;
    st = load_text(path, text, len, ov, tl, ntl, out, err);
    free(text);
    return st;
}

static mrt_status load_text(const char *path, const char *text, size_t len,
                            const mrt_spec_load_options *ov,
                            const mrt_spec_tensor_rules *tl, int ntl,
                            mrt_spec **out, mrt_error *err)
{
    mrt_mesh override;
    mrt_ir *ir = NULL;
    mrt_spec *done = NULL;
    char dir[PATH_MAX];
    yaml_document_t doc;
    int have_doc = 0;
    mrt_status st;
    const char *mesh_override = ov ? ov->mesh : NULL;

    if (len > MRT_SPEC_FILE_MAX)
        return mrt_error_set(err, MRT_E_IO, path, no_mark,
                             "cannot read spec: file too large");
    if (mesh_override &&
        (st = mrt_mesh_parse_string(mesh_override, &override, err)))
        return st;
    if ((st = spec_dir(path, dir, err)) ||
        (st = mrt_ir_open(path, dir, &ir, err)) ||
        (st = mrt_yaml_load(path, "spec", text ? text : "", len,
                            MRT_SPEC_DEPTH_MAX, &doc, err)))
        goto fail;
    have_doc = 1;
    mrt_spec_parser p = {
        .doc = &doc, .ir = ir, .spec = ir->s, .err = err, .tl = tl, .ntl = ntl};
    if ((st = parse_root(&p, yaml_document_get_root_node(&doc),
                         mesh_override ? &override : NULL, ov ? ov->dims : NULL,
                         &done)))
        goto fail;
    yaml_document_delete(&doc);
    mrt_ir_destroy(ir);
    *out = done;
    return MRT_OK;
fail:
    if (have_doc)
        yaml_document_delete(&doc);
    mrt_ir_destroy(ir);
    return st;
}
