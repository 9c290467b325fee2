/*
 * show_value.c — the picture of one value of a plan: which mesh
 * coordinate holds which block of the tensor.
 *
 * Two views of the same facts, each block with its number (#k, row
 * major over the tensor's blocks) and its colour in SVG:
 *   the tensor  its blocks, a grid over its last two dims (one grid per
 *               block of the dims before them: a grid of 2-D slices),
 *               each with its extents, bytes and the ranks holding it;
 *               SVG cells in proportion to the extents, so uneven
 *               blocks show
 *   the mesh    its ranks, a grid over its last two axes (one grid per
 *               coordinate of the axes before them), each with the block
 *               it holds; "+" marks an addend of a pending sum
 * A block held by several ranks is replicated over the axes that split
 * nothing, or a pending sum over the value's partial axes (the block is
 * the sum of the shards of the ranks that differ only along those):
 * the header says which.  Blocks come from mrt_plan_get_shard, so the
 * block rule is layout.c's alone.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "show.h"

typedef struct span {
    int64_t start, extent;
} span;

typedef struct blocks {
    mrt_plan_value_info vi;
    mrt_mesh_info mi;
    int nd;
    int64_t nranks, nblocks;
    int nb[MRT_API_MAX_DIMS];    /* blocks along each dim */
    span *dim[MRT_API_MAX_DIMS]; /* [nb[d]], by start */
    int *idx;                    /* [nranks * nd]: each rank's block, per dim */
    int64_t *block_of;           /* [nranks] */
} blocks;

static int by_start(const void *a, const void *b)
{
    const span *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (x->extent > y->extent) - (x->extent < y->extent);
}

static void blocks_free(blocks *b)
{
    for (int d = 0; d < b->nd; d++)
        free(b->dim[d]);
    free(b->idx);
    free(b->block_of);
}

/* The distinct blocks along dim d (from every rank's shard in sh). */
static int dim_blocks(blocks *b, int d, const span *sh)
{
    span *s = malloc((size_t)b->nranks * sizeof *s);
    if (!s)
        return -1;
    for (int64_t r = 0; r < b->nranks; r++)
        s[r] = sh[r * b->nd + d];
    qsort(s, (size_t)b->nranks, sizeof *s, by_start);
    int n = 0;
    for (int64_t r = 0; r < b->nranks; r++)
        if (n == 0 || by_start(&s[n - 1], &s[r]) != 0)
            s[n++] = s[r];
    b->dim[d] = s;
    b->nb[d] = n;
    for (int64_t r = 0; r < b->nranks; r++) {
        span *at = bsearch(&sh[r * b->nd + d], s, (size_t)n, sizeof *s,
                           by_start);
        b->idx[r * b->nd + d] = (int)(at - s);
    }
    return 0;
}

static int blocks_make(blocks *b, const mrt_plan *plan, int v)
{
    memset(b, 0, sizeof *b);
    if (mrt_plan_get_value(plan, v, &b->vi, NULL) != MRT_OK)
        return -1;
    mrt_plan_get_mesh(plan, &b->mi);
    b->nd = b->vi.ndims;
    b->nranks = b->mi.nranks;
    size_t n = (size_t)b->nranks * (size_t)(b->nd ? b->nd : 1);
    span *sh = malloc(n * sizeof *sh);
    b->idx = calloc(n, sizeof *b->idx);
    b->block_of = calloc((size_t)b->nranks, sizeof *b->block_of);
    int ok = sh && b->idx && b->block_of;
    for (int64_t r = 0; ok && r < b->nranks; r++) {
        int64_t st[MRT_API_MAX_DIMS], ex[MRT_API_MAX_DIMS];
        mrt_plan_get_shard(plan, v, r, st, ex, NULL);
        for (int d = 0; d < b->nd; d++)
            sh[r * b->nd + d] = (span){st[d], ex[d]};
    }
    for (int d = 0; ok && d < b->nd; d++)
        ok = dim_blocks(b, d, sh) == 0;
    free(sh);
    b->nblocks = 1;
    for (int d = 0; d < b->nd; d++)
        b->nblocks *= b->nb[d];
    for (int64_t r = 0; ok && r < b->nranks; r++)
        for (int d = 0; d < b->nd; d++)
            b->block_of[r] = b->block_of[r] * b->nb[d] + b->idx[r * b->nd + d];
    return ok ? 0 : -1;
}

/* The mesh axes in mask, "data,model". */
static const char *axes_str(const blocks *b, unsigned mask, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int a = 0; a < b->mi.naxes; a++)
        if (mask & (1u << a))
            len += (size_t)snprintf(buf + len, len < n ? n - len : 0, "%s%s",
                                    len ? "," : "", b->mi.name[a]);
    return buf;
}

/* Axes of size > 1 that split no dim and carry no pending sum. */
static unsigned replicated_axes(const blocks *b)
{
    unsigned used = b->vi.partial;
    for (int d = 0; d < b->nd; d++)
        for (int k = 0; k < b->vi.naxes[d]; k++)
            used |= 1u << b->vi.axis[d][k];
    unsigned rep = 0;
    for (int a = 0; a < b->mi.naxes; a++)
        if (!(used & (1u << a)) && b->mi.size[a] > 1)
            rep |= 1u << a;
    return rep;
}

/* The ranks holding block id, "0-3,8,9", cut short past about 40
 * characters. */
static void holders(const blocks *b, int64_t id, char *buf, size_t n)
{
    size_t len = 0;
    int64_t count = 0;
    buf[0] = '\0';
    for (int64_t r = 0; r < b->nranks; r++) {
        if (b->block_of[r] != id)
            continue;
        int64_t end = r; /* a run of consecutive ranks r..end */
        while (end + 1 < b->nranks && b->block_of[end + 1] == id)
            end++;
        count += end - r + 1;
        if (len <= 40 && end >= r + 2)
            len += (size_t)snprintf(buf + len, len < n ? n - len : 0,
                                    "%s%" PRId64 "-%" PRId64, len ? "," : "", r,
                                    end);
        else
            for (int64_t q = r; q <= end && len <= 40; q++)
                len += (size_t)snprintf(buf + len, len < n ? n - len : 0,
                                        "%s%" PRId64, len ? "," : "", q);
        r = end;
    }
    if (len > 40)
        snprintf(buf + len, len < n ? n - len : 0, ",... (%" PRId64 " ranks)",
                 count);
}

/* The ranks holding block id as the mesh coordinates they share,
 * "64 ranks: cols=3" ("all 8 ranks" when they share none), when there
 * are more than 4 of them and they are every rank with those
 * coordinates: 1 if written. */
static int holders_by_coords(const blocks *b, int64_t id, char *buf, size_t n)
{
    int64_t count = 0, varying = 1;
    int64_t c0[MRT_API_MAX_AXES], c[MRT_API_MAX_AXES];
    unsigned vary = 0;
    for (int64_t r = 0; r < b->nranks; r++) {
        if (b->block_of[r] != id)
            continue;
        count++;
        int64_t rest = r;
        for (int a = b->mi.naxes - 1; a >= 0; a--) {
            c[a] = rest % b->mi.size[a];
            rest /= b->mi.size[a];
            if (count == 1)
                c0[a] = c[a];
            else if (c[a] != c0[a])
                vary |= 1u << a;
        }
    }
    for (int a = 0; a < b->mi.naxes; a++)
        varying *= vary & (1u << a) ? b->mi.size[a] : 1;
    if (count <= 4 || varying != count)
        return 0;
    size_t len = (size_t)snprintf(buf, n, "%s%" PRId64 " ranks",
                                  count == b->nranks ? "all " : "", count);
    const char *sep = ": ";
    for (int a = 0; a < b->mi.naxes; a++) {
        if ((vary & (1u << a)) || b->mi.size[a] == 1)
            continue;
        len += (size_t)snprintf(buf + len, len < n ? n - len : 0,
                                "%s%s=%" PRId64, sep, b->mi.name[a], c0[a]);
        sep = ",";
    }
    return 1;
}

/* The extents of block id, "32x64" ("scalar" for no dims). */
static void block_shape(const blocks *b, int64_t id, char *buf, size_t n,
                        int64_t *elements)
{
    size_t len = 0;
    int64_t e = 1, rest = id;
    int bi[MRT_API_MAX_DIMS];
    for (int d = b->nd - 1; d >= 0; d--) {
        bi[d] = (int)(rest % b->nb[d]);
        rest /= b->nb[d];
    }
    buf[0] = '\0';
    for (int d = 0; d < b->nd; d++) {
        int64_t x = b->dim[d][bi[d]].extent;
        e *= x;
        len += (size_t)snprintf(buf + len, len < n ? n - len : 0, "%s%" PRId64,
                                d ? "x" : "", x);
    }
    if (b->nd == 0)
        snprintf(buf, n, "scalar");
    *elements = e;
}

static void header(mrt_draw_page *pg, const blocks *b, const char *title)
{
    char shape[512] = "", axes[256], bytes[32];
    size_t len = 0;
    for (int d = 0; d < b->nd; d++)
        len += (size_t)snprintf(shape + len, sizeof shape - len,
                                "%s%s=%" PRId64, d ? ", " : "", b->vi.dim[d],
                                b->vi.shape[d]);
    if (title)
        mrt_draw_page_line(pg, 0, "%s", title);
    mrt_draw_page_line(pg, title ? 2 : 0, "%s%s[%s]  %s",
                       title ? "" : b->vi.name, title ? "" : " ", shape,
                       b->vi.layout);
    len = 0;
    for (int a = 0; a < b->mi.naxes; a++)
        len += (size_t)snprintf(axes + len, sizeof axes - len, "%s%s: %" PRId64,
                                a ? ", " : "", b->mi.name[a], b->mi.size[a]);
    mrt_draw_page_line(
        pg, 2,
        "mesh {%s} = %" PRId64 " ranks; %" PRId64 " block%s; largest shard %s",
        axes, b->nranks, b->nblocks, b->nblocks == 1 ? "" : "s",
        mrt_cli_fmt_bytes((double)b->vi.shard_bytes, bytes, sizeof bytes));
    unsigned rep = replicated_axes(b);
    if (rep)
        mrt_draw_page_line(pg, 2,
                           "replicated over %s: ranks that differ only "
                           "along it hold the same block",
                           axes_str(b, rep, axes, sizeof axes));
    if (b->vi.partial)
        mrt_draw_page_line(pg, 2,
                           "pending sum over %s: each rank holds an addend "
                           "(+); a block is the sum of its ranks' shards "
                           "along %s",
                           axes_str(b, b->vi.partial, axes, sizeof axes), axes);
}

/* The cell of block id in the tensor view. */
static void tensor_cell(mrt_draw_page *pg, const blocks *b, mrt_draw_grid *g,
                        int row, int col, int64_t id)
{
    char shape[256], who[128], bytes[32];
    int64_t e;
    block_shape(b, id, shape, sizeof shape, &e);
    int coords = holders_by_coords(b, id, who, sizeof who);
    if (!coords)
        holders(b, id, who, sizeof who);
    mrt_draw_grid_set(
        pg, g, row, col, "#%" PRId64 " %s\n%s%s%s%s\n%s", id, shape,
        coords ? "" : "rank",
        coords               ? ""
        : strpbrk(who, ",-") ? "s "
                             : " ",
        who, b->vi.partial ? " (+)" : "",
        mrt_cli_fmt_bytes((double)(e * b->vi.elsize), bytes, sizeof bytes));
    g->shade[row * g->ncols + col] = (int)(id % 1000000);
}

/* Labels and weights of grid axis `rows` (or columns) along dim d. */
static void dim_track(mrt_draw_page *pg, const blocks *b, mrt_draw_grid *g,
                      int d, int rows)
{
    for (int k = 0; k < b->nb[d]; k++) {
        const span *s = &b->dim[d][k];
        double w = s->extent > 0 ? (double)s->extent : 0.25;
        if (rows) {
            mrt_draw_grid_set(pg, g, k, -1, "%s %" PRId64 ":%" PRId64,
                              b->vi.dim[d], s->start, s->start + s->extent);
            g->row_weight[k] = w;
        } else {
            mrt_draw_grid_set(pg, g, -1, k, "%s %" PRId64 ":%" PRId64,
                              b->vi.dim[d], s->start, s->start + s->extent);
            g->col_weight[k] = w;
        }
    }
}

/* One 2-D slice: blocks of the last two dims (one row for 1-D), the
 * leading dims at their blocks `lead` (an id prefix). */
static void tensor_slice(mrt_draw_page *pg, const blocks *b, int64_t lead)
{
    int nd = b->nd, rd = nd >= 2 ? nd - 2 : -1, cd = nd >= 1 ? nd - 1 : -1;
    int nr = rd >= 0 ? b->nb[rd] : 1, nc = cd >= 0 ? b->nb[cd] : 1;
    mrt_draw_grid *g = mrt_draw_page_grid(pg, 4, nr, nc);
    if (!g)
        return;
    if (rd >= 0)
        dim_track(pg, b, g, rd, 1);
    if (cd >= 0)
        dim_track(pg, b, g, cd, 0);
    for (int r = 0; r < nr; r++)
        for (int c = 0; c < nc; c++)
            tensor_cell(pg, b, g, r, c, (lead * nr + r) * nc + c);
}

static void tensor_view(mrt_draw_page *pg, const blocks *b)
{
    int nd = b->nd, lead = nd > 2 ? nd - 2 : 0;
    int64_t nslices = 1;
    for (int d = 0; d < lead; d++)
        nslices *= b->nb[d];
    mrt_draw_page_line(pg, 2, "the tensor's blocks%s:",
                       nd > 2 ? ", one grid per block of its leading dims"
                              : "");
    for (int64_t s = 0; s < nslices; s++) {
        if (lead) {
            char at[512] = "";
            size_t len = 0;
            int64_t rest = s;
            int bi[MRT_API_MAX_DIMS];
            for (int d = lead - 1; d >= 0; d--) {
                bi[d] = (int)(rest % b->nb[d]);
                rest /= b->nb[d];
            }
            for (int d = 0; d < lead; d++)
                len += (size_t)snprintf(
                    at + len, sizeof at - len, "%s%s %" PRId64 ":%" PRId64,
                    d ? ", " : "", b->vi.dim[d], b->dim[d][bi[d]].start,
                    b->dim[d][bi[d]].start + b->dim[d][bi[d]].extent);
            mrt_draw_page_line(pg, 4, "%s:", at);
        }
        tensor_slice(pg, b, s);
    }
}

/* One grid of ranks: the last two mesh axes (one row for one axis), the
 * axes before them at the coordinates of `outer` (a rank prefix). */
static void mesh_grid(mrt_draw_page *pg, const blocks *b, int64_t outer)
{
    int na = b->mi.naxes, ra = na >= 2 ? na - 2 : -1,
        ca = na >= 1 ? na - 1 : -1;
    int nr = ra >= 0 ? (int)b->mi.size[ra] : 1;
    int nc = ca >= 0 ? (int)b->mi.size[ca] : 1;
    mrt_draw_grid *g = mrt_draw_page_grid(pg, 4, nr, nc);
    if (!g)
        return;
    for (int r = 0; ra >= 0 && r < nr; r++)
        mrt_draw_grid_set(pg, g, r, -1, "%s=%d", b->mi.name[ra], r);
    for (int c = 0; ca >= 0 && c < nc; c++)
        mrt_draw_grid_set(pg, g, -1, c, "%s=%d", b->mi.name[ca], c);
    for (int r = 0; r < nr; r++)
        for (int c = 0; c < nc; c++) {
            int64_t rank = (outer * nr + r) * nc + c, id = b->block_of[rank];
            mrt_draw_grid_set(pg, g, r, c, "r%" PRId64 " #%" PRId64 "%s", rank,
                              id, b->vi.partial ? "+" : "");
            g->shade[r * nc + c] = (int)(id % 1000000);
        }
}

static void mesh_view(mrt_draw_page *pg, const blocks *b)
{
    int na = b->mi.naxes, lead = na > 2 ? na - 2 : 0;
    int64_t nouter = 1;
    for (int a = 0; a < lead; a++)
        nouter *= b->mi.size[a];
    mrt_draw_page_line(pg, 2, "the mesh: rank rN holds block #k%s:",
                       na > 2 ? ", one grid per coordinate of its leading axes"
                              : "");
    for (int64_t o = 0; o < nouter; o++) {
        if (lead) {
            char at[512] = "";
            size_t len = 0;
            int64_t rest = o;
            int64_t co[MRT_API_MAX_AXES];
            for (int a = lead - 1; a >= 0; a--) {
                co[a] = rest % b->mi.size[a];
                rest /= b->mi.size[a];
            }
            for (int a = 0; a < lead; a++)
                len += (size_t)snprintf(at + len, sizeof at - len,
                                        "%s%s=%" PRId64, a ? ", " : "",
                                        b->mi.name[a], co[a]);
            mrt_draw_page_line(pg, 4, "%s:", at);
        }
        mesh_grid(pg, b, o);
    }
}

int mrt_show_value(mrt_draw_page *page, const mrt_plan *plan, int v,
                   const char *title)
{
    blocks b;
    if (blocks_make(&b, plan, v) != 0) {
        blocks_free(&b);
        return -1;
    }
    header(page, &b, title);
    if (b.nblocks > MRT_SHOW_MAX_CELLS)
        mrt_draw_page_line(page, 2,
                           "(%" PRId64 " blocks: too many to draw, over %d)",
                           b.nblocks, MRT_SHOW_MAX_CELLS);
    else
        tensor_view(page, &b);
    if (b.nranks > MRT_SHOW_MAX_CELLS)
        mrt_draw_page_line(page, 2,
                           "(%" PRId64 " ranks: too many to draw, over %d)",
                           b.nranks, MRT_SHOW_MAX_CELLS);
    else
        mesh_view(page, &b);
    blocks_free(&b);
    return page->failed ? -1 : 0;
}
