/*
 * reshard_cases.h — relayouts ported from Shardy's reshard tests
 * (openxla/shardy, shardy/dialect/sdy/transforms/export/test/
 * reshard_to_collectives.mlir: each case names the test function there),
 * as meshrt layout pairs, with the collectives Shardy emits for each.
 *
 * Shardy's shapes are scaled by 64 (16x8x8 -> 1024x512x512, f32) so that
 * the modeled time is the bytes' and not the latency's; the cases whose
 * point is a dim too small to slice keep that dim.  A sub-axis of Shardy
 * ("x":(1)2 of an axis x of 4) is a mesh axis of its own here: x of 4 is
 * x1 of 2 (major) and x2 of 2, and "x" is [x1, x2].  `shardy` lists the
 * collectives Shardy's test expects, in order, as KIND:AXES with KIND one
 * of slice (all-slice), ag (all-gather), a2a (all-to-all), cp
 * (collective-permute, over no axes: the whole shard moves); tests/
 * test_reshard.c prices them with meshrt's conventions (docs/cost-model.md)
 * and mpi_reshard.c runs every case on the meshes of 1-4 ranks.
 * Not ported: the cases with device orders other than the row-major one
 * (meshrt's meshes are always row-major), with the "?" open dims, and
 * those whose dims do not divide evenly (meshrt has no padding).
 */
#ifndef MRT_TEST_RESHARD_CASES_H
#define MRT_TEST_RESHARD_CASES_H

typedef struct reshard_case {
    const char *name; /* Shardy's test function */
    const char *mesh; /* YAML flow mapping */
    const char *dims;
    const char *shape;
    const char *from, *to; /* layouts */
    const char *shardy;    /* Shardy's collectives */
} reshard_case;

#define MESH3 "{x: 2, y: 2, z: 2}"
#define MESH3_424 "{x: 4, y: 2, z: 4}"
#define MESH4 "{x: 2, y: 2, z: 2, w: 2}"
#define DIMS2 "{a: 1024, b: 512}"
#define DIMS3 "{a: 1024, b: 512, c: 512}"

static const reshard_case reshard_cases[] = {
    {"all_gather_multiple_axes", MESH3, DIMS2, "[a, b]", "{a: [x, y, z]}",
     "{a: x}", "ag:y,z"},
    {"all_to_all_single_axis", MESH3, DIMS3, "[a, b, c]", "{a: x, b: y}",
     "{b: y, c: x}", "a2a:x"},
    {"all_to_all_multiple_axes", MESH3, DIMS3, "[a, b, c]", "{a: x, c: [y, z]}",
     "{a: x, b: [y, z]}", "a2a:y,z"},
    {"two_all_to_alls_different_tgt_dims", MESH3_424, DIMS3, "[a, b, c]",
     "{b: [y, x]}", "{a: x, c: y}", "a2a:x a2a:y"},
    {"two_all_to_alls_same_tgt_dim_reverse_order", MESH3, DIMS3, "[a, b, c]",
     "{a: y, b: x}", "{c: [x, y]}", "a2a:x a2a:y"},
    {"two_all_to_alls_same_tgt_dim_non_contiguous", MESH3, DIMS3, "[a, b, c]",
     "{a: y, b: [x, z]}", "{c: [x, y, z]}", "cp a2a:x a2a:y,z"},
    {"slice_then_all_to_alls", MESH3_424, DIMS3, "[a, b, c]", "{b: [y, z]}",
     "{a: [x, z], c: y}", "slice:x a2a:z a2a:y"},
    {"slice_on_src_dim_then_all_to_all_multiple_axes", MESH3, DIMS3,
     "[a, b, c]", "{b: x}", "{c: [x, y, z]}", "slice:y,z a2a:x,y,z"},
    {"slice_on_src_dim_then_two_all_to_alls", MESH3, DIMS3, "[a, b, c]",
     "{a: z, b: x}", "{c: [x, y, z]}", "slice:y a2a:x,y a2a:z"},
    {"slice_on_src_dim_then_two_all_to_alls_diff_tgts", MESH3, DIMS3,
     "[a, b, c]", "{b: [x, y]}", "{a: x, c: [y, z]}", "slice:z a2a:y,z a2a:x"},
    {"slice_on_multiple_src_dims", MESH4, DIMS3, "[a, b, c]", "{a: z, b: x}",
     "{c: [x, y, z, w]}", "slice:w,y a2a:x,y a2a:z,w"},
    {"slice_on_one_src_dim_but_not_other", MESH4, "{a: 2, b: 512, c: 512}",
     "[a, b, c]", "{a: z, b: x}", "{c: [x, y, z, w]}",
     "slice:y,w cp a2a:y a2a:z,w"},
    {"cannot_slice_on_src_dim_output_sharded", MESH3, DIMS2, "[a, b]", "{b: x}",
     "{a: [x, y], b: z}", "slice:y,z cp"},
    {"replace_major_most_axis_in_dim", MESH4, DIMS2, "[a, b]", "{a: [x, y, z]}",
     "{a: [w, y, z]}", "cp"},
    {"swap_same_size_axes_between_dims", "{x: 2, y: 2}", DIMS2, "[a, b]",
     "{a: x, b: y}", "{a: y, b: x}", "cp"},
    {"swap_axes_between_dims_then_all_to_all", "{x: 2, y: 2}",
     "{a: 512, b: 512, c: 512}", "[a, b, c]", "{a: x, b: y}", "{b: x, c: y}",
     "cp a2a:y"},
    {"reorder_axes_single_dim", MESH3_424, DIMS2, "[a, b]", "{a: [x, y], b: z}",
     "{a: [y, x], b: z}", "cp"},
    {"slice_and_swap_axes_between_dims", MESH3, DIMS2, "[a, b]", "{a: x, b: y}",
     "{a: [x, y], b: z}", "slice:z cp"},
    {"replace_multiple_axes_diff_dims", "{x: 2, y: 2, z: 2, w: 2, u: 2, v: 2}",
     "{a: 64, b: 64, c: 64, d: 64}", "[a, b, c, d]", "{a: x, b: [y, z]}",
     "{c: [w, u], d: v}", "slice:w,u,v ag:x,y,z"},
    /* sub-axes */
    {"swap_diff_size_axes_between_dims", "{x1: 2, x2: 2, y: 2}", DIMS2,
     "[a, b]", "{a: [x1, x2], b: y}", "{a: y, b: [x1, x2]}", "cp a2a:x2"},
    {"all_gather_with_subaxis", "{x: 2, y1: 4, y2: 2}", DIMS2, "[a, b]",
     "{a: [y1, y2], b: x}", "{a: y1, b: x}", "ag:y2"},
    {"all_to_all_subaxis_then_all_gather", "{x: 4, y: 2, z1: 2, z2: 2}", DIMS3,
     "[a, b, c]", "{a: x, b: [z1, z2, y]}", "{a: [x, z2], c: y}",
     "a2a:y a2a:z2 ag:z1"},
    {"slice_on_src_dim_then_all_to_all", "{x: 2, y: 2, z: 2, w1: 2, w2: 2}",
     DIMS2, "[a, b]", "{b: w1}", "{a: [w1, w2]}", "slice:w2 a2a:w1,w2"},
    {"slice_tgt_dim_then_all_to_all_then_all_gather",
     "{x: 2, y: 2, z: 2, w: 4}", DIMS2, "[a, b]", "{a: [y, z, w]}",
     "{a: y, b: [x, w]}", "slice:x a2a:w ag:z"},
};

#define RESHARD_NCASES ((int)(sizeof reshard_cases / sizeof reshard_cases[0]))

#endif
