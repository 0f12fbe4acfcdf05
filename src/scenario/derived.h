/* SPDX-License-Identifier: MIT */
/* What a scenario implies, computed once and read by both the closed-form guideline and
 * the training-step simulation: the state sizes (n, m, Psi, Psi', bytes per element), the
 * cluster's alpha-beta links, the compute model's inputs and every layer's cost, and the
 * NCCL buffers a strategy's communicators take. Neither consumer computes these itself, so
 * the two cannot disagree on them. */
#pragma once

#include "coll/analytic.h"
#include "model/compute.h"
#include "scenario/scenario.h"
#include "strategy/strategy.h"

G_BEGIN_DECLS

typedef struct {
    const ParoScenario *scenario; /* borrowed: it outlives this */
    ParoStateSizes sizes;         /* n = dp, m, Psi, Psi', b_p, b_g, K of the whole model */
    ParoCommModel comm;           /* the cluster's links (alpha-beta), as the closed form uses */
    ParoComputeSetup compute;     /* rate, HBM bandwidth, micro-batch, recomputation */
    GArray *layers;               /* ParoLayerCost, one per layer (model/compute.c) */
    double flops_per_micro_step;  /* per GPU, one micro-batch's forward and backward */
    double micro_step_s;          /* forward + backward of all layers, per GPU */
} ParoScenarioDerived;

/** paro_scenario_derive: (transfer full) the derived quantities of @s, which must outlive
 * the result. */
ParoScenarioDerived *paro_scenario_derive(const ParoScenario *s);
void paro_scenario_derived_free(ParoScenarioDerived *d);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ParoScenarioDerived, paro_scenario_derived_free)

/** paro_scenario_comm_model: the alpha-beta parameters of a scenario's cluster. */
ParoCommModel paro_scenario_comm_model(const ParoScenario *s);

/** paro_scenario_compute_setup: the compute model's inputs for a scenario. */
ParoComputeSetup paro_scenario_compute_setup(const ParoScenario *s);

/** paro_scenario_moe_load: the hottest expert-parallel rank's routes over the mean:
 * training.moe.imbalance, capped by a capacity factor (dropped tokens). */
double paro_scenario_moe_load(const ParoScenario *s);

/**
 * paro_scenario_param_groups:
 * The two groups data parallelism reduces and shards under expert parallelism (decision
 * 72): @dense, every parameter but the routed experts', over n = dp x cp ranks in groups of
 * m; @experts, one GPU's ep-th of the routed experts, over the n / ep expert-data-parallel
 * ranks in groups of m / ep (or those a node holds). Without expert parallelism @dense is
 * @all and @experts holds no parameter. Trainable shares are the model's.
 */
void paro_scenario_param_groups(const ParoScenario *s, const ParoStateSizes *all,
                                ParoStateSizes *dense, ParoStateSizes *experts);

/** paro_scenario_state_sizes: n, m, Psi, Psi', b_p, b_g, K of a scenario. */
ParoStateSizes paro_scenario_state_sizes(const ParoScenario *s);

/**
 * paro_scenario_comm_buffers:
 * NCCL's buffers for @strategy: 2 connections (send, receive) x channels x the three
 * protocols' buffers at NCCL's defaults (LL 512 KiB, LL128 4,915,200 B, Simple
 * NCCL_BUFFSIZE 4 MiB) for each communicator the strategy uses (intra-group, inter-group,
 * global).
 */
double paro_scenario_comm_buffers(const ParoScenario *s, const ParoStrategy *strategy);

/** paro_scenario_recomputed_layers: the layers full recomputation runs forward again:
 * every layer, or with training.recompute_every = k the k-th, 2k-th, ... (floor(L / k));
 * 0 without full recomputation. */
double paro_scenario_recomputed_layers(const ParoScenario *s);

/** paro_scenario_optimizer_s: the optimizer step's time on the @owned trainable parameters
 * a GPU updates: fused mixed-precision Adam reads the fp32 master, both moments and the
 * gradient and writes master, moments and the 16-bit parameter, (2K + b_g + b_p) bytes each,
 * at the HBM bandwidth; unfused (paro_framework_fused_optimizer false: PyTorch's AdamW),
 * PARO_UNFUSED_ADAMW_BYTES x K/12 bytes each at the flat passes' rate (decision 46). */
double paro_scenario_optimizer_s(const ParoScenarioDerived *d, double owned);

/** paro_scenario_layer_activations: a layer's activations on one rank of @tp (sequence
 * parallel as the scenario says) kept for its backward under the scenario's recomputation
 * (@kept) and without any (@whole), with the framework's softmax and SwiGLU and fp8's
 * savings. */
void paro_scenario_layer_activations(const ParoScenario *s, gint64 tp, double *kept, double *whole);

/** paro_scenario_cp_kv_bytes: the keys and values of one rank's s/cp tokens on one rank of
 * @tp, in the training precision: what context parallelism moves per block. */
double paro_scenario_cp_kv_bytes(const ParoScenario *s, gint64 tp);

/** paro_scenario_loss_memory: the loss's memory on the last layer's rank of @tp for one
 * micro-batch: paro_framework_loss_memory's bytes a logit times its T x V/t logits (the
 * output head gathers a sequence-parallel input whole); zeros for a model without shape. */
ParoLossMemory paro_scenario_loss_memory(const ParoScenario *s, gint64 tp);

/** paro_scenario_fp8_weight_bytes: Transformer Engine's fp8 copies of the linear layers'
 * weights (each weight and its transpose, one byte each), kept across a step's micro-batches,
 * for a GPU whose parameter state takes @param_state_bytes: resident where the strategy keeps
 * whole parameters; 0 without fp8 or where it gathers them (paro_scenario_gathered_bytes). */
double paro_scenario_fp8_weight_bytes(const ParoScenario *s, const ParoStrategy *strategy,
                                      double param_state_bytes);

/** paro_scenario_gathered_bytes: a gathered layer's buffer for @params parameters: their
 * 16-bit copy, and with fp8 the fp8 weight and transpose cast from it. */
double paro_scenario_gathered_bytes(const ParoScenarioDerived *d, double params);

/* cuBLAS's default workspace on Hopper (32 MiB; 4 MiB before). */
#define PARO_CUBLAS_WORKSPACE_BYTES (32.0 * 1048576.0)
/* PyTorch's foreach AdamW step: one fp32 temporary per parameter it steps (the second
 * moments' square roots; decision 94). */
#define PARO_FOREACH_OPTIMIZER_TEMP_BYTES 4.0
/* The share of peak assumed for a GPU whose GEMM rate parosim does not know (topology
 * gpu.matmul_efficiency unset and the name not in paro_gpu_traits_from_name). */
#define PARO_UNKNOWN_GPU_EFFICIENCY 0.5

G_END_DECLS
