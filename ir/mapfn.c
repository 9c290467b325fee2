/*
 * mapfn.c — names and properties of the elementwise functions.
 */
#include "mapfn.h"

static const struct {
    const char *name;
    int arity;
    unsigned char linear[2];
} fns[] = {
    [MRT_MAP_COPY] = {"copy", 1, {1, 0}},
    [MRT_MAP_ADD] = {"add", 2, {0, 0}},
    [MRT_MAP_SUB] = {"sub", 2, {0, 0}},
    [MRT_MAP_MUL] = {"mul", 2, {1, 1}},
    [MRT_MAP_DIV] = {"div", 2, {1, 0}},
    [MRT_MAP_RELU] = {"relu", 1, {0, 0}},
    [MRT_MAP_GELU] = {"gelu", 1, {0, 0}},
    [MRT_MAP_TANH] = {"tanh", 1, {0, 0}},
    [MRT_MAP_EXP] = {"exp", 1, {0, 0}},
    [MRT_MAP_LOG] = {"log", 1, {0, 0}},
    [MRT_MAP_NEG] = {"neg", 1, {1, 0}},
    [MRT_MAP_RSQRT] = {"rsqrt", 1, {0, 0}},
    [MRT_MAP_SQUARE] = {"square", 1, {0, 0}},
    [MRT_MAP_SCALE] = {"scale", 1, {1, 0}},
    [MRT_MAP_SHIFT] = {"shift", 1, {0, 0}},
    [MRT_MAP_AXPY] = {"axpy", 2, {0, 0}},
    [MRT_MAP_RELU_GRAD] = {"relu_grad", 2, {1, 0}},
    [MRT_MAP_GELU_GRAD] = {"gelu_grad", 2, {1, 0}},
    [MRT_MAP_TANH_GRAD] = {"tanh_grad", 2, {1, 0}},
    [MRT_MAP_RSQRT_GRAD] = {"rsqrt_grad", 2, {1, 0}},
    [MRT_MAP_SQUARE_GRAD] = {"square_grad", 2, {1, 1}},
    [MRT_MAP_EQ] = {"eq", 2, {0, 0}},
    [MRT_MAP_ONE_HOT] = {"one_hot", 1, {0, 0}},
    [MRT_MAP_MASK_FILL] = {"mask_fill", 2, {0, 0}},
    [MRT_MAP_DROPOUT] = {"dropout", 2, {1, 0}},
    [MRT_MAP_LERP] = {"lerp", 2, {0, 0}},
    [MRT_MAP_LERP_SQ] = {"lerp_sq", 2, {0, 0}},
    [MRT_MAP_SQRT_ADD] = {"sqrt_add", 2, {0, 0}},
    [MRT_MAP_CAST] = {"cast", 1, {0, 0}}, /* (no pending sum rides through:
                                             it is reduced in its own type) */
};
_Static_assert(sizeof fns / sizeof fns[0] == MRT_MAP_FN_COUNT,
               "one entry per map function");

int mrt_map_arity(mrt_map_fn f)
{
    return fns[f].arity;
}
const char *mrt_map_name(mrt_map_fn f)
{
    return fns[f].name;
}
int mrt_map_linear_in(mrt_map_fn f, int k)
{
    return fns[f].linear[k & 1];
}
