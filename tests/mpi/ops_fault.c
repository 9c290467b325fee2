/*
 * ops_fault.c — plants a wrong gradient in a loaded program: the one
 * place of mpi_ops that reaches into the IR (ir/spec.h).
 *
 * Verification recomputes the whole program unsharded on rank 0, backward
 * included, so a wrong backward op is "verified" against the same wrong
 * reference; only the finite differences of the loss can catch it.  No
 * public call can make the reverse mode derive a wrong gradient (that is
 * the point of deriving it), so the negative control edits the derived
 * program here, after loading and before planning.
 */
#include "ops_fault.h"

#include "spec.h"

int ops_fault_break_relu_grad(mrt_spec *spec)
{
    for (int i = 0; i < spec->nops; i++) {
        mrt_spec_op *op = &spec->op[i];
        if (op->phase == MRT_PHASE_BACKWARD && op->kind == MRT_OP_MAP &&
            op->fn == MRT_MAP_RELU_GRAD) {
            op->fn = MRT_MAP_COPY;
            return 0;
        }
    }
    return -1;
}
