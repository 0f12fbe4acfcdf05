/* SPDX-License-Identifier: MIT */
/* Which framework runs the step, and the schedule rules of its profile (docs/frameworks.md
 * has each default with the file and line of the framework's source it was read from).
 *
 *   ideal      parosim's own schedule: every reduction on a side stream beside the backward,
 *              the strategy's reduce-scatters, training.bucket and training.prefetch as set
 *   deepspeed  DeepSpeed ZeRO 0.19: stages 1-2 (parameters not partitioned) reduce on the
 *              compute stream (overlap_comm defaults to true only for stage 3), a bucket at a
 *              time as one all-reduce of the whole bucket (use_multi_rank_bucket_allreduce);
 *              reduce buckets of 5e8 elements; stage 3 prefetches 5e7 elements ahead
 *   fsdp       PyTorch FSDP: one reduce-scatter per wrapped unit (a layer), on its own
 *              stream; one unit prefetched (BACKWARD_PRE, limit_all_gathers)
 *   megatron   Megatron-LM DDP / distributed optimizer: gradients reduced once after the
 *              last micro-batch's backward (overlap_grad_reduce off), which is parosim's
 *              schedule for strategies whose gradients are not partitioned
 *
 * A profile gives defaults: training.bucket and training.prefetch written in the scenario
 * win over the profile's, and so does each framework.* key. */
#pragma once

#include <glib.h>

#include "model/compute.h"
#include "yaml/yaml.h"

G_BEGIN_DECLS

typedef enum {
    PARO_FRAMEWORK_IDEAL,
    PARO_FRAMEWORK_DEEPSPEED,
    PARO_FRAMEWORK_FSDP,
    PARO_FRAMEWORK_MEGATRON,
} ParoFrameworkKind;
extern const char *const paro_framework_names[]; /* "ideal", "deepspeed", ..., NULL */

/* A yes/no setting a profile may decide. */
typedef enum { PARO_SETTING_DEFAULT, PARO_SETTING_FALSE, PARO_SETTING_TRUE } ParoSetting;
extern const char *const paro_setting_names[]; /* "default", "false", "true", NULL */

/* The reduction's element type: the training precision's by default. */
extern const char *const paro_reduce_precision_names[]; /* "default", "bf16", "fp16", "fp32" */

/* The rotary embedding's kernels: the profile's, or a ParoRope + 1. */
extern const char *const paro_rope_names[]; /* "default", "fused", "complex", "rotate_half" */

typedef struct {
    ParoFrameworkKind kind;
    int reduce_on_compute; /* ParoSetting: gradient reductions block the compute stream */
    int bucket_allreduce;  /* ParoSetting: a gradient bucket is all-reduced, not reduce-scattered */
    int reduce_precision;  /* 0: the training precision; else a ParoPrecision + 1 */
    int fused_softmax;     /* ParoSetting: eager attention's softmax is one kernel */
    int blocking_p2p;      /* ParoSetting: a pipeline send holds its stage until delivered */
    int tp_overlap;        /* ParoSetting: TP collectives overlap the products they feed */
    int tp_async_dgrad;    /* ParoSetting: input-gradient collectives beside weight gradients */
    int grad_passes;       /* ParoSetting: the gradient handling's passes over each micro-batch */
    int fused_loss;        /* ParoSetting: the loss is one fused kernel a pass (Apex's xentropy) */
    int fused_optimizer;   /* ParoSetting: the optimizer step is one fused kernel (FusedAdam) */
    int fused_swiglu;      /* ParoSetting: a gated MLP's SwiGLU is one kernel keeping its input */
    int fused_norm;        /* ParoSetting: an RMSNorm is one kernel, not PyTorch's operators */
    int packed_lora;       /* ParoSetting: one LoRA adapter over the packed QKV (gate-up) product */
    int fsdp2;      /* ParoSetting: FSDP2's per-parameter sharding (fully_shard), not FSDP1 */
    int rope;       /* 0: the profile's rotary kernels; else a ParoRope + 1 */
    gint64 version; /* MAJOR * 1e6 + MINOR * 1e3 + PATCH; 0: the version the profile documents */
} ParoFramework;

#define PARO_FRAMEWORK_INIT                                                                        \
    {                                                                                              \
        PARO_FRAMEWORK_IDEAL, PARO_SETTING_DEFAULT, PARO_SETTING_DEFAULT, 0, PARO_SETTING_DEFAULT, \
            PARO_SETTING_DEFAULT, PARO_SETTING_DEFAULT, PARO_SETTING_DEFAULT,                      \
            PARO_SETTING_DEFAULT, PARO_SETTING_DEFAULT, PARO_SETTING_DEFAULT,                      \
            PARO_SETTING_DEFAULT, PARO_SETTING_DEFAULT, PARO_SETTING_DEFAULT, PARO_SETTING_DEFAULT \
    }

/** paro_framework_parse: `framework: NAME` or a mapping {name, reduce_on_compute,
 * bucket_allreduce, reduce_precision, fused_softmax, blocking_p2p, tp_overlap,
 * tp_async_dgrad, grad_passes,
 * fused_loss, fused_optimizer, fused_swiglu, fused_norm, packed_lora, fsdp2, rope, version}
 * into @out. */
gboolean paro_framework_parse(const ParoNode *node, gpointer out, gpointer record, GError **error);

/* DeepSpeed 0.12.4 (commit 2afa1c7f, "Communication Optimization for Large-Scale
 * Training", 2023-11-21) added use_multi_rank_bucket_allreduce: before it a stage-1/2
 * bucket went out as one dist.reduce per owning rank. */
#define PARO_DEEPSPEED_BUCKET_ALLREDUCE_SINCE (12 * 1000 + 4)
/* DeepSpeed 0.13.0 (commit af033831, "Release overlap_comm & contiguous_gradients
 * restrictions for ZeRO 1", 2024-01-06): stage 1 hooks each gradient from then on. */
#define PARO_DEEPSPEED_STAGE1_HOOKS_SINCE (13 * 1000)

/* Megatron-LM's column-parallel layers issue the backward's input-gradient collective
 * asynchronously and compute the weight gradient meanwhile (ColumnParallelLinearWithAsync-
 * Allreduce, commit 16c90445 of 2021-09-02, after the v2.6 tag; Megatron-Core's
 * LinearWithGradAccumulationAndAsyncCommunication, which with sequence parallelism also
 * re-gathers the input beside the input-gradient product). Megatron-LM's tags v1.0 to v2.6
 * (`version` 1.0 to 2.6; Megatron-Core's own versions are 0.x) and Megatron-DeepSpeed's
 * forks (the deepspeed profile) run them in series. Decision 58. */
#define PARO_MEGATRON_SERIAL_DGRAD_FROM (1 * 1000 * 1000)
#define PARO_MEGATRON_ASYNC_DGRAD_SINCE (2 * 1000 * 1000 + 7 * 1000)
gboolean paro_framework_tp_async_dgrad(const ParoFramework *f);

/* The profile's decisions for a strategy whose parameters are partitioned (@params_sharded:
 * ZeRO-3 and the like) or not (ZeRO-1 and -2, DDP). */
gboolean paro_framework_reduce_on_compute(const ParoFramework *f, gboolean params_sharded);
gboolean paro_framework_bucket_allreduce(const ParoFramework *f, gboolean params_sharded);

/* DeepSpeed's BF16_Optimizer runs the step: bf16 training in DeepSpeed's pipeline engine
 * with neither parameters nor gradients partitioned (@pipeline_stage0: pp > 1, ZeRO stage 0,
 * the only stage its pipeline engine ran with bf16 from 0.6.2 on; the optimizer shards its
 * fp32 states over DP itself, ZeRO-1's layout). Without a pipeline, bf16 runs DeepSpeed's
 * ZeRO optimizer (stage 1, gradients accumulated in bf16 by default) or plain DDP. It keeps
 * fp32 gradients, all-reduces them over the DP group whatever the version
 * (pipe/engine.py `_bf16_reduce_grads`: `buffered_allreduce_fallback`) and accumulates
 * into them after each micro-batch (paro_framework_grad_pass_bytes). */
gboolean paro_framework_bf16_optimizer(const ParoFramework *f, gboolean bf16,
                                       gboolean pipeline_stage0);

/* Eager attention's softmax: Megatron's fused scale-mask-softmax kernel (megatron, and
 * deepspeed, whose profile is Megatron-DeepSpeed's; ideal), or PyTorch's separate scale,
 * mask, fp32 softmax and cast kernels (fsdp: a HuggingFace model's eager attention). */
gboolean paro_framework_fused_softmax(const ParoFramework *f);
/* The loss over the logits runs as one fused kernel forward and one backward in the
 * logits' 16 bits (Apex's xentropy, which flash-attn's CrossEntropyLoss wraps) instead of
 * unfused fp32 passes; no profile does by default (llm-foundry's MPT does: decision 44). */
gboolean paro_framework_fused_loss(const ParoFramework *f);

/* A gated MLP's SiLU and product run as one fused kernel that keeps only its input, the
 * first product's output (Megatron-Core's bias_swiglu_impl, on by default: megatron), or as
 * PyTorch's separate kernels, which keep the SiLU's output too (every other profile;
 * decision 51). */
gboolean paro_framework_fused_swiglu(const ParoFramework *f);

/* An RMSNorm runs as one kernel forward and one backward (Apex's, Transformer Engine's,
 * torchtitan's Triton `fused_rmsnorm`), or as PyTorch operators a model writes out (the
 * input cast to fp32, squared, averaged, rsqrt, multiplied, cast back, scaled: HuggingFace's
 * LlamaRMSNorm, torchtitan's `rmsnorm`) with autograd's kernels backward. Every profile
 * defaults to one kernel; a run whose model code is eager says `fused_norm: false`
 * (decision 60). A LayerNorm is one kernel in PyTorch either way. */
gboolean paro_framework_fused_norm(const ParoFramework *f);

/* LoRA on q, k and v (on gate and up) is one adapter over the packed product, as NeMo's
 * LoraKQVAdapter and LoraHto4HAdapter are (megatron: Megatron-Core's models fine-tuned by
 * NeMo), or one adapter a projection, each with its own dropout and products, as
 * HuggingFace PEFT adapts a model's modules (every other profile; decision 52). */
gboolean paro_framework_packed_lora(const ParoFramework *f);

/* A rotary embedding's kernels (decision 61): one fused kernel each way (megatron:
 * Megatron-LM's --no-rope-fusion is off by default, Transformer Engine's
 * fused_apply_rotary_pos_emb; ideal), or the model code's PyTorch operators: HuggingFace's
 * rotate_half form (deepspeed, whose LLaMA runs are HuggingFace's or Megatron-DeepSpeed's
 * model code, and fsdp), or Meta's and torchtitan's fp32 complex product (`rope: complex`).
 * The unfused codes also copy k and v to every query head under grouped-query attention
 * (repeat_kv). */
ParoRope paro_framework_rope(const ParoFramework *f);

/* Bytes a logit takes while the loss runs, for the memory ledger (decision 50): the
 * forward's peak, what the forward keeps for the backward, and the backward's peak (each
 * counting the logits themselves). */
typedef struct {
    double forward_peak, kept, backward_peak;
} ParoLossMemory;
/** paro_framework_loss_memory: the profile's loss, per logit.
 * Fused (Apex's xentropy under flash-attn's CrossEntropyLoss): the 16-bit logits saved, a
 * 16-bit gradient written beside them (2, 2, 4). Megatron's vocab-parallel cross-entropy
 * (megatron, deepspeed: Megatron-DeepSpeed's): an fp32 copy beside the 16-bit logits, the
 * softmax computed in it in place and kept, the gradient written into it, then cast to 16
 * bits (6, 4, 6). PyTorch's cross_entropy on fp32 logits (fsdp, ideal): the 16-bit logits,
 * their fp32 copy and log_softmax's fp32 output; the output kept; backward, nll_loss's dense
 * fp32 gradient and log_softmax's input gradient beside it (10, 4, 12). */
ParoLossMemory paro_framework_loss_memory(const ParoFramework *f);

/* The optimizer step: one fused kernel a step over every state (Apex's and DeepSpeed's
 * FusedAdam, which Megatron-LM and DeepSpeed run), or AdamW as PyTorch's elementwise
 * kernels, eight passes of PARO_UNFUSED_ADAMW_BYTES a parameter (fsdp: torch.optim.AdamW's
 * foreach default, Composer's DecoupledAdamW loop; decision 46). */
gboolean paro_framework_fused_optimizer(const ParoFramework *f);

/* The profile runs on PyTorch's own runtime, and its memory follows it (decision 94):
 * FSDP's fp32 master shards and fp32 gradient shards, gradients made in the backward and
 * freed after the step (zero_grad's set_to_none), the root unit kept gathered from forward
 * to backward, torch.distributed.pipelining's gradient sync after the last micro-batch and
 * its interleaved warm-up, torchao's fp8 without weight copies across micro-batches (fsdp);
 * the other profiles keep ZeRO's contiguous buffers and Megatron-LM's schedules. */
gboolean paro_framework_pytorch_runtime(const ParoFramework *f);
/* Bytes an unfused AdamW step moves per parameter with fp32 weights, gradients and moments:
 * lerp or mul+add of m (12 or 20), mul and addcmul of v (8 + 12), sqrt, divide and add eps
 * into a temporary (3 x 8), addcdiv into the weights (16), the decay's mul (8, or none
 * without decay): 80 either way (decision 46). */
#define PARO_UNFUSED_ADAMW_BYTES 80.0

/* Pipeline sends: Megatron-LM's p2p calls wait for their requests before the schedule goes
 * on (overlap_p2p_comm off), and DeepSpeed's pipeline engine runs its send and receive
 * instructions one after another; ideal and fsdp send on a stream of their own. */
gboolean paro_framework_blocking_p2p(const ParoFramework *f);

/* Tensor-parallel collectives split into tp chunks, each overlapping the product on the
 * chunk before (Megatron-Core's tp_comm_overlap with Transformer Engine's userbuffers; off
 * by default in every profile, as in Megatron-Core's ModelParallelConfig). */
gboolean paro_framework_tp_overlap(const ParoFramework *f);

/** paro_framework_accumulate_bytes: HBM bytes per trainable parameter that adding one
 * micro-batch's weight gradient into the step's moves where the products do not accumulate
 * it themselves, for each micro-batch after the first (decision 59): PyTorch's
 * AccumulateGrad adding into a 16-bit .grad reads both and writes one (3 @grad_bytes) under
 * DeepSpeed's stages 0 and 1 before 0.13 (@grads_whole, not @bf16_optimizer, whose passes
 * are paro_framework_grad_pass_bytes'; from commit 6ae756c0 of 2021-07-26 to af033831 of
 * 2024-01-06 stage 1 ignored overlap_comm and contiguous_gradients and so hooked nothing;
 * the profile's own version, 0.19, hooks them: not modelled, none counted); Megatron-LM 1.0
 * to 2.6 adds the same way in fp16
 * (v2.5: autograd's add into .grad; from 2021-08-18 main_grad.add_ in the parameters'
 * type) and into an fp32 main_grad in bf16 (2 + 4 + 4, @bf16); none for Megatron-LM since
 * its gradient accumulation fusion (commit 83b1e42f, 2022-02-13, on by default: the
 * weight-gradient product adds into main_grad), nor for fsdp and ideal. grad_passes: false
 * turns it off too. */
double paro_framework_accumulate_bytes(const ParoFramework *f, double grad_bytes, gboolean bf16,
                                       gboolean grads_whole, gboolean bf16_optimizer);

/** paro_framework_grad_pass_bytes: HBM bytes per trainable parameter and micro-batch that
 * the profile's gradient handling moves beside the backward's own kernels, for gradients of
 * @grad_bytes reduced as @reduce_bytes elements (docs/frameworks.md, decision 42):
 * FSDP's flat gradient assembled from its views (read and write), cast to the reduction's
 * type, and pre-divided in place before each reduce-scatter; FSDP2 (`fsdp2`, decision 62)
 * concatenates the parameters' gradients into the reduce-scatter's input in the
 * reduction's type (one pass that casts as it copies) and pre-divides it; DeepSpeed's
 * BF16_Optimizer (@bf16_optimizer: paro_framework_bf16_optimizer) adding each
 * micro-batch's gradient, cast to fp32, into its fp32 copy. 0 otherwise: megatron's wgrad
 * products accumulate into the fp32 main_grad themselves, and ideal has none. */
double paro_framework_grad_pass_bytes(const ParoFramework *f, double grad_bytes,
                                      double reduce_bytes, gboolean bf16_optimizer);

/* FSDP2 (`fully_shard`, the fsdp profile with `fsdp2: true`; decision 62) all-gathers a
 * layer's shards into one buffer and copies it out into the parameters' own tensors
 * (`foreach_all_gather_copy_out`: torch.split_with_sizes_copy) on the compute stream before
 * the layer's forward or backward can start; FSDP1 gathers into the flat parameter the
 * layer's parameters are views of, and DeepSpeed and Megatron-LM gather in place too. */
gboolean paro_framework_fsdp2(const ParoFramework *f);

/** paro_framework_gather_copy_bytes: HBM bytes the compute stream moves for each byte a
 * layer's all-gather delivers before the layer can run: FSDP2's copy-out reads the gathered
 * buffer and writes the parameters (2); 0 for every other profile. */
double paro_framework_gather_copy_bytes(const ParoFramework *f);

/** paro_framework_bucket_bytes: the profile's gradient bucket for @grad_bytes per element
 * (@ideal: training's default); 0 means one bucket per layer. */
double paro_framework_bucket_bytes(const ParoFramework *f, double grad_bytes, double ideal);

/** paro_framework_prefetch: layers gathered ahead under the profile, for layers of
 * @layer_params parameters (per TP rank); @ideal: training's default. */
gint64 paro_framework_prefetch(const ParoFramework *f, double layer_params, gint64 ideal);

G_END_DECLS
