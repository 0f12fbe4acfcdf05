/* SPDX-License-Identifier: MIT */
/* Fixtures shared by the test suites that simulate: the default scenario with overrides,
 * a strategy's closed-form row, and a topology written inline as YAML. */
#pragma once

#include <string.h>

#include "check-main.h"
#include "run/run.h"
#include "yaml/loaders.h"

/* The scenario at @relative (under the source tree) with @sets applied; aborts the test on
 * a load error, since every caller expects the input to be valid. */
static inline ParoScenario *paro_test_scenario(const char *relative, const char *const *sets)
{
    g_autofree char *path = paro_test_path(relative);
    g_autoptr(GError) error = NULL;
    ParoScenario *s = paro_scenario_load(path, sets, &error);
    if (s == NULL)
        g_error("%s", error->message);
    return s;
}

/* The default scenario (scenarios/llama-7b_a100x8-100g_n32.yaml) with @sets applied. */
static inline ParoScenario *paro_test_default_scenario(const char *const *sets)
{
    return paro_test_scenario("scenarios/llama-7b_a100x8-100g_n32.yaml", sets);
}

/* The simulated step of @strategy on @s (with its trace when @trace); aborts the test if
 * the simulation fails. The caller clears the result. */
static inline ParoStepResult paro_test_step(const ParoScenario *s, const char *strategy,
                                            gboolean trace)
{
    g_autoptr(ParoScenarioDerived) d = paro_scenario_derive(s);
    g_autoptr(ParoCollCache) cache = paro_coll_cache_new();
    g_autoptr(GError) error = NULL;
    ParoStepResult r;
    if (!paro_step_simulate(d, paro_strategy_lookup(strategy), cache,
                            &(ParoStepOptions){trace, TRUE}, &r, &error))
        g_error("%s", error->message);
    return r;
}

/* The guideline's row of @st, or NULL. */
static inline const ParoStrategyResult *paro_test_guideline_of(const ParoGuideline *g,
                                                               const ParoStrategy *st)
{
    return paro_guideline_find(g, st);
}

/* A topology from YAML text; aborts the test if it does not load. */
static inline ParoTopology *paro_test_topology(const char *text)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(ParoNode) root = paro_yaml_load_data(text, strlen(text), NULL, &error);
    ParoTopology *t = root ? paro_topology_from_node(root, &error) : NULL;
    if (t == NULL)
        g_error("%s\n%s", error->message, text);
    return t;
}
