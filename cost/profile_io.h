/*
 * profile_io.h — the expert form of mrt_profile_save (profile.h), for
 * `meshrt calibrate`, which also records what it measured.  Kept apart
 * from profile.h only because that header belongs to the cost model;
 * both functions live in profile_io.c.
 */
#ifndef MRT_PROFILE_IO_H
#define MRT_PROFILE_IO_H

#include "profile.h"

/* mrt_profile_save, plus a `measured:` block: `measured` is NULL (no
 * block) or YAML text, one mapping entry per line at column 0, which is
 * written indented under `measured:`.  The loader skips that block, so
 * its content is informational only (the caller checks it is valid
 * YAML).  Borrowed: the function keeps neither pointer. */
mrt_status mrt_profile_save_measured(const char *path, const mrt_profile *p,
                                     const char *measured, mrt_error *err);

#endif
