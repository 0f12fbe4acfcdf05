/* SPDX-License-Identifier: MIT */
/* Fitting collective, GEMM and HBM measurements.
 *
 * Collectives (nccl-tests doc/PERFORMANCE.md): with S the whole array and f(op, n) the bus
 * factor (2(n-1)/n AllReduce, (n-1)/n AllGather and ReduceScatter, 1 Broadcast), a ring
 * moves x = f*S bytes through every rank's link, so t(S) = alpha + x / B_bus, linear in x.
 * Weighted least squares with weights 1/t^2 minimises sum((t - pred)^2 / t^2), the squared
 * relative error, so 8-byte and 1-GiB points count alike.
 *
 * Size dependence. Real NCCL switches protocol and channel count with size, so one
 * alpha-beta line can miss the middle sizes. Criterion: the single fit's worst relative
 * error is above 5% AND a piecewise model (two alpha-beta segments, the break at the
 * measured size that minimises chi^2, at least 3 points per side) lowers chi^2
 * significantly: the F-test of the nested models (2 against 5 parameters, the break
 * counted) gives p < 0.01 (gsl_cdf_fdist_Q). Pure noise passes the F-test about once in a
 * hundred and then only when its spread already exceeds 5%.
 *
 * Network (the simulator's link figures): a ring of n ranks takes steps = 2(n-1)
 * (AllReduce) or n-1 (AllGather, ReduceScatter) and each step pays the per-step latency,
 * so step latency = alpha / steps; B_bus is the bandwidth each rank's ring link sustains.
 * Intra comes from an intra-scope group, else a world group on one node; inter from an
 * inter-scope group (one rank per node: B_bus is the GPU's NIC share), else a world group
 * on several nodes, where c = ranks/nodes GPUs of a node share its NICs, as the model's
 * flat ring does (coll/analytic.c: bw = min(B', c*B)), so B_inter = B_bus / c. A piecewise
 * group gives its latency from the small-size segment and its bandwidth from the
 * large-size one, each where it dominates. Preference: AllReduce, ReduceScatter,
 * AllGather; a dedicated scope before a world group; then more ranks.
 *
 * GEMM: the rate is total FLOPs (2MNK per row) over total time of the rows of one dtype,
 * the rate of the set as a whole. HBM: the median bytes/time of the adam rows of 256 MiB
 * and more (below that the launch cost is a visible part of the time). */
#include "calib/calib-fit.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_multifit.h>
#include <math.h>
#include <string.h>

#include "core/error.h"
#include "core/limits.h"
#include "core/stats.h"

G_DEFINE_AUTOPTR_CLEANUP_FUNC(gsl_matrix, gsl_matrix_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(gsl_vector, gsl_vector_free)

#define SIZE_DEPENDENCE_MIN_ERR 0.05
#define SIZE_DEPENDENCE_P 0.01

double paro_calib_coll_steps(ParoCollKind op, gint64 n)
{
    return op == PARO_COLL_ALLREDUCE ? 2.0 * (double)(n - 1) : (double)(n - 1);
}

double paro_alpha_beta_predict_s(const ParoAlphaBeta *ab, double x)
{
    return ab->alpha_s + x / ab->bus_Bps;
}

/* Quality figures of a fitted line over the points. */
static void quality(ParoAlphaBeta *ab, const double *x, const double *t, guint n)
{
    g_autofree double *err = g_new(double, n);
    double sw = 0, swt = 0, chi2 = 0, tss = 0;
    for (guint i = 0; i < n; i++) {
        double w = 1 / (t[i] * t[i]), r = (paro_alpha_beta_predict_s(ab, x[i]) - t[i]) / t[i];
        sw += w, swt += w * t[i];
        chi2 += r * r;
        err[i] = fabs(r);
        ab->max_err = fmax(ab->max_err, err[i]);
    }
    double mean = swt / sw;
    for (guint i = 0; i < n; i++)
        tss += (t[i] - mean) * (t[i] - mean) / (t[i] * t[i]);
    ab->chi2 = chi2;
    ab->r2 = tss > 0 ? 1 - chi2 / tss : 1;
    ab->median_err = paro_stats_median(err, n); /* n >= 2: a fit needs two points */
    ab->points = n;
}

gboolean paro_calib_fit_alpha_beta(const double *x, const double *t_s, guint n, ParoAlphaBeta *out,
                                   GError **error)
{
    g_return_val_if_fail(n >= 2, FALSE);
    *out = (ParoAlphaBeta){0};
    /* Times in us and sizes in MB keep the normal equations well scaled. */
    g_autoptr(gsl_matrix) X = gsl_matrix_alloc(n, 2);
    g_autoptr(gsl_vector) y = gsl_vector_alloc(n), w = gsl_vector_alloc(n), c = gsl_vector_alloc(2);
    g_autoptr(gsl_matrix) cov = gsl_matrix_alloc(2, 2);
    for (guint i = 0; i < n; i++) {
        double t_us = t_s[i] * 1e6;
        gsl_matrix_set(X, i, 0, 1.0);
        gsl_matrix_set(X, i, 1, x[i] / 1e6);
        gsl_vector_set(y, i, t_us);
        gsl_vector_set(w, i, 1 / (t_us * t_us));
    }
    gsl_multifit_linear_workspace *ws = gsl_multifit_linear_alloc(n, 2);
    double chisq;
    int status = gsl_multifit_wlinear(X, w, y, c, cov, &chisq, ws);
    gsl_multifit_linear_free(ws);
    if (status != GSL_SUCCESS) {
        g_set_error(error, PARO_CALIB_ERROR, PARO_CALIB_ERROR_FIT, "alpha-beta fit failed: %s",
                    gsl_strerror(status));
        return FALSE;
    }
    double alpha_us = gsl_vector_get(c, 0), beta = gsl_vector_get(c, 1); /* us per MB */
    /* The slope's standard error, the covariance scaled by the residuals' variance (the
     * weights are relative, not known variances): how well the data determine B_bus. */
    double beta_se = n > 2 ? sqrt(gsl_matrix_get(cov, 1, 1) * chisq / (double)(n - 2)) : INFINITY;
    if (alpha_us < 0) {
        /* A negative latency means nothing; the best line through the origin, by the same
         * weights: beta = sum(w x t) / sum(w x^2). */
        double num = 0, den = 0;
        for (guint i = 0; i < n; i++) {
            double xi = x[i] / 1e6, ti = t_s[i] * 1e6, wi = 1 / (ti * ti);
            num += wi * xi * ti, den += wi * xi * xi;
        }
        alpha_us = 0, beta = den > 0 ? num / den : 0;
        out->alpha_fixed = TRUE;
    }
    if (!(beta > 0)) {
        g_set_error(error, PARO_CALIB_ERROR, PARO_CALIB_ERROR_FIT,
                    "no bandwidth term: the time does not grow with the size");
        return FALSE;
    }
    out->alpha_s = alpha_us * 1e-6;
    out->bus_Bps = 1e6 / (beta * 1e-6); /* beta us per 1e6 B -> B/s */
    out->beta_rel_err = beta_se / beta;
    quality(out, x, t_s, n);
    return TRUE;
}

/* Sorts the points by size (indices), so the piecewise break splits small from large. */
typedef struct {
    double bytes, x, t;
} Pt;

static int cmp_pt(const void *a, const void *b)
{
    double x = ((const Pt *)a)->bytes, y = ((const Pt *)b)->bytes;
    return x < y ? -1 : x > y;
}

static void try_piecewise(ParoCollFit *g, const Pt *pts, guint n)
{
    if (n < 8 || g->fit.max_err <= SIZE_DEPENDENCE_MIN_ERR)
        return;
    g_autofree double *x = g_new(double, n), *t = g_new(double, n);
    for (guint i = 0; i < n; i++)
        x[i] = pts[i].x, t[i] = pts[i].t;
    double best = INFINITY;
    guint best_b = 0;
    ParoAlphaBeta lo, hi;
    for (guint b = 3; b + 3 <= n; b++) {
        if (pts[b - 1].bytes == pts[b].bytes)
            continue;
        if (!paro_calib_fit_alpha_beta(x, t, b, &lo, NULL) ||
            !paro_calib_fit_alpha_beta(x + b, t + b, n - b, &hi, NULL))
            continue;
        if (lo.chi2 + hi.chi2 < best) {
            best = lo.chi2 + hi.chi2;
            best_b = b;
            g->below = lo, g->above = hi;
        }
    }
    if (best_b == 0)
        return;
    double f = ((g->fit.chi2 - best) / 3.0) / (best / (double)(n - 5));
    double p = best > 0 ? gsl_cdf_fdist_Q(f, 3.0, (double)(n - 5)) : 0;
    if (!(p < SIZE_DEPENDENCE_P))
        return;
    g->piecewise = TRUE;
    g->break_bytes = pts[best_b - 1].bytes;
    g->f_stat = best > 0 ? f : INFINITY;
    g->p_value = p;
    /* The combined model's quality over every point. */
    g_autofree double *err = g_new(double, n);
    double chi2 = 0;
    ParoAlphaBeta *c = &g->combined;
    *c = g->fit;
    c->max_err = 0;
    for (guint i = 0; i < n; i++) {
        const ParoAlphaBeta *seg = i < best_b ? &g->below : &g->above;
        double r = (paro_alpha_beta_predict_s(seg, x[i]) - t[i]) / t[i];
        chi2 += r * r, err[i] = fabs(r), c->max_err = fmax(c->max_err, err[i]);
    }
    c->r2 = 1 - chi2 * (1 - g->fit.r2) / g->fit.chi2;
    c->chi2 = chi2;
    c->median_err = paro_stats_median(err, n);
}

gboolean paro_calib_group_fit(ParoCollFit *g, const double *bytes, const double *t_s, guint n,
                              GError **error)
{
    g->n_points = n;
    double factor = paro_coll_bus_factor(g->op, MAX(g->ranks, 1));
    if (g->ranks < 2) {
        g->reason = g_strdup("one rank: no link carries data (busbw factor 0; a broadcast is "
                             "a local copy), so there is no bus bandwidth to fit");
        return TRUE;
    }
    g_autofree Pt *pts = g_new(Pt, n);
    guint m = 0;
    for (guint i = 0; i < n; i++)
        if (t_s[i] > 0)
            pts[m++] = (Pt){bytes[i], bytes[i] * factor, t_s[i]};
    if (m < 3) {
        g->reason = g_strdup_printf("%u usable points; at least 3 are needed", m);
        return TRUE;
    }
    qsort(pts, m, sizeof *pts, cmp_pt);
    /* Latency and bandwidth are two unknowns: one size cannot tell them apart, two fit
     * exactly with no residual to judge the fit by (issue #16 W4). */
    guint sizes = 1;
    for (guint i = 1; i < m; i++)
        sizes += pts[i].bytes != pts[i - 1].bytes;
    if (sizes < 3) {
        g->reason = g_strdup_printf("%u distinct size%s: at least 3 are needed to tell the "
                                    "latency from the bandwidth and judge the fit",
                                    sizes, sizes == 1 ? "" : "s");
        return TRUE;
    }
    g_autofree double *x = g_new(double, m), *t = g_new(double, m);
    for (guint i = 0; i < m; i++)
        x[i] = pts[i].x, t[i] = pts[i].t;
    g_autoptr(GError) local = NULL;
    if (!paro_calib_fit_alpha_beta(x, t, m, &g->fit, &local)) {
        if (!g_error_matches(local, PARO_CALIB_ERROR, PARO_CALIB_ERROR_FIT)) {
            g_propagate_error(error, g_steal_pointer(&local));
            return FALSE;
        }
        g->reason = g_strdup(local->message);
        return TRUE;
    }
    /* A bandwidth the data do not determine (the times barely grow with the size: a
     * standard error above half the slope), or one outside any link's, is not a fit. */
    if (!(g->fit.beta_rel_err <= 0.5)) {
        g->reason = g_strdup_printf("the data do not determine the bandwidth: %.3g GB/s with a "
                                    "standard error of %.0f%% (r2 %.2f)",
                                    g->fit.bus_Bps / 1e9, 100 * g->fit.beta_rel_err, g->fit.r2);
        return TRUE;
    }
    if (!paro_limit_check(&paro_limit_bandwidth, g->fit.bus_Bps) ||
        !paro_limit_check(&paro_limit_latency, g->fit.alpha_s)) {
        g->reason = g_strdup_printf("the fit (%.3g GB/s, latency %.3g s) lies outside any "
                                    "link's bandwidth or latency",
                                    g->fit.bus_Bps / 1e9, g->fit.alpha_s);
        return TRUE;
    }
    g->fitted = TRUE;
    try_piecewise(g, pts, m);
    return TRUE;
}
