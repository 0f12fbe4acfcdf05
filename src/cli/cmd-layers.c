/* SPDX-License-Identifier: MIT */
/* `parosim validate --layers TOPOLOGY LOG...`: whole layers measured on a GPU
 * (validation/harness/layer.py) against the compute model on the topology's GPU. */
#include "cli/cli.h"

#include <math.h>
#include <string.h>

#include "calib/layer-check.h"
#include "core/stats.h"
#include "yaml/loaders.h"

static const char layers_help[] =
    "Predicts every row of layer logs (validation/harness/layer.py: one transformer layer's\n"
    "forward and forward plus backward, timed on a GPU, and its kernels' time split into\n"
    "GEMMs, attention and the rest) with the compute model on the topology's GPU, and prints\n"
    "measured, predicted and error = (predicted - measured) / measured per row, then the\n"
    "median |error| and the worst error of each column. Rows with a kernel parosim does not\n"
    "model (efficient and math attention, fused attention's dropout) are printed, not\n"
    "counted; cudnn rows run at the GPU's cuDNN attention rate. In eager\n"
    "rows the profile counts the score products as GEMMs and the softmax as 'other', where\n"
    "parosim's split counts both as attention: compare their totals. Rows whose kernels\n"
    "fill less than 80% of their time wait on the host (PyTorch's cost per operator, which\n"
    "parosim does not model): their split is counted, their totals are not. A value beyond\n"
    "the limits a scenario is held to (a dimension above 2^24, a dropout above 1, a time\n"
    "above an hour) is an error at its line and column.\n"
    "\n"
    "Example:\n"
    "  parosim validate --layers topologies/dgx-h100x8.yaml \\\n"
    "      validation/data/h100/2026-11-25_layer.txt";

enum { N_COLS = 5 };
static const char *const col_names[N_COLS] = {"fwd", "fwd+bwd", "gemm", "attention", "other"};

static void values(const ParoLayerRow *r, double measured[N_COLS], double predicted[N_COLS])
{
    double m[N_COLS] = {r->fwd_us, r->fwdbwd_us, r->gemm_us, r->attention_us, r->other_us};
    double p[N_COLS] = {r->p_fwd_us, r->p_fwdbwd_us, r->p_gemm_us, r->p_attention_us,
                        r->p_other_us};
    memcpy(measured, m, sizeof m);
    memcpy(predicted, p, sizeof p);
}

static void render(GString *out, const char *topology, const GArray *rows)
{
    g_string_append_printf(out, "# parosim %s validate --layers: %s\n", PARO_VERSION, topology);
    g_string_append(out, "# times per layer in us; error = (predicted - measured) / measured\n");
    g_string_append_printf(out, "# %-5s %6s %5s %6s %2s %5s %5s %-9s %4s", "arch", "hidden",
                           "heads", "ffn", "tp", "seq", "batch", "attn", "drop");
    for (int c = 0; c < N_COLS; c++)
        g_string_append_printf(out, " %10s %10s %7s", col_names[c], "predicted", "error");
    g_string_append(out, "\n");
    GArray *errors[N_COLS];
    for (int c = 0; c < N_COLS; c++)
        errors[c] = g_array_new(FALSE, FALSE, sizeof(double));
    double worst[N_COLS] = {0};
    for (guint i = 0; i < rows->len; i++) {
        const ParoLayerRow *r = &g_array_index(rows, ParoLayerRow, i);
        g_string_append_printf(out,
                               "  %-5s %6" G_GINT64_FORMAT " %5" G_GINT64_FORMAT
                               " %6" G_GINT64_FORMAT " %2" G_GINT64_FORMAT " %5" G_GINT64_FORMAT
                               " %5" G_GINT64_FORMAT " %-9s %4.2f",
                               r->arch, r->hidden, r->heads, r->ffn, r->tp, r->seq, r->batch,
                               r->attention, r->dropout);
        double m[N_COLS], p[N_COLS];
        values(r, m, p);
        for (int c = 0; c < N_COLS; c++) {
            double e = m[c] > 0 ? (p[c] - m[c]) / m[c] : NAN;
            if (isnan(p[c]) || m[c] <= 0)
                g_string_append_printf(out, " %10.1f %10s %7s", m[c], "-", "-");
            else
                g_string_append_printf(out, " %10.1f %10.1f %+6.1f%%", m[c], p[c], 100 * e);
            /* Eager rows' split is not comparable (help), nor host-bound rows' totals. */
            gboolean skip = c >= 2 ? strcmp(r->attention, "eager") == 0 : r->host_bound;
            if (r->unmodelled == NULL && isfinite(e) && !skip) {
                double a = fabs(e);
                g_array_append_val(errors[c], a);
                if (a > fabs(worst[c]))
                    worst[c] = e;
            }
        }
        if (r->unmodelled)
            g_string_append_printf(out, "  (%s)", r->unmodelled);
        else if (r->host_bound)
            g_string_append(out, "  (host-bound: totals not counted)");
        g_string_append(out, "\n");
    }
    g_string_append(out, "#\n# column      rows  median|e|     worst\n");
    for (int c = 0; c < N_COLS; c++) {
        g_autoptr(GArray) e = errors[c];
        if (e->len == 0)
            continue;
        double med = paro_stats_median_array(e);
        g_string_append_printf(out, "# %-10s %5u %9.1f%% %+8.1f%%\n", col_names[c], e->len,
                               100 * med, 100 * worst[c]);
    }
}

int paro_cmd_validate_layers(int argc, char **argv)
{
    g_autofree char *topology_path = NULL;
    GOptionEntry entries[] = {
        {"layers", 0, 0, G_OPTION_ARG_FILENAME, &topology_path,
         "Predict layer logs on TOPOLOGY's GPU", "TOPOLOGY"},
        {NULL},
    };
    /* `validate --layers --help`, as validate's help and the usage hint write it: --layers
     * would take "--help" for its TOPOLOGY, so the two trade places. */
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--layers") == 0 &&
            (strcmp(argv[i + 1], "--help") == 0 || strcmp(argv[i + 1], "-h") == 0)) {
            char *help = argv[i + 1];
            argv[i + 1] = argv[i];
            argv[i] = help;
        }
    if (!paro_cli_parse_options("validate --layers", "--layers TOPOLOGY LOG...", layers_help,
                                entries, &argc, &argv))
        return PARO_EXIT_USAGE;
    if (topology_path == NULL || argc < 2)
        return paro_cli_usage("validate --layers",
                              "TOPOLOGY and at least one layer log are needed");
    g_autoptr(GError) error = NULL;
    g_autoptr(ParoTopology) topology = paro_topology_load(topology_path, &error);
    if (topology == NULL) {
        paro_cli_report_error(error, NULL, NULL);
        return PARO_EXIT_ERROR;
    }
    g_autoptr(GArray) rows = g_array_new(FALSE, TRUE, sizeof(ParoLayerRow));
    for (int i = 1; i < argc; i++) {
        g_autoptr(GArray) log = paro_layer_log_load(argv[i], &error);
        if (log == NULL) {
            paro_cli_report_error(error, NULL, NULL);
            return PARO_EXIT_ERROR;
        }
        g_array_append_vals(rows, log->data, log->len);
    }
    paro_layer_predict(rows, topology);
    g_autoptr(GString) out = g_string_new(NULL);
    render(out, topology_path, rows);
    return paro_cli_write(out) ? PARO_EXIT_OK : PARO_EXIT_ERROR;
}
