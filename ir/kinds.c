/*
 * kinds.c — the op kinds a program may name: for each, its name (the
 * `op:` of a YAML spec), how many inputs it takes, and which parameters
 * it may and must have.  Both front ends check an op against this table;
 * expand.c turns each kind into primitive ops.
 */
#include "ir.h"

const mrt_user_kind_info mrt_user_kinds[MRT_U_KIND_COUNT] = {
    [MRT_U_EINSUM] = {"einsum", 1, 2, MRT_K_SHAPE, MRT_K_SHAPE},
    [MRT_U_ADD] = {"add", 2, 2, MRT_K_SHAPE, 0},
    [MRT_U_SUB] = {"sub", 2, 2, MRT_K_SHAPE, 0},
    [MRT_U_MUL] = {"mul", 2, 2, MRT_K_SHAPE, 0},
    [MRT_U_DIV] = {"div", 2, 2, MRT_K_SHAPE, 0},
    [MRT_U_RELU] = {"relu", 1, 1, MRT_K_SHAPE, 0},
    [MRT_U_GELU] = {"gelu", 1, 1, MRT_K_SHAPE, 0},
    [MRT_U_TANH] = {"tanh", 1, 1, MRT_K_SHAPE, 0},
    [MRT_U_EXP] = {"exp", 1, 1, MRT_K_SHAPE, 0},
    [MRT_U_LOG] = {"log", 1, 1, MRT_K_SHAPE, 0},
    [MRT_U_NEG] = {"neg", 1, 1, MRT_K_SHAPE, 0},
    [MRT_U_RSQRT] = {"rsqrt", 1, 1, MRT_K_SHAPE, 0},
    [MRT_U_SQUARE] = {"square", 1, 1, MRT_K_SHAPE, 0},
    [MRT_U_SCALE] = {"scale", 1, 1, MRT_K_SHAPE | MRT_K_BY, MRT_K_BY},
    [MRT_U_REDUCE_SUM] = {"reduce_sum", 1, 1, MRT_K_SHAPE | MRT_K_DIMS, 0},
    [MRT_U_REDUCE_MAX] = {"reduce_max", 1, 1, MRT_K_SHAPE | MRT_K_DIMS, 0},
    [MRT_U_REDUCE_MEAN] = {"reduce_mean", 1, 1, MRT_K_SHAPE | MRT_K_DIMS, 0},
    [MRT_U_SOFTMAX] = {"softmax", 1, 1, MRT_K_SHAPE | MRT_K_DIM | MRT_K_CAUSAL,
                       MRT_K_DIM},
    [MRT_U_LAYER_NORM] = {"layer_norm", 1, 1,
                          MRT_K_SHAPE | MRT_K_DIM | MRT_K_EPS, MRT_K_DIM},
    [MRT_U_RENAME] = {"rename", 1, 1, MRT_K_SHAPE | MRT_K_FROM | MRT_K_TO,
                      MRT_K_FROM | MRT_K_TO},
    [MRT_U_RELAYOUT] = {"relayout", 1, 1, MRT_K_SHAPE, 0},
    [MRT_U_MSE] = {"mse", 2, 2, 0, 0},
    [MRT_U_SOFTMAX_CE] = {"softmax_cross_entropy", 2, 2, MRT_K_DIM, MRT_K_DIM},
    [MRT_U_EMBEDDING] = {"embedding", 2, 2, MRT_K_SHAPE | MRT_K_DIM, MRT_K_DIM},
    [MRT_U_DROPOUT] = {"dropout", 1, 1, MRT_K_SHAPE | MRT_K_P | MRT_K_SEED,
                       MRT_K_P},
};
_Static_assert(sizeof mrt_user_kinds / sizeof mrt_user_kinds[0] ==
                   MRT_U_KIND_COUNT,
               "one entry per spec op kind");
