/* SPDX-License-Identifier: MIT */
/* The closed-form evaluation of every strategy in a scenario (the PaRO guideline):
 * memory by component, per-GPU intra/inter traffic of one global step, compute and
 * communication time, T = max(t_comp, t_comm), fit, dominance and rank. */
#pragma once

#include "scenario/derived.h"

G_BEGIN_DECLS

typedef struct {
    const ParoStrategy *strategy;
    gboolean effective;
    /* bytes per GPU */
    double mem_params, mem_grads, mem_optimizer, mem_model_states;
    double mem_activations;  /* one micro-batch, all layers (Korthikanti) */
    double mem_buffers;      /* gathered parameters (2 layers) and one layer's gradients */
    double mem_comm_buffers; /* NCCL connection buffers of the communicators used */
    double mem_workspace;    /* cuBLAS workspace */
    double mem_overhead;     /* the scenario's memory_overhead */
    double mem_total;
    double mem_host; /* host memory per node: offloaded state and pinned buffers (offload.h) */
    /* bytes each GPU sends per global step (compressed sizes when compression applies) */
    double traffic_intra, traffic_inter;
    /* seconds per global step */
    double t_param, t_gradient, t_sync_grad, t_sync_param; /* t_param, t_gradient: x A */
    double t_compute;   /* A micro-steps of forward+backward, plus the optimizer */
    double t_optimizer; /* the optimizer's share of t_compute */
    double t_comm;      /* (t_param + t_gradient)*A + t_syncg + t_syncp */
    double t_compress;  /* compression and decompression inside t_comm (compress/compress.c) */
    double bytes_saved; /* bytes each GPU does not send per step thanks to compression */
    double t_offload;   /* PCIe and NVMe copies beside the micro-steps (offload.h) */
    double t_step;      /* max(t_compute, t_comm, t_offload): full overlap */
    double t_serial;    /* t_compute + t_comm + t_offload: no overlap */
    gboolean fits;      /* in GPU memory and, with offloading, in host memory */
    gboolean tight;     /* fits, but mem_total within the allocator's headroom
                         * (paro_scenario_is_tight); fits && !tight: fits with margin */
    gboolean host_fits; /* mem_host within the node's host memory */
    gboolean dominated;
    int rank; /* 1 = fastest step among those that fit with margin (then the tight ones,
               * then the rest: decision 84) */
} ParoStrategyResult;

typedef struct {
    const ParoScenarioDerived *derived; /* borrowed: it outlives this */
    GArray *results;                    /* ParoStrategyResult, in rank order */
} ParoGuideline;

void paro_guideline_free(ParoGuideline *g);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ParoGuideline, paro_guideline_free)

/** paro_guideline_evaluate: (transfer full) every strategy of paro_strategy_get(), ranked. */
ParoGuideline *paro_guideline_evaluate(const ParoScenarioDerived *d);

/** paro_guideline_find: @st's row, or NULL. */
const ParoStrategyResult *paro_guideline_find(const ParoGuideline *g, const ParoStrategy *st);

G_END_DECLS
