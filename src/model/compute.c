/* SPDX-License-Identifier: MIT */
/* Per-layer compute time (roofline, two terms added):
 *   matmuls     forward 2*T*W_l (+ 2*T*V*h for the head on the last layer) and attention
 *               4*b*s^2*a*d, at the achieved rate; backward = forward's input gradients +
 *               the trainable share of the weight gradients + twice the attention
 *               (model.c), plus the recomputed forward (full) or attention (selective);
 *   elementwise norms, activations, dropout, residuals: the forward reads and writes
 *               about the layer's activation bytes once, the backward twice, at HBM
 *               bandwidth. This is the memory-bound part that a pure FLOP count misses.
 * Summed over layers, the matmul term equals paro_model_step_flops. */
#include "model/compute.h"

static double layer_weights(const ParoModel *m)
{
    double h = (double)m->hidden, f = (double)m->ffn;
    double q = (double)m->heads * (double)m->head_dim;
    double kv = (double)m->kv_heads * (double)m->head_dim;
    return h * q + 2.0 * h * kv + q * h + (m->mlp == PARO_MLP_GATED ? 3.0 : 2.0) * h * f;
}

GArray *paro_compute_layers(const ParoModel *m, const ParoComputeSetup *c)
{
    gint64 L = m->has_shape ? m->layers : 1;
    GArray *layers = g_array_sized_new(FALSE, TRUE, sizeof(ParoLayerCost), (guint)L);
    g_array_set_size(layers, (guint)L);
    double T = (double)c->batch * (double)c->seq;
    double total = m->has_shape ? paro_model_shape_params(m) : 1;
    double act_none = paro_model_activation_bytes(m, c->batch, c->seq, PARO_RECOMPUTE_NONE);
    double act_kept = paro_model_activation_bytes(m, c->batch, c->seq, c->recompute);
    for (gint64 l = 0; l < L; l++) {
        ParoLayerCost *lc = &g_array_index(layers, ParoLayerCost, l);
        double matmul, attention;
        if (m->has_shape) {
            double h = (double)m->hidden, v = (double)m->vocab;
            double params = paro_model_layer_params(m);
            if (l == 0)
                params += v * h + (double)m->position_embeddings * h;
            if (l == L - 1)
                params += (m->norm == PARO_NORM_LAYERNORM ? 2.0 : 1.0) * h +
                          (m->tied_embeddings ? 0 : v * h);
            lc->weight_share = params / total;
            matmul = 2.0 * T * (layer_weights(m) + (l == L - 1 ? v * h : 0));
            attention = 4.0 * (double)c->batch * (double)c->seq * (double)c->seq *
                        (double)m->heads * (double)m->head_dim;
        } else {
            lc->weight_share = 1;
            matmul = 2.0 * T * paro_model_base_params(m);
            attention = 0;
        }
        double again = c->recompute == PARO_RECOMPUTE_FULL        ? matmul + attention
                       : c->recompute == PARO_RECOMPUTE_SELECTIVE ? attention
                                                                  : 0;
        double forward = matmul + attention;
        double backward = matmul * (1.0 + c->trainable_share) + 2.0 * attention + again;
        lc->flops = forward + backward;
        lc->forward_s = forward / c->rate_flops + act_none / c->hbm_Bps;
        lc->backward_s = backward / c->rate_flops + 2.0 * act_none / c->hbm_Bps;
        lc->act_kept = act_kept;
        lc->act_transient = act_none - act_kept;
    }
    return layers;
}
