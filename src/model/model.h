/* SPDX-License-Identifier: MIT */
/* A transformer's size: parameters (total, per layer, trainable), FLOPs of a forward and
 * backward pass, and activation bytes per layer. Built by the loaders (YAML model files or
 * a HuggingFace config.json), then read-only. A model may also be given only as a
 * parameter count; then per-layer quantities are unknown and reported as 0. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum { PARO_MLP_GATED, PARO_MLP_PLAIN } ParoMlpKind;
typedef enum { PARO_NORM_RMSNORM, PARO_NORM_LAYERNORM } ParoNormKind;
/* Activation recomputation: none; Korthikanti et al.'s selective (the attention core); full
 * (every layer's forward again from its input); op, torchtitan's per-op selective
 * checkpointing (the products' and the fused attention's outputs kept, except every second
 * product, which runs again with every elementwise kernel: decision 49). */
typedef enum {
    PARO_RECOMPUTE_NONE,
    PARO_RECOMPUTE_SELECTIVE,
    PARO_RECOMPUTE_FULL,
    PARO_RECOMPUTE_OP,
} ParoRecompute;
/* How attention runs: fused (FlashAttention: the s x s scores never reach memory) or eager
 * (scores, softmax and dropout as separate kernels, their outputs kept for the backward).
 * FLASH is FlashAttention-2's generation of kernels (the GPU's attention_efficiency);
 * FLASH1 the first generation (FlashAttention-1, the Triton kernels of 2022-23), fused the
 * same way at the GPU's flash1_attention_efficiency, else half that rate; CUDNN cuDNN's fused
 * attention (Transformer Engine's choice on Hopper, PyTorch's CUDNN_ATTENTION), fused the same way
 * at the GPU's cudnn_attention_efficiency (docs/compute.md). */
typedef enum {
    PARO_ATTENTION_FLASH,
    PARO_ATTENTION_EAGER,
    PARO_ATTENTION_FLASH1,
    PARO_ATTENTION_CUDNN
} ParoAttention;

/* LoRA target modules; a bit each in ParoTrainable.lora_targets. */
typedef enum {
    PARO_LORA_Q = 1 << 0,
    PARO_LORA_K = 1 << 1,
    PARO_LORA_V = 1 << 2,
    PARO_LORA_O = 1 << 3,
    PARO_LORA_GATE = 1 << 4,
    PARO_LORA_UP = 1 << 5,
    PARO_LORA_DOWN = 1 << 6,
} ParoLoraTarget;

typedef struct {
    char *name;
    char *source_path;          /* the file it was loaded from */
    gboolean has_shape;         /* FALSE: only a parameter count was given */
    gint64 hidden;              /* h */
    gint64 layers;              /* L */
    gint64 heads;               /* a */
    gint64 kv_heads;            /* grouped-query heads (= heads for multi-head attention) */
    gint64 head_dim;            /* h / a unless given */
    gint64 ffn;                 /* MLP inner size */
    gint64 vocab;               /* V */
    gint64 position_embeddings; /* learned positions (GPT-2/3); 0 for rotary */
    /* The share of each head's dimensions a rotary embedding turns in q and k (LLaMA: 1;
     * GPT-NeoX: 0.25); 0: no rotary kernels (learned positions, ALiBi). Time only: its
     * kernels' traffic (docs/compute.md, decision 61). */
    double rotary;
    ParoMlpKind mlp;
    ParoNormKind norm;
    gboolean attn_bias; /* biases on q, k, v, o */
    gboolean mlp_bias;  /* biases on the MLP projections */
    gboolean tied_embeddings;
    /* Dropout probabilities (Megatron-LM's --attention-dropout and --hidden-dropout, 0.1 by
     * default there; 0 in LLaMA-family and MPT training): only whether they are 0 matters
     * for time, a dropout kernel's traffic (docs/compute.md). */
    double attention_dropout; /* on the softmax output (eager attention) */
    double hidden_dropout;    /* on the attention and MLP outputs before the residual adds */
    /* Mixture of experts (Mixtral's): each layer's MLP is `experts` MLPs of width ffn and a
     * router (an h x experts product) that sends each token to `experts_per_token` of them.
     * 0: a dense MLP. Every GPU holds every expert, sharded by the strategy like the other
     * weights: no expert parallelism (docs/decisions.md, decision 31). */
    gint64 experts;
    gint64 experts_per_token;
    /* Mixtures of experts beyond Mixtral's (decision 77): DeepSeek's, Qwen2-MoE's, OLMoE's.
     * All 0 (FALSE) for a model without them, whose numbers they leave as they were. */
    gint64 expert_ffn;           /* a routed expert's width; 0: ffn */
    gint64 shared_experts;       /* MLPs every token of an expert layer runs through */
    gint64 shared_ffn;           /* the width of one; 0: the routed experts' */
    gboolean shared_expert_gate; /* Qwen2-MoE: an h x 1 sigmoid gate on their output */
    /* Which layers hold experts: none of the first dense_layers (DeepSeek's
     * first_k_dense_replace, an MLP of width ffn), then layer l (from 0) when
     * (l + 1) % moe_every == 0 (Qwen2-MoE's decoder_sparse_step, Llama 4's interleave step;
     * 0 or 1: every one). paro_model_layer_has_experts. */
    gint64 dense_layers;
    gint64 moe_every;
    /* Multi-token prediction modules (DeepSeek-V3's num_nextn_predict_layers): each one more
     * transformer block (of layer L's kind, numbered L, L + 1, ...), its two input norms and
     * final norm (3 h) and a 2h x h projection, sharing the model's embeddings and output
     * head, which it runs again with its own loss. */
    gint64 mtp_layers;
    /* Multi-head latent attention (DeepSeek-V2 and V3), when kv_lora_rank > 0: keys and
     * values from a latent of kv_lora_rank (h x (kv_lora_rank + qk_rope_head_dim), then
     * kv_lora_rank x heads (qk_nope_head_dim + v_head_dim)), queries from one of
     * q_lora_rank (0: h x heads (qk_nope_head_dim + qk_rope_head_dim) directly), an RMSNorm
     * on each latent; each head's query and key are qk_nope_head_dim + qk_rope_head_dim
     * wide (its rotary part, one key shared by the heads), its value and output v_head_dim.
     * The loader sets head_dim to the query's width and kv_heads to heads, the multi-head
     * shape the functions that do not know latent attention (LoRA, fp8) read. */
    gint64 q_lora_rank;
    gint64 kv_lora_rank;
    gint64 qk_nope_head_dim;
    gint64 qk_rope_head_dim;
    gint64 v_head_dim;
    gboolean qk_norm;        /* OLMoE: RMSNorms over the whole query and key (q and kv weights) */
    double params_given;     /* the file's `parameters`, overriding the shape count; 0 if none */
    double published_params; /* for documentation and tests; 0 if none */
} ParoModel;

void paro_model_free(ParoModel *model);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ParoModel, paro_model_free)

/** How many parameters train: all, a share, a count, or LoRA adapters on the frozen base. */
typedef enum {
    PARO_TRAINABLE_FRACTION,
    PARO_TRAINABLE_COUNT,
    PARO_TRAINABLE_LORA
} ParoTrainableKind;

typedef struct {
    ParoTrainableKind kind;
    double fraction;     /* FRACTION: Psi'/Psi in (0, 1] */
    double count;        /* COUNT: Psi' */
    gint64 lora_rank;    /* LORA: r */
    guint lora_targets;  /* LORA: ParoLoraTarget bits */
    double lora_dropout; /* LORA: dropout on the adapters' inputs (0: none) */
} ParoTrainable;

#define PARO_TRAINABLE_INIT                                                                        \
    {                                                                                              \
        PARO_TRAINABLE_FRACTION, 1.0, 0, 0, 0, 0                                                   \
    }

/** paro_model_expert_params: the routed experts' parameters of the whole model (their
 * MLPs and biases, every expert layer's, the multi-token prediction modules' too; not the
 * shared experts, routers or dense layers): what expert parallelism splits over its ep
 * ranks and reduces over the expert-data-parallel group; 0 for a dense model or one
 * without shape. */
double paro_model_expert_params(const ParoModel *m);

/** paro_model_is_mla: the attention is multi-head latent attention (kv_lora_rank > 0). */
gboolean paro_model_is_mla(const ParoModel *m);

/** paro_model_layer_has_experts: layer @l (from 0; L and above: the multi-token prediction
 * modules' blocks) holds routed experts. */
gboolean paro_model_layer_has_experts(const ParoModel *m, gint64 l);

/** paro_model_expert_layers: the layers holding routed experts, the multi-token prediction
 * modules' included (DeepSeek-V3: 58 + 1). */
gint64 paro_model_expert_layers(const ParoModel *m);

/** paro_model_expert_ffn: a routed expert's width (expert_ffn, else ffn). */
gint64 paro_model_expert_ffn(const ParoModel *m);

/** paro_model_layer_view: the shape of one kind of layer as a model of alike layers:
 * @experts: an expert layer (ffn the routed experts' width), else a dense one (no experts,
 * no shared experts). Shares @m's strings: not to be freed. */
ParoModel paro_model_layer_view(const ParoModel *m, gboolean experts);

/** paro_model_layer_params: parameters of a mean transformer layer (0 without a shape),
 * every expert of a mixture of experts included: all layers' and the multi-token
 * prediction modules' (less the shared embeddings and head) over the L layers, so that
 * L times it plus the embeddings, final norm and head is the shape count. A model of
 * alike layers: one layer's. */
double paro_model_layer_params(const ParoModel *model);

/** paro_model_layer_params_at: parameters of layer @l (from 0), a multi-token prediction
 * module's (its block, norms and projection) for l >= L. */
double paro_model_layer_params_at(const ParoModel *model, gint64 l);

/** paro_model_largest_layer_params: the parameters of the largest layer (what one layer's
 * gathered buffer holds). */
double paro_model_largest_layer_params(const ParoModel *model);

/** paro_model_embedding_params: the input embeddings (and learned positions) the first layer
 * carries; paro_model_head_params: the final norm, the output head unless tied and the
 * multi-token prediction modules, which the last layer carries (model/compute.c's weight
 * shares, FSDP's root unit). 0 without a shape. */
double paro_model_embedding_params(const ParoModel *model);
double paro_model_head_params(const ParoModel *model);

/** paro_model_mtp_params: the multi-token prediction modules' own parameters (DeepSeek-V3:
 * 11.5B), without the embeddings and head they share. */
double paro_model_mtp_params(const ParoModel *model);

/** paro_model_shape_params: the count derived from the shape (embeddings, layers, final
 * norm, output head unless tied). */
double paro_model_shape_params(const ParoModel *model);

/** paro_model_base_params: the file's `parameters` if given, else the shape count. */
double paro_model_base_params(const ParoModel *model);

/** paro_model_lora_params: adapter parameters, r*(in+out) per target per layer. */
double paro_model_lora_params(const ParoModel *model, gint64 rank, guint targets);

/**
 * paro_model_params:
 * @out_trainable: (out): Psi', the trainable parameters
 * Returns: Psi, all parameters held (the base plus LoRA adapters when LoRA is used).
 */
double paro_model_params(const ParoModel *model, const ParoTrainable *trainable,
                         double *out_trainable);

/** paro_model_op_recomputed_weights: the weights of the products per-op selective
 * recomputation runs again in one layer (wk, wo, and the MLP's sixth product: decision 49). */
double paro_model_op_recomputed_weights(const ParoModel *model);

/**
 * paro_model_step_flops:
 * FLOPs of one micro-batch of @batch sequences of @seq tokens, forward plus backward
 * (plus the recomputed forward of the layers: the output head is not recomputed), with
 * @trainable_share = Psi'/Psi of the weights needing weight gradients. See model.c for the
 * derivation.
 */
double paro_model_step_flops(const ParoModel *model, gint64 batch, gint64 seq,
                             double trainable_share, ParoRecompute recompute);

/** paro_model_routes: the MLPs a token runs through in a layer: experts_per_token for a
 * mixture of experts, 1 for a dense MLP. */
double paro_model_routes(const ParoModel *model);

/** paro_model_active_params: the parameters one token's forward multiplies by: all of a
 * dense model's, a mixture of experts' with experts_per_token of its experts (Mixtral
 * 8x7B: 12.9B of 46.7B). */
double paro_model_active_params(const ParoModel *model);

/** paro_model_forward_flops: FLOPs of the forward pass of one micro-batch. */
double paro_model_forward_flops(const ParoModel *model, gint64 batch, gint64 seq);

/* The per-layer activation functions below return, for a model whose layers differ (dense
 * and expert layers, multi-token prediction modules: decision 77), the mean over its L
 * layers, so that L times it is the whole model's. */

/** paro_model_activation_bytes: activations kept per layer for one micro-batch, 16-bit
 * (Korthikanti et al. 2022, generalised to any MLP width, with the model's dropout and
 * eager attention's softmax kernels, @fused_softmax: Megatron's one kernel; see model.c).
 * FlashAttention keeps no s x s term, as selective recomputation does not. */
double paro_model_activation_bytes(const ParoModel *model, gint64 batch, gint64 seq,
                                   ParoRecompute recompute, ParoAttention attention,
                                   gboolean fused_softmax);

/** paro_model_fp8_activation_saving: what fp8 linears save of a layer's activations on one
 * rank of @tp: Transformer Engine keeps each product's input for the weight gradient as
 * fp8, one byte instead of two. The QKV and MLP inputs (whole on every TP rank without
 * sequence parallelism; a mixture of experts' MLP input on each route), the attention
 * output and the MLP's inner input (f, on each route). Nothing under full recomputation,
 * which keeps only the layer's input. */
double paro_model_fp8_activation_saving(const ParoModel *model, gint64 batch, gint64 seq,
                                        ParoRecompute recompute, gint64 tp,
                                        gboolean sequence_parallel);

/** paro_model_frozen_input_saving: what frozen linears save of a layer's activations on one
 * rank of @tp under LoRA on @lora_targets: a product whose weight trains nothing computes no
 * weight gradient, so its input is not kept for one (PyTorch's autograd saves a product's
 * input only when the weight's gradient is wanted; Transformer Engine's linears likewise,
 * `backward_needs_input`), unless an adapter on the same input keeps it: the QKV input
 * without an adapter on q, k or v, the MLP input without one on gate or up, the MLP's inner
 * input without one on down; the attention output stays (FlashAttention and cuDNN's
 * kernel keep it for their backward) except under eager attention without one on o.
 * @fp8: the inputs were kept as fp8, one byte (paro_model_fp8_activation_saving took the
 * other). Nothing under full recomputation. */
double paro_model_frozen_input_saving(const ParoModel *model, gint64 batch, gint64 seq,
                                      ParoRecompute recompute, ParoAttention attention,
                                      guint lora_targets, gboolean fp8, gint64 tp,
                                      gboolean sequence_parallel);

/* Which product's input a LoRA adapter reads. */
typedef enum {
    PARO_LORA_INPUT_QKV,  /* the attention's norm output, h */
    PARO_LORA_INPUT_O,    /* the attention core's output, q / t */
    PARO_LORA_INPUT_MLP,  /* the MLP's norm output, h (on each of k routes) */
    PARO_LORA_INPUT_DOWN, /* the MLP's inner activation, f / t */
} ParoLoraInput;

/* One LoRA adapter of a layer on one TP rank: elements a token of its input and its output. */
typedef struct {
    double in, out;
    ParoLoraInput input;
} ParoLoraAdapter;

#define PARO_LORA_ADAPTERS_MAX 7

/** paro_model_lora_adapters: the adapters of one layer on one rank of @tp for @targets,
 * written to @out; returns how many. @packed: one adapter over the packed QKV product and
 * one over the packed gate-and-up product (NeMo's LoraKQVAdapter and LoraHto4HAdapter), else
 * one a projection (HuggingFace PEFT). A column-parallel product's adapter reads the whole
 * input, h (with sequence parallelism, the gathered norm output) and writes its share of the
 * output; a row-parallel one's reads its share and writes h / t with sequence parallelism
 * (NeMo's all-to-all), else h. On each of k routes for a mixture of experts' MLP. */
guint paro_model_lora_adapters(const ParoModel *model, guint targets, gboolean packed, gint64 tp,
                               gboolean sequence_parallel,
                               ParoLoraAdapter out[PARO_LORA_ADAPTERS_MAX]);

/** paro_model_lora_adapter_memory: what LoRA adapters keep of a layer's activations on one
 * rank of @tp beyond what paro_model_frozen_input_saving leaves kept (decision 52): with
 * @dropout > 0, each adapter keeps its dropout's 16-bit output (for its down product's
 * weight gradient) and one-byte mask, 3 bytes an input element, and its input is kept by
 * nothing else; without, the adapters of one input keep that input, 16 bits, whole (h: the
 * gathered one under sequence parallelism, where the frozen product would have kept its
 * share), but the attention's output, which the fused attention kernels keep anyway (not
 * with @fp8_attention, which keeps an fp8 copy: decision 53). Nothing under full or per-op
 * recomputation. */
double paro_model_lora_adapter_memory(const ParoModel *model, gint64 batch, gint64 seq,
                                      ParoRecompute recompute, ParoAttention attention,
                                      guint targets, double dropout, gboolean packed, gboolean fp8,
                                      gboolean fp8_attention, gint64 tp,
                                      gboolean sequence_parallel);

/** paro_model_fp8_attention_saving: what fp8 attention saves of a layer's activations on one
 * rank of @tp (decision 53): cuDNN's fp8 kernel keeps its query, key, value and output for
 * the backward in fp8, one byte of each element where the 16-bit kernel keeps two, and its
 * 16-bit output, which only the next product reads, is not kept; (2q + 2kv) / t bytes a
 * token. Nothing under full or per-op recomputation. */
double paro_model_fp8_attention_saving(const ParoModel *model, gint64 batch, gint64 seq,
                                       ParoRecompute recompute, gint64 tp);

/** paro_model_fused_swiglu_saving: what a fused SwiGLU saves of a gated MLP's activations
 * on one rank of @tp (decision 51): the SiLU's 16-bit output, 2 bytes for each of the f
 * inner elements a token (of each of its k experts), which PyTorch's separate kernels keep
 * for the product's backward and Megatron-Core's fused kernel recomputes from its input; 0
 * for a plain MLP, a model without shape, or full or per-op recomputation. */
double paro_model_fused_swiglu_saving(const ParoModel *model, gint64 batch, gint64 seq,
                                      ParoRecompute recompute, gint64 tp,
                                      gboolean sequence_parallel);

/** paro_model_activation_bytes_tp: the same with tensor parallelism of degree @tp
 * (Korthikanti et al. 2022, eq. 2 and 4): without sequence parallelism the layer norms',
 * the column-parallel products' inputs and the dropout masks (10*s*b*h with dropout, 8
 * without) stay whole on every TP rank and the rest is divided by @tp; with it
 * everything is. Full recomputation keeps the layer input, 2*s*b*h (/tp with sequence
 * parallelism). @tp = 1 gives paro_model_activation_bytes. */
double paro_model_activation_bytes_tp(const ParoModel *model, gint64 batch, gint64 seq,
                                      ParoRecompute recompute, ParoAttention attention,
                                      gboolean fused_softmax, gint64 tp,
                                      gboolean sequence_parallel);

extern const char *const paro_recompute_names[]; /* "none", "selective", "full", "op", NULL */
extern const char *const paro_attention_names[]; /* "flash", "eager", "flash1", NULL */

G_END_DECLS
