/* SPDX-License-Identifier: MIT */
/* Predicting measured points with a calibration: collective points by their group's
 * alpha-beta fit and by the simulator's ring closed form on the calibrated network
 * (coll/analytic.c), GEMM rows as FLOPs / matmul_rate, HBM rows as bytes / hbm_bandwidth. */
#pragma once

#include "calib/calib-file.h"
#include "calib/calib-log.h"

G_BEGIN_DECLS

typedef struct {
    const char *source; /* borrowed from the log */
    const char *kind;   /* "coll", "gemm", "hbm" */
    char op[40];        /* collective, GEMM name, or memory op */
    int scope;          /* ParoScope; -1 for gemm and hbm */
    gint64 ranks;
    double bytes; /* collectives: S; gemm: operand bytes (MK+KN+MN) x element; hbm: moved */
    double measured_us;
    double predicted_us; /* NAN when the calibration has nothing for it */
    double sim_us;       /* collectives: ring closed form on the calibrated network; NAN else */
} ParoValidRow;

/**
 * paro_calib_validate:
 * Returns: (transfer full): ParoValidRow for every collective point, GEMM row of the
 * calibration's dtype and hbm row (memcpy, copy, adam) of @logs, in log order.
 */
GArray *paro_calib_validate(const ParoCalibration *c, GPtrArray *logs);

/** paro_calib_predict_coll_s: the fitted time of a collective of @bytes, or NAN. */
double paro_calib_predict_coll_s(const ParoCalibration *c, ParoCollKind op, ParoScope scope,
                                 gint64 ranks, double bytes);

/** paro_calib_simulate_coll_s: ring closed form on the calibrated network (all-to-all's:
 * paro_coll_alltoall_s), or NAN when the calibration lacks the side it needs (intra on one
 * node, inter across nodes). */
double paro_calib_simulate_coll_s(const ParoCalibration *c, ParoCollKind op, ParoScope scope,
                                  gint64 ranks, gint64 nodes, double bytes);

G_END_DECLS
