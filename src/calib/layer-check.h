/* SPDX-License-Identifier: MIT */
/* Whole transformer layers measured on a GPU (validation/harness/layer.py) against the
 * compute model (model/compute.c): each row's forward and forward-plus-backward time and
 * its split into GEMM, attention and other kernels, predicted from a topology's GPU. */
#pragma once

#include "model/compute.h"
#include "topo/topology.h"

G_BEGIN_DECLS

typedef struct {
    /* the row's configuration */
    char arch[8]; /* "gpt": LayerNorm, biases, GeLU MLP; "llama": RMSNorm, SwiGLU */
    gint64 hidden, heads, head_dim, ffn, tp, seq, batch;
    char attention[12]; /* flash, eager, cudnn, efficient, math */
    double dropout;
    /* measured per layer, microseconds */
    double fwd_us, fwdbwd_us, gemm_us, attention_us, other_us;
    /* predicted; NaN where parosim has no model of the row's kernels */
    double p_fwd_us, p_fwdbwd_us, p_gemm_us, p_attention_us, p_other_us;
    const char *unmodelled; /* why the row is not predicted (static), or NULL */
    gboolean host_bound;    /* its kernels fill less than 80% of its forward plus backward */
} ParoLayerRow;

/**
 * paro_layer_log_load:
 * Reads the table of a layer log (`#` lines are comments; one row a configuration), a
 * regular file of at most paro_limit_table_bytes.
 * Returns: (transfer full) (nullable): ParoLayerRow, unpredicted; a located
 * PARO_CONFIG_ERROR for a row that is not one, at the field that is wrong: _SYNTAX (not 19
 * fields; no row at all), _TYPE (not a finite number, a count not whole), _RANGE (an
 * unknown arch; a dimension, tp, sequence, batch, dropout or time outside the limit its
 * scenario key has, paro_limit_model_dim, _gpus_per_node, _sequence, _micro_batch,
 * _probability, _measured_time; a split time may be 0), _CONSTRAINT (a tp that does not
 * divide both heads and ffn).
 */
GArray *paro_layer_log_load(const char *path, GError **error);

/** paro_compute_setup_of_gpu: the compute model's inputs that @topology's GPU decides
 * (peak, traits, datasheet HBM bandwidth and its elementwise rate), the rest zero: the one
 * place both the layer check and a scenario (scenario/derived.c) take them from. */
ParoComputeSetup paro_compute_setup_of_gpu(const ParoTopology *topology);

/** paro_layer_predict: fills each row's predictions from @topology's GPU. */
void paro_layer_predict(GArray *rows, const ParoTopology *topology);

G_END_DECLS
