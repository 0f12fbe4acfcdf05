/* SPDX-License-Identifier: MIT */
/* Predicting nccl-tests logs from a topology alone, the check of issue #14: every row of a
 * log's collective tables predicted with NCCL's model (coll/nccl.c) on the topology, for
 * the log's ranks and nodes, and the relative error per size band. No figure of the log
 * enters the prediction but its sizes, ranks and nodes (and, where the log says, the
 * algorithm NCCL was forced to): that is what makes it a prediction, not a fit. */
#pragma once

#include "calib/calib-log.h"
#include "coll/nccl.h"

G_BEGIN_DECLS

/* The size bands of the validation: small (< 64 KiB), mid (64 KiB to 16 MiB), large
 * (>= 32 MiB); sizes between 16 and 32 MiB belong to none. */
typedef enum { PARO_BAND_SMALL, PARO_BAND_MID, PARO_BAND_LARGE, PARO_N_BANDS } ParoSizeBand;
extern const char *const paro_size_band_names[]; /* "<64K", "64K-16M", ">=32M", NULL */

/** paro_size_band_of: the band of @bytes, or -1 for none. */
int paro_size_band_of(double bytes);

typedef struct {
    ParoCollKind op;
    gint64 ranks, nodes;
    double bytes;
    double measured_us;  /* out of place */
    double predicted_us; /* NAN when NCCL's model has no algorithm for it */
    double latency_us;   /* its two terms before any calibration (paro_nccl_terms) */
    double transfer_us;
    ParoNcclAlgo algo; /* what the model picks */
    ParoNcclProto proto;
    int line;
} ParoPredictRow;

/** paro_predict_row_new: @pt of @table measured, nothing predicted yet (NaN). */
ParoPredictRow paro_predict_row_new(const ParoCollTable *table, gint64 nodes,
                                    const ParoCollPoint *pt);

/**
 * paro_calib_predict_check_log:
 * TRUE when @log holds a collective row of more than 0 bytes, something to predict; else a
 * PARO_CONFIG_ERROR_SYNTAX located at the log's first line, as `parosim calibrate` refuses
 * a log without a table (random bytes, an ib_write_bw log, a GEMM log given for
 * collectives), rather than an empty table and success.
 */
gboolean paro_calib_predict_check_log(const ParoCalibLog *log, GError **error);

/**
 * paro_calib_predict_log:
 * @algos, @protos: what NCCL was allowed (bit masks of 1 << ParoNccl*, 0: all)
 * Returns: (transfer full): a ParoPredictRow for every point of @log's collective tables
 * on @topology (the log's ranks, on its nodes: ranks / nodes a node).
 */
GArray *paro_calib_predict_log(const ParoCalibLog *log, const ParoTopology *topology, guint algos,
                               guint protos);

typedef struct {
    guint n;
    double median; /* |predicted - measured| / measured */
    double worst;
} ParoBandError;

/** paro_calib_band_errors: median and worst relative error of @rows per band. */
void paro_calib_band_errors(const GArray *rows, ParoBandError out[PARO_N_BANDS]);

G_END_DECLS
