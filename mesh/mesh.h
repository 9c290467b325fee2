/*
 * mesh.h — the logical processor mesh: named axes, rank <-> coordinates,
 * and the groups of ranks that vary along a set of axes.
 *
 * Ranks are laid out row-major over the axes, first axis major: on a
 * {data: 2, model: 3} mesh, rank 4 has coordinates (1, 1).  A set of axes
 * is a bit mask (bit i = axis i).  The group of a rank over a mask is the
 * set of ranks that share its coordinates on every axis outside the mask;
 * ranks are ordered inside the group row-major over the mask's axes, in
 * mesh order.  Nothing here calls MPI: the mesh is plain data, of any
 * size, so plans can be built for meshes far larger than the machine.
 */
#ifndef MRT_MESH_H
#define MRT_MESH_H

#include <stdint.h>

#define MRT_MAX_AXES 8  /* mesh axes */
#define MRT_NAME_MAX 64 /* names of axes, dims, tensors, incl. NUL */

typedef struct mrt_mesh {
    int naxes;
    char name[MRT_MAX_AXES][MRT_NAME_MAX];
    int64_t size[MRT_MAX_AXES];
    int64_t nranks; /* product of the sizes */
} mrt_mesh;

/* Index of the axis called name, or -1. */
int mrt_mesh_find_axis(const mrt_mesh *m, const char *name);
/* Fills coords[0..naxes) for rank. */
void mrt_mesh_coords(const mrt_mesh *m, int64_t rank, int64_t coords[]);
/* The rank at coords. */
int64_t mrt_mesh_rank(const mrt_mesh *m, const int64_t coords[]);
/* Number of ranks in a group over mask (1 for the empty mask). */
int64_t mrt_mesh_group_size(const mrt_mesh *m, unsigned mask);
/* Position of the rank at coords inside its group over mask. */
int64_t mrt_mesh_group_index(const mrt_mesh *m, unsigned mask,
                             const int64_t coords[]);
/* Which group over mask the rank at coords belongs to: equal for ranks of
 * the same group, distinct otherwise, in [0, nranks / group size). */
int64_t mrt_mesh_group_color(const mrt_mesh *m, unsigned mask,
                             const int64_t coords[]);
/* Writes "data,model" (axis names of mask, mesh order) into buf. */
char *mrt_mesh_axes_str(const mrt_mesh *m, unsigned mask, char *buf, int size);

#endif
