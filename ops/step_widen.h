/*
 * step_widen.h — the 16-bit (and mixed-type) operands of a compute step:
 * the type its kernel computes in, which operands are converted into
 * the workspace around the kernel, and the bytes that takes.
 *
 * The kernels compute in float32 or float64.  A compute step (einsum,
 * map, reduce_max, gather, scatter_add) computes in float64 when any
 * of its floating operands is float64, else in float32; each operand of
 * another floating type (bfloat16, float16, or float32 in a float64
 * step) is widened into the step's workspace first, and a result of
 * another type is computed there and narrowed (rounded to nearest even)
 * into its value.  Index operands (int32) are read as they are.  The
 * planner counts these bytes in the step's workspace (plan_finish.c)
 * and the runtime lays them out the same way (runtime/widen.c), so the
 * plan's peak memory holds them.
 */
#ifndef MRT_STEP_WIDEN_H
#define MRT_STEP_WIDEN_H

#include <stdint.h>

#include "plan.h"

/* The operands of a step, in the order their copies sit in the
 * workspace: in, in2, out (-1: none). */
#define MRT_WIDEN_OPERANDS 3

/* The type step s's kernel computes in (float32 or float64); for a
 * step that computes nothing, its input's type. */
mrt_dtype mrt_step_compute_dtype(const mrt_plan *p, const mrt_step *s);
/* 1 if operand value v of step s is converted around its kernel. */
int mrt_step_widens(const mrt_plan *p, const mrt_step *s, int v);
/* Bytes of the converted copies of the operands of step s, each of
 * count elements of the compute type, 64-byte aligned; 0 when none.
 * The kernel's own workspace follows them. */
int64_t mrt_step_widen_bytes(const mrt_plan *p, const mrt_step *s);
/* Bytes (64-byte aligned) of a copy of n elements of type t. */
static inline int64_t mrt_widen_round(int64_t n, mrt_dtype t)
{
    return (n * mrt_dtype_size(t) + 63) / 64 * 64;
}

#endif
