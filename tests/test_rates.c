/* SPDX-License-Identifier: MIT */
/* The rates a training step runs at beyond what the kernel sweeps measure: the loss over the
 * logits and the frameworks' passes over a unit's flat gradient (decision 44), by hand and
 * against the logs of validation/harness/passes.py; the power cap on GEMM-heavy layers
 * (decision 45). */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check-main.h"
#include "compute-fixtures.h"
#include "model/compute.h"
#include "topo/topology.h"

START_TEST(loss_kernels_by_hand)
{
    /* System: a three-layer GPT of hidden 2048 (16 heads of 128, vocabulary 50,000),
     * b = 4, s = 2048, one TP rank, on an H100-like GPU of 3.35 TB/s whose elementwise and
     * flat-pass rates are not set (the H100's shares apply).
     * Expectation, derived by hand: only the last layer carries the loss; unfused, it moves
     * 28 bytes a logit at the elementwise kernels' 0.47 x 3.35 TB/s; fused (Apex's xentropy:
     * two 16-bit reads forward, one read and one write backward) 8 bytes a logit at the
     * flat passes' 0.750 x 3.35 TB/s. T V = 4 x 2048 x 50,000 logits, so the last layer's
     * memory-bound time drops by T V (28 / 1.5745e12 - 8 / 2.5125e12) = 5.9799 ms. Layers
     * before it do not change. */
    ParoModel m = paro_test_gpt_layers(2048);
    ParoComputeSetup c = paro_test_h100_like(3.35e12, 4, 2048);
    g_autoptr(GArray) unfused = paro_compute_layers(&m, &c);
    c.fused_loss = TRUE;
    g_autoptr(GArray) fused = paro_compute_layers(&m, &c);
    double logits = 4.0 * 2048 * 50000;
    double want = logits * (28.0 / (3.35e12 * 0.47) - 8.0 / (3.35e12 * 0.750));
    const ParoLayerCost *a = &g_array_index(unfused, ParoLayerCost, 2);
    const ParoLayerCost *b = &g_array_index(fused, ParoLayerCost, 2);
    /* Tolerance: 1e-9 relative, sums of a few doubles. */
    ck_assert_double_eq_tol(a->memory_s - b->memory_s, want, want * 1e-9);
    ck_assert_double_eq_tol((a->forward_s + a->backward_s) - (b->forward_s + b->backward_s), want,
                            want * 1e-9);
    ck_assert_double_eq_tol(want, 5.9799e-3, 1e-7);
    for (guint l = 0; l < 2; l++)
        ck_assert_double_eq(g_array_index(unfused, ParoLayerCost, l).memory_s,
                            g_array_index(fused, ParoLayerCost, l).memory_s);
}
END_TEST

typedef struct {
    double bytes, seconds;
} Moved;

/* Sums the bytes and median times of the rows of validation/data/@gpu/2026-11-26_passes.txt
 * whose op is @op and whose element count is at least @min_elements. */
static Moved passes_log(const char *gpu, const char *op, double min_elements)
{
    g_autofree char *name = g_strdup_printf("validation/data/%s/2026-11-26_passes.txt", gpu);
    g_autofree char *path = paro_test_path(name);
    g_autofree char *text = NULL;
    ck_assert_msg(g_file_get_contents(path, &text, NULL, NULL), "cannot read %s", path);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    Moved sum = {0, 0};
    for (guint i = 0; lines[i]; i++) {
        char unit[32], kind[32];
        double elements, bytes, us;
        if (lines[i][0] == '#' ||
            sscanf(lines[i], "%31s %lf %31s %lf %lf", unit, &elements, kind, &bytes, &us) != 5)
            continue;
        if (strcmp(kind, op) == 0 && elements >= min_elements) {
            sum.bytes += bytes;
            sum.seconds += us * 1e-6;
        }
    }
    ck_assert_double_gt(sum.seconds, 0);
    return sum;
}

START_TEST(flat_pass_shares_against_measured)
{
    /* System: the flat-pass shares parosim ships (compute.h's H100 figure, the H200's
     * trait) and the elementwise shares.
     * Expectation: they are what validation/harness/passes.py measured on 2026-11-26
     * (validation/data/h{100,200}): FSDP1's cat + cast + divide and DeepSpeed's cast + add
     * over one layer of 7B to 70B models (>= 2e8 elements), bytes-weighted, over the
     * datasheet bandwidth (H100 SXM 3.35 TB/s, H200 4.8 TB/s): 0.750 and 0.661, to 0.005.
     * The unfused fp32 loss, 28 bytes a logit at the elementwise share, against PyTorch's
     * cross_entropy of fp32 logits at 4k-16k tokens: within 5% on the H100 (measured 0.488
     * of the datasheet, the share 0.47); on the H200 parosim is 17% too slow (0.447 against
     * 0.38), the gap decision 44 names, bounded here at 20% so that it cannot grow unseen. */
    static const struct {
        const char *gpu, *name;
        double datasheet;
    } gpus[] = {{"h100", "H100-SXM5-80GB", 3.35e12}, {"h200", "H200", 4.8e12}};
    static const double loss_bound[] = {0.05, 0.20};
    for (guint g = 0; g < G_N_ELEMENTS(gpus); g++) {
        ParoGpuTraits traits = paro_gpu_traits_from_name(gpus[g].name);
        double shipped =
            traits.flat_pass_share > 0 ? traits.flat_pass_share : PARO_FLAT_PASS_BW_SHARE;
        Moved fsdp = passes_log(gpus[g].gpu, "fsdp1_fp32", 2e8);
        Moved bf16 = passes_log(gpus[g].gpu, "add_cast_fp32", 2e8);
        double measured = (fsdp.bytes + bf16.bytes) / (fsdp.seconds + bf16.seconds);
        ck_assert_msg(fabs(measured / gpus[g].datasheet - shipped) <= 0.005,
                      "%s: measured %.4f of the datasheet, parosim ships %.3f", gpus[g].gpu,
                      measured / gpus[g].datasheet, shipped);
        Moved loss = passes_log(gpus[g].gpu, "cross_entropy_fp32", 0);
        double Bps = paro_compute_elementwise_Bps(gpus[g].datasheet, traits.elementwise_share);
        double error = loss.bytes / Bps / loss.seconds - 1.0;
        ck_assert_msg(fabs(error) <= loss_bound[g], "%s: the loss is %+.1f%% off", gpus[g].gpu,
                      100 * error);
    }
}
END_TEST

START_TEST(power_cap_stretches_gemm_heavy_layers)
{
    /* System: the same GPT at b = 4, s = 2048 and at b = 1, s = 32768 on an H100-like GPU,
     * first without a power cap, then with knee 0.50 and slope 0.24 (the Hopper traits).
     * Expectation, by the cap's definition (decision 45) applied to the uncapped layer: its
     * GEMM share of forward plus backward, duty = gemm / (gemm + attention + memory), sets
     * the stretch 1 + 0.24 x max(0, duty - 0.50) of its GEMM time; the attention core and
     * the memory-bound kernels keep theirs. At 2048 tokens a sequence this GPT's GEMMs are
     * more than half the layer (stretched); at 32k tokens the attention dominates (duty
     * below the knee: nothing changes). The traits of an H100, an H200 and an A100 (decision
     * 47: the Hopper figures, unmeasured on the A100, checked on every A100 source of the
     * corpus) carry the cap; a PCIe H100's and a V100's none. */
    ParoModel m = paro_test_gpt_layers(2048);
    static const gint64 shapes[][2] = {{4, 2048}, {1, 32768}};
    for (guint i = 0; i < G_N_ELEMENTS(shapes); i++) {
        ParoComputeSetup c = paro_test_h100_like(3.35e12, shapes[i][0], shapes[i][1]);
        g_autoptr(GArray) free_run = paro_compute_layers(&m, &c);
        c.power_knee = 0.50;
        c.power_slope = 0.24;
        g_autoptr(GArray) capped = paro_compute_layers(&m, &c);
        const ParoLayerCost *a = &g_array_index(free_run, ParoLayerCost, 1);
        const ParoLayerCost *b = &g_array_index(capped, ParoLayerCost, 1);
        double duty = a->gemm_s / (a->gemm_s + a->attention_s + a->memory_s);
        double stretch = 1.0 + 0.24 * MAX(0.0, duty - 0.50);
        ck_assert_msg(i == 0 ? duty > 0.5 : duty < 0.5, "duty %.3f", duty);
        /* Tolerance: 1e-12 relative, products of a few doubles. */
        ck_assert_double_eq_tol(b->gemm_s, a->gemm_s * stretch, a->gemm_s * 1e-12);
        ck_assert_double_eq_tol(b->forward_s + b->backward_s,
                                a->forward_s + a->backward_s + (stretch - 1.0) * a->gemm_s,
                                a->gemm_s * 1e-12);
        ck_assert_double_eq(b->attention_s, a->attention_s);
        ck_assert_double_eq(b->memory_s, a->memory_s);
    }
    ck_assert_double_eq(paro_gpu_traits_from_name("H100-SXM5-80GB").power_knee, 0.50);
    ck_assert_double_eq(paro_gpu_traits_from_name("H200").power_slope, 0.24);
    ck_assert_double_eq(paro_gpu_traits_from_name("A100-SXM4-80GB").power_slope, 0.24);
    ck_assert_double_eq(paro_gpu_traits_from_name("H100 PCIe").power_slope, 0);
    ck_assert_double_eq(paro_gpu_traits_from_name("V100").power_slope, 0);
}
END_TEST

START_TEST(recompute_every_picks_layers)
{
    /* System: the 3-layer GPT at b = 2, s = 2048 on an H100-like GPU (no power cap), full
     * recomputation with recompute_every = 2. Expectation, by torchtitan's rule (its
     * checkpoint wrapper counts blocks from 1 and wraps those whose count is a multiple of
     * k): only the second layer (index 1) runs its forward again, so its backward is the
     * full run's and the first and third layers' are the run without recomputation; the
     * forwards never change. */
    ParoModel m = paro_test_gpt_layers(2048);
    ParoComputeSetup c = paro_test_h100_like(3.35e12, 2, 2048);
    g_autoptr(GArray) none = paro_compute_layers(&m, &c);
    c.recompute = PARO_RECOMPUTE_FULL;
    g_autoptr(GArray) full = paro_compute_layers(&m, &c);
    c.recompute_every = 2;
    g_autoptr(GArray) every = paro_compute_layers(&m, &c);
    for (guint l = 0; l < 3; l++) {
        const ParoLayerCost *n = &g_array_index(none, ParoLayerCost, l);
        const ParoLayerCost *f = &g_array_index(full, ParoLayerCost, l);
        const ParoLayerCost *e = &g_array_index(every, ParoLayerCost, l);
        ck_assert(f->recomputed && !n->recomputed);
        ck_assert(e->recomputed == (l == 1));
        ck_assert_double_eq(e->backward_s, l == 1 ? f->backward_s : n->backward_s);
        ck_assert_double_eq(e->forward_s, n->forward_s);
        ck_assert_double_gt(f->backward_s, n->backward_s);
    }
}
END_TEST

START_TEST(op_recompute_redoes_every_second_product)
{
    /* System: the 3-layer GPT (h 2048, 16 heads of 128, f = 4h, plain MLP) at b = 2,
     * s = 2048 on an H100-like GPU, FlashAttention, per-op selective recomputation.
     * Expectation (decision 49, torchtitan's policy): the backward of the middle layer
     * grows by the forward of wk (kv = h in this GPT), wo and the MLP's down product,
     * each a GEMM of the model's, plus the forward's elementwise kernels, and no
     * attention core (SDPA's output is kept): more than the three GEMMs, less than full
     * recomputation's forward again; the forward is unchanged. */
    ParoModel m = paro_test_gpt_layers(2048);
    ParoComputeSetup c = paro_test_h100_like(3.35e12, 2, 2048);
    g_autoptr(GArray) none = paro_compute_layers(&m, &c);
    c.recompute = PARO_RECOMPUTE_OP;
    g_autoptr(GArray) op = paro_compute_layers(&m, &c);
    c.recompute = PARO_RECOMPUTE_FULL;
    g_autoptr(GArray) full = paro_compute_layers(&m, &c);
    const ParoLayerCost *n = &g_array_index(none, ParoLayerCost, 1);
    const ParoLayerCost *o = &g_array_index(op, ParoLayerCost, 1);
    const ParoLayerCost *f = &g_array_index(full, ParoLayerCost, 1);
    double T = 2.0 * 2048, h = 2048;
    double products = paro_compute_gemm_s(&c, T, h, h) + paro_compute_gemm_s(&c, T, h, h) +
                      paro_compute_gemm_s(&c, T, 4 * h, h);
    double more = o->backward_s - n->backward_s;
    ck_assert_msg(more > products && more < f->backward_s - n->backward_s,
                  "op %.6g s more, products %.6g s, full %.6g s more", more, products,
                  f->backward_s - n->backward_s);
    ck_assert_double_eq(o->forward_s, n->forward_s);
    ck_assert(o->recomputed);
}
END_TEST

static Suite *rates_suite(void)
{
    Suite *s = suite_create("rates");
    TCase *tc = tcase_create("rates");
    tcase_add_test(tc, loss_kernels_by_hand);
    tcase_add_test(tc, flat_pass_shares_against_measured);
    tcase_add_test(tc, power_cap_stretches_gemm_heavy_layers);
    tcase_add_test(tc, recompute_every_picks_layers);
    tcase_add_test(tc, op_recompute_redoes_every_second_product);
    suite_add_tcase(s, tc);
    return s;
}

PARO_CHECK_MAIN(rates_suite)
