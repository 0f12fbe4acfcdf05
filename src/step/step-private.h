/* SPDX-License-Identifier: MIT */
/* Shared inside step/ and with white-box tests: the costs of a step's communication
 * (step-coll.c) and the graph builder (step-build.c). */
#pragma once

#include "scenario/offload.h"
#include "sched/taskgraph.h"
#include "step/step.h"

G_BEGIN_DECLS

/* Resources of stage d's GPU in the step's task graph: its NVLink (fabric) port and its share
 * of the node's NICs, each direction. */
enum { PARO_RES_INTRA_TX, PARO_RES_INTRA_RX, PARO_RES_INTER_TX, PARO_RES_INTER_RX, PARO_RES_N };

static inline guint paro_step_resource(guint stage, guint which)
{
    return stage * PARO_RES_N + which;
}

/** paro_step_dp_cluster: the cluster the DP collectives run on: the scenario's, or with
 * tp*pp > 1 its DP view (step-coll.c). Shallow: strings stay the scenario's. */
void paro_step_dp_cluster(const ParoScenario *s, ParoTopology *out);

/** paro_step_expert_view: the scenario (@view, on @topology) the routed experts' DP
 * collectives are timed on under expert parallelism: their n / ep ranks as data
 * parallelism, those of a node on a node of as many GPUs with their share of its NICs.
 * Shallow: strings stay the scenario's. */
void paro_step_expert_view(const ParoScenario *s, ParoScenario *view, ParoTopology *topology);

/** paro_step_dp_comm_model: the alpha-beta figures of paro_step_dp_cluster, for traffic
 * accounting. */
ParoCommModel paro_step_dp_comm_model(const ParoScenario *s);

/** paro_step_dp_coll_time: the simulated time of one uncompressed DP collective. */
gboolean paro_step_dp_coll_time(const ParoScenario *s, ParoCollCache *cache, ParoCollKind op,
                                ParoScope scope, double size_bytes, ParoTime *out, GError **error);

/* A communication task's cost: its time (network and codec, pipelined or in series), what
 * it takes of its GPU's links when alone, and the compression accounting. */
typedef struct {
    ParoTime time;
    double intra_share, inter_share; /* of the fabric port and the NIC share, 0..1 */
    double sms_share;                /* of its GPU's SMs its kernels hold (DP collectives) */
    double codec_s;                  /* compression kernels' busy time */
    double saved_bytes;              /* bytes not sent thanks to compression */
} ParoStepComm;

/** paro_step_link_share: the share of a link of @bandwidth_Bps that @bytes sent in @seconds
 * take, at most 1. */
double paro_step_link_share(double bytes, double seconds, double bandwidth_Bps);

/** paro_step_cp_layer: one layer's context-parallel communication for one micro-batch,
 * forward or @backward (with a recomputed layer's forward again), as it stays exposed
 * beside the attention (step-context.c); zero when cp = 1. */
ParoStepComm paro_step_cp_layer(const ParoScenario *s, const ParoLayerCost *lc, gboolean backward);

/** paro_step_ep_layer: one MoE layer's dispatch and combine all-to-alls for one
 * micro-batch, forward or @backward (twice as many when @recomputed); zero when ep = 1. */
ParoStepComm paro_step_ep_layer(const ParoScenario *s, gboolean backward, gboolean recomputed);

/** paro_step_dp_coll_sms: the share of a GPU's SMs a DP collective over @scope holds:
 * NCCL's channels for that communicator (one block each, coll/nccl.c) over the GPU's SMs;
 * 0 when the GPU's SM count is unknown. */
double paro_step_dp_coll_sms(const ParoScenario *s, ParoScope scope);

/** paro_step_dp_coll: one DP collective @call of @size_bytes (before compression). */
gboolean paro_step_dp_coll(const ParoScenario *s, const ParoCompression *compression,
                           ParoCollCache *cache, const ParoCollCall *call, double size_bytes,
                           ParoStepComm *out, GError **error);

/**
 * paro_step_tp_layer:
 * One layer's TP collectives for one micro-batch, forward or @backward: 2 AllReduces of
 * S = b*s*h*bytes over tp GPUs of a node, 4 in the backward of a @recomputed layer
 * (AllGather + ReduceScatter pairs with sequence parallelism, the same bytes), each the
 * closed-form ring on the node's fabric (step-coll.c says why); zero when tp = 1.
 */
gboolean paro_step_tp_layer(const ParoScenario *s, const ParoCompression *compression,
                            ParoCollCache *cache, gboolean backward, gboolean recomputed,
                            ParoStepComm *out, GError **error);

/**
 * paro_step_p2p:
 * One pipeline send between neighbouring stages: a micro-batch's activation (or its
 * gradient) b*s*h*bytes / tp (Megatron's scatter-gather split across the TP ranks), through
 * the pipeline's compressor, at the per-GPU inter-node bandwidth and latency, or the
 * fabric's when the two stages share a node (@intra: paro_step_p2p_is_intra).
 */
ParoStepComm paro_step_p2p(const ParoScenario *s, const ParoCompression *compression,
                           gboolean intra);

/** paro_step_p2p_is_intra: stages @from and @to share a node: with tp x dp below the GPUs
 * of a node, each node holds GPUs per node / (tp x dp) consecutive stages. */
gboolean paro_step_p2p_is_intra(const ParoScenario *s, gint64 from, gint64 to);

/**
 * paro_step_stage_share:
 * The share of the model's parameters on pipeline stage @stage: the weight shares of its
 * layers (model/compute.c: the first layer carries the input embedding, the last the final
 * norm and an untied head), exactly 1 when one stage holds every layer.
 */
double paro_step_stage_share(const ParoScenarioDerived *d, gint64 stage);

/* What a layer pass's TP collectives (@time in all) leave exposed when they overlap the
 * products they feed (framework.tp_overlap): split into tp chunks, each hidden behind the
 * product on the chunk before, so one chunk's share stays exposed, or what the pass's
 * products (the recomputed forward's too, backward under full recomputation) cannot hide
 * if that is more. Their links are not held meanwhile. */
ParoTime paro_step_tp_exposed(const ParoScenario *s, const ParoLayerCost *lc, gboolean forward,
                              ParoTime time);

/* What one layer's backward TP collectives (not a recomputed forward's) leave exposed when
 * each column-parallel product's input-gradient collective (the AllReduce; with sequence
 * parallelism the ReduceScatter) runs beside its weight-gradient product, and with sequence
 * parallelism the re-gather of its input beside its input-gradient product
 * (framework.tp_async_dgrad: Megatron-LM since 2021-09, decision 58): per column-parallel
 * product (QKV, the MLP's first), what the collective takes beyond that product; the
 * row-parallel products' gathers of the output gradient (sequence parallelism) stay in
 * series. @c gives the weight gradients computed (none for frozen LoRA bases). */
ParoTime paro_step_tp_backward_async(const ParoScenario *s, const ParoCompression *compression,
                                     const ParoComputeSetup *c, const ParoLayerCost *lc);

/* ---- the graph builder (step-build.c), driven by step.c ---- */

typedef struct {
    GArray *reductions;      /* ParoTaskId: the stage's reduce-scatters, in order */
    GArray *last_reductions; /* those of the last micro-batch */
    ParoTaskId previous;     /* the stage's last compute-stream task so far */
    double share;            /* of the model's parameters (paro_step_stage_share) */
    double expert_share;     /* of the routed experts' (expert parallelism) */
    double compress_s, bytes_saved;
    ParoOffloadState offload; /* what the stage's GPU offloads (scenario/offload.h) */
    double host_activations;  /* its checkpoints in host memory (activation offload) */
} ParoStepStage;

typedef struct {
    /* inputs */
    const ParoScenarioDerived *d;
    const ParoStrategy *strategy;
    const ParoCompression *compression; /* the scenario's, or none */
    ParoCollCache *cache;
    gint64 micro_steps;             /* to simulate; 0: the scenario's accumulation */
    gboolean without_data_parallel; /* the strategy's collectives left out */
    ParoTaskGraph *graph;
    /* the layout: P stages, v modules a stage, S = vP modules (their layers:
     * paro_scenario_module_span), M micro-batches */
    gint64 P, v, S, M;
    gboolean layered; /* a module's micro-batches back to back, DP collectives once */
    ParoStateSizes z; /* one TP rank's share of the whole model (of all but the routed experts
                       * under expert parallelism), n = dp x cp */
    GArray *calls;    /* ParoCollCall of the strategy on z */
    const ParoCollCall *gather_f, *gather_b, *reduce;
    /* expert parallelism (decision 72): one GPU's routed experts, reduced over their own
     * group, timed on its view; NULL calls without expert parallelism */
    ParoStateSizes ze;
    GArray *calls_e;
    const ParoCollCall *gather_f_e, *gather_b_e, *reduce_e;
    ParoScenario expert_view;
    ParoTopology expert_topology;
    double *dense_share, *expert_share;       /* per layer, of each group's parameters */
    ParoStepComm tp_fwd, tp_bwd;              /* one layer's TP collectives */
    ParoStepComm p2p_intra, p2p_inter;        /* one pipeline send within a node, across nodes */
    ParoStepComm tp_bwd_kept;                 /* the backward's of a layer not recomputed */
    ParoStepComm *cp_fwd, *cp_bwd;            /* per layer, its context-parallel communication;
                                               * NULL without context parallelism */
    ParoStepComm ep_fwd, ep_bwd, ep_bwd_kept; /* an MoE layer's all-to-alls (ep > 1) */
    ParoTime *tp_bwd_async;     /* per layer, its backward's own TP collectives left exposed beside
                                 * its products (decision 58); NULL: in series */
    guint p2p_stream;           /* the sender's stream for it (the framework decides) */
    double act_kept, act_whole; /* a layer's activations (with tp: Korthikanti): kept
                                 * under the recomputation, and all of them */
    ParoLossMemory loss;        /* the loss's bytes on the last layer (decision 50) */
    double grad_pass_s;         /* the framework's gradient passes, s a trainable param */
    double copy_out_s;          /* the framework's copy of a gather's output, s a gathered byte */
    double accumulate_s;        /* adding each later micro-batch's gradients, s a trainable param */
    gboolean grads_on_demand;   /* gradients live from their reduction in the backward to the
                                 * optimizer step, not the whole step (decision 94) */
    double optimizer_temp_bytes; /* the optimizer step's temporaries per owned parameter */
    gboolean deferred_sync;      /* gradients reduced once, after the last micro-batch's
                                  * backward, held unsharded until then (decision 94) */
    double root_share[2];        /* FSDP's root unit kept gathered from a micro-batch's forward to
                                  * its backward's end: its share of the parameters on the first
                                  * layer (embeddings) and the last (final norm, head); 0: none */
    ParoStepStage *stages;
    ParoTaskId *gathers_f, *gathers_b; /* per layer, the layered pass's gathers */
    GArray *scratch;                   /* ParoTaskId: a pass's compute tasks */
    GHashTable *costs; /* (phase, bytes) -> cost of a DP collective: each once a step */
    double *module_compute_s, *module_comm_s; /* per module and micro-batch: textbook bound */
    GError **error;
    gboolean failed;
} ParoStepBuild;

/** paro_step_build_init: fills @b's layout and costs for @d's scenario, @strategy and
 * @compression (@b's graph, cache and error already set). FALSE on a collective's error. */
gboolean paro_step_build_init(ParoStepBuild *b);
void paro_step_build_clear(ParoStepBuild *b);

/** paro_step_build: adds the step's tasks to @b->graph: the pipeline's passes (layers,
 * collectives) and sends, then each stage's gradient sync, optimizer and parameter sync. */
gboolean paro_step_build(ParoStepBuild *b);

/* ---- offloading (step-offload.c, decision 82): copies over PCIe beside the pass ---- */

/** paro_step_offload_init: each stage's ParoStepStage.offload and host_activations. */
void paro_step_offload_init(ParoStepBuild *b);

/** paro_step_offload_fetch: the host-to-GPU copy of layer @layer's parameter shard (@share of
 * the stage's parameters) before its gather, after its NVMe read with parameters: nvme;
 * PARO_TASK_NONE when the stage does not offload parameters. */
ParoTaskId paro_step_offload_fetch(ParoStepBuild *b, guint d, gint micro, gint64 layer,
                                   double share);

/** paro_step_offload_grads: after the reduction @rs of a bucket holding @share of the stage's
 * trainable parameters: its gradient shard copied to the host (for a later micro-batch, the
 * shard accumulated so far first copied back to add to). Returns the last copy, or @rs when
 * the optimizer is not offloaded. */
ParoTaskId paro_step_offload_grads(ParoStepBuild *b, guint d, ParoTaskId rs, double share,
                                   gint micro, gint layer);

/** paro_step_offload_checkpoint_out: the copy of layer @layer's checkpoint (@bytes) to the
 * host after its forward @c, freeing it on the GPU as it ends; nothing for the pass's last
 * layer (@last) or without activation offload. */
void paro_step_offload_checkpoint_out(ParoStepBuild *b, guint d, ParoTaskId c, gint micro,
                                      gint64 layer, double bytes, gboolean last);

/** paro_step_offload_checkpoint_in: the copy back before the layer's backward, after @after;
 * PARO_TASK_NONE for the pass's first layer (@first: kept on the GPU) or without. */
ParoTaskId paro_step_offload_checkpoint_in(ParoStepBuild *b, guint d, ParoTaskId after, gint micro,
                                           gint64 layer, double bytes, gboolean first);

/** paro_step_offload_before_step: with the optimizer offloaded and gradients reduced at the
 * sync (g = N), the owned gradient shard's copy to the host after @previous; returns it, or
 * @previous. */
ParoTaskId paro_step_offload_before_step(ParoStepBuild *b, guint d, ParoTaskId previous);

/** paro_step_offload_after_step: the updated 16-bit shard's copy across PCIe after the
 * optimizer @opt (paro_offload_after_step_bytes); returns it, or @opt. */
ParoTaskId paro_step_offload_after_step(ParoStepBuild *b, guint d, ParoTaskId opt);

/** paro_step_build_periodic_from: ParoStepResult.periodic_from. */
gint64 paro_step_build_periodic_from(const ParoStepBuild *b);

/** paro_step_build_textbook_s: the closed form beside a pipelined step: (A + (P-1)/v) x the
 * slowest stage's time a micro-batch + its DP phase (Narayanan et al.'s bubble). */
double paro_step_build_textbook_s(const ParoStepBuild *b);

G_END_DECLS
