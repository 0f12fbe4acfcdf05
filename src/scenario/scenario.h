/* SPDX-License-Identifier: MIT */
/* A scenario: a model on a cluster with a training configuration and the collective
 * algorithm for global collectives. Loaded from YAML with its model and topology files
 * resolved relative to it and --set overrides applied, validated, then read-only. */
#pragma once

#include <glib.h>

#include "calib/calib-file.h"
#include "coll/collective.h"
#include "compress/compress.h"
#include "model/model.h"
#include "net/network.h"
#include "pipe/pipe.h"
#include "scenario/framework.h"
#include "topo/topology.h"
#include "yaml/yaml.h"

G_BEGIN_DECLS

typedef enum { PARO_PRECISION_BF16, PARO_PRECISION_FP16, PARO_PRECISION_FP32 } ParoPrecision;
extern const char *const paro_precision_names[]; /* "bf16", "fp16", "fp32", NULL */

/* How context parallelism moves keys and values (parallelism.cp_algorithm, decision 71). */
typedef enum {
    PARO_CP_RING,      /* Transformer Engine's ring attention: K/V blocks passed around */
    PARO_CP_ALLGATHER, /* torchtitan's and Llama 3's all-gather of K and V */
    PARO_CP_ALLTOALL,  /* DeepSpeed-Ulysses: all-to-all of heads before and after attention */
} ParoCpAlgorithm;
extern const char *const paro_cp_algorithm_names[]; /* "ring", "allgather", "alltoall", NULL */
/* Where offloaded state lives (training.offload; decisions 80-82). */
typedef enum { PARO_OFFLOAD_NONE, PARO_OFFLOAD_CPU, PARO_OFFLOAD_NVME } ParoOffloadTarget;
extern const char *const paro_offload_names[];            /* "none", "cpu", "nvme", NULL */
extern const char *const paro_offload_activation_names[]; /* "none", "cpu", NULL */

typedef struct {
    ParoOffloadTarget optimizer;   /* fp32 master, moments and fp32 gradients; CPU Adam step */
    ParoOffloadTarget parameters;  /* the 16-bit parameter shards (ZeRO-3 / FSDP) */
    ParoOffloadTarget activations; /* none or cpu: the checkpointed layer inputs */
} ParoOffload;

/* training.memory_headroom (decision 84): the margin left for the caching allocator's
 * fragmentation; a peak that fits but lies within it is "tight". */
typedef struct {
    double value;   /* a share of the GPU's memory in [0, 0.5], or bytes when @bytes */
    gboolean bytes; /* written with a unit ("4 GiB"): @value is bytes */
} ParoHeadroom;

/* The default headroom: 5% of the GPU's memory (issue #44; decision 85 says why flat). */
#define PARO_HEADROOM_DEFAULT_SHARE 0.05
/* The largest share accepted: a margin over half the memory is no allocator's waste. */
#define PARO_HEADROOM_MAX_SHARE 0.5

typedef struct {
    gint64 micro_batch;      /* sequences per GPU per micro-step */
    gint64 sequence;         /* tokens per sequence */
    gint64 accumulation;     /* A: micro-steps per global step */
    ParoPrecision precision; /* of parameters and gradients */
    double optimizer_bytes;  /* K: optimizer-state bytes per trainable parameter */
    ParoTrainable trainable;
    ParoRecompute recompute;
    gint64 recompute_every;  /* full recomputation of every k-th layer only (torchtitan) */
    double efficiency;       /* flat share of peak FLOP/s; 0: the GPU's shape-aware model */
    ParoAttention attention; /* flash (default), eager, flash1 or cudnn */
    gboolean fp8;            /* linear layers' products in fp8 (Transformer Engine) */
    gboolean fp8_params;     /* and their weights held in fp8 only (fp8_model_init) */
    gboolean fp8_attention;  /* cuDNN's attention in fp8, keeping q, k, v, O in fp8 (FP8_DPA) */
    double memory_overhead;  /* bytes per GPU outside the model and NCCL's buffers (CUDA
                              * context, start-up); < 0: unset, the context's measured size */
    ParoHeadroom memory_headroom; /* the allocator's margin below the GPU's memory */
    gboolean overlap;             /* compute and communication on separate streams */
    gboolean sm_contention; /* DP collectives' NCCL kernels take SMs from concurrent compute */
    gint64 prefetch;        /* layers gathered ahead of use */
    double bucket_bytes;    /* gradient reduce-scatter bucket */
    ParoPipeSchedule pipeline_schedule; /* gpipe, 1f1b, interleaved, modular */
    gint64 pipeline_virtual;            /* v: model chunks per stage (interleaved, modular) */
    ParoPipeAccumulation
        accumulation_order; /* depth-first, or layered (Lamy-Poirier's
                             * layered gradient accumulation: gpipe and modular only) */
    double moe_imbalance;   /* training.moe.imbalance: the hottest expert's tokens / the mean */
    double moe_capacity;    /* training.moe.capacity_factor: 0 dropless, else tokens an expert
                             * takes at most, in units of its even share */
    ParoOffload offload;    /* what leaves the GPU for the host or NVMe (none by default) */
} ParoTraining;

/* The inputs that drive a simulation's work, whose place in the files or --set/--vary
 * arguments is kept for the located refusals of scenario/workload.h. */
typedef enum {
    PARO_SITE_ACCUMULATION,
    PARO_SITE_LAYERS,
    PARO_SITE_NODES,
    PARO_SITE_GPUS_PER_NODE,
    PARO_SITE_CHANNELS,
    PARO_SITE_CHUNKS,
    PARO_SITE_PP,
    PARO_SITE_VIRTUAL,
    PARO_SITE_N
} ParoSite;

typedef struct {
    const char *key; /* "training.accumulation" (static) */
    char *file;      /* where it was written (or the mapping or file it defaults in) */
    int line, column;
} ParoSourceSite;

typedef struct {
    char *path; /* the scenario file */
    char *name;
    char *description;
    ParoModel *model;
    ParoTopology *topology;
    ParoTraining training;
    gint64 group;      /* m: data-parallel ranks per PaRO group */
    gint64 tp, pp, dp; /* tensor, pipeline, data-parallel degrees; tp*cp*pp*dp = GPUs */
    gint64 cp;         /* context-parallel degree: the sequence split over cp ranks
                        * placed after TP inside a node (1: none) */
    ParoCpAlgorithm cp_algorithm;
    gint64 ep;                  /* expert-parallel degree: the routed experts split over ep of
                                 * the dp x cp ranks (1: every rank holds every expert) */
    gint64 etp;                 /* expert tensor parallelism: tp (Megatron-Core's default) or 1;
                                 * a stage's tp x cp x dp GPUs are etp x ep x expert-dp for the
                                 * expert layers */
    GArray *stage_layers;       /* gint64: the layers of each stage, first to last (pp of
                                 * them, split equally over a stage's virtual modules), or of
                                 * each module in layer order (pp x virtual); NULL: L / (pp x
                                 * virtual) each (parallelism.stage_layers; module_span) */
    gboolean sequence_parallel; /* Megatron sequence parallelism on the TP dimension */
    ParoAlgorithm algorithm;    /* for global collectives */
    gint64 chunks;              /* ho-ring chunks */
    ParoCollModel coll_model;   /* what times a collective (nccl, flow) */
    ParoNetFidelity network;    /* the flow model's links */
    ParoCalibration calibration;
    ParoCompression compression; /* of the data-parallel collectives; preset none by default */
    ParoFramework framework;     /* which framework's schedule (ideal by default) */
    ParoSourceSite sites[PARO_SITE_N];
} ParoScenario;

void paro_scenario_free(ParoScenario *scenario);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ParoScenario, paro_scenario_free)

/**
 * paro_scenario_load:
 * @path: the scenario YAML
 * @overrides: (nullable): "dotted.path=value" strings, applied in order; a path starting
 *   with "model." or "topology." reaches into the referenced file, and "model=FILE" or
 *   "topology=FILE" swaps the file itself (FILE relative to the current directory, as
 *   any command-line path; paths written in files are relative to the file)
 * Returns: (transfer full) (nullable): the validated scenario. Errors: PARO_CONFIG_ERROR
 * with the location in the scenario, model or topology file, or in the --set argument
 * (labelled "--set[i]", 1-based column within the argument).
 */
ParoScenario *paro_scenario_load(const char *path, const char *const *overrides, GError **error);

/**
 * paro_scenario_load_data:
 * @label: names the text in messages ("<notebook>"), whatever characters it holds
 * @base_dir: (nullable): where relative references (model:, topology:, calibration:) are
 *   looked up; NULL for the current directory
 * The same from YAML text. The label never moves where references are found (issue #42:
 * "runs/today" made them be looked up in "<runs").
 */
ParoScenario *paro_scenario_load_data(const char *yaml, const char *label, const char *base_dir,
                                      const char *const *overrides, GError **error);

/**
 * paro_scenario_from_node:
 * @root: (transfer full): the scenario's parsed document
 * @path: its file (or label): references are relative to its folder
 */
ParoScenario *paro_scenario_from_node(ParoNode *root, const char *path,
                                      const char *const *overrides, GError **error);

/** paro_scenario_dp_ranks: GPUs in data parallelism: the dp x cp ranks gradients are reduced
 * and states sharded over (all GPUs when tp = pp = 1). */
gint64 paro_scenario_dp_ranks(const ParoScenario *s);

/** paro_precision_bytes: bytes per element of a precision. */
double paro_precision_bytes(ParoPrecision p);

/** paro_scenario_dp_per_node: data-parallel peers of one (TP rank, stage) on a node:
 * GPUs per node / tp (Megatron's layout: TP ranks contiguous, then DP, PP outermost), or
 * dp where a node holds several whole stages (tp x dp below the GPUs of a node). */
gint64 paro_scenario_dp_per_node(const ParoScenario *s);

/**
 * paro_scenario_module_span:
 * The layers of pipeline module @module (of pp x virtual, module k on stage k mod pp; a
 * module is a stage when virtual is 1) among @n_layers: the first in @first, the count
 * returned. parallelism.stage_layers when given (a module's own count, or its stage's over
 * virtual), else n_layers / (pp x virtual) each.
 */
gint64 paro_scenario_module_span(const ParoScenario *s, gint64 n_layers, gint64 module,
                                 gint64 *first);

/* What a GPU holds outside PyTorch's allocator before the first tensor: the CUDA context,
 * its modules, cuBLAS's and NCCL's own: 1,327 MiB measured with no tensor live on our H200
 * (torch 2.11, CUDA 13.0, cuDNN 9.19, NCCL 2.28 initialised on one rank:
 * validation/data/h200/2026-11-28_peaks.txt, `context`; decision 94). Other GPUs are not
 * measured and take it; NCCL's per-channel buffers are counted apart (comm_buffers). */
#define PARO_CUDA_CONTEXT_BYTES (1327.0 * 1048576.0)

/** paro_scenario_memory_overhead: training.memory_overhead in bytes, or, left unset, the
 * CUDA context (PARO_CUDA_CONTEXT_BYTES). */
double paro_scenario_memory_overhead(const ParoScenario *s);

/** paro_scenario_memory_headroom_bytes: training.memory_headroom in bytes: its share of the
 * GPU's memory, or the bytes written (decision 84). */
double paro_scenario_memory_headroom_bytes(const ParoScenario *s);

/**
 * paro_scenario_is_tight:
 * The one rule of the memory margin (decision 84): a per-GPU peak of @peak_bytes is tight
 * when it fits the GPU's memory M but exceeds M - headroom, leaving the allocator less
 * than its margin. FALSE for a peak over M (out of memory, not tight) and for every peak
 * when the headroom is 0. A row fits with margin when it fits and is not tight.
 */
gboolean paro_scenario_is_tight(const ParoScenario *s, double peak_bytes);

/** paro_scenario_offloads: any of training.offload is not none. */
gboolean paro_scenario_offloads(const ParoScenario *s);

/** paro_scenario_expert_dp_ranks: the expert-data-parallel group: tp x cp x dp / (ep x etp)
 * ranks that reduce and shard the routed experts' states (dp x cp without expert
 * parallelism). */
gint64 paro_scenario_expert_dp_ranks(const ParoScenario *s);

/** paro_scenario_tokens_per_rank: a micro-batch's tokens on one GPU: b x s / cp. */
double paro_scenario_tokens_per_rank(const ParoScenario *s);

/** paro_scenario_is_dp_only: data parallelism alone (tp = pp = cp = ep = 1, one module,
 * depth-first accumulation): the case the closed-form guideline describes. */
gboolean paro_scenario_is_dp_only(const ParoScenario *s);

G_END_DECLS
