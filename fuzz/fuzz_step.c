/* SPDX-License-Identifier: MIT */
/* Fuzz target: the input is a scenario file (as for `scenario`); one that loads and is
 * small enough to simulate in well under a second goes through what `parosim run` does
 * with it: the closed-form guideline of every strategy, then the simulated step of three
 * strategies that between them use every collective (ZeRO-3, NII, ZeRO-1) and, with
 * compression, the time it saves. Huge but valid values (bandwidths, sizes, latencies,
 * efficiencies near 0) reach the engine's picosecond arithmetic this way. */
#include "fuzz-common.h"
#include "scenario/scenario.h"
#include "step/step.h"

/* Bounds on the work per input, not on validity: larger scenarios are valid but slow. */
enum { MAX_GPUS = 64, MAX_LAYERS = 96, MAX_MICRO_STEPS = 16, MAX_MODULES = 64 };

static gboolean small_enough(const ParoScenario *s)
{
    return paro_scenario_n_gpus(s) <= MAX_GPUS &&
           paro_topology_n_gpus(s->topology) <= 4 * MAX_GPUS && s->model->layers <= MAX_LAYERS &&
           s->training.accumulation <= MAX_MICRO_STEPS &&
           s->pp * s->training.pipeline_virtual <= MAX_MODULES;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_scenario_path();
    fuzz_write(path, data, size);
    GError *error = NULL;
    ParoScenario *s = paro_scenario_load(path, NULL, &error);
    if (s != NULL && small_enough(s)) {
        ParoGuideline *g = paro_guideline_evaluate(s);
        ParoCollCache *cache = paro_coll_cache_new();
        ParoStepBaseline *baseline = paro_step_baseline_new(g);
        static const char *const strategies[] = {"zero-3", "NII", "zero-1"};
        for (guint i = 0; cache != NULL && i < G_N_ELEMENTS(strategies); i++) {
            ParoStepResult r;
            if (paro_step_simulate(g, paro_strategy_lookup(strategies[i]), cache, FALSE, &r,
                                   &error)) {
                if (paro_step_add_time_saved(baseline, cache, &r, &error))
                    g_assert(r.step >= 0 && r.peak_bytes >= 0);
                paro_step_result_clear(&r);
            }
            g_clear_error(&error);
        }
        paro_step_baseline_free(baseline);
        if (cache != NULL)
            paro_coll_cache_unref(cache);
        paro_guideline_free(g);
    }
    if (s != NULL)
        paro_scenario_free(s);
    g_clear_error(&error);
    return 0;
}
