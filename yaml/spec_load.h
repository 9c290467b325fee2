/*
 * spec_load.h — the YAML front end's entry points beyond meshrt.h's
 * loaders (yaml/spec_parse.c).  Only what sits above the IR (the
 * command line, tests, fuzz targets) includes it: the IR and the
 * planner never read YAML.
 */
#ifndef MRT_SPEC_LOAD_H
#define MRT_SPEC_LOAD_H

#include <stddef.h>

#include "meshrt.h"
#include "spec.h"

/* A layout for the input tensor `name` as if its entry had `layout:`
 * with these rules (by dim id: [ndims]; in place of the one it has), or
 * for the op whose `out:` is `name` as if the op had that `layout:`:
 * the search's per-tensor candidates are loaded so, and plan as the
 * pasted spec will. */
typedef struct mrt_spec_tensor_rules {
    const char *name;
    const mrt_rule *rules;
} mrt_spec_tensor_rules;
/* mrt_spec_load_ex (ov may be NULL), with the layouts of some inputs
 * and ops given (tl[0..ntl); a name the spec lacks changes nothing). */
mrt_status mrt_spec_load_layouts(const char *path,
                                 const mrt_spec_load_options *ov,
                                 const mrt_spec_tensor_rules *tl, int ntl,
                                 mrt_spec **out, mrt_error *err);

#endif
