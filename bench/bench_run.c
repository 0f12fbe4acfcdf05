/* SPDX-License-Identifier: MIT */
/* Benchmark (prints figures; asserts nothing about speed): `parosim run` for all 29
 * strategies of LLaMA-65B (A = 8, full recomputation) on 1,024 and 16,384 A100 GPUs
 * (100 Gb/s nodes), with each global-collective algorithm; and of DeepSeek-V3 (256 routed
 * experts) with expert parallelism 64 on 16,384 H100 GPUs (issue #43's target: 0.2 s). */
#include <glib.h>
#include <gsl/gsl_errno.h>
#include <stdio.h>

#include "run/run.h"

/* Every strategy of @scenario (under @root) with @sets: the wall time, and the best step. */
static double all_strategies(const char *root, const char *scenario, const char *const *sets,
                             double *best)
{
    g_autofree char *path = g_build_filename(root, scenario, NULL);
    g_autoptr(GError) error = NULL;
    gint64 t0 = g_get_monotonic_time();
    g_autoptr(ParoRun) run = paro_run_load(path, sets, NULL, &error);
    if (run == NULL) {
        fprintf(stderr, "%s\n", error->message);
        return -1;
    }
    ParoRunOptions options = PARO_RUN_OPTIONS_INIT;
    *best = 0;
    for (guint i = 0; i < paro_strategy_n_all(); i++) {
        ParoStepResult r;
        if (!paro_run_strategy(run, paro_strategy_get(i), &options, &r, &error)) {
            fprintf(stderr, "%s\n", error->message);
            return -1;
        }
        if (r.fits && (*best == 0 || paro_time_to_s(r.step) < *best))
            *best = paro_time_to_s(r.step);
        paro_step_result_clear(&r);
    }
    return (double)(g_get_monotonic_time() - t0) / 1e6;
}

static void moe(const char *root)
{
    g_autofree char *model = g_build_filename(root, "models/hf/deepseek-v3-config.json", NULL);
    g_autofree char *m = g_strdup_printf("model=%s", model);
    const char *sets[] = {m, "topology.nodes=2048", "parallelism.ep=64", NULL};
    double best,
        wall = all_strategies(root, "scenarios/mixtral-8x7b_dgx-h100x8_n32-fsdp.yaml", sets, &best);
    printf("deepseek-v3 ep 64  16384 GPUs nccl         29 strategies in %8.3f s wall"
           " (best step %.3f s)\n",
           wall, best);
}

static void one(const char *root, gint64 nodes, const char *algo)
{
    g_autofree char *model = g_build_filename(root, "models/llama-65b.yaml", NULL);
    g_autofree char *m = g_strdup_printf("model=%s", model);
    g_autofree char *n = g_strdup_printf("topology.nodes=%" G_GINT64_FORMAT, nodes);
    g_autofree char *a = g_strdup_printf("collectives.algorithm=%s", algo);
    const char *sets[] = {m, n, a, "training.accumulation=8", "training.recompute=full", NULL};
    double best = 0;
    double wall = all_strategies(root, "scenarios/llama-7b_a100x8-100g_n32.yaml", sets, &best);
    printf("llama-65b %6" G_GINT64_FORMAT " GPUs %-12s 29 strategies in %8.3f s wall"
           " (best step %.3f s)\n",
           nodes * 8, algo, wall, best);
}

int main(void)
{
    gsl_set_error_handler_off();
    const char *root = g_getenv("PARO_SOURCE_ROOT");
    const char *algos[] = {"ring", "hierarchical", "ho-ring"};
    for (guint a = 0; a < G_N_ELEMENTS(algos); a++) {
        one(root ? root : ".", 128, algos[a]);
        one(root ? root : ".", 2048, algos[a]);
    }
    moe(root ? root : ".");
    return 0;
}
