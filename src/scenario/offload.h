/* SPDX-License-Identifier: MIT */
/* What training.offload does to a strategy (decisions 80-82): which of its state leaves the
 * GPU for host memory or NVMe, the pinned host buffers that come with it, and the time of
 * each copy (PCIe, NVMe) and of the CPU optimizer step. Read by the closed-form guideline
 * and by the training-step simulation alike, as derived.h's figures are. */
#pragma once

#include "scenario/derived.h"

G_BEGIN_DECLS

/* Bytes of an fp32 gradient on the host: DeepSpeed keeps the gradients the CPU optimizer
 * reads in fp32 (stage_1_and_2.py initialize_optimizer_states, stage3.py
 * fp32_partitioned_groups_flat[i].grad). */
#define PARO_OFFLOAD_GRAD_BYTES 4.0

typedef struct {
    gboolean optimizer;       /* master, moments, fp32 gradients off the GPU; the step on the CPU */
    gboolean nvme_state;      /* master and moments on NVMe (optimizer: nvme) */
    gboolean parameters;      /* the 16-bit parameter shard off the GPU (a strategy that shards
                               * them over more than one GPU) */
    gboolean nvme_params;     /* ... on NVMe (parameters: nvme) */
    gboolean activations;     /* full recomputation's checkpoints copied to the host */
    gboolean grads_per_micro; /* gradient shards copied out after each micro-batch's
                               * reduction (g != N), else once after the gradient sync */
    double owned;             /* trainable parameters whose optimizer state the GPU owns */
    double grad_shard;        /* gradient elements the GPU copies out a step: Psi'/d(g), or the
                               * owned ones when g = N (reduced once, at the sync) */
    double param_shard;       /* parameters of the GPU's 16-bit shard, Psi/d(p) */
    ParoStateMemory gpu;      /* model states left on the GPU */
    double host_states;       /* per GPU in host memory: master and moments (cpu), fp32 gradients,
                               * the 16-bit parameter shard (parameters: cpu) */
    double host_buffers;      /* per GPU, pinned: the 16-bit copy of the owned shard the CPU step
                               * writes (without parameter offload), NVMe swap buffers */
    double nvme_bytes;        /* per GPU on NVMe */
} ParoOffloadState;

/**
 * paro_offload_state:
 * @z: the sizes of the GPU's share (a pipeline stage's, one TP rank's)
 * What @s's training.offload moves for @strategy, per GPU, activations aside.
 */
ParoOffloadState paro_offload_state(const ParoScenario *s, const ParoStrategy *strategy,
                                    const ParoStateSizes *z);

/** paro_offload_pcie_s: @bytes over a GPU's PCIe link, one direction. */
double paro_offload_pcie_s(const ParoScenario *s, double bytes);

/** paro_offload_nvme_s: @bytes read (@write FALSE) or written on the node's NVMe, shared by
 * its GPUs (each GPU's share: the node's bandwidth / GPUs per node); 0 without a figure. */
double paro_offload_nvme_s(const ParoScenario *s, double bytes, gboolean write);

/** paro_offload_cpu_step_s: the CPU optimizer's step on @owned parameters: the node's rate
 * shared by its GPUs, which step at once. */
double paro_offload_cpu_step_s(const ParoScenario *s, double owned);

/**
 * paro_offload_optimizer_s:
 * The optimizer phase of a GPU owning @o's shard, in series as DeepSpeed runs it: with the
 * optimizer offloaded, NVMe reads of master and moments (nvme), the CPU step, their NVMe
 * writes, and the NVMe write of the updated 16-bit shard (parameters: nvme); else the GPU's
 * own step (paro_scenario_optimizer_s). Copies over PCIe are apart
 * (paro_offload_after_step_bytes).
 */
double paro_offload_optimizer_s(const ParoScenarioDerived *d, const ParoOffloadState *o);

/**
 * paro_offload_after_step_bytes:
 * Bytes crossing PCIe after the step, and in which direction (@to_gpu): the updated 16-bit
 * owned shard to the GPU (optimizer offloaded, parameters not), or the updated parameter
 * shard to the host (parameters offloaded, optimizer on the GPU); 0 when nothing moves.
 */
double paro_offload_after_step_bytes(const ParoScenario *s, const ParoOffloadState *o,
                                     gboolean *to_gpu);

/** paro_offload_activation_bytes: per GPU in host memory for the activations: every layer's
 * checkpoint but the last (kept on the GPU for the first backward, DeepSpeed's
 * keep_last_count 1); 0 without activation offload. @kept: one layer's checkpoint. */
double paro_offload_activation_bytes(const ParoScenario *s, double kept, double layers);

/**
 * paro_offload_copies_s:
 * The copies of @micro micro-steps beside their compute, each direction of PCIe on its own
 * (the slower one returned): to the host, the gradient shard after each micro-batch's
 * reduction (g != N) and the @activations checkpoints; to the GPU, the gradient shard
 * accumulated so far before each later micro-batch's (DeepSpeed adds on the GPU:
 * stage3.py partition_grads, stage_1_and_2.py async_accumulate_grad_in_cpu_via_gpu), the
 * parameter shard before the forward's and the backward's gathers (after its NVMe read with
 * parameters: nvme) and the checkpoints back.
 */
double paro_offload_copies_s(const ParoScenario *s, const ParoOffloadState *o, double activations,
                             double micro);

/** paro_offload_host_bytes: host memory per node: GPUs per node x (@o's host states and
 * buffers + @activations). */
double paro_offload_host_bytes(const ParoScenario *s, const ParoOffloadState *o,
                               double activations);

/** paro_offload_describe: (transfer full) the header's line on offloading, or NULL when
 * nothing is offloaded: targets, host figures and the default they come from. */
char *paro_offload_describe(const ParoScenario *s);

G_END_DECLS
