/* SPDX-License-Identifier: MIT */
/* The run object (run.h). Time saved by compression is a second simulation of the same
 * strategy without it, on the same collective cache (keyed by the bytes on the wire, which
 * is all compression changes there), rather than a formula: the saving depends on what
 * compression takes off the critical path, which only the schedule knows; a collective
 * hidden behind compute saves nothing however much it shrinks. */
#include "run/run.h"

struct _ParoRun {
    ParoScenario *scenario;
    ParoScenarioDerived *derived;
    ParoGuideline *guideline; /* built with the run: read-only, so threads may share a run */
    ParoCollCache *cache;
};

ParoRun *paro_run_new(ParoScenario *scenario, ParoCollCache *cache)
{
    g_return_val_if_fail(scenario != NULL, NULL);
    ParoRun *run = g_new0(ParoRun, 1);
    run->scenario = scenario;
    run->derived = paro_scenario_derive(scenario);
    /* Evaluated here rather than on first need: a field filled lazily raced when threads
     * shared a run (issue #42: each built its own, all but one leaked); and loading the
     * scenario evaluated it once already (the clock's range), so it costs no more than that. */
    run->guideline = paro_guideline_evaluate(run->derived);
    run->cache = cache ? paro_coll_cache_ref(cache) : paro_coll_cache_new();
    return run;
}

ParoRun *paro_run_load(const char *path, const char *const *overrides, ParoCollCache *cache,
                       GError **error)
{
    ParoScenario *s = paro_scenario_load(path, overrides, error);
    return s ? paro_run_new(s, cache) : NULL;
}

void paro_run_free(ParoRun *run)
{
    if (run == NULL)
        return;
    paro_guideline_free(run->guideline);
    paro_scenario_derived_free(run->derived);
    paro_scenario_free(run->scenario);
    paro_coll_cache_unref(run->cache);
    g_free(run);
}

const ParoScenario *paro_run_get_scenario(const ParoRun *run)
{
    return run->scenario;
}

const ParoScenarioDerived *paro_run_get_derived(const ParoRun *run)
{
    return run->derived;
}

const ParoGuideline *paro_run_get_guideline(const ParoRun *run)
{
    return run->guideline;
}

ParoCollCache *paro_run_get_cache(const ParoRun *run)
{
    return run->cache;
}

gboolean paro_run_strategy(ParoRun *run, const ParoStrategy *st, const ParoRunOptions *options,
                           ParoStepResult *out, GError **error)
{
    gboolean (*simulate)(const ParoScenarioDerived *, const ParoStrategy *, ParoCollCache *,
                         const ParoStepOptions *, ParoStepResult *, GError **) =
        options->extrapolate ? paro_step_simulate_extrapolated : paro_step_simulate;
    ParoStepOptions step = {options->keep_trace, TRUE, 0, options->memo, options->memo_context};
    if (!simulate(run->derived, st, run->cache, &step, out, error)) {
        g_prefix_error(error, "%s: ", st->name);
        return FALSE;
    }
    if (paro_scenario_is_dp_only(run->scenario)) {
        const ParoStrategyResult *g = paro_guideline_find(paro_run_get_guideline(run), st);
        out->guideline_s = g ? g->t_step : 0;
    }
    if (options->time_saved && paro_compress_is_active(&run->scenario->compression)) {
        ParoStepOptions plain = {FALSE, FALSE, 0, options->memo, options->memo_context};
        ParoStepResult base;
        if (!simulate(run->derived, st, run->cache, &plain, &base, error)) {
            g_prefix_error(error, "%s: ", st->name);
            paro_step_result_clear(out);
            return FALSE;
        }
        out->time_saved_s = paro_time_to_s(base.step) - paro_time_to_s(out->step);
        paro_step_result_clear(&base);
    }
    return TRUE;
}

GArray *paro_run_strategies(ParoRun *run, GPtrArray *strategies, const ParoRunOptions *options,
                            GError **error)
{
    GArray *rows = g_array_sized_new(FALSE, TRUE, sizeof(ParoStepResult), strategies->len);
    g_array_set_clear_func(rows, (GDestroyNotify)paro_step_result_clear);
    for (guint i = 0; i < strategies->len; i++) {
        ParoStepResult r;
        if (!paro_run_strategy(run, g_ptr_array_index(strategies, i), options, &r, error)) {
            g_array_unref(rows);
            return NULL;
        }
        g_array_append_val(rows, r);
    }
    g_array_sort(rows, paro_step_result_compare);
    for (guint i = 0; i < rows->len; i++)
        g_array_index(rows, ParoStepResult, i).rank = (int)i + 1;
    return rows;
}
