/*
 * fits.h — whether a plan fits the memory of the machine it is planned
 * on (fits.c).  `meshrt check` and `meshrt plan` warn when it does not;
 * `meshrt run` would fail with "out of memory" (or, where the kernel
 * overcommits, be killed when the pages are touched).
 */
#ifndef MRT_FITS_H
#define MRT_FITS_H

#include <stddef.h>
#include <stdint.h>

#include "plan.h"

/* This machine's physical memory in bytes (sysconf: _SC_PHYS_PAGES times
 * _SC_PAGE_SIZE), or 0 if the system does not say. */
int64_t mrt_machine_memory(void);

/* If the plan's peak memory per rank (totals.peak_memory) is over
 * `memory` bytes (> 0; `what` says whose: "this machine's memory"),
 * writes the warning, one line "SPEC: warning: ..." without a newline,
 * to buf and returns buf; else returns NULL. */
const char *mrt_plan_memory_warning(const mrt_plan *p, int64_t memory,
                                    const char *what, char *buf, size_t size);

#endif
