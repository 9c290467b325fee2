/*
 * spec.c — lookups in a loaded spec, and freeing it.
 *
 * A spec owns every array it points to (dims, rules, tensors, ops,
 * outputs, the `layouts:` alternatives and their rules); mrt_spec_destroy frees them all and accepts NULL and
 * half-built specs (the loader uses it on its error path).
 */
#include <stdlib.h>
#include <string.h>

#include "spec.h"

int mrt_spec_find_tensor(const mrt_spec *s, const char *name)
{
    for (int i = 0; i < s->ntensors; i++)
        if (strcmp(s->tensor[i].name, name) == 0)
            return i;
    return -1;
}

int mrt_spec_find_dim(const mrt_spec *s, const char *name)
{
    for (int i = 0; i < s->ndims; i++)
        if (strcmp(s->dim_name[i], name) == 0)
            return i;
    return -1;
}

void mrt_spec_destroy(mrt_spec *spec)
{
    if (!spec)
        return;
    free(spec->dim_name);
    free(spec->dim_names);
    free(spec->dim_size);
    free(spec->dim_mark);
    free(spec->rule);
    free(spec->tensor);
    free(spec->op);
    free(spec->output);
    for (int i = 0; spec->layouts && i < spec->nlayouts; i++)
        free(spec->layouts[i].rule);
    free(spec->layouts);
    free(spec);
}
