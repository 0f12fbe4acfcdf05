/* SPDX-License-Identifier: MIT */
/* `parosim plan`: the shortest time to train a model on a cluster. For every data-parallel
 * configuration (PaRO group size, micro-batch, global collective algorithm) and every
 * strategy, the accumulation is set so the global batch comes closest to the target
 * (the critical batch of the scaling law by default), one step is simulated, and the time
 * to train is the token budget's steps times the step time. Tensor and pipeline
 * dimensions join the search when the training step models them. */
#pragma once

#include "plan/scaling.h"
#include "step/step.h"

G_BEGIN_DECLS

typedef struct {
    const ParoStrategy *strategy;
    gint64 group;          /* m */
    gint64 micro_batch;    /* b, sequences */
    gint64 accumulation;   /* A */
    int algorithm;         /* ParoAlgorithm of global collectives */
    double batch_tokens;   /* n b A s */
    double step_s;         /* simulated */
    double steps;          /* token budget / batch */
    double train_s;        /* steps x step_s */
    double gpu_hours;      /* n x train_s / 3600 */
    double peak_bytes;
    gboolean fits;
} ParoPlanRow;

typedef struct {
    double tokens;         /* token budget; 0: the scaling law's (2 B_crit S_min) */
    double batch_tokens;   /* target global batch; 0: the critical batch */
    const char *const *sets; /* fixed overrides (nullable) */
    ParoTrainingBudget budget; /* (out) the scaling law's figures for the model */
    gint64 gpus;           /* (out) n */
    double params;         /* (out) non-embedding parameters used for the law */
} ParoPlanRequest;

/**
 * paro_plan_search:
 * Returns: (transfer full) GArray of ParoPlanRow, fastest training first among those that
 * fit (then the rest); NULL and a located error for bad input.
 */
GArray *paro_plan_search(const char *scenario_path, ParoPlanRequest *request, GError **error);

/** paro_plan_accumulation: the A >= 1 whose batch n b A s is nearest @batch_tokens. */
gint64 paro_plan_accumulation(double batch_tokens, gint64 gpus, gint64 micro_batch, gint64 sequence);

G_END_DECLS
