/*
 * validate_products.c — the products of `validate`'s plans timed again
 * between its rounds of runs, and the plans priced at each shape's best.
 *
 * validate times the product shapes its plans run just before the runs
 * (mrt_machine_time_products: 8 rounds within a second or two) and
 * keeps each partitioning's fastest of `repeat` runs spread over the
 * next half minute.  On a shared host the two can see different
 * machines: a run of the examples whose products were timed during a
 * slow stretch of several seconds modeled zero's einsums at 34.2 ms
 * against 20.7 ms measured, every partitioning of the case at 0.62 to
 * 0.65 of its measured time (docs/calibration.md, round M).  So after
 * every round of runs each shape is timed once more (one repetition of
 * about 10 ms, in the probe's pools), and a shape's rate is its best
 * over those rounds and the timing before, as a partitioning's time is
 * its best over the rounds: rates and runs then come from the same
 * minutes.  The plans that ran are then priced again at those rates
 * (mrt_plan_reprice_products), not planned again.
 */
#include <stdlib.h>

#include "validate.h"

mrt_status mrt_val_products_create(mrt_validation *v,
                                   const mrt_calib_pools *pools)
{
    v->nrows = 0;
    v->rows = calloc(MRT_PROFILE_PRODUCT_ROWS, sizeof *v->rows);
    for (int i = 0; v->rows && i < v->nalts; i++)
        if (v->alt[i].same_as < 0 && v->alt[i].runner)
            v->nrows = mrt_plan_products(v->alt[i].plan, 1, v->rows, v->nrows,
                                         MRT_PROFILE_PRODUCT_ROWS);
    int ok = v->rows != NULL;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, v->comm);
    mrt_status st = ok ? mrt_calib_products_create(v->comm, pools, v->nrows,
                                                   v->rows, &v->timer)
                       : MRT_E_NOMEM;
    if (st != MRT_OK) {
        free(v->rows);
        v->rows = NULL;
        v->nrows = 0;
    }
    return st;
}

void mrt_val_products_round(mrt_validation *v)
{
    if (v->timer) {
        mrt_calib_products_round(v->comm, v->timer);
        v->product_rounds++;
    }
}

mrt_status mrt_val_products_reprice(mrt_validation *v, mrt_error *err)
{
    if (!v->timer)
        return MRT_OK;
    mrt_calib_products_rates(v->timer, v->rows);
    mrt_status st = MRT_OK;
    for (int i = 0; st == MRT_OK && i < v->nalts; i++) {
        mrt_val_alt *a = &v->alt[i];
        if (a->same_as >= 0 || !a->runner)
            continue;
        mrt_profile *p = &a->plan->profile;
        int changed = 0;
        for (int r = 0; r < v->nrows; r++) {
            const mrt_product_row *w = &v->rows[r];
            const mrt_product_row *had = mrt_profile_product(
                p, w->dtype, w->form, w->m, w->n, w->k);
            /* the faster of the timing before the runs and of theirs */
            if (w->flops > 0 && (!had || w->flops > had->flops))
                changed += mrt_profile_set_product(p, *w);
        }
        if (changed)
            st = mrt_plan_reprice_products(a->plan, a->spec, err);
    }
    return st;
}

void mrt_val_products_destroy(mrt_validation *v)
{
    mrt_calib_products_destroy(v->timer);
    v->timer = NULL;
    free(v->rows);
    v->rows = NULL; /* (nrows stays, for the report) */
}
