/*
 * plan_mlp.c — planning without MPI: the Megatron MLP of megatron_mlp.c
 * planned for a 2x2 mesh and for an 8x8 one (no ranks needed for either),
 * its plan printed, its totals read, and a spec with a mistake in it
 * reported as the command line reports it.  meshrt.h only (no mpi.h, no
 * MPI library in its flags), a plain C compiler, one process, no mpirun:
 *
 *     cc plan_mlp.c $(pkg-config --cflags --libs meshrt) -o plan_mlp
 *     ./plan_mlp
 *
 * It exits 0 when both plans hand MPI the bytes a Megatron MLP must (one
 * all-reduce of y's partial sums over `model`: y's shard, batch/data x
 * d_model doubles, per rank) and the mistake is found at its line.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <meshrt.h>

static const char spec_text[] =
    "mesh: {data: 2, model: 2}\n"
    "dtype: float64\n"
    "dims: {batch: 64, d_model: 128, d_ff: 512}\n"
    "layout: {batch: data, d_ff: model}\n"
    "tensors:\n"
    "  x:  {shape: [batch, d_model]}\n"
    "  w1: {shape: [d_model, d_ff]}\n"
    "  w2: {shape: [d_ff, d_model]}\n"
    "ops:\n"
    "  - {op: einsum, in: [x, w1], out: h, shape: [batch, d_ff]}\n"
    "  - {op: relu, in: [h], out: r}\n"
    "  - {op: einsum, in: [r, w2], out: y, shape: [batch, d_model]}\n"
    "outputs: [y]\n";

/* Plans the MLP on mesh ("data=D,model=M"); the bytes each rank hands to
 * MPI, or -1 (the error printed). */
static int64_t plan_bytes(const char *mesh, int print)
{
    mrt_error err = {0};
    mrt_spec *spec = NULL;
    mrt_plan *plan = NULL;
    int64_t bytes = -1;
    mrt_plan_options opt = {.planner = MRT_PLANNER_MESHTF};
    /* the text in memory, its mesh replaced (what --mesh does) */
    const mrt_spec_load_options load = {
        .mesh = mesh, .text = spec_text, .len = sizeof spec_text - 1};
    if (mrt_spec_load_ex("mlp.yaml", &load, &spec, &err) == MRT_OK &&
        mrt_plan_create(spec, &opt, &plan, &err) == MRT_OK) {
        if (print)
            mrt_plan_print(plan, stdout);
        mrt_plan_totals t = mrt_plan_get_totals(plan);
        printf("mesh %s: %" PRId64 " bytes to MPI per rank in %" PRId64
               " collective(s), %.3g flops per rank, peak %" PRId64
               " bytes per rank\n",
               mesh, t.comm_bytes, t.collectives, t.flops, t.peak_memory);
        bytes = t.comm_bytes;
    } else {
        char line[1024];
        fprintf(stderr, "%s\n", mrt_error_format(&err, line, sizeof line));
    }
    mrt_plan_destroy(plan);
    mrt_spec_destroy(spec);
    return bytes;
}

int main(void)
{
    printf("meshrt %s (header %s)\n", mrt_version(), MESHRT_VERSION);
    /* Megatron: y's local partial sums, batch/data x d_model doubles,
     * all-reduced over `model` (what MPI is handed: the send buffer) */
    int64_t b2 = plan_bytes("data=2,model=2", 1);
    int64_t b8 = plan_bytes("data=8,model=8", 0);
    int ok = b2 == 64 / 2 * 128 * 8 && b8 == 64 / 8 * 128 * 8;

    /* a mistake: an axis the mesh does not have */
    char bad[sizeof spec_text + 16], line[1024];
    snprintf(bad, sizeof bad, "%s", spec_text);
    memcpy(strstr(bad, "d_ff: model"), "d_ff: modl ", 11);
    mrt_error err = {0};
    mrt_spec *spec = NULL;
    mrt_status st = mrt_spec_load_string("bad.yaml", bad, strlen(bad), &spec,
                                         &err);
    printf("%s (%s)\n", mrt_error_format(&err, line, sizeof line),
           mrt_status_name(st));
    ok = ok && st == MRT_E_SPEC && spec == NULL && err.line == 4;
    printf("plan_mlp: %s\n", ok ? "ok" : "UNEXPECTED");
    return ok ? 0 : 1;
}
