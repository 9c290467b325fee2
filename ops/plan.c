/*
 * plan.c — building a plan: the value and step tables, and the walk over
 * the spec's ops that lowers each one (ops/lower_einsum.c does the work).
 */
#include "plan.h"

#include <assert.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checked.h"
#include "grow.h"
#include "program_hash.h"

/* Each step kind's two names: the printed plan's, which is the MPI call
 * a step makes (a permute and an all-to-all over a group of axes are
 * both "alltoall"), and its own, which mrt_plan_get_step hands a caller
 * so that it can tell them apart. */
static const struct {
    const char *call, *own;
} step_kind_names[] = {
    [MRT_STEP_EINSUM] = {"einsum", "einsum"},
    [MRT_STEP_SLICE] = {"slice", "slice"},
    [MRT_STEP_ALLGATHER] = {"allgather", "allgather"},
    [MRT_STEP_ALLTOALL] = {"alltoall", "alltoall"},
    [MRT_STEP_ALLREDUCE] = {"allreduce", "allreduce"},
    [MRT_STEP_REDUCE_SCATTER] = {"reduce_scatter", "reduce_scatter"},
    [MRT_STEP_PERMUTE] = {"alltoall", "permute"},
    [MRT_STEP_MAP] = {"map", "map"},
    [MRT_STEP_REDUCE_MAX] = {"reduce_max", "reduce_max"},
    [MRT_STEP_RENAME] = {"rename", "rename"},
    [MRT_STEP_ALLTOALL_GROUP] = {"alltoall", "alltoall_group"},
};
_Static_assert(sizeof step_kind_names / sizeof step_kind_names[0] ==
                   MRT_STEP_KIND_COUNT,
               "two names per step kind");

const char *mrt_step_kind_name(mrt_step_kind k)
{
    return step_kind_names[k].call;
}

const char *mrt_step_kind_id(mrt_step_kind k)
{
    return step_kind_names[k].own;
}

/* The cost model's kind for each collective step kind. */
static const mrt_coll step_coll[MRT_STEP_KIND_COUNT] = {
    [MRT_STEP_ALLGATHER] = MRT_COLL_ALLGATHER,
    [MRT_STEP_ALLTOALL] = MRT_COLL_ALLTOALL,
    [MRT_STEP_ALLREDUCE] = MRT_COLL_ALLREDUCE,
    [MRT_STEP_REDUCE_SCATTER] = MRT_COLL_REDUCE_SCATTER,
    [MRT_STEP_PERMUTE] = MRT_COLL_PERMUTE,
    [MRT_STEP_ALLTOALL_GROUP] = MRT_COLL_ALLTOALL,
};

mrt_plan_mark mrt_plan_get_mark(const mrt_plan *p)
{
    return (mrt_plan_mark){.nsteps = p->nsteps, .nvalues = p->nvalues,
                           .comm_bytes = p->comm_bytes, .flops = p->flops,
                           .overflow_tensor = p->overflow_tensor,
                           .overflow_what = p->overflow_what};
}

void mrt_plan_rollback(mrt_plan *p, mrt_plan_mark m)
{
    for (int v = p->nvalues - 1; v >= m.nvalues; v--)
        p->last_value[p->value[v].tensor] = p->value[v].prev;
    p->nsteps = m.nsteps;
    p->nvalues = m.nvalues;
    p->comm_bytes = m.comm_bytes;
    p->flops = m.flops;
    p->overflow_tensor = m.overflow_tensor;
    p->overflow_what = m.overflow_what;
}

void mrt_plan_overflow(mrt_plan *p, int tensor, const char *what)
{
    if (p->overflow_tensor >= 0)
        return;
    p->overflow_tensor = tensor;
    p->overflow_what = what;
}

/* The first overflow of p as an error at its tensor's node. */
static mrt_status overflow_error(const mrt_spec *s, const mrt_plan *p,
                                 mrt_error *err)
{
    const mrt_spec_tensor *t = &s->tensor[p->overflow_tensor];
    return mrt_error_set(err, MRT_E_SPEC, s->path, t->mark,
                         "tensor '%s' makes the plan's %s overflow 64 bits",
                         t->name, p->overflow_what);
}

double mrt_plan_time_since(const mrt_plan *p, mrt_plan_mark m)
{
    double t = 0;
    for (int k = m.nsteps; k < p->nsteps; k++)
        t += p->step[k].time_s;
    return t;
}

int mrt_step_is_collective(mrt_step_kind k)
{
    return k == MRT_STEP_ALLGATHER || k == MRT_STEP_ALLTOALL ||
           k == MRT_STEP_ALLREDUCE || k == MRT_STEP_REDUCE_SCATTER ||
           k == MRT_STEP_PERMUTE || k == MRT_STEP_ALLTOALL_GROUP;
}

int mrt_plan_add_value(mrt_plan *p, int tensor, const mrt_layout *l)
{
    if (mrt_grow((void **)&p->value, &p->cap_values, p->nvalues + 1,
             sizeof *p->value))
        return -1;
    mrt_value *v = &p->value[p->nvalues];
    memset(v, 0, sizeof *v);
    v->tensor = tensor;
    v->layout = *l;
    mrt_layout_shard_shape(l, &p->mesh, v->local);
    v->count = mrt_layout_shard_count(l, &p->mesh);
    v->last_use = -1;
    v->made_by = -1;
    v->prev = p->last_value[tensor];
    p->last_value[tensor] = p->nvalues;
    return p->nvalues++;
}

int mrt_plan_add_step(mrt_plan *p, const mrt_step *s)
{
    if (mrt_grow((void **)&p->step, &p->cap_steps, p->nsteps + 1,
             sizeof *p->step))
        return -1;
    mrt_step *t = &p->step[p->nsteps];
    *t = *s;
    p->value[t->out].made_by = t->op;
    if (mrt_step_is_collective(t->kind)) {
        t->group = mrt_mesh_group_size(&p->mesh, t->axes);
        t->bytes = p->value[t->in].count * p->elsize; /* a shard: fits */
        int64_t all = mrt_layout_total_count(&p->value[t->in].layout,
                                             &p->mesh);
        if (all < 0 || mrt_checked_mul(all, p->elsize, &t->bytes_total))
            mrt_plan_overflow(p, p->value[t->in].tensor,
                              "bytes handed to MPI by all ranks");
        t->cost = mrt_cost_collective(&p->profile, &p->mesh,
                                      step_coll[t->kind], t->axes, t->bytes,
                                      p->elsize);
        if (t->kind == MRT_STEP_ALLTOALL_GROUP)
            t->cost = mrt_exchange_cost(&p->profile, &p->mesh,
                                        &p->value[t->in].layout,
                                        &p->value[t->out].layout, t->axes,
                                        p->elsize);
        t->time_s = t->cost.time_s;
        /* (a strided reduce-scatter runs as an all-to-all into the
         * workspace: no scratch of MPI's) */
        t->mpi_scratch = mrt_step_needs_packing(p, t)
                             ? 0
                             : mrt_cost_mpi_scratch(step_coll[t->kind],
                                                    t->bytes, t->group);
        if (t->mpi_scratch < 0) {
            mrt_plan_overflow(p, p->value[t->in].tensor,
                              MRT_PLAN_OVERFLOW_MEMORY);
            t->mpi_scratch = 0;
        }
    } else if (t->kind != MRT_STEP_EINSUM) { /* memory-bound local steps */
        double bytes = (double)p->value[t->out].count;
        if (t->kind != MRT_STEP_SLICE)
            bytes += (double)p->value[t->in].count +
                     (t->in2 >= 0 ? (double)p->value[t->in2].count : 0);
        t->group = 1;
        t->bytes = t->bytes_total = 0;
        t->time_s = mrt_cost_copy(&p->profile, bytes * p->elsize);
    } else {
        t->time_s = mrt_cost_kernel(&p->profile, p->dtype, t->flops);
    }
    int64_t sum;
    if (mrt_checked_add(p->comm_bytes, t->bytes, &sum))
        mrt_plan_overflow(p, p->value[t->in].tensor,
                          "bytes handed to MPI per rank");
    else
        p->comm_bytes = sum;
    p->flops += t->flops;
    return p->nsteps++;
}

void mrt_plan_destroy(mrt_plan *p)
{
    if (!p)
        return;
    if (p->dim_names)
        for (int i = 0; i < p->ndims; i++)
            free(p->dim_names[i]);
    free(p->dim_names);
    free(p->tensor_name);
    free(p->tensor_value);
    free(p->last_value);
    free(p->input);
    free(p->producer);
    free(p->reshard);
    free(p->value);
    free(p->step);
    free(p->op);
    free(p->output);
    free(p->alt);
    mrt_search_memo_destroy(p->memo);
    mrt_relayout_memo_destroy(p->relayout_memo);
    free(p);
}

/* Moves the big tables of `spare`, a plan of the same spec no longer
 * wanted, into p (which then fills them instead of allocating its own:
 * the memory is already mapped, and mapping hundreds of MB is much of the
 * time of planning a long program), and destroys spare. */
static void take_tables(mrt_plan *p, mrt_plan *spare)
{
    if (!spare)
        return;
    p->value = spare->value;
    p->cap_values = spare->cap_values;
    p->step = spare->step;
    p->cap_steps = spare->cap_steps;
    p->op = spare->op;               /* [nops + 1], zeroed in copy_names */
    p->tensor_name = spare->tensor_name; /* the same names */
    spare->value = NULL;
    spare->step = NULL;
    spare->op = NULL;
    spare->tensor_name = NULL;
    mrt_plan_destroy(spare);
}

/* Copies the names and sizes the plan needs, so it does not borrow s
 * (the names are already there in tables taken from a spare plan). */
static mrt_status copy_names(mrt_plan *p, const mrt_spec *s)
{
    int have_names = p->tensor_name != NULL;
    p->ndims = s->ndims;
    p->dim_names = calloc((size_t)s->ndims + 1, sizeof *p->dim_names);
    p->ntensors = s->ntensors;
    if (!have_names)
        p->tensor_name = calloc((size_t)s->ntensors + 1,
                                sizeof *p->tensor_name);
    p->tensor_value = calloc((size_t)s->ntensors + 1, sizeof(int));
    p->last_value = malloc(((size_t)s->ntensors + 1) * sizeof(int));
    p->input = calloc((size_t)s->ntensors + 1, sizeof(int));
    p->producer = calloc((size_t)s->ntensors + 1, sizeof(int));
    p->reshard = calloc((size_t)s->ntensors + 1, 1);
    p->nops = s->nops;
    if (p->op)
        memset(p->op, 0, ((size_t)s->nops + 1) * sizeof *p->op);
    else
        p->op = calloc((size_t)s->nops + 1, sizeof *p->op);
    p->noutputs = s->noutputs;
    p->output = calloc((size_t)s->noutputs + 1, sizeof(int));
    if (!p->dim_names || !p->tensor_name || !p->tensor_value ||
        !p->last_value || !p->input ||
        !p->producer || !p->reshard ||
        !p->op ||
        !p->output)
        return MRT_E_NOMEM;
    for (int i = 0; i < s->ndims; i++)
        if (!(p->dim_names[i] = strdup(s->dim_name[i])))
            return MRT_E_NOMEM;
    for (int i = 0; i < s->ntensors; i++) {
        if (!have_names)
            memcpy(p->tensor_name[i], s->tensor[i].name, MRT_NAME_MAX);
        p->producer[i] = s->tensor[i].producer;
        p->reshard[i] = s->tensor[i].reshard != 0;
        p->last_value[i] = -1;
    }
    memcpy(p->output, s->output, (size_t)s->noutputs * sizeof(int));
    return MRT_OK;
}

/* The profile: a named file, else the default file when there is one,
 * else the built-in one; then the spec's `network:` links on top. */
static mrt_status load_profile(mrt_plan *p, const mrt_spec *s,
                               const char *path, mrt_error *err)
{
    char def[PATH_MAX];
    mrt_profile_default(&p->profile);
    if (!path && access(mrt_profile_default_path(def, sizeof def), R_OK) == 0)
        path = def;
    if (path) {
        mrt_status st = mrt_profile_load(path, &p->profile, err);
        if (st != MRT_OK)
            return st;
    }
    for (int i = 0; i < s->nnet; i++)
        mrt_profile_set_link(&p->profile, s->net_axis[i],
                             (mrt_link){s->net_latency_s[i],
                                        s->net_bandwidth_Bps[i]});
    if (s->nnet) {
        size_t n = strlen(p->profile.source);
        snprintf(p->profile.source + n, sizeof p->profile.source - n,
                 " + the spec's network:");
    }
    return MRT_OK;
}

/* Mesh-TensorFlow has no per-tensor layouts: every tensor takes the
 * global rules, which must then be valid for it. */
static mrt_status meshtf_home(const mrt_spec *s, int t, mrt_layout *l,
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
                    "per-tensor layouts)", s->mesh.name[a], st->name);
            used |= 1u << a;
            l->axes[i][j] = a;
        }
    }
    return MRT_OK;
}

/* The home layout of tensor t: the spec's, or under Mesh-TF the global
 * rules' (in *buf; checked for every tensor before planning).  Not kept
 * in a table: a layout per tensor of a long program is hundreds of MB. */
static const mrt_layout *home_of(const mrt_spec *s, mrt_strategy strategy,
                                 int t, mrt_layout *buf)
{
    if (strategy != MRT_STRATEGY_MESHTF)
        return &s->tensor[t].layout;
    mrt_status st = meshtf_home(s, t, buf, NULL);
    assert(st == MRT_OK);
    (void)st;
    return buf;
}

/* A result may leave its pending sums to its consumer only if exactly one
 * later op reads it and it is not an output: deferrable[t] says so. */
static int *deferrable_tensors(const mrt_spec *s)
{
    int *readers = calloc((size_t)s->ntensors + 1, sizeof *readers);
    if (!readers)
        return NULL;
    for (int i = 0; i < s->nops; i++)
        for (int k = 0; k < s->op[i].nin; k++)
            readers[s->op[i].in[k]]++;
    for (int k = 0; k < s->noutputs; k++)
        readers[s->output[k]] = 0;
    for (int t = 0; t < s->ntensors; t++)
        readers[t] = readers[t] == 1;
    return readers;
}

/* Plans every op of s with strategy, in the tables of spare (a plan of s
 * no longer wanted, destroyed; may be NULL); then finishes the plan
 * (finish), or only tallies its totals. */
static mrt_status build(const mrt_spec *s, const mrt_plan_options *opt,
                        mrt_strategy strategy, int finish, mrt_plan *spare,
                        mrt_plan **out, mrt_error *err)
{
    *out = NULL;
    mrt_plan *p = calloc(1, sizeof *p);
    int *deferrable = deferrable_tensors(s);
    mrt_layout hbuf;
    mrt_status st = MRT_E_NOMEM;
    if (p)
        take_tables(p, spare);
    else
        mrt_plan_destroy(spare);
    if (!p || !deferrable)
        goto nomem;
    if (strategy == MRT_STRATEGY_SEARCH && !(p->memo = mrt_search_memo_create()))
        goto nomem;
    snprintf(p->spec_path, sizeof p->spec_path, "%s", s->path);
    p->program = mrt_program_hash(s);
    p->mesh = s->mesh;
    p->dtype = s->dtype;
    p->elsize = mrt_dtype_size(s->dtype);
    p->overflow_tensor = -1;
    p->planner = opt->planner;
    p->explain = opt->explain && strategy == MRT_STRATEGY_SEARCH;
    p->blocking = opt->blocking;
    if ((st = copy_names(p, s)) != MRT_OK)
        goto nomem;
    /* room for what most programs make (every tensor a value, a quarter
     * of the ops a step more), so a long program's tables are not copied
     * as they grow; more is still grown into */
    int64_t guess = (int64_t)s->ntensors + s->nops / 4 + 16;
    if (guess < INT_MAX / 2 &&
        (mrt_grow((void **)&p->value, &p->cap_values, (int)guess,
              sizeof *p->value) ||
         mrt_grow((void **)&p->step, &p->cap_steps,
              (int)(s->nops + s->nops / 4 + 16), sizeof *p->step)))
        goto nomem;
    if ((st = load_profile(p, s, opt->profile, err)) != MRT_OK)
        goto fail;
    for (int t = 0; t < s->ntensors; t++) {
        if (strategy == MRT_STRATEGY_MESHTF) {
            if ((st = meshtf_home(s, t, &hbuf, err)) != MRT_OK)
                goto fail;
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
        if ((p->tensor_value[t] = mrt_plan_add_value(
                 p, t, home_of(s, strategy, t, &hbuf))) < 0)
            goto nomem;
    }
    for (int i = 0; i < s->nops; i++) {
        int out_t = s->op[i].out;
        const mrt_layout *home = home_of(s, strategy, out_t, &hbuf);
        p->op[i].first_step = p->nsteps;
        p->op[i].lower_bound_bytes = -1;
        mrt_plan_mark m = mrt_plan_get_mark(p);
        p->op[i].nin = s->op[i].nin;
        p->op[i].phase = s->op[i].phase;
        p->op[i].user = s->op[i].user;
        p->op[i].what = s->op[i].kind == MRT_OP_MAP ? mrt_map_name(s->op[i].fn)
                        : s->op[i].kind == MRT_OP_REDUCE_MAX ? "reduce_max"
                        : s->op[i].kind == MRT_OP_RENAME     ? "rename"
                                                             : "einsum";
        for (int k = 0; k < s->op[i].nin; k++)
            p->op[i].in_value[k] = p->tensor_value[s->op[i].in[k]];
        if (s->op[i].kind != MRT_OP_EINSUM)
            st = mrt_lower_local(p, s, i, home,
                                 strategy == MRT_STRATEGY_MESHTF,
                                 deferrable[out_t], err);
        else if (strategy == MRT_STRATEGY_SEARCH)
            st = mrt_search_einsum(p, s, i, home, deferrable[out_t], err);
        else
            st = mrt_lower_einsum(p, s, i, home, strategy, err);
        if (st == MRT_OK && p->overflow_tensor >= 0)
            st = overflow_error(s, p, err);
        if (st != MRT_OK)
            goto fail;
        p->op[i].nsteps = p->nsteps - p->op[i].first_step;
        p->op[i].out_value = p->tensor_value[out_t];
        p->op[i].comm_bytes = p->comm_bytes - m.comm_bytes;
        p->op[i].flops = p->flops - m.flops;
    }
    if (!finish)
        mrt_plan_tally(p);
    else
        st = mrt_plan_finish(p, err);
    if (st == MRT_OK && p->overflow_tensor >= 0)
        st = overflow_error(s, p, err);
    if (st != MRT_OK)
        goto fail;
    free(deferrable);
    mrt_search_memo_destroy(p->memo);
    p->memo = NULL;
    mrt_relayout_memo_destroy(p->relayout_memo);
    p->relayout_memo = NULL;
    *out = p;
    return MRT_OK;
nomem:
    st = mrt_error_set(err, MRT_E_NOMEM, s->path, (mrt_mark){0},
                       "out of memory while planning");
fail:
    free(deferrable);
    mrt_plan_destroy(p);
    return st;
}

mrt_status mrt_plan_create_with(const mrt_spec *s,
                                const mrt_plan_options *opt,
                                mrt_strategy strategy, mrt_plan **out,
                                mrt_error *err)
{
    return build(s, opt, strategy, 1, NULL, out, err);
}

/* 1 if Mesh-TensorFlow's global-rules layouts are the spec's own, so its
 * plan computes the same program and may compete. */
static int meshtf_compatible(const mrt_spec *s)
{
    for (int t = 0; t < s->ntensors; t++) {
        mrt_layout l;
        if (meshtf_home(s, t, &l, NULL) != MRT_OK ||
            !mrt_layout_equal(&l, &s->tensor[t].layout))
            return 0;
    }
    return 1;
}

/* Rebuilds the plan of strategy `keep` (a fixed lowering found cheaper
 * than the search) in the tables of `search`, which it destroys; the
 * alternatives the search weighed stay with the plan shown. */
static mrt_status rebuild(const mrt_spec *s, const mrt_plan_options *opt,
                          mrt_strategy keep, mrt_plan *search,
                          mrt_plan **out, mrt_error *err)
{
    int *alts = malloc(2 * ((size_t)search->nops + 1) * sizeof *alts);
    if (!alts) {
        mrt_plan_destroy(search);
        return mrt_error_set(err, MRT_E_NOMEM, s->path, (mrt_mark){0},
                             "out of memory while planning");
    }
    for (int i = 0; i < search->nops; i++) {
        alts[2 * i] = search->op[i].first_alt;
        alts[2 * i + 1] = search->op[i].nalts;
    }
    mrt_alt *alt = search->alt;
    int explain = search->explain, nalts = search->nalts,
        cap_alts = search->cap_alts;
    search->alt = NULL;
    mrt_status st = build(s, opt, keep, 0, search, out, err);
    if (st == MRT_OK) {
        mrt_plan *p = *out;
        p->explain = explain;
        p->alt = alt;
        p->nalts = nalts;
        p->cap_alts = cap_alts;
        alt = NULL;
        for (int i = 0; i < p->nops; i++) {
            p->op[i].first_alt = alts[2 * i];
            p->op[i].nalts = alts[2 * i + 1];
        }
    }
    free(alt);
    free(alts);
    return st;
}

mrt_status mrt_plan_create(const mrt_spec *s, const mrt_plan_options *opt,
                           mrt_plan **out, mrt_error *err)
{
    mrt_plan_options defaults = {0};
    if (!opt)
        opt = &defaults;
    if (opt->planner == MRT_PLANNER_MESHTF)
        return mrt_plan_create_with(s, opt, MRT_STRATEGY_MESHTF, out, err);
    /* auto: the search, unless a fixed lowering (the rule, or Mesh-TF's
     * when it plans the same program) is cheaper over the whole program:
     * the search is greedy, op by op.  The three plans take turns in one
     * set of tables (a long program's tables are hundreds of MB, and
     * mapping fresh memory is much of the time): the fixed lowerings are
     * only tallied, then the search fills the tables; in the rare case a
     * fixed lowering is cheaper, it is built again to be kept.  Only the
     * plan kept is finished.  The search's error is reported before the
     * rule's, as when the search was planned first. */
    mrt_error rules_err = {0};
    mrt_plan *p = NULL, *fixed = NULL;
    double t_rules = 0, t_meshtf = 0;
    int have_meshtf = 0;
    mrt_status st_rules = build(s, opt, MRT_STRATEGY_RULES, 0, NULL, &fixed,
                                &rules_err);
    if (st_rules == MRT_OK) {
        t_rules = fixed->totals.time_s;
        if (meshtf_compatible(s)) {
            mrt_plan *m = NULL;
            have_meshtf = build(s, opt, MRT_STRATEGY_MESHTF, 0, fixed, &m,
                                NULL) == MRT_OK;
            t_meshtf = have_meshtf ? m->totals.time_s : 0;
            fixed = m; /* build took the rule's plan */
        }
    }
    mrt_status st = build(s, opt, MRT_STRATEGY_SEARCH, 0, fixed, &p, err);
    if (st != MRT_OK)
        return st;
    if (st_rules != MRT_OK) {
        mrt_plan_destroy(p);
        if (err && err->code == MRT_OK)
            *err = rules_err;
        return st_rules;
    }
    /* ties keep the earlier of search, rule, Mesh-TF */
    mrt_strategy keep = MRT_STRATEGY_SEARCH;
    double best = p->totals.time_s;
    if (t_rules < best * (1 - 1e-9)) {
        keep = MRT_STRATEGY_RULES;
        best = t_rules;
    }
    if (have_meshtf && t_meshtf < best * (1 - 1e-9))
        keep = MRT_STRATEGY_MESHTF;
    if (keep != MRT_STRATEGY_SEARCH &&
        (st = rebuild(s, opt, keep, p, &p, err)) != MRT_OK)
        return st;
    p->planner = MRT_PLANNER_AUTO;
    p->fell_back = keep != MRT_STRATEGY_SEARCH;
    st = mrt_plan_finish(p, err);
    if (st == MRT_OK && p->overflow_tensor >= 0)
        st = overflow_error(s, p, err);
    if (st != MRT_OK) {
        mrt_plan_destroy(p);
        return st;
    }
    *out = p;
    return MRT_OK;
}

int64_t mrt_plan_comm_bytes(const mrt_plan *p) { return p->comm_bytes; }
double mrt_plan_flops(const mrt_plan *p) { return p->flops; }
mrt_plan_totals mrt_plan_get_totals(const mrt_plan *p) { return p->totals; }
