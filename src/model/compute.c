/* SPDX-License-Identifier: MIT */
/* Per-layer compute time on one TP rank (docs/compute.md):
 *   GEMMs       the layer's four products (QKV, attention output, MLP up (with the gate),
 *               MLP down; the output head on the last layer) with T = b*s rows and the
 *               TP-cut dimension divided by tp, each timed by paro_compute_gemm_s; the
 *               backward is the input-gradient product plus the trainable share of the
 *               weight-gradient product (none under LoRA), each with its own shape; with
 *               fp8 the four (not the head, nor a router) by paro_compute_fp8_gemm_s, and
 *               their casts' bytes join the elementwise ones;
 *   attention   4*b*s^2*d FLOPs a head forward; eager: batched GEMMs timed as the GEMMs
 *               are, bytes of the s x s scores included, backward four products against
 *               two; FlashAttention: causal, so half those FLOPs
 *               (the tiles above the diagonal are skipped), at its own rate, backward 2.5x
 *               the forward (five s x s x d products against two: it recomputes the
 *               scores);
 *   elementwise norms, residual adds, the MLP's activation, layout copies around the
 *               attention kernel, bias gradients: the bytes each unfused kernel reads and
 *               writes (elementwise_bytes), at the share of HBM bandwidth such kernels reach;
 *               eager attention adds its softmax and dropout kernels' bytes over the scores
 *               (score_bytes: Megatron's fused softmax or PyTorch's separate kernels);
 *   adapters    LoRA's own kernels, their bytes at the flat passes' rate (decision 52);
 *   loss        the cross-entropy over the logits (last layer): unfused fp32 passes at the
 *               elementwise kernels' rate, or a fused kernel's at the flat passes' rate;
 *   power       on a GPU with a power cap, a layer whose GEMMs take most of its time runs
 *               them slower (the clocks drop: decision 45);
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

double paro_compute_fp8_rate(const ParoComputeSetup *c)
{
    double share = c->fp8_matmul_efficiency > 0 && c->matmul_efficiency > 0
                       ? c->fp8_matmul_efficiency / c->matmul_efficiency
                       : PARO_FP8_SHARE_OF_16BIT;
    return 2.0 * share * paro_compute_matmul_rate(c);
}

/* @count products (m, n, k) at @rate whose operands take @operand_bytes an element (the
 * output: 2): waves of tiles over the SMs, or the bytes at HBM bandwidth if more, plus
 * the kernel's fixed cost; a flat rate is FLOPs alone. */
static double gemm_time(const ParoComputeSetup *c, double count, double m, double n, double k,
                        double rate, double operand_bytes)
{
    double flops = 2.0 * count * m * n * k;
    if (c->flat_flops > 0)
        return flops / rate;
    double work = flops / rate;
    if (c->sms > 0) {
        double tiles = count * ceil(m / PARO_GEMM_TILE) * ceil(n / PARO_GEMM_TILE);
        double waves = ceil(tiles / (double)c->sms);
        work = waves * 2.0 * PARO_GEMM_TILE * PARO_GEMM_TILE * k / (rate / (double)c->sms);
    }
    double bytes = count * (operand_bytes * (m * k + k * n) + 2.0 * m * n);
    return MAX(work, bytes / c->hbm_Bps) + PARO_GEMM_OVERHEAD_S;
}

double paro_compute_bmm_s(const ParoComputeSetup *c, double count, double m, double n, double k)
{
    return gemm_time(c, count, m, n, k, paro_compute_matmul_rate(c), 2.0);
}

double paro_compute_fp8_gemm_s(const ParoComputeSetup *c, double m, double n, double k)
{
    return gemm_time(c, 1.0, m, n, k, paro_compute_fp8_rate(c), 1.0);
}

double paro_compute_gemm_s(const ParoComputeSetup *c, double m, double n, double k)
{
    return paro_compute_bmm_s(c, 1.0, m, n, k);
}

/* The bytes one token moves through the elementwise kernels of a layer on one TP rank, as
 * PyTorch's unfused kernels run them (counted in docs/compute.md, "Elementwise"; checked
 * against a profiled layer by `parosim validate --layers`): 16-bit tensors, each kernel
 * reading its inputs and writing its output once.
 *   forward:  two norms (read, write: 4 h), two residual adds (two reads, a write: 6 h), the
 *             attention output copied into the products' layout (4 q/t), the MLP's
 *             activation (GeLU 4 f/t; SwiGLU: SiLU 4 f/t and the product 6 f/t);
 *   backward: two norms (the input gradient 6 h, the weight gradient's pass 4 h), the two
 *             residual joins' gradient sums (6 h), the output gradient's layout copy (4 q/t)
 *             and the query, key and value gradients packed into one (4 (q+2kv)/t), each
 *             bias gradient's pass over its output gradient (2 x width), the activation's
 *             gradient (GeLU: 6 f/t; SwiGLU: 26 f/t);
 *   dropout:  with hidden dropout, the two dropouts before the residual adds: each reads
 *             and writes its tensor and writes a one-byte mask (5 h), and its backward reads
 *             the gradient and the mask and writes (5 h).
 * Without sequence parallelism the norms, residuals and dropouts are whole on every TP rank. */
static void elementwise_bytes(const ParoModel *m, const ParoComputeSetup *c, double *forward,
                              double *backward)
{
    double t = (double)c->tp, h = (double)m->hidden, f = (double)m->ffn / t;
    double whole = c->sequence_parallel ? h / t : h;
    double q = (double)(m->heads * m->head_dim) / t, kv = (double)(m->kv_heads * m->head_dim) / t;
    gboolean gated = m->mlp == PARO_MLP_GATED;
    double k = paro_model_routes(m);
    double bias = (m->attn_bias ? 2.0 * (q + 2.0 * kv) + 2.0 * h : 0) +
                  (m->mlp_bias ? k * (2.0 * (gated ? 2.0 : 1.0) * f + 2.0 * h) : 0);
    double dropout = m->hidden_dropout > 0 ? 2.0 * 5.0 * whole : 0;
    /* A mixture of experts runs the activation on each of a token's k routes, and moves the
     * routes as HF Mixtral's loop does: forward, each expert's copy of its tokens (read,
     * write: 4 h), the routing weight's product (4 h) and the sum into the output
     * (index_add: 6 h) per route, and the router's fp32 softmax and top-k (16 bytes per
     * expert); backward, the sum's gradient gathered (4 h), the product's two gradients
     * (8 h) and the copy's gradient summed back (6 h) per route, the softmax's (16). */
    double routes_f = 0, routes_b = 0;
    if (m->experts > 0) {
        routes_f = 14.0 * k * h + 16.0 * (double)m->experts;
        routes_b = 18.0 * k * h + 16.0 * (double)m->experts;
    }
    /* fp8 linears (Transformer Engine): each product's input cast forward and its output
     * gradient cast backward, PARO_FP8_CAST_BYTES an element; the MLP's on every route */
    double cast_f = 0, cast_b = 0;
    if (c->fp8) {
        double up = (gated ? 2.0 : 1.0) * f;
        cast_f = PARO_FP8_CAST_BYTES * (h + q + k * (h + f));
        cast_b = PARO_FP8_CAST_BYTES * ((q + 2.0 * kv) + h + k * (up + h));
    }
    /* A gated MLP's activation: PyTorch's SiLU (4f) and product (6f) forward, 26f backward;
     * Megatron-Core's fused SwiGLU reads w1's and w3's outputs and writes the product (6f),
     * backward reads them and the product's gradient and writes both gradients (10f):
     * fused_bias_swiglu.py (decision 51). */
    double swiglu_f = c->fused_swiglu ? 6.0 : 10.0, swiglu_b = c->fused_swiglu ? 10.0 : 26.0;
    /* The two norms: one kernel each (4 forward, 10 backward), or an RMSNorm written as
     * PyTorch operators (decision 60); a LayerNorm is one kernel in PyTorch either way. */
    gboolean eager = c->eager_norm && m->norm == PARO_NORM_RMSNORM;
    double norm_f = eager ? PARO_EAGER_RMSNORM_FORWARD_BYTES : 4.0;
    double norm_b = eager ? PARO_EAGER_RMSNORM_BACKWARD_BYTES : 10.0;
    /* The rotary embedding over q and k (decision 61); the unfused codes (torchtitan's,
     * HuggingFace's) also repeat k and v to every query head under grouped-query attention
     * before the attention kernel (repeat_kv: a copy of each, read kv and write q; backward
     * the sum over the copies), where Transformer Engine's attention reads them as they are. */
    static const double rope_bytes[][2] = {
        [PARO_ROPE_FUSED] = {PARO_ROPE_FUSED_BYTES, PARO_ROPE_FUSED_BYTES},
        [PARO_ROPE_COMPLEX] = {PARO_ROPE_COMPLEX_BYTES, PARO_ROPE_COMPLEX_BYTES},
        [PARO_ROPE_ROTATE_HALF] = {PARO_ROPE_ROTATE_HALF_FORWARD_BYTES,
                                   PARO_ROPE_ROTATE_HALF_BACKWARD_BYTES},
    };
    double turned = m->rotary * (q + kv);
    double rope_f = turned * rope_bytes[c->rope][0], rope_b = turned * rope_bytes[c->rope][1];
    if (c->rope != PARO_ROPE_FUSED && kv < q) {
        rope_f += 4.0 * (q + kv);
        rope_b += 4.0 * (q + kv);
    }
    *forward = (2.0 * norm_f + 12.0) * whole + 4.0 * q + k * (gated ? swiglu_f : 4.0) * f +
               dropout + routes_f + cast_f + rope_f;
    *backward = (2.0 * norm_b + 12.0) * whole + 4.0 * q + 4.0 * (q + 2.0 * kv) + bias +
                k * (gated ? swiglu_b : 6.0) * f + dropout + routes_b + cast_b + rope_b;
    if (paro_model_is_mla(m)) {
        /* Latent attention (decision 78) in place of the multi-head counts: the output's
         * layout copy over a x v (4 vo), the q, k, v gradients packed (4 (2 qk + vo)), the
         * rotary kernels over the heads' rotary queries and the one shared rotary key, the
         * concatenations of each head's query and key from their two parts (HF's torch.cat,
         * Megatron-Core's the same: 4 qk each way, and their slices backward), the RMSNorms
         * of the two latents (whole on every rank: their products are not split). */
        double a = (double)m->heads / t, rope = (double)m->qk_rope_head_dim;
        double qk = a * (double)(m->qk_nope_head_dim + m->qk_rope_head_dim);
        double vo = a * (double)m->v_head_dim;
        double latents = (double)(m->q_lora_rank + m->kv_lora_rank);
        double rotated = a * rope + rope;
        *forward = (2.0 * norm_f + 12.0) * whole + 4.0 * vo + k * (gated ? swiglu_f : 4.0) * f +
                   dropout + routes_f + cast_f + rotated * rope_bytes[c->rope][0] + 8.0 * qk +
                   norm_f * latents;
        *backward = (2.0 * norm_b + 12.0) * whole + 4.0 * vo + 4.0 * (2.0 * qk + vo) + bias +
                    k * (gated ? swiglu_b : 6.0) * f + dropout + routes_b + cast_b +
                    rotated * rope_bytes[c->rope][1] + 8.0 * qk + norm_b * latents;
    }
    if (m->experts > 0 && m->shared_experts > 0) {
        /* Shared experts (decision 77): their activation over their summed width, their
         * output added to the routed experts' (6 h); a gate (Qwen2-MoE's) multiplies it by
         * its sigmoid (6 h; backward its two gradients, 8 h) */
        double width =
            (double)m->shared_experts * (double)(m->shared_ffn > 0 ? m->shared_ffn : m->ffn) / t;
        double gate = m->shared_expert_gate ? 1.0 : 0.0;
        *forward += (gated ? swiglu_f : 4.0) * width + 6.0 * whole + gate * 6.0 * whole;
        *backward += (gated ? swiglu_b : 6.0) * width + gate * 8.0 * whole;
    }
}

/* A LoRA adapter's own kernels (NeMo's ParallelLinearAdapter, HuggingFace PEFT's lora
 * layers: the same sequence), bytes over its input (in elements a token) and output (out):
 *   forward:  the dropout on the input (read, write, a one-byte mask: 5 in), the down
 *             product reading its input (2 in; r = 8-64 outputs are nothing beside it), the
 *             up product writing the output (2 out), the scale by alpha / r (4 out), the add
 *             into the frozen product's output (6 out);
 *   backward: the scale's gradient (4 out), the up product's input and weight gradients each
 *             reading the output gradient (2 x 2 out), the down product's input gradient
 *             written (2 in) and its weight gradient reading the saved input (2 in), the
 *             dropout's gradient (5 in), the input gradient added into the frozen path's
 *             (6 in).
 * Without dropout its two passes go. The products of rank r are bound by these bytes, not
 * by FLOPs; the kernels are large and vectorized, and run at the flat passes' rate: timed
 * with PyTorch on an H100 and an H200 at MLPerf's Llama-2-70B shapes, TP 1 to 8, these
 * bytes at that rate give a median error of -0.7% and +0.0%, all within -17..+14%
 * (validation/data/h{100,200}/2026-11-26_lora.txt; decision 52). The collectives NeMo
 * adds (the all-to-all of a row-parallel adapter's output, an all-gather of r columns) are
 * not modelled. */
void paro_compute_lora_bytes(const ParoModel *m, const ParoComputeSetup *c, double *forward,
                             double *backward)
{
    *forward = *backward = 0;
    ParoLoraAdapter a[PARO_LORA_ADAPTERS_MAX];
    guint n = paro_model_lora_adapters(m, c->lora_targets, c->packed_lora, c->tp,
                                       c->sequence_parallel, a);
    double dropout = c->lora_dropout > 0 ? 5.0 : 0;
    for (guint i = 0; i < n; i++) {
        *forward += (dropout + 2.0) * a[i].in + 12.0 * a[i].out;
        *backward += 8.0 * a[i].out + (4.0 + dropout + 6.0) * a[i].in;
    }
}

/* Eager attention's kernels over the s x s scores, bytes moved per score (16-bit scores,
 * a one-byte dropout mask), forward and backward:
 *   fused softmax (Megatron's scaled_upper_triang_masked_softmax): reads the scores, writes
 *     the probabilities (4); backward reads their gradient and the saved output, writes
 *     (6);
 *   PyTorch's separate kernels (a HuggingFace model's eager attention, the harness's):
 *     scale (4), causal mask (4), the cast to fp32 (6), softmax (8), the cast back (6): 28;
 *     backward each in reverse: 6, 12, 6, 4, 4: 32;
 *   attention dropout: reads, writes and writes its mask (5); backward 5.
 * The batched products that write the scores and read the probabilities are timed by
 * paro_compute_bmm_s, with their bytes. */
static void score_bytes(const ParoModel *m, const ParoComputeSetup *c, double *forward,
                        double *backward)
{
    double dropout = m->attention_dropout > 0 ? 5.0 : 0;
    *forward = (c->fused_softmax ? 4.0 : 28.0) + dropout;
    *backward = (c->fused_softmax ? 6.0 : 32.0) + dropout;
}

/* The loss over a TP rank's T x V/t logits, bytes moved per logit, forward and backward
 * together: the 16-bit logits read and cast to fp32 (2 + 4), log-softmax (4 + 4); backward,
 * its gradient from the saved fp32 output (4 + 4), cast back to 16 bits (4 + 2). Megatron's
 * vocab-parallel cross-entropy and PyTorch's CrossEntropyLoss both run unfused fp32 passes
 * of this kind; for a 125M-parameter GPT it is as much traffic as all its layers' norms and
 * activations. Timed at the elementwise kernels' rate: PyTorch 2.11's cross_entropy of fp32
 * logits, forward and backward, moves these 28 bytes at 0.49 of the H100's datasheet
 * bandwidth (the layers' elementwise kernels: 0.47) and 0.45 of the H200's (0.38), at 4k-16k
 * tokens of 32k-50k vocabularies (validation/data/h{100,200}/2026-11-26_passes.txt; decision
 * 44). */
#define PARO_LOSS_BYTES_PER_LOGIT 28.0
/* A fused loss (Apex's xentropy kernels, which flash-attn's CrossEntropyLoss calls): forward,
 * one block a row reads the 16-bit logits twice (max and sum, then the sum of exponentials)
 * and writes one float a row; backward reads them once more and writes their 16-bit
 * gradient: 2 + 2 + 2 + 2 bytes a logit, streamed row by row like the flat gradient passes
 * and timed at their rate (decision 44). */
#define PARO_FUSED_LOSS_BYTES_PER_LOGIT 8.0

/* Forward and backward time of one product of the forward shape (m, n, k), in fp8 when
 * @fp8 (all three: Transformer Engine casts the output gradient and keeps transposed fp8
 * copies, so input and weight gradients run in fp8 too). */
static void product(const ParoComputeSetup *c, gboolean fp8, double m, double n, double k,
                    double *forward, double *backward)
{
    double (*gemm)(const ParoComputeSetup *, double, double, double) =
        fp8 ? paro_compute_fp8_gemm_s : paro_compute_gemm_s;
    *forward += gemm(c, m, n, k);
    /* under LoRA the frozen weights take no gradient: the adapters' own products are timed
     * by their bytes (paro_compute_lora_bytes) */
    double weight_gradient = c->lora_targets != 0 ? 0 : c->trainable_share;
    *backward += gemm(c, m, k, n) + weight_gradient * gemm(c, k, n, m);
}

/* A fused attention kernel's rate / peak. FlashAttention-2 is "around 2x" FlashAttention-1
 * on the A100 (Dao 2023, abstract); on Hopper, where FlashAttention-2 itself runs on
 * Ampere's instructions, the first generation has its own calibrated rate
 * (flash1_attention_efficiency, docs/compute.md). cuDNN's kernel has its own measured
 * rate, where known. */
static double fused_attention_efficiency(const ParoComputeSetup *c)
{
    switch (c->attention) {
    case PARO_ATTENTION_CUDNN:
        return c->cudnn_attention_efficiency > 0 ? c->cudnn_attention_efficiency
                                                 : c->attention_efficiency;
    case PARO_ATTENTION_FLASH1:
        return c->flash1_attention_efficiency > 0 ? c->flash1_attention_efficiency
                                                  : 0.5 * c->attention_efficiency;
    default:
        return c->attention_efficiency;
    }
}

/* The attention core (QK^T and AV) of one layer on one TP rank: forward and backward. */
static void attention_core(const ParoModel *m, const ParoComputeSetup *c, double *forward,
                           double *backward)
{
    double heads = (double)m->heads / (double)c->tp;
    /* with context parallelism a rank's s/cp queries meet all s keys, its causal chunks
     * balanced (2 cp of them, the first and the last to each rank): the products per rank
     * are 1/cp of the whole, in tiles of its queries */
    double s = (double)c->seq, d = (double)m->head_dim, cp = (double)MAX(c->cp, 1);
    double queries = s / cp;
    gboolean fused = c->attention != PARO_ATTENTION_EAGER;
    /* latent attention: queries and keys of qk, values of dv a head (decision 78) */
    gboolean mla = paro_model_is_mla(m);
    double qk = mla ? (double)(m->qk_nope_head_dim + m->qk_rope_head_dim) : d;
    double dv = mla ? (double)m->v_head_dim : d;
    if (!fused && c->flat_flops == 0) {
        /* Batched products over b a/t heads; with a head of d < (GEMM rate / HBM bandwidth)
         * they are bound by the s x s scores they write or read. Forward: S = Q K^T,
         * O = P V; backward: dP = dO V^T, dV = P^T dO, dQ = dS K, dK = dS^T Q. */
        double n = (double)c->batch * heads;
        double writes_scores = paro_compute_bmm_s(c, n, queries, s, d);
        double reads_scores = paro_compute_bmm_s(c, n, queries, d, s);
        *forward = writes_scores + reads_scores;
        *backward = writes_scores + 3.0 * reads_scores;
        if (mla) {
            *forward =
                paro_compute_bmm_s(c, n, queries, s, qk) + paro_compute_bmm_s(c, n, queries, dv, s);
            *backward = paro_compute_bmm_s(c, n, queries, s, dv) +
                        paro_compute_bmm_s(c, n, queries, dv, s) +
                        2.0 * paro_compute_bmm_s(c, n, queries, qk, s);
        }
        return;
    }
    double flops = mla ? 2.0 * (double)c->batch * queries * s * heads * (qk + dv)
                       : 4.0 * (double)c->batch * queries * s * heads * d;
    double rate = paro_compute_matmul_rate(c);
    if (fused && c->flat_flops == 0 && c->attention_efficiency > 0) {
        rate = c->peak_flops * fused_attention_efficiency(c);
        /* A causal FlashAttention kernel skips the tiles above the diagonal: half the
         * products (FlashAttention-2's benchmarks count causal FLOPs so, and its rates are
         * quoted on that count). The eager path computes the whole s x s score matrix and
         * masks it afterwards. */
        flops /= 2.0;
        /* One query tile of 128 rows per SM at a time, in waves; a causal tile visits
         * (blocks + 1) / 2 key blocks on average, each tile paying a fixed cost. */
        double blocks = ceil(s / PARO_GEMM_TILE);
        double tiles = (double)c->batch * heads * ceil(queries / PARO_GEMM_TILE);
        double visits = (blocks + 1.0) / 2.0;
        if (c->sms > 0)
            rate *= tiles / (ceil(tiles / (double)c->sms) * (double)c->sms);
        double per_tile = visits / (visits + PARO_ATTENTION_TILE_OVERHEAD);
        /* FlashAttention-2 on Hopper runs faster on long sequences than the tile model
         * fitted on layers of up to 8k tokens gives: the larger of that and a second tile
         * model measured on kernels of 16k-1M tokens, joining the first at 8k tokens
         * (decision 92); a long rate at or below the first's there takes no effect */
        const double join = PARO_ATTENTION_LONG_JOIN_VISITS;
        double at_join = join / (join + PARO_ATTENTION_TILE_OVERHEAD); /* the first's share */
        double ratio = c->long_attention_efficiency / (c->attention_efficiency * at_join);
        if (c->attention == PARO_ATTENTION_FLASH && ratio > 1.0) {
            double long_overhead = join * (ratio - 1.0);
            rate *= MAX(per_tile, c->long_attention_efficiency / c->attention_efficiency * visits /
                                      (visits + long_overhead));
        } else {
            rate *= per_tile;
        }
    }
    *forward = flops / rate;
    *backward = (fused ? 2.5 : 2.0) * *forward;
}

/* One kind of layer's time on one TP rank (a view of alike layers: paro_model_layer_view):
 * its products forward and backward (and those per-op recomputation redoes), its attention
 * core, its elementwise kernels (eager attention's over the scores apart, which selective
 * recomputation redoes). */
typedef struct {
    double forward, backward, op_f, op_b, core_f, core_b, elementwise_f, elementwise_b;
    double scores_f;
} KindCost;

static void kind_cost(const ParoModel *m, const ParoComputeSetup *c, KindCost *k)
{
    *k = (KindCost){0};
    double T = (double)c->batch * (double)c->seq / (double)MAX(c->cp, 1), t = (double)c->tp;
    /* Elementwise kernels reach a share of HBM bandwidth: the GPU's, else the H100's. */
    double elementwise_Bps = paro_compute_setup_elementwise_Bps(c);
    double token_f = 0, token_b = 0;
    elementwise_bytes(m, c, &token_f, &token_b);
    /* Eager attention's kernels over the b a/t s^2 scores (score_bytes). */
    double scores_f = 0, scores_b = 0;
    if (c->attention == PARO_ATTENTION_EAGER) {
        double scores = T * (double)c->seq * (double)m->heads / t;
        score_bytes(m, c, &scores_f, &scores_b);
        scores_f *= scores / elementwise_Bps;
        scores_b *= scores / elementwise_Bps;
    }
    k->scores_f = scores_f;
    k->elementwise_f = T * token_f / elementwise_Bps + scores_f;
    k->elementwise_b = T * token_b / elementwise_Bps + scores_b;
    if (c->lora_targets != 0) { /* the adapters' kernels (decision 52) */
        double adapter_f, adapter_b, flat_Bps = paro_compute_setup_flat_pass_Bps(c);
        paro_compute_lora_bytes(m, c, &adapter_f, &adapter_b);
        k->elementwise_f += T * adapter_f / flat_Bps;
        k->elementwise_b += T * adapter_b / flat_Bps;
    }
    double h = (double)m->hidden, f = (double)m->ffn;
    double q = (double)m->heads * (double)m->head_dim;
    double kv = (double)m->kv_heads * (double)m->head_dim;
    double up = (m->mlp == PARO_MLP_GATED ? 2.0 : 1.0) * f;
    gboolean fp8 = c->fp8; /* the layer's linears; the router and the head stay 16-bit */
    double *forward = &k->forward, *backward = &k->backward;
    if (paro_model_is_mla(m)) {
        /* Latent attention (decision 78): the down projections whole on every TP rank, the
         * up projections column-parallel and the output row-parallel (DeepSeek's reference
         * code, deepseek-ai/DeepSeek-V3 inference/model.py, class MLA: wq_a and wkv_a are
         * plain Linear, wq_b and wkv_b ColumnParallelLinear, wo RowParallelLinear) */
        double a = (double)m->heads, rq = (double)m->q_lora_rank;
        double rkv = (double)m->kv_lora_rank, rope = (double)m->qk_rope_head_dim;
        double qk = a * (double)(m->qk_nope_head_dim + m->qk_rope_head_dim);
        if (m->q_lora_rank > 0) {
            product(c, fp8, T, rq, h, forward, backward);
            product(c, fp8, T, qk / t, rq, forward, backward);
        } else {
            product(c, fp8, T, qk / t, h, forward, backward);
        }
        product(c, fp8, T, rkv + rope, h, forward, backward);
        product(c, fp8, T, a * (double)(m->qk_nope_head_dim + m->v_head_dim) / t, rkv, forward,
                backward);
        product(c, fp8, T, h, a * (double)m->v_head_dim / t, forward, backward);
    } else {
        product(c, fp8, T, (q + 2.0 * kv) / t, h, forward, backward);
        product(c, fp8, T, h, q / t, forward, backward);
    }
    if (m->experts > 0) {
        /* the router, then each expert over its share of the tokens' k routes, taken as
         * even (HF Mixtral's loop: one product per expert). Under expert parallelism a GPU
         * runs its e/ep experts on the routes its ep ranks send them, cut by etp (its rows
         * gathered from the tp/etp ranks that share them): bigger products, the same FLOPs,
         * stretched by the hottest rank's load (decision 72) */
        double e = (double)m->experts, ep = (double)MAX(c->ep, 1);
        double et = c->etp > 0 ? (double)c->etp : t;
        double routed = T * paro_model_routes(m) / e * ep * et / t;
        product(c, FALSE, T, e, h, forward, backward);
        double expert_f = 0, expert_b = 0;
        product(c, fp8, routed, up / et, h, &expert_f, &expert_b);
        product(c, fp8, routed, h, f / et, &expert_f, &expert_b);
        double load = c->ep > 1 ? MAX(1.0, c->expert_load) : 1.0;
        *forward += e / ep * expert_f * load;
        *backward += e / ep * expert_b * load;
        if (m->shared_experts > 0) {
            /* the shared experts over every token, as one MLP of their summed width (HF's
             * DeepSeek and Qwen2-MoE build them so), and a gate's h x 1 product */
            double width =
                (double)m->shared_experts * (double)(m->shared_ffn > 0 ? m->shared_ffn : m->ffn);
            double shared_up = (m->mlp == PARO_MLP_GATED ? 2.0 : 1.0) * width;
            product(c, fp8, T, shared_up / t, h, forward, backward);
            product(c, fp8, T, h, width / t, forward, backward);
            if (m->shared_expert_gate)
                product(c, FALSE, T, 1.0, h, forward, backward);
        }
    } else {
        product(c, fp8, T, up / t, h, forward, backward);
        product(c, fp8, T, h, f / t, forward, backward);
    }
    if (c->recompute == PARO_RECOMPUTE_OP) { /* wk, wo, the MLP's sixth (decision 49) */
        if (paro_model_is_mla(m))            /* the key and value down projection in wk's place */
            product(c, fp8, T, (double)(m->kv_lora_rank + m->qk_rope_head_dim), h, &k->op_f,
                    &k->op_b);
        else
            product(c, fp8, T, kv / t, h, &k->op_f, &k->op_b);
        product(c, fp8, T, h,
                (paro_model_is_mla(m) ? (double)m->heads * (double)m->v_head_dim : q) / t, &k->op_f,
                &k->op_b);
        product(c, fp8, T, f / t, h, &k->op_f, &k->op_b);
    }
    attention_core(m, c, &k->core_f, &k->core_b);
}

GArray *paro_compute_layers(const ParoModel *m, const ParoComputeSetup *c)
{
    gint64 L = m->has_shape ? m->layers : 1;
    GArray *layers = g_array_sized_new(FALSE, TRUE, sizeof(ParoLayerCost), (guint)L);
    g_array_set_size(layers, (guint)L);
    double T = (double)c->batch * (double)c->seq / (double)MAX(c->cp, 1), t = (double)c->tp;
    double total = m->has_shape ? paro_model_shape_params(m) : 1;
    double elementwise_Bps = paro_compute_setup_elementwise_Bps(c);
    /* the two kinds of layer (dense, with experts; decision 77) and the multi-token
     * prediction modules' blocks, which the last layer carries with its head */
    KindCost kinds[2] = {{0}}, mtp = {0};
    if (m->has_shape) {
        for (int e = 0; e < 2; e++) {
            ParoModel v = paro_model_layer_view(m, e == 1);
            if (e == 0 || m->experts > 0)
                kind_cost(&v, c, &kinds[e]);
        }
        if (m->mtp_layers > 0) {
            ParoModel v = paro_model_layer_view(m, paro_model_layer_has_experts(m, m->layers));
            kind_cost(&v, c, &mtp);
        }
    }
    for (gint64 l = 0; l < L; l++) {
        ParoLayerCost *lc = &g_array_index(layers, ParoLayerCost, l);
        const KindCost *kind = &kinds[m->has_shape && paro_model_layer_has_experts(m, l) ? 1 : 0];
        double forward = 0, backward = 0, head_f = 0, head_b = 0, core_f = 0, core_b = 0;
        double loss = 0, op_f = 0, op_b = 0; /* op_f: the products per-op recomputation redoes */
        double elementwise_f = kind->elementwise_f, elementwise_b = kind->elementwise_b;
        double scores_f = kind->scores_f;
        if (m->has_shape) {
            double h = (double)m->hidden, v = (double)m->vocab;
            double params = paro_model_layer_params_at(m, l);
            if (l == 0)
                params += paro_model_embedding_params(m);
            if (l == L - 1)
                params += paro_model_head_params(m);
            lc->weight_share = params / total;
            forward = kind->forward, backward = kind->backward;
            op_f = kind->op_f, op_b = kind->op_b;
            core_f = kind->core_f, core_b = kind->core_b;
            if (l == L - 1) {
                /* the output head and its loss, once for the model and once for each
                 * multi-token prediction module, which runs its block and its 2h x h
                 * projection before (DeepSeek-V3's eh_proj) */
                double heads = 1.0 + (double)m->mtp_layers, mtps = (double)m->mtp_layers;
                double one_f = 0, one_b = 0;
                product(c, FALSE, T, v / t, h, &one_f, &one_b);
                loss = T * v / t *
                       (c->fused_loss
                            ? PARO_FUSED_LOSS_BYTES_PER_LOGIT / paro_compute_setup_flat_pass_Bps(c)
                            : PARO_LOSS_BYTES_PER_LOGIT / elementwise_Bps);
                head_f = heads * one_f, head_b = heads * one_b;
                loss *= heads;
                head_f += loss / 2.0;
                head_b += loss / 2.0;
                if (m->mtp_layers > 0) {
                    double proj_f = 0, proj_b = 0;
                    product(c, FALSE, T, h, 2.0 * h, &proj_f, &proj_b);
                    forward += mtps * (mtp.forward + proj_f);
                    backward += mtps * (mtp.backward + proj_b);
                    op_f += mtps * mtp.op_f, op_b += mtps * mtp.op_b;
                    core_f += mtps * mtp.core_f, core_b += mtps * mtp.core_b;
                    elementwise_f += mtps * mtp.elementwise_f;
                    elementwise_b += mtps * mtp.elementwise_b;
                    scores_f += mtps * mtp.scores_f;
                }
            }
        } else {
            /* Only a count: the 2*N*T FLOPs at the large-GEMM rate, shape unknown. */
            lc->weight_share = 1;
            forward = 2.0 * T * paro_model_base_params(m) / t / paro_compute_matmul_rate(c);
            backward = (1.0 + c->trainable_share) * forward;
        }
        if (m->has_shape && c->flat_flops == 0 && c->power_slope > 0) {
            /* The power cap (decision 45): the layer's GEMM duty at their rate decides how
             * far the clocks drop under them. */
            double gemm = forward + backward + head_f + head_b - loss;
            double duty = gemm / (gemm + core_f + core_b + elementwise_f + elementwise_b + loss);
            double stretch = 1.0 + c->power_slope * MAX(0.0, duty - c->power_knee);
            forward *= stretch;
            backward *= stretch;
            op_f *= stretch;
            head_f = (head_f - loss / 2.0) * stretch + loss / 2.0;
            head_b = (head_b - loss / 2.0) * stretch + loss / 2.0;
        }
        /* torchtitan's selective layer checkpointing wraps every k-th block, counted from 1 */
        lc->recomputed = (c->recompute == PARO_RECOMPUTE_FULL &&
                          (c->recompute_every <= 1 || (l + 1) % c->recompute_every == 0)) ||
                         c->recompute == PARO_RECOMPUTE_OP;
        gboolean eager = c->attention == PARO_ATTENTION_EAGER;
        double again =
            c->recompute == PARO_RECOMPUTE_OP
                ? op_f + elementwise_f + (eager ? core_f : 0) /* eager: no SDPA output kept */
            : lc->recomputed                                    ? forward + core_f + elementwise_f
            : c->recompute == PARO_RECOMPUTE_SELECTIVE && eager ? core_f + scores_f
                                                                : 0;
        lc->gemm_s = forward + backward + head_f + head_b - loss;
        lc->gemm_forward_s = forward + head_f - loss / 2.0;
        lc->attention_s = core_f + core_b;
        lc->attention_forward_s = core_f;
        lc->memory_s = elementwise_f + elementwise_b + loss;
        lc->forward_s = forward + head_f + core_f + elementwise_f;
        lc->backward_s = backward + head_b + core_b + elementwise_b + again;
    }
    return layers;
}
