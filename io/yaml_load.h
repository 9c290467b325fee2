/*
 * yaml_load.h — a YAML file as one libyaml document, in one pass over
 * libyaml's events, with a bound on the nesting depth.
 *
 * libyaml's scanner slows down quadratically with nesting depth (a
 * 400 kB file of brackets takes minutes), so the depth is checked as the
 * events come, before the rest is read.  The spec loader used to parse
 * the file twice (once for the depth, once into a document with
 * yaml_parser_load): the second pass was a tenth of the time of planning
 * a long program, and libyaml's loader looks each anchor up in a list,
 * quadratic in the anchors of a file.  The document built here is the
 * one yaml_parser_load builds (the same nodes, numbered the same, with
 * the same marks; aliases resolved to their anchor's node), except that
 * nodes carry no tag (meshrt reads none).
 *
 * Errors, the first in this order: a syntax error or a nesting deeper
 * than max_depth anywhere in the file (MRT_E_SYNTAX at libyaml's mark,
 * MRT_E_SPEC "the <what> nests deeper than N levels"); an undefined
 * alias or a duplicate anchor in the first document, then in the second
 * (as libyaml words them); a second document that is not empty
 * (MRT_E_SPEC at its first node), or with mrt_yaml_load_expert's
 * one_document any second document, even an empty one (MRT_E_SPEC at
 * its start, the "---").  An empty first document is no error: the
 * caller sees a document without a root node.
 */
#ifndef MRT_YAML_LOAD_H
#define MRT_YAML_LOAD_H

#include <stddef.h>
#include <yaml.h>

#include "meshrt.h"

/* The text of the file at path, into *text (malloc'd, NUL-terminated,
 * the caller frees it) and *len.  Only a regular file is read: the open
 * does not block (a FIFO would wait for a writer forever) and what was
 * opened is checked, so a FIFO, a folder or a device is refused at once
 * ("cannot read WHAT: it is a FIFO, not a regular file"), as is a file
 * larger than max bytes.  MRT_E_IO (MRT_E_NOMEM), on path, no position. */
mrt_status mrt_yaml_read_file(const char *path, const char *what, long max,
                              char **text, size_t *len, mrt_error *err);

/* text (len bytes, read from path) into *doc, which the caller deletes
 * with yaml_document_delete on success (on failure there is nothing to
 * delete).  what names the file in messages ("spec"). */
mrt_status mrt_yaml_load(const char *path, const char *what, const char *text,
                         size_t len, int max_depth, yaml_document_t *doc,
                         mrt_error *err);

/* How a file is read: `what` names it in messages ("profile"), the
 * depth it may nest, and whether the stream must hold one document
 * only (1: a second one is an error even if empty, at its "---"; 0: an
 * empty second document is allowed, a non-empty one is an error at its
 * first node). */
typedef struct mrt_yaml_load_options {
    const char *what;
    int max_depth;
    int one_document;
} mrt_yaml_load_options;

/* mrt_yaml_load with all its options (mrt_yaml_load is this with
 * one_document 0). */
mrt_status mrt_yaml_load_expert(const char *path, const char *text, size_t len,
                                const mrt_yaml_load_options *o,
                                yaml_document_t *doc, mrt_error *err);

#endif
