/* SPDX-License-Identifier: MIT */
/* Predictions of nccl-tests logs (calib-predict.h). */
#include "calib/calib-predict.h"

#include <math.h>

#include "core/error.h"
#include "core/stats.h"

ParoPredictRow paro_predict_row_new(const ParoCollTable *table, gint64 nodes,
                                    const ParoCollPoint *pt)
{
    return (ParoPredictRow){.op = table->op,
                            .ranks = table->ranks,
                            .nodes = nodes,
                            .bytes = pt->bytes,
                            .measured_us = pt->time_us,
                            .predicted_us = NAN,
                            .latency_us = NAN,
                            .transfer_us = NAN,
                            .algo = PARO_NCCL_RING,
                            .proto = PARO_NCCL_SIMPLE,
                            .line = pt->line};
}

const char *const paro_size_band_names[] = {"<64K", "64K-16M", ">=32M", NULL};

int paro_size_band_of(double bytes)
{
    if (bytes < 65536)
        return PARO_BAND_SMALL;
    if (bytes <= 16.0 * 1048576)
        return PARO_BAND_MID;
    if (bytes >= 32.0 * 1048576)
        return PARO_BAND_LARGE;
    return -1;
}

gboolean paro_calib_predict_check_log(const ParoCalibLog *log, GError **error)
{
    for (guint i = 0; log->colls && i < log->colls->len; i++) {
        const ParoCollTable *table = g_ptr_array_index(log->colls, i);
        for (guint k = 0; k < table->points->len; k++)
            if (g_array_index(table->points, ParoCollPoint, k).bytes > 0)
                return TRUE;
    }
    paro_config_error_set(error, PARO_CONFIG_ERROR_SYNTAX, log->source, 1, 1,
                          "no collective row of more than 0 bytes to predict: not a log of "
                          "nccl-tests (all_reduce_perf, ...) or of paro-harness coll%s",
                          log->tool ? "" : " (parosim calibrate finds no table in it either)");
    return FALSE;
}

GArray *paro_calib_predict_log(const ParoCalibLog *log, const ParoTopology *t, guint algos,
                               guint protos)
{
    GArray *rows = g_array_new(FALSE, FALSE, sizeof(ParoPredictRow));
    for (guint i = 0; log->colls && i < log->colls->len; i++) {
        const ParoCollTable *table = g_ptr_array_index(log->colls, i);
        gint64 nodes = table->nodes > 0 ? table->nodes : 1;
        ParoNcclSystem sys;
        paro_nccl_system_init(&sys, t, table->ranks, MAX(1, table->ranks / nodes));
        for (guint k = 0; k < table->points->len; k++) {
            const ParoCollPoint *pt = &g_array_index(table->points, ParoCollPoint, k);
            ParoPredictRow r = paro_predict_row_new(table, nodes, pt);
            double s;
            if (paro_nccl_run(&sys, table->op, pt->bytes, algos, protos, &r.algo, &r.proto, &s)) {
                r.predicted_us = s * 1e6;
                paro_nccl_terms(&sys, table->op, r.algo, r.proto, pt->bytes, &r.latency_us,
                                &r.transfer_us);
            }
            g_array_append_val(rows, r);
        }
    }
    return rows;
}

void paro_calib_band_errors(const GArray *rows, ParoBandError out[PARO_N_BANDS])
{
    GArray *errors[PARO_N_BANDS];
    for (int b = 0; b < PARO_N_BANDS; b++) {
        errors[b] = g_array_new(FALSE, FALSE, sizeof(double));
        out[b] = (ParoBandError){0, NAN, NAN};
    }
    for (guint i = 0; i < rows->len; i++) {
        const ParoPredictRow *r = &g_array_index(rows, ParoPredictRow, i);
        int band = paro_size_band_of(r->bytes);
        /* nccl-tests prints rows of 0 bytes where a count rounds to nothing */
        if (band < 0 || r->bytes <= 0 || !isfinite(r->predicted_us) || !(r->measured_us > 0))
            continue;
        double e = fabs(r->predicted_us - r->measured_us) / r->measured_us;
        g_array_append_val(errors[band], e);
    }
    for (int b = 0; b < PARO_N_BANDS; b++) {
        g_autoptr(GArray) e = errors[b];
        if (e->len == 0)
            continue;
        out[b].n = e->len;
        out[b].median = paro_stats_median_array(e); /* sorts: the worst is the last */
        out[b].worst = g_array_index(e, double, e->len - 1);
    }
}
