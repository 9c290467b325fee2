/*
 * yaml_error.c — libyaml's failures as meshrt errors.  libyaml's marks are
 * zero-based; meshrt's are 1-based.
 */
#include "yaml_error.h"

#include "error.h"

/* The 1-based position of byte offset in text (libyaml gives reader
 * errors, such as bad UTF-8, an offset but no mark). */
static mrt_mark offset_mark(const char *text, size_t len, size_t offset)
{
    mrt_mark at = {1, 1};
    for (size_t i = 0; i < offset && i < len; i++) {
        at.column = text[i] == '\n' ? 1 : at.column + 1;
        at.line += text[i] == '\n';
    }
    return at;
}

mrt_status mrt_yaml_error(const yaml_parser_t *y, const char *path,
                          const char *text, size_t len, mrt_error *err)
{
    mrt_mark at = {(int)y->problem_mark.line + 1,
                   (int)y->problem_mark.column + 1};
    const char *problem = y->problem ? y->problem : "malformed YAML";
    if (y->error == YAML_MEMORY_ERROR)
        return mrt_error_set(err, MRT_E_NOMEM, path, (mrt_mark){0},
                             "out of memory");
    if (y->error == YAML_READER_ERROR)
        return mrt_error_set(err, MRT_E_SYNTAX, path,
                             offset_mark(text, len, y->problem_offset),
                             "%s (at byte %zu)", problem, y->problem_offset);
    if (y->context)
        return mrt_error_set(err, MRT_E_SYNTAX, path, at,
                             "%s (%s that starts "
                             "at %d:%d)",
                             problem, y->context, (int)y->context_mark.line + 1,
                             (int)y->context_mark.column + 1);
    return mrt_error_set(err, MRT_E_SYNTAX, path, at, "%s", problem);
}
