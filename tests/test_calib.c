/* SPDX-License-Identifier: MIT */
/* Calibration: reading nccl-tests and paro-harness logs (located errors), the weighted
 * alpha-beta fit against known lines, a real log reproduced within the error its fit
 * reports, the written YAML loaded back, and the network figures applied to a topology;
 * layer logs and the corpus record read against the named limits, and the corpus found
 * from its folder however it is written (issue #42). */
#include <glib.h>
#include <glib/gstdio.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "calib/calib-fit.h"
#include "calib/calib-predict.h"
#include "calib/calib-validate.h"
#include "calib/corpus.h"
#include "calib/layer-check.h"
#include "check-main.h"
#include "coll/analytic.h"
#include "yaml/loaders.h"

static ParoCalibLog *load_log(const char *rel)
{
    g_autofree char *path = paro_test_path(rel);
    g_autoptr(GError) error = NULL;
    ParoCalibLog *log = paro_calib_log_load(path, &error);
    ck_assert_msg(log != NULL, "%s", error ? error->message : "");
    return log;
}

START_TEST(calib_parse_nccl_tests)
{
    g_autoptr(ParoCalibLog) log = load_log("tests/data/calib/nccl-tests-h100-2x8-allreduce.txt");
    ck_assert_str_eq(log->tool, "nccl-tests");
    ck_assert_str_eq(log->device, "NVIDIA H100 80GB HBM3");
    ck_assert_int_eq(log->colls->len, 1);
    const ParoCollTable *t = g_ptr_array_index(log->colls, 0);
    ck_assert_int_eq(t->op, PARO_COLL_ALLREDUCE);
    ck_assert_int_eq(t->ranks, 16); /* 16 "Rank" lines of -np 16 -g 1 */
    ck_assert_int_eq(t->nodes, 2);  /* two host names */
    ck_assert_int_eq(t->points->len, 31);
    const ParoCollPoint *p = &g_array_index(t->points, ParoCollPoint, 0);
    ck_assert_double_eq(p->bytes, 8);
    ck_assert_double_eq(p->time_us, 135.8);
    ck_assert_double_eq(p->inplace_us, 123.5);
}
END_TEST

START_TEST(calib_parse_nccl_tests_alltoall)
{
    /* System: the real alltoall_perf log of 8 x H100 on one node (NCCL 2.28.7).
     * Expectations: the table is read as alltoall over 8 ranks on one host, 10 sizes;
     * nccl-tests' busbw column is algbw x (n-1)/n (its AlltoAllGetBw), so our bus factor
     * times size/time gives the printed 236.35 GB/s of the first row (to its rounding).
     * NCCL's model predicts each row as p2p/Simple (a peer's part of 4 MiB and more is past
     * LL's 16 KiB): 8.4 + 3.4 us + S x 7/8 / (18 x 20.6 GB/s), docs/nccl.md "All-to-all",
     * 40,552.2 us at 16 GiB against 43,189.3 measured. */
    g_autoptr(ParoCalibLog) log = load_log("tests/data/calib/nccl-tests-h100-8-alltoall.txt");
    ck_assert_int_eq(log->colls->len, 1);
    const ParoCollTable *t = g_ptr_array_index(log->colls, 0);
    ck_assert_int_eq(t->op, PARO_COLL_ALLTOALL);
    ck_assert_int_eq(t->ranks, 8);
    ck_assert_int_eq(t->nodes, 1);
    ck_assert_int_eq(t->points->len, 10);
    const ParoCollPoint *p = &g_array_index(t->points, ParoCollPoint, 0);
    ck_assert_double_eq(p->bytes, 33554432);
    ck_assert_double_eq(p->time_us, 124.22);
    ck_assert_double_eq(p->inplace_us, 123.83);
    double busbw = p->bytes / (p->time_us * 1e3) * paro_coll_bus_factor(PARO_COLL_ALLTOALL, 8);
    ck_assert_double_eq_tol(busbw, 236.35, 0.01);
    g_autofree char *tpath = paro_test_path("topologies/dgx-h100x8.yaml");
    g_autoptr(ParoTopology) topo = paro_topology_load(tpath, NULL);
    ck_assert(topo != NULL);
    g_autoptr(GArray) rows = paro_calib_predict_log(log, topo, 0, 0);
    ck_assert_int_eq(rows->len, 10);
    for (guint i = 0; i < rows->len; i++) {
        const ParoPredictRow *r = &g_array_index(rows, ParoPredictRow, i);
        ck_assert(r->algo == PARO_NCCL_P2P && r->proto == PARO_NCCL_SIMPLE);
        double want = 11.8 + r->bytes * 7 / 8 / (18 * 20.6e3);
        ck_assert_double_eq_tol(r->predicted_us, want, want * 1e-12);
    }
    const ParoPredictRow *last = &g_array_index(rows, ParoPredictRow, 9);
    ck_assert_double_eq_tol(last->predicted_us, 40552.2, 0.05);
    ck_assert_double_eq(last->measured_us, 43189.3);
}
END_TEST

START_TEST(calib_parse_harness)
{
    g_autoptr(ParoCalibLog) coll = load_log("validation/data/h100/2026-11-23_coll-intra.txt");
    ck_assert_int_eq(coll->colls->len, 4); /* --op all: four tables */
    const ParoCollTable *t = g_ptr_array_index(coll->colls, 3);
    ck_assert_int_eq(t->op, PARO_COLL_BROADCAST);
    ck_assert_int_eq(t->scope, PARO_SCOPE_INTRA);
    ck_assert_int_eq(t->ranks, 1);
    ck_assert_str_eq(coll->device, "NVIDIA H100 80GB HBM3");
    ck_assert_str_eq(coll->date, "2026-11-23T09:52:10Z");
    g_autoptr(ParoCalibLog) gemm = load_log("validation/data/h100/2026-11-23_gemm-llama7b.txt");
    ck_assert_int_eq(gemm->gemm->len, 36);
    const ParoGemmRow *r = &g_array_index(gemm->gemm, ParoGemmRow, 0);
    ck_assert_int_eq(r->m, 2048);
    ck_assert_str_eq(r->dtype, "bf16");
    ck_assert_str_eq(r->name, "llama7b.qkv.fwd");
    g_autoptr(ParoCalibLog) hbm = load_log("validation/data/h100/2026-11-23_hbm.txt");
    ck_assert_int_eq(hbm->mem->len, 39);
}
END_TEST

static const char *const bad_logs[] = {
    "bad-log-time-not-number.txt", "bad-log-wrong-results.txt", "bad-log-short-row.txt",
    /* issue #16: a truncated row, non-ASCII digits, a number of 1,000 digits, a GEMM dtype
     * or memory op the harness never measures */
    "bad-log-truncated-row.txt", "bad-log-non-ascii-digits.txt", "bad-log-long-number.txt",
    "bad-log-gemm-dtype.txt", "bad-log-mem-op.txt",
    /* issue #42: times and sizes outside the named limits, a corpus node of 2^24 GPUs */
    "bad-log-time-huge.txt", "bad-log-time-tiny.txt", "bad-log-size-huge.txt",
    "bad-log-corpus-ranks.txt"};

/* @error is the PARO_CONFIG_ERROR named @code, at @line:@column of @path, and its message
 * starts with that location. */
static void assert_located(const GError *error, const char *rel, const char *path, const char *code,
                           int line, int column)
{
    ck_assert_msg(g_error_matches(error, PARO_CONFIG_ERROR, paro_config_error_code_from_name(code)),
                  "%s: %s", rel, error->message);
    const ParoConfigErrorPrivate *loc = paro_config_error_get_location(error);
    ck_assert_int_eq(loc->line, line);
    ck_assert_int_eq(loc->column, column);
    g_autofree char *prefix = g_strdup_printf("%s:%d:%d: ", path, line, column);
    ck_assert(g_str_has_prefix(error->message, prefix));
}

START_TEST(calib_bad_logs_are_located)
{
    g_autofree char *rel = g_strdup_printf("tests/data/calib/%s", bad_logs[_i]);
    g_autofree char *path = paro_test_path(rel);
    g_autofree char *text = NULL;
    ck_assert(g_file_get_contents(path, &text, NULL, NULL));
    char code[32];
    int line, column;
    ck_assert_int_eq(
        sscanf(strstr(text, "# expect: "), "# expect: %31s %d:%d", code, &line, &column), 3);
    g_autoptr(GError) error = NULL;
    g_autoptr(ParoCalibLog) log = paro_calib_log_parse(text, path, &error);
    ck_assert_msg(log == NULL, "%s accepted", rel);
    assert_located(error, rel, path, code, line, column);
}
END_TEST

/* issue #42: layer logs and corpus records whose values leave the limits, each located. */
static const char *const bad_inputs[] = {
    "bad-layer-hidden.txt", "bad-layer-seq.txt",    "bad-layer-dropout.txt", "bad-layer-time.txt",
    "bad-layer-zero.txt",   "bad-layer-tp.txt",     "bad-record-nan.tsv",    "bad-record-empty.tsv",
    "bad-record-band.tsv",  "bad-record-twice.tsv", "bad-record-huge.tsv"};

START_TEST(calib_bad_layers_and_records_are_located)
{
    g_autofree char *rel = g_strdup_printf("tests/data/calib/%s", bad_inputs[_i]);
    g_autofree char *path = paro_test_path(rel);
    g_autofree char *text = NULL;
    ck_assert(g_file_get_contents(path, &text, NULL, NULL));
    char code[32];
    int line, column;
    ck_assert_int_eq(sscanf(text, "# expect: %31s %d:%d", code, &line, &column), 3);
    g_autoptr(GError) error = NULL;
    g_autoptr(GArray) rows = g_str_has_suffix(path, ".tsv") ? paro_corpus_record_load(path, &error)
                                                            : paro_layer_log_load(path, &error);
    ck_assert_msg(rows == NULL, "%s accepted", rel);
    assert_located(error, rel, path, code, line, column);
}
END_TEST

START_TEST(calib_corpus_folder_as_written)
{
    /* Expectations: the repository root is the corpus folder's grandparent whatever the
     * folder's spelling (a trailing or doubled separator, "." parts, a ".." folded), so
     * the shipped corpus loads and predicts from each; its inputs are the index, every log
     * and each topology once (the classes share topologies), counted from the index. */
    g_autofree char *repo = paro_test_path("");
    g_autofree char *base = g_build_filename(repo, "validation", "nccl-corpus", NULL);
    g_autofree char *dotted = g_strdup_printf("%s/./..//nccl-corpus//", base);
    g_autofree char *slash = g_strdup_printf("%s/", base);
    const char *const spellings[] = {base, slash, dotted};
    g_autofree char *want_root = g_canonicalize_filename(repo, NULL);
    for (guint i = 0; i < G_N_ELEMENTS(spellings); i++) {
        g_autoptr(GError) error = NULL;
        g_autoptr(ParoCorpus) c = paro_corpus_load(spellings[i], &error);
        ck_assert_msg(c != NULL, "%s: %s", spellings[i], error ? error->message : "");
        ck_assert_str_eq(c->folder, base);
        ck_assert_str_eq(c->root, want_root);
        GArray *results = paro_corpus_predict(c, PARO_PREDICT_NCCL, &error);
        ck_assert_msg(results != NULL, "%s: %s", spellings[i], error ? error->message : "");
        paro_corpus_results_free(results);
        g_auto(GStrv) inputs = paro_corpus_inputs(c);
        g_autoptr(GHashTable) topologies = g_hash_table_new(g_str_hash, g_str_equal);
        for (guint k = 0; k < c->entries->len; k++)
            g_hash_table_add(topologies, g_array_index(c->entries, ParoCorpusEntry, k).topology);
        ck_assert_uint_eq(g_strv_length(inputs),
                          1 + c->entries->len + g_hash_table_size(topologies));
        ck_assert(g_str_has_suffix(inputs[0], "nccl-corpus/corpus.yaml"));
    }
}
END_TEST

START_TEST(calib_log_without_rows_is_not_predicted)
{
    /* A log of prose, and a log whose only row is of 0 bytes: nothing to predict, located at
     * the log's first line; a row of 8 bytes is something. */
    g_autoptr(GError) error = NULL;
    g_autoptr(ParoCalibLog) prose =
        paro_calib_log_parse("ib_write_bw\n 2 5000 0.11 0.10\n", "prose.txt", &error);
    ck_assert_ptr_nonnull(prose);
    ck_assert(!paro_calib_predict_check_log(prose, &error));
    ck_assert(g_error_matches(error, PARO_CONFIG_ERROR, PARO_CONFIG_ERROR_SYNTAX));
    ck_assert(g_str_has_prefix(error->message, "prose.txt:1:1: no collective row"));
    g_clear_error(&error);
    const char *zero = "# corpus: op: allreduce\n# corpus: ranks: 8 nodes: 1\n"
                       "  0 0 float sum -1 10.00 0.00 0.00 0\n";
    g_autoptr(ParoCalibLog) empty = paro_calib_log_parse(zero, "zero.txt", &error);
    ck_assert_ptr_nonnull(empty);
    ck_assert(!paro_calib_predict_check_log(empty, NULL));
    g_autofree char *eight = g_strconcat(zero, "  8 2 float sum -1 10.00 0.00 0.00 0\n", NULL);
    g_autoptr(ParoCalibLog) some = paro_calib_log_parse(eight, "eight.txt", &error);
    ck_assert_ptr_nonnull(some);
    ck_assert(paro_calib_predict_check_log(some, NULL));
}
END_TEST

/* Points of an allreduce over 8 ranks, 8 B to 1 GiB, from t = alpha + f S / B. */
static guint make_points(double alpha, double B, double noise, double *x, double *t)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 42);
    guint n = 0;
    double f = paro_coll_bus_factor(PARO_COLL_ALLREDUCE, 8);
    for (double s = 8; s <= 1073741824.0; s *= 2, n++) {
        x[n] = f * s;
        t[n] = (alpha + x[n] / B) * (noise > 0 ? gsl_ran_lognormal(rng, 0, noise) : 1);
    }
    gsl_rng_free(rng);
    return n;
}

START_TEST(calib_fit_exact_line)
{
    /* System: noise-free t = 10 us + x / 100 GB/s. Expectation: the same line back, up to
     * floating-point rounding of the least-squares solve (relative 1e-9). */
    double x[40], t[40];
    guint n = make_points(10e-6, 100e9, 0, x, t);
    ParoAlphaBeta ab;
    ck_assert(paro_calib_fit_alpha_beta(x, t, n, &ab, NULL));
    ck_assert_double_eq_tol(ab.alpha_s, 10e-6, 1e-14);
    ck_assert_double_eq_tol(ab.bus_Bps, 100e9, 100);
    ck_assert_double_eq_tol(ab.max_err, 0, 1e-9);
    ck_assert_double_eq_tol(ab.r2, 1, 1e-9);
}
END_TEST

START_TEST(calib_fit_recovers_noisy_line)
{
    /* System: t = 20 us + x / 200 GB/s times lognormal noise of 2% (GSL mt19937, seed 42),
     * 28 sizes. Expectation (the generator is the oracle): B within 5%, alpha within 10%;
     * with weights 1/t^2 each point carries about 2% relative error, so the small sizes pin
     * alpha to about 2%/sqrt(14) and the large ones B likewise: the tolerances are loose. */
    double x[40], t[40];
    guint n = make_points(20e-6, 200e9, 0.02, x, t);
    ParoAlphaBeta ab;
    ck_assert(paro_calib_fit_alpha_beta(x, t, n, &ab, NULL));
    ck_assert_double_eq_tol(ab.bus_Bps, 200e9, 0.05 * 200e9);
    ck_assert_double_eq_tol(ab.alpha_s, 20e-6, 0.10 * 20e-6);
    ck_assert(ab.median_err < 0.04);
    /* Pure 2% noise is no size dependence: no piecewise model. */
    g_autofree double *bytes = g_new(double, n);
    for (guint i = 0; i < n; i++)
        bytes[i] = x[i] / paro_coll_bus_factor(PARO_COLL_ALLREDUCE, 8);
    ParoCollFit g = {.op = PARO_COLL_ALLREDUCE, .ranks = 8, .nodes = 1};
    ck_assert(paro_calib_group_fit(&g, bytes, t, n, NULL));
    ck_assert(g.fitted);
    ck_assert(!g.piecewise);
}
END_TEST

START_TEST(calib_fit_real_log_within_reported_error)
{
    /* System: the real 8 x A100 all_reduce_perf log. Expectation: predicting every point
     * with the model the fit reports gives errors no larger than its reported worst. */
    g_autoptr(ParoCalibLog) log = load_log("tests/data/calib/nccl-tests-a100-8-allreduce.txt");
    g_autoptr(GPtrArray) logs = g_ptr_array_new();
    g_ptr_array_add(logs, log);
    g_autoptr(ParoCalibFit) fit = paro_calib_fit_logs(logs, "bf16", NULL);
    ck_assert_int_eq(fit->colls->len, 1);
    const ParoCollFit *g = &g_array_index(fit->colls, ParoCollFit, 0);
    ck_assert(g->fitted);
    const ParoCollTable *t = g_ptr_array_index(log->colls, 0);
    double worst = 0, f = paro_coll_bus_factor(PARO_COLL_ALLREDUCE, 8);
    for (guint i = 0; i < t->points->len; i++) {
        const ParoCollPoint *p = &g_array_index(t->points, ParoCollPoint, i);
        const ParoAlphaBeta *ab = !g->piecewise                ? &g->fit
                                  : p->bytes <= g->break_bytes ? &g->below
                                                               : &g->above;
        double pred = paro_alpha_beta_predict_s(ab, f * p->bytes) * 1e6;
        worst = fmax(worst, fabs(pred - p->time_us) / p->time_us);
    }
    ck_assert_double_eq_tol(worst, g->piecewise ? g->combined.max_err : g->fit.max_err, 1e-12);
    /* Intra network from this one-node world group: step latency = alpha / 2(n-1). */
    ck_assert(fit->intra.present && !fit->inter.present);
    const ParoAlphaBeta *lat = g->piecewise ? &g->below : &g->fit;
    ck_assert_double_eq_tol(fit->intra.step_s, lat->alpha_s / 14, 1e-15);
}
END_TEST

START_TEST(calib_yaml_loads_back)
{
    const char *rels[] = {"validation/data/h100/2026-11-23_gemm-llama7b.txt",
                          "validation/data/h100/2026-11-23_hbm.txt",
                          "validation/data/h100/2026-11-23_coll-allreduce.txt",
                          "tests/data/calib/nccl-tests-a100-8-allreduce.txt",
                          "tests/data/calib/nccl-tests-h100-2x8-allreduce.txt"};
    g_autoptr(GPtrArray) logs = g_ptr_array_new_with_free_func((GDestroyNotify)paro_calib_log_free);
    for (guint i = 0; i < G_N_ELEMENTS(rels); i++)
        g_ptr_array_add(logs, load_log(rels[i]));
    g_autoptr(GError) error = NULL;
    g_autoptr(ParoCalibFit) fit = paro_calib_fit_logs(logs, "bf16", &error);
    ck_assert_msg(fit != NULL, "%s", error ? error->message : "");
    /* Oracle: awk over the llama7b log, sum(2MNK)/sum(t) of the bf16 rows = 750.8163 TFLOP/s;
     * the median of the five adam rows >= 256 MiB is the 268435456 row, 2776.27 GB/s. */
    ck_assert_double_eq_tol(fit->matmul_flops, 750.8163e12, 0.0005e12);
    g_autofree char *yaml = paro_calib_fit_to_yaml(fit);
    g_autofree char *path = g_build_filename(g_get_tmp_dir(), "paro-calib-XXXXXX.yaml", NULL);
    int fd = g_mkstemp(path);
    ck_assert(fd >= 0);
    close(fd);
    ck_assert(g_file_set_contents(path, yaml, -1, NULL));
    ParoCalibration c = {0};
    gboolean ok = paro_calib_load(path, &c, &error);
    g_unlink(path);
    ck_assert_msg(ok, "%s\n%s", error ? error->message : "", yaml);
    ck_assert(c.has_compute);
    ck_assert_double_eq_tol(c.matmul_flops, 750.8e12, 1e6);
    ck_assert_double_eq_tol(c.hbm_Bps, 2776.3e9, 1e6);
    ck_assert(c.intra.present && c.inter.present);
    ck_assert_int_eq(c.collectives->len, fit->colls->len);
    /* The fitted 8-rank group predicts; the 1-rank one, not fitted, does not. */
    ck_assert(
        !isnan(paro_calib_predict_coll_s(&c, PARO_COLL_ALLREDUCE, PARO_SCOPE_GLOBAL, 8, 1e6)));
    ck_assert(isnan(paro_calib_predict_coll_s(&c, PARO_COLL_ALLREDUCE, PARO_SCOPE_GLOBAL, 1, 1e6)));
    paro_calib_clear(&c);
}
END_TEST

START_TEST(calib_network_applies_to_topology)
{
    /* System: dgx-h100x8 (8 GPUs and 8 NICs per node, switch latency 1 us) with intra
     * 200 GB/s, 2 us per step and inter 40 GB/s, 5 us per step. Expectation (the mapping in
     * scenario/calibration.c): fabric 200 GB/s, fabric latency 0, step overhead 2 us, NIC
     * 40 GB/s x 8 / 8, NIC latency 5 - 2 - 1 = 2 us; then the closed-form intra ring of the
     * guideline (fabric latency + step overhead per step) over 8 GPUs is
     * 14 x 2 us + 14/8 x S / 200 GB/s (nccl-tests PERFORMANCE.md ring). */
    g_autofree char *tpath = paro_test_path("topologies/dgx-h100x8.yaml");
    g_autoptr(ParoTopology) t = paro_topology_load(tpath, NULL);
    ck_assert(t != NULL);
    ParoCalibration c = {
        .present = TRUE, .intra = {TRUE, 200e9, 2e-6}, .inter = {TRUE, 40e9, 5e-6}};
    ck_assert(paro_calib_apply_network(&c, t));
    ck_assert_double_eq(t->fabric.bandwidth_Bps, 200e9);
    ck_assert_double_eq(t->fabric.latency_s, 0);
    ck_assert_double_eq_tol(t->nccl.step_overhead_s, 2e-6, 1e-18);
    ck_assert_double_eq(paro_topology_inter_Bps(t), 40e9);
    ck_assert_double_eq_tol(t->nics.latency_s, 2e-6, 1e-15);
    ParoCommModel cm = {.n = 8,
                        .m = 8,
                        .gpus_per_node = 8,
                        .intra_Bps = t->fabric.bandwidth_Bps,
                        .intra_lat_s = t->fabric.latency_s + t->nccl.step_overhead_s};
    double s = 1 << 30;
    ck_assert_double_eq_tol(paro_coll_ring_s(&cm, PARO_COLL_ALLREDUCE, 8, 8, s),
                            14 * 2e-6 + 14.0 / 8 * s / 200e9, 1e-12);
}
END_TEST

/* An nccl-tests log of @op on @ranks GPUs over @nodes nodes of @t, sizes from @min_bytes to
 * 1 GiB by 4, whose times are NCCL's model with its latency x @a and its bandwidth x @b: what a
 * machine that runs NCCL's algorithms that much slower or faster would print. */
static char *synthetic_log(const ParoTopology *t, ParoCollKind op, gint64 ranks, gint64 nodes,
                           double a, double b, double min_bytes)
{
    ParoNcclSystem sys;
    paro_nccl_system_init(&sys, t, ranks, ranks / nodes);
    GString *text = g_string_new(NULL);
    g_string_append_printf(text,
                           "# corpus: ranks: %" G_GINT64_FORMAT " nodes: %" G_GINT64_FORMAT
                           "\n# corpus: op: %s\n"
                           "#       size         count      type   redop    root     time   algbw"
                           "   busbw #wrong\n",
                           ranks, nodes, paro_coll_kind_names[op]);
    for (double bytes = min_bytes; bytes <= 1 << 30; bytes *= 4) {
        ParoNcclAlgo algo;
        ParoNcclProto proto;
        double estimate, latency, transfer;
        ck_assert(paro_nccl_choose(&sys, op, bytes, 0, 0, &algo, &proto, &estimate));
        ck_assert(paro_nccl_terms(&sys, op, algo, proto, bytes, &latency, &transfer));
        double us = a * latency + transfer / b;
        g_string_append_printf(text, "%12.0f %13.0f %9s %7s %7d %14.6f %7.2f %7.2f %6d\n", bytes,
                               bytes / 4, "float", op == PARO_COLL_ALLGATHER ? "none" : "sum", -1,
                               us, bytes / us / 1e3, 0.0, 0);
    }
    return g_string_free(text, FALSE);
}

static ParoCalibLog *log_from_text(const char *text)
{
    g_autofree char *path = g_build_filename(g_get_tmp_dir(), "paro-nccl-XXXXXX.txt", NULL);
    int fd = g_mkstemp(path);
    ck_assert(fd >= 0);
    close(fd);
    ck_assert(g_file_set_contents(path, text, -1, NULL));
    g_autoptr(GError) error = NULL;
    ParoCalibLog *log = paro_calib_log_load(path, &error);
    g_unlink(path);
    ck_assert_msg(log != NULL, "%s", error ? error->message : "");
    return log;
}

START_TEST(calib_nccl_scales_are_recovered_and_carry_to_other_ops)
{
    /* Oracle by construction: AllReduce logs of a DGX H100 whose NCCL runs 1.7x slower in
     * latency and at 0.8x the bandwidth on one node, 2.5x and 0.65x across two, printed to
     * a microsecond's millionth; the fit must give back those four figures, and the
     * calibrated model must then time an AllGather log made the same way as it was made. */
    g_autofree char *tpath = paro_test_path("topologies/dgx-h100x8.yaml");
    g_autoptr(ParoTopology) t = paro_topology_load(tpath, NULL);
    ck_assert(t != NULL);
    g_autofree char *one = synthetic_log(t, PARO_COLL_ALLREDUCE, 8, 1, 1.7, 0.8, 1024);
    g_autofree char *two = synthetic_log(t, PARO_COLL_ALLREDUCE, 16, 2, 2.5, 0.65, 1024);
    g_autoptr(GPtrArray) logs = g_ptr_array_new_with_free_func((GDestroyNotify)paro_calib_log_free);
    g_ptr_array_add(logs, log_from_text(one));
    g_ptr_array_add(logs, log_from_text(two));
    ParoNcclScale sc[PARO_NCCL_N_CLASSES] = {{0}};
    g_autoptr(GError) error = NULL;
    ck_assert_msg(paro_calib_fit_nccl(logs, t, sc, &error), "%s", error ? error->message : "");
    ck_assert(sc[0].present && sc[1].present);
    ck_assert_double_eq_tol(sc[0].latency_scale, 1.7, 1e-6);
    ck_assert_double_eq_tol(sc[0].bandwidth_scale, 0.8, 1e-6);
    ck_assert_double_eq_tol(sc[1].latency_scale, 2.5, 1e-6);
    ck_assert_double_eq_tol(sc[1].bandwidth_scale, 0.65, 1e-6);
    ck_assert_int_eq(sc[0].points, 11);
    ck_assert(sc[1].max_error < 1e-6);

    /* the calibrated topology predicts an AllGather across two nodes as the machine runs it */
    ParoTopology calibrated = *t;
    paro_calib_apply_nccl(sc, &calibrated);
    g_autofree char *ag = synthetic_log(t, PARO_COLL_ALLGATHER, 16, 2, 2.5, 0.65, 1024);
    g_autoptr(ParoCalibLog) ag_log = log_from_text(ag);
    g_autoptr(GArray) rows = paro_calib_predict_log(ag_log, &calibrated, 0, 0);
    ck_assert_int_eq(rows->len, 11);
    for (guint i = 0; i < rows->len; i++) {
        const ParoPredictRow *r = &g_array_index(rows, ParoPredictRow, i);
        ck_assert_msg(fabs(r->predicted_us - r->measured_us) < 1e-5 * r->measured_us,
                      "%.0f B: %.6f us, made %.6f", r->bytes, r->predicted_us, r->measured_us);
    }
    /* A log of 64 MiB and more says nothing of latency (no row is latency-bound): it keeps
     * NCCL's figure, and the bandwidth takes up the 1.7x latency left in, within 3%. */
    g_autofree char *large = synthetic_log(t, PARO_COLL_ALLREDUCE, 8, 1, 1.7, 0.8, 64 << 20);
    g_autoptr(GPtrArray) large_logs =
        g_ptr_array_new_with_free_func((GDestroyNotify)paro_calib_log_free);
    g_ptr_array_add(large_logs, log_from_text(large));
    ParoNcclScale lsc[PARO_NCCL_N_CLASSES] = {{0}};
    ck_assert(paro_calib_fit_nccl(large_logs, t, lsc, &error));
    ck_assert(lsc[0].present && !lsc[1].present);
    ck_assert_double_eq(lsc[0].latency_scale, 1);
    ck_assert_double_eq_tol(lsc[0].bandwidth_scale, 0.8, 0.024);
    for (int i = 0; i < PARO_NCCL_N_CLASSES; i++) {
        paro_nccl_scale_clear(&sc[i]);
        paro_nccl_scale_clear(&lsc[i]);
    }
}
END_TEST

static Suite *calib_suite(void)
{
    Suite *s = suite_create("calib");
    TCase *tc = tcase_create("calib");
    tcase_add_test(tc, calib_parse_nccl_tests);
    tcase_add_test(tc, calib_parse_nccl_tests_alltoall);
    tcase_add_test(tc, calib_parse_harness);
    tcase_add_loop_test(tc, calib_bad_logs_are_located, 0, G_N_ELEMENTS(bad_logs));
    tcase_add_loop_test(tc, calib_bad_layers_and_records_are_located, 0, G_N_ELEMENTS(bad_inputs));
    tcase_add_test(tc, calib_corpus_folder_as_written);
    tcase_add_test(tc, calib_log_without_rows_is_not_predicted);
    tcase_add_test(tc, calib_fit_exact_line);
    tcase_add_test(tc, calib_fit_recovers_noisy_line);
    tcase_add_test(tc, calib_fit_real_log_within_reported_error);
    tcase_add_test(tc, calib_yaml_loads_back);
    tcase_add_test(tc, calib_network_applies_to_topology);
    tcase_add_test(tc, calib_nccl_scales_are_recovered_and_carry_to_other_ops);
    suite_add_tcase(s, tc);
    return s;
}

PARO_CHECK_MAIN(calib_suite)
