/* SPDX-License-Identifier: MIT */
/* From parsed logs to a calibration: group the collective points by (op, scope, ranks)
 * over every log, fit each group, derive the network figures, the GEMM rate and the HBM
 * bandwidth (formulas and their reasons in calib-fit.c), and collect the provenance. */
#include <math.h>
#include <string.h>

#include "calib/calib-fit.h"
#include "core/error.h"
#include "core/limits.h"
#include "core/stats.h"

#define HBM_MIN_SIZE (256.0 * 1048576.0)

void paro_calib_fit_free(ParoCalibFit *fit)
{
    if (fit == NULL)
        return;
    g_free(fit->device);
    g_ptr_array_unref(fit->sources);
    g_ptr_array_unref(fit->versions);
    g_ptr_array_unref(fit->dates);
    for (guint i = 0; i < fit->colls->len; i++)
        g_free(g_array_index(fit->colls, ParoCollFit, i).reason);
    g_array_unref(fit->colls);
    for (guint i = 0; i < fit->shapes->len; i++)
        g_free(g_array_index(fit->shapes, ParoGemmShape, i).name);
    g_array_unref(fit->shapes);
    g_free(fit->intra.source);
    g_free(fit->inter.source);
    g_free(fit->nccl_topology);
    for (int i = 0; i < PARO_NCCL_N_CLASSES; i++)
        paro_nccl_scale_clear(&fit->nccl[i]);
    g_free(fit);
}

static void add_distinct(GPtrArray *set, const char *s)
{
    if (s == NULL)
        return;
    for (guint i = 0; i < set->len; i++)
        if (strcmp(g_ptr_array_index(set, i), s) == 0)
            return;
    g_ptr_array_add(set, g_strdup(s));
}

static int cmp_str(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_group(gconstpointer a, gconstpointer b)
{
    const ParoCollFit *x = a, *y = b;
    if (x->op != y->op)
        return (int)x->op - (int)y->op;
    if (x->scope != y->scope)
        return (int)x->scope - (int)y->scope;
    return x->ranks < y->ranks ? -1 : x->ranks > y->ranks;
}

typedef struct {
    ParoCollFit key;
    GArray *bytes, *t; /* double */
} Group;

static Group *find_group(GPtrArray *groups, const ParoCollTable *t)
{
    for (guint i = 0; i < groups->len; i++) {
        Group *g = g_ptr_array_index(groups, i);
        if (g->key.op == t->op && g->key.scope == t->scope && g->key.ranks == t->ranks) {
            g->key.nodes = MAX(g->key.nodes, t->nodes);
            return g;
        }
    }
    Group *g = g_new0(Group, 1);
    g->key = (ParoCollFit){.op = t->op, .scope = t->scope, .ranks = t->ranks, .nodes = t->nodes};
    g->bytes = g_array_new(FALSE, FALSE, sizeof(double));
    g->t = g_array_new(FALSE, FALSE, sizeof(double));
    g_ptr_array_add(groups, g);
    return g;
}

static void group_free(gpointer p)
{
    Group *g = p;
    g_array_unref(g->bytes);
    g_array_unref(g->t);
    g_free(g);
}

/* Rank of a group as the source of a network figure; lower is better, -1 unusable. */
static int net_rank(const ParoCollFit *g, gboolean inter)
{
    if (!g->fitted || g->op > PARO_COLL_REDUCESCATTER)
        return -1;
    gboolean dedicated = g->scope == (inter ? PARO_SCOPE_INTER : PARO_SCOPE_INTRA);
    gboolean world =
        g->scope == PARO_SCOPE_GLOBAL && g->nodes > 0 && (inter ? g->nodes > 1 : g->nodes == 1);
    if (!dedicated && !world)
        return -1;
    int op_pref = g->op == PARO_COLL_ALLREDUCE ? 0 : g->op == PARO_COLL_REDUCESCATTER ? 1 : 2;
    return op_pref * 2 + (dedicated ? 0 : 1);
}

static void derive_network(ParoCalibFit *fit, gboolean inter)
{
    const ParoCollFit *best = NULL;
    int best_rank = G_MAXINT;
    for (guint i = 0; i < fit->colls->len; i++) {
        const ParoCollFit *g = &g_array_index(fit->colls, ParoCollFit, i);
        int r = net_rank(g, inter);
        if (r >= 0 && (r < best_rank || (r == best_rank && g->ranks > best->ranks)))
            best = g, best_rank = r;
    }
    if (best == NULL)
        return;
    ParoNetFit *net = inter ? &fit->inter : &fit->intra;
    const ParoAlphaBeta *lat = best->piecewise ? &best->below : &best->fit;
    const ParoAlphaBeta *bw = best->piecewise ? &best->above : &best->fit;
    /* GPUs of one node in each ring: they share the node's NICs (see calib-fit.c). */
    double per_node =
        inter && best->scope == PARO_SCOPE_GLOBAL ? (double)best->ranks / (double)best->nodes : 1.0;
    net->present = TRUE;
    net->bus_Bps = bw->bus_Bps / per_node;
    net->step_s = lat->alpha_s / paro_calib_coll_steps(best->op, best->ranks);
    net->source =
        g_strdup_printf("%s %s %" G_GINT64_FORMAT " ranks on %" G_GINT64_FORMAT " node%s",
                        paro_coll_kind_names[best->op], paro_calib_scope_names[best->scope],
                        best->ranks, best->nodes, best->nodes == 1 ? "" : "s");
}

static void fit_compute(ParoCalibFit *fit, const ParoCalibLog *log, double *flops, double *t_us,
                        GArray *hbm)
{
    for (guint i = 0; i < log->gemm->len; i++) {
        const ParoGemmRow *r = &g_array_index(log->gemm, ParoGemmRow, i);
        if (strcmp(r->dtype, fit->dtype) != 0)
            continue;
        /* A GEMM C[M,N] = A[M,K] B[K,N] does M*N*K multiply-adds: 2MNK FLOPs. */
        double f = 2.0 * (double)r->m * (double)r->n * (double)r->k;
        *flops += f, *t_us += r->time_us;
        ParoGemmShape s = {g_strdup(r->name), r->m, r->n, r->k, f / (r->time_us * 1e-6)};
        g_array_append_val(fit->shapes, s);
    }
    for (guint i = 0; i < log->mem->len; i++) {
        const ParoMemRow *r = &g_array_index(log->mem, ParoMemRow, i);
        if (strcmp(r->op, "adam") == 0 && r->size >= HBM_MIN_SIZE) {
            double bw = r->bytes / (r->time_us * 1e-6);
            g_array_append_val(hbm, bw);
        }
    }
}

ParoCalibFit *paro_calib_fit_logs(GPtrArray *logs, const char *dtype, GError **error)
{
    g_autoptr(ParoCalibFit) fit = g_new0(ParoCalibFit, 1);
    fit->sources = g_ptr_array_new_with_free_func(g_free);
    fit->versions = g_ptr_array_new_with_free_func(g_free);
    fit->dates = g_ptr_array_new_with_free_func(g_free);
    fit->colls = g_array_new(FALSE, FALSE, sizeof(ParoCollFit));
    fit->shapes = g_array_new(FALSE, FALSE, sizeof(ParoGemmShape));
    g_strlcpy(fit->dtype, dtype, sizeof fit->dtype);
    g_autoptr(GPtrArray) groups = g_ptr_array_new_with_free_func(group_free);
    g_autoptr(GArray) hbm = g_array_new(FALSE, FALSE, sizeof(double));
    double flops = 0, gemm_us = 0;
    guint with_tables = 0;
    for (guint i = 0; i < logs->len; i++) {
        const ParoCalibLog *log = g_ptr_array_index(logs, i);
        guint points = 0;
        for (guint k = 0; k < log->colls->len; k++) {
            const ParoCollTable *t = g_ptr_array_index(log->colls, k);
            Group *g = find_group(groups, t);
            for (guint p = 0; p < t->points->len; p++) {
                const ParoCollPoint *pt = &g_array_index(t->points, ParoCollPoint, p);
                double s = pt->time_us * 1e-6;
                g_array_append_val(g->bytes, pt->bytes);
                g_array_append_val(g->t, s);
            }
            points += t->points->len;
        }
        fit_compute(fit, log, &flops, &gemm_us, hbm);
        if (log->tool == NULL && points == 0) {
            g_ptr_array_add(fit->sources, g_strdup_printf("%s: no table, skipped", log->source));
            continue;
        }
        with_tables++;
        /* a corpus log may hold the table without nccl-tests' own header lines */
        g_ptr_array_add(fit->sources,
                        g_strdup_printf("%s: %s, %u collective points, %u GEMM rows, %u "
                                        "memory rows",
                                        log->source, log->tool ? log->tool : "nccl-tests table",
                                        points, log->gemm->len, log->mem->len));
        if (fit->device == NULL && log->device)
            fit->device = g_strdup(log->device);
        add_distinct(fit->versions, log->versions);
        if (log->date) {
            g_autofree char *day = g_strndup(log->date, 10);
            add_distinct(fit->dates, day);
        }
    }
    if (with_tables == 0) {
        g_set_error(error, PARO_CALIB_ERROR, PARO_CALIB_ERROR_DATA,
                    "none of the %u logs holds an nccl-tests or paro-harness table", logs->len);
        return NULL;
    }
    g_ptr_array_sort(fit->versions, cmp_str);
    g_ptr_array_sort(fit->dates, cmp_str);
    for (guint i = 0; i < groups->len; i++) {
        Group *g = g_ptr_array_index(groups, i);
        ParoCollFit cf = g->key;
        if (!paro_calib_group_fit(&cf, (double *)g->bytes->data, (double *)g->t->data,
                                  g->bytes->len, error))
            return NULL;
        g_array_append_val(fit->colls, cf);
    }
    g_array_sort(fit->colls, cmp_group);
    derive_network(fit, FALSE);
    derive_network(fit, TRUE);
    if (gemm_us > 0)
        fit->matmul_flops = flops / (gemm_us * 1e-6);
    /* Rates no GPU has (tiny times in a log: the GEMMs gave inf TFLOP/s, which calibrate
     * wrote and run refused) are not measurements (issue #16 W4). */
    if (gemm_us > 0 && !paro_limit_check(&paro_limit_flop_rate, fit->matmul_flops)) {
        g_set_error(error, PARO_CALIB_ERROR, PARO_CALIB_ERROR_DATA,
                    "the %s GEMM rows give %.3g FLOP/s (%.3g FLOP in %.3g us), outside %.3g to "
                    "%.3g FLOP/s: not a measurement",
                    fit->dtype, fit->matmul_flops, flops, gemm_us, paro_limit_flop_rate.min,
                    paro_limit_flop_rate.max);
        return NULL;
    }
    if (hbm->len > 0) {
        fit->hbm_Bps = paro_stats_median_array(hbm);
        fit->hbm_rows = hbm->len;
        if (!paro_limit_check(&paro_limit_bandwidth, fit->hbm_Bps)) {
            g_set_error(error, PARO_CALIB_ERROR, PARO_CALIB_ERROR_DATA,
                        "the adam rows give an HBM bandwidth of %.3g B/s, outside %.3g to %.3g "
                        "B/s: not a measurement",
                        fit->hbm_Bps, paro_limit_bandwidth.min, paro_limit_bandwidth.max);
            return NULL;
        }
    }
    return g_steal_pointer(&fit);
}
