/* SPDX-License-Identifier: MIT */
/* `parosim plan`: the shortest time to train a model on a cluster. For every data-parallel
 * configuration (PaRO group size, micro-batch, global collective algorithm) and every
 * strategy, the accumulation is set so the global batch comes closest to the target
 * (the critical batch of the scaling law by default), one step is simulated, and the time
 * to train is the token budget's steps times the step time. Layouts: tp (inside a node) x
 * pp (dividing the layers) with 1F1B, and with --lga also layered accumulation on modular
 * pipelines (Lamy-Poirier 2021). */
#pragma once

#include "pipe/pipe.h"
#include "plan/scaling.h"
#include "run/run.h"

G_BEGIN_DECLS

/* Tensor x pipeline layout and the pipeline's schedule. */
typedef struct {
    gint64 tp, pp;
    ParoPipeSchedule schedule; /* 1f1b unless layered */
    gint64 virtual_stages;     /* modules per device (modular: one layer each) */
    gboolean layered;          /* layered gradient accumulation, with full recomputation */
} ParoPlanLayout;

typedef struct {
    const ParoStrategy *strategy;
    ParoPlanLayout layout;
    gint64 group;            /* m */
    gint64 micro_batch;      /* b, sequences */
    gint64 accumulation;     /* A */
    ParoAlgorithm algorithm; /* of global collectives */
    double batch_tokens;     /* n b A s */
    double step_s;           /* simulated */
    double steps;            /* token budget / batch */
    double train_s;          /* steps x step_s */
    double gpu_hours;        /* n x train_s / 3600 */
    double peak_bytes;
    gboolean fits;
} ParoPlanRow;

typedef struct {
    double tokens;       /* token budget; 0: the scaling law's (2 B_crit S_min) */
    double batch_tokens; /* target global batch; 0: the critical batch */
    gboolean dp_only;    /* search tp = pp = 1 only */
    gboolean lga;        /* also layered accumulation with modular pipelines (one layer a module) */
    const char *const *sets;   /* fixed overrides (nullable) */
    ParoTrainingBudget budget; /* (out) the scaling law's figures for the model */
    gint64 gpus;               /* (out) all GPUs of the cluster */
    double params;             /* (out) non-embedding parameters used for the law */
} ParoPlanRequest;

/**
 * paro_plan_search:
 * Returns: (transfer full) GArray of ParoPlanRow, fastest training first among those that
 * fit (then the rest); NULL and a located error for bad input.
 */
GArray *paro_plan_search(const char *scenario_path, ParoPlanRequest *request, GError **error);

/**
 * paro_plan_check_work:
 * Refuses, located at the input that drives it, a search of @request on @base whose
 * estimated work exceeds paro_limit_work_seconds, or whose target batch needs an
 * accumulation beyond its limit (plan-budget.c). @request's gpus, tokens and batch_tokens
 * must be set.
 */
gboolean paro_plan_check_work(const ParoScenario *base, const ParoPlanRequest *request,
                              GError **error);

/* The relative error the planner accepts when it extrapolates a step that converges to its
 * steady state geometrically instead of reaching it (plan.c). */
#define PARO_PLAN_GEOMETRIC_TOLERANCE 1e-6

/**
 * paro_plan_extrapolate_geometric:
 * @y: a step's time (or peak) at five accumulations spaced by one period, y[4] the last;
 * @periods: how many periods beyond y[4] to extrapolate (>= 0, may be fractional).
 * When the slopes d_k = y[k] - y[k-1] approach their limit geometrically, each change
 * d_{k+1} - d_k a constant ratio 0 < r < 0.95 of the previous one (two estimates of r
 * agreeing), sets *@out to y[4] plus the sum of the next @periods slopes,
 * n d4 + e3 (r / (1 - r)) (n - r (1 - r^n) / (1 - r)), with r from the last three slopes,
 * and *@error to how much that sum moves with the other estimate of r; returns FALSE when
 * the slopes do not converge so.
 */
gboolean paro_plan_extrapolate_geometric(const double y[5], double periods, double *out,
                                         double *error);

/**
 * paro_plan_extrapolate_five:
 * The planner's rule for five points one period apart (@y as above): when the last three
 * are on a line (the second difference within 1e-9 of the last point: what the planner
 * asks of its first three points), y[4] + @periods (y[4] - y[3]);
 * converging geometrically, paro_plan_extrapolate_geometric's sum if its error estimate is
 * within PARO_PLAN_GEOMETRIC_TOLERANCE of it. FALSE when neither.
 */
gboolean paro_plan_extrapolate_five(const double y[5], double periods, double *out);

/** paro_plan_accumulation: the A >= 1 whose batch n b A s is nearest @batch_tokens. */
gint64 paro_plan_accumulation(double batch_tokens, gint64 gpus, gint64 micro_batch,
                              gint64 sequence);

G_END_DECLS
