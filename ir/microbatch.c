/*
 * microbatch.c — microbatches by unrolling the program, and the names of
 * a pipeline's schedules.
 *
 *   train: {loss: L, params: [...], microbatches: 4, microbatch_dim: batch}
 *
 * Before reverse mode runs, the forward program is made m times, once
 * per microbatch, on slices of the microbatch dim (its size becomes
 * b / m in the program).  (The unrolling itself follows below.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

static const char *const schedule_names[] = {
    [MRT_SCHEDULE_GPIPE] = "gpipe",
    [MRT_SCHEDULE_1F1B] = "1f1b",
    [MRT_SCHEDULE_INTERLEAVED] = "interleaved",
    [MRT_SCHEDULE_ZERO_BUBBLE] = "zero_bubble",
};
_Static_assert(sizeof schedule_names / sizeof schedule_names[0] ==
                   MRT_SCHEDULE_COUNT,
               "a name per schedule");

const char *mrt_schedule_kind_name(mrt_schedule_kind k)
{
    return k >= 0 && k < MRT_SCHEDULE_COUNT ? schedule_names[k] : "?";
}

int mrt_schedule_kind_find(const char *name)
{
    for (int k = 0; k < MRT_SCHEDULE_COUNT; k++)
        if (!strcmp(name, schedule_names[k]))
            return k;
    return -1;
}
