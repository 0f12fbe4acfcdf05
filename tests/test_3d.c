/* SPDX-License-Identifier: MIT */
/* Oracle tests of the 3D step (step/step-3d.c): TP collective time per layer, activations
 * with TP (Korthikanti), model states per GPU of a tp x pp x dp layout, and that the
 * scenario's layout keys leave a DP-only scenario as it was. */
#include <glib.h>
#include <math.h>

#include "check-main.h"
#include "run/run.h"
#include "step/step-private.h"

/* The NeoX scenario in GPT-NeoX's own layout (configs/20B.yml: tp 2 x pp 4, dp 24 at 192
 * GPUs), whatever layout the scenario file settles on; @sets come after. */
static ParoScenario *neox(const char *const *sets)
{
    g_autofree char *path = paro_test_path("scenarios/neox-20b_lassen-v100x4_3d.yaml");
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) all = g_ptr_array_new();
    g_ptr_array_add(all, "parallelism.tp=2");
    g_ptr_array_add(all, "parallelism.dp=24");
    for (guint i = 0; sets && sets[i]; i++)
        g_ptr_array_add(all, (gpointer)sets[i]);
    g_ptr_array_add(all, NULL);
    ParoScenario *s = paro_scenario_load(path, (const char *const *)all->pdata, &error);
    ck_assert_msg(s != NULL, "%s", error ? error->message : "");
    return s;
}

/* The step of @strategy on the NeoX scenario (GPT-NeoX's layout) with @sets. */
static ParoStepResult step_of(const char *strategy, const char *const *sets)
{
    g_autoptr(ParoScenario) s = neox(sets);
    g_autoptr(ParoScenarioDerived) g_derived = paro_scenario_derive(s);
    g_autoptr(ParoGuideline) g = paro_guideline_evaluate(g_derived);
    g_autoptr(GError) error = NULL;
    g_autoptr(ParoCollCache) cache = paro_coll_cache_new();
    ParoStepResult r;
    ck_assert_msg(paro_step_simulate(g->derived, paro_strategy_lookup(strategy), cache,
                                     &(ParoStepOptions){FALSE, TRUE}, &r, &error),
                  "%s", error ? error->message : "");
    return r;
}

/* The step of @strategy with one tensor @kind compressed: ratio 2, 100 GB/s each way, the
 * codec in series (chunk 0), the other kinds as they are. */
static ParoStepResult step_compressing(const char *strategy, const char *kind)
{
    g_autofree char *ratio = g_strdup_printf("compression.%s.ratio=2", kind);
    g_autofree char *comp = g_strdup_printf("compression.%s.compress=100 GB/s", kind);
    g_autofree char *decomp = g_strdup_printf("compression.%s.decompress=100 GB/s", kind);
    g_autofree char *chunk = g_strdup_printf("compression.%s.chunk=0", kind);
    const char *sets[] = {ratio, comp, decomp, chunk, NULL};
    return step_of(strategy, sets);
}

START_TEST(tp_layer_time_is_two_ring_allreduces)
{
    /* System: NeoX-20B, b = 4, s = 2048, h = 6144, fp16: S = b*s*h*2 = 100,663,296 bytes;
     * tp 2 on Lassen's NVLink (B' = 75 GB/s, alpha' = fabric latency + NCCL step overhead).
     * Expectation: a ring AllReduce over t GPUs sends 2(t-1)/t*S per GPU in 2(t-1) steps:
     * 2(t-1)*alpha' + 2(t-1)/t*S/B'; forward 2 of them, backward with full recomputation 4.
     * Tolerance: 1e-12 relative (the same double arithmetic in another order). */
    g_autoptr(ParoScenario) s = neox(NULL);
    ParoCommModel cm = paro_scenario_comm_model(s);
    double S = 4.0 * 2048 * 6144 * 2, t = 2;
    double one = 2 * (t - 1) * cm.intra_lat_s + 2 * (t - 1) / t * S / cm.intra_Bps;
    ParoStep3dComm fwd = paro_step3d_tp_layer(s, FALSE), bwd = paro_step3d_tp_layer(s, TRUE);
    ck_assert_double_eq_tol(fwd.time_s, 2 * one, 2 * one * 1e-12);
    ck_assert_double_eq_tol(bwd.time_s, 4 * one, 4 * one * 1e-12);
    ck_assert(fwd.codec_s == 0 && bwd.codec_s == 0 && bwd.saved_bytes == 0);
    /* Traffic: each AllReduce sends 2(t-1)/t*S = S per GPU at t = 2, so one micro-batch
     * moves 44 layers / pp 4 = 11 layers x (2 + 4) x S on a stage's GPU. */
}
END_TEST

START_TEST(activations_with_tp_follow_korthikanti)
{
    /* Expectation (Korthikanti et al. 2022, MLP 4h): per layer s*b*h*(10 + 24/t + 5as/(ht))
     * without sequence parallelism and s*b*h*(34/t + 5as/(ht)) with it; full recomputation
     * keeps 2*s*b*h (/t with sequence parallelism). Tolerance 1e-9 relative. */
    g_autoptr(ParoScenario) s = neox(NULL);
    const ParoModel *m = s->model;
    double b = 4, sq = 2048, h = 6144, a = 64, t = 2, sbh = sq * b * h;
    double want = sbh * (10 + 24 / t + 5 * a * sq / (h * t));
    double got = paro_model_activation_bytes_tp(m, 4, 2048, PARO_RECOMPUTE_NONE, 2, FALSE);
    ck_assert_double_eq_tol(got, want, want * 1e-9);
    want = sbh * (34 / t + 5 * a * sq / (h * t));
    got = paro_model_activation_bytes_tp(m, 4, 2048, PARO_RECOMPUTE_NONE, 2, TRUE);
    ck_assert_double_eq_tol(got, want, want * 1e-9);
    got = paro_model_activation_bytes_tp(m, 4, 2048, PARO_RECOMPUTE_FULL, 2, FALSE);
    ck_assert_double_eq_tol(got, 2 * sbh, 2 * sbh * 1e-9);
    ck_assert_double_eq_tol(
        paro_model_activation_bytes_tp(m, 4, 2048, PARO_RECOMPUTE_NONE, 1, FALSE),
        paro_model_activation_bytes(m, 4, 2048, PARO_RECOMPUTE_NONE), 1e-3);
}
END_TEST

START_TEST(model_states_of_a_stage_shard_over_dp)
{
    /* System: NeoX-20B (Psi = 20,554,567,680; untied embedding and head of V h =
     * 50432 x 6144 = 309,854,208 each, rotary), tp 2 x pp 4 x dp 24, fp16, K = 12, ZeRO-1.
     * Stage 0 holds a quarter of the rest and the input embedding (Megatron):
     * (Psi - 2 V h)/4 + V h = 4,983,714,816 + 309,854,208 = 5,293,569,024 parameters,
     * 2,646,784,512 on a TP rank. Expectation: params and grads 2 B each = 5,293,569,024 B;
     * optimizer 12 B / 24 = 1,323,392,256 B (compression.md 3.3's balanced figures are
     * 5.14 and 1.28 GB: 3 % less). The step's ledger carries them, and
     * 1F1B holds pp = 4 micro-batches on stage 0: activations 4 x 11 layers x 2*s*b*h (full
     * recomputation) + one layer's full activations while its backward recomputes. */
    g_autoptr(ParoScenario) s = neox(NULL);
    ck_assert_int_eq(paro_scenario_n_gpus(s), 24);
    double stage = 2646784512.0;
    ParoStepResult r = step_of("zero-1", NULL);
    ck_assert_double_eq_tol(r.at_peak.bytes[PARO_MEM_PARAMS], 2 * stage, 1);
    ck_assert_double_eq_tol(r.at_peak.bytes[PARO_MEM_GRADS], 2 * stage, 1);
    ck_assert_double_eq_tol(r.at_peak.bytes[PARO_MEM_OPTIMIZER], 12 * stage / 24, 1);
    double sbh = 2048.0 * 4 * 6144;
    double act = 4 * 11 * 2 * sbh + sbh * (10 + 12 + 5 * 64 * 2048 / (6144.0 * 2)) - 2 * sbh;
    ck_assert_double_eq_tol(r.at_peak.bytes[PARO_MEM_ACTIVATIONS], act, act * 1e-9);
    /* The step is at least the pipeline's ideal plus its bubble: (A + P - 1)/A x A
     * micro-batches, i.e. above the guideline's bubble formula less the p2p time. */
    ck_assert(r.step > 0 && paro_time_to_s(r.step) > 0.9 * r.guideline_s);
    paro_step_result_clear(&r);
}
END_TEST

START_TEST(compressed_tp_and_p2p_are_counted_per_call)
{
    /* System: NeoX-20B 3D scenario (tp 2, pp 4, A = 32, 11 layers a stage, full
     * recomputation), ZeRO-1, codecs in series (chunk 0), ratio 2, 100 GB/s each way.
     * TP ("activations"): S = 4 x 2048 x 6144 x 2 = 100,663,296 B per AllReduce over 2 GPUs;
     * codec S/theta_c + 2(1/2) S/theta_d = 2.01326592 ms (compress.c); calls per step
     * A x 11 x (2 forward + 4 backward) = 2112: 4.25201762304 s of codec; a 2-GPU ring
     * AllReduce sends S per GPU, half of it saved: 2112 x S/2 = 106,300,440,576 B.
     * PP ("pipeline"): a boundary message is S/tp = 50,331,648 B, codec 1.00663296 ms;
     * 1F1B sends (P-1) x M forward and as many backward = 192 messages over 4 devices,
     * 48 per device: 48.31838208 ms and 48 x 25,165,824 = 1,207,959,552 B saved.
     * Tolerance 1e-9 relative. (Both were once counted for one call a step.) Free codecs
     * with ratio 2 on both make the step faster. */
    ParoStepResult r = step_compressing("zero-1", "activations");
    ck_assert_double_eq_tol(r.compress_s, 4.25201762304, 4.25201762304 * 1e-9);
    ck_assert_double_eq_tol(r.bytes_saved, 106300440576.0, 106300440576.0 * 1e-9);
    paro_step_result_clear(&r);
    r = step_compressing("zero-1", "pipeline");
    ck_assert_double_eq_tol(r.compress_s, 0.04831838208, 0.04831838208 * 1e-9);
    ck_assert_double_eq_tol(r.bytes_saved, 1207959552.0, 1207959552.0 * 1e-9);
    paro_step_result_clear(&r);
    /* DP ("gradients") under ZeRO-2: each of the A = 32 micro-batches reduce-scatters the
     * stage's gradients, S = 2 x 2,646,784,512 = 5,293,569,024 B (stage 0, above) over
     * dp = 24: codec 23/24 S x 2/(100 GB/s) = 101.46007296 ms a call, 3.24672233472 s a
     * step; ZeRO-2 has no other gradient collective. */
    r = step_compressing("zero-2", "gradients");
    ck_assert_double_eq_tol(r.compress_s, 3.24672233472, 3.24672233472 * 1e-9);
    ck_assert(r.bytes_saved > 0);
    paro_step_result_clear(&r);
    const char *free_codecs[] = {"compression.activations.ratio=2", "compression.pipeline.ratio=2",
                                 NULL};
    ParoStepResult plain = step_of("zero-1", NULL), fast = step_of("zero-1", free_codecs);
    ck_assert(fast.step < plain.step && fast.compress_s == 0);
    paro_step_result_clear(&plain);
    paro_step_result_clear(&fast);
}
END_TEST

START_TEST(module_dp_collectives_overlap_and_prefetch)
{
    /* Hand derivation (prefetch 1 on uniform layers, across modules too): in steady state
     * each layer takes the longer of its compute and the next collective; the stream's
     * fill, the shorter of one layer's two, is paid once a step.
     * 4 layers, compute 10, collectives 4 (c 2.5, d 1): 4 x 2.5 = 10, fill 1.
     * Collectives 20 (d 5 > c): 4 x 5 = 20, fill 2.5. One layer, 2.5 and 1: 2.5, fill 1.
     * Without overlap, the sum and no fill; without collectives, the compute. */
    ck_assert_double_eq_tol(paro_step3d_module_s(10, 4, TRUE), 10, 1e-12);
    ck_assert_double_eq_tol(paro_step3d_dp_fill_s(10, 4, 4, TRUE), 1, 1e-12);
    ck_assert_double_eq_tol(paro_step3d_module_s(10, 20, TRUE), 20, 1e-12);
    ck_assert_double_eq_tol(paro_step3d_dp_fill_s(10, 20, 4, TRUE), 2.5, 1e-12);
    ck_assert_double_eq_tol(paro_step3d_module_s(2.5, 1, TRUE), 2.5, 1e-12);
    ck_assert_double_eq_tol(paro_step3d_dp_fill_s(2.5, 1, 1, TRUE), 1, 1e-12);
    ck_assert_double_eq_tol(paro_step3d_module_s(10, 4, FALSE), 14, 1e-12);
    ck_assert(paro_step3d_dp_fill_s(10, 4, 4, FALSE) == 0);
    ck_assert_double_eq_tol(paro_step3d_module_s(10, 0, TRUE), 10, 1e-12);
    ck_assert(paro_step3d_dp_fill_s(10, 0, 4, TRUE) == 0);

    /* In a step: ZeRO-3 on NeoX's layout gathers every micro-batch; overlapping them with
     * the layers can only shorten the step, and never below its compute. */
    const char *serial[] = {"training.overlap=false", NULL};
    ParoStepResult on = step_of("zero-3", NULL), off = step_of("zero-3", serial);
    ck_assert(on.step < off.step);
    ck_assert(paro_time_to_s(on.step) >= on.compute_s);
    paro_step_result_clear(&on);
    paro_step_result_clear(&off);
}
END_TEST

START_TEST(layout_keys_default_to_dp_only)
{
    /* tp = pp = 1 by default: n is every GPU and the step takes the DP-only path, whose
     * outputs the goldens pin byte for byte. */
    const char *sets[] = {"parallelism.tp=1", "parallelism.pp=1", "parallelism.dp=192",
                          "parallelism.group=4", NULL};
    g_autoptr(ParoScenario) s = neox(sets);
    ck_assert(!paro_scenario_is_3d(s));
    ck_assert_int_eq(paro_scenario_n_gpus(s), 192);
    ck_assert_int_eq(s->group, 4);
}
END_TEST

static Suite *three_d_suite(void)
{
    Suite *s = suite_create("3d");
    TCase *tc = tcase_create("oracle");
    tcase_add_test(tc, tp_layer_time_is_two_ring_allreduces);
    tcase_add_test(tc, activations_with_tp_follow_korthikanti);
    tcase_add_test(tc, model_states_of_a_stage_shard_over_dp);
    tcase_add_test(tc, compressed_tp_and_p2p_are_counted_per_call);
    tcase_add_test(tc, module_dp_collectives_overlap_and_prefetch);
    tcase_add_test(tc, layout_keys_default_to_dp_only);
    suite_add_tcase(s, tc);
    return s;
}

PARO_CHECK_MAIN(three_d_suite)
