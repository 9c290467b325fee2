/*
 * validate_report.c — what `meshrt validate` prints from the figures
 * validate.c measured: per partitioning, modeled against measured time
 * per step kind and size class, per op (the ops that take at least 1% of
 * the run) and end to end, with the error factors (measured / modeled:
 * the geometric mean and the worst, farthest from 1, over those ops);
 * then over the partitionings, the end-to-end factors, Kendall's tau
 * between the modeled and the measured times, and the model's pick (the
 * least modeled time) against the measured fastest.  Partitionings
 * that lower to one plan are one point of that ordering: the first of
 * them stands for the rest, which say whose plan they share.  Text or
 * one JSON object; no MPI.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "validate.h"

const char *mrt_val_kind_name(int kind)
{
    static const char *const name[MRT_VAL_KINDS] = {
        "einsum",         "local",    "allreduce", "allgather",
        "reduce_scatter", "alltoall", "permute"};
    return kind >= 0 && kind < MRT_VAL_KINDS ? name[kind] : "?";
}

const char *mrt_val_class_name(int cls)
{
    static const char *const name[MRT_VAL_CLASSES] = {"<64KiB", "64KiB-1MiB",
                                                      "1-16MiB", ">=16MiB"};
    return cls >= 0 && cls < MRT_VAL_CLASSES ? name[cls] : "?";
}

/* measured / modeled, or NAN when either is not positive. */
static double ratio(double measured, double model)
{
    return measured > 0 && model > 0 ? measured / model : NAN;
}

/* Geometric mean and worst (farthest from 1) of factors, NAN if none. */
typedef struct factors {
    int n;
    double logsum, worst;
} factors;

static void factors_add(factors *f, double r)
{
    if (!isfinite(r))
        return;
    if (!f->n || fabs(log(r)) > fabs(log(f->worst)))
        f->worst = r;
    f->logsum += log(r);
    f->n++;
}

static double factors_mean(const factors *f)
{
    return f->n ? exp(f->logsum / f->n) : NAN;
}

/* a's modeled time at the machine's speed during its runs
 * (validate_probe.c): its local steps, einsums and memory-bound ones
 * alike, at that speed, its collectives as modeled; NAN when the speed
 * is unknown. */
static double model_at_speed(const mrt_val_alt *a)
{
    if (!(a->speed > 0))
        return NAN;
    double local = 0;
    for (int c = 0; c < MRT_VAL_CLASSES; c++)
        local += a->cell[MRT_VAL_EINSUM][c].model +
                 a->cell[MRT_VAL_LOCAL][c].model;
    return a->model + local * (1 / a->speed - 1);
}

/* The factors of an alternative's ops that take >= 1% of its run. */
static factors op_factors(const mrt_val_alt *a)
{
    factors f = {0};
    for (int i = 0; i < a->nops; i++)
        if (fmax(a->op[i].model, a->op[i].measured) >= 0.01 * a->measured)
            factors_add(&f, ratio(a->op[i].measured, a->op[i].model));
    return f;
}

/* The ordering over the partitionings that ran. */
typedef struct ordering {
    int n, pick, fastest;
    /* tau: NAN with fewer than 2; slower: the pick's measured time over
     * the fastest's, minus 1 */
    double tau, slower;
    /* measured / modeled end to end: as modeled, and at the machine's
     * speed */
    factors end, at_speed;
    /* the largest spread of a partitioning's own runs (median over
     * fastest, minus 1): a pick slower than the fastest by less than
     * that is within what the runs themselves tell apart */
    double spread;
} ordering;

static ordering order(const mrt_validation *v)
{
    ordering o = {
        .pick = -1, .fastest = -1, .tau = NAN, .slower = NAN, .spread = NAN};
    long concordant = 0, discordant = 0;
    for (int i = 0; i < v->nalts; i++) {
        const mrt_val_alt *a = &v->alt[i];
        if (!a->ok || a->same_as >= 0)
            continue;
        o.n++;
        factors_add(&o.end, ratio(a->measured, a->model));
        factors_add(&o.at_speed, ratio(a->measured, model_at_speed(a)));
        if (isfinite(a->spread) && !(o.spread >= a->spread))
            o.spread = a->spread;
        if (o.pick < 0 || a->model < v->alt[o.pick].model)
            o.pick = i;
        if (o.fastest < 0 || a->measured < v->alt[o.fastest].measured)
            o.fastest = i;
        for (int j = 0; j < i; j++) {
            const mrt_val_alt *b = &v->alt[j];
            if (!b->ok || b->same_as >= 0)
                continue;
            double s = (a->model - b->model) * (a->measured - b->measured);
            concordant += s > 0;
            discordant += s < 0;
        }
    }
    if (o.n >= 2)
        o.tau = (double)(concordant - discordant) / (o.n * (o.n - 1) / 2.0);
    if (o.n >= 1)
        o.slower = v->alt[o.pick].measured / v->alt[o.fastest].measured - 1;
    return o;
}

static void text_num(FILE *f, const char *fmt, double v)
{
    if (isfinite(v))
        fprintf(f, fmt, v);
    else
        fprintf(f, "%*s", (int)strtol(fmt + 1, NULL, 10), "-");
}

/* " (one plan with a, b)": the partitionings after the one at i that
 * share its plan, into buf; "" when none does. */
static const char *sharing(const mrt_validation *v, int i, char *buf,
                           size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int j = i + 1; j < v->nalts; j++)
        if (v->alt[j].same_as == i && n + 1 < size)
            n += (size_t)snprintf(buf + n, size - n, "%s%s",
                                  n ? ", " : " (one plan with ",
                                  v->alt[j].name);
    if (n && n + 1 < size)
        snprintf(buf + n, size - n, ")");
    return buf;
}

static void text_alt(const mrt_validation *v, int i, FILE *f)
{
    const mrt_val_alt *a = &v->alt[i];
    if (a->same_as >= 0) {
        fprintf(f, "\n%s: the same plan as %s, run once as that one\n", a->name,
                v->alt[a->same_as].name);
        return;
    }
    if (!a->ok) {
        fprintf(f, "\n%s: not run: %s\n", a->name, a->error);
        return;
    }
    factors of = op_factors(a);
    fprintf(f, "\n%s: end to end model %.4f ms, measured %.4f ms, ratio ",
            a->name, a->model * 1e3, a->measured * 1e3);
    text_num(f, "%.2f", ratio(a->measured, a->model));
    fprintf(f, "; CPU share %.2f", a->cpu);
    fprintf(f, "; machine at ");
    text_num(f, "%.2f", a->speed);
    fprintf(f, " of the profile's speed: ratio at that speed ");
    text_num(f, "%.2f", ratio(a->measured, model_at_speed(a)));
    fprintf(f, "; ops over 1%%: %d, ratio geomean ", of.n);
    text_num(f, "%.2f", factors_mean(&of));
    fprintf(f, ", worst ");
    text_num(f, "%.2f", of.n ? of.worst : NAN);
    fprintf(f, "\n  %-15s %-11s %6s %11s %11s %7s\n", "kind", "size", "steps",
            "model ms", "measured ms", "ratio");
    for (int k = 0; k < MRT_VAL_KINDS; k++)
        for (int c = 0; c < MRT_VAL_CLASSES; c++) {
            const mrt_val_cell *e = &a->cell[k][c];
            if (!e->steps)
                continue;
            fprintf(f, "  %-15s %-11s %6d %11.4f %11.4f ", mrt_val_kind_name(k),
                    k < MRT_VAL_COLL0 ? "-" : mrt_val_class_name(c), e->steps,
                    e->model * 1e3, e->measured * 1e3);
            text_num(f, "%7.2f", ratio(e->measured, e->model));
            fputc('\n', f);
        }
    fprintf(f, "  %-4s %-14s %-16s %11s %11s %7s\n", "op", "what", "tensor",
            "model ms", "measured ms", "ratio");
    for (int k = 0; k < a->nops; k++) {
        const mrt_val_op *o = &a->op[k];
        if (fmax(o->model, o->measured) < 0.01 * a->measured)
            continue;
        fprintf(f, "  %-4d %-14s %-16s %11.4f %11.4f ", o->user, o->what,
                o->tensor, o->model * 1e3, o->measured * 1e3);
        text_num(f, "%7.2f", ratio(o->measured, o->model));
        fputc('\n', f);
    }
}

static void print_text(const mrt_validation *v, FILE *f)
{
    char steps[96] = "";
    if (v->steps > 1)
        snprintf(
            steps, sizeof steps,
            " (each %d training steps from the initial values; figures per step)",
            v->steps);
    fprintf(f,
            "validate %s: %d ranks; %d timed runs of each partitioning%s, "
            "taking turns after one to warm up, the fastest counts; "
            "costs modeled with the %s profile\n",
            v->spec, v->size, v->repeat, steps, v->machine);
    if (v->products >= 0)
        fprintf(f,
                "products priced at their own shapes' rates: %d shapes "
                "timed on these ranks before planning (--gemm-rows: by the "
                "profile's gemm rows), %d timed again after each of %d "
                "rounds of runs, each at its best\n",
                v->products, v->product_rounds ? v->nrows : 0,
                v->product_rounds);
    else
        fprintf(f, "products priced by the profile's gemm rows\n");
    if (v->collectives >= 0)
        fprintf(f,
                "collectives priced by the profile's rows timed again on "
                "these ranks before planning: %d rows; %d priced at their "
                "median over %d rounds of runs\n",
                v->collectives, v->colls_retimed, v->coll_rounds);
    fprintf(f,
            "load average (1 min) %.2f before, %.2f after, on %d cores "
            "(other processes share them: measured times grow)\n",
            v->load[0], v->load[1], v->cores);
    for (int i = 0; i < v->nalts; i++)
        text_alt(v, i, f);
    ordering o = order(v);
    fprintf(f, "\nend to end over %d plans: ratio geomean ", o.n);
    text_num(f, "%.2f", factors_mean(&o.end));
    fprintf(f, ", worst ");
    text_num(f, "%.2f", o.end.n ? o.end.worst : NAN);
    fprintf(f, "; at the machine's speed geomean ");
    text_num(f, "%.2f", factors_mean(&o.at_speed));
    fprintf(f, ", worst ");
    text_num(f, "%.2f", o.at_speed.n ? o.at_speed.worst : NAN);
    fprintf(f, "\nKendall's tau (modeled against measured order): ");
    text_num(f, "%.2f", o.tau);
    char with[2][600];
    if (o.n)
        fprintf(f,
                "\nthe model picks %s%s; measured fastest %s%s; the pick is "
                "%.1f%% slower (a partitioning's own runs spread up to "
                "%.1f%%, median over fastest)\n",
                v->alt[o.pick].name,
                sharing(v, o.pick, with[0], sizeof with[0]),
                v->alt[o.fastest].name,
                sharing(v, o.fastest, with[1], sizeof with[1]), 100 * o.slower,
                100 * (isfinite(o.spread) ? o.spread : 0));
    else
        fprintf(f, "\nnothing ran\n");
}

static void json_ms(FILE *f, const char *key, double s, const char *sep)
{
    fprintf(f, "\"%s\": %s%s", key, MRT_JSON_NUM("%.6g", s * 1e3), sep);
}

static void json_cells(const mrt_val_alt *a, FILE *f)
{
    const char *sep = "";
    fprintf(f, ", \"classes\": [");
    for (int k = 0; k < MRT_VAL_KINDS; k++)
        for (int c = 0; c < MRT_VAL_CLASSES; c++) {
            const mrt_val_cell *e = &a->cell[k][c];
            if (!e->steps)
                continue;
            fprintf(f, "%s{\"kind\": \"%s\", \"size\": \"%s\", \"steps\": %d, ",
                    sep, mrt_val_kind_name(k),
                    k < MRT_VAL_COLL0 ? "-" : mrt_val_class_name(c), e->steps);
            json_ms(f, "model_ms", e->model, ", ");
            json_ms(f, "measured_ms", e->measured, ", ");
            fprintf(f, "\"ratio\": %s}",
                    MRT_JSON_NUM("%.4g", ratio(e->measured, e->model)));
            sep = ", ";
        }
    fprintf(f, "], \"ops\": [");
    for (int i = 0; i < a->nops; i++) {
        const mrt_val_op *o = &a->op[i];
        fprintf(f, "%s{\"op\": %d, \"what\": ", i ? ", " : "", o->user);
        mrt_json_string(f, o->what);
        fprintf(f, ", \"tensor\": ");
        mrt_json_string(f, o->tensor);
        fprintf(f, ", ");
        json_ms(f, "model_ms", o->model, ", ");
        json_ms(f, "measured_ms", o->measured, ", ");
        fprintf(f, "\"ratio\": %s}",
                MRT_JSON_NUM("%.4g", ratio(o->measured, o->model)));
    }
    fprintf(f, "]");
}

static void json_alt(const mrt_validation *v, const mrt_val_alt *a, FILE *f)
{
    fprintf(f, "{\"name\": ");
    mrt_json_string(f, a->name);
    if (a->same_as >= 0) { /* its figures are that plan's */
        fprintf(f, ", \"same_as\": ");
        mrt_json_string(f, v->alt[a->same_as].name);
    }
    fprintf(f, ", \"ok\": %s", a->ok ? "true" : "false");
    if (!a->ok) {
        fprintf(f, ", \"error\": ");
        mrt_json_string(f, a->error);
        fprintf(f, "}");
        return;
    }
    factors of = op_factors(a);
    fprintf(f, ", ");
    json_ms(f, "model_ms", a->model, ", ");
    json_ms(f, "measured_ms", a->measured, ", ");
    fprintf(f, "\"cpu_share\": %s, ", MRT_JSON_NUM("%.3g", a->cpu));
    fprintf(f, "\"run_spread\": %s, ", MRT_JSON_NUM("%.4g", a->spread));
    fprintf(f,
            "\"ratio\": %s, \"op_ratio\": {\"ops\": %d, \"geomean\": %s, "
            "\"worst\": %s}",
            MRT_JSON_NUM("%.4g", ratio(a->measured, a->model)), of.n,
            MRT_JSON_NUM("%.4g", factors_mean(&of)),
            MRT_JSON_NUM("%.4g", of.n ? of.worst : NAN));
    fprintf(f,
            ", \"speed\": {\"of_profile\": %s, \"probe_gflops\": %s, "
            "\"ratio\": %s}",
            MRT_JSON_NUM("%.3g", a->speed),
            MRT_JSON_NUM("%.4g", a->probed * 1e-9),
            MRT_JSON_NUM("%.4g", ratio(a->measured, model_at_speed(a))));
    json_cells(a, f);
    fprintf(f, "}");
}

static void print_json(const mrt_validation *v, FILE *f)
{
    fprintf(f, "{\"spec\": ");
    mrt_json_string(f, v->spec);
    fprintf(f,
            ", \"ranks\": %d, \"repeat\": %d, \"steps_per_run\": %d, "
            "\"cores\": %d, \"load\": [%s, %s], \"machine\": ",
            v->size, v->repeat, v->steps > 1 ? v->steps : 1, v->cores,
            MRT_JSON_NUM("%.3g", v->load[0] >= 0 ? v->load[0] : NAN),
            MRT_JSON_NUM("%.3g", v->load[1] >= 0 ? v->load[1] : NAN));
    mrt_json_string(f, v->machine);
    fprintf(f, ", \"products_timed\": %d", v->products);
    fprintf(f, ", \"products_retimed\": %d, \"product_rounds\": %d",
            v->product_rounds ? v->nrows : 0, v->product_rounds);
    fprintf(f, ", \"collectives_timed\": %d", v->collectives);
    fprintf(f, ", \"collectives_retimed\": %d, \"collective_rounds\": %d",
            v->colls_retimed, v->coll_rounds);
    fprintf(f, ", \"alternatives\": [");
    for (int i = 0; i < v->nalts; i++) {
        fprintf(f, i ? ", " : "");
        json_alt(v, &v->alt[i], f);
    }
    ordering o = order(v);
    fprintf(f,
            "], \"ratio\": {\"plans\": %d, \"geomean\": %s, "
            "\"worst\": %s, \"at_speed_geomean\": %s, "
            "\"at_speed_worst\": %s}, \"kendall_tau\": %s, ",
            o.n, MRT_JSON_NUM("%.4g", factors_mean(&o.end)),
            MRT_JSON_NUM("%.4g", o.end.n ? o.end.worst : NAN),
            MRT_JSON_NUM("%.4g", factors_mean(&o.at_speed)),
            MRT_JSON_NUM("%.4g", o.at_speed.n ? o.at_speed.worst : NAN),
            MRT_JSON_NUM("%.4g", o.tau));
    fprintf(f, "\"model_pick\": ");
    mrt_json_string(f, o.n ? v->alt[o.pick].name : "");
    fprintf(f, ", \"measured_fastest\": ");
    mrt_json_string(f, o.n ? v->alt[o.fastest].name : "");
    fprintf(f, ", \"pick_slower\": %s, \"run_spread\": %s}\n",
            MRT_JSON_NUM("%.4g", o.slower), MRT_JSON_NUM("%.4g", o.spread));
}

void mrt_validation_print(const mrt_validation *v, int json, FILE *f)
{
    if (!v || !f || v->rank != 0)
        return;
    if (json)
        print_json(v, f);
    else
        print_text(v, f);
}
