/*
 * fuzz_spec.c — fuzz target for the spec loader and the planner: the
 * input is the text of a spec, taken through what `meshrt check` and
 * `meshrt plan` do, with no MPI: mrt_spec_load_text (parse, resolve,
 * expand the composite ops, derive the backward program of `train:`),
 * then mrt_plan_create with the auto planner (which also tries the
 * fixed rules and Mesh-TensorFlow's lowering) and with --planner meshtf,
 * the three printers, and every `layouts:` alternative (the first few)
 * selected and planned as `--layout NAME` would.
 *
 * A first line "# --mesh: VALUE" passes VALUE as the mesh override, as in
 * tests/specs/bad.  The spec is named MRT_FUZZ_SPEC_PATH, so a relative
 * `init: {file: NAME}` finds the .npy files of corpus/npy.
 *
 * What it checks besides "no crash, no leak, no undefined behaviour": a
 * load that fails says so with a status, a message and a position (every
 * spec error points at a line); a spec that loads is consistent (ids in
 * range, each op the producer of its output); a plan's totals are finite
 * and not negative; and the spec re-derived under its own rules
 * (mrt_spec_derive, as compare and search use it) plans to the same
 * text, byte for byte, in all three printers (the planner must be
 * deterministic: every rank builds the plan on its own).  A broken check
 * aborts, which libFuzzer reports.
 *
 * Memory: planning sizes are numbers, not buffers (the planner allocates
 * per op and per tensor, never per element), so a valid spec with huge
 * dims costs no more to plan than a small one, and nothing here skips
 * big specs.  What bounds memory is the input's size (libFuzzer's
 * -max_len) and its -rss_limit_mb.
 *
 * Nothing is printed per input: errors stay in the mrt_error, and the
 * plan printers write to memory (open_memstream).  Built two ways
 * (tests/fuzz/meson.build): with -fsanitize=fuzzer into a libFuzzer
 * binary, and with replay.c into a plain program that runs the corpus as
 * a regular test.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "plan.h"
#include "spec.h"
#include "spec_load.h"

#ifndef MRT_FUZZ_SPEC_PATH
#define MRT_FUZZ_SPEC_PATH "fuzz.yaml"
#endif
#define OVERRIDE_TAG "# --mesh: "
#define MAX_ALTERNATIVES 4 /* `layouts:` alternatives planned per input */

/* The VALUE of a first line "# --mesh: VALUE" into buf, else NULL. */
static const char *mesh_override(const uint8_t *data, size_t size, char *buf,
                                 size_t bufsize)
{
    size_t tag = sizeof OVERRIDE_TAG - 1, n = 0;
    if (size < tag || memcmp(data, OVERRIDE_TAG, tag))
        return NULL;
    while (tag + n < size && n + 1 < bufsize && data[tag + n] != '\n' &&
           data[tag + n] != '\0')
        n++;
    memcpy(buf, data + tag, n);
    buf[n] = '\0';
    return buf;
}

static void check_failure(mrt_status st, const mrt_error *err, int overridden,
                          const char *what)
{
    MRT_FUZZ_CHECK(err->code == st, "%s: status %d, error %d", what, (int)st,
                   (int)err->code);
    MRT_FUZZ_CHECK(err->message[0], "%s: error without a message", what);
    if (st == MRT_E_USAGE && overridden)
        return; /* a bad --mesh string: no file, no position */
    MRT_FUZZ_CHECK(st == MRT_E_SYNTAX || st == MRT_E_SPEC || st == MRT_E_IO,
                   "%s: unexpected status %d: %s", what, (int)st, err->message);
    MRT_FUZZ_CHECK(err->line > 0 && err->column > 0,
                   "%s: error without a position: %s", what, err->message);
}

/* What later passes take for granted. */
static void check_spec(const mrt_spec *s)
{
    MRT_FUZZ_CHECK(s->mesh.nranks >= 1 && s->mesh.naxes <= MRT_MAX_AXES,
                   "mesh of %lld ranks", (long long)s->mesh.nranks);
    for (int i = 0; i < s->nops; i++) {
        const mrt_spec_op *op = &s->op[i];
        MRT_FUZZ_CHECK(op->nin >= 1 && op->nin <= 2, "op %d: %d inputs", i,
                       op->nin);
        MRT_FUZZ_CHECK(op->out >= 0 && op->out < s->ntensors,
                       "op %d: output %d", i, op->out);
        MRT_FUZZ_CHECK(s->tensor[op->out].producer == i,
                       "op %d: its output is made by op %d", i,
                       s->tensor[op->out].producer);
        for (int k = 0; k < op->nin; k++)
            MRT_FUZZ_CHECK(op->in[k] >= 0 && op->in[k] < s->ntensors &&
                               s->tensor[op->in[k]].producer < i,
                           "op %d: input %d is tensor %d", i, k, op->in[k]);
    }
    for (int k = 0; k < s->noutputs; k++)
        MRT_FUZZ_CHECK(s->output[k] >= 0 && s->output[k] < s->ntensors,
                       "output %d is tensor %d", k, s->output[k]);
    for (int t = 0; t < s->ntensors; t++)
        MRT_FUZZ_CHECK(mrt_spec_find_tensor(s, s->tensor[t].name) == t,
                       "tensor '%s' is not found by name", s->tensor[t].name);
}

static void check_totals(const mrt_plan *p)
{
    mrt_plan_totals t = mrt_plan_get_totals(p);
    MRT_FUZZ_CHECK(t.comm_bytes >= 0 && t.collectives >= 0 && t.messages >= 0 &&
                       t.peak_memory >= 0,
                   "negative totals: %lld bytes, %lld bytes peak",
                   (long long)t.comm_bytes, (long long)t.peak_memory);
    MRT_FUZZ_CHECK(isfinite(t.flops) && t.flops >= 0 && isfinite(t.time_s) &&
                       t.time_s >= 0 && isfinite(t.wire_bytes) &&
                       t.wire_bytes >= 0,
                   "totals: %g flops, %g s, %g wire bytes", t.flops, t.time_s,
                   t.wire_bytes);
}

/* Plans s; a plan is checked and, if text is not NULL, printed (all
 * three printers) into *text, which the caller frees.  A failure must
 * say why. */
static void plan(const mrt_spec *s, mrt_planner planner, char **text)
{
    mrt_plan_options opt = {.planner = planner, .explain = text != NULL};
    mrt_error err = {0};
    mrt_plan *p = NULL;
    mrt_status st = mrt_plan_create(s, &opt, &p, &err);
    if (st != MRT_OK) {
        MRT_FUZZ_CHECK(!p, "a failed plan was returned");
        MRT_FUZZ_CHECK(err.code == st && err.message[0],
                       "plan failed with status %d and no message", (int)st);
        return;
    }
    check_totals(p);
    size_t len = 0;
    FILE *f = text ? open_memstream(text, &len) : NULL;
    if (f) {
        mrt_plan_print(p, f);
        mrt_plan_print_json(p, f);
        mrt_plan_print_explain(p, f);
        fclose(f);
    }
    mrt_plan_destroy(p);
}

/* The spec derived under its own rules is the same spec: it must plan
 * to the same plan, to the byte (the planner is deterministic, and every
 * rank must build the same plan). */
static void same_plan_derived(const mrt_spec *s, const char *text)
{
    mrt_error err = {0};
    mrt_spec *d = NULL;
    char *again = NULL;
    mrt_status st = mrt_spec_derive(s, s->rule, NULL, &d, &err);
    MRT_FUZZ_CHECK(st == MRT_OK, "the spec under its own rules: %s",
                   err.message);
    plan(d, MRT_PLANNER_AUTO, &again);
    MRT_FUZZ_CHECK(!text == !again && (!text || !strcmp(text, again)),
                   "the derived spec plans differently:\n%s\n---\n%s",
                   text ? text : "(no plan)", again ? again : "(no plan)");
    free(again);
    mrt_spec_destroy(d);
}

static void alternatives(const mrt_spec *s)
{
    for (int i = 0; i < s->nlayouts && i < MAX_ALTERNATIVES; i++) {
        mrt_error err = {0};
        mrt_spec *alt = NULL;
        mrt_status st = mrt_spec_select_alternative(s, s->layouts[i].name, &alt,
                                                    &err);
        if (st == MRT_OK)
            plan(alt, MRT_PLANNER_AUTO, NULL);
        else
            MRT_FUZZ_CHECK(!alt && err.code == st && err.message[0],
                           "layout '%s' failed without a message",
                           s->layouts[i].name);
        mrt_spec_destroy(alt);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready) {
        /* the built-in machine profile, not a developer's calibration */
        setenv("MESHRT_PROFILE", "/nonexistent/meshrt-fuzz-profile.yaml", 1);
        ready = 1;
    }
    char buf[256];
    const char *mesh = mesh_override(data, size, buf, sizeof buf);
    mrt_error err = {0};
    mrt_spec *s = (mrt_spec *)&err; /* must be reset to NULL on failure */
    mrt_status st = mrt_spec_load_ex(
        MRT_FUZZ_SPEC_PATH,
        &(mrt_spec_load_options){
            .mesh = mesh, .text = (const char *)data, .len = size},
        &s, &err);
    if (st != MRT_OK) {
        MRT_FUZZ_CHECK(!s, "a failed load returned a spec");
        check_failure(st, &err, mesh != NULL, "load");
        return 0;
    }
    check_spec(s);
    char *text = NULL;
    plan(s, MRT_PLANNER_AUTO, &text);
    same_plan_derived(s, text);
    free(text);
    plan(s, MRT_PLANNER_MESHTF, NULL);
    alternatives(s);
    mrt_spec_destroy(s);
    return 0;
}
