/*
 * profile.c — the built-in default profile and link lookups by axis name.
 * Reading and writing profile files is in profile_io.c.
 */
#include "profile.h"

#include <stdio.h>
#include <string.h>

void mrt_profile_default(mrt_profile *p)
{
    memset(p, 0, sizeof *p);
    snprintf(p->source, sizeof p->source, "built-in default");
    p->fallback = (mrt_link){.latency_s = 2e-6, .bandwidth_Bps = 5e9};
    p->gemm_flops[MRT_F32] = 20e9;
    p->gemm_flops[MRT_F64] = 10e9;
    p->reduce_flops = 1e9;
    p->copy_Bps = 5e9;
    p->intra = p->inter = p->fallback;
}

void mrt_profile_set_ranks_per_node(mrt_profile *p, int64_t n)
{
    if (p->ranks_per_node <= 0)
        p->intra = p->inter = p->fallback;
    p->ranks_per_node = n;
}

void mrt_profile_set_link(mrt_profile *p, const char *name, mrt_link l)
{
    for (int i = 0; i < p->naxes; i++)
        if (strcmp(p->axis[i], name) == 0) {
            p->link[i] = l;
            return;
        }
    if (p->naxes == MRT_MAX_AXES)
        return;
    snprintf(p->axis[p->naxes], MRT_NAME_MAX, "%s", name);
    p->link[p->naxes++] = l;
}

mrt_link mrt_profile_link(const mrt_profile *p, const mrt_mesh *m, int a)
{
    for (int i = 0; i < p->naxes; i++)
        if (strcmp(p->axis[i], m->name[a]) == 0)
            return p->link[i];
    return p->fallback;
}
