/*
 * plan_print.c — the plan as text for people.  Deterministic: the same
 * plan prints the same bytes, so plans can be golden-tested.
 */
#include <inttypes.h>
#include <stdio.h>

#include "plan.h"

static void print_layout(const mrt_plan *p, const mrt_layout *l, FILE *f)
{
    char buf[512];
    fputs(mrt_layout_str(l, &p->mesh, p->dim_names, buf, sizeof buf), f);
}

static void print_shard(const mrt_value *v, FILE *f)
{
    for (int i = 0; i < v->layout.ndims; i++)
        fprintf(f, "%s%" PRId64, i ? "x" : "", v->local[i]);
}

static void print_mesh(const mrt_mesh *m, FILE *f)
{
    fputc('{', f);
    for (int i = 0; i < m->naxes; i++)
        fprintf(f, "%s%s: %" PRId64, i ? ", " : "", m->name[i], m->size[i]);
    fprintf(f, "} (%" PRId64 " rank%s)", m->nranks, m->nranks == 1 ? "" : "s");
}

static void print_kernel(const mrt_step *s, FILE *f)
{
    const mrt_einsum_class *c = &s->cls;
    fprintf(f, "    %-15s gemm M=%" PRId64 " N=%" PRId64 " K=%" PRId64
               " batch=%" PRId64,
            "einsum", c->size[MRT_IDX_M], c->size[MRT_IDX_N],
            c->size[MRT_IDX_K], c->size[MRT_IDX_BATCH]);
    if (c->n[MRT_IDX_SUM_A] || c->n[MRT_IDX_SUM_B])
        fprintf(f, " (sums away %" PRId64 "x%" PRId64 ")",
                c->size[MRT_IDX_SUM_A], c->size[MRT_IDX_SUM_B]);
    fprintf(f, "   %.4g flops/rank\n", s->flops);
}

static void print_step(const mrt_plan *p, const mrt_step *s, FILE *f)
{
    if (s->kind == MRT_STEP_EINSUM) {
        print_kernel(s, f);
        return;
    }
    const mrt_value *in = &p->value[s->in], *out = &p->value[s->out];
    char axes[256];
    fprintf(f, "    %-15s %-6s over %s", mrt_step_kind_name(s->kind),
            p->tensor_name[in->tensor],
            mrt_mesh_axes_str(&p->mesh, s->axes, axes, sizeof axes));
    if (mrt_step_is_collective(s->kind))
        fprintf(f, " (group %" PRId64 ")   %" PRId64 " bytes/rank", s->group,
                s->bytes);
    fputs("\n      ", f);
    print_layout(p, &in->layout, f);
    fputs(" -> ", f);
    print_layout(p, &out->layout, f);
    fputc('\n', f);
}

void mrt_plan_print(const mrt_plan *p, FILE *f)
{
    fprintf(f, "plan for %s on mesh ", p->spec_path);
    print_mesh(&p->mesh, f);
    fprintf(f, ", %s\n\ninputs (global layout, shard per rank):\n",
            mrt_dtype_name(p->dtype));
    for (int t = 0; t < p->ninputs; t++) {
        const mrt_value *val = &p->value[p->tensor_value[t]];
        fprintf(f, "  %-8s ", p->tensor_name[t]);
        print_layout(p, &val->layout, f);
        fputs("  shard ", f);
        print_shard(val, f);
        fputc('\n', f);
    }
    int64_t ncoll = 0;
    for (int i = 0; i < p->nops; i++) {
        const mrt_plan_op *o = &p->op[i];
        const mrt_value *res = &p->value[o->out_value];
        fprintf(f, "\nop %d: %s = einsum  ", i, p->tensor_name[res->tensor]);
        print_layout(p, &res->layout, f);
        fputs("  shard ", f);
        print_shard(res, f);
        fputc('\n', f);
        for (int k = o->first_step; k < o->first_step + o->nsteps; k++) {
            print_step(p, &p->step[k], f);
            ncoll += mrt_step_is_collective(p->step[k].kind);
        }
        fprintf(f, "    = %" PRId64 " bytes/rank, %.4g flops/rank\n",
                o->comm_bytes, o->flops);
    }
    fprintf(f, "\ntotals per rank: %" PRId64 " bytes handed to MPI in %" PRId64
               " collective%s, %.4g flops\n",
            p->comm_bytes, ncoll, ncoll == 1 ? "" : "s", p->flops);
}
