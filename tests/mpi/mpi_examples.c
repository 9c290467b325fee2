/*
 * mpi_examples.c — every spec given (the examples) run verified on many
 * meshes in one mpirun: `mpi_examples [--over N] OUTDIR SPEC...`.
 *
 * The jobs, the same on every rank: each spec on the meshes of its
 * first two axes sized 1x1, 2x1, 1x2, 2x2, 4x1 and 1x4 (other axes 1),
 * and each alternative of its `layouts:` on its own mesh.  A job of k
 * ranks runs on a sub-communicator of k ranks: the world is split into
 * groups of k, which take the jobs of that size in turn, so at 4 ranks
 * four 1-rank jobs run at once, then two 2-rank jobs, then one 4-rank
 * job.  A job runs only where k divides the world's size and k > N
 * (--over N, default 0): a second launch with more ranks runs the rest.
 *
 * Each job: the spec loaded with the mesh (a mesh that does not divide
 * a dim splits it unevenly: it must load), the alternative selected,
 * planned, and run as `meshrt run --verify --repeat 2 --json` does,
 * the JSON report going to a callback.  Rank 0 of each group writes one
 * line per job to OUTDIR/records.RANK.jsonl: the job, the status, the
 * plan's bytes handed to MPI per rank (mrt_plan_get_totals) and the
 * report; rank 0 of the world writes every job, run here or not, to
 * OUTDIR/jobs.WORLD.jsonl.  tests/mpi/examples.sh checks them: every
 * job ran once, verified, the bytes handed to MPI op by op and in total
 * equal to the plan's, the loss going down.
 *
 * Exit status 0 when every job set up and ran (what the runs reported is
 * examples.sh's to check), 1 otherwise; 2 on bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "meshrt_mpi.h"

typedef struct job {
    const char *path;
    char mesh[256];  /* "" : the spec's own */
    char layout[64]; /* "" : the spec's rules */
    int ranks;
} job;

typedef struct jobs {
    job *v;
    int n, cap;
    int failures; /* specs that did not load */
} jobs;

static int world_rank, world_size;

static job *jobs_add(jobs *js)
{
    if (js->n == js->cap) {
        js->cap = js->cap ? 2 * js->cap : 64;
        js->v = realloc(js->v, (size_t)js->cap * sizeof *js->v);
        if (!js->v) {
            perror("mpi_examples");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    memset(&js->v[js->n], 0, sizeof js->v[0]);
    return &js->v[js->n++];
}

static void error_line(const char *what, const mrt_error *err)
{
    char buf[1024];
    if (world_rank == 0)
        fprintf(stderr, "mpi_examples: %s: %s\n", what,
                mrt_error_format(err, buf, sizeof buf));
}

/* The six meshes of the first two axes, the others of size 1. */
static void add_meshes(jobs *js, const char *path, const mrt_mesh_info *m)
{
    static const int sizes[6][2] = {{1, 1}, {2, 1}, {1, 2},
                                    {2, 2}, {4, 1}, {1, 4}};
    for (int s = 0; s < 6; s++) {
        job *j = jobs_add(js);
        j->path = path;
        j->ranks = 1;
        int len = 0;
        for (int a = 0; a < m->naxes; a++) {
            int n = a < 2 ? sizes[s][a] : 1;
            j->ranks *= n;
            len += snprintf(j->mesh + len, sizeof j->mesh - (size_t)len,
                            "%s%s=%d", a ? "," : "", m->name[a], n);
        }
    }
}

/* Every alternative of `layouts:`, on its own mesh. */
static void add_layouts(jobs *js, const char *path, const mrt_spec *spec,
                        int nlayouts)
{
    for (int i = 0; i < nlayouts; i++) {
        const char *name = mrt_spec_get_alternative(spec, i);
        mrt_spec *alt = NULL;
        mrt_error err = {0};
        if (mrt_spec_select_alternative(spec, name, &alt, &err) != MRT_OK) {
            error_line(path, &err);
            js->failures++;
            continue;
        }
        mrt_spec_info info;
        mrt_spec_get_info(alt, &info);
        job *j = jobs_add(js);
        j->path = path;
        snprintf(j->layout, sizeof j->layout, "%s", name);
        j->ranks = (int)info.mesh.nranks;
        mrt_spec_destroy(alt);
    }
}

static void list_jobs(jobs *js, char **paths, int npaths)
{
    for (int p = 0; p < npaths; p++) {
        mrt_spec *spec = NULL;
        mrt_error err = {0};
        if (mrt_spec_load(paths[p], &spec, &err) != MRT_OK) {
            error_line(paths[p], &err);
            js->failures++;
            continue;
        }
        mrt_spec_info info;
        mrt_spec_get_info(spec, &info);
        add_meshes(js, paths[p], &info.mesh);
        add_layouts(js, paths[p], spec, info.nalternatives);
        mrt_spec_destroy(spec);
    }
}

static void write_job(FILE *f, const job *j)
{
    fprintf(f, "{\"spec\": ");
    mrt_json_write_string(f, j->path);
    fprintf(f, ", \"mesh\": ");
    mrt_json_write_string(f, j->mesh);
    fprintf(f, ", \"layout\": ");
    mrt_json_write_string(f, j->layout);
    fprintf(f, ", \"ranks\": %d", j->ranks);
}

static int runs_here(const job *j, int over)
{
    return j->ranks > over && j->ranks <= world_size &&
           world_size % j->ranks == 0;
}

static FILE *open_out(const char *dir, const char *what, int n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.%d.jsonl", dir, what, n);
    FILE *f = fopen(path, "a");
    if (!f) {
        perror(path);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return f;
}

/* The report, kept whole (rank 0 of the group receives it). */
typedef struct report {
    char *text;
    size_t len;
} report;

static void keep_report(const char *text, size_t len, void *ctx)
{
    report *r = ctx;
    free(r->text);
    r->text = malloc(len + 1);
    if (!r->text)
        return;
    memcpy(r->text, text, len + 1);
    while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' '))
        len--;
    r->text[len] = '\0';
    r->len = len;
}

static mrt_status set_up(const job *j, mrt_spec **spec, mrt_plan **plan,
                         mrt_error *err)
{
    mrt_spec *loaded = NULL;
    mrt_spec_load_options opt = {.mesh = j->mesh[0] ? j->mesh : NULL};
    mrt_status st = mrt_spec_load_ex(j->path, &opt, &loaded, err);
    if (st == MRT_OK && j->layout[0]) {
        st = mrt_spec_select_alternative(loaded, j->layout, spec, err);
        mrt_spec_destroy(loaded);
    } else {
        *spec = loaded;
    }
    if (st == MRT_OK)
        st = mrt_plan_create(*spec, NULL, plan, err);
    return st;
}

/* One job on comm (of j->ranks ranks); returns 1 when it failed. */
static int run_job(const job *j, MPI_Comm comm, FILE *out)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    mrt_spec *spec = NULL;
    mrt_plan *plan = NULL;
    mrt_error err = {0};
    mrt_status st = set_up(j, &spec, &plan, &err);
    st = mrt_comm_agree(comm, st, &err);
    long long planned = st == MRT_OK ? mrt_plan_get_totals(plan).comm_bytes
                                     : -1;
    report rep = {0};
    if (st == MRT_OK) {
        mrt_run_options opt = {.verify = 1,
                               .repeat = 2,
                               .json = 1,
                               .report_fn = keep_report,
                               .report_ctx = &rep,
                               .comm = comm};
        st = mrt_run(spec, plan, &opt, &err);
    }
    if (rank == 0) {
        char buf[1024];
        write_job(out, j);
        fprintf(out, ", \"status\": \"%s\", \"error\": ",
                st == MRT_OK ? "ok" : mrt_status_name(st));
        mrt_json_write_string(
            out, st == MRT_OK ? "" : mrt_error_format(&err, buf, sizeof buf));
        fprintf(out, ", \"plan_comm_bytes\": %lld, \"report\": %s}\n", planned,
                rep.text ? rep.text : "null");
        fflush(out);
    }
    free(rep.text);
    mrt_plan_destroy(plan);
    mrt_spec_destroy(spec);
    return st != MRT_OK;
}

/* The jobs of k ranks, shared out among the world's groups of k. */
static int run_size(const jobs *js, int k, int over, FILE *out)
{
    int group = world_rank / k, ngroups = world_size / k, failed = 0;
    MPI_Comm comm;
    MPI_Comm_split(MPI_COMM_WORLD, group, world_rank, &comm);
    int nth = 0;
    for (int i = 0; i < js->n; i++) {
        const job *j = &js->v[i];
        if (j->ranks != k || !runs_here(j, over))
            continue;
        if (nth++ % ngroups == group)
            failed += run_job(j, comm, out);
    }
    MPI_Comm_free(&comm);
    return failed;
}

static void write_jobs(const jobs *js, const char *dir, int over)
{
    if (world_rank != 0)
        return;
    FILE *f = open_out(dir, "jobs", world_size);
    for (int i = 0; i < js->n; i++) {
        write_job(f, &js->v[i]);
        fprintf(f, ", \"here\": %s}\n",
                runs_here(&js->v[i], over) ? "true" : "false");
    }
    fclose(f);
}

int main(int argc, char **argv)
{
    mrt_error err = {0};
    if (mrt_init(&err) != MRT_OK) {
        fprintf(stderr, "mpi_examples: mrt_init: %s\n", err.message);
        return 1;
    }
    int over = 0, a = 1;
    if (argc > 2 && strcmp(argv[1], "--over") == 0) {
        over = atoi(argv[2]);
        a = 3;
    }
    if (argc - a < 2) {
        fprintf(stderr, "usage: mpi_examples [--over N] OUTDIR SPEC...\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    const char *dir = argv[a];
    jobs js = {0};
    list_jobs(&js, argv + a + 1, argc - a - 1);
    write_jobs(&js, dir, over);
    FILE *out = open_out(dir, "records", world_rank);
    int failed = js.failures;
    for (int k = 1; k <= world_size; k++)
        if (world_size % k == 0)
            failed += run_size(&js, k, over, out);
    fclose(out);
    int total = 0;
    MPI_Allreduce(&failed, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    free(js.v);
    MPI_Finalize();
    return total ? 1 : 0;
}
