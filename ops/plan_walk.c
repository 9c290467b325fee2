/*
 * plan_walk.c — one pass of the planner over the program: a fresh plan
 * (in the tables of a spare one when the context holds one), its inputs
 * in their home layouts, then every op in order, each lowered by
 * lower_einsum.c, cheapest.c or lower_map.c with the strategy being
 * planned; then the plan is finished or only tallied.
 */
#include "planning.h"

#include <assert.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grow.h"
#include "program_hash.h"

/* Moves the big tables of the context's spare plan (one of the same spec
 * no longer wanted) into p, which then fills them instead of allocating
 * its own: the memory is already mapped, and mapping hundreds of MB is
 * much of the time of planning a long program.  The capacities the
 * context holds are those tables'. */
static void take_tables(mrt_planning *pl, mrt_plan *p)
{
    mrt_plan *spare = pl->spare;
    pl->spare = NULL;
    pl->cap_alts = 0;
    if (!spare) {
        pl->cap_values = pl->cap_steps = 0;
        return;
    }
    p->value = spare->value;
    p->step = spare->step;
    p->op = spare->op;                   /* [nops + 1], zeroed in copy_names */
    p->tensor_name = spare->tensor_name; /* the same names */
    spare->value = NULL;
    spare->step = NULL;
    spare->op = NULL;
    spare->tensor_name = NULL;
    mrt_plan_destroy(spare);
}

/* Copies the names and sizes the plan needs, so it does not borrow s
 * (the names are already there in tables taken from a spare plan). */
static mrt_status copy_names(mrt_planning *pl, mrt_plan *p)
{
    const mrt_spec *s = pl->spec;
    int have_names = p->tensor_name != NULL;
    p->ndims = s->ndims;
    p->dim_names = calloc((size_t)s->ndims + 1, sizeof *p->dim_names);
    p->ntensors = s->ntensors;
    if (!have_names)
        p->tensor_name = calloc((size_t)s->ntensors + 1,
                                sizeof *p->tensor_name);
    p->tensor_value = calloc((size_t)s->ntensors + 1, sizeof(int));
    p->input = calloc((size_t)s->ntensors + 1, sizeof(int));
    p->nops = s->nops;
    if (p->op)
        memset(p->op, 0, ((size_t)s->nops + 1) * sizeof *p->op);
    else
        p->op = calloc((size_t)s->nops + 1, sizeof *p->op);
    p->noutputs = s->noutputs;
    p->output = calloc((size_t)s->noutputs + 1, sizeof(int));
    p->nblocks = s->nblocks;
    p->block_name = calloc((size_t)s->nblocks + 1, sizeof *p->block_name);
    for (int b = 0; p->block_name && b < s->nblocks; b++)
        memcpy(p->block_name[b], s->block[b].name, MRT_NAME_MAX);
    if (!p->block_name || !p->dim_names || !p->tensor_name ||
        !p->tensor_value || !p->input || !p->op || !p->output)
        return MRT_E_NOMEM;
    for (int i = 0; i < s->ndims; i++)
        if (!(p->dim_names[i] = strdup(s->dim_name[i])))
            return MRT_E_NOMEM;
    for (int i = 0; i < s->ntensors; i++) {
        if (!have_names)
            memcpy(p->tensor_name[i], s->tensor[i].name, MRT_NAME_MAX);
        pl->last_value[i] = -1;
    }
    memcpy(p->output, s->output, (size_t)s->noutputs * sizeof(int));
    return MRT_OK;
}

/* The profile: another plan's as it stands, else a named file, else
 * the default file when there is one, else the built-in one; then the
 * spec's `network:` links on top. */
static mrt_status load_profile(mrt_plan *p, const mrt_spec *s,
                               const mrt_plan_options *opt, mrt_error *err)
{
    char def[PATH_MAX];
    const char *path = opt->machine;
    if (opt->machine_of) {
        p->profile = opt->machine_of->profile;
        return MRT_OK;
    }
    mrt_profile_default(&p->profile);
    if (path && mrt_profile_find(path, def, sizeof def, err) != MRT_OK)
        return MRT_E_USAGE;
    if (path)
        path = def;
    else if (access(mrt_profile_default_path(def, sizeof def), R_OK) == 0)
        path = def;
    if (path) {
        mrt_status st = mrt_profile_load(path, &p->profile, err);
        if (st != MRT_OK)
            return st;
    }
    if (opt->ranks_per_node > 0)
        mrt_profile_set_ranks_per_node(&p->profile, opt->ranks_per_node);
    for (int i = 0; i < s->nnet; i++)
        mrt_profile_set_link(
            &p->profile, s->net_axis[i],
            (mrt_link){s->net_latency_s[i], s->net_bandwidth_Bps[i]});
    if (s->nnet) {
        size_t n = strlen(p->profile.source);
        snprintf(p->profile.source + n, sizeof p->profile.source - n,
                 " + the spec's network:");
    }
    return MRT_OK;
}

/* Mesh-TensorFlow has no per-tensor layouts: every tensor takes the
 * global rules, which must then be valid for it. */
mrt_status mrt_meshtf_home(const mrt_spec *s, int t, mrt_layout *l,
                           mrt_error *err)
{
    const mrt_spec_tensor *st = &s->tensor[t];
    unsigned used = 0;
    *l = st->layout;
    for (int i = 0; i < l->ndims; i++) {
        const mrt_rule *r = &s->rule[l->dim[i]];
        l->naxes[i] = r->naxes;
        for (int j = 0; j < r->naxes; j++) {
            int a = r->axes[j];
            if (used & (1u << a))
                return mrt_error_set(
                    err, MRT_E_SPEC, s->path, st->shape_mark,
                    "--planner meshtf: the global rules split mesh axis "
                    "'%s' twice in tensor '%s' (Mesh-TensorFlow has no "
                    "per-tensor layouts)",
                    s->mesh.name[a], st->name);
            used |= 1u << a;
            l->axes[i][j] = a;
        }
    }
    return MRT_OK;
}

/* The home layout of tensor t: the spec's, or under Mesh-TF the global
 * rules' (in *buf; checked for every tensor before planning).  Not kept
 * in a table: a layout per tensor of a long program is hundreds of MB. */
static const mrt_layout *home_of(const mrt_planning *pl, int t, mrt_layout *buf)
{
    if (pl->strategy != MRT_STRATEGY_MESHTF)
        return &pl->spec->tensor[t].layout;
    mrt_status st = mrt_meshtf_home(pl->spec, t, buf, NULL);
    assert(st == MRT_OK);
    (void)st;
    return buf;
}

/* A fresh plan of the spec, in the spare tables if any, with room for
 * what most programs make, its names and its profile: pl->plan. */
static mrt_status start_plan(mrt_planning *pl, mrt_error *err)
{
    const mrt_spec *s = pl->spec;
    mrt_plan *p = pl->plan = calloc(1, sizeof *p);
    if (!p) {
        mrt_planning_recycle(pl, NULL);
        return mrt_planning_nomem(pl->spec, err);
    }
    take_tables(pl, p);
    if (pl->strategy == MRT_STRATEGY_CHEAPEST &&
        !(pl->memo = mrt_cheapest_memo_create()))
        return mrt_planning_nomem(pl->spec, err);
    snprintf(p->spec_path, sizeof p->spec_path, "%s", s->path);
    p->program = mrt_program_hash(s);
    p->mesh = s->mesh;
    p->dtype = s->dtype;
    p->elsize = mrt_dtype_size(s->dtype);
    pl->overflow_tensor = -1;
    p->planner = pl->opt->planner;
    p->pipe = (mrt_plan_pipeline){
        .axis = -1, .stages = 1, .microbatches = 1, .virtual_stages = 1};
    pl->explain = pl->opt->explain && pl->strategy == MRT_STRATEGY_CHEAPEST;
    if (copy_names(pl, p) != MRT_OK)
        return mrt_planning_nomem(pl->spec, err);
    /* room for what most programs make (every tensor a value, a quarter
     * of the ops a step more), so a long program's tables are not copied
     * as they grow; more is still grown into */
    int64_t guess = (int64_t)s->ntensors + s->nops / 4 + 16;
    if (guess < INT_MAX / 2 &&
        (mrt_grow((void **)&p->value, &pl->cap_values, (int)guess,
                  sizeof *p->value) ||
         mrt_grow((void **)&p->step, &pl->cap_steps,
                  (int)(s->nops + s->nops / 4 + 16), sizeof *p->step)))
        return mrt_planning_nomem(pl->spec, err);
    return load_profile(p, s, pl->opt, err);
}

/* The inputs in their home layouts (under Mesh-TF, checked for every
 * tensor, and the tensors whose own layouts it replaced listed). */
static mrt_status plan_inputs(mrt_planning *pl, mrt_error *err)
{
    const mrt_spec *s = pl->spec;
    mrt_plan *p = pl->plan;
    mrt_layout hbuf;
    for (int t = 0; t < s->ntensors; t++) {
        if (pl->strategy == MRT_STRATEGY_MESHTF) {
            mrt_status st = mrt_meshtf_home(s, t, &hbuf, err);
            if (st != MRT_OK)
                return st;
            if (!mrt_layout_equal(&hbuf, &s->tensor[t].layout)) {
                size_t n = strlen(p->ignored);
                snprintf(p->ignored + n, sizeof p->ignored - n, "%s%s",
                         n ? ", " : "", s->tensor[t].name);
            }
        }
        p->tensor_value[t] = -1;
        if (s->tensor[t].producer >= 0)
            continue;
        p->input[p->ninputs++] = t;
        if ((p->tensor_value[t] = mrt_planning_add_value(
                 pl, t, home_of(pl, t, &hbuf))) < 0)
            return mrt_planning_nomem(pl->spec, err);
        p->value[p->tensor_value[t]].stage = mrt_pipeline_input_stage(pl, t);
    }
    return MRT_OK;
}

/* Lowers op i with the strategy being planned and records its figures. */
static mrt_status plan_op(mrt_planning *pl, int i, mrt_error *err)
{
    const mrt_spec *s = pl->spec;
    const mrt_spec_op *o = &s->op[i];
    mrt_plan *p = pl->plan;
    mrt_plan_op *po = &p->op[i];
    mrt_layout hbuf;
    const mrt_layout *home = home_of(pl, o->out, &hbuf);
    int defer = pl->strategy == MRT_STRATEGY_CHEAPEST ? pl->deferrable[o->out]
                                                      : pl->lazy[o->out];
    mrt_status st;
    int saved[2];
    po->first_step = p->nsteps;
    po->lower_bound_bytes = -1;
    mrt_planning_mark m = mrt_planning_get_mark(pl);
    if ((st = mrt_pipeline_receive(pl, i, saved, err)) != MRT_OK)
        return st;
    po->stage = pl->op_stage && p->pipe.stages > 1 ? pl->op_stage[i] : -1;
    po->chunk = pl->op_stage && p->pipe.stages > 1 ? pl->op_chunk[i] : -1;
    po->nin = o->nin;
    po->phase = o->phase;
    po->user = o->user;
    po->block = o->block;
    po->layer = o->layer;
    po->recomputed = o->recomputed != 0;
    po->what = o->kind == MRT_OP_MAP           ? mrt_map_name(o->fn)
               : o->kind == MRT_OP_REDUCE_MAX  ? "reduce_max"
               : o->kind == MRT_OP_RENAME      ? "rename"
               : o->kind == MRT_OP_GATHER      ? "embedding"
               : o->kind == MRT_OP_SCATTER_ADD ? "scatter_add"
                                               : "einsum";
    for (int k = 0; k < o->nin; k++)
        po->in_value[k] = p->tensor_value[o->in[k]];
    if (mrt_regather_emit(pl, i) < 0)
        return mrt_planning_nomem(s, err);
    if (o->kind != MRT_OP_EINSUM && o->kind != MRT_OP_GATHER &&
        o->kind != MRT_OP_SCATTER_ADD)
        st = mrt_lower_local(pl, i, home, pl->strategy == MRT_STRATEGY_MESHTF,
                             defer, err);
    else if (pl->strategy == MRT_STRATEGY_CHEAPEST)
        st = mrt_cheapest_einsum(pl, i, home, defer, err);
    else
        st = mrt_lower_einsum(pl, i, home, pl->strategy, defer, err);
    if (st == MRT_OK)
        st = mrt_planning_overflow_error(pl, err);
    if (st != MRT_OK)
        return st;
    mrt_pipeline_restore(pl, i, saved);
    pl->cur_stage = -1;
    po->nsteps = p->nsteps - po->first_step;
    po->out_value = p->tensor_value[o->out];
    po->comm_bytes = p->comm_bytes - m.comm_bytes;
    po->flops = p->flops - m.flops;
    return MRT_OK;
}

mrt_status mrt_planning_build(mrt_planning *pl, mrt_strategy strategy,
                              int finish, mrt_plan **out, mrt_error *err)
{
    *out = NULL;
    pl->strategy = strategy;
    mrt_status st = start_plan(pl, err);
    int *order = NULL;
    if (st == MRT_OK)
        st = mrt_pipeline_setup(pl, err);
    if (st == MRT_OK)
        st = plan_inputs(pl, err);
    if (st == MRT_OK && pl->plan->pipe.stages > 1 &&
        !(order = mrt_pipeline_op_order(pl->spec, &pl->plan->pipe, pl->op_stage,
                                        pl->op_chunk, err)))
        st = err && err->code ? err->code /* a schedule the stages refuse */
                              : MRT_E_NOMEM;
    for (int i = 0; st == MRT_OK && i < pl->spec->nops; i++)
        st = plan_op(pl, order ? order[i] : i, err);
    free(order);
    if (st == MRT_OK && !finish)
        mrt_plan_tally(pl->plan);
    else if (st == MRT_OK)
        st = mrt_planning_finish(pl, err);
    if (st == MRT_OK)
        st = mrt_planning_overflow_error(pl, err);
    mrt_cheapest_memo_destroy(pl->memo);
    pl->memo = NULL;
    mrt_relayout_memo_destroy(pl->relayout_memo);
    pl->relayout_memo = NULL;
    if (st == MRT_OK)
        *out = pl->plan;
    else
        mrt_plan_destroy(pl->plan);
    pl->plan = NULL;
    return st;
}

mrt_status mrt_plan_create_with(const mrt_spec *s, const mrt_plan_options *opt,
                                mrt_strategy strategy, mrt_plan **out,
                                mrt_error *err)
{
    *out = NULL;
    mrt_planning *pl = mrt_planning_create(s, opt);
    if (!pl)
        return mrt_planning_nomem(s, err);
    mrt_status st = mrt_planning_build(pl, strategy, 1, out, err);
    mrt_planning_destroy(pl);
    return st;
}
