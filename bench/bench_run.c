/* SPDX-License-Identifier: MIT */
/* Benchmark (prints figures; asserts nothing about speed): `parosim run` for all 29
 * strategies of LLaMA-65B (A = 8, full recomputation) on 1,024 and 16,384 A100 GPUs
 * (100 Gb/s nodes), with each global-collective algorithm. */
#include <glib.h>
#include <gsl/gsl_errno.h>
#include <stdio.h>

#include "run/run.h"

static void one(const char *root, gint64 nodes, const char *algo)
{
    g_autofree char *path = g_build_filename(root, "scenarios/llama-7b_a100x8-100g_n32.yaml", NULL);
    g_autofree char *model = g_build_filename(root, "models/llama-65b.yaml", NULL);
    g_autofree char *m = g_strdup_printf("model=%s", model);
    g_autofree char *n = g_strdup_printf("topology.nodes=%" G_GINT64_FORMAT, nodes);
    g_autofree char *a = g_strdup_printf("collectives.algorithm=%s", algo);
    const char *sets[] = {m, n, a, "training.accumulation=8", "training.recompute=full", NULL};
    g_autoptr(GError) error = NULL;
    gint64 t0 = g_get_monotonic_time();
    g_autoptr(ParoRun) run = paro_run_load(path, sets, NULL, &error);
    if (run == NULL) {
        fprintf(stderr, "%s\n", error->message);
        return;
    }
    ParoRunOptions options = PARO_RUN_OPTIONS_INIT;
    double best = 0;
    for (guint i = 0; i < paro_strategy_n_all(); i++) {
        ParoStepResult r;
        if (!paro_run_strategy(run, paro_strategy_get(i), &options, &r, &error)) {
            fprintf(stderr, "%s\n", error->message);
            return;
        }
        if (r.fits && (best == 0 || paro_time_to_s(r.step) < best))
            best = paro_time_to_s(r.step);
        paro_step_result_clear(&r);
    }
    double wall = (double)(g_get_monotonic_time() - t0) / 1e6;
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
    return 0;
}
