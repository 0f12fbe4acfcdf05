/* SPDX-License-Identifier: MIT */
/* Transformer arithmetic.
 *
 * Parameters (h hidden, L layers, a heads of d = head_dim, k kv heads, f MLP width, V vocab):
 *   attention  q: h*a*d, k and v: 2*h*k*d, o: a*d*h       (+ a*d + 2*k*d + h with biases)
 *   MLP        gated: 3*h*f (gate, up, down), plain: 2*h*f (+ 2f+h or f+h with biases)
 *   norms      two per layer: h each (RMSNorm) or 2h (LayerNorm, weight and bias)
 *   model      V*h embeddings + P*h learned positions + L*layer + final norm + V*h head
 *              unless the head is tied to the embeddings.
 *   experts    a mixture of experts (Mixtral's) holds E MLPs a layer and a router, h*E;
 *              a token runs through k of them (paro_model_active_params)
 * Checked against published counts: LLaMA-7B 6,738,415,616; GPT-NeoX-20B 20,554,567,680;
 * Mixtral 8x7B 46,702,792,704 (12,879,925,248 active).
 *
 * FLOPs of a micro-batch of b sequences of s tokens (T = b*s), counting a multiply-add as 2:
 *   forward   2*T*(L*W + V*h) + L*4*b*s^2*a*d     W = weight parameters of a layer (of
 *             its k active experts and router for a mixture of experts);
 *             the second term is QK^T and AV (Megatron's convention, no causal halving).
 *   backward  input gradients cost as much as the forward; weight gradients cost the
 *             matmul part of the forward times the trainable share Psi'/Psi, so full
 *             training gives the familiar 2x forward and frozen weights about 1x.
 *   recompute full: one more forward of the layers (not of the output head, as Megatron
 *             does); selective: one more attention-score part.
 *
 * Activations kept per layer (bytes, 16-bit, no tensor parallelism), Korthikanti et al.
 * 2022, "Reducing Activation Recomputation in Large Transformer Models", eq. (1):
 *   s*b*h*(34 + 5*a*s/h), where 34 = 11 (attention) + 4 (two norms) + 19 (MLP with f = 4h:
 *   2 input + 8 fc1 output + 8 fc2 input + 1 dropout mask). We keep every term but write the
 *   MLP with its real width: 2*s*b*h + 1*s*b*h + c*s*b*f, c = 4 for a plain MLP (fc1 output
 *   and fc2 input, 2 bytes each) and 8 for a gated one (gate, up, silu(gate), product), so
 *   f = 4h, plain reproduces 34 exactly. Selective recomputation drops the 5*a*s^2*b
 *   attention term, and so does FlashAttention (Dao et al. 2022: the scores stay in SRAM
 *   and are recomputed in the backward; only the softmax statistics, 4*a*s*b bytes in fp32,
 *   are kept, under 0.1% at h >= 2048 and left out); full recomputation keeps only the
 *   layer input, 2*s*b*h.
 * Their attention keeps its input (2), Q and K (4) and V (2) and the output product's
 * input (2): with grouped-query attention K and V are kv = kv_heads*head_dim wide and Q and
 * the output q = heads*head_dim, so the attention's 10*s*b*h is 2*h + 4*q + 4*kv
 * (Llama-2/3-70B: 8 key/value heads of 64, K and V an eighth of Korthikanti's count).
 * Their count is Megatron's with dropout. What dropout and the softmax's kernels keep
 * (decision 29 of docs/decisions.md; autograd keeps what each backward reads):
 *   hidden dropout: the two one-byte masks, 2*s*b*h, only when hidden_dropout > 0;
 *   eager scores, per score: Megatron's fused softmax keeps its 16-bit output (2), read
 *   again by the P V product; with attention dropout its mask (1) and output (2) too, 5
 *   (Korthikanti's). PyTorch's separate kernels keep the fp32 softmax output (4) and the
 *   16-bit copy P V reads (2), 6; with dropout the copy is read by the dropout, which keeps
 *   its mask (1), and P V keeps the dropout's output (2), 7.
 * A mixture of experts, as HuggingFace's Mixtral loop runs it (decision 31): for each of a
 *   token's k routes, the expert's copy of its input (2 h, the copy autograd keeps for the
 *   expert's first product) and its output (2 h, kept for the product by the routing
 *   weight), and the MLP's inner tensors (c f); the router's fp32 softmax output, 4 bytes
 *   per expert; in place of the dense MLP's input (2 h) and inner tensors. */
#include "model/model.h"

const char *const paro_recompute_names[] = {"none", "selective", "full", "op", NULL};
const char *const paro_attention_names[] = {"flash", "eager", "flash1", "cudnn", NULL};

void paro_model_free(ParoModel *model)
{
    if (model == NULL)
        return;
    g_free(model->name);
    g_free(model->source_path);
    g_free(model);
}

static double norm_params(const ParoModel *m)
{
    return m->norm == PARO_NORM_LAYERNORM ? 2.0 * (double)m->hidden : (double)m->hidden;
}

/* MLPs of a layer: its experts (1 if dense), and those a token runs through. */
static double experts_held(const ParoModel *m)
{
    return m->experts > 0 ? (double)m->experts : 1.0;
}

double paro_model_routes(const ParoModel *m)
{
    return m->experts > 0 ? (double)m->experts_per_token : 1.0;
}

/* Weight matrices of one layer, without biases or norms, with @mlps of its MLPs: what the
 * matmuls multiply by. A mixture of experts adds its router, h x experts. */
static double layer_weights(const ParoModel *m, double mlps)
{
    double h = (double)m->hidden, f = (double)m->ffn;
    /* in double: heads x head_dim may overflow 64 bits for a hostile file */
    double q_out = (double)m->heads * (double)m->head_dim;
    double kv_out = (double)m->kv_heads * (double)m->head_dim;
    double attention = h * q_out + 2.0 * h * kv_out + q_out * h;
    double mlp = (m->mlp == PARO_MLP_GATED ? 3.0 : 2.0) * h * f;
    double router = h * (double)m->experts;
    return attention + mlps * mlp + router;
}

static double layer_weight_params(const ParoModel *m)
{
    return layer_weights(m, experts_held(m));
}

double paro_model_layer_params(const ParoModel *m)
{
    if (!m->has_shape)
        return 0;
    double h = (double)m->hidden, f = (double)m->ffn;
    double q_out = (double)m->heads * (double)m->head_dim;
    double kv_out = (double)m->kv_heads * (double)m->head_dim;
    double params = layer_weight_params(m) + 2.0 * norm_params(m);
    if (m->attn_bias)
        params += q_out + 2.0 * kv_out + h;
    if (m->mlp_bias)
        params += experts_held(m) * ((m->mlp == PARO_MLP_GATED ? 2.0 * f : f) + h);
    return params;
}

/* One routed expert's MLP: its projections and their biases. */
static double expert_mlp_params(const ParoModel *m)
{
    double h = (double)m->hidden, f = (double)m->ffn;
    double weights = (m->mlp == PARO_MLP_GATED ? 3.0 : 2.0) * h * f;
    double biases = m->mlp_bias ? (m->mlp == PARO_MLP_GATED ? 2.0 * f : f) + h : 0;
    return weights + biases;
}

gboolean paro_model_layer_is_moe(const ParoModel *m, gint64 layer)
{
    return m->experts > 0 && layer >= 0 && layer < m->layers;
}

double paro_model_expert_params(const ParoModel *m)
{
    if (!m->has_shape || m->experts == 0)
        return 0;
    return (double)m->layers * (double)m->experts * expert_mlp_params(m);
}

double paro_model_shape_params(const ParoModel *m)
{
    if (!m->has_shape)
        return 0;
    double h = (double)m->hidden, v = (double)m->vocab;
    double embeddings = v * h + (double)m->position_embeddings * h;
    double head = m->tied_embeddings ? 0 : v * h;
    return embeddings + (double)m->layers * paro_model_layer_params(m) + norm_params(m) + head;
}

double paro_model_base_params(const ParoModel *m)
{
    return m->params_given > 0 ? m->params_given : paro_model_shape_params(m);
}

double paro_model_active_params(const ParoModel *m)
{
    if (!m->has_shape)
        return paro_model_base_params(m);
    double idle =
        (experts_held(m) - paro_model_routes(m)) *
        (layer_weights(m, 1.0) - layer_weights(m, 0.0) +
         (m->mlp_bias ? (m->mlp == PARO_MLP_GATED ? 2.0 : 1.0) * (double)m->ffn + (double)m->hidden
                      : 0));
    return paro_model_shape_params(m) - (double)m->layers * idle;
}

double paro_model_lora_params(const ParoModel *m, gint64 rank, guint targets)
{
    if (!m->has_shape)
        return 0;
    double h = (double)m->hidden, f = (double)m->ffn, r = (double)rank;
    double q_out = (double)m->heads * (double)m->head_dim;
    double kv_out = (double)m->kv_heads * (double)m->head_dim;
    double per_layer = 0;
    if (targets & PARO_LORA_Q)
        per_layer += r * (h + q_out);
    if (targets & PARO_LORA_K)
        per_layer += r * (h + kv_out);
    if (targets & PARO_LORA_V)
        per_layer += r * (h + kv_out);
    if (targets & PARO_LORA_O)
        per_layer += r * (q_out + h);
    /* on every expert's projections, as PEFT adapts each expert's module */
    if (targets & PARO_LORA_GATE)
        per_layer += experts_held(m) * r * (h + f);
    if (targets & PARO_LORA_UP)
        per_layer += experts_held(m) * r * (h + f);
    if (targets & PARO_LORA_DOWN)
        per_layer += experts_held(m) * r * (f + h);
    return per_layer * (double)m->layers;
}

double paro_model_params(const ParoModel *m, const ParoTrainable *t, double *out_trainable)
{
    double base = paro_model_base_params(m);
    switch (t->kind) {
    case PARO_TRAINABLE_FRACTION:
        *out_trainable = base * t->fraction;
        return base;
    case PARO_TRAINABLE_COUNT:
        *out_trainable = t->count;
        return base;
    case PARO_TRAINABLE_LORA: {
        double lora = paro_model_lora_params(m, t->lora_rank, t->lora_targets);
        *out_trainable = lora;
        return base + lora;
    }
    }
    g_assert_not_reached();
}

/* Matmul part and attention-score part of one forward pass. */
static void forward_parts(const ParoModel *m, gint64 batch, gint64 seq, double *out_matmul,
                          double *out_attention)
{
    double tokens = (double)batch * (double)seq;
    if (!m->has_shape) {
        /* Only a count: the 2*N*T rule (Kaplan et al. 2020), no attention term. */
        *out_matmul = 2.0 * tokens * paro_model_base_params(m);
        *out_attention = 0;
        return;
    }
    double head = (double)m->vocab * (double)m->hidden;
    *out_matmul =
        2.0 * tokens * ((double)m->layers * layer_weights(m, paro_model_routes(m)) + head);
    *out_attention = (double)m->layers * 4.0 * (double)batch * (double)seq * (double)seq *
                     (double)m->heads * (double)m->head_dim;
}

double paro_model_forward_flops(const ParoModel *m, gint64 batch, gint64 seq)
{
    double matmul, attention;
    forward_parts(m, batch, seq, &matmul, &attention);
    return matmul + attention;
}

double paro_model_op_recomputed_weights(const ParoModel *m)
{
    /* torchtitan's order: wq, wk, wv, wo, then w1, w3, w2 (gated) or up, down; the even
     * ones run again: wk, wo and the MLP's sixth product, f x h either way */
    double h = (double)m->hidden, q = (double)(m->heads * m->head_dim);
    double kv = (double)(m->kv_heads * m->head_dim);
    return h * kv + q * h + h * (double)m->ffn;
}

double paro_model_step_flops(const ParoModel *m, gint64 batch, gint64 seq, double trainable_share,
                             ParoRecompute recompute)
{
    double matmul, attention;
    forward_parts(m, batch, seq, &matmul, &attention);
    double forward = matmul + attention;
    double backward = forward + trainable_share * matmul + attention;
    /* Megatron recomputes the transformer layers, not the output head (its FLOP count,
     * Narayanan et al. 2021 eq. 3, has 3 passes of the logits and 4 of the layers). */
    double head =
        m->has_shape ? 2.0 * (double)batch * (double)seq * (double)m->vocab * (double)m->hidden : 0;
    double again = recompute == PARO_RECOMPUTE_FULL        ? forward - head
                   : recompute == PARO_RECOMPUTE_SELECTIVE ? attention
                   : recompute == PARO_RECOMPUTE_OP && m->has_shape
                       ? 2.0 * (double)batch * (double)seq * (double)m->layers *
                             paro_model_op_recomputed_weights(m)
                       : 0;
    return forward + backward + again;
}

/* Bytes kept per eager attention score (the header's count). */
static double kept_per_score(const ParoModel *m, gboolean fused_softmax)
{
    double dropout = m->attention_dropout > 0 ? (fused_softmax ? 3.0 : 1.0) : 0;
    return (fused_softmax ? 2.0 : 6.0) + dropout;
}

/* Per token, the bytes per-op selective recomputation keeps of a layer (decision 49): its
 * 16-bit input (@replicated on TP ranks without sequence parallelism), the outputs of the
 * products it keeps and of the fused attention, q, v, the attention's output with its fp32
 * log-sum-exp per head, the MLP's first product (@split over TP ranks), and for a gated
 * MLP the down product's output, whole on every rank before its reduction (@whole). */
static void op_kept(const ParoModel *m, ParoAttention attention, double *replicated, double *split,
                    double *whole)
{
    double h = (double)m->hidden, q = (double)(m->heads * m->head_dim);
    double kv = (double)(m->kv_heads * m->head_dim), a = (double)m->heads;
    *replicated = 2.0 * h;
    *split = 2.0 * q + 2.0 * kv + 2.0 * (double)m->ffn +
             (attention != PARO_ATTENTION_EAGER ? 2.0 * q + 4.0 * a : 0);
    *whole = m->mlp == PARO_MLP_GATED ? 2.0 * h : 0;
}

double paro_model_activation_bytes(const ParoModel *m, gint64 batch, gint64 seq,
                                   ParoRecompute recompute, ParoAttention attention,
                                   gboolean fused_softmax)
{
    if (!m->has_shape)
        return 0;
    double s = (double)seq, b = (double)batch, h = (double)m->hidden, f = (double)m->ffn;
    double a = (double)m->heads;
    if (recompute == PARO_RECOMPUTE_FULL)
        return 2.0 * s * b * h;
    if (recompute == PARO_RECOMPUTE_OP) {
        double replicated, split, whole;
        op_kept(m, attention, &replicated, &split, &whole);
        return s * b * (replicated + split + whole);
    }
    double mlp_factor = m->mlp == PARO_MLP_GATED ? 8.0 : 4.0;
    double masks = m->hidden_dropout > 0 ? 2.0 * s * b * h : 0;
    /* attention 2 h + 4 q + 4 kv (10 h without grouped queries), norms 4 h (s*b each),
     * then the MLP: its input (2 s*b*h) and inner
     * tensors; a mixture of experts (the header) keeps each expert's copy of its tokens'
     * input and its output for the routing weight's product, k times 2 + 2, the inner
     * tensors k times, and the router's fp32 probabilities, 4 bytes per token and expert */
    double k = paro_model_routes(m);
    double mlp = m->experts > 0 ? 4.0 * k * s * b * h + k * mlp_factor * s * b * f +
                                      4.0 * s * b * (double)m->experts
                                : 2.0 * s * b * h + mlp_factor * s * b * f;
    double q = (double)(m->heads * m->head_dim), kv = (double)(m->kv_heads * m->head_dim);
    double linear = (6.0 * h + 4.0 * q + 4.0 * kv) * s * b + masks + mlp;
    double quadratic = recompute == PARO_RECOMPUTE_SELECTIVE || attention != PARO_ATTENTION_EAGER
                           ? 0
                           : kept_per_score(m, fused_softmax) * a * s * s * b;
    return linear + quadratic;
}

/* Bytes of a layer's activations on one rank of @t: the @replicated ones (the column-parallel
 * products' inputs) are whole on every rank without sequence parallelism, the @split ones
 * divided over the ranks (Korthikanti et al.). */
static double per_tp_rank(double replicated, double split, double t, gboolean sequence_parallel)
{
    return sequence_parallel ? (replicated + split) / t : replicated + split / t;
}

double paro_model_fp8_activation_saving(const ParoModel *m, gint64 batch, gint64 seq,
                                        ParoRecompute recompute, gint64 tp,
                                        gboolean sequence_parallel)
{
    /* full and per-op recomputation keep no product's input to save on */
    if (!m->has_shape || recompute == PARO_RECOMPUTE_FULL || recompute == PARO_RECOMPUTE_OP)
        return 0;
    double sb = (double)seq * (double)batch, h = (double)m->hidden, t = (double)tp;
    double k = paro_model_routes(m), inputs = m->experts > 0 ? k : 1.0;
    double q = (double)(m->heads * m->head_dim);
    double replicated = sb * (h + inputs * h), split = sb * (q + k * (double)m->ffn);
    return per_tp_rank(replicated, split, t, sequence_parallel);
}

double paro_model_frozen_input_saving(const ParoModel *m, gint64 batch, gint64 seq,
                                      ParoRecompute recompute, ParoAttention attention,
                                      guint targets, gboolean fp8, gint64 tp,
                                      gboolean sequence_parallel)
{
    if (!m->has_shape || recompute == PARO_RECOMPUTE_FULL || recompute == PARO_RECOMPUTE_OP)
        return 0;
    double sb = (double)seq * (double)batch, h = (double)m->hidden, t = (double)tp;
    double k = paro_model_routes(m), inputs = m->experts > 0 ? k : 1.0;
    double q = (double)(m->heads * m->head_dim), bytes = fp8 ? 1.0 : 2.0;
    double replicated = 0, split = 0; /* the column-parallel inputs, the others */
    if (!(targets & (PARO_LORA_Q | PARO_LORA_K | PARO_LORA_V)))
        replicated += h;
    if (!(targets & (PARO_LORA_GATE | PARO_LORA_UP)))
        replicated += inputs * h;
    if (attention == PARO_ATTENTION_EAGER && !(targets & PARO_LORA_O))
        split += q;
    if (!(targets & PARO_LORA_DOWN))
        split += k * (double)m->ffn;
    replicated *= bytes * sb, split *= bytes * sb;
    return per_tp_rank(replicated, split, t, sequence_parallel);
}

guint paro_model_lora_adapters(const ParoModel *m, guint targets, gboolean packed, gint64 tp,
                               gboolean sequence_parallel,
                               ParoLoraAdapter out[PARO_LORA_ADAPTERS_MAX])
{
    if (!m->has_shape)
        return 0;
    double h = (double)m->hidden, t = (double)tp, f = (double)m->ffn, k = paro_model_routes(m);
    double q = (double)(m->heads * m->head_dim), kv = (double)(m->kv_heads * m->head_dim);
    double row_out = sequence_parallel ? h / t : h; /* a row-parallel product's output */
    guint n = 0;
    if (packed && (targets & (PARO_LORA_Q | PARO_LORA_K | PARO_LORA_V))) {
        out[n++] = (ParoLoraAdapter){h, (q + 2.0 * kv) / t, PARO_LORA_INPUT_QKV};
    } else {
        if (targets & PARO_LORA_Q)
            out[n++] = (ParoLoraAdapter){h, q / t, PARO_LORA_INPUT_QKV};
        if (targets & PARO_LORA_K)
            out[n++] = (ParoLoraAdapter){h, kv / t, PARO_LORA_INPUT_QKV};
        if (targets & PARO_LORA_V)
            out[n++] = (ParoLoraAdapter){h, kv / t, PARO_LORA_INPUT_QKV};
    }
    if (targets & PARO_LORA_O)
        out[n++] = (ParoLoraAdapter){q / t, row_out, PARO_LORA_INPUT_O};
    if (packed && (targets & (PARO_LORA_GATE | PARO_LORA_UP))) {
        double up = m->mlp == PARO_MLP_GATED ? 2.0 * f : f;
        out[n++] = (ParoLoraAdapter){k * h, k * up / t, PARO_LORA_INPUT_MLP};
    } else {
        if (targets & PARO_LORA_GATE)
            out[n++] = (ParoLoraAdapter){k * h, k * f / t, PARO_LORA_INPUT_MLP};
        if (targets & PARO_LORA_UP)
            out[n++] = (ParoLoraAdapter){k * h, k * f / t, PARO_LORA_INPUT_MLP};
    }
    if (targets & PARO_LORA_DOWN)
        out[n++] = (ParoLoraAdapter){k * f / t, k * row_out, PARO_LORA_INPUT_DOWN};
    return n;
}

double paro_model_lora_adapter_memory(const ParoModel *m, gint64 batch, gint64 seq,
                                      ParoRecompute recompute, ParoAttention attention,
                                      guint targets, double dropout, gboolean packed, gboolean fp8,
                                      gboolean fp8_attention, gint64 tp, gboolean sequence_parallel)
{
    if (!m->has_shape || recompute == PARO_RECOMPUTE_FULL || recompute == PARO_RECOMPUTE_OP)
        return 0;
    ParoLoraAdapter a[PARO_LORA_ADAPTERS_MAX];
    guint n = paro_model_lora_adapters(m, targets, packed, tp, sequence_parallel, a);
    double need = 0; /* bytes a token the adapters keep */
    gboolean counted[PARO_LORA_INPUT_DOWN + 1] = {FALSE};
    for (guint i = 0; i < n; i++) {
        if (dropout > 0) {
            need += 3.0 * a[i].in;
        } else if (!counted[a[i].input]) { /* the adapters of one input share it */
            counted[a[i].input] = TRUE;
            /* the fused kernels keep their 16-bit output, fp8 attention an fp8 one */
            gboolean kept_by_attention = a[i].input == PARO_LORA_INPUT_O &&
                                         attention != PARO_ATTENTION_EAGER && !fp8_attention;
            need += kept_by_attention ? 0 : 2.0 * a[i].in;
        }
    }
    /* what decision 41 left kept for the adapted inputs: the frozen products' inputs */
    double left = paro_model_frozen_input_saving(m, batch, seq, recompute, attention, 0, fp8, tp,
                                                 sequence_parallel) -
                  paro_model_frozen_input_saving(m, batch, seq, recompute, attention, targets, fp8,
                                                 tp, sequence_parallel);
    return need * (double)seq * (double)batch - left;
}

double paro_model_fp8_attention_saving(const ParoModel *m, gint64 batch, gint64 seq,
                                       ParoRecompute recompute, gint64 tp)
{
    if (!m->has_shape || recompute == PARO_RECOMPUTE_FULL || recompute == PARO_RECOMPUTE_OP)
        return 0;
    double q = (double)(m->heads * m->head_dim), kv = (double)(m->kv_heads * m->head_dim);
    return (2.0 * q + 2.0 * kv) / (double)tp * (double)seq * (double)batch;
}

double paro_model_fused_swiglu_saving(const ParoModel *m, gint64 batch, gint64 seq,
                                      ParoRecompute recompute, gint64 tp,
                                      gboolean sequence_parallel)
{
    if (!m->has_shape || m->mlp != PARO_MLP_GATED || recompute == PARO_RECOMPUTE_FULL ||
        recompute == PARO_RECOMPUTE_OP)
        return 0;
    double split = 2.0 * paro_model_routes(m) * (double)m->ffn * (double)seq * (double)batch;
    return per_tp_rank(0, split, (double)tp, sequence_parallel);
}

double paro_model_activation_bytes_tp(const ParoModel *m, gint64 batch, gint64 seq,
                                      ParoRecompute recompute, ParoAttention attention,
                                      gboolean fused_softmax, gint64 tp, gboolean sequence_parallel)
{
    if (!m->has_shape)
        return 0;
    double s = (double)seq, b = (double)batch, h = (double)m->hidden, t = (double)tp;
    if (recompute == PARO_RECOMPUTE_OP) {
        double replicated, split, unsplit;
        op_kept(m, attention, &replicated, &split, &unsplit);
        return s * b * (per_tp_rank(replicated, split, t, sequence_parallel) + unsplit);
    }
    double whole = paro_model_activation_bytes(m, batch, seq, recompute, attention, fused_softmax);
    if (sequence_parallel)
        return whole / t;
    if (recompute == PARO_RECOMPUTE_FULL)
        return whole;
    /* Without sequence parallelism the norms' inputs (4*s*b*h), the column-parallel
     * products' inputs (4*s*b*h) and the hidden dropout masks (2*s*b*h) are whole on every
     * TP rank: Korthikanti's 10*s*b*h. */
    double replicated = (m->hidden_dropout > 0 ? 10.0 : 8.0) * s * b * h;
    return replicated + (whole - replicated) / t;
}
