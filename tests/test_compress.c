/* SPDX-License-Identifier: MIT */
/* Compression of collectives (compress/compress.c): the per-collective cost formulas by
 * hand, an identity compressor changing nothing, thresholds, presets and explicit keys,
 * and a whole ZeRO-3 step under qwZ computed by hand on the default scenario. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "fixtures.h"
#include "step/step.h"

#define REL(got, want, tol)                                                                        \
    ck_assert_msg(fabs((got) - (want)) <= (tol)*fabs(want), "%s = %.12g, want %.12g", #got,        \
                  (double)(got), (double)(want))

START_TEST(compress_cost_by_hand)
{
    /* S = 800 MB over k = 8 GPUs, ratio 2, theta_c = 100 GB/s, theta_d = 200 GB/s.
     * AllGather: own shard compressed once, 7 shards decompressed:
     *   100 MB / 100 GB/s + 700 MB / 200 GB/s = 1 ms + 3.5 ms = 4.5 ms; 400 MB on the wire.
     * ReduceScatter, per ring step decompress-reduce-recompress, 7 steps of 100 MB:
     *   700 MB * (1/100 + 1/200) s/GB = 7 ms + 3.5 ms = 10.5 ms.
     * AllReduce: 800 MB / 100 GB/s + 2 * 700 MB / 200 GB/s = 8 ms + 7 ms = 15 ms.
     * Send/receive: 8 ms + 4 ms = 12 ms.
     * AllToAll: the 7 parts of 100 MB it sends compressed, the 7 it receives decompressed:
     *   700 MB / 100 GB/s + 700 MB / 200 GB/s = 7 ms + 3.5 ms = 10.5 ms. */
    ParoCompressor c = {.enabled = TRUE,
                        .codec = "test",
                        .ratio = 2.0,
                        .compress_Bps = 100e9,
                        .decompress_Bps = 200e9,
                        .threshold_bytes = PARO_COMPRESS_THRESHOLD_BYTES};
    ParoCompressCost ag = paro_compress_cost(&c, PARO_COLL_ALLGATHER, 8, 800e6);
    ck_assert(ag.applied);
    REL(ag.wire_bytes, 400e6, 1e-15);
    REL(ag.codec_s, 4.5e-3, 1e-12);
    REL(paro_compress_cost(&c, PARO_COLL_REDUCESCATTER, 8, 800e6).codec_s, 10.5e-3, 1e-12);
    REL(paro_compress_cost(&c, PARO_COLL_ALLREDUCE, 8, 800e6).codec_s, 15e-3, 1e-12);
    REL(paro_compress_cost(&c, PARO_COLL_SENDRECV, 2, 800e6).codec_s, 12e-3, 1e-12);
    REL(paro_compress_cost(&c, PARO_COLL_ALLTOALL, 8, 800e6).codec_s, 10.5e-3, 1e-12);

    /* The identity: exactly S and 0, not merely close. */
    ParoCompressor id = paro_compress_identity();
    id.threshold_bytes = 0;
    ParoCompressCost same = paro_compress_cost(&id, PARO_COLL_ALLREDUCE, 32, 123456789.0);
    ck_assert(same.wire_bytes == 123456789.0 && same.codec_s == 0.0);
    ck_assert(paro_compress_time_s(&same, 0.25) == 0.25);
}
END_TEST

START_TEST(compress_pipelined_by_hand)
{
    /* Codec and transfer as a two-stage pipeline of D pieces (compress.c):
     * T = max(net, codec) + min(net, codec) / D.
     * Send of S = 100 MB, ratio 2, theta_c = theta_d = 100 GB/s, chunk 1 MB: codec = 1 ms +
     * 1 ms = 2 ms, D = 100. With a 3 ms transfer: 3 + 2/100 = 3.02 ms (in series: 5 ms);
     * with a 0.5 ms transfer: 2 + 0.5/100 = 2.005 ms.
     * AllReduce of S = 400 MB over k = 4: codec = 400 MB / 100 GB/s + 2 x 300 MB / 100 GB/s =
     * 4 + 6 = 10 ms; a GPU receives 2 x 3/4 x 400 MB (both passes), D = 600; with an 8 ms
     * transfer 10 + 8/600 ms = 10.01333... ms.
     * A chunk larger than the data is one piece: the serial sum. */
    ParoCompressor c = {.enabled = TRUE,
                        .codec = "test",
                        .ratio = 2.0,
                        .compress_Bps = 100e9,
                        .decompress_Bps = 100e9,
                        .threshold_bytes = 1e6,
                        .chunk_bytes = 1e6};
    ParoCompressCost send = paro_compress_cost(&c, PARO_COLL_SENDRECV, 2, 100e6);
    REL(send.codec_s, 2e-3, 1e-12);
    REL(send.pieces, 100.0, 0);
    REL(paro_compress_time_s(&send, 3e-3), 3.02e-3, 1e-12);
    REL(paro_compress_time_s(&send, 0.5e-3), 2.005e-3, 1e-12);
    ParoCompressCost ar = paro_compress_cost(&c, PARO_COLL_ALLREDUCE, 4, 400e6);
    REL(ar.codec_s, 10e-3, 1e-12);
    REL(ar.pieces, 600.0, 0);
    REL(paro_compress_time_s(&ar, 8e-3), 10e-3 + 8e-3 / 600, 1e-12);
    c.chunk_bytes = 0;
    ParoCompressCost serial = paro_compress_cost(&c, PARO_COLL_SENDRECV, 2, 100e6);
    REL(paro_compress_time_s(&serial, 3e-3), 5e-3, 1e-12);
    c.chunk_bytes = 1e9;
    ParoCompressCost one = paro_compress_cost(&c, PARO_COLL_SENDRECV, 2, 100e6);
    REL(one.pieces, 1.0, 0);
    REL(paro_compress_time_s(&one, 3e-3), 5e-3, 1e-12);
}
END_TEST

START_TEST(compress_threshold_is_respected)
{
    /* A collective of exactly the threshold is compressed; one byte less is not (and costs
     * nothing); a disabled compressor or a single GPU never compresses. */
    ParoCompressor c = {.enabled = TRUE,
                        .codec = "test",
                        .ratio = 4.0,
                        .compress_Bps = 1e12,
                        .decompress_Bps = 1e12,
                        .threshold_bytes = 1048576.0};
    ParoCompressCost at = paro_compress_cost(&c, PARO_COLL_REDUCESCATTER, 4, 1048576.0);
    ck_assert(at.applied && at.wire_bytes == 262144.0 && at.codec_s > 0);
    ParoCompressCost below = paro_compress_cost(&c, PARO_COLL_REDUCESCATTER, 4, 1048575.0);
    ck_assert(!below.applied && below.wire_bytes == 1048575.0 && below.codec_s == 0.0);
    ck_assert(!paro_compress_cost(&c, PARO_COLL_ALLGATHER, 1, 1e9).applied);
    c.enabled = FALSE;
    ck_assert(!paro_compress_cost(&c, PARO_COLL_ALLGATHER, 8, 1e9).applied);
    ck_assert(!paro_compress_cost(NULL, PARO_COLL_ALLGATHER, 8, 1e9).applied);

    /* In a step: qwZ with a threshold above every layer's gather is no compression at all. */
    const char *qwz_high[] = {"compression.preset=qwz", "compression.parameters.threshold=1 TB",
                              NULL};
    g_autoptr(ParoScenario) plain = paro_test_default_scenario(NULL);
    g_autoptr(ParoScenario) high = paro_test_default_scenario(qwz_high);
    g_autoptr(ParoScenarioDerived) gp_derived = paro_scenario_derive(plain);
    g_autoptr(ParoGuideline) gp = paro_guideline_evaluate(gp_derived);
    g_autoptr(ParoScenarioDerived) gh_derived = paro_scenario_derive(high);
    g_autoptr(ParoGuideline) gh = paro_guideline_evaluate(gh_derived);
    g_autoptr(ParoCollCache) cache = paro_coll_cache_new();
    const ParoStrategy *z3 = paro_strategy_lookup("zero-3");
    ParoStepResult a, b;
    ck_assert(
        paro_step_simulate(gp->derived, z3, cache, &(ParoStepOptions){FALSE, TRUE}, &a, NULL));
    ck_assert(
        paro_step_simulate(gh->derived, z3, cache, &(ParoStepOptions){FALSE, TRUE}, &b, NULL));
    ck_assert_int_eq(a.step, b.step);
    ck_assert(b.compress_s == 0 && b.bytes_saved == 0);
}
END_TEST

START_TEST(compress_identity_changes_nothing)
{
    /* Ratio 1 and infinite throughputs on every kind, threshold 0 so it applies to every
     * collective: the wire bytes are S exactly and the codec adds 0 ps, so every step time
     * is byte-identical to no compression, for every strategy, and the guideline too. */
    const char *identity[] = {"compression.parameters.ratio=1",
                              "compression.parameters.threshold=0",
                              "compression.gradients.ratio=1",
                              "compression.gradients.threshold=0",
                              "compression.optimizer.ratio=1",
                              "compression.optimizer.threshold=0",
                              "compression.activations.threshold=0",
                              "compression.pipeline.threshold=0",
                              NULL};
    g_autoptr(ParoScenario) plain = paro_test_default_scenario(NULL);
    g_autoptr(ParoScenario) same = paro_test_default_scenario(identity);
    ck_assert(paro_compress_is_active(&same->compression));
    g_autoptr(ParoScenarioDerived) gp_derived = paro_scenario_derive(plain);
    g_autoptr(ParoGuideline) gp = paro_guideline_evaluate(gp_derived);
    g_autoptr(ParoScenarioDerived) gs_derived = paro_scenario_derive(same);
    g_autoptr(ParoGuideline) gs = paro_guideline_evaluate(gs_derived);
    g_autoptr(ParoCollCache) cp = paro_coll_cache_new();
    g_autoptr(ParoCollCache) cs = paro_coll_cache_new();
    for (guint i = 0; i < paro_strategy_n_all(); i++) {
        const ParoStrategy *st = paro_strategy_get(i);
        ParoStepResult a, b;
        ck_assert(
            paro_step_simulate(gp->derived, st, cp, &(ParoStepOptions){FALSE, TRUE}, &a, NULL));
        ck_assert(
            paro_step_simulate(gs->derived, st, cs, &(ParoStepOptions){FALSE, TRUE}, &b, NULL));
        ck_assert_msg(a.step == b.step, "%s: %" G_GINT64_FORMAT " ps vs %" G_GINT64_FORMAT,
                      st->name, a.step, b.step);
        ck_assert(b.compress_s == 0 && b.bytes_saved == 0);
        ck_assert(paro_test_guideline_of(gp, st)->t_step == paro_test_guideline_of(gs, st)->t_step);
        ck_assert(paro_test_guideline_of(gp, st)->traffic_inter ==
                  paro_test_guideline_of(gs, st)->traffic_inter);
    }
}
END_TEST

START_TEST(compress_zero3_qwz_by_hand)
{
    /* Default scenario: LLaMA-7B, Psi = 6,738,415,616, bf16, n = 32 (4 nodes x 8), A = 10,
     * global ring; the ring leaves the node, so bw = min(B' = 300 GB/s, 8 x 1.5625 GB/s) =
     * 12.5 GB/s and lat = alpha = 9 us (analytic.c).
     * ZeRO-3 (GGG) per micro-step: AllGather(global, S) forward and backward and
     * ReduceScatter(global, S), S = 2 Psi = 13,476,831,232 B; no syncs.
     *   one collective: 31 x 9 us + 31/32 S / 12.5 GB/s = 279 us + 1.04445442048 s
     *                 = 1.04473342048 s;  t_comm = 30 of them = 31.3420026144 s.
     * qwZ (int8, ratio 2, 1 TB/s each way) on the 20 gathers: the bandwidth term halves
     * (0.52222721024 s) and the codec adds S/32/1e12 + 31/32 S/1e12 = S/1e12 =
     * 0.013476831232 s: a saving of 0.508750379008 s per gather, 10.17500758016 s per step:
     *   t_comm = 21.16699503424 s; compress time = 20 x 0.013476831232 = 0.26953662464 s.
     * Bytes saved per GPU (hierarchical accounting, 31/32 S per gather, half of it saved):
     *   20 x 6,527,840,128 = 130,556,802,560 B.
     * The simulated step (overlap on) must count the same codec time and bytes, and be
     * faster than without compression. */
    const char *qwz[] = {"compression.preset=qwz", NULL};
    g_autoptr(ParoScenario) plain = paro_test_default_scenario(NULL);
    g_autoptr(ParoScenario) comp = paro_test_default_scenario(qwz);
    g_autoptr(ParoScenarioDerived) gp_derived = paro_scenario_derive(plain);
    g_autoptr(ParoGuideline) gp = paro_guideline_evaluate(gp_derived);
    g_autoptr(ParoScenarioDerived) gc_derived = paro_scenario_derive(comp);
    g_autoptr(ParoGuideline) gc = paro_guideline_evaluate(gc_derived);
    const ParoStrategy *z3 = paro_strategy_lookup("zero-3");
    REL(paro_test_guideline_of(gp, z3)->t_comm, 31.3420026144, 1e-9);
    REL(paro_test_guideline_of(gc, z3)->t_comm, 21.16699503424, 1e-9);
    REL(paro_test_guideline_of(gc, z3)->t_compress, 0.26953662464, 1e-9);
    REL(paro_test_guideline_of(gc, z3)->bytes_saved, 130556802560.0, 1e-12);

    /* One cache serves both scenarios (it is keyed by wire bytes), as in a sweep. */
    g_autoptr(ParoCollCache) cache = paro_coll_cache_new();
    ParoStepResult a, b;
    ck_assert(
        paro_step_simulate(gp->derived, z3, cache, &(ParoStepOptions){FALSE, TRUE}, &a, NULL));
    ck_assert(
        paro_step_simulate(gc->derived, z3, cache, &(ParoStepOptions){FALSE, TRUE}, &b, NULL));
    REL(b.compress_s, 0.26953662464, 1e-9);
    REL(b.bytes_saved, 130556802560.0, 1e-9);
    ck_assert(b.step < a.step);
    g_autoptr(ParoCollCache) fresh = paro_coll_cache_new();
    ParoStepResult c;
    ck_assert(
        paro_step_simulate(gc->derived, z3, fresh, &(ParoStepOptions){FALSE, TRUE}, &c, NULL));
    ck_assert_int_eq(b.step, c.step);
}
END_TEST

START_TEST(compress_step_without_overlap_equals_closed_form)
{
    /* As test_step's oracle (flow model), with compression: overlap off, no latencies, A = 3,
     * codecs in series (chunk 0; the ZeRO++ presets are already): the step is the sum of its tasks,
     * each per-layer collective at its wire size plus a codec time linear in S, so it adds
     * up to the guideline's t_comp + t_comm, for every strategy, under each preset.
     * Tolerance 1e-6 (each task rounds up to the picosecond). */
    const char *presets[] = {"naive", "hybrid", "qwz", "qgz", "zeropp"};
    for (guint p = 0; p < G_N_ELEMENTS(presets); p++) {
        g_autofree char *preset = g_strdup_printf("compression.preset=%s", presets[p]);
        gboolean mvapich = p < 2;
        const char *sets[] = {"collectives.model=flow", "training.overlap=false",
                              "topology.node.fabric.latency=0", "topology.node.nics.latency=0",
                              "topology.network.latency=0", "training.accumulation=3", preset,
                              /* NULL ends the list for the (serial) ZeRO++ presets */
                              mvapich ? "compression.parameters.chunk=0" : NULL,
                              "compression.gradients.chunk=0", "compression.optimizer.chunk=0",
                              NULL};
        g_autoptr(ParoScenario) s = paro_test_default_scenario(sets);
        g_autoptr(ParoScenarioDerived) g_derived = paro_scenario_derive(s);
        g_autoptr(ParoGuideline) g = paro_guideline_evaluate(g_derived);
        g_autoptr(ParoCollCache) cache = paro_coll_cache_new();
        for (guint i = 0; i < paro_strategy_n_all(); i++) {
            const ParoStrategy *st = paro_strategy_get(i);
            ParoStepResult r;
            ck_assert(paro_step_simulate(g->derived, st, cache, &(ParoStepOptions){FALSE, TRUE}, &r,
                                         NULL));
            const ParoStrategyResult *want = paro_test_guideline_of(g, st);
            double got = paro_time_to_s(r.step);
            ck_assert_msg(fabs(got - want->t_serial) <= 1e-6 * want->t_serial,
                          "%s %s: simulated %.9g, closed form %.9g", presets[p], st->name, got,
                          want->t_serial);
            REL(r.compress_s, want->t_compress, 1e-9);
            REL(r.bytes_saved, want->bytes_saved, 1e-9);
        }
    }
}
END_TEST

START_TEST(compress_presets_parse)
{
    /* Each preset by name; what each compresses, with which ratio. */
    static const struct {
        const char *name;
        double ratio[PARO_TENSOR_N]; /* 0: off */
    } want[] = {
        {"none", {0, 0, 0, 0, 0}}, {"naive", {2, 2, 2, 2, 2}}, {"hybrid", {1.2, 2, 1.2, 1.2, 1.2}},
        {"qwz", {2, 0, 0, 0, 0}},  {"qgz", {0, 4, 0, 0, 0}},   {"zeropp", {2, 4, 0, 0, 0}},
    };
    for (guint p = 0; p < G_N_ELEMENTS(want); p++) {
        g_autofree char *set = g_strdup_printf("compression.preset=%s", want[p].name);
        const char *sets[] = {set, NULL};
        g_autoptr(ParoScenario) s = paro_test_default_scenario(sets);
        ck_assert_str_eq(paro_compress_preset_names[s->compression.preset], want[p].name);
        for (int k = 0; k < PARO_TENSOR_N; k++) {
            const ParoCompressor *c = &s->compression.kinds[k];
            ck_assert_msg(c->enabled == (want[p].ratio[k] > 0), "%s %s", want[p].name,
                          paro_tensor_kind_names[k]);
            if (c->enabled)
                ck_assert(c->ratio == want[p].ratio[k] && c->threshold_bytes == 1048576.0);
        }
    }
    /* Explicit keys over a preset change only what they name; `none` turns a kind off. */
    const char *tuned[] = {"compression.preset=zeropp",
                           "compression.parameters.threshold=4 MiB",
                           "compression.gradients=none",
                           "compression.optimizer.ratio=3/2",
                           "compression.optimizer.compress=200 GB/s",
                           NULL};
    g_autoptr(ParoScenario) s = paro_test_default_scenario(tuned);
    const ParoCompressor *par = &s->compression.kinds[PARO_TENSOR_PARAMETERS];
    ck_assert(par->enabled && par->ratio == 2 && par->threshold_bytes == 4194304.0 &&
              par->compress_Bps == 1e12);
    ck_assert(!s->compression.kinds[PARO_TENSOR_GRADIENTS].enabled);
    const ParoCompressor *opt = &s->compression.kinds[PARO_TENSOR_OPTIMIZER];
    ck_assert(opt->enabled && opt->ratio == 1.5 && opt->compress_Bps == 200e9 &&
              isinf(opt->decompress_Bps) && !opt->lossless);
    /* Without a preset, only the explicit kinds compress. */
    const char *only[] = {"compression.gradients.ratio=4", "compression.gradients.lossless=true",
                          NULL};
    g_autoptr(ParoScenario) o = paro_test_default_scenario(only);
    ck_assert_int_eq(o->compression.preset, PARO_COMPRESS_CUSTOM);
    ck_assert(!o->compression.kinds[PARO_TENSOR_PARAMETERS].enabled);
    ck_assert(o->compression.kinds[PARO_TENSOR_GRADIENTS].lossless);
}
END_TEST

START_TEST(compress_bad_values_are_located)
{
    static const struct {
        const char *set;
        int code, column;
    } bad[] = {
        {"compression.preset=zfp", PARO_CONFIG_ERROR_RANGE, 20},
        {"compression.parameters.ratio=0.5", PARO_CONFIG_ERROR_RANGE, 30},
        {"compression.gradients.compress=-1 GB/s", PARO_CONFIG_ERROR_RANGE, 32},
        {"compression.gradients.decompress=0 GB/s", PARO_CONFIG_ERROR_RANGE, 34},
        {"compression.gradients.threshold=-1 MiB", PARO_CONFIG_ERROR_RANGE, 33},
        {"compression.weights.ratio=2", PARO_CONFIG_ERROR_UNKNOWN_KEY, 13},
    };
    g_autofree char *path = paro_test_path("scenarios/llama-7b_a100x8-100g_n32.yaml");
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        const char *sets[] = {bad[i].set, NULL};
        g_autoptr(GError) error = NULL;
        g_autoptr(ParoScenario) s = paro_scenario_load(path, sets, &error);
        ck_assert_msg(s == NULL, "'%s' accepted", bad[i].set);
        ck_assert_msg(g_error_matches(error, PARO_CONFIG_ERROR, bad[i].code), "%s: %s", bad[i].set,
                      error->message);
        const ParoConfigErrorPrivate *loc = paro_config_error_get_location(error);
        ck_assert_msg(loc->column == bad[i].column, "%s: column %d, want %d (%s)", bad[i].set,
                      loc->column, bad[i].column, error->message);
    }
}
END_TEST

static Suite *compress_suite(void)
{
    Suite *s = suite_create("compress");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, compress_cost_by_hand);
    tcase_add_test(tc, compress_threshold_is_respected);
    tcase_add_test(tc, compress_identity_changes_nothing);
    tcase_add_test(tc, compress_zero3_qwz_by_hand);
    tcase_add_test(tc, compress_pipelined_by_hand);
    tcase_add_test(tc, compress_step_without_overlap_equals_closed_form);
    tcase_add_test(tc, compress_presets_parse);
    tcase_add_test(tc, compress_bad_values_are_located);
    suite_add_tcase(s, tc);
    return s;
}

PARO_CHECK_MAIN(compress_suite)
