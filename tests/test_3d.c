/* SPDX-License-Identifier: MIT */
/* Oracle tests of the step with tensor and pipeline parallelism (step/step-build.c): TP
 * collective time per layer, activations with TP (Korthikanti), model states per GPU of a
 * tp x pp x dp layout, compression counted per call, a DP collective and a pipeline send
 * sharing a NIC, and that the scenario's layout keys leave a DP-only scenario as it was. */
#include <glib.h>
#include <math.h>

#include "check-main.h"
#include "fixtures.h"
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

/* @a and @b are the same step to the picosecond and the byte: step, peak, compute, comm. */
static void assert_same_step(ParoStepResult a, ParoStepResult b)
{
    ck_assert_int_eq(a.step, b.step);
    ck_assert(a.peak_bytes == b.peak_bytes && a.compute == b.compute && a.comm == b.comm);
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
    g_autoptr(ParoCollCache) cache = paro_coll_cache_new();
    ParoStepComm fwd, bwd, kept;
    ck_assert(paro_step_tp_layer(s, &s->compression, cache, FALSE, FALSE, &fwd, NULL));
    ck_assert(paro_step_tp_layer(s, &s->compression, cache, TRUE, TRUE, &bwd, NULL));
    ck_assert(paro_step_tp_layer(s, &s->compression, cache, TRUE, FALSE, &kept, NULL));
    ck_assert_double_eq_tol(paro_time_to_s(fwd.time), 2 * one, 2 * one * 1e-9);
    ck_assert_double_eq_tol(paro_time_to_s(bwd.time), 4 * one, 4 * one * 1e-9);
    /* a layer that full recomputation skips (recompute_every) runs the backward's two only */
    ck_assert_double_eq_tol(paro_time_to_s(kept.time), 2 * one, 2 * one * 1e-9);
    ck_assert(fwd.codec_s == 0 && bwd.codec_s == 0 && bwd.saved_bytes == 0);
    /* Traffic: each AllReduce sends 2(t-1)/t*S = S per GPU at t = 2, so one micro-batch
     * moves 44 layers / pp 4 = 11 layers x (2 + 4) x S on a stage's GPU. */
}
END_TEST

START_TEST(tp_overlap_leaves_one_chunk_exposed)
{
    /* System: the NeoX scenario (tp 2, pp 4) with framework.tp_overlap: its TP collectives
     * split into tp chunks, each hidden behind the product on the chunk before (Megatron-Core
     * tp_comm_overlap with userbuffers).
     * Expectation, derived by hand: a pass whose collectives take t and whose products take
     * G >= t (1 - 1/tp) leaves t / tp exposed, so at tp 2 half; one whose products are
     * shorter leaves t - G. Here: a forward of t = 10 ms against 30 ms of products leaves
     * 5 ms; against 3 ms, 7 ms; a backward under full recomputation counts the recomputed
     * forward's products too (G = backward's + forward's). In the step, the overlapped
     * collectives make it shorter. */
    g_autoptr(ParoScenario) s = neox(NULL);
    ParoLayerCost lc = {.gemm_s = 0.090, .gemm_forward_s = 0.030};
    ParoTime t = paro_time_from_s(0.010);
    ck_assert_int_eq(paro_step_tp_exposed(s, &lc, TRUE, t), paro_time_from_s(0.005));
    lc.gemm_forward_s = 0.003;
    ck_assert_int_eq(paro_step_tp_exposed(s, &lc, TRUE, t), paro_time_from_s(0.007));
    lc = (ParoLayerCost){.gemm_s = 0.008, .gemm_forward_s = 0.002};
    ck_assert_int_eq(s->training.recompute, PARO_RECOMPUTE_FULL);
    ck_assert_int_eq(paro_step_tp_exposed(s, &lc, FALSE, t), paro_time_from_s(0.005));

    const char *on[] = {"framework.tp_overlap=true", NULL};
    ParoStepResult plain = step_of("zero-1", NULL), overlap = step_of("zero-1", on);
    ck_assert_msg(overlap.step < plain.step, "%" G_GINT64_FORMAT " vs %" G_GINT64_FORMAT,
                  overlap.step, plain.step);
}
END_TEST

START_TEST(tp_async_dgrad_hides_behind_weight_gradients)
{
    /* System: the NeoX scenario (tp 2 on Lassen's NVLink, b = 4, s = 2048, h = 6144, four
     * heads' worth of q, k, v each h wide, a plain MLP of 4h): the column-parallel products
     * are QKV (3h^2, a quarter of the layer's forward product FLOPs 12h^2) and the MLP's
     * first (4h^2, a third).
     * Expectation, derived by hand (decision 58): without sequence parallelism each column
     * product's input-gradient AllReduce (one ring AllReduce, `one` below, as in the test
     * above) runs beside its weight-gradient product, which takes that product's share of
     * the forward products G; exposed: sum over the two of max(0, one - share x G). G large:
     * nothing; G = 0: both, 2 one; G = 2 one: (1 - 1/2) one + (1 - 2/3) one = 5/6 one. With
     * sequence parallelism the row products' two gathers stay (2 ag), each column product's
     * ReduceScatter hides behind its weight gradient and its input's re-gather behind its
     * input gradient: G large leaves 2 ag; G = 0 leaves 4 ag + 2 rs; a frozen LoRA base has
     * no weight gradient, so G large leaves 2 ag + 2 rs. A ring AllGather or ReduceScatter
     * over t sends (t-1)/t S in t-1 steps. Tolerance 1e-9 relative (picoseconds). */
    g_autoptr(ParoScenario) s = neox(NULL);
    ParoCommModel cm = paro_scenario_comm_model(s);
    double S = 4.0 * 2048 * 6144 * 2, t = 2;
    double one = 2 * (t - 1) * cm.intra_lat_s + 2 * (t - 1) / t * S / cm.intra_Bps;
    double half = (t - 1) * cm.intra_lat_s + (t - 1) / t * S / cm.intra_Bps;
    ParoComputeSetup c = {.trainable_share = 1};
    ParoLayerCost lc = {.gemm_forward_s = 1.0};
    ck_assert_int_eq(paro_step_tp_backward_async(s, &s->compression, &c, &lc), 0);
    lc.gemm_forward_s = 0;
    ck_assert_double_eq_tol(
        paro_time_to_s(paro_step_tp_backward_async(s, &s->compression, &c, &lc)), 2 * one,
        1e-9 * one);
    lc.gemm_forward_s = 2 * one;
    ck_assert_double_eq_tol(
        paro_time_to_s(paro_step_tp_backward_async(s, &s->compression, &c, &lc)), 5.0 / 6.0 * one,
        1e-9 * one);
    s->sequence_parallel = TRUE;
    lc.gemm_forward_s = 1.0;
    ck_assert_double_eq_tol(
        paro_time_to_s(paro_step_tp_backward_async(s, &s->compression, &c, &lc)), 2 * half,
        1e-9 * one);
    lc.gemm_forward_s = 0;
    ck_assert_double_eq_tol(
        paro_time_to_s(paro_step_tp_backward_async(s, &s->compression, &c, &lc)), 6 * half,
        1e-9 * one);
    c.lora_targets = 1;
    lc.gemm_forward_s = 1.0;
    ck_assert_double_eq_tol(
        paro_time_to_s(paro_step_tp_backward_async(s, &s->compression, &c, &lc)), 4 * half,
        1e-9 * one);

    /* In the step: Megatron-LM after 2021-09 (the profile's default) is faster than its v2.5
     * (SC'21's tag), which runs them in series, and the key overrides the version (v2.5's
     * gradient accumulation, decision 59, turned off on both sides). */
    const char *now[] = {"framework=megatron", "framework.grad_passes=false", NULL};
    const char *v25[] = {"framework=megatron", "framework.version=2.5",
                         "framework.grad_passes=false", NULL};
    const char *forced[] = {"framework=megatron", "framework.version=2.5",
                            "framework.grad_passes=false", "framework.tp_async_dgrad=true", NULL};
    ParoStepResult a = step_of("zero-1", now), b = step_of("zero-1", v25),
                   f = step_of("zero-1", forced);
    ck_assert_msg(a.step < b.step, "%" G_GINT64_FORMAT " vs %" G_GINT64_FORMAT, a.step, b.step);
    ck_assert_int_eq(f.step, a.step);
}
END_TEST

START_TEST(activations_with_tp_follow_korthikanti)
{
    /* Expectation (Korthikanti et al. 2022, MLP 4h): per layer s*b*h*(10 + 24/t + 5as/(ht))
     * without sequence parallelism and s*b*h*(34/t + 5as/(ht)) with it; full recomputation
     * keeps 2*s*b*h (/t with sequence parallelism). Tolerance 1e-9 relative. */
    g_autoptr(ParoScenario) s = neox(NULL);
    ParoModel *m = s->model;
    m->attention_dropout = m->hidden_dropout = 0.1; /* Korthikanti's count has dropout */
    double b = 4, sq = 2048, h = 6144, a = 64, t = 2, sbh = sq * b * h;
    double want = sbh * (10 + 24 / t + 5 * a * sq / (h * t));
    double got = paro_model_activation_bytes_tp(m, 4, 2048, PARO_RECOMPUTE_NONE,
                                                PARO_ATTENTION_EAGER, TRUE, 2, FALSE);
    ck_assert_double_eq_tol(got, want, want * 1e-9);
    want = sbh * (34 / t + 5 * a * sq / (h * t));
    got = paro_model_activation_bytes_tp(m, 4, 2048, PARO_RECOMPUTE_NONE, PARO_ATTENTION_EAGER,
                                         TRUE, 2, TRUE);
    ck_assert_double_eq_tol(got, want, want * 1e-9);
    got = paro_model_activation_bytes_tp(m, 4, 2048, PARO_RECOMPUTE_FULL, PARO_ATTENTION_EAGER,
                                         TRUE, 2, FALSE);
    ck_assert_double_eq_tol(got, 2 * sbh, 2 * sbh * 1e-9);
    ck_assert_double_eq_tol(
        paro_model_activation_bytes_tp(m, 4, 2048, PARO_RECOMPUTE_NONE, PARO_ATTENTION_EAGER, TRUE,
                                       1, FALSE),
        paro_model_activation_bytes(m, 4, 2048, PARO_RECOMPUTE_NONE, PARO_ATTENTION_EAGER, TRUE),
        1e-3);
}
END_TEST

START_TEST(model_states_of_a_stage_shard_over_dp)
{
    /* System: NeoX-20B (Psi = 20,554,567,680; untied embedding and head of V h =
     * 50432 x 6144 = 309,854,208 each, final layer norm 2h = 12,288, rotary), tp 2 x pp 4
     * x dp 24, fp16, K = 12, ZeRO-1. A layer has (Psi - 2 V h - 2 h)/44 = 453,064,704
     * parameters. Stage 0 holds 11 layers and the input embedding (Megatron), 11 x
     * 453,064,704 + 309,854,208 = 5,293,565,952 parameters, 2,646,782,976 on a TP rank;
     * it holds the most memory (the last stage has the head, 2h more, but 1F1B keeps one
     * micro-batch there against pp = 4 on stage 0). Expectation: params and grads 2 B each
     * = 5,293,565,952 B; optimizer 12 B / 24 = 1,323,391,488 B (compression.md 3.3's
     * balanced figures are 5.14 and 1.28 GB: 3 % less). The ledger of stage 0 carries them,
     * and 1F1B holds pp = 4 micro-batches there: activations 4 x 11 layers x 2*s*b*h (full
     * recomputation) + one layer's full activations while its backward recomputes:
     * Korthikanti's s*b*h (10 + 24/t + 5as/(ht)) less what dropout keeps, since NeoX-20B
     * trained without (the model file names none): the two hidden masks (2, replicated)
     * and 3 of the 5 score bytes (Megatron's fused softmax keeps only its output). */
    g_autoptr(ParoScenario) s = neox(NULL);
    ck_assert_int_eq(paro_scenario_dp_ranks(s), 24);
    double stage = 2646782976.0;
    ParoStepResult r = step_of("zero-1", NULL);
    ck_assert_uint_eq(r.stages, 4);
    ck_assert_uint_eq(r.fullest, 0);
    ck_assert_double_eq_tol(r.at_peak.bytes[PARO_MEM_PARAMS], 2 * stage, 1);
    ck_assert_double_eq_tol(r.at_peak.bytes[PARO_MEM_GRADS], 2 * stage, 1);
    ck_assert_double_eq_tol(r.at_peak.bytes[PARO_MEM_OPTIMIZER], 12 * stage / 24, 1);
    double sbh = 2048.0 * 4 * 6144;
    double act = 4 * 11 * 2 * sbh + sbh * (8 + 12 + 2 * 64 * 2048 / (6144.0 * 2)) - 2 * sbh;
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
     * recomputation), ZeRO-1, codecs in series (chunk 0), ratio 2, 100 GB/s each way. The
     * figures are the busiest stage's: the last (its layers carry the head's matmul).
     * TP ("activations"): S = 4 x 2048 x 6144 x 2 = 100,663,296 B per AllReduce over 2 GPUs;
     * codec S/theta_c + 2(1/2) S/theta_d = 2.01326592 ms (compress.c); calls per step
     * A x 11 x (2 forward + 4 backward) = 2112: 4.25201762304 s of codec; a 2-GPU ring
     * AllReduce sends S per GPU, half of it saved: 2112 x S/2 = 106,300,440,576 B.
     * PP ("pipeline"): a boundary message is S/tp = 50,331,648 B, codec 1.00663296 ms,
     * counted on its sender; the last stage sends one gradient a micro-batch, 32 in all:
     * 32.21225472 ms and 32 x 25,165,824 = 805,306,368 B saved.
     * Tolerance 1e-9 relative. (Both were once counted for one call a step.) Free codecs
     * with ratio 2 on both make the step faster. */
    ParoStepResult r = step_compressing("zero-1", "activations");
    ck_assert_uint_eq(r.busiest, 3);
    ck_assert_double_eq_tol(r.compress_s, 4.25201762304, 4.25201762304 * 1e-9);
    ck_assert_double_eq_tol(r.bytes_saved, 106300440576.0, 106300440576.0 * 1e-9);
    paro_step_result_clear(&r);
    r = step_compressing("zero-1", "pipeline");
    ck_assert_double_eq_tol(r.compress_s, 0.03221225472, 0.03221225472 * 1e-9);
    ck_assert_double_eq_tol(r.bytes_saved, 805306368.0, 805306368.0 * 1e-9);
    paro_step_result_clear(&r);
    /* DP ("gradients") under ZeRO-2: each of the A = 32 micro-batches reduce-scatters the
     * last stage's gradients (11 layers, the head V h and the final norm 2h: 5,293,578,240
     * parameters, 2,646,789,120 a TP rank), S = 5,293,578,240 B over dp = 24, a layer's
     * share at a time (the codec is linear in S, in series): 23/24 S x 2/(100 GB/s) =
     * 101.4602496 ms a micro-batch, 3.2467279872 s a step; ZeRO-2 has no other gradient
     * collective. */
    r = step_compressing("zero-2", "gradients");
    ck_assert_double_eq_tol(r.compress_s, 3.2467279872, 3.2467279872 * 1e-9);
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

START_TEST(module_dp_collectives_overlap)
{
    /* ZeRO-3 on NeoX's layout gathers every micro-batch; overlapping them with the layers
     * can only shorten the step, and never below its compute. */
    const char *serial[] = {"training.overlap=false", NULL};
    ParoStepResult on = step_of("zero-3", NULL), off = step_of("zero-3", serial);
    ck_assert(on.step < off.step);
    ck_assert(paro_time_to_s(on.step) >= on.compute_s);
    /* with overlap off, collectives are still communication, not compute */
    ck_assert(off.comm_s > 0 && off.compute_s < paro_time_to_s(off.step));
    paro_step_result_clear(&on);
    paro_step_result_clear(&off);
}
END_TEST

START_TEST(send_and_reduce_scatter_share_a_nic)
{
    /* System: the default scenario cut to 2 layers, 4 nodes of 8 A100 (one 100 Gb/s NIC a
     * node), pp 2 x dp 16 (a stage on 2 nodes), ZeRO-2, A = 1. Stage 1's backward of layer 1
     * ends at t0; at t0 it both sends the gradient to stage 0 (p2p, alone T_p with share
     * u_p of the GPU's NIC share) and reduce-scatters the layer's gradients over the 16 DP
     * ranks (alone T_r, share u_r). Expectation (progressive filling, taskgraph.h): while
     * both run, the NIC share is oversubscribed (u_p + u_r > 1) and both go at 1/(u_p + u_r);
     * the send, the shorter, ends at t0 + T_p (u_p + u_r), and stage 0's backward of layer 0
     * starts then: the step's critical path grows by T_p u_r. Tolerance 2 ps (rounding). */
    const char *sets[] = {
        "model.architecture.layers=2", "topology.nodes=4",        "parallelism.pp=2",
        "parallelism.dp=16",           "training.accumulation=1", NULL};
    g_autoptr(ParoScenario) s = paro_test_default_scenario(sets);
    g_autoptr(ParoScenarioDerived) d = paro_scenario_derive(s);
    g_autoptr(ParoCollCache) cache = paro_coll_cache_new();
    const ParoStrategy *st = paro_strategy_lookup("zero-2");
    ParoStepComm send = paro_step_p2p(s, &s->compression, FALSE), rs;
    g_autoptr(GArray) calls = g_array_new(FALSE, FALSE, sizeof(ParoCollCall));
    paro_strategy_collectives(st, &d->sizes, calls);
    const ParoCollCall *reduce = NULL;
    for (guint i = 0; i < calls->len; i++)
        if (g_array_index(calls, ParoCollCall, i).phase == PARO_PHASE_GRADIENT)
            reduce = &g_array_index(calls, ParoCollCall, i);
    ck_assert_ptr_nonnull(reduce);
    double w1 = g_array_index(d->layers, ParoLayerCost, 1).weight_share;
    ck_assert(
        paro_step_dp_coll(s, &s->compression, cache, reduce, reduce->size_bytes * w1, &rs, NULL));
    ck_assert(send.inter_share + rs.inter_share > 1 && send.time < rs.time);

    ParoStepResult r;
    ck_assert(paro_step_simulate(d, st, cache, &(ParoStepOptions){TRUE, TRUE}, &r, NULL));
    const ParoTraceTask *p2p = NULL, *b0 = NULL, *rs1 = NULL;
    for (guint i = 0; i < r.trace->len; i++) {
        const ParoTraceTask *t = &g_array_index(r.trace, ParoTraceTask, i);
        if (t->device == 1 && g_str_equal(t->name, "p2p"))
            p2p = t;
        if (t->device == 1 && g_str_equal(t->name, "reducescatter") && t->layer == 1)
            rs1 = t;
        if (t->device == 0 && g_str_equal(t->name, "backward") && t->layer == 0)
            b0 = t;
    }
    ck_assert(p2p && b0 && rs1 && p2p->start == rs1->start);
    double u = send.inter_share + rs.inter_share;
    double want = (double)send.time * u;
    ck_assert_msg(fabs((double)(p2p->end - p2p->start) - want) <= 2,
                  "send took %" G_GINT64_FORMAT " ps, predicted %.1f", p2p->end - p2p->start, want);
    ck_assert_int_eq(b0->start, p2p->end);
    /* the reduce-scatter did T_p of its T_r units by then (T_p u at 1/u), the rest alone:
     * it ends T_p u + T_r - T_p after it started */
    double rs_want = (double)rs.time + (double)send.time * (u - 1);
    ck_assert_msg(fabs((double)(rs1->end - rs1->start) - rs_want) <= 2,
                  "%" G_GINT64_FORMAT " vs %.1f", rs1->end - rs1->start, rs_want);
    paro_step_result_clear(&r);
}
END_TEST

START_TEST(stages_sharing_a_node_send_within_it)
{
    /* System: the default scenario (LLaMA-7B, 2 layers a stage here) on 2 nodes of 8 A100,
     * tp 1 x pp 4 x dp 4, Megatron's order (TP, then DP, then PP): a node holds two whole
     * stages, 0-1 and 2-3 (NeMo 24.07's Llama 2 13B layout). Expectation: a stage's 4 DP
     * ranks are one node's (the DP view: 1 node of 4 GPUs); the sends 0->1 and 2->3 stay
     * in the node at the fabric's bandwidth, the send 1->2 crosses the NIC (and 2->1
     * back), so in the trace devices 0 and 3, which send only within their node, take at
     * least the intra-node send's time and less than the inter-node one's, while devices 1
     * and 2 each have a send that takes at least the inter-node time. */
    const char *sets[] = {"model.architecture.layers=8",
                          "topology.nodes=2",
                          "parallelism.pp=4",
                          "parallelism.dp=4",
                          "parallelism.group=4",
                          "training.accumulation=4",
                          NULL};
    g_autoptr(GError) error = NULL;
    g_autoptr(ParoScenario) s = paro_test_default_scenario(sets);
    ParoTopology view;
    paro_step_dp_cluster(s, &view);
    ck_assert_int_eq(view.nodes, 1);
    ck_assert_int_eq(view.gpus_per_node, 4);
    ck_assert(paro_step_p2p_is_intra(s, 0, 1) && !paro_step_p2p_is_intra(s, 1, 2) &&
              paro_step_p2p_is_intra(s, 3, 2) && !paro_step_p2p_is_intra(s, 2, 1));
    ParoStepComm intra = paro_step_p2p(s, &s->compression, TRUE);
    ParoStepComm inter = paro_step_p2p(s, &s->compression, FALSE);
    ck_assert(intra.time < inter.time && intra.intra_share > 0 && inter.inter_share > 0);
    g_autoptr(ParoScenarioDerived) d = paro_scenario_derive(s);
    g_autoptr(ParoCollCache) cache = paro_coll_cache_new();
    ParoStepResult r;
    ck_assert_msg(paro_step_simulate(d, paro_strategy_lookup("zero-1"), cache,
                                     &(ParoStepOptions){TRUE, TRUE}, &r, &error),
                  "%s", error ? error->message : "");
    guint within[4] = {0}, across[4] = {0};
    for (guint i = 0; i < r.trace->len; i++) {
        const ParoTraceTask *t = &g_array_index(r.trace, ParoTraceTask, i);
        if (!g_str_equal(t->name, "p2p"))
            continue;
        ParoTime took = t->end - t->start;
        ck_assert_msg(took >= intra.time, "p2p from %d: %" G_GINT64_FORMAT " ps", t->device, took);
        if (took >= inter.time)
            across[t->device]++;
        else
            within[t->device]++;
    }
    ck_assert(within[0] > 0 && across[0] == 0 && within[3] > 0 && across[3] == 0);
    ck_assert(within[1] > 0 && across[1] > 0 && within[2] > 0 && across[2] > 0);
    paro_step_result_clear(&r);
}
END_TEST

START_TEST(layout_keys_default_to_dp_only)
{
    /* tp = pp = 1 by default: n is every GPU and the step takes the DP-only path, whose
     * outputs the goldens pin byte for byte. */
    const char *sets[] = {"parallelism.tp=1", "parallelism.pp=1", "parallelism.dp=192",
                          "parallelism.group=4", NULL};
    g_autoptr(ParoScenario) s = neox(sets);
    ck_assert(paro_scenario_is_dp_only(s));
    ck_assert_int_eq(paro_scenario_dp_ranks(s), 192);
    ck_assert_int_eq(s->group, 4);
}
END_TEST

START_TEST(uneven_stages_run_their_own_layers)
{
    /* parallelism.stage_layers (Megatron's first/last-stage layer counts, DeepSpeed's
     * partitions). Oracles: the equal split written out is the default split, to the
     * picosecond and byte; a stage's share of the model is the sum of its own layers'
     * shares (summed here from the layer table: 0-13, 14-23, ...), the shares of all stages
     * make the whole model, and the stage with four layers more is the busiest and makes
     * the step longer. */
    const char *equal[] = {"parallelism.stage_layers=11,11,11,11", NULL};
    const char *uneven[] = {"parallelism.stage_layers=14, 10, 10, 10", NULL};
    ParoStepResult a = step_of("NNG", NULL), b = step_of("NNG", equal), c = step_of("NNG", uneven);
    assert_same_step(a, b);
    ck_assert_int_eq(c.busiest, 0);
    ck_assert_int_gt(c.step, a.step);
    g_autoptr(ParoScenario) s = neox(uneven);
    g_autoptr(ParoScenarioDerived) d = paro_scenario_derive(s);
    const gint64 first[] = {0, 14, 24, 34, 44};
    double all = 0;
    for (gint64 stage = 0; stage < 4; stage++) {
        double want = 0;
        for (gint64 l = first[stage]; l < first[stage + 1]; l++)
            want += g_array_index(d->layers, ParoLayerCost, l).weight_share;
        double got = paro_step_stage_share(d, stage);
        ck_assert_double_eq_tol(got, want, 1e-15);
        all += got;
    }
    ck_assert_double_eq_tol(all, 1, 1e-12);
    ck_assert_double_eq_tol(paro_step_stage_share(d, 0), 14.0 / 44, 0.01); /* embeddings aside */
    paro_step_result_clear(&a);
    paro_step_result_clear(&b);
    paro_step_result_clear(&c);
}
END_TEST

START_TEST(uneven_modules_of_the_interleaved_schedule)
{
    /* parallelism.stage_layers with virtual stages (decision 86). Oracles: with pp 2 x
     * virtual 2 (interleaved, NeoX's 44 layers, 11 a module by default), the equal split
     * written out one count a module (11,11,11,11) and one count a stage (22,22, split over
     * the stage's two modules) is the default split, to the picosecond and byte; so is the
     * equal split of modular layered accumulation, the one other schedule of several
     * modules a stage. Moving a layer from each of the middle modules to the first and the
     * last (12,10,10,12) makes the first stage (modules 0 and 2: 22 layers and the
     * embedding) and the last (modules 1 and 3: 22 layers and the head) differ from the
     * default only by which layers they hold: the shares follow the layer table. */
    const char *inter[] = {"parallelism.pp=2", "parallelism.dp=48",
                           "training.pipeline.schedule=interleaved", "training.pipeline.virtual=2",
                           NULL};
    const char *modules[] = {"parallelism.pp=2",
                             "parallelism.dp=48",
                             "training.pipeline.schedule=interleaved",
                             "training.pipeline.virtual=2",
                             "parallelism.stage_layers=11,11,11,11",
                             NULL};
    const char *stages[] = {"parallelism.pp=2",
                            "parallelism.dp=48",
                            "training.pipeline.schedule=interleaved",
                            "training.pipeline.virtual=2",
                            "parallelism.stage_layers=22,22",
                            NULL};
    ParoStepResult a = step_of("zero-1", inter), b = step_of("zero-1", modules),
                   c = step_of("zero-1", stages);
    assert_same_step(a, b);
    assert_same_step(a, c);
    const char *modular[] = {"parallelism.pp=2",
                             "parallelism.dp=48",
                             "training.pipeline.schedule=modular",
                             "training.pipeline.virtual=2",
                             "training.pipeline.accumulation=layered",
                             NULL};
    const char *modular_written[] = {"parallelism.pp=2",
                                     "parallelism.dp=48",
                                     "training.pipeline.schedule=modular",
                                     "training.pipeline.virtual=2",
                                     "training.pipeline.accumulation=layered",
                                     "parallelism.stage_layers=11,11,11,11",
                                     NULL};
    ParoStepResult e = step_of("zero-1", modular), f = step_of("zero-1", modular_written);
    assert_same_step(e, f);
    const char *moved[] = {"parallelism.pp=2",
                           "parallelism.dp=48",
                           "training.pipeline.schedule=interleaved",
                           "training.pipeline.virtual=2",
                           "parallelism.stage_layers=12,10,10,12",
                           NULL};
    g_autoptr(ParoScenario) s = neox(moved);
    g_autoptr(ParoScenarioDerived) d = paro_scenario_derive(s);
    /* stage 0: layers 0-11 and 22-31; stage 1: 12-21 and 32-43 */
    const gint64 lo[2][2] = {{0, 22}, {12, 32}}, hi[2][2] = {{12, 32}, {22, 44}};
    for (gint64 stage = 0; stage < 2; stage++) {
        double want = 0;
        for (int k = 0; k < 2; k++)
            for (gint64 l = lo[stage][k]; l < hi[stage][k]; l++)
                want += g_array_index(d->layers, ParoLayerCost, l).weight_share;
        ck_assert_double_eq_tol(paro_step_stage_share(d, stage), want, 1e-15);
    }
    paro_step_result_clear(&a);
    paro_step_result_clear(&b);
    paro_step_result_clear(&c);
    paro_step_result_clear(&e);
    paro_step_result_clear(&f);
}
END_TEST

START_TEST(modules_of_one_two_two_one_layers)
{
    /* System: a 6-layer LLaMA-7B shape, tp 1 x pp 2 x dp 1 (two GPUs of one node, so no
     * collective), interleaved with virtual 2, M = 4 micro-batches, no recomputation,
     * parallelism.stage_layers = 1,2,2,1: module 0 = layer 0 and module 2 = layers 3-4 on
     * GPU 0, module 1 = layers 1-2 and module 3 = layer 5 (with the head and the loss) on
     * GPU 1.
     * Expectation, compute: each GPU runs M forwards and backwards of its own three layers,
     * GPU 0 M (t0 + t3 + t4), GPU 1 M (t1 + t2 + t5), t_l a layer's forward and backward
     * from the layer table (each task's time rounded to the picosecond), exactly.
     * Activations, by hand from Megatron's interleaved order (pipe-order.c: warm-up
     * 2(P-1-r) + (v-1)P forwards, then 1F1B pairs), in layers a held (a: one layer's kept
     * activations, which is all of them without recomputation):
     *   GPU 0: F0 F0 F2 F2 | F0 B2 F0 B2 F2 B0 F2 B0 | B2 B2 B0 B0 held 1 2 4 6 | 7 5 6 4
     *     6 5 7 6 | 4 2 1 0: peak 7a.
     *   GPU 1: F1 F1 | F3 B3 F3 B3 F1 B1 F1 B1 F3 B3 F3 B3 | B1 B1 held 2 4 | 5 4 5 4 6 4 6
     *     4 5 4 5 4 | 2 0, where a forward of module 3 holds a + fp while the loss's forward
     *     runs (then a + kept) and its backward a + bp at most (paro_scenario_loss_memory:
     *     fp, kept, bp): peak max(6a, 5a + fp, 5a + bp).
     * The ledgers are read without the resident states (this GPU pair holds no other
     * memory that changes in a step). Messages: every one of the 3 module boundaries
     * crosses between the GPUs, forward and backward, per micro-batch: 2 x 4 x 3 = 24. */
    const char *sets[] = {"model.architecture.layers=6",
                          "topology.nodes=1",
                          "topology.node.gpus=2",
                          "parallelism.group=1",
                          "parallelism.pp=2",
                          "parallelism.dp=1",
                          "training.pipeline.schedule=interleaved",
                          "training.pipeline.virtual=2",
                          "training.accumulation=4",
                          "training.recompute=none",
                          "parallelism.stage_layers=1,2,2,1",
                          NULL};
    g_autoptr(ParoScenario) s = paro_test_default_scenario(sets);
    g_autoptr(ParoScenarioDerived) d = paro_scenario_derive(s);
    g_autoptr(ParoCollCache) cache = paro_coll_cache_new();
    g_autoptr(GError) error = NULL;
    ParoStepBuild b = {0};
    b.d = d;
    b.strategy = paro_strategy_lookup("zero-1");
    b.compression = &s->compression;
    b.cache = cache;
    b.error = &error;
    ck_assert(paro_step_build_init(&b));
    b.graph = paro_task_graph_new(2, 2 * PARO_RES_N, TRUE);
    ck_assert_msg(paro_step_build(&b) && paro_task_graph_run(b.graph, &error), "%s",
                  error ? error->message : "");
    ParoTime busy[2] = {0, 0}, want[2] = {0, 0};
    gint64 sends = 0;
    for (guint i = 0; i < paro_task_graph_n_tasks(b.graph); i++) {
        ParoTaskInfo t = paro_task_graph_get(b.graph, i);
        if (g_strcmp0(t.name, "forward") == 0 || g_strcmp0(t.name, "backward") == 0)
            busy[t.device] += t.duration;
        sends += g_strcmp0(t.name, "p2p") == 0;
    }
    const int device_of[6] = {0, 1, 1, 0, 0, 1};
    for (gint64 l = 0; l < 6; l++) {
        const ParoLayerCost *lc = &g_array_index(d->layers, ParoLayerCost, l);
        want[device_of[l]] +=
            4 * (paro_time_from_s(lc->forward_s) + paro_time_from_s(lc->backward_s));
    }
    ck_assert_int_eq(busy[0], want[0]);
    ck_assert_int_eq(busy[1], want[1]);
    ck_assert_int_eq(sends, 24);
    double a, whole;
    paro_scenario_layer_activations(s, 1, &a, &whole);
    ck_assert_double_eq(a, whole);
    ParoLossMemory loss = paro_scenario_loss_memory(s, 1);
    double peak0 = paro_mem_ledger_peak(paro_task_graph_ledger(b.graph, 0), NULL);
    double peak1 = paro_mem_ledger_peak(paro_task_graph_ledger(b.graph, 1), NULL);
    double want1 = MAX(6 * a, 5 * a + MAX(loss.forward_peak, loss.backward_peak));
    ck_assert_double_eq_tol(peak0, 7 * a, 7 * a * 1e-12);
    ck_assert_double_eq_tol(peak1, want1, want1 * 1e-12);
    paro_task_graph_free(b.graph);
    paro_step_build_clear(&b);
}
END_TEST

static Suite *three_d_suite(void)
{
    Suite *s = suite_create("3d");
    TCase *tc = tcase_create("oracle");
    tcase_add_test(tc, tp_layer_time_is_two_ring_allreduces);
    tcase_add_test(tc, tp_overlap_leaves_one_chunk_exposed);
    tcase_add_test(tc, tp_async_dgrad_hides_behind_weight_gradients);
    tcase_add_test(tc, activations_with_tp_follow_korthikanti);
    tcase_add_test(tc, model_states_of_a_stage_shard_over_dp);
    tcase_add_test(tc, compressed_tp_and_p2p_are_counted_per_call);
    tcase_add_test(tc, module_dp_collectives_overlap);
    tcase_add_test(tc, send_and_reduce_scatter_share_a_nic);
    tcase_add_test(tc, stages_sharing_a_node_send_within_it);
    tcase_add_test(tc, layout_keys_default_to_dp_only);
    tcase_add_test(tc, uneven_stages_run_their_own_layers);
    tcase_add_test(tc, uneven_modules_of_the_interleaved_schedule);
    tcase_add_test(tc, modules_of_one_two_two_one_layers);
    suite_add_tcase(s, tc);
    return s;
}

PARO_CHECK_MAIN(three_d_suite)
