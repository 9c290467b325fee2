/*
 * work.c — the step counter of work.h.
 */
#include "work.h"

_Thread_local uint64_t mrt_work_steps;
