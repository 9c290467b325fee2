/*
 * spec_string.c — mrt_spec_load_string, the simple call for a spec held
 * in the caller's memory (a program that writes its YAML in code, or
 * reads it from elsewhere), forwarding to mrt_spec_load_ex: loaded
 * exactly as a file is.  The name stands for the file in errors and
 * resolves relative `file:` paths; the caller keeps the text.
 */
#include "error.h"
#include "spec_load.h"

mrt_status mrt_spec_load_string(const char *name, const char *text, size_t len,
                                mrt_spec **out, mrt_error *err)
{
    if (out)
        *out = NULL;
    if (!text || !out)
        return mrt_error_null(err, "mrt_spec_load_string",
                              !text ? "text" : "out");
    const mrt_spec_load_options opt = {.text = text, .len = len};
    return mrt_spec_load_ex(name ? name : "<string>", &opt, out, err);
}
