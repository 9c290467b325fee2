/*
 * runner.c — meshrt as a library: mrt_init (the process's one-time
 * set-up, before MPI_Init), and the runner, a plan made ready on the
 * ranks of a caller's communicator: its sub-communicators and shard
 * buffers, inputs filled from the spec or copied from the caller's
 * arrays (whole or this rank's shard), outputs copied back (this rank's
 * shard, or gathered whole on rank 0).  runner_execute.c executes it.
 *
 * Ownership: the runner borrows the spec, the plan and the caller's
 * communicator (it works on its own duplicate of it, so its messages
 * never meet the caller's); it owns its buffers.  Caller arrays are only
 * read or written during the call that takes them.
 *
 * Collective calls (create, execute, get_output of a whole tensor) return
 * the same status on every rank: they agree on their arguments first,
 * and after each step that can fail on one rank only, the ranks agree on
 * the lowest failing rank's error.  A tensor an op makes can be read
 * only once an execute has run every step (r->computed).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "blis_arch.h"
#include "kernel.h"
#include "program_hash.h"
#include "runtime.h"

_Static_assert(MRT_API_MAX_DIMS == MRT_MAX_DIMS,
               "mrt_tensor_info holds every dim of a tensor");

static int init_done;

int mrt_init_done(void)
{
    return init_done;
}

mrt_status mrt_init(mrt_error *err)
{
    int mpi_up = 0;
    MPI_Initialized(&mpi_up);
    if (mpi_up && !init_done)
        return mrt_error_set(err, MRT_E_USAGE, "", (mrt_mark){0},
                             "mrt_init must be called before MPI_Init (it "
                             "may start a process and set BLIS_ARCH_TYPE to "
                             "pick BLIS's kernels, which is unsafe once MPI "
                             "runs)");
    mrt_blis_select(); /* once per process */
    init_done = 1;
    return MRT_OK;
}

/* A hash of what each rank will do, to confirm all built the same plan. */
static uint64_t plan_hash(const mrt_plan *p)
{
    uint64_t h = 1469598103934665603ull;
    for (int k = 0; k < p->nsteps; k++) {
        const mrt_step *s = &p->step[k];
        uint64_t parts[4] = {(uint64_t)s->kind, s->axes, (uint64_t)s->bytes,
                             (uint64_t)p->value[s->out].count};
        for (int i = 0; i < 4; i++)
            h = (h ^ parts[i]) * 1099511628211ull;
    }
    return h;
}

/* comm's size against the mesh; then every rank built the same plan. */
static mrt_status check_comm(const mrt_spec *s, const mrt_plan *p,
                             MPI_Comm comm, mrt_error *err)
{
    int size, world = 0;
    MPI_Comm_size(comm, &size);
    MPI_Comm_compare(comm, MPI_COMM_WORLD, &world);
    if (size != p->mesh.nranks) {
        char mesh[512];
        int n = 0;
        for (int a = 0; a < p->mesh.naxes; a++)
            n += snprintf(mesh + n, sizeof mesh - (size_t)n, "%s%s=%" PRId64,
                          a ? "," : "", p->mesh.name[a], p->mesh.size[a]);
        if (world != MPI_IDENT && world != MPI_CONGRUENT)
            return mrt_error_set(err, MRT_E_MESH, s->path, s->mesh_mark,
                                 "the mesh %s has %" PRId64
                                 " ranks but the communicator "
                                 "given to meshrt has %d",
                                 mesh, p->mesh.nranks, size);
        return mrt_error_set(
            err, MRT_E_MESH, s->path, s->mesh_mark,
            "the mesh %s has %" PRId64 " ranks but mpirun started %d "
            "(run with -n %" PRId64 ", or choose a mesh of %d ranks with "
            "--mesh)",
            mesh, p->mesh.nranks, size, p->mesh.nranks, size);
    }
    uint64_t h = plan_hash(p), lo, hi;
    MPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, comm);
    MPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, comm);
    if (lo != hi)
        return mrt_error_set(err, MRT_E_RUNTIME, s->path, (mrt_mark){0},
                             "the ranks built different plans");
    return MRT_OK;
}

/* The runner reads the spec by the plan's tensor and op ids (inputs'
 * `init:`, `train:`, the reference of verify): a plan made from another
 * program would index past its tables, or compute another function
 * than the one verify recomputes.  The first difference (the tables,
 * the mesh, the dtype, a tensor, then the program's fingerprint,
 * mrt_program_hash), or MRT_OK. */
static mrt_status same_program(const mrt_spec *s, const mrt_plan *p,
                               mrt_error *err)
{
    const char *what = NULL;
    char name[MRT_NAME_MAX + 32] = "";
    int same_mesh = s->mesh.naxes == p->mesh.naxes;
    for (int a = 0; same_mesh && a < s->mesh.naxes; a++)
        same_mesh = s->mesh.size[a] == p->mesh.size[a] &&
                    !strcmp(s->mesh.name[a], p->mesh.name[a]);
    if (s->ntensors != p->ntensors || s->nops != p->nops)
        what = "its tensors and ops";
    else if (!same_mesh)
        what = "its mesh";
    else if (s->dtype != p->dtype)
        what = "its dtype";
    for (int t = 0; !what && t < s->ntensors; t++) {
        const mrt_layout *l = &s->tensor[t].layout;
        int v = p->tensor_value[t];
        int differs = strcmp(s->tensor[t].name, p->tensor_name[t]) != 0;
        for (int i = 0; !differs && v >= 0 && i < l->ndims; i++)
            differs = p->value[v].layout.ndims != l->ndims ||
                      p->value[v].layout.size[i] != l->size[i];
        if (differs) {
            snprintf(name, sizeof name, "tensor '%s'", s->tensor[t].name);
            what = name;
        }
    }
    /* the same tables may hold another computation: relu for tanh */
    if (!what && p->program != mrt_program_hash(s))
        what = "its ops";
    if (!what)
        return MRT_OK;
    return mrt_error_set(err, MRT_E_USAGE, s->path, (mrt_mark){0},
                         "mrt_runner_create: argument 'plan': it was not "
                         "made from this spec (%s differ); plan the spec "
                         "the runner is given",
                         what);
}

static mrt_status nomem(const mrt_spec *s, mrt_error *err)
{
    return mrt_error_set(err, MRT_E_NOMEM, s->path, (mrt_mark){0},
                         "out of memory");
}

static mrt_status init_inputs(const mrt_spec *s, mrt_exec *e, mrt_error *err)
{
    const mrt_plan *p = e->plan;
    mrt_status st = MRT_OK;
    for (int i = 0; i < p->ninputs && st == MRT_OK; i++) {
        int t = p->input[i];
        int v = p->tensor_value[t];
        if (!mrt_value_on_rank(p, v, e->comm->coords))
            continue; /* another pipeline stage's (its room is ours) */
        st = mrt_shard_init(s, t, &p->value[v].layout, &p->mesh,
                            e->comm->coords, e->buf[v], err);
    }
    return st;
}

/* What one rank can tell of its own arguments; the ranks then agree. */
static mrt_status check_args(const mrt_spec *spec, const mrt_plan *plan,
                             mrt_runner **out, mrt_error *err)
{
    if (!spec || !plan || !out)
        return mrt_error_set(err, MRT_E_USAGE, "", (mrt_mark){0},
                             "mrt_runner_create needs a spec, a plan and an "
                             "out pointer (argument '%s' is NULL)",
                             !spec   ? "spec"
                             : !plan ? "plan"
                                     : "out");
    if (!init_done)
        return mrt_error_set(err, MRT_E_USAGE, "", (mrt_mark){0},
                             "call mrt_init() before MPI_Init: meshrt picks "
                             "BLIS's kernels then (docs/api.md)");
    return MRT_OK;
}

/* The runner's communicator, its plan's sub-communicators and buffers,
 * its inputs filled.  Collective over own (r's duplicate of the caller's
 * communicator, which r frees from here on). */
static mrt_status set_up(mrt_runner *r, MPI_Comm own, mrt_error *err)
{
    mrt_kernel_init();
    mrt_status st = mrt_comm_agree(
        own, mrt_comm_create(r->plan, own, &r->comm, err), err);
    if (st == MRT_OK)
        st = mrt_comm_agree(
            own, mrt_exec_create(r->plan, r->comm, &r->exec, err), err);
    if (st == MRT_OK)
        st = mrt_comm_agree(own, init_inputs(r->spec, r->exec, err), err);
    return st;
}

mrt_status mrt_runner_create(const mrt_spec *spec, const mrt_plan *plan,
                             MPI_Comm comm, mrt_runner **out, mrt_error *err)
{
    int mpi_up = 0, mpi_down = 0;
    if (out)
        *out = NULL;
    MPI_Initialized(&mpi_up);
    if (mpi_up)
        MPI_Finalized(&mpi_down);
    /* no communicator: nobody to agree with (a rank outside comm's group
     * holds MPI_COMM_NULL and takes no part) */
    if (!mpi_up || mpi_down || comm == MPI_COMM_NULL)
        return mrt_error_set(err, MRT_E_USAGE, "", (mrt_mark){0},
                             "mrt_runner_create needs MPI initialised (and "
                             "not finalised) and a communicator (not "
                             "MPI_COMM_NULL)");
    /* every rank's arguments checked before any rank goes on */
    mrt_status st = mrt_comm_agree(comm, check_args(spec, plan, out, err), err);
    if (st != MRT_OK)
        return st;
    mrt_runner *r = calloc(1, sizeof *r);
    MPI_Comm own = MPI_COMM_NULL;
    st = mrt_comm_agree(comm, r ? MRT_OK : nomem(spec, err), err);
    if (st == MRT_OK)
        st = mrt_comm_agree(comm, same_program(spec, plan, err), err);
    if (st == MRT_OK)
        st = mrt_comm_agree(comm, check_comm(spec, plan, comm, err), err);
    if (st == MRT_OK && MPI_Comm_dup(comm, &own) != MPI_SUCCESS)
        st = mrt_error_set(err, MRT_E_RUNTIME, spec->path, (mrt_mark){0},
                           "MPI_Comm_dup failed");
    st = mrt_comm_agree(comm, st, err);
    if (st == MRT_OK) {
        r->spec = spec;
        r->plan = plan;
        st = set_up(r, own, err);
    }
    if (st != MRT_OK) {
        if (r && !r->comm && own != MPI_COMM_NULL)
            MPI_Comm_free(&own);
        mrt_runner_destroy(r);
        return st;
    }
    *out = r;
    return MRT_OK;
}

/* Back to the values r was created with (meshrt_mpi.h): every input
 * refilled from its `init:` (parameters, optimizer state, the
 * optimizer's step scalars).  validate times every
 * run on the same values this way: a training that diverges over the
 * runs would time later runs on ever larger values (or infinities), on
 * which a map's time is not that of a real step.  Collective. */
mrt_status mrt_runner_restart(mrt_runner *r, mrt_error *err)
{
    if (!r)
        return mrt_error_set(err, MRT_E_USAGE, "", (mrt_mark){0},
                             "mrt_runner_restart: a NULL runner");
    mrt_status st = mrt_comm_agree(r->comm->world,
                                   init_inputs(r->spec, r->exec, err), err);
    if (st == MRT_OK) {
        r->caller_inputs = 0;
        r->trained = 0;
        r->steps_run = 0;
        r->computed = 0;
    }
    return st;
}

void mrt_runner_destroy(mrt_runner *r)
{
    if (!r)
        return;
    mrt_exec_destroy(r->exec);
    if (r->comm) {
        MPI_Comm own = r->comm->world;
        mrt_comm_destroy(r->comm);
        MPI_Comm_free(&own);
    }
    free(r);
}

/* The plan's value of input or output `name`; -1 (and err) if none. */
static int find_value(const mrt_runner *r, const char *name, int *input,
                      mrt_error *err)
{
    const mrt_plan *p = r->plan;
    int t = name ? mrt_spec_find_tensor(r->spec, name) : -1;
    *input = 0;
    for (int i = 0; t >= 0 && i < p->ninputs; i++)
        *input |= p->input[i] == t;
    int output = 0;
    for (int i = 0; t >= 0 && i < p->noutputs; i++)
        output |= p->output[i] == t;
    if (t < 0 || t >= p->ntensors || p->tensor_value[t] < 0 ||
        (!*input && !output)) {
        mrt_error_set(err, MRT_E_USAGE, r->spec->path, (mrt_mark){0},
                      "'%s' is not an input or an output of the spec",
                      name ? name : "(null)");
        return -1;
    }
    return p->tensor_value[t];
}

/* This rank's own extents of value v (an uneven split gives some ranks
 * less than val->local, the largest shard's) and its element count. */
static int64_t own_shard(const mrt_runner *r, int v, int64_t ext[])
{
    const mrt_value *val = &r->plan->value[v];
    mrt_layout_shard_shape_at(&val->layout, &r->plan->mesh, r->comm->coords,
                              ext);
    int64_t n = 1;
    for (int i = 0; i < val->layout.ndims; i++)
        n *= ext[i];
    return n;
}

mrt_status mrt_runner_tensor_info(const mrt_runner *r, const char *name,
                                  mrt_tensor_info *out, mrt_error *err)
{
    int input;
    if (!r || !out)
        return mrt_error_set(err, MRT_E_USAGE, "", (mrt_mark){0},
                             "mrt_runner_tensor_info needs a runner and an "
                             "out pointer");
    int v = find_value(r, name, &input, err);
    if (v < 0)
        return MRT_E_USAGE;
    const mrt_plan *p = r->plan;
    const mrt_value *val = &p->value[v];
    memset(out, 0, sizeof *out);
    out->dtype_size = val->elsize;
    out->ndims = val->layout.ndims;
    out->count = 1;
    mrt_layout_shard_offset(&val->layout, &p->mesh, r->comm->coords,
                            out->shard_offset);
    out->shard_count = own_shard(r, v, out->shard_shape);
    for (int i = 0; i < val->layout.ndims; i++) {
        out->shape[i] = val->layout.size[i];
        out->count *= val->layout.size[i];
    }
    return MRT_OK;
}

mrt_status mrt_runner_set_input(mrt_runner *r, const char *name,
                                const void *data, mrt_placement how,
                                mrt_error *err)
{
    int input;
    if (!r || !data || how < 0 || how >= MRT_PLACEMENT_COUNT)
        return mrt_error_set(err, MRT_E_USAGE, "", (mrt_mark){0},
                             "mrt_runner_set_input needs a runner, data and "
                             "MRT_WHOLE or MRT_SHARD");
    int v = find_value(r, name, &input, err);
    if (v < 0)
        return MRT_E_USAGE;
    if (!input)
        return mrt_error_set(err, MRT_E_USAGE, r->spec->path, (mrt_mark){0},
                             "'%s' is an output, not an input: an op of the "
                             "spec computes it",
                             name);
    const mrt_plan *p = r->plan;
    const mrt_value *val = &p->value[v];
    void *buf = r->exec->buf[v];
    int64_t ext[MRT_MAX_DIMS];
    int64_t n = own_shard(r, v, ext);
    if (how == MRT_SHARD) {
        memcpy(buf, data, (size_t)n * (size_t)val->elsize);
    } else if (n > 0) {
        int64_t off[MRT_MAX_DIMS] = {0}, zero[MRT_MAX_DIMS] = {0};
        mrt_layout_shard_offset(&val->layout, &p->mesh, r->comm->coords, off);
        mrt_block_copy(val->layout.ndims, ext, buf, ext, zero, data,
                       val->layout.size, off, (size_t)val->elsize);
    }
    r->caller_inputs = 1;
    return MRT_OK;
}

/* A tensor an op makes has no value until an execute ran every step. */
static mrt_status check_computed(const mrt_runner *r, const char *name,
                                 int input, mrt_error *err)
{
    if (input || r->computed)
        return MRT_OK;
    return mrt_error_set(err, MRT_E_USAGE, r->spec->path, (mrt_mark){0},
                         "mrt_runner_get_output: '%s' has no value yet: an "
                         "op computes it, and no mrt_runner_execute has run "
                         "(or the last one failed)",
                         name);
}

/* This rank's shard of value v into data.  Local. */
static mrt_status get_shard(const mrt_runner *r, int v, void *data,
                            mrt_error *err)
{
    int64_t ext[MRT_MAX_DIMS];
    if (!data)
        return mrt_error_set(err, MRT_E_USAGE, "", (mrt_mark){0},
                             "mrt_runner_get_output needs data");
    memcpy(data, r->exec->buf[v],
           (size_t)own_shard(r, v, ext) * (size_t)r->plan->value[v].elsize);
    return MRT_OK;
}

mrt_status mrt_runner_get_output(mrt_runner *r, const char *name, void *data,
                                 mrt_placement how, mrt_error *err)
{
    int input;
    if (!r || how < 0 || how >= MRT_PLACEMENT_COUNT)
        return mrt_error_set(err, MRT_E_USAGE, "", (mrt_mark){0},
                             "mrt_runner_get_output needs a runner and "
                             "MRT_WHOLE or MRT_SHARD");
    int v = find_value(r, name, &input, err);
    mrt_status st = v < 0 ? MRT_E_USAGE : check_computed(r, name, input, err);
    if (how == MRT_SHARD)
        return st != MRT_OK ? st : get_shard(r, v, data, err);
    const mrt_plan *p = r->plan;
    MPI_Comm w = r->comm->world;
    int root = r->comm->rank == 0;
    if (st == MRT_OK && root && !data)
        st = mrt_error_set(err, MRT_E_USAGE, "", (mrt_mark){0},
                           "mrt_runner_get_output of a whole tensor needs "
                           "data on rank 0");
    st = mrt_comm_agree(w, st, err);
    void *full = NULL;
    if (st == MRT_OK)
        st = mrt_comm_agree(w, mrt_shard_gather(r->exec, v, &full, err), err);
    if (st == MRT_OK && root) {
        size_t n = (size_t)p->value[v].elsize;
        for (int i = 0; i < p->value[v].layout.ndims; i++)
            n *= (size_t)p->value[v].layout.size[i];
        memcpy(data, full, n);
    }
    free(full);
    return st;
}
