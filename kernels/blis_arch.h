/*
 * blis_arch.h — which BLIS kernel family (BLIS's "sub-configuration":
 * skx, zen3, haswell, generic, ...) every meshrt process runs with.
 *
 * BLIS picks a family once, at its first call, from the CPU's vendor,
 * family and model; a CPU it does not know (Debian's BLIS 0.9 and recent
 * AMD parts) silently gets the slow generic kernels.  mrt_blis_select,
 * run before that first call, picks the best family the CPU's features
 * allow (a table, blis_arch.c) and sets BLIS_ARCH_TYPE to it when BLIS's
 * own pick would be of a lower tier.  A BLIS_ARCH_TYPE the user set is
 * never overridden (see mrt_blis_decide for the one rewrite it may get).
 *
 * The decision (mrt_blis_decide) is pure, so tests can feed it any CPU;
 * mrt_blis_select is the impure shell around it.
 */
#ifndef MRT_BLIS_ARCH_H
#define MRT_BLIS_ARCH_H

/* CPU features that decide a family (usable ones: the OS saves the
 * registers, as the compiler's __builtin_cpu_supports checks). */
typedef enum mrt_cpu_feature {
    MRT_CPU_SSSE3 = 1u << 0,
    MRT_CPU_AVX = 1u << 1,
    MRT_CPU_FMA = 1u << 2, /* FMA3 */
    MRT_CPU_FMA4 = 1u << 3,
    MRT_CPU_AVX2 = 1u << 4,
    MRT_CPU_AVX512F = 1u << 5,
    MRT_CPU_AVX512DQ = 1u << 6,
    MRT_CPU_AVX512BW = 1u << 7,
    MRT_CPU_AVX512VL = 1u << 8,
} mrt_cpu_feature;

typedef enum mrt_cpu_vendor {
    MRT_CPU_OTHER = 0,
    MRT_CPU_INTEL,
    MRT_CPU_AMD,
    MRT_CPU_VENDOR_COUNT
} mrt_cpu_vendor;

typedef struct mrt_cpu {
    mrt_cpu_vendor vendor;
    unsigned features; /* mrt_cpu_feature bits */
} mrt_cpu;

/* Who chose the family in use. */
typedef enum mrt_blis_source {
    MRT_BLIS_BY_BLIS = 0, /* BLIS's own detection, left alone */
    MRT_BLIS_BY_MESHRT,   /* meshrt set BLIS_ARCH_TYPE */
    MRT_BLIS_BY_USER,     /* the user's BLIS_ARCH_TYPE */
    MRT_BLIS_SOURCE_COUNT
} mrt_blis_source;

typedef struct mrt_blis_choice {
    mrt_blis_source source;
    const char *family; /* the family meshrt expects BLIS to use: static
                           name, or NULL when the user's value is not one
                           meshrt can read (BLIS decides what it means) */
    char env[16];       /* the value to give BLIS_ARCH_TYPE; "" = leave
                           the environment as it is */
} mrt_blis_choice;

/* The features and vendor of the CPU this process runs on. */
mrt_cpu mrt_cpu_detect(void);
/* The best family for cpu by meshrt's table (static name). */
const char *mrt_blis_best_family(const mrt_cpu *cpu);
/* Tier of a family's instruction set (generic 0 ... AVX-512 4); -1 for a
 * name meshrt does not know. */
int mrt_blis_family_tier(const char *family);
/* BLIS's numeric id for a family name (what BLIS_ARCH_TYPE must hold:
 * BLIS 0.9 reads it as a number, so "zen3" there means 0, skx), or -1. */
int mrt_blis_family_id(const char *family);

/* The decision, pure.  user is getenv("BLIS_ARCH_TYPE") (NULL: unset);
 * blis_own is the family BLIS picks on its own (NULL: unknown).
 *  - user set: source USER and nothing changes, except that a family
 *    name this BLIS would misread (it parses numbers only) is rewritten
 *    as that family's number, so BLIS runs what the user asked for;
 *  - else, when the table's family is of a higher tier than BLIS's own
 *    (or BLIS's own is unknown and differs): source MESHRT and env set;
 *  - else: source BLIS, nothing set. */
void mrt_blis_decide(const mrt_cpu *cpu, const char *user, const char *blis_own,
                     mrt_blis_choice *out);

/* Applies the decision for this process, once (later calls do nothing).
 * Call before the first BLIS call and before threads start: at the top
 * of main(), before MPI_Init.  mrt_kernel_init calls it too, for
 * programs that did not. */
void mrt_blis_select(void);
/* After mrt_blis_select: the family BLIS uses (bli_arch_string of
 * bli_arch_query_id, static), who chose it, and the family BLIS would
 * have picked on its own ("" when not probed: the user chose). */
const char *mrt_blis_family(void);
mrt_blis_source mrt_blis_family_source(void);
const char *mrt_blis_own_family(void);
/* "skx (chosen by meshrt; BLIS alone: generic)", "zen3 (BLIS's own)",
 * "haswell (BLIS_ARCH_TYPE=3)": written into buf, which is returned. */
char *mrt_blis_describe(char *buf, int size);

#endif
