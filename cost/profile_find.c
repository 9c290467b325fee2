/*
 * profile_find.c — `--machine NAME`: the profiles that ship in profiles/
 * (dgx-a100, dgx-h100, ...), found by name.
 *
 * A --machine argument with a '/' in it, or ending in ".yaml", is a file
 * and is used as it is.  Any other is a name, looked up as NAME.yaml in
 * $MESHRT_PROFILES_DIR when set, else in the installed folder
 * (PREFIX/share/meshrt/profiles), else in the source tree the build came
 * from (a meshrt run from its build folder): the first that has it wins.
 * An unknown name is a usage error that lists the names the first
 * existing folder has.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "profile.h"

#ifndef MRT_PROFILES_INSTALLED
#define MRT_PROFILES_INSTALLED "/usr/local/share/meshrt/profiles"
#endif
#ifndef MRT_PROFILES_SOURCE
#define MRT_PROFILES_SOURCE "profiles"
#endif

static int is_file_name(const char *s)
{
    size_t n = strlen(s);
    return strchr(s, '/') || (n >= 5 && strcmp(s + n - 5, ".yaml") == 0);
}

/* The folders searched, in order; NULL entries are skipped. */
static void folders(const char *dirs[3])
{
    const char *env = getenv("MESHRT_PROFILES_DIR");
    dirs[0] = env && *env ? env : NULL;
    dirs[1] = MRT_PROFILES_INSTALLED;
    dirs[2] = MRT_PROFILES_SOURCE;
}

/* The names (NAME.yaml, sorted) in dir, comma-separated, into buf. */
static void list_names(const char *dir, char *buf, size_t size)
{
    struct dirent **ent;
    int n = scandir(dir, &ent, NULL, alphasort);
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        size_t l = strlen(ent[i]->d_name);
        if (l > 5 && strcmp(ent[i]->d_name + l - 5, ".yaml") == 0 && len < size)
            len += (size_t)snprintf(buf + len, size - len, "%s%.*s",
                                    len ? ", " : "", (int)(l - 5),
                                    ent[i]->d_name);
        free(ent[i]);
    }
    if (n >= 0)
        free(ent);
}

mrt_status mrt_profile_find(const char *machine, char *path, size_t size,
                            mrt_error *err)
{
    const char *dirs[3];
    char names[1024] = "";
    const char *first = NULL;
    if (is_file_name(machine)) {
        snprintf(path, size, "%s", machine);
        return MRT_OK;
    }
    folders(dirs);
    for (int i = 0; i < 3; i++) {
        if (!dirs[i] || access(dirs[i], R_OK | X_OK) != 0)
            continue;
        if (!first)
            first = dirs[i];
        if ((size_t)snprintf(path, size, "%s/%s.yaml", dirs[i], machine) <
                size &&
            access(path, R_OK) == 0)
            return MRT_OK;
    }
    if (first)
        list_names(first, names, sizeof names);
    return mrt_error_set(err, MRT_E_USAGE, machine, (mrt_mark){0},
                         "no such machine profile (--machine takes a file, "
                         "with a '/' or ending in .yaml, or a name of %s: "
                         "%s)",
                         first ? first : "the profiles folder",
                         names[0] ? names : "none found");
}
