/*
 * spec_string.c — mrt_spec_load_string, the public face of
 * mrt_spec_load_text: a spec held in the caller's memory (a program that
 * writes its YAML in code, or reads it from elsewhere), loaded exactly as
 * a file is.  The name stands for the file in errors and resolves
 * relative `file:` paths; the caller keeps the text.
 */
#include "spec_load.h"

mrt_status mrt_spec_load_string(const char *name, const char *text,
                                size_t len, const char *mesh_override,
                                mrt_spec **out, mrt_error *err)
{
    return mrt_spec_load_text(name ? name : "<string>", text, len,
                              mesh_override, out, err);
}
