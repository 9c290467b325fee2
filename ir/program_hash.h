/*
 * program_hash.h — a fingerprint of the program a spec describes, so a
 * plan can say which program it was made from and a runner can refuse a
 * spec of another one.
 */
#ifndef MRT_PROGRAM_HASH_H
#define MRT_PROGRAM_HASH_H

#include <stdint.h>

#include "spec.h"

/* A 64-bit FNV-1a hash of what the program computes: its dtype; every
 * tensor's name, dims (by name) and sizes, and whether an op makes it;
 * every op's kind, inputs, output, function and constant, renamed dims
 * and phase; the outputs; and `train:`'s loss and parameters.  Not the
 * layouts (how to compute it: a plan's choice, or a `layouts:`
 * alternative's) nor the inputs' `init:` (the data, which the runner
 * reads from the spec) nor the marks: the same program loaded again, or
 * under another alternative, has the same hash. */
uint64_t mrt_program_hash(const mrt_spec *s);

#endif
