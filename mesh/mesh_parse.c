/*
 * mesh_parse.c — mesh strings like "data=4,model=2" read into a mesh
 * (each item AXIS=SIZE, names as in a spec, sizes positive, the product
 * at most INT_MAX ranks), and a mesh copied out as plain data.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "mesh_parse.h"

_Static_assert(MRT_API_MAX_AXES == MRT_MAX_AXES,
               "meshrt.h's axes are the mesh's");

/* s without leading and trailing blanks (cut in place). */
static char *trim(char *s)
{
    s += strspn(s, " \t");
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    return s;
}

/* 1 when s is a name: [A-Za-z_][A-Za-z0-9_]*, shorter than MRT_NAME_MAX. */
static int axis_name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= MRT_NAME_MAX || strspn(s, "0123456789") > 0)
        return 0;
    return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                     "_0123456789") == n;
}

/* The size in s, all digits, 1 to INT_MAX; else 0. */
static int64_t axis_size(const char *s)
{
    if (!*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 10)
        return 0;
    long long v = strtoll(s, NULL, 10);
    return v > 0 && v <= INT_MAX ? (int64_t)v : 0;
}

/* Adds one "AXIS=SIZE" (text[0..n)) to m; else returns 0 and says why. */
static int parse_item(const char *text, size_t n, mrt_mesh *m, char *why,
                      size_t size)
{
    char item[128];
    snprintf(item, sizeof item, "%.*s", (int)(n < 127 ? n : 127), text);
    char *eq = strchr(item, '=');
    if (!eq)
        return snprintf(why, size, "'%s' is not AXIS=SIZE", trim(item)), 0;
    *eq = '\0';
    char *name = trim(item), *num = trim(eq + 1);
    int64_t v = axis_size(num);
    if (!axis_name_ok(name))
        return snprintf(why, size, "'%.70s' is not a valid axis name", name), 0;
    if (v == 0)
        return snprintf(why, size,
                        "the size of axis '%s' must be a positive "
                        "integer, got '%.30s'",
                        name, num),
               0;
    if (mrt_mesh_find_axis(m, name) >= 0)
        return snprintf(why, size, "axis '%s' is given twice", name), 0;
    if (m->naxes == MRT_MAX_AXES)
        return snprintf(why, size, "more than %d axes", MRT_MAX_AXES), 0;
    if (v > INT_MAX / m->nranks)
        return snprintf(why, size, "more than %d ranks", INT_MAX), 0;
    strcpy(m->name[m->naxes], name);
    m->size[m->naxes++] = v;
    m->nranks *= v;
    return 1;
}

mrt_status mrt_mesh_parse_string(const char *s, mrt_mesh *m, mrt_error *err)
{
    static const mrt_mark no_mark;
    char why[256] = "expected AXIS=SIZE[,AXIS=SIZE...]";
    memset(m, 0, sizeof *m);
    m->nranks = 1;
    for (const char *p = s; *s;) {
        size_t n = strcspn(p, ",");
        if (!parse_item(p, n, m, why, sizeof why))
            break;
        if (!p[n])
            return MRT_OK;
        p += n + 1;
    }
    return mrt_error_set(err, MRT_E_USAGE, "", no_mark,
                         "invalid --mesh '%.100s': %s", s, why);
}

mrt_status mrt_mesh_parse(const char *s, mrt_mesh_info *out, mrt_error *err)
{
    static const mrt_mark no_mark;
    if (!s || !out)
        return mrt_error_set(err, MRT_E_USAGE, "", no_mark,
                             "mrt_mesh_parse: argument '%s' is NULL",
                             !s ? "s" : "out");
    mrt_mesh m;
    mrt_status st = mrt_mesh_parse_string(s, &m, err);
    if (st == MRT_OK)
        mrt_mesh_info_of(&m, out);
    return st;
}

void mrt_mesh_info_of(const mrt_mesh *m, mrt_mesh_info *out)
{
    memset(out, 0, sizeof *out);
    out->naxes = m->naxes;
    for (int i = 0; i < m->naxes; i++) {
        snprintf(out->name[i], sizeof out->name[i], "%s", m->name[i]);
        out->size[i] = m->size[i];
    }
    out->nranks = m->nranks;
}
