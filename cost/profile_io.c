/*
 * profile_io.c — reading and writing machine profile files: YAML, read
 * as the spec is, by io/'s one YAML reader (yaml_load.h: one pass, the
 * depth bounded; yaml_node.h: keys, numbers and the error wording), so
 * that every node keeps its position.
 *
 * The format, as `meshrt calibrate` writes it (docs/calibration.md):
 *
 *   # meshrt machine profile, written by `meshrt calibrate`
 *   source: "calibrated on HOST with 4 ranks, 2026-11-29T20:30:00Z"
 *   kernel: {family: "zen3", gflops_float32: 50.2, gflops_float64: 25.1}
 *   reduce_gflops: 1.5
 *   copy_GBps: 8
 *   default: {latency_us: 2, bandwidth_GBps: 5}
 *   axes:
 *     data: {latency_us: 1.1, bandwidth_GBps: 6.2}
 *   nodes:               # optional: ranks on nodes, two tiers of links
 *     ranks_per_node: 8
 *     intra: {latency_us: 3, bandwidth_GBps: 300}
 *     inter: {latency_us: 5, bandwidth_GBps: 25}
 *   device_memory: 80GiB # optional: one rank's memory (mrt_parse_bytes)
 *   measured:            # informational, ignored by the loader
 *     ...
 *
 * Units are the ones people quote (microseconds, GB/s = 1e9 bytes/s,
 * GFLOP/s = 1e9 flop/s); mrt_profile keeps seconds, bytes/s and flop/s.
 * Every key is optional: the loader reads over a profile the caller
 * filled first (normally the built-in default), so what the file lacks
 * keeps its value.  `default:` is applied before `axes:`, and an axis
 * that names only one of its two keys takes the other from the default
 * link; so does a tier of `nodes:` that is not given (`ranks_per_node`,
 * an integer from 1 to 2^31-1, is required there).  Anything under
 * `measured:` is skipped unread; any other
 * unknown key is an error.  Every number must lie within the limits of
 * profile.h (a latency of 0 to 1000 s, rates of 1 to 1e21 per second),
 * so that no modeled time is infinite.  On error *p is left as it was.
 *
 * Errors: an unreadable file is MRT_E_IO (no position); malformed YAML
 * is MRT_E_SYNTAX at libyaml's problem mark; YAML that is not a profile
 * is MRT_E_SPEC at its node (1-based line:column), worded as the spec
 * loader words its errors; so is a profile nested deeper than 32 levels,
 * or followed by a second YAML document (even an empty one: at its
 * "---").
 *
 * Saving is atomic: the text goes to a temporary file in the target's
 * folder (made, with its parents, if missing: ~/.config/meshrt on a
 * first calibration), which is then renamed over the target.  Numbers
 * are written with the fewest digits (at most 15) that read back to the
 * same double.
 *
 * Reading and writing stay in one file: the format is one contract, and
 * a key added to one side must be added to the other.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "error.h"
#include "output.h"
#include "profile_io.h"
#include "yaml_load.h"
#include "yaml_node.h"

#define PROFILE_FILE_MAX (1L << 20) /* a profile is a few hundred bytes */
#define PROFILE_DEPTH_MAX 32        /* it needs 3 levels (plus measured:) */

static const mrt_mark no_mark = {0, 0};

char *mrt_profile_default_path(char *buf, int size)
{
    const char *env = getenv("MESHRT_PROFILE");
    const char *xdg = getenv("XDG_CONFIG_HOME");
    const char *home = getenv("HOME");
    if (env && *env)
        snprintf(buf, (size_t)size, "%s", env);
    else if (xdg && *xdg)
        snprintf(buf, (size_t)size, "%s/meshrt/profile.yaml", xdg);
    else
        snprintf(buf, (size_t)size, "%s/.config/meshrt/profile.yaml",
                 home ? home : ".");
    return buf;
}

char *mrt_machine_get_default_path(char *buf, size_t size)
{
    if (!buf || size == 0)
        return NULL;
    return mrt_profile_default_path(buf, size > INT_MAX ? INT_MAX : (int)size);
}

/* ---- reading: numbers with their limits -------------------------- */

/* A number from plain scalar n in [lo, hi] (the limits of profile.h;
 * `unit` names the file's unit in messages), times scale; *out is left
 * alone when n is NULL (key absent). */
static mrt_status number(const mrt_yaml_doc *d, const yaml_node_t *n,
                         const char *name, const char *in, double lo, double hi,
                         const char *unit, double scale, double *out)
{
    char w[MRT_YAML_QUOTE_MAX + 32];
    double v;
    if (!n)
        return MRT_OK;
    if (mrt_yaml_finite(n, &v) && v >= lo && v <= hi) {
        *out = v * scale;
        return MRT_OK;
    }
    return mrt_yaml_fail(d, n,
                         "'%s' in %s must be a number from %g to %g "
                         "(%s), got %s",
                         name, in, lo, hi, unit, mrt_yaml_what(n, w, sizeof w));
}

/* A latency in microseconds, and a rate in G units per second. */
static mrt_status latency(const mrt_yaml_doc *d, const yaml_node_t *n,
                          const char *name, const char *in, double *out)
{
    return number(d, n, name, in, 0, MRT_PROFILE_LATENCY_US_MAX, "microseconds",
                  1e-6, out);
}

static mrt_status rate(const mrt_yaml_doc *d, const yaml_node_t *n,
                       const char *name, const char *in, const char *unit,
                       double *out)
{
    return number(d, n, name, in, MRT_PROFILE_RATE_MIN, MRT_PROFILE_RATE_MAX,
                  unit, 1e9, out);
}

/* ---- reading: the profile's parts --------------------------------- */

static const char *const top_keys[] = {
    "source", "kernel",   "reduce_gflops", "copy_GBps", "default",  "axes",
    "nodes",  "measured", "collectives",   "gemm",      "products", "maps",
    "ranks",  "cores",    "device_memory", NULL};

/* `device_memory: 80GiB` (or a number of bytes): mrt_parse_bytes. */
static mrt_status device_memory(const mrt_yaml_doc *d, const yaml_node_t *n,
                                mrt_profile *p)
{
    char w[MRT_YAML_QUOTE_MAX + 32];
    const char *v = n ? mrt_yaml_str(n) : NULL;
    if (!n)
        return MRT_OK;
    if (v && !mrt_yaml_is_null(n) && !mrt_parse_bytes(v, &p->device_memory))
        return MRT_OK;
    return mrt_yaml_fail(d, n,
                         "'device_memory' in the profile must be a size in "
                         "bytes (e.g. 80GB, 80GiB or 85899345920), got %s",
                         mrt_yaml_what(n, w, sizeof w));
}
static const char *const nodes_keys[] = {"ranks_per_node", "intra", "inter",
                                         NULL};
static const char *const link_keys[] = {"latency_us", "bandwidth_GBps", NULL};
static const char *const kernel_keys[] = {"family", "gflops_float32",
                                          "gflops_float64", NULL};
_Static_assert(MRT_COMPUTE_DTYPE_COUNT == 2, "one gflops_ key per dtype");

static mrt_status load_link(const mrt_yaml_doc *d, const yaml_node_t *map,
                            const char *in, mrt_link *l)
{
    mrt_status st = mrt_yaml_expect(d, map, YAML_MAPPING_NODE, in);
    if (!st)
        st = mrt_yaml_check_keys(d, map, link_keys, in);
    if (!st)
        st = latency(d, mrt_yaml_get(d, map, "latency_us"), "latency_us", in,
                     &l->latency_s);
    if (!st)
        st = rate(d, mrt_yaml_get(d, map, "bandwidth_GBps"), "bandwidth_GBps",
                  in, "GB/s", &l->bandwidth_Bps);
    return st;
}

static mrt_status load_kernel(const mrt_yaml_doc *d, const yaml_node_t *map,
                              mrt_profile *p)
{
    char w[MRT_YAML_QUOTE_MAX + 32];
    mrt_status st = mrt_yaml_expect(d, map, YAML_MAPPING_NODE, "'kernel'");
    if (!st)
        st = mrt_yaml_check_keys(d, map, kernel_keys, "'kernel'");
    if (!st)
        st = rate(d, mrt_yaml_get(d, map, "gflops_float32"), "gflops_float32",
                  "'kernel'", "GFLOP/s", &p->gemm_flops[MRT_F32]);
    if (!st)
        st = rate(d, mrt_yaml_get(d, map, "gflops_float64"), "gflops_float64",
                  "'kernel'", "GFLOP/s", &p->gemm_flops[MRT_F64]);
    const yaml_node_t *fam = mrt_yaml_get(d, map, "family");
    if (st || !fam)
        return st;
    const char *s = mrt_yaml_str(fam);
    if (!s || mrt_yaml_is_null(fam) || strlen(s) >= sizeof p->kernel)
        return mrt_yaml_fail(d, fam,
                             "'family' in 'kernel' must be a name "
                             "shorter than %zu characters, got %s",
                             sizeof p->kernel, mrt_yaml_what(fam, w, sizeof w));
    snprintf(p->kernel, sizeof p->kernel, "%s", s);
    return MRT_OK;
}

static mrt_status load_axes(const mrt_yaml_doc *d, const yaml_node_t *map,
                            mrt_profile *p)
{
    char w[MRT_YAML_QUOTE_MAX + 32], in[MRT_NAME_MAX + 16];
    mrt_status st = mrt_yaml_expect(d, map, YAML_MAPPING_NODE, "'axes'");
    if (!st)
        st = mrt_yaml_check_keys(d, map, NULL, "'axes'");
    for (yaml_node_pair_t *pr = map->data.mapping.pairs.start;
         !st && pr < map->data.mapping.pairs.top; pr++) {
        const yaml_node_t *k = mrt_yaml_node(d, pr->key);
        const char *name = mrt_yaml_str(k);
        if (!mrt_yaml_name_ok(name, strlen(name)))
            return mrt_yaml_fail(d, k,
                                 "invalid mesh axis name %s (a name "
                                 "starts with a letter or '_' and has only "
                                 "letters, digits and '_', at most %d)",
                                 mrt_yaml_what(k, w, sizeof w),
                                 MRT_NAME_MAX - 1);
        int i = 0;
        while (i < p->naxes && strcmp(p->axis[i], name))
            i++;
        if (i == MRT_MAX_AXES)
            return mrt_yaml_fail(d, k,
                                 "too many axes in the profile (at "
                                 "most %d)",
                                 MRT_MAX_AXES);
        mrt_link l = i < p->naxes ? p->link[i] : p->fallback;
        snprintf(in, sizeof in, "axis '%s'", name);
        if (!(st = load_link(d, mrt_yaml_node(d, pr->value), in, &l)))
            mrt_profile_set_link(p, name, l);
    }
    return st;
}

/* nodes: {ranks_per_node: N, intra: LINK, inter: LINK}; read after
 * default:, whose link a missing tier takes. */
static mrt_status load_nodes(const mrt_yaml_doc *d, const yaml_node_t *map,
                             mrt_profile *p)
{
    char w[MRT_YAML_QUOTE_MAX + 32];
    double v;
    mrt_status st = mrt_yaml_expect(d, map, YAML_MAPPING_NODE, "'nodes'");
    if (!st)
        st = mrt_yaml_check_keys(d, map, nodes_keys, "'nodes'");
    if (st)
        return st;
    const yaml_node_t *n = mrt_yaml_get(d, map, "ranks_per_node");
    if (!n)
        return mrt_yaml_fail(d, map,
                             "'nodes' needs 'ranks_per_node' (the ranks "
                             "on one node)");
    if (!mrt_yaml_finite(n, &v) || v < 1 || v > INT_MAX || v != floor(v))
        return mrt_yaml_fail(d, n,
                             "'ranks_per_node' in 'nodes' must be an "
                             "integer from 1 to %d, got %s",
                             INT_MAX, mrt_yaml_what(n, w, sizeof w));
    p->ranks_per_node = (int64_t)v;
    p->intra = p->inter = p->fallback;
    if ((n = mrt_yaml_get(d, map, "intra")))
        st = load_link(d, n, "'intra' in 'nodes'", &p->intra);
    if (!st && (n = mrt_yaml_get(d, map, "inter")))
        st = load_link(d, n, "'inter' in 'nodes'", &p->inter);
    return st;
}

static mrt_status load_root(const mrt_yaml_doc *d, const yaml_node_t *root,
                            mrt_profile *p)
{
    char w[MRT_YAML_QUOTE_MAX + 32];
    if (!root)
        return mrt_error_set(d->err, MRT_E_SPEC, d->path, (mrt_mark){1, 1},
                             "the profile is empty (meshrt calibrate writes "
                             "one)");
    if (root->type != YAML_MAPPING_NODE)
        return mrt_yaml_fail(d, root,
                             "expected a mapping at the top of the "
                             "profile, got %s",
                             mrt_yaml_what(root, w, sizeof w));
    mrt_status st = mrt_yaml_check_keys(d, root, top_keys, "the profile");
    const yaml_node_t *n;
    if (!st && (n = mrt_yaml_get(d, root, "kernel")))
        st = load_kernel(d, n, p);
    if (!st)
        st = rate(d, mrt_yaml_get(d, root, "reduce_gflops"), "reduce_gflops",
                  "the profile", "GFLOP/s", &p->reduce_flops);
    if (!st)
        st = rate(d, mrt_yaml_get(d, root, "copy_GBps"), "copy_GBps",
                  "the profile", "GB/s", &p->copy_Bps);
    if (!st && (n = mrt_yaml_get(d, root, "default")))
        st = load_link(d, n, "'default'", &p->fallback);
    if (!st && (n = mrt_yaml_get(d, root, "axes")))
        st = load_axes(d, n, p);
    if (!st && (n = mrt_yaml_get(d, root, "nodes")))
        st = load_nodes(d, n, p);
    if (!st)
        st = mrt_profile_load_rows(d, root, p);
    if (!st)
        st = device_memory(d, mrt_yaml_get(d, root, "device_memory"), p);
    if (st)
        return st;
    n = mrt_yaml_get(d, root, "source");
    if (n && (!mrt_yaml_str(n) || mrt_yaml_is_null(n)))
        return mrt_yaml_fail(d, n, "'source' must be text, got %s",
                             mrt_yaml_what(n, w, sizeof w));
    if (n)
        snprintf(p->source, sizeof p->source, "%s (%s)", d->path,
                 mrt_yaml_str(n));
    else
        snprintf(p->source, sizeof p->source, "%s", d->path);
    return MRT_OK;
}

/* ---- reading: the file and the YAML document ---------------------- */

static mrt_status read_file(const char *path, char **text, size_t *len,
                            mrt_error *err)
{
    return mrt_yaml_read_file(path, "profile", PROFILE_FILE_MAX, text, len,
                              err);
}

mrt_status mrt_profile_load(const char *path, mrt_profile *p, mrt_error *err)
{
    char *text = NULL;
    size_t len = 0;
    yaml_document_t doc;
    mrt_profile next = *p; /* *p changes only on success */
    mrt_status st = read_file(path, &text, &len, err);
    if (st)
        return st;
    /* one document only: a second one is an error, even if empty */
    mrt_yaml_load_options o = {"profile", PROFILE_DEPTH_MAX, 1};
    if ((st = mrt_yaml_load_expert(path, text, len, &o, &doc, err)))
        goto out;
    mrt_yaml_doc d = {&doc, path, err};
    st = load_root(&d, yaml_document_get_root_node(&doc), &next);
    yaml_document_delete(&doc);
    if (!st)
        *p = next;
out:
    free(text);
    return st;
}

/* ---- writing ------------------------------------------------------ */

/* v with the fewest significant digits (at most 15, which drops the
 * noise of a unit conversion such as 0.491e-6 * 1e6) that read back as
 * v, else v to 15 digits. */
static const char *num(double v, char buf[32])
{
    if (v == floor(v) && fabs(v) < 1e15) /* "20", not "2e+01" */
        return snprintf(buf, 32, "%.0f", v), buf;
    for (int digits = 1; digits < 15; digits++) {
        snprintf(buf, 32, "%.*g", digits, v);
        if (strtod(buf, NULL) == v)
            return buf;
    }
    snprintf(buf, 32, "%.15g", v);
    return buf;
}

/* s as a YAML double-quoted scalar. */
static void put_quoted(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            fprintf(f, "\\x%02x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void put_link(FILE *f, const mrt_link *l)
{
    char a[32], b[32];
    fprintf(f, "{latency_us: %s, bandwidth_GBps: %s}\n",
            num(l->latency_s * 1e6, a), num(l->bandwidth_Bps / 1e9, b));
}

static void put_profile(FILE *f, const mrt_profile *p, const char *measured)
{
    char a[32], b[32];
    fputs(measured ? "# meshrt machine profile, written by `meshrt "
                     "calibrate`\n"
                   : "# meshrt machine profile (docs/calibration.md)\n",
          f);
    fputs("source: ", f);
    put_quoted(f, p->source);
    fputs("\nkernel: {", f);
    if (p->kernel[0]) {
        fputs("family: ", f);
        put_quoted(f, p->kernel);
        fputs(", ", f);
    }
    fprintf(f, "gflops_float32: %s, gflops_float64: %s}\n",
            num(p->gemm_flops[MRT_F32] / 1e9, a),
            num(p->gemm_flops[MRT_F64] / 1e9, b));
    fprintf(f, "reduce_gflops: %s\ncopy_GBps: %s\ndefault: ",
            num(p->reduce_flops / 1e9, a), num(p->copy_Bps / 1e9, b));
    put_link(f, &p->fallback);
    fputs(p->naxes ? "axes:\n" : "axes: {}\n", f);
    for (int i = 0; i < p->naxes; i++) {
        fprintf(f, "  %s: ", p->axis[i]);
        put_link(f, &p->link[i]);
    }
    if (p->ranks_per_node > 0) {
        fprintf(f, "nodes:\n  ranks_per_node: %lld\n  intra: ",
                (long long)p->ranks_per_node);
        put_link(f, &p->intra);
        fputs("  inter: ", f);
        put_link(f, &p->inter);
    }
    mrt_profile_put_rows(f, p);
    if (p->device_memory > 0)
        fprintf(f, "device_memory: %lld\n", (long long)p->device_memory);
    if (!measured)
        return;
    fputs("measured:            # informational, ignored by the loader\n", f);
    for (const char *line = measured; *line;) {
        size_t n = strcspn(line, "\n");
        fprintf(f, "  %.*s\n", (int)n, line);
        line += n + (line[n] == '\n');
    }
}

/* Makes folder dir and its missing parents. */
static int make_folders(const char *dir)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *s = buf + 1;; s++) {
        if (*s != '/' && *s)
            continue;
        char c = *s;
        *s = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return -1;
        if (!(*s = c))
            return 0;
    }
}

struct profile_out {
    const mrt_profile *p;
    const char *measured;
};

static void put_profile_out(FILE *f, const void *ctx)
{
    const struct profile_out *o = ctx;
    put_profile(f, o->p, o->measured);
}

mrt_status mrt_profile_save_measured(const char *path, const mrt_profile *p,
                                     const char *measured, mrt_error *err)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 0, path);
    if (dir[0] && make_folders(dir) != 0)
        return mrt_error_set(err, mrt_output_status(errno), path, no_mark,
                             "cannot create the folder %s: %s", dir,
                             strerror(errno));
    struct profile_out out = {p, measured};
    return mrt_write_atomically(path, "the profile", put_profile_out, &out,
                                err);
}

mrt_status mrt_profile_save(const char *path, const mrt_profile *p,
                            mrt_error *err)
{
    return mrt_profile_save_measured(path, p, NULL, err);
}
