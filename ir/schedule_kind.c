/*
 * schedule_kind.c — the names of a pipeline's schedules (spec.h's
 * mrt_schedule_kind), as `train: {schedule: ...}` writes them and as the
 * plan prints them.  The schedules themselves are ops/schedule.c's.
 */
#include <string.h>

#include "spec.h"

static const char *const names[] = {"gpipe", "1f1b", "interleaved",
                                    "zero_bubble"};
_Static_assert(sizeof names / sizeof names[0] == MRT_SCHEDULE_COUNT,
               "one name per schedule kind");

const char *mrt_schedule_kind_name(mrt_schedule_kind k)
{
    return (unsigned)k < MRT_SCHEDULE_COUNT ? names[k] : NULL;
}

int mrt_schedule_kind_find(const char *name)
{
    for (int k = 0; name && k < MRT_SCHEDULE_COUNT; k++)
        if (strcmp(name, names[k]) == 0)
            return k;
    return -1;
}
