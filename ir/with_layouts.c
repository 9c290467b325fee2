/*
 * with_layouts.c — a program under layouts of its own for some tensors
 * (with_layouts.h), with no file read.
 *
 * It is the program under an alternative of `layouts:` whose rules are
 * the program's own and whose `tensors:` and `ops:` entries are the
 * layouts given: mrt_spec_derive_alt copies the IR, resolves the
 * tensors that follow the global rules again (to what they had), places
 * each entry's tensors (an op's entry covers the tensors it makes
 * inside) and makes the backward program follow.  That is what loading
 * the spec with those layouts written in makes: the loader gives an
 * entry's or op's `layout:` to the same tensors, and reverse mode copies
 * layouts into the backward program the same way.
 */
#include "with_layouts.h"

#include <stdlib.h>

#include "ir.h"

int mrt_spec_is_op_result(const mrt_spec *s, int t)
{
    if (!s || t < 0 || t >= s->ntensors)
        return 0;
    int p = s->tensor[t].producer;
    if (p < 0 || s->op[p].phase != MRT_PHASE_FORWARD || s->op[p].user <= 0)
        return 0;
    /* the ops of one op of the program are consecutive, its result the
     * last one's */
    return p + 1 == s->nops || s->op[p + 1].user != s->op[p].user;
}

mrt_status mrt_spec_with_layouts(const mrt_spec *s,
                                 const mrt_spec_own_layout *own, int n,
                                 mrt_spec **out, mrt_error *err)
{
    if (out)
        *out = NULL;
    if (!s || (!own && n) || n < 0 || !out)
        return mrt_error_set(err, MRT_E_USAGE, "", (mrt_mark){0, 0},
                             "mrt_spec_with_layouts needs a spec, the "
                             "layouts and an out pointer");
    mrt_spec_alt_entry *entry = calloc((size_t)n + 1, sizeof *entry);
    if (!entry)
        return mrt_ir_nomem(s, err);
    mrt_status st = MRT_OK;
    for (int i = 0; i < n && !st; i++) {
        int t = own[i].tensor,
            input = t >= 0 && t < s->ntensors && s->tensor[t].producer < 0;
        if (!input && !mrt_spec_is_op_result(s, t))
            st = mrt_error_set(err, MRT_E_USAGE, s->path, (mrt_mark){0, 0},
                               "mrt_spec_with_layouts: tensor %d is neither "
                               "an input nor an op's result",
                               t);
        entry[i] = (mrt_spec_alt_entry){t, input ? MRT_ALT_TENSOR : MRT_ALT_OP,
                                        (mrt_rule *)own[i].rules};
    }
    /* An alternative with the program's own rules and these entries. */
    mrt_spec_layout alt = {.rule = s->rule, .nentries = n, .entry = entry};
    if (!st)
        st = mrt_spec_derive_alt(s, &alt, out, err);
    free(entry);
    return st;
}
