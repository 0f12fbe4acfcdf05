/* SPDX-License-Identifier: MIT */
/* The calibration file written by `parosim calibrate`: provenance comments, then `kind:
 * calibration` with compute, network and collectives sections that calib/calib-file.c
 * reads back. Fixed formats and sorted groups, so the same logs give the same bytes. */
#include <math.h>
#include <string.h>

#include "calib/calib-fit.h"

static const char *num(char *buf, const char *format, double v)
{
    return g_ascii_formatd(buf, G_ASCII_DTOSTR_BUF_SIZE, format, v);
}

static void quoted(GString *out, const char *s)
{
    g_string_append_c(out, '"');
    for (const char *p = s; *p; p++) {
        if (*p == '"' || *p == '\\')
            g_string_append_c(out, '\\');
        if ((guchar)*p < 0x20 || *p == 0x7f) /* YAML refuses them raw: escaped */
            g_string_append_printf(out, "\\x%02x", (guchar)*p);
        else
            g_string_append_c(out, *p);
    }
    g_string_append_c(out, '"');
}

static void quality(GString *out, const ParoAlphaBeta *ab)
{
    char a[G_ASCII_DTOSTR_BUF_SIZE], b[G_ASCII_DTOSTR_BUF_SIZE], c[G_ASCII_DTOSTR_BUF_SIZE];
    g_string_append_printf(out, "{r2: %s, median_error: %s, max_error: %s}", num(a, "%.6f", ab->r2),
                           num(b, "%.4f", ab->median_err), num(c, "%.4f", ab->max_err));
}

static void line(GString *out, const char *indent, const ParoAlphaBeta *ab)
{
    char a[G_ASCII_DTOSTR_BUF_SIZE], b[G_ASCII_DTOSTR_BUF_SIZE];
    g_string_append_printf(out, "%slatency: %s us\n%sbus_bandwidth: %s GB/s\n", indent,
                           num(a, "%.3f", ab->alpha_s * 1e6), indent,
                           num(b, "%.2f", ab->bus_Bps / 1e9));
}

static void comments(GString *out, const ParoCalibFit *fit)
{
    char a[G_ASCII_DTOSTR_BUF_SIZE], b[G_ASCII_DTOSTR_BUF_SIZE];
    g_string_append_printf(out, "# Fitted by parosim %s calibrate from these logs:\n",
                           PARO_VERSION);
    for (guint i = 0; i < fit->sources->len; i++)
        g_string_append_printf(out, "#   %s\n", (char *)g_ptr_array_index(fit->sources, i));
    for (guint i = 0; i < fit->versions->len; i++)
        g_string_append_printf(out, "# versions: %s\n",
                               (char *)g_ptr_array_index(fit->versions, i));
    if (fit->dates->len == 0)
        g_string_append(out, "# measured: date not given in the logs\n");
    for (guint i = 0; i < fit->dates->len; i++)
        g_string_append_printf(out, "# measured: %s (UTC)\n",
                               (char *)g_ptr_array_index(fit->dates, i));
    g_string_append(
        out, "# collectives: t(S) = latency + S * busfactor(op, ranks) / bus_bandwidth per\n"
             "#   (op, scope, ranks), weighted least squares (weights 1/t^2: relative error);\n"
             "#   fit: weighted r2, median and worst relative error; piecewise: two segments\n"
             "#   when the residuals depend on size (worst error > 5% and F-test p < 0.01).\n"
             "# network: step_latency = latency / ring steps (2(n-1) allreduce, n-1 others);\n"
             "#   inter bus_bandwidth is per GPU (its share of the node's NICs); the flow\n"
             "#   model (collectives.model: flow) uses it.\n");
    if (fit->nccl[0].present || fit->nccl[1].present) {
        g_string_append(out, "# nccl: NCCL's model (the default) on ");
        g_string_append(out, fit->nccl_topology);
        g_string_append(
            out, ", t = latency_scale x its latency\n"
                 "#   + transfer / bandwidth_scale for communicators on one node (single_node)\n"
                 "#   or several (multi_node), weighted least squares over every row.\n");
    } else {
        g_string_append(out, "# nccl: left out (parosim calibrate --topology fits it)\n");
    }
    if (fit->matmul_flops > 0) {
        g_string_append_printf(out,
                               "# matmul_rate: total FLOPs (2MNK) / total time of the %u %s GEMM "
                               "rows; per shape (rate, share of it):\n",
                               fit->shapes->len, fit->dtype);
        for (guint i = 0; i < fit->shapes->len; i++) {
            const ParoGemmShape *s = &g_array_index(fit->shapes, ParoGemmShape, i);
            g_string_append_printf(out,
                                   "#   %-32s %6" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
                                   "x%" G_GINT64_FORMAT " %s TFLOP/s (%s)\n",
                                   s->name, s->m, s->n, s->k, num(a, "%.1f", s->flops_per_s / 1e12),
                                   num(b, "%.3f", s->flops_per_s / fit->matmul_flops));
        }
    } else {
        g_string_append_printf(out, "# matmul_rate: no %s GEMM rows in the logs\n", fit->dtype);
    }
    if (fit->hbm_Bps > 0)
        g_string_append_printf(out,
                               "# hbm_bandwidth: median bytes/time of the %u adam rows of 256 MiB "
                               "and more\n",
                               fit->hbm_rows);
    else
        g_string_append(out, "# hbm_bandwidth: no adam rows of 256 MiB or more in the logs\n");
    if (fit->matmul_flops <= 0 || fit->hbm_Bps <= 0)
        g_string_append(out, "# compute: left out (it needs both figures)\n");
}

static void network(GString *out, const char *name, const ParoNetFit *n)
{
    char a[G_ASCII_DTOSTR_BUF_SIZE], b[G_ASCII_DTOSTR_BUF_SIZE];
    if (!n->present)
        return;
    g_string_append_printf(out,
                           "  %s:\n    bus_bandwidth: %s GB/s\n    step_latency: %s us\n"
                           "    source: ",
                           name, num(a, "%.2f", n->bus_Bps / 1e9), num(b, "%.4f", n->step_s * 1e6));
    quoted(out, n->source);
    g_string_append_c(out, '\n');
}

char *paro_calib_fit_to_yaml(const ParoCalibFit *fit)
{
    char a[G_ASCII_DTOSTR_BUF_SIZE], b[G_ASCII_DTOSTR_BUF_SIZE];
    GString *out = g_string_new(NULL);
    comments(out, fit);
    g_string_append(out, "kind: calibration\nschema: 1\ndevice: ");
    quoted(out, fit->device ? fit->device : "unknown");
    g_string_append_c(out, '\n');
    if (fit->matmul_flops > 0 && fit->hbm_Bps > 0)
        g_string_append_printf(out,
                               "compute:\n  matmul_rate: %s TFLOP/s\n  matmul_dtype: %s\n"
                               "  hbm_bandwidth: %s GB/s\n",
                               num(a, "%.1f", fit->matmul_flops / 1e12), fit->dtype,
                               num(b, "%.1f", fit->hbm_Bps / 1e9));
    if (fit->intra.present || fit->inter.present) {
        g_string_append(out, "network:\n");
        network(out, "intra", &fit->intra);
        network(out, "inter", &fit->inter);
    } else {
        g_string_append(out, "# network: left out, no multi-rank AllReduce, ReduceScatter or "
                             "AllGather fit\n");
    }
    if (fit->nccl[0].present || fit->nccl[1].present) {
        g_string_append(out, "nccl:\n");
        for (int i = 0; i < PARO_NCCL_N_CLASSES; i++) {
            const ParoNcclScale *sc = &fit->nccl[i];
            if (!sc->present)
                continue;
            char c[G_ASCII_DTOSTR_BUF_SIZE], d[G_ASCII_DTOSTR_BUF_SIZE];
            g_string_append_printf(out,
                                   "  %s:\n    latency_scale: %s\n    bandwidth_scale: %s\n    "
                                   "points: %" G_GINT64_FORMAT
                                   "\n    fit: {median_error: %s, max_error: %s}\n    source: ",
                                   paro_nccl_class_names[i], num(a, "%.4f", sc->latency_scale),
                                   num(b, "%.4f", sc->bandwidth_scale), sc->points,
                                   num(c, "%.4f", sc->median_error), num(d, "%.4f", sc->max_error));
            quoted(out, sc->source);
            g_string_append_c(out, '\n');
        }
    }
    if (fit->colls->len)
        g_string_append(out, "collectives:\n");
    for (guint i = 0; i < fit->colls->len; i++) {
        const ParoCollFit *g = &g_array_index(fit->colls, ParoCollFit, i);
        g_string_append_printf(out,
                               "  - op: %s\n    scope: %s\n    ranks: %" G_GINT64_FORMAT
                               "\n    nodes: %" G_GINT64_FORMAT "\n    points: %u\n",
                               paro_coll_kind_names[g->op], paro_calib_scope_names[g->scope],
                               g->ranks, g->nodes, g->n_points);
        if (!g->fitted) {
            g_string_append(out, "    fitted: false\n    reason: ");
            quoted(out, g->reason);
            g_string_append_c(out, '\n');
            continue;
        }
        line(out, "    ", &g->fit);
        if (g->fit.alpha_fixed)
            g_string_append(out, "    # latency fixed at 0: the free fit gave a negative one\n");
        g_string_append(out, "    fit: ");
        quality(out, &g->fit);
        g_string_append_c(out, '\n');
        if (!g->piecewise)
            continue;
        g_string_append_printf(out, "    piecewise:\n      break: %.0f B\n      f_test_p: %s\n",
                               g->break_bytes, num(a, "%.3g", g->p_value));
        g_string_append(out, "      below:\n");
        line(out, "        ", &g->below);
        g_string_append(out, "      above:\n");
        line(out, "        ", &g->above);
        g_string_append(out, "      fit: ");
        quality(out, &g->combined);
        g_string_append_c(out, '\n');
    }
    return g_string_free(out, FALSE);
}
