/* SPDX-License-Identifier: MIT */
/* A scenario: a model on a cluster with a training configuration and the collective
 * algorithm for global collectives. Loaded from YAML with its model and topology files
 * resolved relative to it and --set overrides applied, validated, then read-only. */
#pragma once

#include <glib.h>

#include "coll/collective.h"
#include "model/model.h"
#include "topo/topology.h"

G_BEGIN_DECLS

typedef enum { PARO_PRECISION_BF16, PARO_PRECISION_FP16, PARO_PRECISION_FP32 } ParoPrecision;
extern const char *const paro_precision_names[]; /* "bf16", "fp16", "fp32", NULL */

typedef struct {
    gint64 micro_batch;      /* sequences per GPU per micro-step */
    gint64 sequence;         /* tokens per sequence */
    gint64 accumulation;     /* A: micro-steps per global step */
    int precision;           /* ParoPrecision of parameters and gradients */
    double optimizer_bytes;  /* K: optimizer-state bytes per trainable parameter */
    ParoTrainable trainable;
    int recompute;           /* ParoRecompute */
    double efficiency;       /* achieved share of peak FLOP/s */
    double memory_overhead;  /* bytes per GPU outside the model (CUDA context, allocator) */
    gboolean overlap;        /* compute and communication on separate streams */
    gint64 prefetch;         /* layers gathered ahead of use */
    double bucket_bytes;     /* gradient reduce-scatter bucket */
} ParoTraining;

/* Measured compute figures of a GPU (`kind: calibration`), replacing peak x efficiency. */
typedef struct {
    gboolean present;
    char *device;
    char *path;
    double matmul_flops;  /* achieved dense 16-bit rate on the model's layer GEMMs */
    double hbm_Bps;       /* achieved HBM bandwidth of an optimizer-like kernel */
} ParoCalibration;

typedef struct {
    char *path;          /* the scenario file */
    char *name;
    char *description;
    ParoModel *model;
    ParoTopology *topology;
    ParoTraining training;
    gint64 group;        /* m: GPUs per PaRO group */
    int algorithm;       /* ParoAlgorithm for global collectives */
    gint64 chunks;       /* ho-ring chunks */
    int network;         /* ParoNetFidelity of the training-step simulation */
    ParoCalibration calibration;
} ParoScenario;

void paro_scenario_free(ParoScenario *scenario);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ParoScenario, paro_scenario_free)

/**
 * paro_scenario_load:
 * @path: the scenario YAML
 * @overrides: (nullable): "dotted.path=value" strings, applied in order; a path starting
 *   with "model." or "topology." reaches into the referenced file, and "model=FILE" or
 *   "topology=FILE" swaps the file itself (FILE relative to the current directory, as
 *   any command-line path; paths written in files are relative to the file)
 * Returns: (transfer full) (nullable): the validated scenario. Errors: PARO_CONFIG_ERROR
 * with the location in the scenario, model or topology file, or in the --set argument
 * (labelled "--set[i]", 1-based column within the argument).
 */
ParoScenario *paro_scenario_load(const char *path, const char *const *overrides, GError **error);

/** paro_scenario_n_gpus: GPUs in data parallelism (n). */
gint64 paro_scenario_n_gpus(const ParoScenario *s);

/** paro_precision_bytes: bytes per element of a precision. */
double paro_precision_bytes(ParoPrecision p);

G_END_DECLS
