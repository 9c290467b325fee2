/*
 * spec_tensors.c — the `tensors:` section: the program's inputs, each
 * with a shape (named dims), an optional layout of its own and an init.
 *
 * Inits: {random: SEED} (uniform in [-1, 1); the default, seeded with
 * the FNV-1a hash of the name), {fill: X}, or {file: PATH} (a .npy file,
 * resolved against the spec's folder; its header is read now, so a
 * missing file or a wrong shape is reported at the spec's line rather
 * than in the middle of a run).  Shape parsing is shared with ops.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checked.h"
#include "init.h"
#include "npy.h"
#include "spec_parse.h"

static const char *const tensor_keys[] = {"shape", "init", "layout", NULL};
static const char *const init_keys[] = {"random", "fill", "file", "labels",
                                        NULL};

/* One dim of a shape: item d, the i-th of t's shape. */
static mrt_status shape_dim(mrt_spec_parser *p, const yaml_node_t *d,
                            mrt_spec_tensor *t)
{
    const mrt_spec *s = p->spec;
    char q[MRT_SPEC_QUOTE_MAX + 32], list[MRT_SPEC_LIST_MAX];
    const char *name = mrt_spec_str(d);
    int id = name ? mrt_spec_find_dim(s, name) : -1;
    mrt_layout *l = &t->layout;
    if (!name || mrt_spec_is_null(d))
        return mrt_spec_fail(p, d, "expected a dim name in the shape of "
                             "tensor '%s', got %s", t->name,
                             mrt_spec_what(d, q, sizeof q));
    if (id < 0)
        return mrt_spec_fail(p, d, "unknown dim '%s' in the shape of tensor "
                             "'%s' (the dims are: %s)",
                             mrt_spec_quote(d, q, sizeof q), t->name,
                             mrt_spec_join(list, sizeof list, s->dim_name[0],
                                           sizeof s->dim_name[0], s->ndims));
    if (mrt_layout_find_dim(l, id) >= 0)
        return mrt_spec_fail(p, d, "dim '%s' appears twice in the shape of "
                             "tensor '%s'", name, t->name);
    l->dim[l->ndims] = id;
    l->size[l->ndims++] = s->dim_size[id];
    return MRT_OK;
}

mrt_status mrt_spec_parse_shape(mrt_spec_parser *p, const yaml_node_t *n,
                                mrt_spec_tensor *t)
{
    char of[MRT_NAME_MAX + 32], shape[MRT_SPEC_LIST_MAX];
    snprintf(of, sizeof of, "the shape of tensor '%s'", t->name);
    mrt_status st = mrt_spec_expect(p, n, YAML_SEQUENCE_NODE, of);
    if (st)
        return st;
    int count = mrt_spec_count(n);
    if (count == 0)
        return mrt_spec_fail(p, n, "the shape of tensor '%s' is empty "
                             "(scalars are not supported)", t->name);
    if (count > MRT_MAX_DIMS)
        return mrt_spec_fail(p, n, "tensor '%s' has %d dims (at most %d)",
                             t->name, count, MRT_MAX_DIMS);
    t->shape_mark = mrt_spec_mark(n);
    t->layout.ndims = 0;
    for (yaml_node_item_t *it = n->data.sequence.items.start;
         !st && it < n->data.sequence.items.top; it++)
        st = shape_dim(p, mrt_spec_node(p, *it), t);
    if (!st && mrt_spec_too_large(&t->layout))
        return mrt_spec_fail(p, n, "tensor '%s' %s is too large: its size in "
                             "bytes overflows 64 bits", t->name,
                             mrt_spec_shape_str(p->spec, &t->layout, shape,
                                                sizeof shape));
    return st;
}

/* "(16, 8)" */
static const char *tuple_str(const int64_t v[], int n, char *buf,
                             size_t size)
{
    size_t len = (size_t)snprintf(buf, size, "(");
    for (int i = 0; i < n && len < size; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s%lld",
                                i ? ", " : "", (long long)v[i]);
    if (len < size)
        snprintf(buf + len, size - len, "%s", n == 1 ? ",)" : ")");
    return buf;
}

/* Checks that the .npy file t->file (as written: v) exists, has a valid
 * header and the tensor's global shape. */
static mrt_status check_npy(mrt_spec_parser *p, mrt_spec_tensor *t,
                            const yaml_node_t *v, const yaml_node_t *init)
{
    const mrt_spec *s = p->spec;
    char q[MRT_SPEC_QUOTE_MAX + 8], a[MRT_SPEC_LIST_MAX],
        b[MRT_SPEC_LIST_MAX], c[MRT_SPEC_LIST_MAX];
    mrt_error e = {0};
    mrt_npy_header h;
    /* Non-blocking: a FIFO is then refused by the reader, not waited on. */
    int fd = open(t->file, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return mrt_error_set(p->err, MRT_E_IO, s->path, t->init_mark,
                             "cannot read '%s': %s",
                             mrt_spec_quote(v, q, sizeof q), strerror(errno));
    close(fd);
    if (mrt_npy_read_header(t->file, &h, &e))
        return mrt_error_set(p->err, e.code, s->path, t->init_mark,
                             "cannot read '%s': %s",
                             mrt_spec_quote(v, q, sizeof q), e.message);
    int same = h.ndims == t->layout.ndims;
    for (int i = 0; same && i < h.ndims; i++)
        same = h.shape[i] == t->layout.size[i];
    if (same)
        return MRT_OK;
    return mrt_spec_fail(p, init, "'%s' has shape %s, but tensor '%s' has "
                         "shape %s = %s", mrt_spec_quote(v, q, sizeof q),
                         tuple_str(h.shape, h.ndims, a, sizeof a), t->name,
                         mrt_spec_shape_str(s, &t->layout, b, sizeof b),
                         tuple_str(t->layout.size, t->layout.ndims, c,
                                   sizeof c));
}

static mrt_status init_file(mrt_spec_parser *p, mrt_spec_tensor *t,
                            const yaml_node_t *v, const yaml_node_t *init)
{
    const mrt_spec *s = p->spec;
    char of[MRT_NAME_MAX + 48], q[MRT_SPEC_QUOTE_MAX + 8];
    snprintf(of, sizeof of, "the file of tensor '%s'", t->name);
    mrt_status st = mrt_spec_expect(p, v, YAML_SCALAR_NODE, of);
    const char *name = mrt_spec_str(v);
    if (!st && !name)
        st = mrt_spec_fail(p, v, "the file name of tensor '%s' has a NUL "
                           "character", t->name);
    if (st)
        return st;
    char path[PATH_MAX];
    int n = name[0] == '/' || !strcmp(s->dir, ".")
                ? snprintf(path, sizeof path, "%s", name)
                : snprintf(path, sizeof path, "%s/%s", s->dir, name);
    if (n < 0 || (size_t)n >= sizeof path)
        return mrt_spec_fail(p, v, "the path of '%s' is too long",
                             mrt_spec_quote(v, q, sizeof q));
    if (!(t->file = strdup(path)))
        return mrt_spec_nomem(p);
    t->init = MRT_INIT_FILE;
    return check_npy(p, t, v, init);
}

/* The most classes whose labels (0 .. N-1) the dtype holds exactly: every
 * integer up to 2^24 is a float32, up to 2^53 a float64. */
static int64_t labels_max(mrt_dtype t)
{
    return t == MRT_F64 ? (int64_t)1 << 53 : (int64_t)1 << 24;
}

static mrt_status parse_init(mrt_spec_parser *p, mrt_spec_tensor *t,
                             const yaml_node_t *n)
{
    char of[MRT_NAME_MAX + 48], q[MRT_SPEC_QUOTE_MAX + 8];
    snprintf(of, sizeof of, "the init of tensor '%s'", t->name);
    mrt_status st = mrt_spec_expect(p, n, YAML_MAPPING_NODE, of);
    if (!st)
        st = mrt_spec_check_keys(p, n, init_keys, of);
    if (st)
        return st;
    t->init_mark = mrt_spec_mark(n);
    yaml_node_pair_t *pr = n->data.mapping.pairs.start;
    if (mrt_spec_count(n) == 0)
        return mrt_spec_fail(p, n, "%s is empty (give one of: random, fill, "
                             "file, labels)", of);
    const char *kind = mrt_spec_str(mrt_spec_node(p, pr->key));
    if (mrt_spec_count(n) > 1)
        return mrt_spec_fail(p, mrt_spec_node(p, pr[1].key), "%s has both "
                             "'%s' and '%s' (give exactly one of: random, "
                             "fill, file, labels)", of, kind,
                             mrt_spec_quote(mrt_spec_node(p, pr[1].key), q,
                                            sizeof q));
    const yaml_node_t *v = mrt_spec_node(p, pr->value);
    if (!strcmp(kind, "random")) {
        t->init = MRT_INIT_RANDOM;
        snprintf(of, sizeof of, "the seed of tensor '%s'", t->name);
        return mrt_spec_uint(p, v, of, &t->seed);
    }
    if (!strcmp(kind, "fill")) {
        t->init = MRT_INIT_FILL;
        snprintf(of, sizeof of, "the fill value of tensor '%s'", t->name);
        mrt_status rc = mrt_spec_number(p, v, of, &t->fill);
        return rc ? rc : mrt_spec_fits_dtype(p, v, of, t->fill);
    }
    if (!strcmp(kind, "labels")) { /* labels: N classes */
        int64_t classes;
        t->init = MRT_INIT_LABELS;
        t->seed = mrt_init_seed_from_name(t->name);
        snprintf(of, sizeof of, "the number of classes of tensor '%s'",
                 t->name);
        mrt_status rc = mrt_spec_size(p, v, of, &classes);
        if (!rc && classes > labels_max(p->spec->dtype))
            rc = mrt_spec_fail(p, v, "%s is too large for %s: %s (at most "
                               "%lld, up to which %s holds every label "
                               "exactly)", of, mrt_dtype_name(p->spec->dtype),
                               mrt_spec_quote(v, q, sizeof q),
                               (long long)labels_max(p->spec->dtype),
                               mrt_dtype_name(p->spec->dtype));
        t->fill = (double)classes;
        return rc;
    }
    return init_file(p, t, v, n);
}

/* One entry of `tensors:`, key k and value v, into t. */
static mrt_status parse_tensor(mrt_spec_parser *p, const yaml_node_t *k,
                               const yaml_node_t *v, mrt_spec_tensor *t)
{
    char of[MRT_NAME_MAX + 32];
    mrt_status st = mrt_spec_name(p, k, "tensor", t->name);
    if (st)
        return st;
    t->mark = mrt_spec_mark(k);
    t->producer = -1;
    t->init = MRT_INIT_RANDOM;
    t->seed = mrt_init_seed_from_name(t->name);
    snprintf(of, sizeof of, "tensor '%s'", t->name);
    if ((st = mrt_spec_expect(p, v, YAML_MAPPING_NODE, of)) ||
        (st = mrt_spec_check_keys(p, v, tensor_keys, of)))
        return st;
    const yaml_node_t *shape = mrt_spec_get(p, v, "shape");
    if (!shape)
        return mrt_spec_fail(p, v, "tensor '%s' has no shape (add shape: "
                             "[dim, ...])", t->name);
    if ((st = mrt_spec_parse_shape(p, shape, t)) ||
        (st = mrt_spec_resolve_layout(p, t,
                                      mrt_spec_get(p, v, "layout"))))
        return st;
    if (mrt_spec_get(p, v, "init"))
        st = parse_init(p, t, mrt_spec_get(p, v, "init"));
    return st;
}

mrt_status mrt_spec_parse_tensors(mrt_spec_parser *p, const yaml_node_t *map)
{
    mrt_spec *s = p->spec;
    mrt_status st = mrt_spec_expect(p, map, YAML_MAPPING_NODE, "'tensors'");
    if (!st)
        st = mrt_spec_check_keys(p, map, NULL, "'tensors'");
    for (yaml_node_pair_t *pr = st ? NULL : map->data.mapping.pairs.start;
         pr && pr < map->data.mapping.pairs.top; pr++) {
        assert(s->ntensors < s->cap_tensors); /* counted before parsing */
        mrt_spec_tensor *t = &s->tensor[s->ntensors];
        st = parse_tensor(p, mrt_spec_node(p, pr->key),
                          mrt_spec_node(p, pr->value), t);
        if (st) { /* not counted: its file is freed here */
            free(t->file);
            t->file = NULL;
            return st;
        }
        if (mrt_spec_index_tensor(s, s->ntensors)) {
            free(t->file);
            t->file = NULL;
            return mrt_spec_nomem(p);
        }
        s->ntensors++;
    }
    return st;
}
