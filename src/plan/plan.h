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
    int jobs;                  /* worker threads; 0: one a core */
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
 * steady state geometrically instead of reaching it (plan.c, paro_extrapolate_five): looser
 * than a run's 1e-9, since a plan ranks hundreds of configurations and the pipelines'
 * slopes reach 1e-9 only some 50 periods on. */
#define PARO_PLAN_GEOMETRIC_TOLERANCE 1e-6

/** paro_plan_accumulation: the A >= 1 whose batch n b A s is nearest @batch_tokens. */
gint64 paro_plan_accumulation(double batch_tokens, gint64 gpus, gint64 micro_batch,
                              gint64 sequence);

G_END_DECLS
