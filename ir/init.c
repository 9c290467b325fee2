/*
 * init.c — values of initialised tensors as pure functions of the global
 * element index, so that every mesh, layout and rank count generates the
 * same global tensor without communicating.
 *
 * The default seed is the 64-bit FNV-1a hash of the tensor's name.  The
 * random value of element i is output number i + 1 of splitmix64 seeded
 * with `seed` (Steele, Lea and Flood, "Fast splittable pseudorandom number
 * generators", 2014), which needs no state: state_i = seed + (i + 1) * G,
 * value = mix(state_i).  Its top 53 bits k give k * 2^-52 - 1, uniform on
 * an even grid of 2^53 points in [-1, 1) and exact in a double.  Only
 * 64-bit unsigned arithmetic is used, so results are bit-identical on
 * every platform (numpy can reproduce them with np.uint64).
 *
 * Dropout masks draw from the same generator with the key
 * mix(seed ^ DROPOUT_SALT): u = top 53 bits * 2^-53 in [0, 1), and an
 * element is kept when u >= p, so the mask is a function of (seed, global
 * index) alone -- never of the rank, the mesh or the layout.  Causal
 * masks are a function of the two global coordinates.
 */
#include "init.h"

#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x00000100000001b3ull
#define SPLITMIX_GAMMA 0x9e3779b97f4a7c15ull
#define DROPOUT_SALT 0x64726f706f757421ull /* "dropout!" */

uint64_t mrt_init_seed_from_name(const char *name)
{
    uint64_t h = FNV_OFFSET;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        h ^= *p;
        h *= FNV_PRIME;
    }
    return h;
}

static uint64_t splitmix64_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double mrt_init_random_value(uint64_t seed, uint64_t index)
{
    uint64_t z = splitmix64_mix(seed + (index + 1) * SPLITMIX_GAMMA);
    /* 53-bit integer times 2^-52 lies in [0, 2); subtracting 1 is exact. */
    return (double)(z >> 11) * 0x1p-52 - 1.0;
}

int mrt_init_dropout_keep(uint64_t seed, uint64_t index, double p)
{
    uint64_t key = splitmix64_mix(seed ^ DROPOUT_SALT);
    uint64_t z = splitmix64_mix(key + (index + 1) * SPLITMIX_GAMMA);
    return (double)(z >> 11) * 0x1p-53 >= p;
}

double mrt_init_causal_value(int64_t q, int64_t k)
{
    return k <= q ? 1.0 : 0.0;
}
