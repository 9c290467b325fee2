/*
 * rules_show.c — a set of global rules as people read it: one line
 * ("batch: data, d_ff: [model, pipe]"), a `layout:` block to paste into
 * the spec, and meshrt.h's mrt_search_axes lists that the reports hold
 * (mrt_search_format_rules and mrt_search_write_layout show those).
 */
#include <stdlib.h>
#include <string.h>

#include "search_rules.h"

static int put_axes(const mrt_spec *s, const mrt_rule *r, char *buf, int size)
{
    if (r->naxes == 1)
        return snprintf(buf, (size_t)size, "%s", s->mesh.name[r->axes[0]]);
    int n = snprintf(buf, (size_t)size, "[");
    for (int j = 0; j < r->naxes && n < size; j++)
        n += snprintf(buf + n, (size_t)(size - n), "%s%s", j ? ", " : "",
                      s->mesh.name[r->axes[j]]);
    if (n < size)
        n += snprintf(buf + n, (size_t)(size - n), "]");
    return n;
}

char *mrt_rules_str(const mrt_spec *s, const mrt_rule *rules, char *buf,
                    int size)
{
    int n = 0;
    buf[0] = '\0';
    for (int d = 0; d < s->ndims && n < size; d++) {
        if (!rules[d].naxes)
            continue;
        n += snprintf(buf + n, (size_t)(size - n), "%s%s: ", n ? ", " : "",
                      s->dim_name[d]);
        if (n < size)
            n += put_axes(s, &rules[d], buf + n, size - n);
    }
    if (!n)
        snprintf(buf, (size_t)size, "(all replicated)");
    return buf;
}

void mrt_rules_print_yaml(const mrt_spec *s, const mrt_rule *rules, FILE *f)
{
    int any = 0;
    char axes[MRT_MAX_AXES * (MRT_NAME_MAX + 2) + 4];
    for (int d = 0; d < s->ndims; d++) {
        if (!rules[d].naxes)
            continue;
        put_axes(s, &rules[d], axes, sizeof axes);
        fprintf(f, "%s  %s: %s\n", any++ ? "" : "layout:\n", s->dim_name[d],
                axes);
    }
    if (!any)
        fputs("layout: {}\n", f);
}

void mrt_rules_to_axes(const mrt_rule *r, int n, mrt_search_axes *out)
{
    for (int d = 0; d < n; d++) {
        memset(&out[d], 0, sizeof out[d]);
        out[d].naxes = r[d].naxes;
        memcpy(out[d].axis, r[d].axes, (size_t)r[d].naxes * sizeof(int));
    }
}

void mrt_rules_from_axes(const mrt_search_axes *a, int n, mrt_rule *out)
{
    memset(out, 0, (size_t)n * sizeof *out);
    for (int d = 0; d < n; d++) {
        int k = a[d].naxes < MRT_MAX_AXES ? a[d].naxes : MRT_MAX_AXES;
        out[d].naxes = k < 0 ? 0 : k;
        memcpy(out[d].axes, a[d].axis, (size_t)out[d].naxes * sizeof(int));
    }
}

/* The rules of a, or NULL (out of memory, or a bad argument). */
static mrt_rule *rules_of_axes(const mrt_spec *s, const mrt_search_axes *a)
{
    mrt_rule *r = s && a ? calloc((size_t)s->ndims + 1, sizeof *r) : NULL;
    if (r)
        mrt_rules_from_axes(a, s->ndims, r);
    return r;
}

char *mrt_search_format_rules(const mrt_spec *s, const mrt_search_axes *a,
                              char *buf, size_t size)
{
    if (!buf || !size)
        return buf;
    buf[0] = '\0';
    mrt_rule *r = rules_of_axes(s, a);
    if (!r) {
        if (s && a)
            snprintf(buf, size, "(out of memory)");
        return buf;
    }
    mrt_rules_str(s, r, buf, size > 1 << 30 ? 1 << 30 : (int)size);
    free(r);
    return buf;
}

void mrt_search_write_layout(const mrt_spec *s, const mrt_search_axes *a,
                             FILE *f)
{
    mrt_rule *r = f ? rules_of_axes(s, a) : NULL;
    if (!r)
        return;
    mrt_rules_print_yaml(s, r, f);
    free(r);
}
