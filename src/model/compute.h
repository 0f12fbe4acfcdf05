/* SPDX-License-Identifier: MIT */
/* Compute model: the time of each layer's forward and backward pass on one GPU, shared
 * by the closed-form guideline and the training-step simulation so the two agree. */
#pragma once

#include "model/model.h"

G_BEGIN_DECLS

typedef struct {
    double rate_flops;      /* achieved matmul rate: peak x efficiency, or calibrated */
    double hbm_Bps;         /* for memory-bound work */
    gint64 batch, seq;      /* micro-batch */
    double trainable_share; /* Psi'/Psi */
    ParoRecompute recompute;
} ParoComputeSetup;

typedef struct {
    double weight_share; /* this layer's share of the parameters (sums to 1) */
    double forward_s;
    double backward_s;    /* including the recomputed forward */
    double flops;         /* forward + backward + recomputation */
    double act_kept;      /* activation bytes kept from forward to backward */
    double act_transient; /* extra bytes while recomputing in backward */
} ParoLayerCost;

/**
 * paro_compute_layers:
 * Returns: (transfer full) GArray of ParoLayerCost, one per layer (one in all for a model
 * known only by its count). The first layer carries the embeddings, the last the final
 * norm and the output head. See compute.c for the formulas.
 */
GArray *paro_compute_layers(const ParoModel *model, const ParoComputeSetup *setup);

G_END_DECLS
