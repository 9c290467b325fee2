/*
 * trace.h — `run --trace FILE`: the steps of one run as a Chrome
 * trace-event file (the JSON object with a "traceEvents" array that
 * chrome://tracing and Perfetto open): one track per rank, one complete
 * event per step.
 */
#ifndef MRT_TRACE_H
#define MRT_TRACE_H

#include "runtime.h"

/* Writes the trace of one run to path.  dur[k] is how long step k took
 * on this rank in that run; the steps ran back to back from a barrier,
 * which is the common start (ts = 0) of every rank's track.  Collective
 * over e's world: every rank's durations and host name are gathered to
 * rank 0, which writes the file atomically (temporary file, then
 * rename).  title names the trace (the spec's path).  Returns rank 0's
 * status on rank 0 and MRT_OK elsewhere: the caller agrees. */
mrt_status mrt_trace_write(const mrt_exec *e, const double *dur,
                           const char *path, const char *title, mrt_error *err);

#endif
