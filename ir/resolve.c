/*
 * resolve.c — the home layout of a tensor: layout rules (dim -> mesh
 * axes, major first) applied to its dims.
 *
 * The global rules apply to every tensor that has no layout of its own;
 * a tensor's (or op's) own rules replace them entirely, and the dims
 * they do not name are replicated.  As in Mesh-TensorFlow, two different
 * dims may map to the same axis in the global rules, as long as no
 * tensor has both: a layout uses each axis at most once.  Every split
 * must be even.  Both front ends (yaml/spec_layout.c, ir/build.c) and
 * mrt_spec_derive resolve layouts here, so the errors read the same.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "ir.h"

const char *mrt_spec_shape_str(const mrt_spec *s, const mrt_layout *l,
                               char *buf, size_t size)
{
    size_t n = (size_t)snprintf(buf, size, "[");
    for (int i = 0; i < l->ndims && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? ", " : "",
                              s->dim_name[l->dim[i]]);
    if (n < size)
        snprintf(buf + n, size - n, "]");
    return buf;
}

/* "d_ff: model" or "d_ff: [data, model]". */
static const char *rule_str(const mrt_spec *s, const mrt_mesh *m, int dim,
                            const mrt_rule *r, char *buf, size_t size)
{
    size_t n = (size_t)snprintf(buf, size, "%s: %s", s->dim_name[dim],
                                r->naxes == 1 ? "" : "[");
    for (int j = 0; j < r->naxes && n < size; j++)
        n += (size_t)snprintf(buf + n, size - n, "%s%s", j ? ", " : "",
                              m->name[r->axes[j]]);
    if (r->naxes != 1 && n < size)
        snprintf(buf + n, size - n, "]");
    return buf;
}

/* "under layout 'dp', " while an alternative is checked, else "". */
static const char *under(const mrt_spec_resolver *r, char *buf, size_t size)
{
    if (!r->alt)
        return "";
    snprintf(buf, size, "under layout '%s', ", r->alt);
    return buf;
}

/* A rule's position, or the tensor's shape for rules made by a program
 * (mrt_spec_derive's callers), which have none. */
static mrt_mark rule_mark(const mrt_spec_tensor *t, mrt_mark at)
{
    return at.line > 0 ? at : t->shape_mark;
}

/* Copies rules[dim] into dim i of t, refusing an axis already used. */
static mrt_status apply_rule(const mrt_spec_resolver *rs, mrt_spec_tensor *t,
                             int i, const mrt_rule rules[], int own,
                             int owner[])
{
    const mrt_spec *s = rs->s;
    const mrt_rule *r = &rules[t->layout.dim[i]];
    char a[MRT_SPEC_LIST_MAX], b[MRT_SPEC_LIST_MAX], pre[MRT_NAME_MAX + 32];
    for (int j = 0; j < r->naxes; j++) {
        int axis = r->axes[j], prev = owner[axis];
        if (prev >= 0) {
            int pd = t->layout.dim[prev];
            mrt_mark at = own || rs->alt ? rule_mark(t, r->mark)
                                         : t->shape_mark;
            return mrt_error_set(
                rs->err, MRT_E_SPEC, s->path, at,
                "%stensor '%s' would split mesh axis '%s' "
                "twice: %s and %s%s",
                under(rs, pre, sizeof pre), t->name, rs->mesh->name[axis],
                rule_str(s, rs->mesh, pd, &rules[pd], a, sizeof a),
                rule_str(s, rs->mesh, t->layout.dim[i], r, b, sizeof b),
                own                    ? ""
                : strchr(t->name, ':') ? " (give its op a layout:; the tensors "
                                         "an op makes inside take it too)"
                                       : " (give it its own layout:)");
        }
        owner[axis] = i;
        t->layout.axes[i][j] = axis;
    }
    t->layout.naxes[i] = r->naxes;
    t->split_mark[i] = r->naxes ? r->mark : (mrt_mark){0, 0};
    return MRT_OK;
}

mrt_status mrt_spec_apply_rules(const mrt_spec_resolver *r, mrt_spec_tensor *t,
                                const mrt_rule rules[], int own)
{
    int owner[MRT_MAX_AXES];
    mrt_status st = MRT_OK;
    t->layout.partial = 0;
    for (int a = 0; a < MRT_MAX_AXES; a++)
        owner[a] = -1;
    for (int i = 0; !st && i < t->layout.ndims; i++)
        st = apply_rule(r, t, i, rules, own, owner);
    return st;
}

int mrt_spec_too_large(const mrt_layout *l)
{
    int64_t elements, bytes;
    return mrt_checked_product(l->size, l->ndims, &elements) ||
           mrt_checked_mul(elements, 8, &bytes);
}

const char *mrt_spec_join(char *buf, size_t size, const char *first,
                          size_t stride, int n)
{
    size_t len = 0;
    const char *more = ", ...";
    buf[0] = '\0';
    if (n == 0)
        snprintf(buf, size, "none");
    for (int i = 0; i < n; i++) {
        const char *name = first + (size_t)i * stride;
        size_t need = strlen(name) + (i ? 2 : 0);
        if (len + need + strlen(more) + 1 > size) {
            snprintf(buf + len, size - len, "%s", i ? more : "...");
            break;
        }
        len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "",
                                name);
    }
    return buf;
}

void mrt_spec_layout_add_dim(const mrt_spec *s, mrt_layout *l, int d)
{
    if (l->ndims > MRT_MAX_DIMS || mrt_layout_find_dim(l, d) >= 0)
        return;
    if (l->ndims == MRT_MAX_DIMS) {
        l->ndims = MRT_MAX_DIMS + 1;
        return;
    }
    l->dim[l->ndims] = d;
    l->size[l->ndims++] = s->dim_size[d];
}
