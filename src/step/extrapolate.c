/* SPDX-License-Identifier: MIT */
#include "step/extrapolate.h"

#include <math.h>

gboolean paro_extrapolate_is_linear(double y0, double y1, double y2, double tolerance)
{
    return fabs((y2 - y1) - (y1 - y0)) <= tolerance * fabs(y2);
}

static double geometric_sum(double d_last, double e_last, double r, double n)
{
    return n * d_last + e_last * r / (1.0 - r) * (n - r * (1.0 - pow(r, n)) / (1.0 - r));
}

gboolean paro_extrapolate_geometric(const double y[5], double periods, double *out, double *error)
{
    double d[4], e[3];
    for (int k = 0; k < 4; k++)
        d[k] = y[k + 1] - y[k];
    for (int k = 0; k < 3; k++)
        e[k] = d[k + 1] - d[k];
    if (e[0] == 0 || e[1] == 0)
        return FALSE;
    double r1 = e[1] / e[0], r2 = e[2] / e[1];
    if (!(r1 > 0 && r1 < 0.95 && r2 > 0 && r2 < 0.95))
        return FALSE;
    double sum = geometric_sum(d[3], e[2], r2, periods);
    *out = y[4] + sum;
    *error = fabs(geometric_sum(d[3], e[2], r1, periods) - sum);
    return TRUE;
}

gboolean paro_extrapolate_five(const double y[5], double periods, double tolerance, double *out)
{
    double err = 0;
    if (paro_extrapolate_is_linear(y[2], y[3], y[4], 1e-9)) { /* a transient that ended */
        *out = y[4] + periods * (y[4] - y[3]);
        return TRUE;
    }
    return paro_extrapolate_geometric(y, periods, out, &err) && err <= tolerance * fabs(*out);
}

/* ---- a step result as figures to extrapolate ---- */

/* The integer times (exact under linear extrapolation) and the real figures of a result;
 * everything else follows from them (paro_step_result_finish). */
enum { TIME_STEP, TIME_COMPUTE, TIME_COMM, TIME_INTRA, TIME_INTER, TIME_AT_PEAK, N_TIMES };
enum {
    REAL_PEAK,
    REAL_ALLOCATED,
    REAL_RESERVED,
    REAL_OUTSIDE,
    REAL_COMPRESS,
    REAL_SAVED,
    REAL_GUIDELINE,
    REAL_AT_PEAK,
    N_REALS
};
#define N_FIGURES (N_TIMES + REAL_AT_PEAK + PARO_MEM_N_CATEGORIES)

static ParoTime *time_of(ParoStepResult *r, int k)
{
    ParoTime *const fields[N_TIMES] = {&r->step,       &r->compute,    &r->comm,
                                       &r->intra_busy, &r->inter_busy, &r->at_peak.time};
    return fields[k];
}

static double *real_of(ParoStepResult *r, int k)
{
    double *const fields[REAL_AT_PEAK] = {
        &r->peak_bytes, &r->allocated_bytes, &r->reserved_bytes, &r->outside_bytes,
        &r->compress_s, &r->bytes_saved,     &r->guideline_s};
    return k < REAL_AT_PEAK ? fields[k] : &r->at_peak.bytes[k - REAL_AT_PEAK];
}

/* Figure @k of @r as a double (times in picoseconds). */
static double figure(ParoStepResult *r, int k)
{
    return k < N_TIMES ? (double)*time_of(r, k) : *real_of(r, k - N_TIMES);
}

static gboolean all_linear(ParoStepResult *p)
{
    for (int k = 0; k < N_FIGURES; k++)
        if (!paro_extrapolate_is_linear(figure(&p[0], k), figure(&p[1], k), figure(&p[2], k),
                                        PARO_EXTRAPOLATE_TOLERANCE))
            return FALSE;
    return TRUE;
}

/* @last extended by @periods times its difference with @previous: integers exactly. */
static void extend_linear(ParoStepResult *previous, ParoStepResult *last, gint64 periods)
{
    for (int k = 0; k < N_TIMES; k++)
        *time_of(last, k) += periods * (*time_of(last, k) - *time_of(previous, k));
    for (int k = 0; k < N_FIGURES - N_TIMES; k++)
        *real_of(last, k) += (double)periods * (*real_of(last, k) - *real_of(previous, k));
}

/* @p[4] set to the five points' sums (paro_extrapolate_five); FALSE when a figure does
 * neither settle on a line nor converge within PARO_EXTRAPOLATE_TOLERANCE. */
static gboolean extend_five(ParoStepResult *p, gint64 periods)
{
    double ends[N_FIGURES];
    for (int k = 0; k < N_FIGURES; k++) {
        double y[5];
        for (int i = 0; i < 5; i++)
            y[i] = figure(&p[i], k);
        if (!paro_extrapolate_five(y, (double)periods, PARO_EXTRAPOLATE_TOLERANCE, &ends[k]))
            return FALSE;
    }
    for (int k = 0; k < N_TIMES; k++)
        *time_of(&p[4], k) = (ParoTime)llround(ends[k]);
    for (int k = 0; k < N_FIGURES - N_TIMES; k++)
        *real_of(&p[4], k) = ends[N_TIMES + k];
    return TRUE;
}

/* ---- the policy ---- */

static gboolean simulate_at(const ParoScenarioDerived *d, const ParoStrategy *st,
                            ParoCollCache *cache, const ParoStepOptions *options, gint64 micro,
                            ParoStepResult *out, GError **error)
{
    ParoStepOptions o = *options;
    o.micro_steps = micro;
    return paro_step_simulate(d, st, cache, &o, out, error);
}

static void clear_all(ParoStepResult *p, int n)
{
    for (int i = 0; i < n; i++)
        paro_step_result_clear(&p[i]);
}

/* Points @first to @last - 1 of base - P, base, base + P, ... into @p; on failure all of
 * @p is cleared. */
static gboolean simulate_points(const ParoScenarioDerived *d, const ParoStrategy *st,
                                ParoCollCache *cache, const ParoStepOptions *options, gint64 base,
                                gint64 P, ParoStepResult *p, int first, int last, GError **error)
{
    for (int i = first; i < last; i++)
        if (!simulate_at(d, st, cache, options, base + (i - 1) * P, &p[i], error)) {
            clear_all(p, i);
            return FALSE;
        }
    return TRUE;
}

/* @p[@last] extended to @A micro-batches becomes the result; the other points are freed. */
static void take(const ParoScenarioDerived *d, gint64 A, ParoStepResult *p, int last,
                 gint64 simulated, ParoStepResult *out)
{
    p[last].simulated_micro = simulated;
    *out = p[last];
    clear_all(p, last);
    paro_step_result_finish(d, A, out);
}

gboolean paro_step_simulate_extrapolated(const ParoScenarioDerived *d, const ParoStrategy *st,
                                         ParoCollCache *cache, const ParoStepOptions *options,
                                         ParoStepResult *out, GError **error)
{
    const ParoScenario *sc = d->scenario;
    gint64 A = options->micro_steps > 0 ? options->micro_steps : sc->training.accumulation;
    gint64 P = sc->pp, base = P > 1 ? 3 * P : 3;
    ParoStepResult p[5] = {{0}};
    base += (A - base) % P; /* A - base: whole periods (no-op when A <= base) */
    /* Three points cost 3 base micro-batches: only worth it below A. Layered accumulation
     * keeps a module's activations of every micro-batch, so its peak memory is the
     * highest of several lines in A, and a steeper one can overtake past the points
     * (LLaMA-7B, pp 2, modular: buckets at the peak up to A = 36, activations beyond,
     * 1.1% more at A = 90): simulated whole. */
    /* With a memo (step/memo.h) the points are shared by every accumulation of the
     * scenario, so any A past the last point is worth reading off them. */
    gboolean worth = options->memo != NULL ? A > base + P : 3 * base < A;
    if (options->keep_trace || sc->training.accumulation_order == PARO_PIPE_LAYERED || !worth)
        return simulate_at(d, st, cache, options, A, out, error);
    if (!simulate_points(d, st, cache, options, base, P, p, 0, 3, error))
        return FALSE;
    if (all_linear(p)) {
        extend_linear(&p[1], &p[2], (A - base - P) / P);
        take(d, A, p, 2, 3 * base, out);
        return TRUE;
    }
    /* not periodic yet: two more points, and a geometric sum if the slopes converge, when
     * the five points' micro-batches are fewer than A's */
    if (5 * base + 5 * P < A) {
        if (!simulate_points(d, st, cache, options, base, P, p, 3, 5, error))
            return FALSE;
        if (extend_five(p, (A - base - 3 * P) / P)) {
            take(d, A, p, 4, 5 * base + 5 * P, out);
            return TRUE;
        }
    }
    clear_all(p, 5);
    return simulate_at(d, st, cache, options, A, out, error);
}
