/* SPDX-License-Identifier: MIT */
/* Layer logs read and predicted (layer-check.h). A row is predicted as the middle layer of a
 * three-layer model of its shape, so that neither the embeddings nor the head are in it,
 * with the GPU's own figures (no calibration file: the check is of the defaults). */
#include "calib/layer-check.h"

#include "calib/calib-log.h"

#include <math.h>
#include <string.h>

#include "core/error.h"
#include "core/files.h"
#include "core/limits.h"

enum { N_FIELDS = 19 };

/* layer.py's columns, as its header line names them: the names the messages use. */
static const char *const column_names[N_FIELDS] = {
    "arch",     "hidden",    "heads",    "hdim",    "ffn",     "tp",         "seq",
    "batch",    "attn",      "drop",     "depth",   "fwd(us)", "fwdbwd(us)", "gemm(us)",
    "attn(us)", "other(us)", "span(us)", "kernels", "gemmTF"};

/* The counts a row is made of, each bounded as a scenario bounds it (core/limits.h), so that
 * a row no scenario could describe is refused where it is written, with its own message. */
static const struct {
    int column;
    const ParoLimit *limit;
} counts[] = {
    {1, &paro_limit_model_dim},   {2, &paro_limit_model_dim},     {3, &paro_limit_model_dim},
    {4, &paro_limit_model_dim},   {5, &paro_limit_gpus_per_node}, {6, &paro_limit_sequence},
    {7, &paro_limit_micro_batch},
};

typedef ParoLogField Field;

/* The field read as a finite number, else a located TYPE error naming its column. */
static gboolean number(const char *path, int line, const Field *f, int column, double *out,
                       GError **error)
{
    if (paro_log_field_number(f, out))
        return TRUE;
    paro_config_error_set(error, PARO_CONFIG_ERROR_TYPE, path, line, f->column,
                          "'%s' must be a finite number, got '%.*s%s'", column_names[column],
                          MIN(f->len, 40), f->text, f->len > 40 ? "..." : "");
    return FALSE;
}

static gboolean parse_row(const char *path, int line, const Field *f, ParoLayerRow *r,
                          GError **error)
{
    if (!(f[0].len == 3 && strncmp(f[0].text, "gpt", 3) == 0) &&
        !(f[0].len == 5 && strncmp(f[0].text, "llama", 5) == 0)) {
        paro_config_error_set(error, PARO_CONFIG_ERROR_RANGE, path, line, f[0].column,
                              "unknown arch '%.*s' (known: gpt, llama)", MIN(f[0].len, 40),
                              f[0].text);
        return FALSE;
    }
    gint64 *ints[] = {&r->hidden, &r->heads, &r->head_dim, &r->ffn, &r->tp, &r->seq, &r->batch};
    for (guint i = 0; i < G_N_ELEMENTS(counts); i++) {
        const Field *x = &f[counts[i].column];
        double v;
        if (!number(path, line, x, counts[i].column, &v, error))
            return FALSE;
        if (v != floor(v)) {
            paro_config_error_set(error, PARO_CONFIG_ERROR_TYPE, path, line, x->column,
                                  "'%s' must be a whole number, got '%.*s'",
                                  column_names[counts[i].column], MIN(x->len, 40), x->text);
            return FALSE;
        }
        if (!paro_log_field_within(path, line, x, column_names[counts[i].column], counts[i].limit,
                                   1, NULL, FALSE, v, error))
            return FALSE;
        *ints[i] = (gint64)v; /* within a limit of at most 2^24: exact */
    }
    if (!number(path, line, &f[9], 9, &r->dropout, error) ||
        !paro_log_field_within(path, line, &f[9], column_names[9], &paro_limit_probability, 1, NULL,
                               FALSE, r->dropout, error))
        return FALSE;
    /* The totals are times of a layer; a split column is 0 where no kernel of its kind ran
     * (eager attention's products count as GEMMs, its softmax as 'other'). */
    double *times[] = {&r->fwd_us, &r->fwdbwd_us, &r->gemm_us, &r->attention_us, &r->other_us};
    for (int i = 0; i < 5; i++) {
        int c = 11 + i;
        if (!number(path, line, &f[c], c, times[i], error))
            return FALSE;
        if (i >= 2 && *times[i] == 0)
            continue;
        if (!paro_log_field_within(path, line, &f[c], column_names[c], &paro_limit_measured_time,
                                   1e-6, "us", FALSE, *times[i], error))
            return FALSE;
    }
    if (r->heads % r->tp != 0 || r->ffn % r->tp != 0) {
        paro_config_error_set(error, PARO_CONFIG_ERROR_CONSTRAINT, path, line, f[5].column,
                              "'tp' %" G_GINT64_FORMAT " must divide 'heads' (%" G_GINT64_FORMAT
                              ") and 'ffn' (%" G_GINT64_FORMAT "): each rank holds a share",
                              r->tp, r->heads, r->ffn);
        return FALSE;
    }
    g_strlcpy(r->arch, f[0].text, MIN(sizeof r->arch, (gsize)f[0].len + 1));
    g_strlcpy(r->attention, f[8].text, MIN(sizeof r->attention, (gsize)f[8].len + 1));
    return TRUE;
}

GArray *paro_layer_log_load(const char *path, GError **error)
{
    g_autofree char *text = NULL;
    if (!paro_file_read(path, &paro_limit_table_bytes, &text, NULL, error))
        return NULL;
    g_autoptr(GArray) rows = g_array_new(FALSE, TRUE, sizeof(ParoLayerRow));
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (int i = 0; lines[i]; i++) {
        g_autoptr(GArray) fields = paro_log_split_fields(lines[i]);
        const Field *f = (const Field *)fields->data;
        if (fields->len == 0 || f[0].text[0] == '#')
            continue;
        if (fields->len != N_FIELDS) {
            paro_config_error_set(
                error, PARO_CONFIG_ERROR_SYNTAX, path, i + 1, 1,
                "not a layer row (%u fields): %d are needed, arch (gpt or llama), hidden, "
                "heads, hdim, ffn, tp, seq, batch, attn, drop, depth and 8 measured times (not "
                "negative); the shape positive, heads and ffn divisible by tp",
                fields->len, N_FIELDS);
            return NULL;
        }
        ParoLayerRow r = {0};
        if (!parse_row(path, i + 1, f, &r, error))
            return NULL;
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
        .long_attention_efficiency = g->long_attention_efficiency,
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
