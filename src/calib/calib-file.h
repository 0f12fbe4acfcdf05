/* SPDX-License-Identifier: MIT */
/* Calibration files (`kind: calibration`, written by `parosim calibrate`, calib-write.c):
 * their types, their reader, and how their network section replaces a topology's figures
 * (calib-file.c). Everything about calibration lives in calib/: logs (calib-log), fits
 * (calib-fit, calib-derive), files (calib-file, calib-write), predictions (calib-validate). */
#pragma once

#include <glib.h>

#include "calib/calib-nccl.h"
#include "coll/collective.h"
#include "topo/topology.h"
#include "yaml/yaml.h"

G_BEGIN_DECLS

typedef struct {
    gboolean present;
    double bus_Bps; /* per GPU, one direction (inter: the GPU's share of its node's NICs) */
    double step_s;  /* latency of one ring step */
} ParoCalibLink;

typedef struct {
    double latency_s;
    double bus_Bps;
} ParoCalibLine;

typedef struct {
    ParoCollKind op;
    ParoScope scope; /* written world/intra/inter */
    gint64 ranks, nodes, points;
    gboolean fitted;
    char *reason;      /* when not fitted */
    ParoCalibLine fit; /* t = latency + S * busfactor / bus_bandwidth */
    double r2, median_error, max_error;
    gboolean piecewise;
    double break_bytes; /* sizes <= break use below, larger above */
    ParoCalibLine below, above;
} ParoCalibCollective;

typedef struct {
    gboolean present;
    char *device;
    char *path;
    gboolean has_compute;
    double matmul_flops; /* achieved dense 16-bit rate on the model's layer GEMMs */
    int matmul_dtype;    /* index in paro_calib_dtype_names */
    double hbm_Bps;      /* achieved HBM bandwidth of an optimizer-like kernel */
    ParoCalibLink intra, inter;
    ParoNcclScale nccl[PARO_NCCL_N_CLASSES]; /* NCCL's model's scales (calib-nccl.h) */
    GArray *collectives;                     /* ParoCalibCollective; empty when the file has none */
} ParoCalibration;

extern const char *const paro_calib_dtype_names[]; /* "bf16", "fp16", "tf32", NULL */

/* How calibration files and logs name a collective's scope: "world" for all ranks. */
extern const char *const paro_calib_scope_names[]; /* "world", "intra", "inter", NULL */

/** paro_calib_clear: frees what @c owns and zeroes it. */
void paro_calib_clear(ParoCalibration *c);

/** paro_calib_from_node: reads a `kind: calibration` tree into @c (cleared first).
 * Errors: located PARO_CONFIG_ERROR. */
gboolean paro_calib_from_node(const ParoNode *node, ParoCalibration *c, GError **error);

/** paro_calib_load: reads a calibration file into @c. */
gboolean paro_calib_load(const char *path, ParoCalibration *c, GError **error);

/**
 * paro_calib_apply_network:
 * Replaces @t's link figures by the calibrated ones when @c has a network section:
 * fabric.bandwidth = intra bus bandwidth; nics.bandwidth such that a GPU's share of its
 * node's NICs equals the inter bus bandwidth; nccl.step_overhead = intra step latency with
 * fabric.latency = 0; nics.latency = inter step latency - step_overhead - network.latency
 * (at least 0), so an intra ring step costs the intra step latency and an inter one the
 * inter step latency. Returns TRUE when something was replaced.
 */
gboolean paro_calib_apply_network(const ParoCalibration *c, ParoTopology *t);

/**
 * paro_calib_apply:
 * What @c says of the network, for the collective model @model: NCCL's scales (its nccl
 * section) for PARO_COLL_MODEL_NCCL, the link figures (paro_calib_apply_network) for the
 * flow model. Each model keeps its datasheet figures where @c has nothing for it.
 */
void paro_calib_apply(const ParoCalibration *c, ParoCollModel model, ParoTopology *t);

G_END_DECLS
