/*
 * schedule_info.c — meshrt.h's calls on pipeline schedules: a schedule
 * made by name (the textbook picture), the plan's own, and getters of
 * plain data for the pictures (cli/show_schedule.c) and reports.
 */
#include "plan.h"
#include "schedule.h"

mrt_status mrt_schedule_create(const char *kind, int stages, int virtual_stages,
                               int microbatches, mrt_schedule **out,
                               mrt_error *err)
{
    if (!out)
        return mrt_error_null(err, "mrt_schedule_create", "out");
    *out = NULL;
    if (!kind)
        return mrt_error_null(err, "mrt_schedule_create", "kind");
    int k = mrt_schedule_kind_find(kind);
    if (k < 0)
        return mrt_error_set(err, MRT_E_USAGE, NULL, (mrt_mark){0, 0},
                             "unknown schedule '%.64s' (known: gpipe, "
                             "1f1b, interleaved, zero_bubble)",
                             kind);
    mrt_error e = {0};
    mrt_status st = mrt_schedule_make((mrt_schedule_kind)k, stages,
                                      virtual_stages, microbatches, out, &e);
    if (st == MRT_E_SPEC)
        e.code = st = MRT_E_USAGE;
    if (st && err && !err->code)
        *err = e;
    return st;
}

const mrt_schedule *mrt_plan_get_schedule(const mrt_plan *plan)
{
    return plan ? plan->schedule : NULL;
}

void mrt_schedule_get_info(const mrt_schedule *s, mrt_schedule_info *out)
{
    if (!out)
        return;
    *out = (mrt_schedule_info){0};
    if (!s)
        return;
    *out = (mrt_schedule_info){.kind = mrt_schedule_kind_name(s->kind),
                               .stages = s->stages,
                               .virtual_stages = s->virtual_stages,
                               .microbatches = s->microbatches,
                               .slots = s->per_stage,
                               .makespan_s = s->makespan_s,
                               .bubble_fraction = s->bubble_fraction,
                               .busiest = s->busiest};
}

mrt_status mrt_schedule_get_slot(const mrt_schedule *s, int stage, int i,
                                 mrt_schedule_slot_info *out, mrt_error *err)
{
    if (!s)
        return mrt_error_null(err, "mrt_schedule_get_slot", "s");
    if (!out)
        return mrt_error_null(err, "mrt_schedule_get_slot", "out");
    if (stage < 0 || stage >= s->stages || i < 0 || i >= s->per_stage)
        return mrt_error_set(err, MRT_E_USAGE, NULL, (mrt_mark){0, 0},
                             "mrt_schedule_get_slot: slot %d of stage %d "
                             "out of range (%d stages of %d slots)",
                             i, stage, s->stages, s->per_stage);
    const mrt_slot *sl = &s->slot[stage * s->per_stage + i];
    *out = (mrt_schedule_slot_info){.stage = sl->stage,
                                    .chunk = sl->chunk,
                                    .micro = sl->micro,
                                    .phase = "FBW"[sl->phase],
                                    .start_s = sl->start_s,
                                    .end_s = sl->end_s};
    return MRT_OK;
}

int mrt_schedule_in_flight(const mrt_schedule *s, int stage)
{
    if (!s || stage < 0 || stage >= s->stages)
        return -1;
    return s->in_flight[stage];
}
