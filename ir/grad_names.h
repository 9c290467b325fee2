/*
 * grad_names.h — the names ir/ makes up: the tensors inside a composite
 * op's expansion ("probs:max"), the update of a parameter ("w:next"), the
 * gradients ("grad:w") and the backward program's pieces (grad.c):
 * "grad:<t>:<what>" with a number appended when the name is taken
 * (`grad:h:d`, `grad:h:d2`, ...; docs/spec.md), each name the first one
 * free.
 *
 * Trying "grad:h:d", "grad:h:d2", ... until one is free costs as many
 * lookups as the pieces already made, which is quadratic for a tensor read
 * by many ops (a weight shared by every layer).  So each stem remembers
 * the next number never handed out and the numbers handed out whose
 * tensor has since been renamed (a complete gradient takes the name
 * "grad:<t>"), which are free again: a new name is the smallest of those,
 * in O(log n).  The spec is still asked whether a name is free, so a name
 * some other tensor has is skipped.
 *
 * Every made-up name comes from mrt_ir_name, which keeps it unique
 * whatever the length of the name it is made from: the whole name when it
 * fits, else the start of the base name, '~' and 8 hex digits of a hash of
 * the whole name ("grad:" + 60 characters becomes
 * "grad:<the first 49>~1f3a9c07"), and when that is taken too, the
 * next hash value until one is free.  User names cannot hold ':' or '~',
 * so a made-up name never meets a user's.
 */
#ifndef MRT_GRAD_NAMES_H
#define MRT_GRAD_NAMES_H

#include "name_index.h"
#include "spec.h"

/* Into name: prefix, base and suffix, in at most MRT_NAME_MAX - 1 -
 * reserve characters (reserve: room kept for digits appended later),
 * shortened as above when they do not fit; with s, a name no tensor of s
 * has (without s: the name, free or not, the same for the same strings).
 * prefix and suffix are short (a few characters). */
void mrt_ir_name(const mrt_spec *s, const char *prefix, const char *base,
                 const char *suffix, int reserve, char name[MRT_NAME_MAX]);

/* The room mrt_grad_names_make needs after a stem for its numbers. */
#define MRT_GRAD_NUMBER_ROOM 11

typedef struct mrt_grad_stem mrt_grad_stem;

/* Zeroed: empty.  Freed with mrt_grad_names_free. */
typedef struct mrt_grad_names {
    mrt_grad_stem *stem; /* [nstems] */
    int nstems, cap_stems;
    mrt_name_index index; /* stem -> index in stem[] */
} mrt_grad_names;

/* Into name: stem with the number `first` appended (none for 1), or the
 * smallest number above it free in s; with first = 1, a number freed by
 * mrt_grad_names_release first.  0, or -1 when out of memory. */
int mrt_grad_names_make(mrt_grad_names *g, const mrt_spec *s, const char *stem,
                        int first, char name[MRT_NAME_MAX]);
/* A tensor named `name` by mrt_grad_names_make is renamed: its number is
 * free again.  0, or -1 when out of memory. */
int mrt_grad_names_release(mrt_grad_names *g, const char *name);
void mrt_grad_names_free(mrt_grad_names *g);

#endif
