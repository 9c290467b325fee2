/*
 * yaml_load.c — one pass from libyaml's events to a document
 * (yaml_load.h).
 *
 * The document's tables are the public fields of libyaml's structs,
 * grown with realloc (libyaml's own allocator is malloc and free, and
 * yaml_document_delete frees them); a node takes its scalar, and the
 * document its directives, from the event that made them, as libyaml's
 * loader does, so nothing is copied.  The file's text is read here too
 * (mrt_yaml_read_file), for the spec and the machine profile alike: a
 * regular file only, never a wait on a FIFO.
 */
#include "yaml_load.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grow.h"
#include "name_index.h"
#include "error.h"
#include "yaml_error.h"
#include "yaml_node.h"

/* A failure of composition, worded and placed as libyaml's loader does. */
typedef struct problem {
    const char *problem, *context; /* problem == NULL: none */
    yaml_mark_t problem_mark, context_mark;
} problem;

typedef struct named_node {
    char *name;
    int node;
    yaml_mark_t mark;
} named_node;

typedef struct composer {
    yaml_document_t *doc; /* being built; NULL: events only checked */
    problem *fail;        /* the document's first problem */
    int *open;            /* node ids of the collections open */
    int nopen, cap_open;
    named_node *anchor; /* the document's anchors */
    int nanchors, cap_anchors;
    mrt_name_index index; /* anchor name -> index in anchor[] */
} composer;

static const char *anchor_name(const void *ctx, int i)
{
    return ((const composer *)ctx)->anchor[i].name;
}

static void forget_anchors(composer *c)
{
    for (int i = 0; i < c->nanchors; i++)
        free(c->anchor[i].name);
    c->nanchors = 0;
    mrt_name_index_free(&c->index);
}

/* Starts a document: built into doc (NULL: not built), problems to
 * fail. */
static void begin(composer *c, yaml_document_t *doc, problem *fail)
{
    forget_anchors(c);
    c->doc = doc;
    c->fail = fail;
    c->nopen = 0;
}

static void set_problem(composer *c, const char *what, yaml_mark_t at,
                        const char *context, yaml_mark_t context_at)
{
    *c->fail = (problem){what, context, at, context_at};
}

/* Appends node (taken) to the document; its id, or 0 when out of
 * memory. */
static int push_node(yaml_document_t *d, const yaml_node_t *node)
{
    if (d->nodes.top == d->nodes.end) {
        size_t n = (size_t)(d->nodes.end - d->nodes.start);
        size_t cap = n ? 2 * n : 64;
        yaml_node_t *t = realloc(d->nodes.start, cap * sizeof *t);
        if (!t)
            return 0;
        d->nodes.start = t;
        d->nodes.top = t + n;
        d->nodes.end = t + cap;
    }
    *d->nodes.top++ = *node;
    return (int)(d->nodes.top - d->nodes.start);
}

/* Grows a stack of elements of elsize bytes (start, top, end) by one. */
static int grow_stack(void **start, void **top, void **end, size_t elsize)
{
    size_t n = (size_t)((char *)*top - (char *)*start) / elsize;
    if (*top != *end)
        return 0;
    size_t cap = n ? 2 * n : 4;
    char *t = realloc(*start, cap * elsize);
    if (!t)
        return -1;
    *start = t;
    *top = t + n * elsize;
    *end = t + cap * elsize;
    return 0;
}

/* Node id goes into the collection open innermost (none: it is the
 * root): an item, a key, or the value of the key before it.  0 or -1. */
static int add_to_parent(composer *c, int id)
{
    if (!c->nopen)
        return 0;
    yaml_node_t *p = &c->doc->nodes.start[c->open[c->nopen - 1] - 1];
    if (p->type == YAML_SEQUENCE_NODE) {
        if (grow_stack((void **)&p->data.sequence.items.start,
                       (void **)&p->data.sequence.items.top,
                       (void **)&p->data.sequence.items.end,
                       sizeof *p->data.sequence.items.start))
            return -1;
        *p->data.sequence.items.top++ = id;
        return 0;
    }
    if (p->data.mapping.pairs.top != p->data.mapping.pairs.start) {
        yaml_node_pair_t *last = p->data.mapping.pairs.top - 1;
        if (last->key && !last->value) {
            last->value = id;
            return 0;
        }
    }
    if (grow_stack((void **)&p->data.mapping.pairs.start,
                   (void **)&p->data.mapping.pairs.top,
                   (void **)&p->data.mapping.pairs.end,
                   sizeof *p->data.mapping.pairs.start))
        return -1;
    *p->data.mapping.pairs.top++ = (yaml_node_pair_t){id, 0};
    return 0;
}

/* Names node id with anchor name (taken; NULL: none).  0 or -1. */
static int add_anchor(composer *c, char *name, int id)
{
    if (!name)
        return 0;
    yaml_mark_t at = c->doc->nodes.start[id - 1].start_mark;
    int i = mrt_name_index_find(&c->index, name, anchor_name, c);
    if (i >= 0) {
        free(name);
        set_problem(c, "second occurrence", at,
                    "found duplicate anchor; first occurrence",
                    c->anchor[i].mark);
        return 0;
    }
    i = c->nanchors;
    if (mrt_grow((void **)&c->anchor, &c->cap_anchors, i + 1,
                 sizeof *c->anchor)) {
        free(name);
        return -1;
    }
    c->anchor[i] = (named_node){name, id, at};
    c->nanchors++;
    return mrt_name_index_add(&c->index, name, i, anchor_name, c);
}

/* A new node from event e (scalar or collection start; its strings
 * taken), added to its parent and named by its anchor.  0 or -1. */
static int add_node(composer *c, yaml_event_t *e)
{
    yaml_node_t node = {.start_mark = e->start_mark, .end_mark = e->end_mark};
    char *anchor = NULL;
    if (e->type == YAML_SCALAR_EVENT) {
        node.type = YAML_SCALAR_NODE;
        node.data.scalar.value = e->data.scalar.value;
        node.data.scalar.length = e->data.scalar.length;
        node.data.scalar.style = e->data.scalar.style;
        e->data.scalar.value = NULL;
        anchor = (char *)e->data.scalar.anchor;
        e->data.scalar.anchor = NULL;
    } else if (e->type == YAML_SEQUENCE_START_EVENT) {
        node.type = YAML_SEQUENCE_NODE;
        node.data.sequence.style = e->data.sequence_start.style;
        anchor = (char *)e->data.sequence_start.anchor;
        e->data.sequence_start.anchor = NULL;
    } else {
        node.type = YAML_MAPPING_NODE;
        node.data.mapping.style = e->data.mapping_start.style;
        anchor = (char *)e->data.mapping_start.anchor;
        e->data.mapping_start.anchor = NULL;
    }
    int id = push_node(c->doc, &node);
    if (!id) {
        free(node.data.scalar.value);
        free(anchor);
        return -1;
    }
    if (add_anchor(c, anchor, id) || add_to_parent(c, id))
        return -1;
    if (e->type == YAML_SCALAR_EVENT)
        return 0;
    if (mrt_grow((void **)&c->open, &c->cap_open, c->nopen + 1,
                 sizeof *c->open))
        return -1;
    c->open[c->nopen++] = id;
    return 0;
}

/* Builds event e into the document.  0, or -1 when out of memory. */
static int compose(composer *c, yaml_event_t *e)
{
    yaml_document_t *d = c->doc;
    switch (e->type) {
    case YAML_DOCUMENT_START_EVENT:
        d->version_directive = e->data.document_start.version_directive;
        d->tag_directives.start = e->data.document_start.tag_directives.start;
        d->tag_directives.end = e->data.document_start.tag_directives.end;
        d->start_implicit = e->data.document_start.implicit;
        d->start_mark = e->start_mark;
        e->data.document_start.version_directive = NULL;
        e->data.document_start.tag_directives.start = NULL;
        e->data.document_start.tag_directives.end = NULL;
        return 0;
    case YAML_DOCUMENT_END_EVENT:
        d->end_implicit = e->data.document_end.implicit;
        d->end_mark = e->end_mark;
        return 0;
    case YAML_ALIAS_EVENT: {
        const char *name = (const char *)e->data.alias.anchor;
        int i = mrt_name_index_find(&c->index, name, anchor_name, c);
        if (i < 0) {
            set_problem(c, "found undefined alias", e->start_mark, NULL,
                        e->start_mark);
            return 0;
        }
        return add_to_parent(c, c->anchor[i].node);
    }
    case YAML_SCALAR_EVENT:
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT: return add_node(c, e);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        d->nodes.start[c->open[--c->nopen] - 1].end_mark = e->end_mark;
        return 0;
    default: return 0;
    }
}

/* The error of problem p, through the parser's fields, as libyaml's
 * loader would have left them. */
static mrt_status composer_error(yaml_parser_t *y, const problem *p,
                                 const char *path, const char *text, size_t len,
                                 mrt_error *err)
{
    y->error = YAML_COMPOSER_ERROR;
    y->problem = p->problem;
    y->problem_mark = p->problem_mark;
    y->context = p->context;
    y->context_mark = p->context_mark;
    return mrt_yaml_error(y, path, text, len, err);
}

/* ---- reading the file ---------------------------------------------- */

static const mrt_mark no_file_mark = {0, 0};

/* What a file that is not a regular one is, for the message. */
static const char *file_kind(mode_t m)
{
    return S_ISFIFO(m)   ? "a FIFO"
           : S_ISDIR(m)  ? "a folder"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
           : S_ISSOCK(m) ? "a socket"
                         : "a special file";
}

/* path opened for reading if it is a regular file (O_NONBLOCK, then
 * fstat of what was opened: no race with a file swapped in between). */
static mrt_status open_regular(const char *path, const char *what, FILE **f,
                               mrt_error *err)
{
    struct stat sb;
    *f = NULL;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return mrt_error_set(err, MRT_E_IO, path, no_file_mark,
                             "cannot open %s: %s", what, strerror(errno));
    mrt_status st = MRT_OK;
    if (fstat(fd, &sb) != 0)
        st = mrt_error_set(err, MRT_E_IO, path, no_file_mark,
                           "cannot open %s: %s", what, strerror(errno));
    else if (!S_ISREG(sb.st_mode))
        st = mrt_error_set(err, MRT_E_IO, path, no_file_mark,
                           "cannot read %s: it is %s, not a regular file", what,
                           file_kind(sb.st_mode));
    else if (fcntl(fd, F_SETFL, 0) != 0 || !(*f = fdopen(fd, "rb")))
        st = mrt_error_set(err, MRT_E_IO, path, no_file_mark,
                           "cannot open %s: %s", what, strerror(errno));
    if (st)
        close(fd);
    return st;
}

mrt_status mrt_yaml_read_file(const char *path, const char *what, long max,
                              char **text, size_t *len, mrt_error *err)
{
    size_t cap = 0, n = 0;
    char *buf = NULL;
    FILE *f;
    mrt_status st = open_regular(path, what, &f, err);
    if (st)
        return st;
    for (size_t got = 1; got > 0; n += got) {
        if (n + 1 >= cap) { /* room for the NUL */
            int too_big = cap > (size_t)max;
            cap = cap ? 2 * cap : 4096;
            char *grown = too_big ? NULL : realloc(buf, cap);
            if (!grown) {
                st = too_big ? mrt_error_set(err, MRT_E_IO, path, no_file_mark,
                                             "cannot read %s: larger than "
                                             "%ld bytes",
                                             what, max)
                             : mrt_error_set(err, MRT_E_NOMEM, path,
                                             no_file_mark, "out of memory");
                goto done;
            }
            buf = grown;
        }
        got = fread(buf + n, 1, cap - n - 1, f);
    }
    if (ferror(f))
        st = mrt_error_set(err, MRT_E_IO, path, no_file_mark,
                           "cannot read %s: %s", what, strerror(errno));
    else if (n > (size_t)max)
        st = mrt_error_set(err, MRT_E_IO, path, no_file_mark,
                           "cannot read %s: larger than %ld bytes", what, max);
done:
    fclose(f);
    if (st) {
        free(buf);
        return st;
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return MRT_OK;
}

/* The error of a stream whose events all came through: the first
 * document's problem, else the second's, else a second document that
 * is not empty. */
static mrt_status check_documents(yaml_parser_t *y, const problem fail[2],
                                  int have_second,
                                  const yaml_document_t *second,
                                  const char *path, const char *what,
                                  const char *text, size_t len, mrt_error *err)
{
    if (fail[0].problem)
        return composer_error(y, &fail[0], path, text, len, err);
    if (!have_second)
        return MRT_OK;
    if (fail[1].problem)
        return composer_error(y, &fail[1], path, text, len, err);
    if (second->nodes.top == second->nodes.start)
        return MRT_OK;
    return mrt_error_set(err, MRT_E_SPEC, path,
                         mrt_yaml_mark(&second->nodes.start[0]),
                         "a %s is one YAML document, but a second one starts "
                         "here",
                         what);
}

/* The error of event e, which nests deeper than o allows or starts a
 * second document where o wants one only; MRT_OK if neither. */
static mrt_status check_event(const yaml_event_t *e, int depth, int ndocs,
                              const mrt_yaml_load_options *o, const char *path,
                              mrt_error *err)
{
    mrt_mark at = {(int)e->start_mark.line + 1, (int)e->start_mark.column + 1};
    if (depth > o->max_depth)
        return mrt_error_set(err, MRT_E_SPEC, path, at,
                             "the %s nests "
                             "deeper than %d levels",
                             o->what, o->max_depth);
    if (o->one_document && ndocs == 2 && e->type == YAML_DOCUMENT_START_EVENT)
        return mrt_error_set(err, MRT_E_SPEC, path, at,
                             "a %s is one YAML "
                             "document, but a second one starts here",
                             o->what);
    return MRT_OK;
}

mrt_status mrt_yaml_load(const char *path, const char *what, const char *text,
                         size_t len, int max_depth, yaml_document_t *doc,
                         mrt_error *err)
{
    mrt_yaml_load_options o = {what, max_depth, 0};
    return mrt_yaml_load_expert(path, text, len, &o, doc, err);
}

mrt_status mrt_yaml_load_expert(const char *path, const char *text, size_t len,
                                const mrt_yaml_load_options *o,
                                yaml_document_t *doc, mrt_error *err)
{
    yaml_parser_t y;
    yaml_document_t second;
    problem fail[2] = {{0}, {0}};
    composer c = {0};
    int depth = 0, ndocs = 0, have_second = 0;
    mrt_status st = MRT_OK;
    memset(doc, 0, sizeof *doc);
    memset(&second, 0, sizeof second);
    if (!yaml_parser_initialize(&y))
        return mrt_error_set(err, MRT_E_NOMEM, path, (mrt_mark){0},
                             "out of memory");
    yaml_parser_set_input_string(&y, (const unsigned char *)text, len);
    for (;;) {
        yaml_event_t e;
        if (!yaml_parser_parse(&y, &e)) {
            st = mrt_yaml_error(&y, path, text, len, err);
            goto fail;
        }
        yaml_event_type_t type = e.type;
        depth += type == YAML_SEQUENCE_START_EVENT ||
                 type == YAML_MAPPING_START_EVENT;
        depth -= type == YAML_SEQUENCE_END_EVENT ||
                 type == YAML_MAPPING_END_EVENT;
        ndocs += type == YAML_DOCUMENT_START_EVENT;
        if ((st = check_event(&e, depth, ndocs, o, path, err))) {
            yaml_event_delete(&e);
            goto fail;
        }
        if (type == YAML_DOCUMENT_START_EVENT) {
            /* the first document; the second only to see whether it
             * is empty (when the first is not and composed well) */
            if (ndocs == 2)
                have_second = !fail[0].problem &&
                              doc->nodes.top != doc->nodes.start;
            begin(&c,
                  ndocs == 1                  ? doc
                  : ndocs == 2 && have_second ? &second
                                              : NULL,
                  &fail[ndocs == 1 ? 0 : 1]);
        }
        int nomem = c.doc && !c.fail->problem && compose(&c, &e);
        yaml_event_delete(&e);
        if (nomem) {
            st = mrt_error_set(err, MRT_E_NOMEM, path, (mrt_mark){0},
                               "out of memory");
            goto fail;
        }
        if (type == YAML_STREAM_END_EVENT)
            break;
    }
    st = check_documents(&y, fail, have_second, &second, path, o->what, text,
                         len, err);
fail:
    forget_anchors(&c);
    free(c.anchor);
    free(c.open);
    yaml_document_delete(&second);
    yaml_parser_delete(&y);
    if (st != MRT_OK)
        yaml_document_delete(doc);
    return st;
}
