/* SPDX-License-Identifier: MIT */
/* Fitting measurement logs into a calibration: alpha-beta per collective group (weighted
 * least squares, GSL), an optional piecewise model when the residuals depend on size,
 * the network figures the simulator applies, the GEMM rate and the HBM bandwidth; and
 * writing it all as a `kind: calibration` YAML (calib-write.c). */
#pragma once

#include <glib.h>

#include "calib/calib-file.h"
#include "calib/calib-log.h"
#include "calib/calib-nccl.h"

G_BEGIN_DECLS

typedef struct {
    double alpha_s;    /* latency: the time at size 0 */
    double bus_Bps;    /* B_bus: t = alpha + S * busfactor(op, n) / B_bus */
    double r2;         /* weighted (1/t^2) coefficient of determination */
    double median_err; /* median of |predicted - measured| / measured */
    double max_err;    /* worst of the same */
    double chi2;       /* sum of squared relative residuals */
    guint points;
    gboolean alpha_fixed; /* the free fit gave alpha < 0; refitted with alpha = 0 */
    double beta_rel_err;  /* standard error of 1/B_bus relative to it (residual-scaled) */
} ParoAlphaBeta;

typedef struct {
    ParoCollKind op;
    ParoScope scope;
    gint64 ranks;
    gint64 nodes; /* 0: unknown */
    guint n_points;
    gboolean fitted;
    char *reason;       /* why not fitted */
    ParoAlphaBeta fit;  /* one alpha-beta over every size */
    gboolean piecewise; /* the residuals depend on size: two segments fitted */
    double break_bytes; /* sizes <= break use @below, larger ones @above */
    ParoAlphaBeta below, above;
    ParoAlphaBeta combined; /* quality of the piecewise model over every point */
    double f_stat, p_value; /* F-test of the piecewise model against the single one */
} ParoCollFit;

typedef struct {
    gboolean present;
    double bus_Bps; /* per GPU, one direction (inter: the GPU's share of the NICs) */
    double step_s;  /* latency of one ring step */
    char *source;   /* "allreduce intra 8 ranks" */
} ParoNetFit;

typedef struct {
    char *name;
    gint64 m, n, k;
    double flops_per_s;
} ParoGemmShape;

typedef struct {
    char *device;
    GPtrArray *sources;  /* char*: "path: what was read" */
    GPtrArray *versions; /* char*, distinct, sorted */
    GPtrArray *dates;    /* char*, distinct days, sorted */
    GArray *colls;       /* ParoCollFit, sorted by op, scope, ranks */
    char dtype[8];       /* of the GEMM rate */
    double matmul_flops; /* 0: no GEMM rows of that dtype */
    GArray *shapes;      /* ParoGemmShape, in log order */
    double hbm_Bps;      /* 0: no adam rows of 256 MiB or more */
    guint hbm_rows;
    ParoNetFit intra, inter;
    char *nccl_topology;                     /* the topology the scales were fitted on */
    ParoNcclScale nccl[PARO_NCCL_N_CLASSES]; /* absent unless calibrate --topology */
} ParoCalibFit;

void paro_calib_fit_free(ParoCalibFit *fit);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ParoCalibFit, paro_calib_fit_free)

/**
 * paro_calib_fit_alpha_beta:
 * @x: S * busfactor for each point (bytes each rank moves, in busbw terms)
 * @t_s: measured times (s); @n: points (at least 2)
 * Weighted linear least squares (gsl_multifit_wlinear) of t = alpha + x / B with weights
 * 1/t^2, so the relative error is what is minimised. Errors: PARO_CALIB_ERROR_FIT.
 */
gboolean paro_calib_fit_alpha_beta(const double *x, const double *t_s, guint n, ParoAlphaBeta *out,
                                   GError **error);

/** paro_alpha_beta_predict_s: alpha + x / B. */
double paro_alpha_beta_predict_s(const ParoAlphaBeta *ab, double x);

/** paro_calib_group_fit: fits one group's points (bytes, out-of-place time). */
gboolean paro_calib_group_fit(ParoCollFit *g, const double *bytes, const double *t_s, guint n,
                              GError **error);

/**
 * paro_calib_fit_logs:
 * @logs: ParoCalibLog*; @dtype: GEMM dtype of the matmul rate ("bf16")
 * Returns: (transfer full) (nullable): the fit. Errors: PARO_CALIB_ERROR_DATA (no table in
 * any log), PARO_CALIB_ERROR_FIT.
 */
ParoCalibFit *paro_calib_fit_logs(GPtrArray *logs, const char *dtype, GError **error);

/** paro_calib_fit_to_yaml: (transfer full) the calibration file, deterministic. */
char *paro_calib_fit_to_yaml(const ParoCalibFit *fit);

/** paro_calib_coll_steps: ring steps of @op over @n ranks: 2(n-1) AllReduce, n-1 others. */
double paro_calib_coll_steps(ParoCollKind op, gint64 n);

G_END_DECLS
