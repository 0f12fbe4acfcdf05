/* SPDX-License-Identifier: MIT */
/* Fixtures shared by the compute-model suites (test_model.c, test_rates.c): a small GPT and
 * an H100-like GPU, so that hand derivations start from the same figures. */
#pragma once

#include "model/compute.h"
#include "model/model.h"

/* A GPT of three layers (LayerNorm, biases, a GeLU MLP of 4h) of @hidden with heads of 128
 * and a vocabulary of 50,000. */
static inline ParoModel paro_test_gpt_layers(gint64 hidden)
{
    return (ParoModel){.has_shape = TRUE,
                       .hidden = hidden,
                       .layers = 3,
                       .heads = hidden / 128,
                       .kv_heads = hidden / 128,
                       .head_dim = 128,
                       .ffn = 4 * hidden,
                       .vocab = 50000,
                       .mlp = PARO_MLP_PLAIN,
                       .norm = PARO_NORM_LAYERNORM,
                       .attn_bias = TRUE,
                       .mlp_bias = TRUE};
}

/* An H100-like GPU (989 TFLOP/s x 0.8 over 132 SMs, FlashAttention at 0.27) of @hbm_Bps
 * with no elementwise, flat-pass or power figures of its own, one TP rank, micro-batch
 * @batch of @seq tokens, FlashAttention, no recomputation. */
static inline ParoComputeSetup paro_test_h100_like(double hbm_Bps, gint64 batch, gint64 seq)
{
    return (ParoComputeSetup){.peak_flops = 989e12,
                              .matmul_efficiency = 0.8,
                              .sms = 132,
                              .attention_efficiency = 0.27,
                              .hbm_Bps = hbm_Bps,
                              .batch = batch,
                              .seq = seq,
                              .trainable_share = 1,
                              .recompute = PARO_RECOMPUTE_NONE,
                              .attention = PARO_ATTENTION_FLASH,
                              .tp = 1};
}
