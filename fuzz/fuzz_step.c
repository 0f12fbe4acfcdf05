/* SPDX-License-Identifier: MIT */
/* Fuzz target: the input is a scenario file (as for `scenario`); one that loads and is
 * small enough to simulate in well under a second goes through what `parosim run` does
 * with it: the closed-form guideline of every strategy, then the simulated step of three
 * strategies that between them use every collective (ZeRO-3, NII, ZeRO-1) and, with
 * compression, the time it saves. Huge but valid values (bandwidths, sizes, latencies,
 * efficiencies near 0) reach the engine's picosecond arithmetic this way. */
#include "fuzz-common.h"
#include "run/run.h"
#include "scenario/scenario.h"

/* Bounds on the work per input, not on validity: larger scenarios are valid but slow. */
enum { MAX_GPUS = 64, MAX_LAYERS = 96, MAX_MICRO_STEPS = 16, MAX_MODULES = 64 };

static gboolean small_enough(const ParoScenario *s)
{
    return paro_scenario_dp_ranks(s) <= MAX_GPUS &&
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
        ParoRun *run = paro_run_new(g_steal_pointer(&s), NULL);
        static const char *const strategies[] = {"zero-3", "NII", "zero-1"};
        ParoRunOptions options = PARO_RUN_OPTIONS_INIT; /* time saved too */
        for (guint i = 0; i < G_N_ELEMENTS(strategies); i++) {
            ParoStepResult r;
            if (paro_run_strategy(run, paro_strategy_lookup(strategies[i]), &options, &r, &error)) {
                g_assert(r.step >= 0 && r.peak_bytes >= 0);
                paro_step_result_clear(&r);
            }
            g_clear_error(&error);
        }
        paro_run_free(run);
    }
    if (s != NULL)
        paro_scenario_free(s);
    g_clear_error(&error);
    return 0;
}
