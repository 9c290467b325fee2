/*
 * spec_info.c — meshrt.h's read-only view of a spec ("inspecting a
 * spec"): the mesh, the dims, each tensor with its layout and shard
 * shape, the names of the `layouts:` alternatives.  A user of the
 * library (and `meshrt check`) reads a spec through these, never
 * through spec.h's structs, which may change.
 */
#include <stdio.h>
#include <string.h>

#include "mesh_parse.h"
#include "spec.h"

_Static_assert(MRT_API_MAX_AXES == MRT_MAX_AXES,
               "meshrt.h's mesh axes are the mesh's");
_Static_assert(MRT_API_MAX_DIMS == MRT_MAX_DIMS,
               "meshrt.h's dims are the layout's");

void mrt_spec_get_info(const mrt_spec *s, mrt_spec_info *out)
{
    if (!out)
        return;
    memset(out, 0, sizeof *out);
    if (!s)
        return;
    out->path = s->path;
    mrt_mesh_info_of(&s->mesh, &out->mesh);
    out->dtype = s->dtype;
    out->ndims = s->ndims;
    out->ntensors = s->ntensors;
    out->nops = s->nops;
    out->nalternatives = s->nlayouts;
    out->training = s->train.loss >= 0;
    if (out->training) {
        out->nparams = s->train.nparams;
        for (int i = 0; i < s->train.nparams; i++) {
            const mrt_layout *l = &s->tensor[s->train.param[i]].layout;
            int64_t n = 1;
            for (int d = 0; d < l->ndims; d++)
                n *= l->size[d];
            out->param_elements += n;
        }
    }
}

const char *mrt_spec_get_dim(const mrt_spec *s, int i, int64_t *size)
{
    if (!s || i < 0 || i >= s->ndims)
        return NULL;
    if (size)
        *size = s->dim_size[i];
    return s->dim_name[i];
}

mrt_status mrt_spec_get_tensor(const mrt_spec *s, int i,
                               mrt_spec_tensor_info *out, mrt_error *err)
{
    if (!s || !out || i < 0 || i >= s->ntensors)
        return mrt_error_set(err, MRT_E_USAGE, "", (mrt_mark){0},
                             "mrt_spec_get_tensor: argument 'i': no tensor "
                             "%d (the spec has %d)",
                             i, s ? s->ntensors : 0);
    const mrt_spec_tensor *t = &s->tensor[i];
    const mrt_layout *l = &t->layout;
    memset(out, 0, sizeof *out);
    out->name = t->name;
    out->input = t->producer < 0;
    out->own_layout = t->own_layout;
    out->ndims = l->ndims;
    mrt_layout_shard_shape(l, &s->mesh, out->shard_shape);
    for (int d = 0; d < l->ndims; d++) {
        out->dim[d] = s->dim_name[l->dim[d]];
        out->shape[d] = l->size[d];
    }
    out->even = mrt_layout_even(l, &s->mesh);
    int in_block = t->block >= 0 && t->block < s->nblocks;
    out->block = in_block ? s->block[t->block].name : NULL;
    out->layer = in_block ? t->layer : -1;
    mrt_layout_str(l, &s->mesh, s->dim_names, out->layout,
                   (int)sizeof out->layout);
    /* replicated over an axis of size 1 too: that is what the layout
     * says, and it costs nothing */
    unsigned rep = ((1u << s->mesh.naxes) - 1) & ~mrt_layout_used_axes(l);
    if (rep && s->mesh.nranks > 1)
        mrt_mesh_axes_str(&s->mesh, rep, out->replicated,
                          (int)sizeof out->replicated);
    return MRT_OK;
}

const char *mrt_spec_get_alternative(const mrt_spec *s, int i)
{
    return s && i >= 0 && i < s->nlayouts ? s->layouts[i].name : NULL;
}

int mrt_spec_get_link(const mrt_spec *s, const char *axis, double *latency_us,
                      double *bandwidth_GBps)
{
    for (int i = 0; s && axis && i < s->nnet; i++)
        if (strcmp(s->net_axis[i], axis) == 0) {
            if (latency_us)
                *latency_us = s->net_latency_s[i] * 1e6;
            if (bandwidth_GBps)
                *bandwidth_GBps = s->net_bandwidth_Bps[i] / 1e9;
            return 1;
        }
    return 0;
}
