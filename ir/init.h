/*
 * init.h — the values of initialised tensors, as functions of the global
 * element index, so that every mesh, layout and rank count sees the same
 * global tensor.
 */
#ifndef MRT_INIT_H
#define MRT_INIT_H

#include <stdint.h>

/* Default seed of a tensor: 64-bit FNV-1a of its name. */
uint64_t mrt_init_seed_from_name(const char *name);
/* Element `index` (row-major flat index into the global tensor) of a
 * random tensor: uniform in [-1, 1), from a counter-based generator
 * (splitmix64 of seed and index).  Deterministic, platform independent. */
double mrt_init_random_value(uint64_t seed, uint64_t index);
/* 1 if element `index` (row-major flat index into the global tensor) of
 * a dropout mask keyed by `seed` is kept, 0 if it is dropped: u = a
 * uniform draw in [0, 1) from a stream apart from the random inits'
 * (the seed mixed with a constant first, so a dropout seeded 7 does not
 * follow a tensor of `random: 7`), kept when u >= p.  p = 0 keeps all. */
int mrt_init_dropout_keep(uint64_t seed, uint64_t index, double p);
/* Element (q, k) of a causal mask (q the index along its query dim, k
 * along its key dim): 1 where k <= q (attended), 0 where k > q. */
double mrt_init_causal_value(int64_t q, int64_t k);

#endif
