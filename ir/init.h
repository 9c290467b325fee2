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

#endif
