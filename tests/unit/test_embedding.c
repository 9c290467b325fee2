/*
 * test_embedding.c — the embedding op and int32 index tensors, without
 * MPI: the lookup gives the values and gradients of the one-hot einsum
 * it replaces, without the one-hot tensor's memory or flops; with the
 * vocab split it plans one all-reduce of the output's shard over the
 * vocab's axes (a reduce-scatter when the output is split over the
 * sequence on them); an int32 tensor moves 4-byte elements in a float64
 * program.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel.h"
#include "local.h"
#include "npy.h"
#include "planning.h"

enum { B = 3, S = 4, V = 13, D = 5 };

static char dir[64];

static void write_file(const char *name, const char *text)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static mrt_spec *load(const char *name, const char *mesh)
{
    char path[128];
    mrt_spec *s = NULL;
    mrt_error err = {0};
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (mrt_spec_load_ex(path, &(mrt_spec_load_options){.mesh = mesh}, &s,
                         &err))
        ck_abort_msg("%s: %d:%d: %s", name, err.line, err.column, err.message);
    return s;
}

static mrt_plan *plan_of(const mrt_spec *s, int strategy)
{
    mrt_plan *p = NULL;
    mrt_error err = {0};
    mrt_plan_options opt = {0};
    mrt_status st = strategy < 0
                        ? mrt_plan_create(s, &opt, &p, &err)
                        : mrt_plan_create_with(s, &opt, (mrt_strategy)strategy,
                                               &p, &err);
    if (st)
        ck_abort_msg("plan: %s", err.message);
    return p;
}

#define HEAD                                                                   \
    "mesh: {data: 2, model: 2}\n"                                              \
    "dtype: float64\n"                                                         \
    "dims: {b: 3, s: 4, v: 13, d: 5}\n"                                        \
    "layout: {b: data, v: model}\n"                                            \
    "tensors:\n"                                                               \
    "  table:  {shape: [v, d], init: {random: 7}}\n"                           \
    "  target: {shape: [b, s, d], init: {random: 8}}\n"

/* ids.npy (int32, some repeated, one of every block of the vocab, the
 * last row of the uneven last block) and onehot.npy (float64), and the
 * two specs that read them. */
static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/mrt_test_embedding_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    int32_t ids[B * S] = {0, 12, 5, 5, 7, 1, 12, 3, 9, 0, 6, 11};
    double hot[B * S * V] = {0};
    for (int i = 0; i < B * S; i++)
        hot[i * V + ids[i]] = 1;
    char path[128];
    mrt_error err = {0};
    snprintf(path, sizeof path, "%s/ids.npy", dir);
    ck_assert_int_eq(
        mrt_npy_write(path, MRT_I32, 2, (int64_t[]){B, S}, ids, &err), 0);
    /* the same ids as int64 ('<i8', which numpy writes by default) */
    snprintf(path, sizeof path, "%s/ids64.npy", dir);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    const char *dict = "{'descr': '<i8', 'fortran_order': False, "
                       "'shape': (3, 4), }";
    char head[128];
    memset(head, ' ', sizeof head);
    memcpy(head, "\x93NUMPY\x01\x00\x76\x00", 10); /* v1.0, 118 bytes */
    memcpy(head + 10, dict, strlen(dict));
    head[127] = '\n';
    fwrite(head, 1, sizeof head, f);
    for (int i = 0; i < B * S; i++) {
        int64_t w = ids[i];
        fwrite(&w, sizeof w, 1, f);
    }
    fclose(f);
    snprintf(path, sizeof path, "%s/onehot.npy", dir);
    ck_assert_int_eq(
        mrt_npy_write(path, MRT_F64, 3, (int64_t[]){B, S, V}, hot, &err), 0);
    write_file("embed.yaml",
               HEAD "  ids:    {shape: [b, s], dtype: int32, init: {file: "
                    "ids.npy}}\n"
                    "ops:\n"
                    "  - {op: embedding, in: [table, ids], dim: v, out: e}\n"
                    "  - {op: mse, in: [e, target], out: loss}\n"
                    "outputs: [e]\n"
                    "train: {loss: loss, params: [table], lr: 0.1}\n");
    write_file("embed64.yaml",
               HEAD "  ids:    {shape: [b, s], dtype: int32, init: {file: "
                    "ids64.npy}}\n"
                    "ops:\n"
                    "  - {op: embedding, in: [table, ids], dim: v, out: e}\n"
                    "outputs: [e]\n");
    write_file("onehot.yaml", /* (the ids too, as a user has them) */
               HEAD "  ids:    {shape: [b, s], dtype: int32, init: {file: "
                    "ids.npy}}\n"
                    "  hot:    {shape: [b, s, v], init: {file: onehot.npy}}\n"
                    "ops:\n"
                    "  - {op: einsum, in: [hot, table], out: e, shape: [b, s, "
                    "d]}\n"
                    "  - {op: mse, in: [e, target], out: loss}\n"
                    "outputs: [e]\n"
                    "train: {loss: loss, params: [table], lr: 0.1}\n");
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* Output `name` of the reference run of s. */
static const double *output(const mrt_spec *s, void **outs, const char *name)
{
    for (int k = 0; k < s->noutputs; k++)
        if (!strcmp(s->tensor[s->output[k]].name, name))
            return outs[k];
    ck_abort_msg("no output %s", name);
    return NULL;
}

START_TEST(lookup_equals_the_one_hot_einsum)
{
    mrt_spec *a = load("embed.yaml", NULL), *b = load("onehot.yaml", NULL);
    void **oa, **ob, **ma, **mb;
    mrt_error err = {0};
    double la, lb;
    ck_assert_int_eq(mrt_reference_run(a, 1, &la, &oa, &ma, &err), 0);
    ck_assert_int_eq(mrt_reference_run(b, 1, &lb, &ob, &mb, &err), 0);
    ck_assert_double_eq_tol(la, lb, 1e-14);
    const char *names[] = {"e", "grad:table", "table:next"};
    int64_t counts[] = {B * S * D, V * D, V * D};
    for (int n = 0; n < 3; n++) {
        const double *x = output(a, oa, names[n]), *y = output(b, ob, names[n]);
        double nonzero = 0;
        for (int64_t i = 0; i < counts[n]; i++) {
            ck_assert_msg(fabs(x[i] - y[i]) <= 1e-14 * (1 + fabs(y[i])),
                          "%s[%lld]: lookup %.17g, one-hot einsum %.17g",
                          names[n], (long long)i, x[i], y[i]);
            nonzero += fabs(x[i]);
        }
        ck_assert(nonzero > 0); /* (a test of something) */
    }
    /* int64 ids read as int32: the same lookup */
    mrt_spec *c = load("embed64.yaml", NULL);
    void **oc, **mc;
    ck_assert_int_eq(mrt_reference_run(c, 1, NULL, &oc, &mc, &err), 0);
    ck_assert_int_eq(memcmp(output(c, oc, "e"), output(a, oa, "e"),
                            B * S * D * sizeof(double)),
                     0);
    mrt_reference_free(c, oc);
    mrt_reference_free(c, mc);
    mrt_spec_destroy(c);
    mrt_reference_free(a, oa);
    mrt_reference_free(a, ma);
    mrt_reference_free(b, ob);
    mrt_reference_free(b, mb);
    mrt_spec_destroy(a);
    mrt_spec_destroy(b);
}
END_TEST

/* The largest value of a tensor with `nd` dims that include v. */
static int64_t largest_with_vocab(const mrt_plan *p, const mrt_spec *s, int nd)
{
    int64_t most = 0, v = mrt_spec_find_dim(s, "v");
    for (int i = 0; i < p->nvalues; i++) {
        const mrt_layout *l = &p->value[i].layout;
        if (l->ndims == nd && mrt_layout_find_dim(l, (int)v) >= 0 &&
            p->value[i].count * p->value[i].elsize > most)
            most = p->value[i].count * p->value[i].elsize;
    }
    return most;
}

START_TEST(lookup_has_no_one_hot_memory_nor_flops)
{
    const char *mesh[] = {"data=1,model=1", "data=2,model=2", "data=1,model=4"};
    for (int m = 0; m < 3; m++) {
        mrt_spec *a = load("embed.yaml", mesh[m]);
        mrt_spec *b = load("onehot.yaml", mesh[m]);
        /* both with the rule, so both lower the same way (the masked
         * local lookup and the one-hot einsum at the table's split): the
         * auto planner may choose otherwise for each (with v = 13 uneven
         * over model, gathering the table for the lookup is modeled
         * cheaper than all-reducing its result, and takes more memory) */
        mrt_plan *pa = plan_of(a, MRT_STRATEGY_RULES),
                 *pb = plan_of(b, MRT_STRATEGY_RULES);
        int64_t hot = largest_with_vocab(pb, b, 3);
        ck_assert_int_gt(hot, 0);
        ck_assert_int_eq(largest_with_vocab(pa, a, 3), 0);
        ck_assert_msg(pb->totals.peak_memory - pa->totals.peak_memory >= hot,
                      "%s: peak %lld (lookup) against %lld (one-hot %lld)",
                      mesh[m], (long long)pa->totals.peak_memory,
                      (long long)pb->totals.peak_memory, (long long)hot);
        ck_assert_str_eq(pa->op[0].what, "embedding");
        ck_assert_double_eq(pa->op[0].flops, 0);
        ck_assert_double_gt(pb->op[0].flops, 0);
        int gathers = 0;
        for (int k = 0; k < pa->nsteps; k++) {
            gathers += pa->step[k].kind == MRT_STEP_GATHER;
            if (pa->step[k].kind == MRT_STEP_GATHER ||
                pa->step[k].kind == MRT_STEP_SCATTER_ADD)
                ck_assert_double_eq(pa->step[k].flops, 0);
        }
        ck_assert_int_eq(gathers, 1);
        mrt_plan_destroy(pa);
        mrt_plan_destroy(pb);
        pa = plan_of(a, -1); /* auto: still no one-hot, no flops */
        ck_assert_int_eq(largest_with_vocab(pa, a, 3), 0);
        ck_assert_double_eq(pa->op[0].flops, 0);
        mrt_plan_destroy(pa);
        mrt_spec_destroy(a);
        mrt_spec_destroy(b);
    }
}
END_TEST

/* GPT-2's vocabulary, uneven over 4: the output [b/data, s, d] (own
 * layout `out`) of a lookup in a table split over model. */
static void vocab_parallel(const char *out)
{
    char text[1024];
    snprintf(text, sizeof text,
             "mesh: {data: 2, model: 4}\n"
             "dims: {b: 8, s: 16, v: 50257, d: 64}\n"
             "layout: {b: data, v: model}\n"
             "tensors:\n"
             "  table: {shape: [v, d]}\n"
             "  ids:   {shape: [b, s], dtype: int32, init: {labels: 50257}}\n"
             "ops:\n"
             "  - {op: embedding, in: [table, ids], dim: v, out: e%s}\n",
             out);
    write_file("vp.yaml", text);
}

/* The steps of op 0 as "gather allreduce". */
static const char *op0_steps(const mrt_plan *p)
{
    static char buf[256];
    buf[0] = '\0';
    for (int k = 0; k < p->op[0].nsteps; k++)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s",
                 k ? " " : "", mrt_step_kind_name(p->step[k].kind));
    return buf;
}

START_TEST(vocab_parallel_is_one_allreduce)
{
    vocab_parallel("");
    mrt_spec *s = load("vp.yaml", NULL);
    for (int st = 0; st < 2; st++) { /* the rule, and Mesh-TensorFlow's */
        mrt_plan *p = plan_of(s, st ? MRT_STRATEGY_MESHTF : MRT_STRATEGY_RULES);
        ck_assert_str_eq(op0_steps(p), "gather allreduce");
        const mrt_step *r = &p->step[1];
        ck_assert_uint_eq(r->axes, 1u << 1);         /* model */
        ck_assert_int_eq(r->bytes, 4 * 16 * 64 * 4); /* e's shard, float32 */
        ck_assert_int_eq(p->comm_bytes, r->bytes);
        mrt_plan_destroy(p);
    }
    mrt_spec_destroy(s);
}
END_TEST

START_TEST(sequence_parallel_is_one_reduce_scatter)
{
    vocab_parallel(", layout: {b: data, s: model}");
    mrt_spec *s = load("vp.yaml", NULL);
    mrt_plan *p = plan_of(s, MRT_STRATEGY_RULES);
    ck_assert_str_eq(op0_steps(p), "gather reduce_scatter");
    const mrt_step *r = &p->step[1];
    ck_assert_uint_eq(r->axes, 1u << 1);
    ck_assert_int_eq(r->bytes, 4 * 16 * 64 * 4); /* the whole pending sum */
    ck_assert_int_eq(p->value[r->out].count, 4 * 4 * 64);
    mrt_plan_destroy(p);
    mrt_spec_destroy(s);
}
END_TEST

START_TEST(int32_relayout_moves_4_byte_elements)
{
    /* float64 program: the ids split over s must be gathered for an
     * output that keeps s whole: 4 bytes an element, not 8 */
    write_file("ids.yaml",
               "mesh: {data: 1, model: 4}\n"
               "dtype: float64\n"
               "dims: {b: 6, s: 8, v: 10, d: 256}\n"
               "tensors:\n"
               "  table: {shape: [v, d]}\n"
               "  ids:   {shape: [b, s], dtype: int32, init: {labels: 10},\n"
               "          layout: {s: model}}\n"
               "ops:\n"
               "  - {op: embedding, in: [table, ids], dim: v, out: e}\n");
    mrt_spec *s = load("ids.yaml", NULL);
    for (int st = 0; st < 1; st++) { /* the rule (auto gathers the output) */
        mrt_plan *p = plan_of(s, st ? -1 : MRT_STRATEGY_RULES);
        int moved = 0;
        for (int k = 0; k < p->nsteps; k++) {
            const mrt_step *t = &p->step[k];
            const mrt_value *in = &p->value[t->in];
            if (!mrt_step_is_collective(t->kind) ||
                strcmp(p->tensor_name[in->tensor], "ids"))
                continue;
            moved++;
            ck_assert_int_eq(in->dtype, MRT_I32);
            ck_assert_int_eq(t->bytes, in->count * 4);
            ck_assert_int_eq(t->bytes_total, 6 * 8 * 4);
        }
        ck_assert_int_eq(moved, 1);
        /* the ids' buffer holds 4-byte elements too */
        ck_assert_int_eq(p->value[p->tensor_value[1]].elsize, 4);
        mrt_plan_destroy(p);
    }
    mrt_spec_destroy(s);
}
END_TEST

/* softmax_cross_entropy of int32 labels: the labels, the loss and the
 * gradients of float labels, from the same random stream. */
START_TEST(int32_labels_equal_float_labels)
{
    const char *path[2] = {"tests/specs/ops/softmax_cross_entropy_labels.yaml",
                           "tests/specs/ops/softmax_cross_entropy_int32.yaml"};
    mrt_spec *s[2];
    void **out[2], **mag[2];
    double loss[2][2];
    mrt_error err = {0};
    for (int k = 0; k < 2; k++) {
        if (mrt_spec_load(path[k], &s[k], &err))
            ck_abort_msg("%s: %s", path[k], err.message);
        ck_assert_int_eq(
            mrt_reference_run(s[k], 2, loss[k], &out[k], &mag[k], &err), 0);
    }
    ck_assert_double_eq(loss[0][0], loss[1][0]);
    ck_assert_double_eq(loss[0][1], loss[1][1]);
    ck_assert_int_eq(s[0]->noutputs, s[1]->noutputs);
    for (int j = 0; j < s[0]->noutputs; j++) {
        int t = s[0]->output[j];
        int64_t n = 1;
        for (int i = 0; i < s[0]->tensor[t].layout.ndims; i++)
            n *= s[0]->tensor[t].layout.size[i];
        for (int64_t i = 0; i < n; i++) {
            double a = ((const double *)out[0][j])[i];
            double b = mrt_spec_tensor_dtype(s[1], s[1]->output[j]) == MRT_I32
                           ? ((const int32_t *)out[1][j])[i]
                           : ((const double *)out[1][j])[i];
            ck_assert_msg(a == b, "%s[%lld]: %g against %g",
                          s[0]->tensor[t].name, (long long)i, a, b);
        }
    }
    for (int k = 0; k < 2; k++) {
        mrt_reference_free(s[k], out[k]);
        mrt_reference_free(s[k], mag[k]);
        mrt_spec_destroy(s[k]);
    }
}
END_TEST

/* The C builder: a dtype field, and the same checks as YAML's. */
START_TEST(builder_embedding_and_int32)
{
    mrt_ir *ir = NULL;
    mrt_error err = {0};
    mrt_spec *s = NULL;
    ck_assert_int_eq(mrt_ir_create("p", 1, (const char *[]){"data"},
                                   (int64_t[]){2}, &ir, &err),
                     0);
    ck_assert_int_eq(mrt_ir_add_dim(ir, "b", 4, &err), 0);
    ck_assert_int_eq(mrt_ir_add_dim(ir, "v", 9, &err), 0);
    ck_assert_int_eq(mrt_ir_add_dim(ir, "d", 3, &err), 0);
    mrt_ir_tensor ids = {.name = "ids",
                         .ndims = 1,
                         .shape = (const char *[]){"b"},
                         .init = MRT_IR_INIT_LABELS,
                         .value = 9,
                         .dtype = "int32"};
    mrt_ir_tensor table = {
        .name = "table", .ndims = 2, .shape = (const char *[]){"v", "d"}};
    ck_assert_int_eq(mrt_ir_add_tensor(ir, &ids, &err), 0);
    ck_assert_int_eq(mrt_ir_add_tensor(ir, &table, &err), 0);
    mrt_ir_op bad = {.kind = MRT_IR_ADD, .in = {"table", "ids"}, .out = "y"};
    ck_assert_int_eq(mrt_ir_add_op(ir, &bad, &err), MRT_E_SPEC);
    ck_assert_ptr_nonnull(strstr(err.message, "int32"));
    mrt_ir_destroy(ir);
    ck_assert_int_eq(mrt_ir_create("p", 1, (const char *[]){"data"},
                                   (int64_t[]){2}, &ir, &err),
                     0);
    mrt_ir_add_dim(ir, "b", 4, &err);
    mrt_ir_add_dim(ir, "v", 9, &err);
    mrt_ir_add_dim(ir, "d", 3, &err);
    mrt_ir_add_tensor(ir, &ids, &err);
    mrt_ir_add_tensor(ir, &table, &err);
    mrt_ir_op e = {.kind = MRT_IR_EMBEDDING,
                   .in = {"table", "ids"},
                   .out = "e",
                   .dim = "v"};
    ck_assert_int_eq(mrt_ir_add_op(ir, &e, &err), 0);
    mrt_ir_set_outputs(ir, 1, (const char *[]){"e"}, &err);
    ck_assert_int_eq(mrt_ir_finish(ir, &s, &err), 0);
    int t = mrt_spec_find_tensor(s, "e");
    ck_assert_int_eq(s->tensor[t].layout.ndims, 2); /* [b, d] */
    ck_assert_int_eq(s->op[s->tensor[t].producer].kind, MRT_OP_GATHER);
    ck_assert_int_eq(mrt_spec_tensor_dtype(s, 0), MRT_I32);
    mrt_spec_destroy(s);
    mrt_ir_destroy(ir);
}
END_TEST

/* The kernels against the definition, for tables and results in every
 * dim order, a vocab block [voff, voff + nv) of a vocab of 9, and ids
 * in and out of the block (and out of the vocab: -1, 9). */
START_TEST(kernels_in_any_dim_order)
{
    enum { NB = 2, NS = 3, ND = 4, NV = 5, VOFF = 3, VOCAB = 9 };
    const int b = 0, sq = 1, v = 2, d = 3; /* dim ids */
    int32_t ids[NB * NS] = {3, 7, -1, 5, 9, 4};
    int64_t ie[] = {NB, NS};
    mrt_kview iv = {2, (int[]){b, sq}, ie, ids};
    double table[NV * ND], out[NB * NS * ND], g[NB * NS * ND], dt[NV * ND];
    for (int i = 0; i < NV * ND; i++)
        table[i] = 1 + i;
    for (int i = 0; i < NB * NS * ND; i++)
        g[i] = 0.5 + i;
    for (int tt = 0; tt < 2; tt++) { /* table [v, d] or [d, v] */
        int tdim[2] = {tt ? d : v, tt ? v : d};
        int64_t te[2] = {tt ? ND : NV, tt ? NV : ND};
        mrt_kview tv = {2, tdim, te, table}, dv = {2, tdim, te, dt};
        const int orders[3][3] = {{b, sq, d}, {d, b, sq}, {sq, d, b}};
        for (int oo = 0; oo < 3; oo++) {
            int64_t oe[3];
            for (int i = 0; i < 3; i++)
                oe[i] = orders[oo][i] == b ? NB : orders[oo][i] == sq ? NS : ND;
            mrt_kview ov = {3, orders[oo], oe, out},
                      gv = {3, orders[oo], oe, g};
            mrt_kernel_gather(MRT_F64, &tv, tt, VOFF, MRT_I32, &iv, &ov);
            mrt_kernel_scatter_add(MRT_F64, MRT_I32, &iv, &gv, tt, VOFF, &dv);
            double want_dt[NV * ND] = {0};
            int64_t idx[3];
            for (idx[0] = 0; idx[0] < oe[0]; idx[0]++)
                for (idx[1] = 0; idx[1] < oe[1]; idx[1]++)
                    for (idx[2] = 0; idx[2] < oe[2]; idx[2]++) {
                        int64_t at[4] = {0};
                        for (int i = 0; i < 3; i++)
                            at[orders[oo][i]] = idx[i];
                        int64_t e = (idx[0] * oe[1] + idx[1]) * oe[2] + idx[2];
                        int64_t r = ids[at[b] * NS + at[sq]] - VOFF;
                        int in = r >= 0 && r < NV;
                        int64_t ti = tt ? at[d] * NV + r : r * ND + at[d];
                        ck_assert_double_eq(out[e], in ? table[ti] : 0);
                        if (in)
                            want_dt[ti] += g[e];
                    }
            for (int i = 0; i < NV * ND; i++)
                ck_assert_double_eq(dt[i], want_dt[i]);
        }
    }
    (void)VOCAB;
}
END_TEST

/* --verify of an int32 output: equal integers, else a difference. */
START_TEST(verify_compares_ids_exactly)
{
    int32_t x[4] = {3, 1, 4, 1}, r[4] = {3, 1, 5, 1};
    mrt_verify_result v;
    mrt_verify_compare_index(x, x, 4, &v);
    ck_assert(v.ok && v.differ == 0 && v.count == 4);
    mrt_verify_compare_index(x, r, 4, &v);
    ck_assert(!v.ok && v.differ == 1 && v.worst == 2);
    ck_assert(v.value == 4 && v.reference == 5);
}
END_TEST

START_TEST(int32_is_not_a_compute_dtype)
{
    mrt_ir *ir = NULL;
    mrt_error err = {0};
    ck_assert_int_eq(mrt_ir_create("p", 1, (const char *[]){"data"},
                                   (int64_t[]){1}, &ir, &err),
                     0);
    ck_assert_int_eq(mrt_ir_set_dtype(ir, MRT_I32, &err), MRT_E_SPEC);
    ck_assert_ptr_nonnull(strstr(err.message, "index type"));
    mrt_ir_destroy(ir);
    ck_assert_str_eq(mrt_dtype_name(MRT_I32), "int32");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("embedding");
    TCase *tc = tcase_create("embedding");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, lookup_equals_the_one_hot_einsum);
    tcase_add_test(tc, lookup_has_no_one_hot_memory_nor_flops);
    tcase_add_test(tc, vocab_parallel_is_one_allreduce);
    tcase_add_test(tc, sequence_parallel_is_one_reduce_scatter);
    tcase_add_test(tc, int32_relayout_moves_4_byte_elements);
    tcase_add_test(tc, int32_is_not_a_compute_dtype);
    tcase_add_test(tc, kernels_in_any_dim_order);
    tcase_add_test(tc, verify_compares_ids_exactly);
    tcase_add_test(tc, int32_labels_equal_float_labels);
    tcase_add_test(tc, builder_embedding_and_int32);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
