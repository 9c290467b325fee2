/*
 * profile_io.c — reading and writing machine profile files.
 * (Being written: for now only the default path is known.)
 */
#include <stdio.h>
#include <stdlib.h>

#include "profile.h"
#include "spec.h"

char *mrt_profile_default_path(char *buf, int size)
{
    const char *env = getenv("MESHRT_PROFILE");
    const char *xdg = getenv("XDG_CONFIG_HOME");
    const char *home = getenv("HOME");
    if (env && *env)
        snprintf(buf, (size_t)size, "%s", env);
    else if (xdg && *xdg)
        snprintf(buf, (size_t)size, "%s/meshrt/profile.yaml", xdg);
    else
        snprintf(buf, (size_t)size, "%s/.config/meshrt/profile.yaml",
                 home ? home : ".");
    return buf;
}

mrt_status mrt_profile_load(const char *path, mrt_profile *p, mrt_error *err)
{
    (void)p;
    return mrt_error_set(err, MRT_E_IO, path, (mrt_mark){0},
                         "reading profiles is not implemented yet");
}

mrt_status mrt_profile_save(const char *path, const mrt_profile *p,
                            mrt_error *err)
{
    (void)p;
    return mrt_error_set(err, MRT_E_IO, path, (mrt_mark){0},
                         "writing profiles is not implemented yet");
}
