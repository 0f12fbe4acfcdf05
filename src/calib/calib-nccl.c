/* SPDX-License-Identifier: MIT */
/* The two scales of NCCL's model per class of communicator (calib-nccl.h). */
#include "calib/calib-nccl.h"

#include <math.h>
#include <string.h>

#include "calib/calib-predict.h"
#include "core/error.h"
#include "core/stats.h"

const char *const paro_nccl_class_names[] = {"single_node", "multi_node", NULL};

void paro_nccl_scale_clear(ParoNcclScale *s)
{
    g_free(s->source);
    memset(s, 0, sizeof *s);
}

static gboolean usable(const ParoPredictRow *r)
{
    return r->bytes > 0 && r->measured_us > 0 && isfinite(r->latency_us) &&
           isfinite(r->transfer_us);
}

static gboolean in_class(const ParoPredictRow *r, ParoNcclClass class)
{
    return usable(r) && (r->nodes > 1) == (class == PARO_NCCL_CLASS_NODES);
}

/* The weighted squared relative error of t = a L + g X over the class's rows. */
static double residual(const GArray *rows, ParoNcclClass class, double a, double g)
{
    double sum = 0;
    for (guint i = 0; i < rows->len; i++) {
        const ParoPredictRow *r = &g_array_index(rows, ParoPredictRow, i);
        if (in_class(r, class)) {
            double e = (a * r->latency_us + g * r->transfer_us - r->measured_us) / r->measured_us;
            sum += e * e;
        }
    }
    return sum;
}

/* Weighted least squares of t = a L + g X, weights 1/t^2: the normal equations of two
 * unknowns where rows dominated by each term are there; else, or when the pair leaves a
 * term at or below zero, a one-term fit with the other term kept at NCCL's figure. */
static void solve(const GArray *rows, ParoNcclClass class, double *a, double *g)
{
    double sll = 0, slx = 0, sxx = 0, slt = 0, sxt = 0;
    for (guint i = 0; i < rows->len; i++) {
        const ParoPredictRow *r = &g_array_index(rows, ParoPredictRow, i);
        if (!in_class(r, class))
            continue;
        double w = 1 / (r->measured_us * r->measured_us);
        sll += w * r->latency_us * r->latency_us;
        slx += w * r->latency_us * r->transfer_us;
        sxx += w * r->transfer_us * r->transfer_us;
        slt += w * r->latency_us * r->measured_us;
        sxt += w * r->transfer_us * r->measured_us;
    }
    /* A term no row is dominated by cannot be told from the other: it keeps NCCL's figure
     * (a log of large sizes only says nothing of latency). */
    gboolean latency_seen = FALSE, transfer_seen = FALSE;
    for (guint i = 0; i < rows->len; i++) {
        const ParoPredictRow *r = &g_array_index(rows, ParoPredictRow, i);
        if (in_class(r, class)) {
            latency_seen = latency_seen || r->latency_us >= r->transfer_us;
            transfer_seen = transfer_seen || r->transfer_us >= r->latency_us;
        }
    }
    *a = *g = 1;
    if (!latency_seen) {
        if (sxx > 0 && sxt > slx)
            *g = (sxt - slx) / sxx;
        return;
    }
    if (!transfer_seen) {
        if (sll > 0 && slt > slx)
            *a = (slt - slx) / sll;
        return;
    }
    double det = sll * sxx - slx * slx;
    if (det > 1e-9 * sll * sxx) {
        *a = (slt * sxx - sxt * slx) / det;
        *g = (sxt * sll - slt * slx) / det;
        if (*a > 0 && *g > 0)
            return;
    }
    double g_alone = sxx > 0 ? (sxt - slx) / sxx : -1; /* a = 1 */
    double a_alone = sll > 0 ? (slt - slx) / sll : -1; /* g = 1 */
    double r_g = g_alone > 0 ? residual(rows, class, 1, g_alone) : INFINITY;
    double r_a = a_alone > 0 ? residual(rows, class, a_alone, 1) : INFINITY;
    *a = r_a < r_g ? a_alone : 1;
    *g = r_a < r_g ? 1 : g_alone > 0 ? g_alone : 1;
}

static void quality(const GArray *rows, ParoNcclScale *s, ParoNcclClass class)
{
    g_autoptr(GArray) e = g_array_new(FALSE, FALSE, sizeof(double));
    for (guint i = 0; i < rows->len; i++) {
        const ParoPredictRow *r = &g_array_index(rows, ParoPredictRow, i);
        if (!in_class(r, class))
            continue;
        double t = s->latency_scale * r->latency_us + r->transfer_us / s->bandwidth_scale;
        double err = fabs(t - r->measured_us) / r->measured_us;
        g_array_append_val(e, err);
    }
    /* called for a class with a usable row (its source): never empty */
    s->points = e->len;
    s->median_error = paro_stats_median_array(e); /* sorts: the worst is the last */
    s->max_error = g_array_index(e, double, e->len - 1);
}

gboolean paro_calib_fit_nccl(GPtrArray *logs, const ParoTopology *topology,
                             ParoNcclScale out[PARO_NCCL_N_CLASSES], GError **error)
{
    /* NCCL's model as the datasheet has it: a topology already calibrated would fit the
     * remainder only */
    ParoTopology t = *topology;
    for (int i = 0; i < PARO_NCCL_N_CLASSES; i++)
        t.nccl.latency_scale[i] = t.nccl.bandwidth_scale[i] = 1;
    g_autoptr(GArray) rows = g_array_new(FALSE, FALSE, sizeof(ParoPredictRow));
    g_autofree char *sources[PARO_NCCL_N_CLASSES] = {NULL, NULL};
    for (guint i = 0; i < logs->len; i++) {
        const ParoCalibLog *log = g_ptr_array_index(logs, i);
        g_autoptr(GArray) r =
            paro_calib_predict_log(log, &t, log->ring_forced ? 1u << PARO_NCCL_RING : 0, 0);
        for (guint k = 0; k < r->len; k++) {
            const ParoPredictRow *row = &g_array_index(r, ParoPredictRow, k);
            int class = row->nodes > 1;
            if (usable(row) && sources[class] == NULL)
                sources[class] = g_strdup_printf(
                    "%s %" G_GINT64_FORMAT " ranks on %" G_GINT64_FORMAT " node%s (%s)",
                    paro_coll_kind_names[row->op], row->ranks, row->nodes,
                    row->nodes == 1 ? "" : "s", log->source);
        }
        g_array_append_vals(rows, r->data, r->len);
    }
    if (sources[0] == NULL && sources[1] == NULL) {
        g_set_error(error, PARO_CALIB_ERROR, PARO_CALIB_ERROR_DATA,
                    "no collective row with a size above 0 that NCCL's model can time: nothing "
                    "to calibrate it on");
        return FALSE;
    }
    for (int c = 0; c < PARO_NCCL_N_CLASSES; c++) {
        paro_nccl_scale_clear(&out[c]);
        if (sources[c] == NULL)
            continue;
        double a, g;
        solve(rows, (ParoNcclClass)c, &a, &g);
        out[c].present = TRUE;
        out[c].latency_scale = a;
        out[c].bandwidth_scale = 1 / g;
        out[c].source = g_steal_pointer(&sources[c]);
        quality(rows, &out[c], (ParoNcclClass)c);
    }
    return TRUE;
}

void paro_calib_apply_nccl(const ParoNcclScale scales[PARO_NCCL_N_CLASSES], ParoTopology *t)
{
    for (int c = 0; c < PARO_NCCL_N_CLASSES; c++) {
        if (!scales[c].present)
            continue;
        t->nccl.latency_scale[c] = scales[c].latency_scale;
        t->nccl.bandwidth_scale[c] = scales[c].bandwidth_scale;
    }
}
