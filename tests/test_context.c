/* SPDX-License-Identifier: MIT */
/* Oracle tests of context and expert parallelism (step/step-context.c, the parameter groups
 * of scenario/derived.c, decisions 71-72), each against a hand derivation written beside it:
 * the layout's degrees, a rank's activations at 1/cp, the ring's and the all-to-all's
 * exposed time from the link figures, the routed experts' group and its view of the
 * cluster, and issue #43's checks on Llama-3-70B at 128K tokens and Mixtral with ep 8. */
#include <glib.h>
#include <math.h>

#include "fixtures.h"
#include "step/step-private.h"

#define LONG_CONTEXT "scenarios/llama3-70b-128k_dgx-h100x8_n16-cp16.yaml"
#define MIXTRAL "scenarios/mixtral-8x7b_dgx-h100x8_n32-fsdp.yaml"

/* Times come back from the picosecond clock: within 1e-6 of a hand figure of microseconds
 * or more is the clock's rounding, not the model's. */
#define CLOCK_REL 1e-6

static gboolean close_to(double got, double want, double rel)
{
    return fabs(got - want) <= rel * fabs(want);
}

START_TEST(degrees_multiply_to_the_gpus)
{
    /* 16 nodes x 8 = 128 GPUs = tp 8 x cp 16 x pp 1 x dp 1; gradients shared by dp x cp =
     * 16 ranks; a rank's tokens 131072 / 16 = 8192 */
    const char *sets[] = {"topology.nodes=16", NULL};
    g_autoptr(ParoScenario) s = paro_test_scenario(LONG_CONTEXT, sets);
    ck_assert_int_eq(s->dp, 1);
    ck_assert_int_eq(paro_scenario_dp_ranks(s), 16);
    ck_assert_double_eq(paro_scenario_tokens_per_rank(s), 8192.0);
    ck_assert(!paro_scenario_is_dp_only(s));
}
END_TEST

/* The most activation bytes the step's memory timeline holds. */
static double activations_peak(const ParoStepResult *r)
{
    double most = 0;
    for (guint i = 0; i < r->memory->len; i++)
        most = MAX(most, g_array_index(r->memory, ParoMemSample, i).bytes[PARO_MEM_ACTIVATIONS]);
    return most;
}

START_TEST(long_context_activations_are_a_sixteenth)
{
    /* Issue #43: Llama-3-70B at 131,072 tokens, tp 8 x cp 16 on 16 DGX H100, full
     * recomputation, FSDP: runs, fits, and its activations are 1/16 of those at cp 1 within
     * 15%. By hand: every activation of a layer is per token (flash attention keeps no
     * s x s scores), so a rank of s/16 tokens keeps 1/16 of them; the all-gathered K and V
     * are held only while a layer recomputes. */
    const char *cp16[] = {"topology.nodes=16", NULL};
    const char *cp1[] = {"topology.nodes=16", "parallelism.cp=1", NULL};
    g_autoptr(ParoScenario) a = paro_test_scenario(LONG_CONTEXT, cp16);
    g_autoptr(ParoScenario) b = paro_test_scenario(LONG_CONTEXT, cp1);
    ParoStepResult ra = paro_test_step(a, "zero-3", TRUE), rb = paro_test_step(b, "zero-3", TRUE);
    ck_assert(ra.fits);
    /* the activations' own peak: the step's may lie at the optimizer step, where the
     * profile's gradients and the foreach optimizer's temporaries are held (decision 94) */
    double ratio = activations_peak(&ra) / activations_peak(&rb);
    ck_assert_msg(close_to(ratio, 1.0 / 16.0, 0.15), "ratio %g", ratio);
    double kept16, whole16, kept1, whole1;
    paro_scenario_layer_activations(a, 8, &kept16, &whole16);
    paro_scenario_layer_activations(b, 8, &kept1, &whole1);
    ck_assert(close_to(kept16, kept1 / 16.0, 1e-12));
    /* the gathered K and V of the other 15 ranks: 2 x 8192 tokens x (8 heads x 128) / 8
     * x 2 bytes x 15 = 62,914,560 bytes beside the layer's own */
    ck_assert(close_to(whole16 - whole1 / 16.0, 62914560.0, 1e-9));
    paro_step_result_clear(&ra);
    paro_step_result_clear(&rb);
}
END_TEST

START_TEST(ring_exposes_what_the_attention_cannot_hide)
{
    /* The ring over cp 16 ranks spans nodes (8 GPUs / tp 8 = 1 CP rank a node), so each
     * send leaves through the GPU's NIC share: kv = 2 x 8192 x 1024 / 8 x 2 bytes =
     * 4,194,304 bytes a block. Forward: 15 x max(0, alpha + kv / B - attention / 16);
     * with the attention forward set to 0 the whole sends show: 15 (alpha + kv / B). The
     * backward sends kv and its gradient (2 kv) a step. */
    const char *sets[] = {"topology.nodes=16", "parallelism.cp_algorithm=ring", NULL};
    g_autoptr(ParoScenario) s = paro_test_scenario(LONG_CONTEXT, sets);
    ParoCommModel cm = paro_scenario_comm_model(s);
    double kv = 2.0 * 8192 * 1024 / 8 * 2;
    ck_assert_double_eq(paro_scenario_cp_kv_bytes(s, 8), kv);
    double bw = fmin(cm.intra_Bps, cm.inter_Bps);
    ParoLayerCost lc = {0};
    ParoStepComm f = paro_step_cp_layer(s, &lc, FALSE);
    ck_assert(close_to(paro_time_to_s(f.time), 15.0 * (cm.inter_lat_s + kv / bw), CLOCK_REL));
    lc.recomputed = FALSE;
    ParoStepComm b = paro_step_cp_layer(s, &lc, TRUE);
    ck_assert(close_to(paro_time_to_s(b.time), 15.0 * (cm.inter_lat_s + 2.0 * kv / bw), CLOCK_REL));
    /* an attention block longer than a send hides it whole */
    lc.attention_forward_s = 16.0 * (cm.inter_lat_s + kv / bw) * 1.01;
    lc.attention_s = 3.5 * lc.attention_forward_s;
    ck_assert_int_eq(paro_step_cp_layer(s, &lc, FALSE).time, 0);
    ck_assert_int_eq(paro_step_cp_layer(s, &lc, TRUE).time, 0);
    /* recomputed: the forward's ring again in the backward */
    lc.attention_forward_s = lc.attention_s = 0;
    lc.recomputed = TRUE;
    ParoStepComm r = paro_step_cp_layer(s, &lc, TRUE);
    ck_assert(
        close_to(paro_time_to_s(r.time), 15.0 * (2.0 * cm.inter_lat_s + 3.0 * kv / bw), CLOCK_REL));
}
END_TEST

START_TEST(ulysses_moves_heads_in_four_alltoalls)
{
    /* Ulysses on one node: tp 1 x cp 8 of 8 GPUs, 64 heads over 8 ranks, 4096 tokens a
     * sequence (512 a rank). Forward: q, k, v and the output, each an all-to-all of a
     * rank's 512 tokens x width x 2 bytes inside the node: alpha' + S x 7/8 / B'. q and the
     * output 8192 wide, k and v 1024 (8 KV heads of 128). */
    const char *sets[] = {"topology.nodes=1",
                          "parallelism.tp=1",
                          "parallelism.cp=8",
                          "parallelism.cp_algorithm=alltoall",
                          "training.sequence=4096",
                          "training.recompute=none",
                          NULL};
    g_autoptr(ParoScenario) s = paro_test_scenario(LONG_CONTEXT, sets);
    ParoCommModel cm = paro_scenario_comm_model(s);
    double q = 512.0 * 8192 * 2, k = 512.0 * 1024 * 2, want = 0;
    double sizes[4] = {q, k, k, q};
    for (int i = 0; i < 4; i++)
        want += cm.intra_lat_s + sizes[i] * 7.0 / 8.0 / cm.intra_Bps;
    ParoLayerCost lc = {0};
    ck_assert(close_to(paro_time_to_s(paro_step_cp_layer(s, &lc, FALSE).time), want, CLOCK_REL));
}
END_TEST

START_TEST(experts_reduced_over_their_own_group)
{
    /* Mixtral 8x7B on 32 GPUs (4 nodes of 8), ep 8: the routed experts are 32 layers x 8
     * experts x 3 x 4096 x 14336 = 45,097,156,608 parameters (HF config: no MLP biases);
     * a GPU holds an eighth, reduced over 32 / 8 = 4 ranks, one a node (the 8 GPUs of a
     * node are one expert-parallel group). The dense rest: every parameter but those. */
    const char *sets[] = {"parallelism.ep=8", NULL};
    g_autoptr(ParoScenario) s = paro_test_scenario(MIXTRAL, sets);
    double routed = 32.0 * 8 * 3 * 4096 * 14336;
    ck_assert_double_eq(paro_model_expert_params(s->model), routed);
    ParoStateSizes all = paro_scenario_state_sizes(s), dense, experts;
    paro_scenario_param_groups(s, &all, &dense, &experts);
    ck_assert_int_eq(experts.n, 4);
    ck_assert_int_eq(experts.m, 1);
    ck_assert_double_eq(experts.params, routed / 8.0);
    ck_assert_double_eq(dense.params, all.params - routed);
    ck_assert_int_eq(dense.n, 32);
    ParoScenario view;
    ParoTopology topology;
    paro_step_expert_view(s, &view, &topology);
    ck_assert_int_eq(topology.gpus_per_node, 1);
    ck_assert_int_eq(topology.nodes, 4);
    ck_assert_int_eq(paro_scenario_dp_ranks(&view), 4);
    /* one NIC of the node's 8 stays each GPU's: 400 Gb/s */
    ck_assert_int_eq(topology.nics.count, 1);
    ck_assert_double_eq(topology.nics.bandwidth_Bps, s->topology->nics.bandwidth_Bps);
}
END_TEST

START_TEST(expert_alltoall_by_hand)
{
    /* ep 8 inside a node: a GPU's 4096 tokens x top-2 x 4096 x 2 bytes = 33,554,432 bytes
     * each way; dispatch and combine forward: 2 (alpha' + S x 7/8 / B'); the backward of a
     * recomputed layer 4 of them; a hottest rank at 1.5 x the mean sends 1.5 S. */
    const char *sets[] = {"parallelism.ep=8", NULL};
    g_autoptr(ParoScenario) s = paro_test_scenario(MIXTRAL, sets);
    ParoCommModel cm = paro_scenario_comm_model(s);
    double S = 4096.0 * 2 * 4096 * 2, one = cm.intra_lat_s + S * 7.0 / 8.0 / cm.intra_Bps;
    double got = paro_time_to_s(paro_step_ep_layer(s, FALSE, FALSE).time);
    ck_assert_msg(close_to(got, 2 * one, CLOCK_REL), "%.9g vs %.9g", got, 2 * one);
    ck_assert(close_to(paro_time_to_s(paro_step_ep_layer(s, TRUE, TRUE).time), 4 * one, CLOCK_REL));
    const char *hot[] = {"parallelism.ep=8", "training.moe.imbalance=1.5", NULL};
    g_autoptr(ParoScenario) h = paro_test_scenario(MIXTRAL, hot);
    double one_hot = cm.intra_lat_s + 1.5 * S * 7.0 / 8.0 / cm.intra_Bps;
    ck_assert(
        close_to(paro_time_to_s(paro_step_ep_layer(h, FALSE, FALSE).time), 2 * one_hot, CLOCK_REL));
    /* a capacity factor caps the hottest load */
    const char *capped[] = {"parallelism.ep=8", "training.moe.imbalance=1.5",
                            "training.moe.capacity_factor=1.25", NULL};
    g_autoptr(ParoScenario) c = paro_test_scenario(MIXTRAL, capped);
    ck_assert_double_eq(paro_scenario_moe_load(c), 1.25);
}
END_TEST

START_TEST(mixtral_with_ep8_peaks_lower)
{
    /* Issue #43: the shipped Mixtral scenario with ep 8 runs, fits, with a lower peak than
     * at ep 1; its trace holds the all-to-alls, two a layer forward. */
    const char *ep8[] = {"parallelism.ep=8", NULL};
    g_autoptr(ParoScenario) a = paro_test_scenario(MIXTRAL, ep8);
    g_autoptr(ParoScenario) b = paro_test_scenario(MIXTRAL, NULL);
    ParoStepResult ra = paro_test_step(a, "zero-3", TRUE), rb = paro_test_step(b, "zero-3", FALSE);
    ck_assert(ra.fits);
    ck_assert_msg(ra.peak_bytes < rb.peak_bytes, "%g >= %g", ra.peak_bytes, rb.peak_bytes);
    guint ep = 0;
    for (guint i = 0; i < ra.trace->len; i++)
        ep += g_str_equal(g_array_index(ra.trace, ParoTraceTask, i).name, "ep");
    /* 32 layers x 4 micro-batches, a forward and a backward task each */
    ck_assert_uint_eq(ep, 32 * 4 * 2);
    paro_step_result_clear(&ra);
    paro_step_result_clear(&rb);
}
END_TEST

static Suite *context_suite(void)
{
    Suite *s = suite_create("context");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, degrees_multiply_to_the_gpus);
    tcase_add_test(tc, long_context_activations_are_a_sixteenth);
    tcase_add_test(tc, ring_exposes_what_the_attention_cannot_hide);
    tcase_add_test(tc, ulysses_moves_heads_in_four_alltoalls);
    tcase_add_test(tc, experts_reduced_over_their_own_group);
    tcase_add_test(tc, expert_alltoall_by_hand);
    tcase_add_test(tc, mixtral_with_ep8_peaks_lower);
    suite_add_tcase(s, tc);
    return s;
}

PARO_CHECK_MAIN(context_suite)
