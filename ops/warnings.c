/*
 * warnings.c — what `meshrt check` warns about, as data
 * (mrt_plan_warnings in meshrt.h): layouts that waste the mesh or do not
 * fit it.  An op whose local kernel runs whole on every rank of some
 * axis (found from the plan's EINSUM step: no value it reads or writes
 * is split, or a pending sum, over that axis); a tensor kept replicated
 * whose shard takes more than a share of a rank's memory; and a plan
 * whose peak memory per rank is over a rank's memory (fits.c); on a
 * profile with nodes, a tensor-parallel axis (one a forward einsum of the
 * spec sums over) whose groups cross nodes.  Each
 * warning carries the position of what it is about (the peak memory
 * one, about the whole plan, has none).
 */
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "fits.h"
#include "plan.h"
#include "spec.h"

/* Where warnings go and how many there are. */
typedef struct sink {
    mrt_warning *out;
    int max, n;
} sink;

static void warn(sink *k, mrt_warning_kind kind, const char *file, mrt_mark at,
                 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void warn(sink *k, mrt_warning_kind kind, const char *file, mrt_mark at,
                 const char *fmt, ...)
{
    mrt_warning *w = k->n < k->max ? &k->out[k->n] : NULL;
    k->n++;
    if (!w)
        return;
    memset(w, 0, sizeof *w);
    w->kind = kind;
    snprintf(w->file, sizeof w->file, "%s", file);
    w->line = at.line;
    w->column = at.column;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->message, sizeof w->message, fmt, ap);
    va_end(ap);
}

/* Axes a layout splits, or over which it is a pending sum. */
static unsigned axes_of(const mrt_layout *l)
{
    return mrt_layout_used_axes(l) | l->partial;
}

/* Mesh axes of size > 1. */
static unsigned real_axes(const mrt_mesh *m)
{
    unsigned mask = 0;
    for (int a = 0; a < m->naxes; a++)
        if (m->size[a] > 1)
            mask |= 1u << a;
    return mask;
}

/* Op i duplicated along an axis: its kernel's inputs and output all
 * whole along it, so every rank of the axis computes the same thing. */
static void warn_duplicated_op(sink *k, const mrt_spec *s, const mrt_plan *p,
                               int i)
{
    const mrt_plan_op *op = &p->op[i];
    /* only the einsums the spec wrote: the small sums inside softmax,
     * layer_norm and the losses, and the backward program, are
     * duplicated by design (as in Megatron's layer norms) */
    if (s->op[i].phase != MRT_PHASE_FORWARD ||
        strchr(s->tensor[s->op[i].out].name, ':'))
        return;
    for (int j = op->first_step; j < op->first_step + op->nsteps; j++) {
        const mrt_step *st = &p->step[j];
        if (st->kind != MRT_STEP_EINSUM)
            continue;
        unsigned used = axes_of(&p->value[st->in].layout) |
                        axes_of(&p->value[st->out].layout);
        if (st->in2 >= 0)
            used |= axes_of(&p->value[st->in2].layout);
        unsigned idle = real_axes(&p->mesh) & ~used;
        if (p->pipe.stages > 1) /* its ranks hold other layers */
            idle &= ~(1u << p->pipe.axis);
        for (int a = 0; a < p->mesh.naxes; a++)
            if (idle & (1u << a))
                warn(
                    k, MRT_WARN_DUPLICATED_OP, s->path, s->op[i].mark,
                    "op %d (%s = einsum) computes the same result on the %" PRId64
                    " ranks of each '%s' group: none of its dims is "
                    "split over '%s'",
                    s->op[i].user, s->tensor[s->op[i].out].name,
                    p->mesh.size[a], p->mesh.name[a], p->mesh.name[a]);
        return;
    }
}

/* Op i's einsum leaves a sum over axes whose groups cross nodes (the
 * all-reduce or reduce-scatter of tensor parallelism, once per forward
 * step on the critical path): one warning per axis, at the first such
 * op the spec wrote.  *warned holds the axes already warned about. */
static void warn_tp_across_nodes(sink *k, const mrt_spec *s, const mrt_plan *p,
                                 int i, unsigned *warned)
{
    const mrt_plan_op *op = &p->op[i];
    if (p->profile.ranks_per_node <= 0 || s->op[i].phase != MRT_PHASE_FORWARD ||
        strchr(s->tensor[s->op[i].out].name, ':'))
        return;
    for (int j = op->first_step; j < op->first_step + op->nsteps; j++) {
        const mrt_step *st = &p->step[j];
        if (st->kind != MRT_STEP_EINSUM)
            continue;
        unsigned sums = p->value[st->out].layout.partial & real_axes(&p->mesh);
        for (int a = 0; a < p->mesh.naxes; a++) {
            mrt_mesh_span sp = mrt_cost_span(&p->profile, &p->mesh, 1u << a);
            if (!(sums & ~*warned & (1u << a)) || sp.tier == MRT_TIER_INTRA)
                continue;
            *warned |= 1u << a;
            warn(k, MRT_WARN_TP_ACROSS_NODES, s->path, s->op[i].mark,
                 "mesh axis '%s' is tensor-parallel (op %d, %s = einsum, "
                 "sums over it every forward step) and its groups cross "
                 "nodes of %lld ranks (ranks fill nodes in order, the "
                 "mesh's last axes innermost): put '%s' last in mesh: to "
                 "keep it inside a node",
                 p->mesh.name[a], s->op[i].user, s->tensor[s->op[i].out].name,
                 (long long)p->profile.ranks_per_node, p->mesh.name[a]);
        }
    }
}

/* "'data', 'model'" (sep ", ") for the axes of mask. */
static const char *axis_list(const mrt_mesh *m, unsigned mask, const char *sep,
                             char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int a = 0; a < m->naxes && n < size; a++)
        if (mask & (1u << a))
            n += (size_t)snprintf(buf + n, size - n, "%s'%s'", n ? sep : "",
                                  m->name[a]);
    return buf;
}

/* Tensor t replicated over axes of size > 1 with a shard larger than
 * share of memory. */
static void warn_replicated(sink *k, const mrt_spec *s,
                            const mrt_spec_tensor *t, double share,
                            int64_t memory)
{
    char all[MRT_MAX_AXES * (MRT_NAME_MAX + 8)], any[sizeof all];
    unsigned rep = real_axes(&s->mesh) & ~mrt_layout_used_axes(&t->layout);
    int64_t bytes = mrt_layout_shard_count(&t->layout, &s->mesh) *
                    mrt_dtype_size(
                        mrt_spec_tensor_dtype(s, (int)(t - s->tensor)));
    if (!rep || memory <= 0 || (double)bytes <= share * (double)memory)
        return;
    warn(k, MRT_WARN_REPLICATED, s->path, t->mark,
         "tensor '%s' is "
         "replicated over %s (%" PRId64 " copies of each shard) and its "
         "shard of %" PRId64 " bytes is over %g%% of a rank's memory (%" PRId64
         " bytes): split one of its dims over %s",
         t->name, axis_list(&s->mesh, rep, ", ", all, sizeof all),
         mrt_mesh_group_size(&s->mesh, rep), bytes, share * 100, memory,
         axis_list(&s->mesh, rep, " or ", any, sizeof any));
}

int mrt_plan_warnings(const mrt_spec *s, const mrt_plan *p,
                      const mrt_warning_options *opt, mrt_warning *out, int max)
{
    if (!s || !p)
        return -1;
    sink k = {out, out ? max : 0, 0};
    int64_t memory = opt && opt->memory > 0 ? opt->memory
                                            : mrt_machine_memory();
    const char *what = opt && opt->memory_name  ? opt->memory_name
                       : opt && opt->memory > 0 ? "a rank's memory"
                                                : "this machine's memory";
    double share = opt && opt->replicated_share > 0 ? opt->replicated_share
                                                    : 0.25;
    /* fits.c words it (for `meshrt plan` too): "SPEC: warning: MSG" */
    char line[sizeof out->message + PATH_MAX];
    unsigned kinds = opt && opt->kinds ? opt->kinds : ~0u;
    if ((kinds & 1u << MRT_WARN_MEMORY) &&
        mrt_plan_memory_warning(p, memory, what, line, sizeof line))
        warn(&k, MRT_WARN_MEMORY, p->spec_path, (mrt_mark){0}, "%s",
             line + strlen(p->spec_path) + strlen(": warning: "));
    for (int i = 0;
         (kinds & 1u << MRT_WARN_DUPLICATED_OP) && i < s->nops && i < p->nops;
         i++)
        warn_duplicated_op(&k, s, p, i);
    for (int t = 0; (kinds & 1u << MRT_WARN_REPLICATED) && t < s->ntensors; t++)
        warn_replicated(&k, s, &s->tensor[t], share, memory);
    unsigned warned = 0;
    for (int i = 0;
         (kinds & 1u << MRT_WARN_TP_ACROSS_NODES) && i < s->nops && i < p->nops;
         i++)
        warn_tp_across_nodes(&k, s, p, i, &warned);
    return k.n;
}
