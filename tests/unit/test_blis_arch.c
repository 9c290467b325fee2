/*
 * test_blis_arch.c — the choice of BLIS kernel family (kernels/blis_arch.c):
 * the feature table maps CPUs to the families intended, meshrt steps in
 * only when BLIS's own pick is of a lower tier, and a BLIS_ARCH_TYPE the
 * user set is never overridden.
 *
 * What happens in a process (mrt_blis_select, once per process, before
 * BLIS starts) is tested in a child forked for the purpose, so each case
 * starts with BLIS untouched whatever Check's fork mode.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "blis_arch.h"

#define AVX512                                                                 \
    (MRT_CPU_AVX512F | MRT_CPU_AVX512DQ | MRT_CPU_AVX512BW | MRT_CPU_AVX512VL)
#define AVX2FMA (MRT_CPU_SSSE3 | MRT_CPU_AVX | MRT_CPU_AVX2 | MRT_CPU_FMA)

static mrt_blis_choice decide(mrt_cpu_vendor v, unsigned f, const char *user,
                              const char *own)
{
    mrt_cpu cpu = {v, f};
    mrt_blis_choice c;
    mrt_blis_decide(&cpu, user, own, &c);
    return c;
}

static const char *id_of(const char *family)
{
    static char buf[16];
    snprintf(buf, sizeof buf, "%d", mrt_blis_family_id(family));
    return buf;
}

START_TEST(table_maps_features)
{
    static const struct {
        mrt_cpu_vendor vendor;
        unsigned features;
        const char *family;
    } cases[] = {
        {MRT_CPU_AMD, AVX512 | AVX2FMA, "skx"},   /* Zen 4 */
        {MRT_CPU_INTEL, AVX512 | AVX2FMA, "skx"}, /* Skylake-X and later */
        {MRT_CPU_OTHER, AVX512 | AVX2FMA, "skx"},
        /* AVX-512F alone (no DQ/BW/VL: Knights Landing-like) is not
         * enough for skx's kernels. */
        {MRT_CPU_INTEL, MRT_CPU_AVX512F | AVX2FMA, "haswell"},
        {MRT_CPU_AMD, AVX512 & ~MRT_CPU_AVX512VL, "generic"},
        {MRT_CPU_AMD, AVX2FMA, "zen3"},
        {MRT_CPU_INTEL, AVX2FMA, "haswell"},
        {MRT_CPU_OTHER, AVX2FMA, "haswell"},
        {MRT_CPU_AMD, AVX2FMA & ~MRT_CPU_FMA, "sandybridge"},
        {MRT_CPU_INTEL, MRT_CPU_SSSE3 | MRT_CPU_AVX, "sandybridge"},
        {MRT_CPU_INTEL, MRT_CPU_SSSE3, "generic"},
        {MRT_CPU_OTHER, 0, "generic"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mrt_cpu cpu = {cases[i].vendor, cases[i].features};
        ck_assert_msg(strcmp(mrt_blis_best_family(&cpu), cases[i].family) == 0,
                      "case %zu: got %s, want %s", i,
                      mrt_blis_best_family(&cpu), cases[i].family);
    }
}
END_TEST

/* Every family meshrt may name is one this BLIS has, under that name. */
START_TEST(families_known_to_blis)
{
    static const char *const names[] = {
        "skx", "zen3", "zen2", "zen", "haswell", "sandybridge", "generic"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        ck_assert_int_ge(mrt_blis_family_id(names[i]), 0);
        ck_assert_int_ge(mrt_blis_family_tier(names[i]), 0);
    }
    ck_assert_int_gt(mrt_blis_family_tier("skx"), mrt_blis_family_tier("zen3"));
    ck_assert_int_eq(mrt_blis_family_tier("zen3"),
                     mrt_blis_family_tier("haswell"));
    ck_assert_int_gt(mrt_blis_family_tier("haswell"),
                     mrt_blis_family_tier("generic"));
    ck_assert_int_eq(mrt_blis_family_id("nosuch"), -1);
    ck_assert_int_eq(mrt_blis_family_tier("nosuch"), -1);
}
END_TEST

START_TEST(steps_in_only_when_better)
{
    /* BLIS fell back: meshrt sets the family, as a number. */
    mrt_blis_choice c = decide(MRT_CPU_AMD, AVX512 | AVX2FMA, NULL, "generic");
    ck_assert_int_eq(c.source, MRT_BLIS_BY_MESHRT);
    ck_assert_str_eq(c.family, "skx");
    ck_assert_str_eq(c.env, id_of("skx"));
    /* A lower tier than the CPU allows. */
    c = decide(MRT_CPU_AMD, AVX512 | AVX2FMA, NULL, "zen3");
    ck_assert_int_eq(c.source, MRT_BLIS_BY_MESHRT);
    ck_assert_str_eq(c.env, id_of("skx"));
    c = decide(MRT_CPU_INTEL, AVX2FMA, NULL, "sandybridge");
    ck_assert_int_eq(c.source, MRT_BLIS_BY_MESHRT);
    ck_assert_str_eq(c.family, "haswell");
    /* Same tier: BLIS's finer choice stands (zen2's blocking on a Zen 2,
     * skx on a Skylake-X). */
    c = decide(MRT_CPU_AMD, AVX2FMA, NULL, "zen2");
    ck_assert_int_eq(c.source, MRT_BLIS_BY_BLIS);
    ck_assert_str_eq(c.env, "");
    ck_assert_str_eq(c.family, "zen2");
    c = decide(MRT_CPU_INTEL, AVX512 | AVX2FMA, NULL, "skx");
    ck_assert_int_eq(c.source, MRT_BLIS_BY_BLIS);
    ck_assert_str_eq(c.env, "");
    /* Nothing better to offer. */
    c = decide(MRT_CPU_OTHER, 0, NULL, "generic");
    ck_assert_int_eq(c.source, MRT_BLIS_BY_BLIS);
    ck_assert_str_eq(c.env, "");
    /* BLIS's own pick unknown (the probe failed): the table's, unless
     * it is generic anyway. */
    c = decide(MRT_CPU_AMD, AVX2FMA, NULL, NULL);
    ck_assert_int_eq(c.source, MRT_BLIS_BY_MESHRT);
    ck_assert_str_eq(c.env, id_of("zen3"));
    c = decide(MRT_CPU_OTHER, 0, NULL, NULL);
    ck_assert_str_eq(c.env, "");
}
END_TEST

START_TEST(user_value_is_kept)
{
    /* Whatever the CPU and BLIS's own pick, the user's value stands. */
    static const char *const numbers[] = {"0",  "3", "25",    "99",
                                          "-1", "",  "bogus", "zen9"};
    for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++) {
        mrt_blis_choice c = decide(MRT_CPU_AMD, AVX512 | AVX2FMA, numbers[i],
                                   "generic");
        ck_assert_int_eq(c.source, MRT_BLIS_BY_USER);
        ck_assert_msg(c.env[0] == 0, "'%s' was rewritten to '%s'", numbers[i],
                      c.env);
    }
    /* A name is what BLIS 0.9 misreads (as 0, skx): it becomes the
     * number of the family the user named, never another family. */
    static const char *const names[] = {"haswell", "zen3", "GENERIC", "skx"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        mrt_blis_choice c = decide(MRT_CPU_AMD, AVX2FMA, names[i], "zen3");
        ck_assert_int_eq(c.source, MRT_BLIS_BY_USER);
        ck_assert_int_eq(atoi(c.env), mrt_blis_family_id(names[i]));
        ck_assert_msg(strcasecmp(c.family, names[i]) == 0, "%s -> %s", names[i],
                      c.family);
    }
}
END_TEST

/* ---- in a process ---------------------------------------------------- */

/* Runs check(arg) in a fresh child (BLIS not started, mrt_blis_select
 * not yet called) with BLIS_ARCH_TYPE = env (NULL: unset); true if the
 * child returned 0. */
static int in_child(const char *env, int (*check)(const char *),
                    const char *arg)
{
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (env)
            setenv("BLIS_ARCH_TYPE", env, 1);
        else
            unsetenv("BLIS_ARCH_TYPE");
        _exit(check(arg));
    }
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* The user's variable survives select unchanged (numbers) and BLIS runs
 * the family it names. */
static int user_kept(const char *want)
{
    const char *before = getenv("BLIS_ARCH_TYPE");
    char copy[32];
    snprintf(copy, sizeof copy, "%s", before);
    mrt_blis_select();
    char d[128];
    mrt_blis_describe(d, sizeof d);
    int ok = mrt_blis_family_source() == MRT_BLIS_BY_USER &&
             strcmp(mrt_blis_family(), want) == 0 && strstr(d, copy) != NULL;
    /* A number is not touched; a name only becomes its own number. */
    const char *after = getenv("BLIS_ARCH_TYPE");
    if (copy[0] >= '0' && copy[0] <= '9')
        ok = ok && strcmp(after, copy) == 0;
    else
        ok = ok && atoi(after) == mrt_blis_family_id(want);
    if (!ok)
        fprintf(stderr, "user %s: family %s, env %s, %s\n", copy,
                mrt_blis_family(), after, d);
    return !ok;
}

START_TEST(user_env_in_process)
{
    ck_assert(in_child("3", user_kept, "haswell"));
    ck_assert(in_child("haswell", user_kept, "haswell"));
    ck_assert(in_child("generic", user_kept, "generic"));
    /* skx on a CPU without AVX-512 would fault in a kernel, but asking
     * BLIS which family it runs is safe: the user's choice still holds. */
    ck_assert(in_child("0", user_kept, "skx"));
}
END_TEST

/* Unset: BLIS runs a family at least as good as the table's for this
 * CPU, and select's report matches BLIS's. */
static int default_ok(const char *unused)
{
    mrt_blis_select();
    mrt_cpu cpu = mrt_cpu_detect();
    const char *best = mrt_blis_best_family(&cpu), *fam = mrt_blis_family();
    int ok = mrt_blis_family_tier(fam) >= mrt_blis_family_tier(best) &&
             mrt_blis_family_source() != MRT_BLIS_BY_USER;
    if (mrt_blis_family_source() == MRT_BLIS_BY_MESHRT)
        ok = ok && strcmp(fam, best) == 0 &&
             atoi(getenv("BLIS_ARCH_TYPE")) == mrt_blis_family_id(best);
    else
        ok = ok && getenv("BLIS_ARCH_TYPE") == NULL &&
             strcmp(fam, mrt_blis_own_family()) == 0;
    char d[128];
    printf("this CPU: %s (table: %s)\n", mrt_blis_describe(d, sizeof d), best);
    fflush(stdout); /* the child leaves by _exit */
    return !ok;
}

START_TEST(default_in_process)
{
    ck_assert(in_child(NULL, default_ok, NULL));
}
END_TEST

/* Detection agrees with the kernel's view of the CPU, where it has one. */
START_TEST(detect_matches_cpuinfo)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[8192];
    int found = 0;
    while (!found && fgets(line, sizeof line, f))
        found = strncmp(line, "flags", 5) == 0;
    fclose(f);
    if (!found)
        return;
    line[strcspn(line, "\n")] = ' '; /* every flag ends with a space */
    mrt_cpu cpu = mrt_cpu_detect();
    static const struct {
        const char *flag;
        unsigned bit;
    } flags[] = {{" avx2", MRT_CPU_AVX2},
                 {" fma", MRT_CPU_FMA},
                 {" avx512f", MRT_CPU_AVX512F},
                 {" avx512vl", MRT_CPU_AVX512VL}};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        char want[32];
        snprintf(want, sizeof want, "%s ", flags[i].flag);
        int listed = strstr(line, want) != NULL;
        ck_assert_msg(listed == !!(cpu.features & flags[i].bit),
                      "%s: cpuinfo %d, detected %d", flags[i].flag, listed,
                      !!(cpu.features & flags[i].bit));
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("blis_arch");
    TCase *tc = tcase_create("choice");
    tcase_add_test(tc, table_maps_features);
    tcase_add_test(tc, families_known_to_blis);
    tcase_add_test(tc, steps_in_only_when_better);
    tcase_add_test(tc, user_value_is_kept);
    tcase_add_test(tc, user_env_in_process);
    tcase_add_test(tc, default_in_process);
    tcase_add_test(tc, detect_matches_cpuinfo);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
