/* SPDX-License-Identifier: MIT */
/* Inside the planner: the shapes of the space (plan-space.c), their bounds, and the
 * simulation of one configuration at several accumulations (plan-simulate.c). */
#pragma once

#include "plan/plan.h"

G_BEGIN_DECLS

/* A layout and a micro-batch, and what the closed form says of them before any step is
 * simulated: the compute of a micro-batch and of the optimizer, and which strategies can
 * fit (their memory lower bound within the GPU's memory). */
typedef struct {
    ParoPlanLayout layout;
    gint64 micro_batch;
    gint64 dp;            /* data-parallel degree (the DP ranks are dp x cp) */
    gint64 layers;        /* the model's */
    double stage_micro_s; /* one micro-batch's layers on one device of a stage, on average */
    double optimizer_s;   /* the least optimizer step of the strategies that may fit */
    guint64 strategies;   /* bit i: paro_strategy_get (i) may fit */
} ParoPlanShape;

/* The overrides that make the scenario of @shape with @group, @accumulation and
 * @algorithm (NULL-terminated, after the request's own). */
GPtrArray *paro_plan_overrides(const ParoPlanRequest *rq, const ParoPlanShape *shape, gint64 group,
                               gint64 accumulation, int algorithm);

/* Every shape of the request's space whose memory lower bound lets a strategy fit, in a
 * fixed order, bounded on @jobs threads. */
GArray *paro_plan_shapes(const char *path, const ParoScenario *base, ParoPlanRequest *rq,
                         GError **error);

/* tp = cp = ep = pp = 1, not layered: where the search tries every PaRO group size. */
gboolean paro_plan_layout_is_dp(const ParoPlanLayout *layout);

/* The group sizes the search gives @shape (GArray of gint64, largest last). */
GArray *paro_plan_group_sizes(const ParoPlanShape *shape, gint64 gpus_per_node);

/* The shapes of the request's space at the most: every layout, recomputation level and
 * micro-batch (the work estimate's count; the search stops a layout's micro-batches at the
 * first none fits). */
guint paro_plan_count_shapes(const ParoScenario *base, const ParoPlanRequest *rq);

/* The step's compute lower bound at @accumulation (a device's layers and optimizer), and
 * the least fill and drain of its pipeline beside it: their sum bounds the step. */
double paro_plan_compute_bound(const ParoPlanShape *shape, gint64 accumulation);
double paro_plan_bubble_bound(const ParoPlanShape *shape);

/* A configuration's simulations, remembered by accumulation: the search asks one
 * configuration for several batches, and their extrapolations share points. */
typedef struct _ParoPlanUnit ParoPlanUnit;

ParoPlanUnit *paro_plan_unit_new(const char *path, const ParoPlanRequest *rq,
                                 const ParoPlanShape *shape, gint64 group, int algorithm,
                                 ParoCollCache *cache);
void paro_plan_unit_free(ParoPlanUnit *u);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ParoPlanUnit, paro_plan_unit_free)

/* Appends to @rows one row per strategy the shape may fit, its step at @accumulation
 * (extrapolated from a few periods where the schedule is periodic). */
gboolean paro_plan_unit_rows(ParoPlanUnit *u, gint64 accumulation, GArray *rows, GError **error);

/* The step of @u at @accumulation without its data-parallel collectives, with
 * paro_plan_floor_strategy's optimizer: what every strategy's step holds besides its own
 * collectives, so at most any of them (tests/test_plan_space.c checks it on every
 * configuration of its space). One strategy simulated instead of all. */
gboolean paro_plan_unit_floor(ParoPlanUnit *u, gint64 accumulation, double *step_s, GError **error);
const ParoStrategy *paro_plan_floor_strategy(void);

G_END_DECLS
