/*
 * name_index.h — names to ids in O(1): a hash index over names that are
 * kept elsewhere (the spec's tensors and dims, the keys of a YAML
 * mapping, the loader's scratch tables).
 *
 * The index stores only each entry's id and the hash of its name; a
 * lookup asks the caller for the current name of a candidate id
 * (name_of), so the names are never copied and cannot go stale in two
 * places.  An entry whose owner was renamed afterwards simply stops
 * matching its old name; add the id again under the new name.  Open
 * addressing with linear probing, at most half full: a lookup compares
 * about one name, an add is amortised O(1) (growing rehashes the stored
 * hashes, not the names).  A name has one entry: adding a name that some
 * id already has changes nothing, so a lookup finds the id that had it
 * first.  Every probe counts one step of work.h.
 *
 * A zeroed mrt_name_index is an empty index; mrt_name_index_free
 * releases one (and leaves it empty).  Ids are >= 0.
 */
#ifndef MRT_NAME_INDEX_H
#define MRT_NAME_INDEX_H

#include <stdint.h>

typedef struct mrt_name_slot {
    uint32_t hash; /* of the name, when the entry was added */
    int id;        /* id + 1; 0: an empty slot */
} mrt_name_slot;

typedef struct mrt_name_index {
    mrt_name_slot *slot; /* [cap] */
    int cap;             /* 0, or a power of two */
    int count;           /* entries (an id added twice counts twice) */
} mrt_name_index;

/* The current name of id, as the caller keeps it. */
typedef const char *(*mrt_name_of)(const void *ctx, int id);

/* FNV-1a, 64 bits. */
uint64_t mrt_name_hash(const char *name);
/* The id whose current name is name, or -1. */
int mrt_name_index_find(const mrt_name_index *ix, const char *name,
                        mrt_name_of name_of, const void *ctx);
/* Adds id under name, unless an id already has that name.  0, or -1 when
 * out of memory (the index is then unchanged). */
int mrt_name_index_add(mrt_name_index *ix, const char *name, int id,
                       mrt_name_of name_of, const void *ctx);
/* A copy of src into *dst (which it overwrites).  0, or -1 when out of
 * memory (*dst is then empty). */
int mrt_name_index_copy(mrt_name_index *dst, const mrt_name_index *src);
void mrt_name_index_free(mrt_name_index *ix);

#endif
