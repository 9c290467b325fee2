/*
 * mesh_parse.h — a mesh as text and as meshrt.h's plain data: the one
 * parser of mesh strings "data=4,model=2" (the loader's mesh override,
 * `meshrt calibrate --mesh`, meshrt.h's mrt_mesh_parse), and a mesh
 * copied out as an mrt_mesh_info.
 */
#ifndef MRT_MESH_PARSE_H
#define MRT_MESH_PARSE_H

#include "meshrt.h"
#include "mesh.h"

/* The mesh of s, "AXIS=N,AXIS=N" (blanks around names and sizes
 * allowed), into m, which it overwrites; on bad input MRT_E_USAGE,
 * "invalid --mesh 'S': WHY", with no file. */
mrt_status mrt_mesh_parse_string(const char *s, mrt_mesh *m, mrt_error *err);
/* m as meshrt.h's plain mrt_mesh_info. */
void mrt_mesh_info_of(const mrt_mesh *m, mrt_mesh_info *out);

#endif
