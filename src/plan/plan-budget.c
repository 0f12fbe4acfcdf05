/* SPDX-License-Identifier: MIT */
/* The work of a plan, estimated before the search (issue #16 C3, H1-H3): the search loads
 * every shape of its space once to bound it (plan-space.c), then simulates configurations
 * in the order of their bounds. What it simulates depends on the bounds, so the estimate
 * counts what every search does: the shapes' loads, and data parallelism alone over every
 * group size and both algorithms, each configuration's collectives timed once (the
 * layout whose collectives span the whole cluster, what a flow-model plan of thousands of
 * nodes spends its time on) and its strategies simulated at 4 and 3 micro-steps. The cost
 * of each comes from scenario/workload.c's rates. */
#include "plan/plan-private.h"

#include <math.h>

#include "core/error.h"
#include "core/limits.h"
#include "scenario/workload.h"

#define STEP_S_PER_LAYER_STEP 2e-6
#define SHAPE_LOAD_S 0.3e-3 /* a shape loaded and bounded (measured: 0.22 ms, Llama-3-70B) */

gboolean paro_plan_check_work(const ParoScenario *base, const ParoPlanRequest *rq, GError **error)
{
    ParoWorkload w;
    guint n_strategies = paro_strategy_n_all();
    if (!paro_workload_estimate(base, n_strategies, &w, error))
        return FALSE;
    gint64 gpn = base->topology->gpus_per_node, n = rq->gpus;
    double L = base->model->has_shape ? (double)base->model->layers : 1;
    double seq = (double)base->training.sequence;
    /* the largest accumulation any configuration asks for: one sequence a GPU */
    double a_max = rq->batch_tokens / ((double)n * seq);
    if (floor(a_max + 0.5) > paro_limit_accumulation.max) {
        g_autofree char *max = paro_format_count(paro_limit_accumulation.max);
        g_set_error(error, PARO_CONFIG_ERROR, PARO_CONFIG_ERROR_RANGE,
                    "a batch of %.3g tokens (--batch-tokens, default the critical batch) on "
                    "%" G_GINT64_FORMAT
                    " GPUs of %.0f-token sequences needs up to %.3g micro-steps a step, above the "
                    "limit of %s: %s",
                    rq->batch_tokens, n, seq, a_max, max, paro_limit_accumulation.why);
        return FALSE;
    }
    double shapes = (double)paro_plan_count_shapes(base, rq);
    /* data parallelism alone over the whole cluster, as the search gives it group sizes */
    ParoPlanShape dp_only = {
        .layout = {.tp = 1, .cp = 1, .ep = 1, .pp = 1, .virtual_stages = 1, .recompute_every = 1},
        .dp = n};
    g_autoptr(GArray) group_sizes = paro_plan_group_sizes(&dp_only, gpn);
    double groups = (double)group_sizes->len;
    double configs = 2 * groups;
    double seconds = shapes * SHAPE_LOAD_S +
                     configs * ((double)n_strategies * 7 * L * STEP_S_PER_LAYER_STEP + w.coll_s);
    if (seconds <= paro_limit_plan_budget_s())
        return TRUE;
    g_autofree char *message = g_strdup_printf(
        "planning would bound %.0f shapes and simulate at least %.0f configurations of %u "
        "strategies, about %.0f s (the collectives of one: %.2g s), beyond the limit of %.3g s",
        shapes, configs, n_strategies, seconds, w.coll_s, paro_limit_plan_budget_s());
    ParoSite site =
        w.coll_s * configs > seconds / 2 ? paro_workload_coll_driver(base, &w) : PARO_SITE_LAYERS;
    return paro_workload_refuse(error, base, site, message);
}
