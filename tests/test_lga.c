/* SPDX-License-Identifier: MIT */
/* Layered gradient accumulation (Lamy-Poirier 2021) in the training step: every micro-batch
 * goes through a module before the next module, so a sharded strategy gathers each
 * module's parameters and reduces its gradients once per step instead of once per
 * micro-batch. */
#include <glib.h>
#include <math.h>

#include "check-main.h"
#include "run/run.h"

static double comm_of(const char *strategy, int accumulation, gboolean layered)
{
    g_autofree char *path = paro_test_path("scenarios/llama-7b_a100x8-100g_n32.yaml");
    g_autofree char *acc = g_strdup_printf("training.accumulation=%d", accumulation);
    const char *sets[] = {acc,
                          "training.recompute=full",
                          "training.pipeline.schedule=modular",
                          "training.pipeline.virtual=32",
                          layered ? "training.pipeline.accumulation=layered"
                                  : "training.pipeline.accumulation=depth-first",
                          NULL};
    g_autoptr(GError) error = NULL;
    g_autoptr(ParoScenario) s = paro_scenario_load(path, sets, &error);
    if (s == NULL)
        g_error("%s", error->message);
    g_autoptr(ParoScenarioDerived) g_derived = paro_scenario_derive(s);
    g_autoptr(ParoGuideline) g = paro_guideline_evaluate(g_derived);
    g_autoptr(ParoCollCache) cache = paro_coll_cache_new();
    ParoStepResult r;
    if (!paro_step_simulate(g->derived, paro_strategy_lookup(strategy), cache,
                            &(ParoStepOptions){FALSE, TRUE}, &r, &error))
        g_error("%s", error->message);
    double comm = r.comm_s;
    paro_step_result_clear(&r);
    return comm;
}

START_TEST(layered_accumulation_divides_dp_traffic_by_a)
{
    /* System: the default scenario (32 GPUs, one device per pipeline, modules = the 32
     * layers), full recomputation, ZeRO-3 (GGG) and IIG: parameter gathers in forward and
     * backward and gradient reduce-scatters per module.
     * Derivation: depth-first, the per-micro-batch DP time X is paid A times, plus the
     * per-step sync Y: comm(A) = A X + Y. Layered, X is paid once: comm = X + Y for every A.
     * So comm_df(8) - comm_df(4) = 4X, comm_df(4) - comm_layered(4) = 3X, and the layered
     * comm does not change with A. Tolerance: picosecond rounding of 32 modules x A tasks. */
    const char *strategies[] = {"zero-3", "IIG"};
    for (guint i = 0; i < G_N_ELEMENTS(strategies); i++) {
        double df4 = comm_of(strategies[i], 4, FALSE), df8 = comm_of(strategies[i], 8, FALSE);
        double l4 = comm_of(strategies[i], 4, TRUE), l8 = comm_of(strategies[i], 8, TRUE);
        double x = (df8 - df4) / 4;
        ck_assert_msg(x > 0, "%s: no per-micro-batch DP traffic", strategies[i]);
        ck_assert_double_eq_tol(df4 - l4, 3 * x, 1e-6 * df4);
        ck_assert_double_eq_tol(l8, l4, 1e-6 * l4);
    }
    /* DDP has no per-micro-batch DP collectives: layered changes nothing */
    ck_assert_double_eq_tol(comm_of("ddp", 4, TRUE), comm_of("ddp", 4, FALSE), 1e-9);
}
END_TEST

static Suite *lga_suite(void)
{
    Suite *s = suite_create("lga");
    TCase *tc = tcase_create("lga");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, layered_accumulation_divides_dp_traffic_by_a);
    suite_add_tcase(s, tc);
    return s;
}

PARO_CHECK_MAIN(lga_suite)
