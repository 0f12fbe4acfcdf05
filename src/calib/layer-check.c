/* SPDX-License-Identifier: MIT */
/* Layer logs read and predicted (layer-check.h). A row is predicted as the middle layer of a
 * three-layer model of its shape, so that neither the embeddings nor the head are in it,
 * with the GPU's own figures (no calibration file: the check is of the defaults). */
#include "calib/layer-check.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

enum { N_FIELDS = 19 };

static gboolean parse_row(char **f, ParoLayerRow *r)
{
    char *end;
    gint64 *ints[] = {&r->hidden, &r->heads, &r->head_dim, &r->ffn, &r->tp, &r->seq, &r->batch};
    for (int i = 0; i < 7; i++) {
        errno = 0;
        *ints[i] = g_ascii_strtoll(f[i + 1], &end, 10);
        if (errno || *end || *ints[i] <= 0)
            return FALSE;
    }
    double *doubles[] = {&r->dropout, &r->fwd_us,       &r->fwdbwd_us,
                         &r->gemm_us, &r->attention_us, &r->other_us};
    int at[] = {9, 11, 12, 13, 14, 15};
    for (int i = 0; i < 6; i++) {
        *doubles[i] = g_ascii_strtod(f[at[i]], &end);
        if (*end || !isfinite(*doubles[i]) || *doubles[i] < 0)
            return FALSE;
    }
    if (strcmp(f[0], "gpt") != 0 && strcmp(f[0], "llama") != 0)
        return FALSE;
    g_strlcpy(r->arch, f[0], sizeof r->arch);
    g_strlcpy(r->attention, f[8], sizeof r->attention);
    return r->heads % r->tp == 0 && r->ffn % r->tp == 0;
}

GArray *paro_layer_log_load(const char *path, GError **error)
{
    g_autofree char *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, error))
        return NULL;
    g_autoptr(GArray) rows = g_array_new(FALSE, TRUE, sizeof(ParoLayerRow));
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (int i = 0; lines[i]; i++) {
        g_auto(GStrv) f = g_strsplit_set(g_strstrip(lines[i]), " \t", -1);
        GPtrArray *fields = g_ptr_array_new();
        for (int j = 0; f[j]; j++)
            if (*f[j])
                g_ptr_array_add(fields, f[j]);
        g_ptr_array_add(fields, NULL);
        char **v = (char **)g_ptr_array_free(fields, FALSE);
        guint n = g_strv_length(v);
        ParoLayerRow r = {0};
        gboolean comment = n == 0 || v[0][0] == '#',
                 ok = comment || (n == N_FIELDS && parse_row(v, &r));
        g_free(v);
        if (!ok) {
            paro_config_error_set(
                error, PARO_CONFIG_ERROR_SYNTAX, path, i + 1, 1,
                "not a layer row (%u fields): %d are needed, arch (gpt or "
                "llama), hidden, heads, hdim, ffn, tp, seq, batch, attn, drop, "
                "depth and 8 measured times (not negative); the shape positive, heads and ffn "
                "divisible by tp",
                n, N_FIELDS);
            return NULL;
        }
        if (!comment)
            g_array_append_val(rows, r);
    }
    if (rows->len == 0) {
        paro_config_error_set(error, PARO_CONFIG_ERROR_SYNTAX, path, 1, 1,
                              "no layer rows (is this a log of validation/harness/layer.py?)");
        return NULL;
    }
    return g_steal_pointer(&rows);
}

ParoComputeSetup paro_compute_setup_of_gpu(const ParoTopology *t)
{
    const ParoGpuTraits *g = &t->gpu.traits;
    return (ParoComputeSetup){
        .peak_flops = t->gpu.peak_flops,
        .matmul_efficiency = g->matmul_efficiency,
        .sms = g->sms,
        .attention_efficiency = g->attention_efficiency,
        .cudnn_attention_efficiency = g->cudnn_attention_efficiency,
        .flash1_attention_efficiency = g->flash1_attention_efficiency,
        .fp8_matmul_efficiency = g->fp8_matmul_efficiency,
        .elementwise_Bps = paro_compute_elementwise_Bps(t->gpu.hbm_Bps, g->elementwise_share),
        .flat_pass_Bps = paro_compute_flat_pass_Bps(t->gpu.hbm_Bps, g->flat_pass_share),
        .power_knee = g->power_knee,
        .power_slope = g->power_slope,
        .hbm_Bps = t->gpu.hbm_Bps,
    };
}

static void predict_row(ParoLayerRow *r, const ParoTopology *t)
{
    r->p_fwd_us = r->p_fwdbwd_us = r->p_gemm_us = r->p_attention_us = r->p_other_us = NAN;
    /* layer.py's SDPA backends that parosim models (`efficient`, xFormers' kernel, is not) */
    ParoAttention attention = strcmp(r->attention, "flash") == 0   ? PARO_ATTENTION_FLASH
                              : strcmp(r->attention, "eager") == 0 ? PARO_ATTENTION_EAGER
                              : strcmp(r->attention, "cudnn") == 0 ? PARO_ATTENTION_CUDNN
                                                                   : (ParoAttention)-1;
    /* parosim times kernels; a layer whose kernels leave the GPU idle a fifth of its time
     * waits on the host (PyTorch's per-operator cost, small layers): its totals are not a
     * test of the model, its split still is. */
    r->host_bound = r->gemm_us + r->attention_us + r->other_us < 0.8 * r->fwdbwd_us;
    r->unmodelled = (int)attention < 0 ? "attention kernel not modelled"
                    : r->dropout > 0 && attention != PARO_ATTENTION_EAGER
                        ? "fused attention's dropout not modelled"
                    : t->gpu.traits.matmul_efficiency <= 0 ? "GPU's GEMM rate unknown"
                                                           : NULL;
    if ((int)attention < 0 || t->gpu.traits.matmul_efficiency <= 0)
        return;
    gboolean gpt = strcmp(r->arch, "gpt") == 0;
    ParoModel m = {
        .has_shape = TRUE,
        .hidden = r->hidden,
        .layers = 3,
        .heads = r->heads,
        .kv_heads = r->heads,
        .head_dim = r->head_dim,
        .ffn = r->ffn,
        .vocab = 32000,
        .mlp = gpt ? PARO_MLP_PLAIN : PARO_MLP_GATED,
        .norm = gpt ? PARO_NORM_LAYERNORM : PARO_NORM_RMSNORM,
        .attn_bias = gpt,
        .mlp_bias = gpt,
        .attention_dropout = r->dropout,
        .hidden_dropout = r->dropout,
    };
    ParoComputeSetup c = paro_compute_setup_of_gpu(t);
    c.batch = r->batch;
    c.seq = r->seq;
    c.trainable_share = 1;
    c.recompute = PARO_RECOMPUTE_NONE;
    c.attention = attention;
    c.fused_softmax = FALSE; /* layer.py's eager attention: PyTorch's separate kernels */
    c.tp = r->tp;
    g_autoptr(GArray) layers = paro_compute_layers(&m, &c);
    const ParoLayerCost *mid = &g_array_index(layers, ParoLayerCost, 1);
    r->p_fwd_us = 1e6 * mid->forward_s;
    r->p_fwdbwd_us = 1e6 * (mid->forward_s + mid->backward_s);
    /* The profile counts eager attention's batched products among the GEMMs. */
    gboolean eager = attention == PARO_ATTENTION_EAGER;
    r->p_gemm_us = 1e6 * (mid->gemm_s + (eager ? mid->attention_s : 0));
    r->p_attention_us = eager ? NAN : 1e6 * mid->attention_s;
    r->p_other_us = 1e6 * mid->memory_s;
}

void paro_layer_predict(GArray *rows, const ParoTopology *topology)
{
    for (guint i = 0; i < rows->len; i++)
        predict_row(&g_array_index(rows, ParoLayerRow, i), topology);
}
