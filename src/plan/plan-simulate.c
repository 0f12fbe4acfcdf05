/* SPDX-License-Identifier: MIT */
/* One configuration of the plan (a shape, a group size, an algorithm) simulated at the
 * accumulations the search asks for: a few simulated micro-steps, the rest read off the
 * step's steady state, the simulations remembered by accumulation so that several batches
 * of one configuration share their points. */
#include "plan/plan-private.h"

#include <math.h>

#include "step/extrapolate.h"

/* The step grows by the same amount with every period of micro-batches once its schedule is
 * in its steady state: for data parallelism alone (a period of one micro-step) from the
 * second micro-step on, for a pipeline of P stages (a period of P micro-batches, in which
 * every stage runs each of its passes P times) once the warm-up's P - 1 are past. So a step
 * of A > B micro-batches, B = 4 without pipeline and 3P with one, is
 * step(B) + (A - B)/P (step(B) - step(B - P)), and so is its peak memory (constant but for
 * layered accumulation, which keeps a module's activations of every micro-batch). Layered
 * accumulation gets there later (the step's periodic_from estimates when), so pipelines and
 * layered schedules start from that estimate and are checked on a third point. tests/test_plan.c
 * checks all this against full simulations; it makes the search about A/B times cheaper. */
#define PLAN_SIMULATED_MICRO_STEPS 4

typedef struct {
    const ParoStrategy *strategy; /* NULL: not simulated (its memory bound cannot fit) */
    double step_s, peak_bytes;
    gboolean fits, tight;
    gint64 periodic_from;
    gboolean host_fits;   /* offloaded state in host memory: independent of the accumulation */
    double reserve_bytes; /* the allocator's reserve and the outside bytes beyond the peak
                           * (decision 94): read at the simulated accumulation */
} Simulated;

struct _ParoPlanUnit {
    const char *path;
    const ParoPlanRequest *rq;
    const ParoPlanShape *shape;
    gint64 group;
    int algorithm;
    ParoCollCache *cache;
    GHashTable *done; /* accumulation (gint64 *) -> Simulated[n_strategies] */
    gint64 dp_ranks, sequence;
    double memory_bytes;
    ParoRun *last; /* the last run loaded: its scenario's memory rule for extrapolated peaks */
    gint64 last_accumulation;
};

ParoPlanUnit *paro_plan_unit_new(const char *path, const ParoPlanRequest *rq,
                                 const ParoPlanShape *shape, gint64 group, int algorithm,
                                 ParoCollCache *cache)
{
    ParoPlanUnit *u = g_new0(ParoPlanUnit, 1);
    *u = (ParoPlanUnit){path, rq, shape, group, algorithm, cache};
    u->done = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
    return u;
}

void paro_plan_unit_free(ParoPlanUnit *u)
{
    if (u == NULL)
        return;
    g_hash_table_unref(u->done);
    g_clear_pointer(&u->last, paro_run_free);
    g_free(u);
}

static gint64 simulated_micro_steps(const ParoPlanLayout *lay)
{
    return lay->pp > 1 ? 3 * lay->pp : PLAN_SIMULATED_MICRO_STEPS;
}

/* Every strategy the shape may fit, simulated at @accumulation (or remembered). */
/* The unit's scenario at @accumulation (borrowed: the unit keeps the last one loaded, so
 * the floor and the strategies at one accumulation share it). */
static ParoRun *run_at(ParoPlanUnit *u, gint64 accumulation, GError **error)
{
    if (u->last != NULL && u->last_accumulation == accumulation)
        return u->last;
    g_autoptr(GPtrArray) sets =
        paro_plan_overrides(u->rq, u->shape, u->group, accumulation, u->algorithm);
    ParoRun *run = paro_run_load(u->path, (const char *const *)sets->pdata, u->cache, error);
    if (run == NULL)
        return NULL;
    g_clear_pointer(&u->last, paro_run_free);
    u->last = run;
    u->last_accumulation = accumulation;
    return run;
}

static const Simulated *simulate_all(ParoPlanUnit *u, gint64 accumulation, GError **error)
{
    const Simulated *known = g_hash_table_lookup(u->done, &accumulation);
    if (known != NULL)
        return known;
    ParoRun *run = run_at(u, accumulation, error);
    if (run == NULL)
        return NULL;
    const ParoScenario *s = paro_run_get_scenario(run);
    /* no time saved: plans rank plain steps; the planner extrapolates over all strategies */
    ParoRunOptions options = {FALSE, FALSE, FALSE};
    u->dp_ranks = s->dp * s->cp;
    u->sequence = s->training.sequence;
    u->memory_bytes = s->topology->gpu.memory_bytes;
    guint n = paro_strategy_n_all();
    g_autofree Simulated *out = g_new0(Simulated, n);
    for (guint i = 0; i < n; i++) {
        if (!(u->shape->strategies & (G_GUINT64_CONSTANT(1) << i)))
            continue;
        ParoStepResult r;
        if (!paro_run_strategy(run, paro_strategy_get(i), &options, &r, error))
            return NULL;
        out[i] = (Simulated){r.strategy,   paro_time_to_s(r.step),
                             r.peak_bytes, r.fits,
                             r.tight,      r.periodic_from,
                             r.host_fits,  r.reserved_bytes + r.outside_bytes - r.peak_bytes};
        paro_step_result_clear(&r);
    }
    gint64 *key = g_new(gint64, 1);
    *key = accumulation;
    Simulated *kept = g_steal_pointer(&out);
    g_hash_table_insert(u->done, key, kept);
    return kept;
}

/* Three points one period apart on a line, to 1e-9 of the last. */
static gboolean is_linear(double y0, double y1, double y2)
{
    return paro_extrapolate_is_linear(y0, y1, y2, 1e-9);
}

/* @y lies on the line through @before and @at, @periods periods past @at (1e-9 relative,
 * as is_linear). */
static gboolean on_line(double at, double before, double periods, double y)
{
    double want = at + periods * (at - before);
    return fabs(y - want) <= 1e-9 * fabs(want);
}

/* Two more points, base + 2P and base + 3P, after the three of a step that was not yet
 * periodic: each strategy's step and peak extrapolated to @accumulation linearly where its
 * five points are on a line, geometrically (paro_extrapolate_geometric) where they
 * converge so within PARO_PLAN_GEOMETRIC_TOLERANCE; FALSE (and no error) when a strategy
 * does neither. */
static gboolean extrapolate_converging(ParoPlanUnit *u, gint64 accumulation, gint64 base,
                                       const Simulated *before, const Simulated *at,
                                       const Simulated *after, double *final_step,
                                       double *final_peak, GError **error)
{
    guint n_strategies = paro_strategy_n_all();
    gint64 period = u->shape->layout.pp;
    const Simulated *more[2];
    for (int k = 0; k < 2; k++)
        if ((more[k] = simulate_all(u, base + (2 + k) * period, error)) == NULL)
            return FALSE;
    double periods = (double)(accumulation - (base + 3 * period)) / (double)period;
    for (guint i = 0; i < n_strategies; i++) {
        if (at[i].strategy == NULL)
            continue;
        const Simulated *p[5] = {&before[i], &at[i], &after[i], &more[0][i], &more[1][i]};
        double step[5], peak[5];
        for (int k = 0; k < 5; k++) {
            step[k] = p[k]->step_s;
            peak[k] = p[k]->peak_bytes;
        }
        if (!paro_extrapolate_five(step, periods, PARO_PLAN_GEOMETRIC_TOLERANCE, &final_step[i]) ||
            !paro_extrapolate_five(peak, periods, PARO_PLAN_GEOMETRIC_TOLERANCE, &final_peak[i]))
            return FALSE;
    }
    return TRUE;
}

gboolean paro_plan_unit_rows(ParoPlanUnit *u, gint64 accumulation, GArray *rows, GError **error)
{
    const ParoPlanLayout *lay = &u->shape->layout;
    guint n_strategies = paro_strategy_n_all();
    const Simulated *at = NULL, *before = NULL, *after = NULL;
    gint64 base = simulated_micro_steps(lay), period = lay->pp;
    /* A schedule with a pipeline or layered accumulation is checked on a third point before
     * it is extrapolated: layered accumulation's per-module collectives are fixed while its
     * compute grows with A, so its step is linear only once the compute hides them. Until
     * the slopes agree, the base doubles; past A, the step is simulated whole.
     * A doubt: with GEMMs timed by shape, an interleaved pipeline can be quasi-periodic
     * (periods of P micro-batches alternate within 4%), so three points may agree and a
     * later period differ: the extrapolation is then within 1%, not 1e-9 (test_plan.c).
     * A second doubt: layered accumulation's peak is piecewise linear in A (which phase
     * holds the peak changes with A), so three points on one piece can agree and a later,
     * steeper piece be missed. Since the loss's memory (decision 50) a layered step's last
     * module keeps every micro-batch's logits, a steep piece that overtakes early (the
     * default scenario's layered case: from A = 11), so a fourth point at 4 x base must lie
     * on the line too; a piece that overtakes beyond it is still missed (on the calibrated
     * PaRO cluster, fsdp-hybrid-zero2's layered case at tp 2, virtual 32, was 0.17% above
     * the extrapolation at A = 19 before the loss's memory). Exact would need the ledger's
     * peak per phase as a function of A, not samples of the maximum.
     * With the SMs collectives take from compute (training.sm_contention, the default) a
     * pipeline's slopes converge geometrically (each period's change 7/9 of the last in
     * the default scenario's 1F1B) and agree to 1e-9 only some 50 periods on: two more
     * points measure the ratio and the step is summed to A within 1e-6
     * (extrapolate_converging; test_plan.c checks it against full simulations). */
    gboolean checked = lay->pp > 1 || lay->layered;
    gboolean extrapolate = FALSE;
    g_autofree double *final_step = g_new0(double, n_strategies);
    g_autofree double *final_peak = g_new0(double, n_strategies);
    if (checked && accumulation > base + period) {
        /* where the schedule says it turns periodic */
        if ((at = simulate_all(u, base, error)) == NULL)
            return FALSE;
        for (guint i = 0; i < n_strategies; i++)
            if (at[i].strategy != NULL)
                base = MAX(base, (at[i].periodic_from + period - 1) / period * period);
    }
    for (;;) {
        extrapolate = accumulation > base + (checked ? period : 0);
        if (!extrapolate)
            break;
        if ((at = simulate_all(u, base, error)) == NULL ||
            (before = simulate_all(u, base - period, error)) == NULL)
            return FALSE;
        double periods = (double)(accumulation - base) / (double)period;
        for (guint i = 0; i < n_strategies; i++) {
            final_step[i] = at[i].step_s + periods * (at[i].step_s - before[i].step_s);
            final_peak[i] = at[i].peak_bytes + periods * (at[i].peak_bytes - before[i].peak_bytes);
        }
        if (!checked)
            break;
        if ((after = simulate_all(u, base + period, error)) == NULL)
            return FALSE;
        gboolean linear = TRUE;
        for (guint i = 0; i < n_strategies && linear; i++)
            linear = is_linear(before[i].step_s, at[i].step_s, after[i].step_s) &&
                     is_linear(before[i].peak_bytes, at[i].peak_bytes, after[i].peak_bytes);
        if (linear && lay->layered) {
            /* Layered accumulation's peak is the highest of several lines in A: a fourth
             * point at 4 x base must lie on the same line, else the base doubles (or, with
             * A that close, the step is simulated whole). */
            gint64 far = 4 * base;
            if (accumulation <= far + period) {
                extrapolate = FALSE;
                break;
            }
            const Simulated *far_at = simulate_all(u, far, error);
            if (far_at == NULL)
                return FALSE;
            double ahead = (double)(far - base) / (double)period;
            for (guint i = 0; i < n_strategies && linear; i++)
                linear =
                    on_line(at[i].step_s, before[i].step_s, ahead, far_at[i].step_s) &&
                    on_line(at[i].peak_bytes, before[i].peak_bytes, ahead, far_at[i].peak_bytes);
        }
        if (linear)
            break;
        /* Not periodic yet: with SM contention a pipeline's slopes approach their limit
         * geometrically (each period's change a fixed ratio of the last), reaching it only
         * at picosecond rounding, dozens of periods on. Two more points measure the ratio,
         * and the step is summed to A within PARO_PLAN_GEOMETRIC_TOLERANCE. */
        if (accumulation > base + 3 * period &&
            extrapolate_converging(u, accumulation, base, before, at, after, final_step, final_peak,
                                   error))
            break;
        if (error && *error)
            return FALSE;
        base *= 2;
    }
    if (!extrapolate && (at = simulate_all(u, accumulation, error)) == NULL)
        return FALSE;
    const ParoPlanShape *sh = u->shape;
    double batch = (double)u->dp_ranks / (double)lay->cp * (double)sh->micro_batch *
                   (double)accumulation * (double)u->sequence;
    for (guint i = 0; i < n_strategies; i++) {
        if (at[i].strategy == NULL)
            continue;
        double step = at[i].step_s, peak = at[i].peak_bytes;
        gboolean fits = at[i].fits, tight = at[i].tight;
        if (extrapolate) {
            step = final_step[i];
            peak = final_peak[i];
            fits = peak <= u->memory_bytes && at[i].host_fits;
            tight =
                fits && paro_scenario_is_tight(paro_run_get_scenario(u->last),
                                               MIN(peak + at[i].reserve_bytes, u->memory_bytes));
        }
        ParoPlanRow row = {
            .strategy = at[i].strategy,
            .layout = *lay,
            .group = u->group,
            .micro_batch = sh->micro_batch,
            .accumulation = accumulation,
            .algorithm = u->algorithm,
            .batch_tokens = batch,
            .step_s = step,
            .compute_bound_s = paro_plan_compute_bound(sh, accumulation),
            .bubble_bound_s = paro_plan_bubble_bound(sh),
            .peak_bytes = peak,
            .fits = fits,
            .tight = tight,
        };
        g_array_append_val(rows, row);
    }
    return TRUE;
}

const ParoStrategy *paro_plan_floor_strategy(void)
{
    /* NNG: the optimizer on 1/n of the states, the least any strategy runs (and offloads) */
    return paro_strategy_lookup("NNG");
}

gboolean paro_plan_unit_floor(ParoPlanUnit *u, gint64 accumulation, double *step_s, GError **error)
{
    ParoRun *run = run_at(u, accumulation, error);
    if (run == NULL)
        return FALSE;
    ParoStepOptions options = PARO_STEP_OPTIONS_INIT;
    options.without_data_parallel = TRUE;
    ParoStepResult r;
    if (!paro_step_simulate(paro_run_get_derived(run), paro_plan_floor_strategy(), u->cache,
                            &options, &r, error))
        return FALSE;
    *step_s = paro_time_to_s(r.step);
    paro_step_result_clear(&r);
    return TRUE;
}
