/*
 * plan_products.c — the product shapes a plan runs, each once: what
 * `meshrt validate` times before it prices the plans (runtime/
 * calibrate_products.c), so that each product is priced at its own
 * shape's measured rate (cost/cost_gemm.c).
 */
#include "plan.h"

static int same_shape(const mrt_product_row *a, const mrt_product_row *b)
{
    return a->m == b->m && a->n == b->n && a->k == b->k && a->form == b->form &&
           a->dtype == b->dtype;
}

int mrt_plan_products(const mrt_plan *p, int all, mrt_product_row *rows, int n,
                      int max)
{
    for (int i = 0; p && i < p->nsteps && n < max; i++) {
        mrt_product_row r;
        if (!mrt_step_product(p, &p->step[i], &r) ||
            (!all &&
             mrt_profile_product(&p->profile, r.dtype, r.form, r.m, r.n, r.k)))
            continue;
        int seen = 0;
        for (int j = 0; j < n && !seen; j++)
            seen = same_shape(&rows[j], &r);
        if (!seen)
            rows[n++] = r;
    }
    return n;
}
