/* SPDX-License-Identifier: MIT */
/* Oracle tests of offloading (scenario/offload.c, step/step-offload.c; decisions 80-82):
 * the host figures' datasheet defaults, the offloaded state's bytes on the GPU and the host,
 * the CPU optimizer step and the PCIe copies in the step's trace, checkpoints moved to the
 * host, and issue #43's check: Llama-2-70B under ZeRO-3 on one node of 8 A100-80GB runs out
 * of memory without offloading and fits with the optimizer and parameters on the CPU. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "fixtures.h"
#include "step/step-private.h"

/* The summed durations (s) of the trace's tasks named @name, and their count. */
static double sum_tasks(const ParoStepResult *r, const char *name, guint *count)
{
    double sum = 0;
    *count = 0;
    for (guint i = 0; i < r->trace->len; i++) {
        const ParoTraceTask *t = &g_array_index(r->trace, ParoTraceTask, i);
        if (g_str_equal(t->name, name)) {
            sum += paro_time_to_s(t->end - t->start);
            (*count)++;
        }
    }
    return sum;
}

#define LLAMA7B "scenarios/llama-7b_a100x8-100g_n32.yaml"
#define LLAMA70B "scenarios/llama2-70b_dgx-a100x8-80g-offload.yaml"

START_TEST(host_defaults_from_the_datasheets)
{
    /* System: a100x8-100g (A100, no node.host) and a Hopper GPU set over it.
     * Expectation, DGX A100 datasheet: 1 TB, PCIe Gen4 x16 = 16 GT/s x 16 lanes x 128/130 / 8
     * = 31.5 GB/s; CPU Adam roofline: two EPYC 7742 of 8 DDR4-3200 channels (8 bytes a
     * transfer) = 409.6 GB/s over 34 bytes a parameter = 12.05e9 parameters/s. DGX H100: 2 TB,
     * Gen5 (twice Gen4), two Xeon 8480C of 8 DDR5-4800 channels = 614.4 GB/s / 34. The header
     * names the default. Tolerance: the datasheets' rounding, 0.1%. */
    g_autoptr(ParoScenario) a =
        paro_test_scenario(LLAMA7B, (const char *[]){"training.offload.optimizer=cpu", NULL});
    const ParoTopology *t = a->topology;
    ck_assert_str_eq(t->host.defaulted, "DGX A100 datasheet");
    ck_assert_double_eq_tol(t->host.memory_bytes, 1e12, 1e9);
    ck_assert_double_eq_tol(t->host.pcie_Bps, 16e9 * 16 * 128 / 130 / 8, 0.001 * 31.5e9);
    ck_assert_double_eq_tol(t->host.optimizer_rate, 2 * 8 * 3200e6 * 8 / 34, 0.001 * 12e9);
    ck_assert(t->host.nvme_read_Bps == 0 && t->host.nvme_write_Bps == 0);
    g_autofree char *line = paro_offload_describe(a);
    ck_assert_ptr_nonnull(strstr(line, "(DGX A100 datasheet default)"));
    g_autoptr(ParoScenario) h =
        paro_test_scenario(LLAMA7B, (const char *[]){"topology.gpu.name=H100-SXM5-80GB", NULL});
    ck_assert_str_eq(h->topology->host.defaulted, "DGX H100 datasheet");
    ck_assert_double_eq_tol(h->topology->host.memory_bytes, 2e12, 1e9);
    ck_assert_double_eq_tol(h->topology->host.pcie_Bps, 2 * 31.5e9, 0.001 * 63e9);
    ck_assert_double_eq_tol(h->topology->host.optimizer_rate, 2 * 8 * 4800e6 * 8 / 34,
                            0.001 * 18e9);
    /* nothing offloaded: no header line */
    ck_assert_ptr_null(paro_offload_describe(h));
    /* the shipped DGX files write their datasheets' figures: no default named */
    g_autofree char *dgx = paro_test_path("topologies/dgx-h100x8.yaml");
    g_autofree char *swap = g_strdup_printf("topology=%s", dgx);
    g_autoptr(ParoScenario) f = paro_test_scenario(LLAMA7B, (const char *[]){swap, NULL});
    ck_assert_ptr_null(f->topology->host.defaulted);
    ck_assert_double_eq_tol(f->topology->host.memory_bytes, 2e12, 1e9);
}
END_TEST

START_TEST(offloaded_state_leaves_the_gpu_for_the_host)
{
    /* System: Llama-7B (Psi = 6.73842e9), n = 32 GPUs, 8 a node, bf16, K = 12.
     * Expectation, by hand (decision 81): ZeRO-3 (GGG) with the optimizer and the parameters
     * on the CPU keeps no model state on the GPU; a GPU's host share is its fp32 gradients
     * (4 B), master and moments (12 B) and 16-bit parameters (2 B) of Psi/32: a node holds
     * 8 x 18 Psi/32. ZeRO-1 (NNG) with the optimizer on the CPU keeps its whole 16-bit
     * parameters and gradients (2 Psi each: reduced at the sync) and moves its owned
     * Psi/32's 4 + 12 bytes and the pinned 16-bit copy (2 B) the CPU step writes. The
     * guideline and the simulated step agree. Tolerance: 1e-12 relative. */
    const char *both[] = {"training.offload.optimizer=cpu", "training.offload.parameters=cpu",
                          NULL};
    g_autoptr(ParoScenario) s = paro_test_scenario(LLAMA7B, both);
    g_autoptr(ParoScenarioDerived) d = paro_scenario_derive(s);
    double psi = d->sizes.params, node = 8 * 18 * psi / 32;
    ParoOffloadState z3 = paro_offload_state(s, paro_strategy_lookup("zero-3"), &d->sizes);
    ck_assert(z3.optimizer && z3.parameters && z3.grads_per_micro);
    ck_assert(z3.gpu.params == 0 && z3.gpu.grads == 0 && z3.gpu.optimizer == 0);
    ck_assert_double_eq_tol(paro_offload_host_bytes(s, &z3, 0), node, node * 1e-12);
    ParoOffloadState z1 = paro_offload_state(s, paro_strategy_lookup("zero-1"), &d->sizes);
    ck_assert(z1.optimizer && !z1.parameters && !z1.grads_per_micro);
    ck_assert_double_eq_tol(z1.gpu.params, 2 * psi, psi * 1e-12);
    ck_assert_double_eq_tol(z1.gpu.grads, 2 * psi, psi * 1e-12);
    ck_assert(z1.gpu.optimizer == 0);
    ck_assert_double_eq_tol(paro_offload_host_bytes(s, &z1, 0), node, node * 1e-12);
    g_autoptr(ParoGuideline) g = paro_guideline_evaluate(d);
    const ParoStrategyResult *gz = paro_guideline_find(g, paro_strategy_lookup("zero-3"));
    ck_assert(gz->mem_params == 0 && gz->mem_optimizer == 0);
    ck_assert_double_eq_tol(gz->mem_host, node, node * 1e-12);
    ParoStepResult r = paro_test_step(s, "zero-3", TRUE);
    ck_assert_double_eq_tol(r.host_bytes, node, node * 1e-12);
    ck_assert(r.at_peak.bytes[PARO_MEM_PARAMS] == 0 && r.at_peak.bytes[PARO_MEM_OPTIMIZER] == 0);
    paro_step_result_clear(&r);
}
END_TEST

START_TEST(cpu_step_and_pcie_copies_in_the_trace)
{
    /* System: Llama-7B on 32 A100 (8 a node), A = 10 micro-batches, ZeRO-3 with optimizer
     * and parameters on the CPU; host figures the DGX A100 defaults (PCIe B = 31.5 GB/s a
     * GPU, CPU Adam R = 12.05e9 parameters/s a node).
     * Expectation, by hand (decision 82): the CPU step updates the GPU's Psi/32 at R/8:
     * Psi/32 x 8 / R; every micro-batch copies its gradient shard out in fp32, 4 Psi/32
     * bytes over its buckets, so the "d2h" tasks sum to A x 4 Psi/32 / B, and the nine later
     * micro-batches bring the accumulated shard back first ("restore", 9 x 4 Psi/32 / B);
     * each gather's parameter shard comes over PCIe first ("fetch": the forward's and the
     * backward's, per layer, 2 bytes of the layer's Psi_l/32: A x 2 x 2 Psi_layers/32 / B,
     * Psi_layers the layers' parameters, the embeddings and head included in the first and
     * last). Nothing crosses after the step: the CPU writes the host's shard in place.
     * Tolerance: 1 ps a task (each duration is rounded to the picosecond). */
    const char *both[] = {"training.offload.optimizer=cpu", "training.offload.parameters=cpu",
                          NULL};
    g_autoptr(ParoScenario) s = paro_test_scenario(LLAMA7B, both);
    ParoStepResult r = paro_test_step(s, "zero-3", TRUE);
    double psi = paro_scenario_state_sizes(s).params;
    double B = s->topology->host.pcie_Bps, R = s->topology->host.optimizer_rate;
    double A = (double)s->training.accumulation;
    guint n;
    double opt = sum_tasks(&r, "optimizer", &n);
    ck_assert_uint_eq(n, 1);
    ck_assert_double_eq_tol(opt, psi / 32 * 8 / R, 1e-12);
    double d2h = sum_tasks(&r, "d2h", &n);
    ck_assert_double_eq_tol(d2h, A * 4 * psi / 32 / B, n * 1e-12);
    double restore = sum_tasks(&r, "restore", &n);
    ck_assert_double_eq_tol(restore, (A - 1) * 4 * psi / 32 / B, n * 1e-12);
    double fetch = sum_tasks(&r, "fetch", &n);
    ck_assert_uint_eq(n, (guint)(A * 2 * s->model->layers));
    ck_assert_double_eq_tol(fetch, A * 2 * 2 * psi / 32 / B, n * 1e-12);
    ck_assert(sum_tasks(&r, "h2d", &n) == 0 && n == 0);
    paro_step_result_clear(&r);
    /* ZeRO-1 with the optimizer alone offloaded: gradients reduced at the sync, then the
     * owned fp32 shard out once (4 Psi/32 / B) and the updated 16-bit shard back once
     * (2 Psi/32 / B) */
    g_autoptr(ParoScenario) z1 =
        paro_test_scenario(LLAMA7B, (const char *[]){"training.offload.optimizer=cpu", NULL});
    r = paro_test_step(z1, "zero-1", TRUE);
    ck_assert_double_eq_tol(sum_tasks(&r, "d2h", &n), 4 * psi / 32 / B, 1e-12);
    ck_assert_uint_eq(n, 1);
    ck_assert_double_eq_tol(sum_tasks(&r, "h2d", &n), 2 * psi / 32 / B, 1e-12);
    ck_assert_uint_eq(n, 1);
    paro_step_result_clear(&r);
}
END_TEST

START_TEST(nvme_traffic_around_the_cpu_step)
{
    /* System: as above, the node's NVMe at 24 GB/s read and 12 GB/s write (set here), shared
     * by its 8 GPUs; ZeRO-3, optimizer on NVMe. Expectation, by hand (decision 82): master
     * and moments (K = 12 bytes of Psi/32) read before and written after the CPU step, in
     * series (DeepSpeed's pipeline_read and pipeline_write default false): optimizer =
     * Psi/32 x 8 / R + 12 Psi/32 x 8 / 24e9 + 12 Psi/32 x 8 / 12e9. They leave host memory
     * (4 swap buffers of min(Psi/32, 1e9) fp32 elements stay pinned). Tolerance: 1e-12 s. */
    const char *sets[] = {"topology.node.host.nvme_read=24 GB/s",
                          "topology.node.host.nvme_write=12 GB/s",
                          "training.offload.optimizer=nvme", NULL};
    g_autoptr(ParoScenario) s = paro_test_scenario(LLAMA7B, sets);
    ParoStepResult r = paro_test_step(s, "zero-3", TRUE);
    double psi = paro_scenario_state_sizes(s).params, owned = psi / 32;
    double R = s->topology->host.optimizer_rate;
    guint n;
    double want = owned * 8 / R + 12 * owned * 8 / 24e9 + 12 * owned * 8 / 12e9;
    ck_assert_double_eq_tol(sum_tasks(&r, "optimizer", &n), want, 1e-12);
    /* host: fp32 gradients, the pinned 16-bit copy, the swap buffers */
    double host = 8 * (4 * owned + 2 * owned + 4 * MIN(owned, 1e9) * 4);
    ck_assert_double_eq_tol(r.host_bytes, host, host * 1e-12);
    paro_step_result_clear(&r);
}
END_TEST

START_TEST(llama2_70b_zero3_fits_only_offloaded)
{
    /* Issue #43's check. System: Llama-2-70B (68.98e9 parameters), ZeRO-3 on one node of 8
     * A100-SXM4-80GB, sequence 4096, full recomputation. Expectation, by hand: model states
     * alone take 16 x 68.98e9 / 8 = 138 GB > 80 GiB: out of memory, on the GPU; with the
     * optimizer and the parameters on the CPU the GPU holds activations and buffers only and
     * fits, the node's 2 TB holding 18 x 68.98e9 = 1.24 TB; the step is longer (the CPU
     * step, 68.98e9 / 12.05e9 = 5.7 s, is not hidden). With 1 TB of host memory the host
     * overflows while the GPU fits. */
    g_autoptr(GError) error = NULL;
    g_autofree char *path = paro_test_path(LLAMA70B);
    ParoRunOptions o = PARO_RUN_OPTIONS_INIT;
    g_autoptr(ParoRun) plain = paro_run_load(path, NULL, NULL, &error);
    ck_assert_msg(plain != NULL, "%s", error ? error->message : "");
    ParoStepResult off_r, plain_r;
    ck_assert(paro_run_strategy(plain, paro_strategy_lookup("zero-3"), &o, &plain_r, &error));
    ck_assert(!plain_r.fits && plain_r.host_fits);
    ck_assert(plain_r.peak_bytes > 80 * 1073741824.0);
    const char *sets[] = {"training.offload.optimizer=cpu", "training.offload.parameters=cpu",
                          NULL};
    g_autoptr(ParoRun) off = paro_run_load(path, sets, NULL, &error);
    ck_assert_msg(off != NULL, "%s", error ? error->message : "");
    ck_assert(paro_run_strategy(off, paro_strategy_lookup("zero-3"), &o, &off_r, &error));
    ck_assert(off_r.fits);
    ck_assert(off_r.peak_bytes < 80 * 1073741824.0);
    double psi = paro_run_get_derived(off)->sizes.params;
    ck_assert_double_eq_tol(off_r.host_bytes, 18 * psi, 18 * psi * 1e-12);
    ck_assert(off_r.step > plain_r.step);
    ck_assert(paro_time_to_s(off_r.step - plain_r.step) > 0.9 * psi / 12.05e9);
    const char *small[] = {"training.offload.optimizer=cpu", "training.offload.parameters=cpu",
                           "topology.node.host.memory=1 TB", NULL};
    g_autoptr(ParoRun) tight = paro_run_load(path, small, NULL, &error);
    ParoStepResult tight_r;
    ck_assert(paro_run_strategy(tight, paro_strategy_lookup("zero-3"), &o, &tight_r, &error));
    ck_assert(!tight_r.fits && !tight_r.host_fits);
    ck_assert(tight_r.peak_bytes < 80 * 1073741824.0);
    paro_step_result_clear(&plain_r);
    paro_step_result_clear(&off_r);
    paro_step_result_clear(&tight_r);
}
END_TEST

START_TEST(checkpoints_move_to_the_host)
{
    /* System: the Llama-2-70B scenario (80 layers, h = 8192, s = 4096, b = 1, bf16, full
     * recomputation), ZeRO-3 with optimizer and parameters on the CPU, then checkpoints too.
     * Expectation, by hand (decision 82): a layer's checkpoint is its input, 2 s b h bytes
     * (Korthikanti et al. 2022, full recomputation); all but the last layer's go to the host
     * (DeepSpeed's keep_last_count 1): the node's host memory grows by 8 x 79 x 2 s b h; each
     * is copied out and back once ("offload", "reload": 79 tasks each, 2 s b h / B each), and
     * the GPU's peak falls. Tolerance: 1e-12 relative; 1 ps a task. */
    const char *base[] = {"training.offload.optimizer=cpu", "training.offload.parameters=cpu",
                          NULL};
    const char *act[] = {"training.offload.optimizer=cpu", "training.offload.parameters=cpu",
                         "training.offload.activations=cpu", NULL};
    g_autoptr(ParoScenario) s0 = paro_test_scenario(LLAMA70B, base);
    g_autoptr(ParoScenario) s1 = paro_test_scenario(LLAMA70B, act);
    double kept, whole, input = 2.0 * 4096 * 1 * 8192;
    paro_scenario_layer_activations(s1, 1, &kept, &whole);
    ck_assert_double_eq_tol(kept, input, input * 1e-12);
    ParoStepResult r0 = paro_test_step(s0, "zero-3", TRUE), r1 = paro_test_step(s1, "zero-3", TRUE);
    double grow = 8 * 79 * input;
    ck_assert_double_eq_tol(r1.host_bytes - r0.host_bytes, grow, grow * 1e-9);
    guint n;
    double B = s1->topology->host.pcie_Bps;
    ck_assert_double_eq_tol(sum_tasks(&r1, "offload", &n), 79 * input / B, 79e-12);
    ck_assert_uint_eq(n, 79);
    ck_assert_double_eq_tol(sum_tasks(&r1, "reload", &n), 79 * input / B, 79e-12);
    ck_assert_uint_eq(n, 79);
    ck_assert(r1.peak_bytes < r0.peak_bytes);
    paro_step_result_clear(&r0);
    paro_step_result_clear(&r1);
}
END_TEST

START_TEST(whole_parameters_are_not_offloaded)
{
    /* Decision 81: a strategy that keeps whole parameters (p = N) has no shard to fetch;
     * with parameters: cpu it offloads its optimizer only, as DeepSpeed's stages 1 and 2 do
     * (offload_param is stage 3's). Expectation: zero-2 (NGG) keeps its 2 Psi of parameters
     * on the GPU and runs no "fetch". */
    const char *both[] = {"training.offload.optimizer=cpu", "training.offload.parameters=cpu",
                          NULL};
    g_autoptr(ParoScenario) s = paro_test_scenario(LLAMA7B, both);
    ParoStepResult r = paro_test_step(s, "zero-2", TRUE);
    double psi = paro_scenario_state_sizes(s).params;
    ck_assert_double_eq_tol(r.at_peak.bytes[PARO_MEM_PARAMS], 2 * psi, psi * 1e-12);
    guint n;
    sum_tasks(&r, "fetch", &n);
    ck_assert_uint_eq(n, 0);
    paro_step_result_clear(&r);
}
END_TEST

static Suite *offload_suite(void)
{
    Suite *s = suite_create("offload");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, host_defaults_from_the_datasheets);
    tcase_add_test(tc, offloaded_state_leaves_the_gpu_for_the_host);
    tcase_add_test(tc, cpu_step_and_pcie_copies_in_the_trace);
    tcase_add_test(tc, nvme_traffic_around_the_cpu_step);
    tcase_add_test(tc, llama2_70b_zero3_fits_only_offloaded);
    tcase_add_test(tc, checkpoints_move_to_the_host);
    tcase_add_test(tc, whole_parameters_are_not_offloaded);
    suite_add_tcase(s, tc);
    return s;
}

PARO_CHECK_MAIN(offload_suite)
