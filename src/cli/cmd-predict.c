/* SPDX-License-Identifier: MIT */
/* `parosim validate --predict TOPOLOGY LOG...` and `parosim validate --corpus FOLDER`:
 * nccl-tests measurements predicted from a datasheet topology alone, with the error per
 * size band, for one log or the whole measurement corpus (calib/corpus.c). */
#include "cli/cli.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calib/calib-file.h"
#include "calib/corpus.h"
#include "yaml/loaders.h"

static const char predict_help[] =
    "Predicts nccl-tests logs from datasheet topologies alone and prints the error,\n"
    "(predicted - measured) / measured, per row and, per size band (< 64 KiB,\n"
    "64 KiB - 16 MiB, >= 32 MiB), its median |error| and worst. The default model is\n"
    "NCCL's own (coll/nccl.c): the channels its topology search finds on the topology, its\n"
    "latencies and bandwidths per algorithm and protocol, and the algorithm it chooses\n"
    "(NCCL_ALGO=Ring where the log says so); --model flow is the link-level ring\n"
    "simulation of `parosim collective --algo ring`.\n"
    "\n"
    "  --predict TOPOLOGY LOG...  every row of the logs on that topology (a log without a\n"
    "                             collective row is an error)\n"
    "  --corpus FOLDER            every log of a corpus (FOLDER/corpus.yaml names each\n"
    "                             log's class and topology), by log and by class\n"
    "  --check RECORDED           with --corpus: exit 1 if a class's median or worst error\n"
    "                             in a band exceeds the recorded one (by more than 0.5 point);\n"
    "                             a record without figures, or with nan, is an error\n"
    "  --record FILE              with --corpus: write the figures --check reads (never over\n"
    "                             the corpus's index, logs or topologies)\n"
    "  --transfer                 with --corpus: calibrate NCCL's model on each class's\n"
    "                             AllReduce logs (parosim calibrate --topology) and predict\n"
    "                             the class's other ops, before and after\n"
    "  --calibration FILE         with --predict: NCCL's model with FILE's nccl scales\n"
    "\n"
    "Examples:\n"
    "  parosim validate --corpus validation/nccl-corpus\n"
    "  parosim validate --predict topologies/dgx-h100x8.yaml \\\n"
    "      validation/nccl-corpus/dgx-h100/dgx-h100-1n8-allreduce.txt";

static char *pct(double v)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    return isfinite(v) ? g_strdup_printf("%s%%", g_ascii_formatd(buf, sizeof buf, "%.1f", 100 * v))
                       : g_strdup("-");
}

static void bands(GString *out, const ParoBandError b[PARO_N_BANDS])
{
    for (int i = 0; i < PARO_N_BANDS; i++) {
        g_autofree char *m = pct(b[i].median), *w = pct(b[i].worst);
        g_string_append_printf(out, "  %3u %7s %7s", b[i].n, m, w);
    }
    g_string_append_c(out, '\n');
}

static const char band_head[] =
    "  <64K: n  median   worst  64K-16M: n median worst  >=32M: n median   worst\n";

static void rows_table(GString *out, const char *label, const GArray *rows)
{
    g_string_append_printf(out,
                           "# %s\n#           size     measured    predicted    error  choice\n"
                           "#            (B)         (us)         (us)\n",
                           label);
    for (guint i = 0; i < rows->len; i++) {
        const ParoPredictRow *r = &g_array_index(rows, ParoPredictRow, i);
        char m[G_ASCII_DTOSTR_BUF_SIZE], p[G_ASCII_DTOSTR_BUF_SIZE], e[G_ASCII_DTOSTR_BUF_SIZE];
        g_ascii_formatd(m, sizeof m, "%.2f", r->measured_us);
        g_ascii_formatd(p, sizeof p, "%.2f", r->predicted_us);
        g_ascii_formatd(e, sizeof e, "%+.1f",
                        100 * (r->predicted_us - r->measured_us) / r->measured_us);
        g_string_append_printf(out, "%16.0f %12s %12s %7s%%  %s/%s\n", r->bytes, m,
                               isfinite(r->predicted_us) ? p : "-", e,
                               paro_nccl_algo_names[r->algo], paro_nccl_proto_names[r->proto]);
    }
}

/* The class summaries: one line per class, first-seen order. */
static GPtrArray *classes_of(const ParoCorpus *c)
{
    GPtrArray *names = g_ptr_array_new();
    for (guint i = 0; i < c->entries->len; i++) {
        const char *k = g_array_index(c->entries, ParoCorpusEntry, i).klass;
        gboolean seen = FALSE;
        for (guint j = 0; j < names->len && !seen; j++)
            seen = strcmp(g_ptr_array_index(names, j), k) == 0;
        if (!seen)
            g_ptr_array_add(names, (gpointer)k);
    }
    return names;
}

/* Each recorded class and band against now (paro_corpus_record_load read the figures). */
static gboolean check(const GArray *results, const GArray *recorded, GString *out)
{
    gboolean ok = TRUE;
    for (guint i = 0; i < recorded->len; i++) {
        const ParoCorpusRecord *r = &g_array_index(recorded, ParoCorpusRecord, i);
        const char *band = paro_size_band_names[r->band];
        ParoBandError now[PARO_N_BANDS];
        paro_corpus_class_errors(results, r->klass, now);
        if (now[r->band].n == 0) {
            g_string_append_printf(out, "# check: %s %s has no rows now\n", r->klass, band);
            ok = FALSE;
            continue;
        }
        gboolean worse =
            now[r->band].median > r->median + 0.005 || now[r->band].worst > r->worst + 0.005;
        g_autofree char *m = pct(now[r->band].median), *w = pct(now[r->band].worst);
        g_autofree char *rm = pct(r->median), *rw = pct(r->worst);
        g_string_append_printf(out,
                               "# check: %-20s %-8s median %7s (recorded %7s)  worst %7s "
                               "(recorded %7s)%s\n",
                               r->klass, band, m, rm, w, rw, worse ? "  REGRESSED" : "");
        ok = ok && !worse;
    }
    return ok;
}

static GString *record(const GArray *results, GPtrArray *classes)
{
    GString *out = g_string_new("# class\tband\tmedian |error|\tworst |error| (fractions), "
                                "recorded by parosim validate --corpus --record\n");
    for (guint i = 0; i < classes->len; i++) {
        ParoBandError b[PARO_N_BANDS];
        paro_corpus_class_errors(results, g_ptr_array_index(classes, i), b);
        for (int k = 0; k < PARO_N_BANDS; k++)
            if (b[k].n > 0)
                g_string_append_printf(out, "%s\t%s\t%.4f\t%.4f\n",
                                       (const char *)g_ptr_array_index(classes, i),
                                       paro_size_band_names[k], ceil(b[k].median * 1e4) / 1e4,
                                       ceil(b[k].worst * 1e4) / 1e4);
    }
    return out;
}

/* Calibrated on a class's AllReduce logs, its other ops predicted: before and after. */
static gboolean transfer(const ParoCorpus *c, GString *out)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(GArray) rows = paro_corpus_transfer(c, &error);
    if (rows == NULL) {
        paro_cli_report_error(error, NULL, NULL);
        return FALSE;
    }
    g_string_append(out, "#\n# calibrated on the class's AllReduce logs (latency x a, bandwidth x "
                         "b), its other ops predicted\n");
    for (guint i = 0; i < rows->len; i++) {
        const ParoCorpusTransfer *t = &g_array_index(rows, ParoCorpusTransfer, i);
        for (int k = 0; k < PARO_NCCL_N_CLASSES; k++) {
            const ParoNcclScale *sc = &t->scales[k];
            if (!sc->present)
                continue;
            g_autofree char *m = pct(sc->median_error);
            g_string_append_printf(out,
                                   "# %s %s: a %.3f b %.3f (%" G_GINT64_FORMAT
                                   " AllReduce rows, median error %s)\n",
                                   t->klass, paro_nccl_class_names[k], sc->latency_scale,
                                   sc->bandwidth_scale, sc->points, m);
        }
        g_string_append_printf(out, "#%s", band_head);
        g_autofree char *before =
            g_strdup_printf("%s %s datasheet", t->klass, paro_coll_kind_names[t->op]);
        g_autofree char *after =
            g_strdup_printf("%s %s calibrated", t->klass, paro_coll_kind_names[t->op]);
        g_string_append_printf(out, "%-62s", before);
        bands(out, t->before);
        g_string_append_printf(out, "%-62s", after);
        bands(out, t->after);
    }
    return TRUE;
}

static int corpus(const char *folder, ParoPredictModel model, const char *check_path,
                  const char *record_path, gboolean with_transfer)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(ParoCorpus) c = paro_corpus_load(folder, &error);
    if (c == NULL) {
        paro_cli_report_error(error, NULL, NULL);
        return PARO_EXIT_ERROR;
    }
    /* What the command reads, which --record must not replace: the index, the logs, the
     * topologies and the record --check reads. Checked before any work. */
    g_auto(GStrv) corpus_inputs = paro_corpus_inputs(c);
    g_autoptr(GStrvBuilder) builder = g_strv_builder_new();
    g_strv_builder_addv(builder, (const char **)corpus_inputs);
    if (check_path)
        g_strv_builder_add(builder, check_path);
    g_auto(GStrv) inputs = g_strv_builder_end(builder);
    if (!paro_cli_check_output("validate", record_path, (const char *const *)inputs))
        return PARO_EXIT_ERROR;
    g_autoptr(GArray) recorded = NULL;
    if (check_path && (recorded = paro_corpus_record_load(check_path, &error)) == NULL) {
        paro_cli_report_error(error, NULL, NULL);
        return PARO_EXIT_ERROR;
    }
    GArray *results = paro_corpus_predict(c, model, &error);
    if (results == NULL) {
        paro_cli_report_error(error, NULL, NULL);
        return PARO_EXIT_ERROR;
    }
    g_autoptr(GPtrArray) classes = classes_of(c);
    g_autoptr(GString) out = g_string_new(NULL);
    g_string_append_printf(out,
                           "# parosim %s validate --corpus %s: predicted from datasheet "
                           "topologies, model %s\n# log%58s%s",
                           PARO_VERSION, folder, paro_predict_model_names[model], "", band_head);
    for (guint i = 0; i < results->len; i++) {
        const ParoCorpusResult *r = &g_array_index(results, ParoCorpusResult, i);
        g_string_append_printf(out, "%-56s %-5s", r->entry->file,
                               r->entry->ring_forced ? "ring" : "auto");
        bands(out, r->bands);
    }
    g_string_append_printf(out, "#\n# class%56s%s", "", band_head);
    for (guint i = 0; i < classes->len; i++) {
        ParoBandError b[PARO_N_BANDS];
        paro_corpus_class_errors(results, g_ptr_array_index(classes, i), b);
        g_string_append_printf(out, "%-62s", (const char *)g_ptr_array_index(classes, i));
        bands(out, b);
    }
    gboolean ok = TRUE;
    if (with_transfer && !transfer(c, out)) {
        paro_corpus_results_free(results);
        return PARO_EXIT_ERROR;
    }
    if (recorded)
        ok = check(results, recorded, out);
    if (record_path) {
        g_autoptr(GString) rec = record(results, classes);
        ok = paro_cli_write_file("validate", record_path, rec, (const char *const *)inputs) && ok;
    }
    paro_corpus_results_free(results);
    if (!paro_cli_write(out))
        return PARO_EXIT_ERROR;
    return ok ? PARO_EXIT_OK : PARO_EXIT_ERROR;
}

static int predict(char **paths, int n, const char *algo, const char *calibration)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(ParoTopology) t = paro_topology_load(paths[0], &error);
    if (t == NULL) {
        paro_cli_report_error(error, NULL, NULL);
        return PARO_EXIT_ERROR;
    }
    if (calibration) {
        ParoCalibration cal = {0};
        if (!paro_calib_load(calibration, &cal, &error)) {
            paro_cli_report_error(error, NULL, NULL);
            return PARO_EXIT_ERROR;
        }
        gboolean any = cal.nccl[0].present || cal.nccl[1].present;
        paro_calib_apply_nccl(cal.nccl, t);
        paro_calib_clear(&cal);
        if (!any) {
            g_printerr("parosim validate: %s has no nccl section (parosim calibrate --topology "
                       "writes one)\n",
                       calibration);
            return PARO_EXIT_ERROR;
        }
    }
    g_autoptr(GString) out = g_string_new(NULL);
    g_string_append_printf(out, "# parosim %s validate --predict: %s\n", PARO_VERSION, paths[0]);
    for (int i = 1; i < n; i++) {
        g_autoptr(ParoCalibLog) log = paro_calib_log_load(paths[i], &error);
        if (log == NULL || !paro_calib_predict_check_log(log, &error)) {
            paro_cli_report_error(error, NULL, NULL);
            return PARO_EXIT_ERROR;
        }
        gboolean ring = g_strcmp0(algo, "ring") == 0 || (algo == NULL && log->ring_forced);
        g_autoptr(GArray) rows = paro_calib_predict_log(log, t, ring ? 1u << PARO_NCCL_RING : 0, 0);
        rows_table(out, paths[i], rows);
        ParoBandError b[PARO_N_BANDS];
        paro_calib_band_errors(rows, b);
        g_string_append_printf(out, "#%s#%10s", band_head, "");
        bands(out, b);
    }
    return paro_cli_write(out) ? PARO_EXIT_OK : PARO_EXIT_ERROR;
}

int paro_cmd_validate_predict(int argc, char **argv)
{
    g_autofree char *corpus_dir = NULL, *model_name = NULL, *check_path = NULL;
    g_autofree char *record_path = NULL, *algo = NULL, *calibration = NULL;
    gboolean predict_mode = FALSE, with_transfer = FALSE;
    GOptionEntry entries[] = {
        {"predict", 0, 0, G_OPTION_ARG_NONE, &predict_mode,
         "Predict the logs that follow from the topology that comes first", NULL},
        {"corpus", 0, 0, G_OPTION_ARG_FILENAME, &corpus_dir, "Predict every log of a corpus",
         "FOLDER"},
        {"model", 0, 0, G_OPTION_ARG_STRING, &model_name, "nccl (default) or flow", "MODEL"},
        {"algo", 0, 0, G_OPTION_ARG_STRING, &algo,
         "auto or ring (default: ring where the log says NCCL_ALGO=Ring)", "ALGO"},
        {"check", 0, 0, G_OPTION_ARG_FILENAME, &check_path, "Fail on a regression", "RECORDED"},
        {"record", 0, 0, G_OPTION_ARG_FILENAME, &record_path, "Write the figures --check reads",
         "FILE"},
        {"transfer", 0, 0, G_OPTION_ARG_NONE, &with_transfer,
         "Calibrate each class on its AllReduce logs and predict its other ops", NULL},
        {"calibration", 0, 0, G_OPTION_ARG_FILENAME, &calibration,
         "With --predict: NCCL's model calibrated by FILE's nccl section", "FILE"},
        {NULL},
    };
    if (!paro_cli_parse_options("validate", "[TOPOLOGY LOG...]", predict_help, entries, &argc,
                                &argv))
        return PARO_EXIT_USAGE;
    g_autoptr(GError) error = NULL;
    const char *usage = NULL;
    int model = model_name ? -1 : PARO_PREDICT_NCCL;
    for (int i = 0; model_name && paro_predict_model_names[i]; i++)
        if (strcmp(model_name, paro_predict_model_names[i]) == 0)
            model = i;
    if (model < 0)
        usage = "--model must be nccl or flow";
    else if (corpus_dir && corpus_dir[0] == '-') /* `--corpus --help` */
        usage = "--corpus needs a FOLDER";
    else if (algo && strcmp(algo, "auto") != 0 && strcmp(algo, "ring") != 0)
        usage = "--algo must be auto or ring";
    else if (corpus_dir && (predict_mode || argc != 1))
        usage = "--corpus takes no other files";
    else if (!corpus_dir && (!predict_mode || argc < 3))
        usage = "--predict needs a topology and at least one log";
    else if (!corpus_dir && (check_path || record_path || with_transfer))
        usage = "--check, --record and --transfer go with --corpus";
    else if (corpus_dir && calibration)
        usage = "--calibration goes with --predict";
    else if (model != PARO_PREDICT_NCCL && (with_transfer || calibration))
        usage = "--transfer and --calibration calibrate NCCL's model (--model nccl)";
    if (usage)
        return paro_cli_usage("validate", usage);
    if (corpus_dir)
        return corpus(corpus_dir, (ParoPredictModel)model, check_path, record_path, with_transfer);
    return predict(argv + 1, argc - 1, algo, calibration);
}
