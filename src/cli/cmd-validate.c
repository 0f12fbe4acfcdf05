/* SPDX-License-Identifier: MIT */
/* `parosim validate CALIBRATION LOG... [--csv FILE]`: measured against predicted. */
#include "cli/cli.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calib/calib-validate.h"
#include "core/stats.h"
#include "report/report.h"

static const char validate_help[] =
    "Predicts every measured point of the logs with the calibration and prints measured,\n"
    "predicted and error = (predicted - measured) / measured per row, then the median of\n"
    "|error| and the worst error by kind and size band (< 64 KiB, 64 KiB - 16 MiB,\n"
    "> 16 MiB). Collectives: the group's fitted alpha-beta ('fit') and the simulator's ring\n"
    "closed form on the calibrated network ('sim'); GEMMs of the calibration's dtype:\n"
    "2MNK / matmul_rate; hbm rows: bytes moved / hbm_bandwidth. --csv writes\n"
    "source,kind,op,scope,ranks,bytes,measured_us,predicted_us,error,schema_version\n"
    "(plots/validate.gp).\n"
    "\n"
    "With --predict TOPOLOGY LOG... or --corpus FOLDER it predicts nccl-tests logs from a\n"
    "datasheet topology alone instead (no calibration): 'parosim validate --predict --help'.\n"
    "With --layers TOPOLOGY LOG... it predicts whole transformer layers timed on a GPU\n"
    "(validation/harness/layer.py): 'parosim validate --layers --help'.\n"
    "\n"
    "Example:\n"
    "  parosim validate validation/fits/h100-2026-11-23.yaml \\\n"
    "      validation/data/h100/2026-11-23_gemm-llama13b.txt";

static const char *const band_names[] = {"< 64 KiB", "64 KiB - 16 MiB", "> 16 MiB"};

static int band(double bytes)
{
    return bytes < 65536 ? 0 : bytes <= 16777216 ? 1 : 2;
}

static const char *fmt(char *buf, const char *format, double v)
{
    if (isnan(v))
        return "-";
    return g_ascii_formatd(buf, G_ASCII_DTOSTR_BUF_SIZE, format, v);
}

/* One summary line: rows of @kind (sim: the sim column) in @b (-1: all). */
static void summary(GString *out, GArray *rows, const char *kind, gboolean sim, int b)
{
    g_autoptr(GArray) err = g_array_new(FALSE, FALSE, sizeof(double));
    double worst = 0;
    guint skipped = 0;
    for (guint i = 0; i < rows->len; i++) {
        const ParoValidRow *r = &g_array_index(rows, ParoValidRow, i);
        if (strcmp(r->kind, kind) != 0 || (b >= 0 && band(r->bytes) != b))
            continue;
        double p = sim ? r->sim_us : r->predicted_us;
        if (isnan(p)) {
            skipped++;
            continue;
        }
        double e = (p - r->measured_us) / r->measured_us, a = fabs(e);
        g_array_append_val(err, a);
        if (a > fabs(worst))
            worst = e;
    }
    if (err->len == 0 && skipped == 0)
        return;
    guint n = err->len;
    double med = paro_stats_median_array(err); /* NAN without rows: printed '-' */
    char a[G_ASCII_DTOSTR_BUF_SIZE], c[G_ASCII_DTOSTR_BUF_SIZE];
    g_string_append_printf(out, "# %-9s %-16s %6u %8s%% %8s%% %9u\n", sim ? "coll-sim" : kind,
                           b < 0 ? "all" : band_names[b], n, fmt(a, "%.2f", 100 * med),
                           fmt(c, "%+.2f", n ? 100 * worst : NAN), skipped);
}

static void render(GString *out, GString *csv, const char *cal_path, GArray *rows)
{
    g_string_append_printf(out, "# parosim %s validate: %s\n", PARO_VERSION, cal_path);
    g_string_append(out, "# error = (predicted - measured) / measured; '-': nothing to predict "
                         "with\n#\n");
    g_string_append_printf(out, "# %-5s %-26s %-5s %5s %13s %12s %12s %9s %12s %9s\n", "kind", "op",
                           "scope", "ranks", "bytes", "measured_us", "fit_us", "error", "sim_us",
                           "sim_err");
    if (csv)
        g_string_append(csv, "source,kind,op,scope,ranks,bytes,measured_us,predicted_us,error,"
                             "schema_version\n");
    for (guint i = 0; i < rows->len; i++) {
        const ParoValidRow *r = &g_array_index(rows, ParoValidRow, i);
        char m[G_ASCII_DTOSTR_BUF_SIZE], p[G_ASCII_DTOSTR_BUF_SIZE], e[G_ASCII_DTOSTR_BUF_SIZE];
        char s[G_ASCII_DTOSTR_BUF_SIZE], se[G_ASCII_DTOSTR_BUF_SIZE];
        double err = (r->predicted_us - r->measured_us) / r->measured_us;
        double serr = (r->sim_us - r->measured_us) / r->measured_us;
        const char *scope = r->scope < 0 ? "-" : paro_calib_scope_names[r->scope];
        g_string_append_printf(out,
                               "  %-5s %-26s %-5s %5" G_GINT64_FORMAT " %13.0f %12s %12s %9s "
                               "%12s %9s\n",
                               r->kind, r->op, scope, r->ranks, r->bytes,
                               fmt(m, "%.2f", r->measured_us), fmt(p, "%.2f", r->predicted_us),
                               fmt(e, "%+.4f", err), fmt(s, "%.2f", r->sim_us),
                               fmt(se, "%+.4f", serr));
        if (csv && !isnan(r->predicted_us))
            g_string_append_printf(csv, "%s,%s,%s,%s,%" G_GINT64_FORMAT ",%.0f,%s,%s,%s,%d\n",
                                   r->source, r->kind, r->op, scope, r->ranks, r->bytes,
                                   fmt(m, "%.4f", r->measured_us), fmt(p, "%.4f", r->predicted_us),
                                   fmt(e, "%.6f", err), PARO_SCHEMA_VERSION);
    }
    g_string_append(out,
                    "#\n# summary   band              rows  median|e|     worst  unpredicted\n");
    const char *kinds[] = {"coll", "coll", "gemm", "hbm"};
    for (int k = 0; k < 4; k++)
        for (int b = -1; b < 3; b++)
            summary(out, rows, kinds[k], k == 1, b);
}

int paro_cmd_validate(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) { /* predictions from a topology: cmd-predict.c */
        if (g_str_has_prefix(argv[i], "--predict") || g_str_has_prefix(argv[i], "--corpus"))
            return paro_cmd_validate_predict(argc, argv);
        if (g_str_has_prefix(argv[i], "--layers"))
            return paro_cmd_validate_layers(argc, argv);
    }
    g_autofree char *csv_path = NULL;
    GOptionEntry entries[] = {
        {"csv", 0, 0, G_OPTION_ARG_FILENAME, &csv_path,
         "Also write the predicted rows as CSV to FILE", "FILE"},
        {NULL},
    };
    if (!paro_cli_parse_options("validate", "CALIBRATION.yaml LOG...", validate_help, entries,
                                &argc, &argv))
        return PARO_EXIT_USAGE;
    if (argc < 3)
        return paro_cli_usage("validate", "a calibration file and at least one log are needed");
    g_autoptr(GError) error = NULL;
    const char *const *inputs = (const char *const *)argv + 1;
    if (!paro_cli_check_output("validate", csv_path, inputs))
        return PARO_EXIT_ERROR;
    ParoCalibration cal = {0};
    if (!paro_calib_load(argv[1], &cal, &error)) {
        paro_cli_report_error(error, NULL, NULL);
        return PARO_EXIT_ERROR;
    }
    g_autoptr(GPtrArray) logs = g_ptr_array_new_with_free_func((GDestroyNotify)paro_calib_log_free);
    for (int i = 2; i < argc; i++) {
        ParoCalibLog *log = paro_calib_log_load(argv[i], &error);
        if (log == NULL) {
            paro_cli_report_error(error, NULL, NULL);
            paro_calib_clear(&cal);
            return PARO_EXIT_ERROR;
        }
        g_ptr_array_add(logs, log);
    }
    g_autoptr(GArray) rows = paro_calib_validate(&cal, logs);
    g_autoptr(GString) out = g_string_new(NULL);
    g_autoptr(GString) csv = csv_path ? g_string_new(NULL) : NULL;
    render(out, csv, argv[1], rows);
    paro_calib_clear(&cal);
    if (csv && !paro_cli_write_file("validate", csv_path, csv, inputs))
        return PARO_EXIT_ERROR;
    return paro_cli_write(out) ? PARO_EXIT_OK : PARO_EXIT_ERROR;
}
