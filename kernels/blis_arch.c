/*
 * blis_arch.c — choosing BLIS's kernel family for this CPU (blis_arch.h).
 *
 * Two tables, in the BLIS style of keeping hardware choices in data:
 * `families` gives each x86 family BLIS ships the instruction-set tier
 * its kernels need; `picks` maps CPU features (and vendor) to the family
 * meshrt wants, first match wins.  The AVX2 families (haswell, zen,
 * zen2, zen3) share their micro-kernels and differ in cache blocking;
 * measured on a Zen 3 they are within noise of each other
 * (docs/performance.md), so AMD parts get zen3 and others haswell.
 *
 * BLIS fixes its family at its first call, so what BLIS would pick on
 * its own is learnt in a short-lived child process (fork, ask, _exit):
 * the parent's BLIS stays untouched until BLIS_ARCH_TYPE is set.
 */
#include "blis_arch.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <blis.h>

#define AVX512                                                                 \
    (MRT_CPU_AVX512F | MRT_CPU_AVX512DQ | MRT_CPU_AVX512BW | MRT_CPU_AVX512VL)
#define AVX2FMA (MRT_CPU_AVX | MRT_CPU_AVX2 | MRT_CPU_FMA)

/* Every x86 family of BLIS 0.9, with the tier of its kernels. */
static const struct {
    const char *name;
    int tier;
} families[] = {
    {"skx", 4},        {"knl", 4},       {"zen3", 3},        {"zen2", 3},
    {"zen", 3},        {"haswell", 3},   {"excavator", 2},   {"steamroller", 2},
    {"piledriver", 2}, {"bulldozer", 2}, {"sandybridge", 2}, {"penryn", 1},
    {"generic", 0},
};

/* CPU features -> family, first match wins. */
static const struct {
    unsigned needs;
    mrt_cpu_vendor vendor; /* MRT_CPU_VENDOR_COUNT: any */
    const char *family;
} picks[] = {
    {AVX512 | AVX2FMA, MRT_CPU_VENDOR_COUNT, "skx"},
    {AVX2FMA, MRT_CPU_AMD, "zen3"},
    {AVX2FMA, MRT_CPU_VENDOR_COUNT, "haswell"},
    {MRT_CPU_AVX, MRT_CPU_VENDOR_COUNT, "sandybridge"},
    {0, MRT_CPU_VENDOR_COUNT, "generic"},
};

static const char *const source_names[MRT_BLIS_SOURCE_COUNT] = {
    [MRT_BLIS_BY_BLIS] = "BLIS's own",
    [MRT_BLIS_BY_MESHRT] = "chosen by meshrt",
    [MRT_BLIS_BY_USER] = "BLIS_ARCH_TYPE",
};
_Static_assert(sizeof source_names / sizeof source_names[0] ==
                   MRT_BLIS_SOURCE_COUNT,
               "one name per source");

/* ---- the tables ------------------------------------------------------ */

mrt_cpu mrt_cpu_detect(void)
{
    mrt_cpu c = {MRT_CPU_OTHER, 0};
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_is("intel"))
        c.vendor = MRT_CPU_INTEL;
    else if (__builtin_cpu_is("amd"))
        c.vendor = MRT_CPU_AMD;
    static const struct {
        const char *name;
        unsigned bit;
    } flags[] = {
        {"ssse3", MRT_CPU_SSSE3},       {"avx", MRT_CPU_AVX},
        {"fma", MRT_CPU_FMA},           {"fma4", MRT_CPU_FMA4},
        {"avx2", MRT_CPU_AVX2},         {"avx512f", MRT_CPU_AVX512F},
        {"avx512dq", MRT_CPU_AVX512DQ}, {"avx512bw", MRT_CPU_AVX512BW},
        {"avx512vl", MRT_CPU_AVX512VL},
    };
    /* __builtin_cpu_supports wants a literal: one call per flag. */
    int have[] = {
        __builtin_cpu_supports("ssse3"),    __builtin_cpu_supports("avx"),
        __builtin_cpu_supports("fma"),      __builtin_cpu_supports("fma4"),
        __builtin_cpu_supports("avx2"),     __builtin_cpu_supports("avx512f"),
        __builtin_cpu_supports("avx512dq"), __builtin_cpu_supports("avx512bw"),
        __builtin_cpu_supports("avx512vl"),
    };
    _Static_assert(sizeof have / sizeof have[0] ==
                       sizeof flags / sizeof flags[0],
                   "one test per flag");
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        if (have[i])
            c.features |= flags[i].bit;
#endif
    return c;
}

const char *mrt_blis_best_family(const mrt_cpu *cpu)
{
    for (size_t i = 0; i < sizeof picks / sizeof picks[0]; i++)
        if ((cpu->features & picks[i].needs) == picks[i].needs &&
            (picks[i].vendor == MRT_CPU_VENDOR_COUNT ||
             picks[i].vendor == cpu->vendor))
            return picks[i].family;
    return "generic";
}

int mrt_blis_family_tier(const char *family)
{
    for (size_t i = 0; family && i < sizeof families / sizeof families[0]; i++)
        if (strcmp(families[i].name, family) == 0)
            return families[i].tier;
    return -1;
}

int mrt_blis_family_id(const char *family)
{
    for (int id = 0; family && id < BLIS_NUM_ARCHS; id++) {
        const char *s = bli_arch_string((arch_t)id);
        if (s && strcasecmp(s, family) == 0)
            return id;
    }
    return -1;
}

/* ---- the decision ---------------------------------------------------- */

static int is_number(const char *s)
{
    char *end;
    errno = 0;
    (void)strtol(s, &end, 10);
    return *s && !*end && errno == 0;
}

void mrt_blis_decide(const mrt_cpu *cpu, const char *user, const char *blis_own,
                     mrt_blis_choice *out)
{
    memset(out, 0, sizeof *out);
    if (user) {
        out->source = MRT_BLIS_BY_USER;
        int id = is_number(user) ? -1 : mrt_blis_family_id(user);
        if (id >= 0) {
            out->family = bli_arch_string((arch_t)id);
            snprintf(out->env, sizeof out->env, "%d", id);
        } else if (is_number(user) && atoi(user) >= 0 &&
                   atoi(user) < BLIS_NUM_ARCHS) {
            out->family = bli_arch_string((arch_t)atoi(user));
        }
        return;
    }
    const char *best = mrt_blis_best_family(cpu);
    int id = mrt_blis_family_id(best);
    int better = blis_own ? mrt_blis_family_tier(best) >
                                mrt_blis_family_tier(blis_own)
                          : strcmp(best, "generic") != 0;
    if (better && id >= 0) {
        out->source = MRT_BLIS_BY_MESHRT;
        out->family = best;
        snprintf(out->env, sizeof out->env, "%d", id);
    } else {
        out->source = MRT_BLIS_BY_BLIS;
        out->family = blis_own;
    }
}

/* ---- this process ---------------------------------------------------- */

static struct {
    int done;
    mrt_blis_source source;
    char own[32];         /* BLIS's own family, when probed */
    char user[32];        /* the user's BLIS_ARCH_TYPE as they wrote it */
    const char *expected; /* the family meshrt set, when it did */
} state;

/* The family BLIS picks on its own, asked in a child so that this
 * process's BLIS is not yet fixed to it; NULL if the child failed. */
static const char *probe_blis_own(char *buf, size_t size)
{
    int fd[2];
    if (pipe(fd) != 0)
        return NULL;
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        int id = (int)bli_arch_query_id();
        ssize_t n = write(fd[1], &id, sizeof id);
        _exit(n == (ssize_t)sizeof id ? 0 : 1);
    }
    close(fd[1]);
    int id = -1;
    ssize_t n = -1;
    if (pid > 0) {
        do
            n = read(fd[0], &id, sizeof id);
        while (n < 0 && errno == EINTR);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    close(fd[0]);
    if (n != (ssize_t)sizeof id || id < 0 || id >= BLIS_NUM_ARCHS)
        return NULL;
    snprintf(buf, size, "%s", bli_arch_string((arch_t)id));
    return buf;
}

void mrt_blis_select(void)
{
    if (state.done)
        return;
    state.done = 1;
    const char *user = getenv("BLIS_ARCH_TYPE");
    if (user)
        snprintf(state.user, sizeof state.user, "%s", user);
    const char *own = user ? NULL : probe_blis_own(state.own, sizeof state.own);
    mrt_cpu cpu = mrt_cpu_detect();
    mrt_blis_choice c;
    mrt_blis_decide(&cpu, user, own, &c);
    if (c.env[0])
        setenv("BLIS_ARCH_TYPE", c.env, 1);
    state.source = c.source;
    state.expected = c.family;
}

/* BLIS 0.9 checks a BLIS_ARCH_TYPE against its table of contexts, which
 * only bli_init fills: asking for the id first would abort. */
const char *mrt_blis_family(void)
{
    bli_init();
    return bli_arch_string(bli_arch_query_id());
}

/* BLIS may have started before select (a program that called it first):
 * then what it runs is its own choice, whatever select set. */
mrt_blis_source mrt_blis_family_source(void)
{
    if (state.source == MRT_BLIS_BY_MESHRT &&
        strcmp(mrt_blis_family(), state.expected) != 0)
        return MRT_BLIS_BY_BLIS;
    return state.source;
}

const char *mrt_blis_own_family(void)
{
    return state.own;
}

char *mrt_blis_describe(char *buf, int size)
{
    const char *fam = mrt_blis_family();
    mrt_blis_source src = mrt_blis_family_source();
    switch (src) {
    case MRT_BLIS_BY_MESHRT:
        snprintf(buf, (size_t)size, "%s (%s; BLIS alone: %s)", fam,
                 source_names[src], state.own[0] ? state.own : "unknown");
        break;
    case MRT_BLIS_BY_USER:
        snprintf(buf, (size_t)size, "%s (BLIS_ARCH_TYPE=%s)", fam, state.user);
        break;
    default:
        snprintf(buf, (size_t)size, "%s (%s)", fam, source_names[src]);
        break;
    }
    return buf;
}
