/* SPDX-License-Identifier: MIT */
/* The work of a plan, estimated before the search (issue #16 C3, H1-H3): the search
 * simulates every strategy for every layout, group size, micro-batch and algorithm it
 * tries (plan.c), twice with at most 4 micro-steps for data parallelism alone, and with
 * the whole accumulation for pipelines, each configuration with a new collective cache.
 * The configurations are counted as plan.c enumerates them; the cost of each comes from
 * scenario/workload.c's rates. Measured here: the default scenario, 1.5 s searched, 1.6 s
 * estimated. */
#include "plan/plan.h"

#include <math.h>

#include "core/error.h"
#include "core/limits.h"
#include "scenario/workload.h"

#define STEP_S_PER_LAYER_STEP 2e-6
#define PIPE_S_PER_TASK 0.25e-6
#define PLAN_SIMULATED_MICRO_STEPS 4

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
    const gint64 micro_batches[] = {1, 2, 4, 8, 16};
    double seconds = 0, configs = 0;
    for (gint64 tp = 1; tp <= (rq->dp_only ? 1 : gpn); tp *= 2)
        for (gint64 pp = 1; pp <= (rq->dp_only ? 1 : MIN((gint64)L, 64)); pp *= 2) {
            if (gpn % tp != 0 || (gint64)L % pp != 0 || n % (tp * pp) != 0)
                continue;
            gint64 dp = n / (tp * pp);
            gboolean plain = tp == 1 && pp == 1;
            if (dp % (gpn / tp) != 0)
                continue; /* stages sharing a node: left out of the search (plan.c) */
            double groups = 1;
            if (plain) {
                groups = 0;
                for (gint64 m = 1; m <= n; m *= 2)
                    if ((m <= gpn && gpn % m == 0) || (m > gpn && m % gpn == 0 && n % m == 0))
                        groups++;
            }
            for (guint bi = 0; bi < G_N_ELEMENTS(micro_batches); bi++) {
                double b = (double)micro_batches[bi];
                if ((double)dp * b * seq > 2 * rq->batch_tokens && b > 1)
                    continue;
                double A = MAX(1, floor(rq->batch_tokens / ((double)dp * b * seq) + 0.5));
                double a_first = MIN(A, PLAN_SIMULATED_MICRO_STEPS);
                /* data parallelism alone: A = 4 and 3 (or A itself), ring and ho-ring, every
                 * group size; a pipeline: A = 4, then the whole A */
                double step =
                    plain ? (A > PLAN_SIMULATED_MICRO_STEPS ? 2 * PLAN_SIMULATED_MICRO_STEPS - 1
                                                            : A) *
                                L * STEP_S_PER_LAYER_STEP
                          : 2.0 * (double)pp * (A + a_first) * PIPE_S_PER_TASK;
                double k = plain ? groups * 2 : 1;
                configs += k;
                seconds += k * ((double)n_strategies * step + w.coll_s);
                if (rq->lga && base->model->has_shape) {
                    /* modular, one layer a module: 2 L A tasks, simulated at A = 4 and whole */
                    configs += 1;
                    seconds +=
                        (double)n_strategies * 2.0 * L * (A + a_first) * PIPE_S_PER_TASK + w.coll_s;
                }
            }
        }
    if (seconds <= paro_limit_plan_budget_s())
        return TRUE;
    g_autofree char *message = g_strdup_printf(
        "planning would simulate %.0f configurations of %u strategies, about %.0f s (the "
        "collectives of one: %.2g s), beyond the limit of %.3g s",
        configs, n_strategies, seconds, w.coll_s, paro_limit_plan_budget_s());
    ParoSite site =
        w.coll_s * configs > seconds / 2 ? paro_workload_coll_driver(base, &w) : PARO_SITE_LAYERS;
    return paro_workload_refuse(error, base, site, message);
}
