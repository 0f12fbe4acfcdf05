/* SPDX-License-Identifier: MIT */
/* What simulating a scenario costs, estimated before anything runs (issue #16 C2, H1-H3,
 * C9): the step's task graph (layer-steps: micro-steps x layers, or the pipeline's tasks
 * with tp/pp), its memory, the collectives the cache will simulate (coll/budget.h) and the
 * trace. `run`, `sweep` (every point) and `plan` check it at once and refuse, located at
 * the input that drives it, what would exceed paro_limit_work_seconds or the memory limit;
 * `strategies`, in closed form, needs none of it. Rates measured on the 2-core machine of
 * 2026 (workload.c). */
#pragma once

#include "coll/budget.h"
#include "scenario/scenario.h"

G_BEGIN_DECLS

typedef struct {
    double tasks;            /* one strategy's step: layer-steps (1D) or pipeline tasks (3D) */
    double step_s;           /* one strategy's simulation */
    double step_bytes;       /* its peak memory */
    double trace_bytes;      /* one strategy's trace file */
    double coll_sims;        /* collectives the cache simulates for the strategies asked */
    double coll_s;           /* all of them */
    ParoCollWork coll;       /* the largest one, over the whole data-parallel group */
    gboolean explicit_graph; /* a tree (it has a root): every GPU is simulated */
} ParoWorkload;

/**
 * paro_workload_estimate:
 * The work of simulating @n_strategies strategies of @s (the step, twice with compression,
 * and the collectives). Errors: PARO_SIM_ERROR_INFEASIBLE when the cluster's link graph
 * would itself be too large to build.
 */
gboolean paro_workload_estimate(const ParoScenario *s, guint n_strategies, ParoWorkload *out,
                                GError **error);

/**
 * paro_workload_check:
 * @trace: a --trace is asked for (its size is then bounded too)
 * @extrapolate: the run reads long steps off a few micro-batches (ParoRunOptions)
 * Refuses with a located PARO_CONFIG_ERROR_RANGE, at the input that drives it (the
 * accumulation, the layers, the GPUs per node, the nodes...), a simulation of
 * @n_strategies strategies whose estimated time exceeds paro_limit_work_seconds, whose
 * memory exceeds paro_limit_memory or whose trace exceeds paro_limit_trace_bytes; the
 * message gives the estimate and its factors.
 */
gboolean paro_workload_check(const ParoScenario *s, guint n_strategies, gboolean trace,
                             gboolean extrapolate, GError **error);

/** paro_workload_refuse: sets a PARO_CONFIG_ERROR_RANGE located where @site was written
 * (the scenario's first line when unknown): "@message; lower <its key>". Returns FALSE. */
gboolean paro_workload_refuse(GError **error, const ParoScenario *s, ParoSite site,
                              const char *message);

/** paro_workload_step_driver: the input behind the step's tasks (the accumulation, the
 * layers, the stages or chunks of a pipeline); paro_workload_coll_driver: the input behind
 * the collectives' work (GPUs per node, nodes of an unfoldable cluster, channels, chunks). */
ParoSite paro_workload_step_driver(const ParoScenario *s);
ParoSite paro_workload_coll_driver(const ParoScenario *s, const ParoWorkload *w);

/**
 * paro_workload_check_clock:
 * Refuses a scenario some strategy of which would take longer than the picosecond clock
 * holds (about 106 days a step, closed form: compute + communication), or a time that is
 * not finite: the simulation could not represent its step, and `strategies` would print
 * inf. One rule for every command (issue #16 W3), checked at load; located in @root at the
 * input that drives the time furthest from its usual value.
 */
gboolean paro_workload_check_clock(const ParoScenario *s, const ParoNode *root, GError **error);

/** paro_workload_record_sites: keeps where the inputs of ParoSite were written in the
 * combined tree @root (or the mapping they default in), for paro_workload_check. */
void paro_workload_record_sites(ParoScenario *s, const ParoNode *root);

G_END_DECLS
