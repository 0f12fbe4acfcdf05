/* SPDX-License-Identifier: MIT */
/* Predictions of measured points from a calibration (see calib-validate.h). */
#include "calib/calib-validate.h"

#include <math.h>
#include <string.h>

#include "coll/analytic.h"

double paro_calib_predict_coll_s(const ParoCalibration *c, ParoCollKind op, ParoScope scope,
                                 gint64 ranks, double bytes)
{
    for (guint i = 0; c->collectives && i < c->collectives->len; i++) {
        const ParoCalibCollective *g = &g_array_index(c->collectives, ParoCalibCollective, i);
        if (g->op != op || g->scope != scope || g->ranks != ranks || !g->fitted)
            continue;
        const ParoCalibLine *l = !g->piecewise             ? &g->fit
                                 : bytes <= g->break_bytes ? &g->below
                                                           : &g->above;
        /* nccl-tests: x = S * busfactor bytes cross each rank's link at B_bus. */
        return l->latency_s + bytes * paro_coll_bus_factor(op, ranks) / l->bus_Bps;
    }
    return NAN;
}

double paro_calib_simulate_coll_s(const ParoCalibration *c, ParoCollKind op, ParoScope scope,
                                  gint64 ranks, gint64 nodes, double bytes)
{
    if (ranks < 2 || (op > PARO_COLL_REDUCESCATTER && op != PARO_COLL_ALLTOALL))
        return NAN;
    gint64 per_node = scope == PARO_SCOPE_INTER ? 1 : nodes > 0 ? ranks / MAX(nodes, 1) : ranks;
    gboolean spans = per_node < ranks;
    if ((spans && !c->inter.present) || (!spans && !c->intra.present))
        return NAN;
    /* A missing intra side across nodes: the fabric is taken as never limiting. */
    ParoCommModel cm = {
        .n = ranks,
        .m = ranks,
        .gpus_per_node = per_node,
        .intra_Bps = c->intra.present ? c->intra.bus_Bps : INFINITY,
        .intra_lat_s = c->intra.step_s,
        .inter_Bps = c->inter.bus_Bps,
        .inter_lat_s = c->inter.step_s,
        .algorithm = PARO_ALGO_RING,
        .chunks = 1,
    };
    if (op == PARO_COLL_ALLTOALL) /* no ring: every peer's part at once */
        return paro_coll_alltoall_s(&cm, ranks, per_node, bytes);
    return paro_coll_ring_s(&cm, op, ranks, per_node, bytes);
}

static void add(GArray *rows, ParoValidRow *r)
{
    g_array_append_val(rows, *r);
}

GArray *paro_calib_validate(const ParoCalibration *c, GPtrArray *logs)
{
    GArray *rows = g_array_new(FALSE, FALSE, sizeof(ParoValidRow));
    const char *dtype = paro_calib_dtype_names[c->matmul_dtype];
    for (guint i = 0; i < logs->len; i++) {
        const ParoCalibLog *log = g_ptr_array_index(logs, i);
        for (guint k = 0; k < log->colls->len; k++) {
            const ParoCollTable *t = g_ptr_array_index(log->colls, k);
            for (guint p = 0; p < t->points->len; p++) {
                const ParoCollPoint *pt = &g_array_index(t->points, ParoCollPoint, p);
                ParoValidRow r = {log->source, "coll",      "", t->scope, t->ranks,
                                  pt->bytes,   pt->time_us, 0,  0};
                g_strlcpy(r.op, paro_coll_kind_names[t->op], sizeof r.op);
                r.predicted_us =
                    1e6 * paro_calib_predict_coll_s(c, t->op, t->scope, t->ranks, pt->bytes);
                r.sim_us = 1e6 * paro_calib_simulate_coll_s(c, t->op, t->scope, t->ranks, t->nodes,
                                                            pt->bytes);
                add(rows, &r);
            }
        }
        for (guint k = 0; k < log->gemm->len; k++) {
            const ParoGemmRow *g = &g_array_index(log->gemm, ParoGemmRow, k);
            if (strcmp(g->dtype, dtype) != 0)
                continue;
            double m = (double)g->m, n = (double)g->n, kk = (double)g->k;
            double elt = strcmp(g->dtype, "tf32") == 0 ? 4 : 2;
            ParoValidRow r = {log->source, "gemm", "", -1, 1, (m * kk + kk * n + m * n) * elt,
                              g->time_us,  NAN,    NAN};
            g_strlcpy(r.op, g->name, sizeof r.op);
            if (c->has_compute) /* 2MNK FLOPs at the calibrated rate */
                r.predicted_us = 1e6 * 2 * m * n * kk / c->matmul_flops;
            add(rows, &r);
        }
        for (guint k = 0; k < log->mem->len; k++) {
            const ParoMemRow *mr = &g_array_index(log->mem, ParoMemRow, k);
            if (strcmp(mr->op, "h2d") == 0 || strcmp(mr->op, "d2h") == 0)
                continue;
            ParoValidRow r = {log->source, "hbm", "", -1, 1, mr->bytes, mr->time_us, NAN, NAN};
            g_strlcpy(r.op, mr->op, sizeof r.op);
            if (c->has_compute) /* bytes read + written at the calibrated bandwidth */
                r.predicted_us = 1e6 * mr->bytes / c->hbm_Bps;
            add(rows, &r);
        }
    }
    return rows;
}
