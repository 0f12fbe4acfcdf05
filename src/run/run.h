/* SPDX-License-Identifier: MIT */
/* One run of a scenario: the object `run`, `sweep` and `plan` (and a library caller) go
 * through. It owns the loaded scenario, its derived quantities and its closed-form
 * guideline; it times collectives on a cache it shares or owns; it simulates strategies,
 * completes each result (the guideline beside it, the time compression saves) and ranks
 * them. Nothing in it is global, and nothing in it changes after paro_run_new (the cache
 * and a memo passed in options lock themselves), so threads may share one run: the public
 * API's scenarios are shared that way (issue #42). */
#pragma once

#include "scenario/guideline.h"
#include "step/extrapolate.h"
#include "step/step.h"

G_BEGIN_DECLS

typedef struct _ParoRun ParoRun;

typedef struct {
    gboolean keep_trace;  /* tasks and the memory timeline in each result */
    gboolean time_saved;  /* simulate each strategy again without compression (when the
                           * scenario compresses anything) to report the time saved */
    gboolean extrapolate; /* a step of many micro-batches read off a few periods of its
                           * steady state (step/extrapolate.h), within 1e-9 */
    ParoStepMemo *memo;   /* (nullable) steps shared with runs of the same scenario at other
                           * accumulations (step/memo.h), under memo_context */
    const char *memo_context;
} ParoRunOptions;

#define PARO_RUN_OPTIONS_INIT                                                                      \
    {                                                                                              \
        FALSE, TRUE, TRUE                                                                          \
    }

/**
 * paro_run_new:
 * @scenario: (transfer full): the loaded scenario, read-only from now on
 * @cache: (nullable): a collective cache to share (a reference is taken); NULL: the run
 *   makes its own
 */
ParoRun *paro_run_new(ParoScenario *scenario, ParoCollCache *cache);

/**
 * paro_run_load:
 * paro_scenario_load (@path, @overrides), then paro_run_new. Returns: (transfer full)
 * (nullable): errors of paro_scenario_load.
 */
ParoRun *paro_run_load(const char *path, const char *const *overrides, ParoCollCache *cache,
                       GError **error);

void paro_run_free(ParoRun *run);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ParoRun, paro_run_free)

const ParoScenario *paro_run_get_scenario(const ParoRun *run);
const ParoScenarioDerived *paro_run_get_derived(const ParoRun *run);
/** paro_run_get_guideline: the closed form of every strategy, evaluated by paro_run_new. */
const ParoGuideline *paro_run_get_guideline(const ParoRun *run);
ParoCollCache *paro_run_get_cache(const ParoRun *run);

/**
 * paro_run_strategy:
 * Simulates @strategy and completes @out: guideline_s (the guideline's T; a pipeline's own
 * textbook bound is the step's), time_saved_s (with @options->time_saved). rank stays 0.
 */
gboolean paro_run_strategy(ParoRun *run, const ParoStrategy *strategy,
                           const ParoRunOptions *options, ParoStepResult *out, GError **error);

/**
 * paro_run_strategies:
 * paro_run_strategy for each of @strategies (ParoStrategy pointers), then sorted by
 * paro_step_result_compare and ranked from 1. Returns: (transfer full) (nullable): a GArray
 * of ParoStepResult that clears its elements.
 */
GArray *paro_run_strategies(ParoRun *run, GPtrArray *strategies, const ParoRunOptions *options,
                            GError **error);

G_END_DECLS
