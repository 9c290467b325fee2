/*
 * mapfn.h — the elementwise functions of map ops.
 *
 * A map op computes out[i] = f(a[i], b[i]) for every element of its
 * output, where the inputs are broadcast by dim name: an input lacks some
 * of the output's dims and is repeated along them.  The spec's
 * elementwise ops (add, relu, scale, ...) are maps; so are the pieces the
 * composite ops (softmax, layer_norm, the losses) and the gradients are
 * built from.  `c` is the function's constant where it has one.
 */
#ifndef MRT_MAPFN_H
#define MRT_MAPFN_H

typedef enum mrt_map_fn {
    MRT_MAP_COPY = 0,    /* a                     (broadcast, relayout) */
    MRT_MAP_ADD,         /* a + b */
    MRT_MAP_SUB,         /* a - b */
    MRT_MAP_MUL,         /* a * b */
    MRT_MAP_DIV,         /* a / b */
    MRT_MAP_RELU,        /* max(a, 0) */
    MRT_MAP_GELU,        /* 0.5 a (1 + tanh(sqrt(2/pi) (a + 0.044715 a^3))) */
    MRT_MAP_TANH,        /* tanh a */
    MRT_MAP_EXP,         /* exp a */
    MRT_MAP_LOG,         /* log a */
    MRT_MAP_NEG,         /* -a */
    MRT_MAP_RSQRT,       /* 1 / sqrt a */
    MRT_MAP_SQUARE,      /* a * a */
    MRT_MAP_SCALE,       /* c * a */
    MRT_MAP_SHIFT,       /* a + c */
    MRT_MAP_AXPY,        /* a + c * b             (the SGD update) */
    MRT_MAP_RELU_GRAD,   /* a * (b > 0)           a = dy, b = x */
    MRT_MAP_GELU_GRAD,   /* a * gelu'(b)          a = dy, b = x */
    MRT_MAP_TANH_GRAD,   /* a * (1 - b * b)       a = dy, b = y */
    MRT_MAP_RSQRT_GRAD,  /* -0.5 * a * b * b * b  a = dy, b = y */
    MRT_MAP_SQUARE_GRAD, /* 2 * a * b             a = dy, b = x */
    MRT_MAP_EQ,          /* a == b ? 1 : 0        (where the max was) */
    MRT_MAP_ONE_HOT,     /* a == j ? 1 : 0, j the global index of the
                            output's class dim    (a: integer labels) */
    MRT_MAP_MASK_FILL,   /* b != 0 ? a : c        (b: a 0/1 mask; causal
                            softmax fills what it masks with c = -1e30
                            before its max) */
    MRT_MAP_DROPOUT,     /* b != 0 ? c * a : 0    (b: a 0/1 dropout mask,
                            uint8; c = 1 / (1 - p)) */
    MRT_MAP_LERP,        /* a + c * (b - a)       (a moment's update:
                            m = b1 m + (1 - b1) g with c = 1 - b1) */
    MRT_MAP_LERP_SQ,     /* a + c * (b * b - a)   (Adam's second moment) */
    MRT_MAP_SQRT_ADD,    /* sqrt(a) + b           (Adam's denominator; b
                            the scalar eps_t) */
    MRT_MAP_CAST,        /* a, in the output's type (precision:'s copy of
                            a parameter in the compute type) */
    MRT_MAP_FN_COUNT
} mrt_map_fn;

/* 1 or 2. */
int mrt_map_arity(mrt_map_fn f);
/* "copy", "add", ..., "one_hot". */
const char *mrt_map_name(mrt_map_fn f);
/* 1 if f is linear in input k (0 or 1) when the other input is fixed:
 * a pending sum of input k may then ride through f. */
int mrt_map_linear_in(mrt_map_fn f, int k);

#endif
