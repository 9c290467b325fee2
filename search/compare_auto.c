/*
 * compare_auto.c — what the auto planner would save on a pinned row of
 * `compare` (one planned with its layouts as given: pin: true, or
 * --planner rules), and how: the same program planned by auto, which
 * may leave the layouts where a cheaper lowering moves activations
 * instead of weights (or the reverse), and the collectives it drops and
 * adds against the pinned plan.  A collective is named by its kind, the
 * tensor it moves and its mesh axes ("allreduce grad:w1 over
 * data,model"); the two plans' lists are compared as multisets of kind,
 * axes and bytes, so a collective that only moved to another op (a
 * pending sum resolved one op later, under another tensor's name) is no
 * change.
 */
#include "compare_auto.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY 160

/* A collective of a plan: what matches (kind, axes, bytes) and what is
 * shown (kind, tensor, axes). */
typedef struct coll {
    char key[KEY];
    char name[KEY];
} coll;

static int coll_cmp(const void *a, const void *b)
{
    const coll *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : strcmp(x->name, y->name);
}

/* p's collectives, sorted (*n of them), or NULL when out of memory. */
static coll *collectives(const mrt_plan *p, int *n)
{
    coll *k = calloc((size_t)p->nsteps + 1, sizeof *k);
    *n = 0;
    if (!k)
        return NULL;
    for (int i = 0; i < p->nsteps; i++) {
        const mrt_step *st = &p->step[i];
        if (!mrt_step_is_collective(st->kind))
            continue;
        char axes[128];
        const char *kind = mrt_step_kind_name(st->kind);
        mrt_mesh_axes_str(&p->mesh, st->axes, axes, sizeof axes);
        snprintf(k[*n].key, KEY, "%s %s %" PRId64, kind, axes, st->bytes);
        snprintf(k[(*n)++].name, KEY, "%s %s over %s", kind,
                 p->tensor_name[p->value[st->out].tensor], axes);
    }
    qsort(k, (size_t)*n, sizeof *k, coll_cmp);
    return k;
}

/* Appends "name" (with " (xN)" for N > 1) to buf of size, with ", "
 * after the first; "..." once when full. */
static void append(char *buf, size_t size, int *first, const char *name, int n)
{
    size_t len = strlen(buf);
    char item[KEY + 32];
    snprintf(item, sizeof item, "%s%s", *first ? "" : ", ", name);
    if (n > 1)
        snprintf(item + strlen(item), sizeof item - strlen(item), " (x%d)", n);
    *first = 0;
    if (len + strlen(item) + 5 < size)
        snprintf(buf + len, size - len, "%s", item);
    else if (len + 4 < size && (len < 3 || strcmp(buf + len - 3, "...")))
        snprintf(buf + len, size - len, "...");
}

/* append() of the n collectives x[0..n), equal names once with a count
 * (they are sorted by name). */
static void append_runs(char *buf, size_t size, int *first, const coll *x,
                        int n)
{
    for (int k = 0; k < n;) {
        int run = 1;
        while (k + run < n && !strcmp(x[k + run].name, x[k].name))
            run++;
        append(buf, size, first, x[k].name, run);
        k += run;
    }
}

/* "drops A, B; adds C" into buf: the collectives only in a (drops) and
 * only in b (adds), as multisets of keys; "" when they are the same.
 * Of several with one key, those shown are the last ones by name. */
static void diff(const coll *a, int na, const coll *b, int nb, char *buf,
                 size_t size)
{
    char drops[sizeof((mrt_compare_row *)0)->auto_moves] = "";
    char adds[sizeof drops] = "";
    int fd = 1, fa = 1, i = 0, j = 0;
    while (i < na || j < nb) {
        int c = i >= na ? 1 : j >= nb ? -1 : strcmp(a[i].key, b[j].key);
        const char *key = c <= 0 ? a[i].key : b[j].key;
        int ca = 0, cb = 0;
        while (i + ca < na && !strcmp(a[i + ca].key, key))
            ca++;
        while (j + cb < nb && !strcmp(b[j + cb].key, key))
            cb++;
        append_runs(drops, sizeof drops, &fd, a + i + cb, ca - cb);
        append_runs(adds, sizeof adds, &fa, b + j + ca, cb - ca);
        i += ca;
        j += cb;
    }
    snprintf(buf, size, "%s%s%s%s%s", drops[0] ? "drops " : "", drops,
             drops[0] && adds[0] ? "; " : "", adds[0] ? "adds " : "", adds);
}

mrt_status mrt_compare_auto(mrt_compare_row *row, const mrt_spec *s,
                            const mrt_plan *pinned, const mrt_plan_options *opt)
{
    mrt_plan_options o = opt ? *opt : (mrt_plan_options){0};
    o.planner = MRT_PLANNER_AUTO;
    o.explain = 0;
    mrt_spec *u = malloc(sizeof *u); /* s, not pinned: read, not owned */
    if (!u)
        return MRT_E_NOMEM;
    *u = *s;
    u->pinned = 0;
    mrt_plan *p = NULL;
    mrt_error err = {0};
    mrt_status st = mrt_plan_create(u, &o, &p, &err);
    free(u);
    if (st != MRT_OK)
        return st == MRT_E_NOMEM ? st : MRT_OK;
    int na = 0, nb = 0;
    coll *a = collectives(pinned, &na);
    coll *b = a ? collectives(p, &nb) : NULL;
    if (b) {
        row->auto_ok = 1;
        row->auto_totals = p->totals;
        diff(a, na, b, nb, row->auto_moves, sizeof row->auto_moves);
    }
    free(a);
    free(b);
    mrt_plan_destroy(p);
    return b ? MRT_OK : MRT_E_NOMEM;
}
