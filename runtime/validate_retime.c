/*
 * validate_retime.c — the products of `validate`'s plans and the
 * profile's collective rows timed again between its rounds of runs, and
 * the plans priced at those rates.
 *
 * validate times the product shapes its plans run and the collective
 * rows just before the runs (mrt_machine_time_products and
 * _collectives: within a second or two) and keeps each partitioning's
 * fastest of `repeat` runs spread over the next half minute.  On a
 * shared host the two can see different machines: a run of the examples
 * whose products were timed during a slow stretch of several seconds
 * modeled zero's einsums at 34.2 ms against 20.7 ms measured, every
 * partitioning of the case at 0.62 to 0.65 of its measured time; and
 * collective rows timed in a slow stretch modeled transformer_einsums'
 * reduce-scatters at 12.8 ms against 4.1 ms (docs/calibration.md, round
 * N).  So after every round of runs each product shape is timed once
 * more (one repetition of about 10 ms, in the probe's pools) and each
 * collective row once; a shape's rate is its best over those rounds and
 * the timing before, as a partitioning's time is its best over the
 * rounds, and a collective row's time the median over the rounds, as
 * calibrate's rows are medians (from 3 rounds on; fewer keep the rows
 * timed before).  Rates and runs then come from the same minutes.  The
 * plans that ran are priced again at those rates (mrt_plan_reprice),
 * not planned again.
 */
#include <stdlib.h>

#include "validate.h"

#define COLL_ROUNDS_MIN 3 /* rounds before the collective rows change */

/* The plans that run (not one an earlier partitioning has), into
 * plans; their count. */
static int running(const mrt_validation *v, mrt_plan **plans)
{
    int n = 0;
    for (int i = 0; i < v->nalts; i++)
        if (v->alt[i].same_as < 0 && v->alt[i].runner)
            plans[n++] = v->alt[i].plan;
    return n;
}

mrt_status mrt_val_retime_create(mrt_validation *v,
                                 const mrt_calib_pools *pools)
{
    mrt_plan **plans = calloc((size_t)v->nalts + 1, sizeof *plans);
    v->rows = calloc(MRT_PROFILE_PRODUCT_ROWS, sizeof *v->rows);
    int ok = plans && v->rows;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, v->comm);
    mrt_status st = ok ? MRT_OK : MRT_E_NOMEM;
    int n = ok ? running(v, plans) : 0;
    v->nrows = 0;
    for (int i = 0; i < n; i++)
        v->nrows = mrt_plan_products(plans[i], 1, v->rows, v->nrows,
                                     MRT_PROFILE_PRODUCT_ROWS);
    if (st == MRT_OK && v->products > 0 && pools)
        st = mrt_calib_products_create(v->comm, pools, v->nrows, v->rows,
                                       &v->timer);
    mrt_error none = {0};
    if (st == MRT_OK && v->collectives > 0 && n) {
        st = mrt_calib_collectives_create(v->comm, plans, n, v->repeat,
                                          &v->coll_timer, &none);
        v->coll_profile = &plans[0]->profile; /* whose rows it indexes */
    }
    free(plans);
    if (st != MRT_OK)
        mrt_val_retime_destroy(v);
    return st;
}

void mrt_val_retime_round(mrt_validation *v)
{
    if (v->timer) {
        mrt_calib_products_round(v->comm, v->timer);
        v->product_rounds++;
    }
    if (v->coll_timer) {
        mrt_calib_collectives_round(v->coll_timer, v->coll_profile);
        v->coll_rounds++;
    }
}

/* The faster of each plan's own product rows and the shapes' bests into
 * its profile; 1 when any changed. */
static int faster_products(mrt_validation *v, mrt_profile *p)
{
    int changed = 0;
    for (int r = 0; r < v->nrows; r++) {
        const mrt_product_row *w = &v->rows[r];
        const mrt_product_row *had = mrt_profile_product(p, w->dtype, w->form,
                                                         w->m, w->n, w->k);
        if (w->flops > 0 && (!had || w->flops > had->flops))
            changed |= mrt_profile_set_product(p, *w);
    }
    return changed;
}

mrt_status mrt_val_retime_reprice(mrt_validation *v, mrt_error *err)
{
    mrt_plan **plans = calloc((size_t)v->nalts + 1, sizeof *plans);
    if (!plans)
        return mrt_error_set(err, MRT_E_NOMEM, "", (mrt_mark){0},
                             "out of memory");
    int n = running(v, plans), colls = 0;
    if (v->timer)
        mrt_calib_products_rates(v->timer, v->rows);
    if (v->coll_rounds >= COLL_ROUNDS_MIN)
        colls = mrt_calib_collectives_set(v->coll_timer, plans, n);
    v->colls_retimed = colls;
    mrt_status st = MRT_OK;
    for (int i = 0; st == MRT_OK && i < v->nalts; i++) {
        mrt_val_alt *a = &v->alt[i];
        if (a->same_as >= 0 || !a->runner)
            continue;
        int changed = v->timer ? faster_products(v, &a->plan->profile) : 0;
        if (changed || colls)
            st = mrt_plan_reprice(a->plan, a->spec, err);
    }
    free(plans);
    return st;
}

void mrt_val_retime_destroy(mrt_validation *v)
{
    mrt_calib_products_destroy(v->timer);
    v->timer = NULL;
    mrt_calib_collectives_destroy(v->coll_timer);
    v->coll_timer = NULL;
    free(v->rows);
    v->rows = NULL; /* (nrows stays, for the report) */
}
