/*
 * version.c — the library's version, in base/ so that a planning-only
 * program linked with the static libmeshrt pulls in no runtime/ object
 * (and so no MPI) to ask it.
 */
#include "meshrt.h"

const char *mrt_version(void)
{
    return MESHRT_VERSION;
}
