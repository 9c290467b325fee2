/*
 * fits.c — the plan's peak memory per rank against a machine's memory.
 *
 * The peak is the model's (docs/cost-model.md: the arena of every shard
 * placed by lifetime, the kernels' workspace, MPI's scratch), which is
 * what a run allocates; the memory is the machine's physical memory, so
 * a plan over it cannot run on one rank per machine, whatever else runs
 * there.  Several ranks on one machine share it: the check is the least
 * a plan must pass, not a promise that it runs.
 */
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "fits.h"

int64_t mrt_machine_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? (int64_t)pages * page : 0;
}

const char *mrt_plan_memory_warning(const mrt_plan *p, int64_t memory,
                                    const char *what, char *buf, size_t size)
{
    int64_t peak = p->totals.peak_memory;
    if (memory <= 0 || peak <= memory)
        return NULL;
    snprintf(buf, size,
             "%s: warning: the plan needs %" PRId64 " bytes per "
             "rank at its peak, more than the %" PRId64 " bytes of %s: a "
             "run would fail with out of memory",
             p->spec_path, peak, memory, what);
    return buf;
}
