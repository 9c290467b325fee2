/*
 * yaml_error.h — libyaml's parse failures as meshrt errors, for every file
 * meshrt reads as YAML (specs, machine profiles).
 */
#ifndef MRT_YAML_ERROR_H
#define MRT_YAML_ERROR_H

#include <stddef.h>
#include <yaml.h>

#include "meshrt.h"

/* The error of a failed yaml_parser_parse / yaml_parser_load on text
 * (len bytes) read from path: MRT_E_SYNTAX at libyaml's 1-based problem
 * mark (for reader errors such as bad UTF-8, at the byte offset's line
 * and column), with libyaml's context; MRT_E_NOMEM when it ran out. */
mrt_status mrt_yaml_error(const yaml_parser_t *y, const char *path,
                          const char *text, size_t len, mrt_error *err);

#endif
