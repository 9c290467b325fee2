/*
 * size_parse.c — a memory size as people write it (mrt_parse_bytes of
 * meshrt.h): a number of bytes, optionally with a unit: B; KB, MB, GB, TB
 * (powers of 1000, as memory datasheets quote them); KiB, MiB, GiB, TiB
 * and K, M, G, T (powers of 1024, as --max-memory always read them).
 * "80GB", "80GiB", "1.5G", "85899345920".  The one parser of
 * --device-memory and of a machine profile's `device_memory:`.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "meshrt.h"

static const struct {
    const char *unit;
    double scale;
} units[] = {{"", 1},
             {"B", 1},
             {"K", 1024.0},
             {"M", 1048576.0},
             {"G", 1073741824.0},
             {"T", 1099511627776.0},
             {"KiB", 1024.0},
             {"MiB", 1048576.0},
             {"GiB", 1073741824.0},
             {"TiB", 1099511627776.0},
             {"KB", 1e3},
             {"MB", 1e6},
             {"GB", 1e9},
             {"TB", 1e12}};

mrt_status mrt_parse_bytes(const char *s, int64_t *bytes)
{
    if (!s || !bytes || *s < '0' || *s > '9')
        return MRT_E_USAGE;
    char *end;
    double v = strtod(s, &end);
    for (size_t i = 0; i < sizeof units / sizeof *units; i++) {
        if (strcmp(end, units[i].unit))
            continue;
        v *= units[i].scale;
        if (!isfinite(v) || v < 1 || v >= 9.2e18)
            return MRT_E_USAGE;
        *bytes = (int64_t)v;
        return MRT_OK;
    }
    return MRT_E_USAGE;
}
