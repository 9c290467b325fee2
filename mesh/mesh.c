/*
 * mesh.c — rank <-> coordinate arithmetic on the logical mesh, and the
 * groups of ranks along a set of axes.  Row-major, first axis major.
 */
#include "mesh.h"

#include <stdio.h>
#include <string.h>

int mrt_mesh_find_axis(const mrt_mesh *m, const char *name)
{
    for (int i = 0; i < m->naxes; i++)
        if (strcmp(m->name[i], name) == 0)
            return i;
    return -1;
}

void mrt_mesh_coords(const mrt_mesh *m, int64_t rank, int64_t coords[])
{
    for (int i = m->naxes - 1; i >= 0; i--) {
        coords[i] = rank % m->size[i];
        rank /= m->size[i];
    }
}

int64_t mrt_mesh_rank(const mrt_mesh *m, const int64_t coords[])
{
    int64_t r = 0;
    for (int i = 0; i < m->naxes; i++)
        r = r * m->size[i] + coords[i];
    return r;
}

int64_t mrt_mesh_group_size(const mrt_mesh *m, unsigned mask)
{
    int64_t n = 1;
    for (int i = 0; i < m->naxes; i++)
        if (mask & (1u << i))
            n *= m->size[i];
    return n;
}

/* Mixed-radix number of the coordinates on the axes in (or out of) mask. */
static int64_t radix(const mrt_mesh *m, unsigned mask, int inside,
                     const int64_t coords[])
{
    int64_t r = 0;
    for (int i = 0; i < m->naxes; i++)
        if (!!(mask & (1u << i)) == inside)
            r = r * m->size[i] + coords[i];
    return r;
}

int64_t mrt_mesh_group_index(const mrt_mesh *m, unsigned mask,
                             const int64_t coords[])
{
    return radix(m, mask, 1, coords);
}

int64_t mrt_mesh_group_color(const mrt_mesh *m, unsigned mask,
                             const int64_t coords[])
{
    return radix(m, mask, 0, coords);
}

char *mrt_mesh_axes_str(const mrt_mesh *m, unsigned mask, char *buf, int size)
{
    int len = 0;
    buf[0] = '\0';
    for (int i = 0; i < m->naxes && len < size; i++)
        if (mask & (1u << i))
            len += snprintf(buf + len, (size_t)(size - len), "%s%s",
                            len ? "," : "", m->name[i]);
    return buf;
}
