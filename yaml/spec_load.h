/*
 * spec_load.h — the YAML front end's entry points beyond meshrt.h's
 * mrt_spec_load (yaml/spec_parse.c).  Only what sits above the IR (the
 * command line, tests, fuzz targets) includes it: the IR and the
 * planner never read YAML.
 */
#ifndef MRT_SPEC_LOAD_H
#define MRT_SPEC_LOAD_H

#include <stddef.h>

#include "meshrt.h"

/* mrt_spec_load over text[0..len) already in memory (no NUL needed):
 * path names the spec in errors and its folder resolves relative `file:`
 * paths, but is not read.  Same ownership and errors as mrt_spec_load. */
mrt_status mrt_spec_load_text(const char *path, const char *text, size_t len,
                              const char *mesh_override, mrt_spec **out,
                              mrt_error *err);

#endif
