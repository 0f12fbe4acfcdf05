/* SPDX-License-Identifier: MIT */
/* Per-layer compute time on one TP rank (docs/compute.md):
 *   GEMMs       the layer's four products (QKV, attention output, MLP up (with the gate),
 *               MLP down; the output head on the last layer) with T = b*s rows and the
 *               TP-cut dimension divided by tp, each timed by paro_compute_gemm_s; the
 *               backward is the input-gradient product plus the trainable share of the
 *               weight-gradient product, each with its own shape;
 *   attention   4*b*s^2*d FLOPs a head forward; eager: batched GEMMs at the GPU's GEMM
 *               rate, backward twice that; FlashAttention: causal, so half those FLOPs
 *               (the tiles above the diagonal are skipped), at its own rate, backward 2.5x
 *               the forward (five s x s x d products against two: it recomputes the
 *               scores);
 *   elementwise norms, activations, dropout, residuals, softmax: the forward reads and
 *               writes about the layer's activation bytes (without recomputation) once, the
 *               backward twice, at HBM bandwidth: the memory-bound part a FLOP count misses;
 *   loss        the cross-entropy's fp32 passes over the logits (last layer), at HBM bandwidth;
 *   recompute   full: the layer's forward again, except the output head (Megatron does not
 *               recompute it); selective: the eager attention core and its elementwise
 *               bytes again (nothing with FlashAttention, which recomputes inside its
 *               backward already). */
#include "model/compute.h"

#include <math.h>

double paro_compute_matmul_rate(const ParoComputeSetup *c)
{
    return c->flat_flops > 0 ? c->flat_flops : c->peak_flops * c->matmul_efficiency;
}

double paro_compute_gemm_s(const ParoComputeSetup *c, double m, double n, double k)
{
    double flops = 2.0 * m * n * k, rate = paro_compute_matmul_rate(c);
    if (c->flat_flops > 0)
        return flops / rate;
    double work = flops / rate;
    if (c->sms > 0) {
        double tiles = ceil(m / PARO_GEMM_TILE) * ceil(n / PARO_GEMM_TILE);
        double waves = ceil(tiles / (double)c->sms);
        work = waves * 2.0 * PARO_GEMM_TILE * PARO_GEMM_TILE * k / (rate / (double)c->sms);
    }
    double bytes = 2.0 * (m * k + k * n + m * n);
    return MAX(work, bytes / c->hbm_Bps) + PARO_GEMM_OVERHEAD_S;
}

/* Forward and backward time of one product of the forward shape (m, n, k). */
/* The loss over a TP rank's T x V/t logits, bytes moved per logit, forward and backward
 * together: the 16-bit logits read and cast to fp32 (2 + 4), log-softmax (4 + 4); backward,
 * its gradient from the saved fp32 output (4 + 4), cast back to 16 bits (4 + 2). Megatron's
 * vocab-parallel cross-entropy and PyTorch's CrossEntropyLoss both run unfused fp32 passes
 * of this kind; for a 125M-parameter GPT it is as much traffic as all its layers' norms and
 * activations. */
#define PARO_LOSS_BYTES_PER_LOGIT 28.0

static void product(const ParoComputeSetup *c, double m, double n, double k, double *forward,
                    double *backward)
{
    *forward += paro_compute_gemm_s(c, m, n, k);
    *backward +=
        paro_compute_gemm_s(c, m, k, n) + c->trainable_share * paro_compute_gemm_s(c, k, n, m);
}

/* The attention core (QK^T and AV) of one layer on one TP rank: forward and backward. */
static void attention_core(const ParoModel *m, const ParoComputeSetup *c, double *forward,
                           double *backward)
{
    double heads = (double)m->heads / (double)c->tp;
    double flops =
        4.0 * (double)c->batch * (double)c->seq * (double)c->seq * heads * (double)m->head_dim;
    gboolean fused = c->attention != PARO_ATTENTION_EAGER;
    double rate = paro_compute_matmul_rate(c);
    if (fused && c->flat_flops == 0 && c->attention_efficiency > 0) {
        /* FlashAttention-2 is "around 2x" FlashAttention-1 (Dao 2023, abstract). */
        rate = c->peak_flops * c->attention_efficiency *
               (c->attention == PARO_ATTENTION_FLASH1 ? 0.5 : 1.0);
        /* A causal FlashAttention kernel skips the tiles above the diagonal: half the
         * products (FlashAttention-2's benchmarks count causal FLOPs so, and its rates are
         * quoted on that count). The eager path computes the whole s x s score matrix and
         * masks it afterwards. */
        flops /= 2.0;
    }
    *forward = flops / rate;
    *backward = (fused ? 2.5 : 2.0) * *forward;
}

GArray *paro_compute_layers(const ParoModel *m, const ParoComputeSetup *c)
{
    gint64 L = m->has_shape ? m->layers : 1;
    GArray *layers = g_array_sized_new(FALSE, TRUE, sizeof(ParoLayerCost), (guint)L);
    g_array_set_size(layers, (guint)L);
    double T = (double)c->batch * (double)c->seq, t = (double)c->tp;
    double total = m->has_shape ? paro_model_shape_params(m) : 1;
    double act = paro_model_activation_bytes_tp(m, c->batch, c->seq, PARO_RECOMPUTE_NONE,
                                                c->attention, c->tp, c->sequence_parallel);
    double act_selective = paro_model_activation_bytes_tp(
        m, c->batch, c->seq, PARO_RECOMPUTE_SELECTIVE, c->attention, c->tp, c->sequence_parallel);
    double elementwise_s = act / c->hbm_Bps, scores_s = (act - act_selective) / c->hbm_Bps;
    for (gint64 l = 0; l < L; l++) {
        ParoLayerCost *lc = &g_array_index(layers, ParoLayerCost, l);
        double forward = 0, backward = 0, head_f = 0, head_b = 0, core_f = 0, core_b = 0;
        if (m->has_shape) {
            double h = (double)m->hidden, v = (double)m->vocab, f = (double)m->ffn;
            double q = (double)m->heads * (double)m->head_dim;
            double kv = (double)m->kv_heads * (double)m->head_dim;
            double up = (m->mlp == PARO_MLP_GATED ? 2.0 : 1.0) * f;
            double params = paro_model_layer_params(m);
            if (l == 0)
                params += v * h + (double)m->position_embeddings * h;
            if (l == L - 1)
                params += (m->norm == PARO_NORM_LAYERNORM ? 2.0 : 1.0) * h +
                          (m->tied_embeddings ? 0 : v * h);
            lc->weight_share = params / total;
            product(c, T, (q + 2.0 * kv) / t, h, &forward, &backward);
            product(c, T, h, q / t, &forward, &backward);
            product(c, T, up / t, h, &forward, &backward);
            product(c, T, h, f / t, &forward, &backward);
            if (l == L - 1) {
                product(c, T, v / t, h, &head_f, &head_b);
                double loss_s = T * v / t * PARO_LOSS_BYTES_PER_LOGIT / 2.0 / c->hbm_Bps;
                head_f += loss_s;
                head_b += loss_s;
            }
            attention_core(m, c, &core_f, &core_b);
        } else {
            /* Only a count: the 2*N*T FLOPs at the large-GEMM rate, shape unknown. */
            lc->weight_share = 1;
            forward = 2.0 * T * paro_model_base_params(m) / t / paro_compute_matmul_rate(c);
            backward = (1.0 + c->trainable_share) * forward;
        }
        double again =
            c->recompute == PARO_RECOMPUTE_FULL ? forward + core_f + elementwise_s
            : c->recompute == PARO_RECOMPUTE_SELECTIVE && c->attention == PARO_ATTENTION_EAGER
                ? core_f + scores_s
                : 0;
        lc->forward_s = forward + head_f + core_f + elementwise_s;
        lc->backward_s = backward + head_b + core_b + 2.0 * elementwise_s + again;
    }
    return layers;
}
