/* SPDX-License-Identifier: MIT */
/* Compute model: the time of each layer's forward and backward pass on one GPU (one TP
 * rank), shared by the closed-form guideline and the training-step simulation so the two
 * agree. docs/compute.md derives it and names its sources. */
#pragma once

#include "model/model.h"

G_BEGIN_DECLS

/* How a rotary embedding's kernels run over q and k (decision 61). */
typedef enum {
    PARO_ROPE_FUSED,       /* one kernel each way: Transformer Engine's, Apex's (Megatron-Core) */
    PARO_ROPE_COMPLEX,     /* Meta's reference code, torchtitan: an fp32 complex product */
    PARO_ROPE_ROTATE_HALF, /* HuggingFace's, Megatron-DeepSpeed's: q cos + rotate_half(q) sin */
} ParoRope;

typedef struct {
    /* GEMMs: either one flat rate (a scenario's `efficiency`, or a calibration file's
     * measured rate) or, when flat_flops is 0, the shape-aware roofline below. */
    double flat_flops;
    double peak_flops;                  /* dense 16-bit tensor rate */
    double matmul_efficiency;           /* the GPU's best GEMM rate / peak */
    gint64 sms;                         /* 0: no wave quantization */
    double attention_efficiency;        /* FlashAttention's rate / peak; 0: the GEMM rate */
    double cudnn_attention_efficiency;  /* cuDNN's fused attention; 0: attention_efficiency's */
    double flash1_attention_efficiency; /* FlashAttention-1's generation; 0: half of
                                         * attention_efficiency */
    double long_attention_efficiency;   /* FlashAttention-2's long-sequence tile model; 0: none */
    gboolean fp8;                       /* the linear layers' products in fp8 (docs/compute.md) */
    double fp8_matmul_efficiency;       /* best fp8 GEMM rate / fp8 peak (2 x peak_flops); 0: the
                                         * 16-bit efficiency x PARO_FP8_SHARE_OF_16BIT */
    double hbm_Bps;                     /* for memory-bound work */
    /* elementwise kernels' achieved bandwidth (paro_compute_elementwise_Bps of the
     * datasheet HBM bandwidth, not a calibration's measured one: the shares were fitted
     * against the datasheet); 0: hbm_Bps at the H100's share */
    double elementwise_Bps;
    double flat_pass_Bps; /* passes over a unit's flat gradient (paro_compute_flat_pass_Bps of
                           * the datasheet HBM bandwidth); 0: hbm_Bps at the H100's share */
    double power_knee, power_slope; /* the GPU's power cap on GEMM-heavy layers (traits) */
    gint64 batch, seq;              /* micro-batch */
    gint64 cp; /* context-parallel ranks sharing each sequence: a rank runs seq/cp of its tokens
                * (balanced causal chunks) against all seq keys; 0 or 1: none */
    double trainable_share; /* Psi'/Psi */
    ParoRecompute recompute;
    gint64 recompute_every; /* full: only layers k, 2k, ... (from 1) recompute; 0 or 1: all */
    ParoAttention attention;
    gboolean fused_softmax; /* eager attention: Megatron's one softmax kernel, or PyTorch's five */
    gboolean fused_loss;    /* the loss: one fused 16-bit kernel a pass, or unfused fp32 passes */
    gboolean fused_swiglu;  /* a gated MLP's SiLU and product: one kernel, or PyTorch's two */
    gboolean eager_norm;    /* an RMSNorm as PyTorch's operators, not one kernel (decision 60) */
    ParoRope rope;          /* the rotary embedding's kernels, on a model with rotary > 0 */
    guint lora_targets;     /* ParoLoraTarget bits of the layers' LoRA adapters; 0: none */
    double lora_dropout;    /* dropout on the adapters' inputs */
    gboolean packed_lora;   /* one adapter over the packed QKV (and gate-up) product: NeMo */
    gint64 tp;              /* tensor-parallel degree: the GEMMs' N or K is cut by it */
    gint64 ep, etp;         /* expert parallelism: a GPU's e/ep experts, cut by etp (0: tp) */
    double expert_load;     /* with ep > 1: the hottest rank's routes over the mean */
    gboolean sequence_parallel; /* norms and dropouts cut by tp too */
} ParoComputeSetup;

typedef struct {
    double weight_share;   /* this layer's share of the parameters (sums to 1) */
    double forward_s;      /* on one TP rank */
    double gemm_forward_s; /* the forward's products (the head's too): gemm_s's share */
    double backward_s;     /* including the recomputed forward */
    gboolean recomputed;   /* its forward runs again before its backward, whole (full) or
                            * in part (op), with the forward's TP collectives */
    /* The same forward plus backward, without recomputation, by kind of kernel: the
     * products (the head's too), the attention core, the memory-bound rest (elementwise
     * kernels and the loss). What `parosim validate --layers` holds against a profiled
     * layer's kernels. */
    double gemm_s, attention_s, memory_s;
    double attention_forward_s; /* the attention core's forward: attention_s's share */
} ParoLayerCost;

/** paro_compute_lora_bytes: the bytes one token moves through a layer's LoRA adapters'
 * kernels on one TP rank (decision 52), forward and backward: 0 without adapters. */
void paro_compute_lora_bytes(const ParoModel *model, const ParoComputeSetup *c, double *forward,
                             double *backward);

/* Fixed cost of one GEMM kernel: the residual of a 1024^3 bf16 GEMM on an H100 over its
 * one wave (8.8 us measured, 5.6 us of tile work; validation/data/h100). */
#define PARO_GEMM_OVERHEAD_S 3e-6
/* The share of HBM bandwidth the elementwise kernels of a layer reach: measured on an
 * H100 (validation/data/h100/2026-11-25_layer.txt, PyTorch 2.11's unfused kernels):
 * their profiled time against the bytes compute.c counts (docs/compute.md). A GPU whose
 * share was measured too says so in its traits (topology.c: the H200's is 0.38). */
#define PARO_ELEMENTWISE_BW_SHARE 0.47

/* An RMSNorm written as PyTorch operators (decision 60), bytes an element of its input at
 * the elementwise kernels' rate: its kernels move 36 forward (cast to fp32 6, square 8,
 * mean 4, product 8, cast back 6, the weight's product 4) and 66 backward (the weight's
 * product's two gradients 8, the cast's 6, the product's two 16, the mean's expansion 4-8,
 * the square's 12, the two gradients' sum 12, the cast back 6); timed on an H100 at 8k-16k
 * tokens of 4096-8192 (validation/data/h100/2026-11-27_norms.txt) they take what 24-26 and
 * 55-58 bytes take at the elementwise share, these fp32 kernels running faster than the
 * layers' small ones. One kernel: 4 and 10 (the same log: 3.6 and 9.9). */
#define PARO_EAGER_RMSNORM_FORWARD_BYTES 25.0
#define PARO_EAGER_RMSNORM_BACKWARD_BYTES 56.0

/* A rotary embedding's kernels, bytes an element of q or k they turn (decision 61), counted
 * from each code's operators in 16-bit training, the cos and sin tables (one row a
 * position, shared by the batch and the heads) left out:
 *   fused (Transformer Engine's fused_apply_rotary_pos_emb, Megatron-LM's default): one
 *     kernel reads and writes the tensor, 4 forward and 4 backward;
 *   complex (torchtitan's apply_rotary_emb, Meta's llama model.py): the cast to fp32 (2 + 4),
 *     the complex product (4 + 4), the cast back (4 + 2): 20 forward; backward the cast of
 *     the gradient (6), its product with the conjugate (8), the cast back (6): 20;
 *   rotate_half (HuggingFace's apply_rotary_pos_emb, Megatron-DeepSpeed's): the product with
 *     cos (4), the negated half (2), the concatenation (4), the product with sin (4), the sum
 *     (6): 20 forward; backward the two products' gradients (8), the negation's (2), each
 *     half's slice_backward into a zero tensor (2 x 4), and the tensor's three gradients
 *     summed by autograd (2 x 6): 30.
 * Not timed: counted at the elementwise kernels' rate. */
#define PARO_ROPE_FUSED_BYTES 4.0
#define PARO_ROPE_COMPLEX_BYTES 20.0
#define PARO_ROPE_ROTATE_HALF_FORWARD_BYTES 20.0
#define PARO_ROPE_ROTATE_HALF_BACKWARD_BYTES 30.0

/* The share of HBM bandwidth the frameworks' passes over a wrapped unit's flat gradient
 * reach (FSDP1's cat, cast to fp32 and in-place division; DeepSpeed's BF16_Optimizer's cast
 * and add): measured with PyTorch 2.11's kernels on an H100 over the gradients of one layer
 * of 7B to 70B models, bytes-weighted, against the 18 bytes a parameter the frameworks move
 * (validation/data/h100/2026-11-26_passes.txt, validation/harness/passes.py). One layer of
 * a 125M-760M model reaches 0.62-0.67; pure-bf16 passes (no cast kernel) 0.85. */
#define PARO_FLAT_PASS_BW_SHARE 0.750

/** paro_compute_elementwise_Bps: the rate of a GPU's elementwise kernels from its datasheet
 * HBM bandwidth and its measured share of it (0: not measured, the H100's). */
static inline double paro_compute_elementwise_Bps(double datasheet_hbm_Bps, double share)
{
    return datasheet_hbm_Bps * (share > 0 ? share : PARO_ELEMENTWISE_BW_SHARE);
}

/** paro_compute_setup_elementwise_Bps: @c's elementwise kernels' rate: its own, else the
 * H100's share of its HBM bandwidth. */
static inline double paro_compute_setup_elementwise_Bps(const ParoComputeSetup *c)
{
    return c->elementwise_Bps > 0 ? c->elementwise_Bps
                                  : paro_compute_elementwise_Bps(c->hbm_Bps, 0);
}

/** paro_compute_flat_pass_Bps: the rate of a GPU's passes over flat gradients from its
 * datasheet HBM bandwidth and its measured share (0: not measured, the H100's). */
static inline double paro_compute_flat_pass_Bps(double datasheet_hbm_Bps, double share)
{
    return datasheet_hbm_Bps * (share > 0 ? share : PARO_FLAT_PASS_BW_SHARE);
}

/** paro_compute_setup_flat_pass_Bps: @c's passes over flat gradients: its own rate, else
 * the H100's share of its HBM bandwidth. */
static inline double paro_compute_setup_flat_pass_Bps(const ParoComputeSetup *c)
{
    return c->flat_pass_Bps > 0 ? c->flat_pass_Bps : paro_compute_flat_pass_Bps(c->hbm_Bps, 0);
}

/* A FlashAttention kernel's fixed cost per query tile (loading the tile, writing its output,
 * the last rescale), in key blocks of 128: a tile that visits n key blocks runs at
 * n / (n + 2.75) of the kernel's rate. Fitted with the H100's rate (0.27 of peak) to the 41
 * FlashAttention-2 layers of validation/data/h100/2026-11-25_layer.txt
 * (validation/harness/fit_attention.py); docs/compute.md. */
#define PARO_ATTENTION_TILE_OVERHEAD 2.75
/* Where FlashAttention-2's long-sequence tile model meets the layer fit (decision 92): the
 * key blocks a causal tile visits at 8k tokens, the longest the layer fit was fitted on,
 * (8192 / 128 + 1) / 2. The long model's fixed cost a tile is the one at which its rate
 * equals the layer fit's there (11.89 blocks for 0.34 beside 0.27), so that every layer the
 * first was fitted on keeps its prediction. */
#define PARO_ATTENTION_LONG_JOIN_VISITS 32.5
/* An fp8 product's best rate against the fp8 peak (twice the 16-bit peak), as a share of the
 * 16-bit products' best against theirs: 0.703 / 0.801 on our H100 (0.710 / 0.787 on the
 * H200), the rates of validation/data/h100/2026-11-26_gemm-fp8-llama7b.txt fitted with this
 * GEMM model (docs/compute.md). For a GPU whose fp8 rate nothing measured. */
#define PARO_FP8_SHARE_OF_16BIT (0.703 / 0.801)
/* Bytes per element that Transformer Engine's fp8 casts add around a linear layer: the
 * input written as fp8 and as its transpose for the weight gradient (1 + 1) forward, the
 * output gradient the same way backward. TE fuses the cast into the kernel that produces
 * the tensor (LayerNorm, bias-GeLU, the bias gradient: layernorm_fwd_fp8,
 * cast_transpose_dbias), which reads it anyway; a separate cast kernel would read the 16-bit
 * tensor too (4 bytes), which predicted the corpus's MPT fp8 rows 4-11% slow at 512-2048
 * tokens where this count gives -3% to +4% (docs/decisions.md, 33). Current scaling's extra
 * amax pass is not counted. */
#define PARO_FP8_CAST_BYTES 2.0
/* The output tile of the GEMM model: 128 x 128 (cuBLAS's common Hopper and Ampere tiles
 * are 128 x 128 and 256 x 128; NVIDIA, "Matrix Multiplication Background", section 2.3). */
#define PARO_GEMM_TILE 128.0

/** paro_compute_matmul_rate: the rate of a large GEMM: the flat rate, else the GPU's best. */
double paro_compute_matmul_rate(const ParoComputeSetup *setup);

/**
 * paro_compute_gemm_s:
 * Time of one C[M,N] = A[M,K] B[K,N] product: waves of one tile per SM at the GPU's best
 * rate, or the bytes of A, B and C at HBM bandwidth if that is longer, plus the kernel's
 * fixed cost; with a flat rate, FLOPs / rate.
 */
double paro_compute_gemm_s(const ParoComputeSetup *setup, double m, double n, double k);

/** paro_compute_bmm_s: @count independent products of that shape in one kernel (a batched
 * GEMM: eager attention's per-head products), timed the same way over all their tiles and
 * bytes, with one fixed cost. */
double paro_compute_bmm_s(const ParoComputeSetup *setup, double count, double m, double n,
                          double k);

/** paro_compute_fp8_rate: the rate of a large fp8 GEMM: twice the 16-bit one, times the
 * GPU's fp8 efficiency against its 16-bit one (else PARO_FP8_SHARE_OF_16BIT). */
double paro_compute_fp8_rate(const ParoComputeSetup *setup);

/** paro_compute_fp8_gemm_s: paro_compute_gemm_s for fp8 operands (one byte each, a 16-bit
 * output) at paro_compute_fp8_rate. */
double paro_compute_fp8_gemm_s(const ParoComputeSetup *setup, double m, double n, double k);

/**
 * paro_compute_layers:
 * Returns: (transfer full) GArray of ParoLayerCost, one per layer (one in all for a model
 * known only by its count). The first layer carries the embeddings, the last the final
 * norm and the output head. See compute.c for the formulas.
 */
GArray *paro_compute_layers(const ParoModel *model, const ParoComputeSetup *setup);

G_END_DECLS
