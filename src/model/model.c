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

gboolean paro_model_is_mla(const ParoModel *m)
{
    return m->kv_lora_rank > 0;
}

gboolean paro_model_layer_has_experts(const ParoModel *m, gint64 l)
{
    if (m->experts == 0 || l < m->dense_layers)
        return FALSE;
    return m->moe_every <= 1 || (l + 1) % m->moe_every == 0;
}

/* Expert layers among the L layers of the main model. */
static gint64 main_expert_layers(const ParoModel *m)
{
    if (m->experts == 0)
        return 0;
    gint64 n = 0;
    for (gint64 l = 0; l < m->layers; l++)
        n += paro_model_layer_has_experts(m, l) ? 1 : 0;
    return n;
}

gint64 paro_model_expert_layers(const ParoModel *m)
{
    gint64 n = main_expert_layers(m);
    for (gint64 j = 0; j < m->mtp_layers; j++)
        n += paro_model_layer_has_experts(m, m->layers + j) ? 1 : 0;
    return n;
}

gint64 paro_model_expert_ffn(const ParoModel *m)
{
    return m->expert_ffn > 0 ? m->expert_ffn : m->ffn;
}

ParoModel paro_model_layer_view(const ParoModel *m, gboolean experts)
{
    ParoModel v = *m;
    if (!experts) {
        v.experts = v.experts_per_token = 0;
        v.shared_experts = 0;
        v.shared_expert_gate = FALSE;
    } else {
        v.ffn = paro_model_expert_ffn(m);
    }
    v.dense_layers = 0, v.moe_every = 0, v.mtp_layers = 0;
    return v;
}

/* The kinds of layer of the main model (dense, with experts) and the multi-token
 * prediction modules' blocks, each with its count; kinds with none are left out. A model
 * of alike layers has one kind, its view a copy of the model. */
typedef struct {
    ParoModel view;
    double count;
    gboolean mtp; /* a multi-token prediction module's block */
} LayerKind;

static guint layer_kinds(const ParoModel *m, LayerKind out[3])
{
    gint64 with = main_expert_layers(m);
    guint n = 0;
    if (m->layers - with > 0)
        out[n++] = (LayerKind){paro_model_layer_view(m, FALSE), (double)(m->layers - with), FALSE};
    if (with > 0)
        out[n++] = (LayerKind){paro_model_layer_view(m, TRUE), (double)with, FALSE};
    if (m->mtp_layers > 0)
        out[n++] = (LayerKind){paro_model_layer_view(m, paro_model_layer_has_experts(m, m->layers)),
                               (double)m->mtp_layers, TRUE};
    return n;
}

/* A layer's width of queries and keys (heads x their head size) and of values and the
 * attention output. */
static double attention_qk(const ParoModel *m)
{
    return paro_model_is_mla(m)
               ? (double)m->heads * (double)(m->qk_nope_head_dim + m->qk_rope_head_dim)
               : (double)m->heads * (double)m->head_dim;
}

static double attention_vo(const ParoModel *m)
{
    return paro_model_is_mla(m) ? (double)m->heads * (double)m->v_head_dim
                                : (double)m->heads * (double)m->head_dim;
}

/* The attention's weight matrices: q, k, v, o; latent attention's down and up
 * projections (model.h). */
static double attention_weights(const ParoModel *m)
{
    double h = (double)m->hidden;
    if (!paro_model_is_mla(m)) {
        /* in double: heads x head_dim may overflow 64 bits for a hostile file */
        double q_out = (double)m->heads * (double)m->head_dim;
        double kv_out = (double)m->kv_heads * (double)m->head_dim;
        return h * q_out + 2.0 * h * kv_out + q_out * h;
    }
    double a = (double)m->heads, qk = attention_qk(m), rq = (double)m->q_lora_rank;
    double rkv = (double)m->kv_lora_rank, rope = (double)m->qk_rope_head_dim;
    double q = m->q_lora_rank > 0 ? h * rq + rq * qk : h * qk;
    double kv = h * (rkv + rope) + rkv * a * (double)(m->qk_nope_head_dim + m->v_head_dim);
    return q + kv + attention_vo(m) * h;
}

/* The shared experts' MLP (one of their summed width) and its gate. */
static double shared_weights(const ParoModel *m)
{
    if (m->experts == 0 || m->shared_experts == 0)
        return 0;
    double width = (double)m->shared_experts *
                   (double)(m->shared_ffn > 0 ? m->shared_ffn : paro_model_expert_ffn(m));
    return (m->mlp == PARO_MLP_GATED ? 3.0 : 2.0) * (double)m->hidden * width +
           (m->shared_expert_gate ? (double)m->hidden : 0);
}

/* Weight matrices of one layer, without biases or norms, with @mlps of its MLPs: what the
 * matmuls multiply by. A mixture of experts adds its router, h x experts, and its shared
 * experts. */
static double layer_weights(const ParoModel *m, double mlps)
{
    double h = (double)m->hidden, f = (double)m->ffn;
    double attention = attention_weights(m);
    double mlp = (m->mlp == PARO_MLP_GATED ? 3.0 : 2.0) * h * f;
    double router = h * (double)m->experts;
    return attention + mlps * mlp + router + shared_weights(m);
}

static double layer_weight_params(const ParoModel *m)
{
    return layer_weights(m, experts_held(m));
}

/* One layer of a kind (a view: every layer alike). */
static double kind_layer_params(const ParoModel *m)
{
    double h = (double)m->hidden, f = (double)m->ffn;
    double q_out = (double)m->heads * (double)m->head_dim;
    double kv_out = (double)m->kv_heads * (double)m->head_dim;
    double params = layer_weight_params(m) + 2.0 * norm_params(m);
    gboolean gated = m->mlp == PARO_MLP_GATED;
    if (m->attn_bias)
        params += paro_model_is_mla(m)
                      ? (double)(m->q_lora_rank + m->kv_lora_rank + m->qk_rope_head_dim) + h
                      : q_out + 2.0 * kv_out + h;
    if (m->mlp_bias)
        params += experts_held(m) * ((gated ? 2.0 * f : f) + h);
    if (paro_model_is_mla(m)) /* the latents' RMSNorms */
        params += (double)(m->q_lora_rank + m->kv_lora_rank);
    if (m->qk_norm)
        params += q_out + kv_out;
    if (m->mlp_bias && shared_weights(m) > 0) {
        double width = (double)m->shared_experts *
                       (double)(m->shared_ffn > 0 ? m->shared_ffn : paro_model_expert_ffn(m));
        params += (gated ? 2.0 * width : width) + h;
    }
    return params;
}

/* A multi-token prediction module's own parameters beyond its block: its two input norms
 * and the norm before the shared head (DeepSeek-V3's enorm, hnorm, shared_head.norm), and
 * the 2h x h projection of the two (eh_proj). */
static double mtp_extra_params(const ParoModel *m)
{
    double h = (double)m->hidden;
    return 3.0 * norm_params(m) + 2.0 * h * h;
}

double paro_model_layer_params_at(const ParoModel *m, gint64 l)
{
    if (!m->has_shape)
        return 0;
    ParoModel v = paro_model_layer_view(m, paro_model_layer_has_experts(m, l));
    return kind_layer_params(&v) + (l >= m->layers ? mtp_extra_params(m) : 0);
}

double paro_model_mtp_params(const ParoModel *m)
{
    double sum = 0;
    for (gint64 j = 0; m->has_shape && j < m->mtp_layers; j++)
        sum += paro_model_layer_params_at(m, m->layers + j);
    return sum;
}

double paro_model_layer_params(const ParoModel *m)
{
    if (!m->has_shape)
        return 0;
    LayerKind kinds[3];
    guint n = layer_kinds(m, kinds);
    if (n == 1 && !kinds[0].mtp)
        return kind_layer_params(&kinds[0].view);
    double sum = 0;
    for (guint i = 0; i < n; i++)
        if (!kinds[i].mtp)
            sum += kinds[i].count * kind_layer_params(&kinds[i].view);
    return (sum + paro_model_mtp_params(m)) / (double)m->layers;
}

double paro_model_largest_layer_params(const ParoModel *m)
{
    if (!m->has_shape)
        return 0;
    LayerKind kinds[3];
    guint n = layer_kinds(m, kinds);
    double most = 0;
    for (guint i = 0; i < n; i++)
        most = MAX(most, kinds[i].mtp ? paro_model_layer_params_at(m, m->layers)
                                      : kind_layer_params(&kinds[i].view));
    return most;
}

/* One routed expert's MLP: its projections and their biases. */
static double expert_mlp_params(const ParoModel *m)
{
    double h = (double)m->hidden, f = (double)paro_model_expert_ffn(m);
    double weights = (m->mlp == PARO_MLP_GATED ? 3.0 : 2.0) * h * f;
    double biases = m->mlp_bias ? (m->mlp == PARO_MLP_GATED ? 2.0 * f : f) + h : 0;
    return weights + biases;
}

double paro_model_expert_params(const ParoModel *m)
{
    if (!m->has_shape || m->experts == 0)
        return 0;
    return (double)paro_model_expert_layers(m) * (double)m->experts * expert_mlp_params(m);
}

/* The layers' parameters, all of them: L mean layers. */
static double all_layer_params(const ParoModel *m)
{
    LayerKind kinds[3];
    guint n = layer_kinds(m, kinds);
    if (n == 1 && !kinds[0].mtp)
        return (double)m->layers * kind_layer_params(&kinds[0].view);
    double sum = 0;
    for (guint i = 0; i < n; i++)
        if (!kinds[i].mtp)
            sum += kinds[i].count * kind_layer_params(&kinds[i].view);
    return sum + paro_model_mtp_params(m);
}

double paro_model_shape_params(const ParoModel *m)
{
    if (!m->has_shape)
        return 0;
    double h = (double)m->hidden, v = (double)m->vocab;
    double embeddings = v * h + (double)m->position_embeddings * h;
    double head = m->tied_embeddings ? 0 : v * h;
    return embeddings + all_layer_params(m) + norm_params(m) + head;
}

double paro_model_embedding_params(const ParoModel *m)
{
    if (!m->has_shape)
        return 0;
    return ((double)m->vocab + (double)m->position_embeddings) * (double)m->hidden;
}

double paro_model_head_params(const ParoModel *m)
{
    if (!m->has_shape)
        return 0;
    return norm_params(m) + (m->tied_embeddings ? 0 : (double)m->vocab * (double)m->hidden) +
           paro_model_mtp_params(m);
}

double paro_model_base_params(const ParoModel *m)
{
    return m->params_given > 0 ? m->params_given : paro_model_shape_params(m);
}

/* The weights of an expert layer's experts no token of it runs through. */
static double idle_params(const ParoModel *m)
{
    return (experts_held(m) - paro_model_routes(m)) *
           (layer_weights(m, 1.0) - layer_weights(m, 0.0) +
            (m->mlp_bias
                 ? (m->mlp == PARO_MLP_GATED ? 2.0 : 1.0) * (double)m->ffn + (double)m->hidden
                 : 0));
}

double paro_model_active_params(const ParoModel *m)
{
    if (!m->has_shape)
        return paro_model_base_params(m);
    LayerKind kinds[3];
    guint n = layer_kinds(m, kinds);
    if (n == 1 && !kinds[0].mtp)
        return paro_model_shape_params(m) - (double)m->layers * idle_params(&kinds[0].view);
    double idle = 0;
    for (guint i = 0; i < n; i++)
        idle += kinds[i].count * idle_params(&kinds[i].view);
    return paro_model_shape_params(m) - idle;
}

static double kind_lora_params(const ParoModel *m, double r, guint targets)
{
    double h = (double)m->hidden, f = (double)m->ffn;
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
    return per_layer;
}

double paro_model_lora_params(const ParoModel *m, gint64 rank, guint targets)
{
    if (!m->has_shape)
        return 0;
    /* the main model's layers (adapters on a multi-token prediction module: not modelled) */
    LayerKind kinds[3];
    guint n = layer_kinds(m, kinds);
    if (n == 1 && !kinds[0].mtp)
        return kind_lora_params(&kinds[0].view, (double)rank, targets) * (double)m->layers;
    double sum = 0;
    for (guint i = 0; i < n; i++)
        if (!kinds[i].mtp)
            sum += kinds[i].count * kind_lora_params(&kinds[i].view, (double)rank, targets);
    return sum;
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

/* The attention core's forward FLOPs in @count layers: QK^T over the query's and key's
 * head size and AV over the value's (latent attention's differ). */
static double core_flops(const ParoModel *m, double count, gint64 batch, gint64 seq)
{
    if (!paro_model_is_mla(m))
        return count * 4.0 * (double)batch * (double)seq * (double)seq * (double)m->heads *
               (double)m->head_dim;
    return count * 2.0 * (double)batch * (double)seq * (double)seq *
           (attention_qk(m) + attention_vo(m));
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
    LayerKind kinds[3];
    guint n = layer_kinds(m, kinds);
    if (n == 1 && !kinds[0].mtp) {
        const ParoModel *v = &kinds[0].view;
        *out_matmul =
            2.0 * tokens * ((double)m->layers * layer_weights(v, paro_model_routes(v)) + head);
        *out_attention = core_flops(v, (double)m->layers, batch, seq);
        return;
    }
    /* each kind of layer with its own MLPs; a multi-token prediction module runs its block,
     * its projection and the shared head again */
    double weights = 0, core = 0, mtp = (double)m->mtp_layers, h = (double)m->hidden;
    for (guint i = 0; i < n; i++) {
        const ParoModel *v = &kinds[i].view;
        weights += kinds[i].count * layer_weights(v, paro_model_routes(v));
        core += core_flops(v, kinds[i].count, batch, seq);
    }
    *out_matmul = 2.0 * tokens * (weights + mtp * 2.0 * h * h + (1.0 + mtp) * head);
    *out_attention = core;
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
     * ones run again: wk, wo and the MLP's sixth product, f x h either way (latent
     * attention: its key and value down projection in wk's place, decision 78) */
    double h = (double)m->hidden, q = (double)(m->heads * m->head_dim);
    double kv = (double)(m->kv_heads * m->head_dim);
    if (paro_model_is_mla(m))
        return h * (double)(m->kv_lora_rank + m->qk_rope_head_dim) + attention_vo(m) * h +
               h * (double)m->ffn;
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
    head *= 1.0 + (double)m->mtp_layers; /* each multi-token prediction module's too */
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

static double kind_activation_bytes(const ParoModel *m, gint64 batch, gint64 seq,
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
    /* latent attention keeps Q and K (a x (nope + rope) each), V and the output (a x v
     * each), and each latent twice, its norm's input and its output (the up projection's
     * input) */
    double attention_kept = paro_model_is_mla(m)
                                ? 6.0 * h + 4.0 * attention_qk(m) + 4.0 * attention_vo(m) +
                                      4.0 * (double)(m->q_lora_rank + m->kv_lora_rank)
                                : 6.0 * h + 4.0 * q + 4.0 * kv;
    double linear = attention_kept * s * b + masks + mlp;
    /* shared experts: their input (the norm's output, kept again for their first product)
     * and inner tensors; a gate keeps their output and its sigmoid for the product */
    double shared = shared_weights(m) > 0 ? (double)m->shared_experts *
                                                (double)(m->shared_ffn > 0 ? m->shared_ffn : m->ffn)
                                          : 0;
    if (shared > 0)
        linear +=
            (2.0 * h + mlp_factor * shared + (m->shared_expert_gate ? 2.0 * h + 2.0 : 0)) * s * b;
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

static double kind_fp8_activation_saving(const ParoModel *m, gint64 batch, gint64 seq,
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

static double kind_frozen_input_saving(const ParoModel *m, gint64 batch, gint64 seq,
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

static double kind_lora_adapter_memory(const ParoModel *m, gint64 batch, gint64 seq,
                                       ParoRecompute recompute, ParoAttention attention,
                                       guint targets, double dropout, gboolean packed, gboolean fp8,
                                       gboolean fp8_attention, gint64 tp,
                                       gboolean sequence_parallel)
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
    double left = kind_frozen_input_saving(m, batch, seq, recompute, attention, 0, fp8, tp,
                                           sequence_parallel) -
                  kind_frozen_input_saving(m, batch, seq, recompute, attention, targets, fp8, tp,
                                           sequence_parallel);
    return need * (double)seq * (double)batch - left;
}

static double kind_fp8_attention_saving(const ParoModel *m, gint64 batch, gint64 seq,
                                        ParoRecompute recompute, gint64 tp)
{
    if (!m->has_shape || recompute == PARO_RECOMPUTE_FULL || recompute == PARO_RECOMPUTE_OP)
        return 0;
    double q = (double)(m->heads * m->head_dim), kv = (double)(m->kv_heads * m->head_dim);
    return (2.0 * q + 2.0 * kv) / (double)tp * (double)seq * (double)batch;
}

static double kind_fused_swiglu_saving(const ParoModel *m, gint64 batch, gint64 seq,
                                       ParoRecompute recompute, gint64 tp,
                                       gboolean sequence_parallel)
{
    if (!m->has_shape || m->mlp != PARO_MLP_GATED || recompute == PARO_RECOMPUTE_FULL ||
        recompute == PARO_RECOMPUTE_OP)
        return 0;
    double split = 2.0 * paro_model_routes(m) * (double)m->ffn * (double)seq * (double)batch;
    return per_tp_rank(0, split, (double)tp, sequence_parallel);
}

static double kind_activation_bytes_tp(const ParoModel *m, gint64 batch, gint64 seq,
                                       ParoRecompute recompute, ParoAttention attention,
                                       gboolean fused_softmax, gint64 tp,
                                       gboolean sequence_parallel)
{
    if (!m->has_shape)
        return 0;
    double s = (double)seq, b = (double)batch, h = (double)m->hidden, t = (double)tp;
    if (recompute == PARO_RECOMPUTE_OP) {
        double replicated, split, unsplit;
        op_kept(m, attention, &replicated, &split, &unsplit);
        return s * b * (per_tp_rank(replicated, split, t, sequence_parallel) + unsplit);
    }
    double whole = kind_activation_bytes(m, batch, seq, recompute, attention, fused_softmax);
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

/* The arguments of the per-layer activation functions, for layer_mean. */
typedef struct {
    gint64 batch, seq, tp;
    ParoRecompute recompute;
    ParoAttention attention;
    gboolean fused_softmax, sequence_parallel, fp8, packed, fp8_attention;
    guint targets;
    double dropout;
} LayerArgs;

typedef double (*KindFn)(const ParoModel *view, const LayerArgs *a);

/* The mean over the L layers of @fn's bytes: each kind of layer's, times its count, and
 * each multi-token prediction module's block's with @mtp_extra; a model of alike layers:
 * its layer's. So L times it is the whole model's (a pipeline stage's layers may differ
 * from the mean: decision 77). */
static double layer_mean(const ParoModel *m, KindFn fn, const LayerArgs *a, double mtp_extra)
{
    if (!m->has_shape)
        return 0;
    LayerKind kinds[3];
    guint n = layer_kinds(m, kinds);
    if (n == 1 && !kinds[0].mtp)
        return fn(&kinds[0].view, a);
    double sum = 0;
    for (guint i = 0; i < n; i++)
        sum += kinds[i].count * (fn(&kinds[i].view, a) + (kinds[i].mtp ? mtp_extra : 0));
    return sum / (double)m->layers;
}

/* What a multi-token prediction module keeps beyond its block: the inputs of its two norms
 * and of its projection (the two outputs concatenated), 8 h a token; under full
 * recomputation its block's input, which the block's count holds. */
static double mtp_kept(const ParoModel *m, const LayerArgs *a)
{
    return a->recompute == PARO_RECOMPUTE_FULL
               ? 0
               : 8.0 * (double)m->hidden * (double)a->seq * (double)a->batch;
}

static double activation_fn(const ParoModel *v, const LayerArgs *a)
{
    return kind_activation_bytes(v, a->batch, a->seq, a->recompute, a->attention, a->fused_softmax);
}

double paro_model_activation_bytes(const ParoModel *m, gint64 batch, gint64 seq,
                                   ParoRecompute recompute, ParoAttention attention,
                                   gboolean fused_softmax)
{
    LayerArgs a = {.batch = batch,
                   .seq = seq,
                   .recompute = recompute,
                   .attention = attention,
                   .fused_softmax = fused_softmax};
    return layer_mean(m, activation_fn, &a, m->has_shape ? mtp_kept(m, &a) : 0);
}

static double activation_tp_fn(const ParoModel *v, const LayerArgs *a)
{
    return kind_activation_bytes_tp(v, a->batch, a->seq, a->recompute, a->attention,
                                    a->fused_softmax, a->tp, a->sequence_parallel);
}

double paro_model_activation_bytes_tp(const ParoModel *m, gint64 batch, gint64 seq,
                                      ParoRecompute recompute, ParoAttention attention,
                                      gboolean fused_softmax, gint64 tp, gboolean sequence_parallel)
{
    LayerArgs a = {.batch = batch,
                   .seq = seq,
                   .recompute = recompute,
                   .attention = attention,
                   .fused_softmax = fused_softmax,
                   .tp = tp,
                   .sequence_parallel = sequence_parallel};
    double extra = m->has_shape ? mtp_kept(m, &a) : 0;
    return layer_mean(m, activation_tp_fn, &a, sequence_parallel ? extra / (double)tp : extra);
}

static double fp8_activation_fn(const ParoModel *v, const LayerArgs *a)
{
    return kind_fp8_activation_saving(v, a->batch, a->seq, a->recompute, a->tp,
                                      a->sequence_parallel);
}

double paro_model_fp8_activation_saving(const ParoModel *m, gint64 batch, gint64 seq,
                                        ParoRecompute recompute, gint64 tp,
                                        gboolean sequence_parallel)
{
    LayerArgs a = {.batch = batch,
                   .seq = seq,
                   .recompute = recompute,
                   .tp = tp,
                   .sequence_parallel = sequence_parallel};
    return layer_mean(m, fp8_activation_fn, &a, 0);
}

static double frozen_input_fn(const ParoModel *v, const LayerArgs *a)
{
    return kind_frozen_input_saving(v, a->batch, a->seq, a->recompute, a->attention, a->targets,
                                    a->fp8, a->tp, a->sequence_parallel);
}

double paro_model_frozen_input_saving(const ParoModel *m, gint64 batch, gint64 seq,
                                      ParoRecompute recompute, ParoAttention attention,
                                      guint targets, gboolean fp8, gint64 tp,
                                      gboolean sequence_parallel)
{
    LayerArgs a = {.batch = batch,
                   .seq = seq,
                   .recompute = recompute,
                   .attention = attention,
                   .targets = targets,
                   .fp8 = fp8,
                   .tp = tp,
                   .sequence_parallel = sequence_parallel};
    return layer_mean(m, frozen_input_fn, &a, 0);
}

static double lora_memory_fn(const ParoModel *v, const LayerArgs *a)
{
    return kind_lora_adapter_memory(v, a->batch, a->seq, a->recompute, a->attention, a->targets,
                                    a->dropout, a->packed, a->fp8, a->fp8_attention, a->tp,
                                    a->sequence_parallel);
}

double paro_model_lora_adapter_memory(const ParoModel *m, gint64 batch, gint64 seq,
                                      ParoRecompute recompute, ParoAttention attention,
                                      guint targets, double dropout, gboolean packed, gboolean fp8,
                                      gboolean fp8_attention, gint64 tp, gboolean sequence_parallel)
{
    LayerArgs a = {.batch = batch,
                   .seq = seq,
                   .recompute = recompute,
                   .attention = attention,
                   .targets = targets,
                   .dropout = dropout,
                   .packed = packed,
                   .fp8 = fp8,
                   .fp8_attention = fp8_attention,
                   .tp = tp,
                   .sequence_parallel = sequence_parallel};
    return layer_mean(m, lora_memory_fn, &a, 0);
}

static double fp8_attention_fn(const ParoModel *v, const LayerArgs *a)
{
    return kind_fp8_attention_saving(v, a->batch, a->seq, a->recompute, a->tp);
}

double paro_model_fp8_attention_saving(const ParoModel *m, gint64 batch, gint64 seq,
                                       ParoRecompute recompute, gint64 tp)
{
    LayerArgs a = {.batch = batch, .seq = seq, .recompute = recompute, .tp = tp};
    return layer_mean(m, fp8_attention_fn, &a, 0);
}

static double fused_swiglu_fn(const ParoModel *v, const LayerArgs *a)
{
    return kind_fused_swiglu_saving(v, a->batch, a->seq, a->recompute, a->tp, a->sequence_parallel);
}

double paro_model_fused_swiglu_saving(const ParoModel *m, gint64 batch, gint64 seq,
                                      ParoRecompute recompute, gint64 tp,
                                      gboolean sequence_parallel)
{
    LayerArgs a = {.batch = batch,
                   .seq = seq,
                   .recompute = recompute,
                   .tp = tp,
                   .sequence_parallel = sequence_parallel};
    return layer_mean(m, fused_swiglu_fn, &a, 0);
}
