/*
 * with_layouts.h — a program under layouts of its own for some of its
 * tensors, made in memory from the IR (with_layouts.c): what the
 * per-tensor layout search (search/search_tensors.c) plans for each
 * combination, whether the program came from a YAML file or from the C
 * builder.
 */
#ifndef MRT_WITH_LAYOUTS_H
#define MRT_WITH_LAYOUTS_H

#include "spec.h"

/* A layout given to one tensor. */
typedef struct mrt_spec_own_layout {
    int tensor;            /* an input, or an op's result
                              (mrt_spec_is_op_result) */
    const mrt_rule *rules; /* [ndims], by dim id: the rules of its
                              `layout:` (dims it lacks are ignored) */
} mrt_spec_own_layout;

/* 1 if tensor t is the result of one of the program's own ops (what an
 * op's `out:` names), not a tensor an op makes inside, an input or a
 * tensor of the backward program. */
int mrt_spec_is_op_result(const mrt_spec *s, int t);

/* A copy of s in which each tensor of own[0..n) is laid out by its
 * rules, in place of what s gives it, exactly as if they were written in
 * the spec: an input's in its entry's `layout:`, an op result's in its
 * op's `layout:` (the tensors the op makes inside take it too, on the
 * dims they have).  Every other tensor keeps its layout; the backward
 * program follows the new layouts (each gradient piece takes the layout
 * of the tensor it is a piece of, each update `<w>:next` w's) and the
 * spec's global rules stay.  No file is read.  Fails for a tensor that
 * is neither (MRT_E_USAGE), a layout that splits an axis twice
 * (MRT_E_SPEC), or out of memory.  The copy has no `layouts:`; the
 * caller destroys *out. */
mrt_status mrt_spec_with_layouts(const mrt_spec *s,
                                 const mrt_spec_own_layout *own, int n,
                                 mrt_spec **out, mrt_error *err);

#endif
