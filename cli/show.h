/*
 * show.h — `meshrt show`'s pictures (show_value.c, show_move.c), drawn
 * on pages of draw.h from a plan's values (meshrt.h's
 * mrt_plan_get_value and mrt_plan_get_shard): no MPI.
 */
#ifndef MRT_SHOW_H
#define MRT_SHOW_H

#include "draw.h"
#include "meshrt.h"

/* Larger than this many blocks or ranks, a picture is summed up in a
 * line instead of drawn. */
#define MRT_SHOW_MAX_CELLS 256

/* The picture of value v of plan on page, headed by `title` (NULL: the
 * tensor's name): the tensor's blocks (a grid of 2-D slices for dims
 * beyond two) with the ranks that hold each, its bytes and extents, and
 * the mesh (nested grids for axes beyond two) with the block each rank
 * holds; replicas and pending sums said in words and marked.  -1 when
 * out of memory. */
int mrt_show_value(mrt_draw_page *page, const mrt_plan *plan, int v,
                   const char *title);

/* `meshrt show`'s ending (cmd_show.c): page as text on the standard
 * output and in --svg FILE; the status of the first failure. */
struct mrt_cli_args;
mrt_status mrt_show_output(const struct mrt_cli_args *a,
                           const mrt_draw_page *page);
/* The picture of a pipeline's schedule s on page (show_schedule.c):
 * its figures, then a grid of time x stage.  -1 when out of memory. */
int mrt_show_schedule(mrt_draw_page *page, const mrt_schedule *s);
/* show --from LAYOUT --to LAYOUT TENSOR (show_move.c); the exit code. */
int mrt_show_move(const struct mrt_cli_args *a);

#endif
