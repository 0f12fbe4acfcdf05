/* SPDX-License-Identifier: MIT */
/* Derived figures of a cluster description. */
#include "topo/topology.h"

#include <string.h>

const char *const paro_fabric_names[] = {"nvswitch", "nvlink", "pcie", NULL};
const char *const paro_gpu_arch_names[] = {"auto", "sm70", "sm80", "sm90", "sm100", NULL};

ParoGpuArch paro_gpu_arch_from_name(const char *name)
{
    static const struct {
        const char *part;
        ParoGpuArch arch;
    } known[] = {{"GB200", PARO_ARCH_SM100}, {"B200", PARO_ARCH_SM100}, {"B300", PARO_ARCH_SM100},
                 {"B100", PARO_ARCH_SM100},  {"H100", PARO_ARCH_SM90},  {"H200", PARO_ARCH_SM90},
                 {"H800", PARO_ARCH_SM90},   {"H20", PARO_ARCH_SM90},   {"GH200", PARO_ARCH_SM90},
                 {"A100", PARO_ARCH_SM80},   {"A800", PARO_ARCH_SM80},  {"A30", PARO_ARCH_SM80},
                 {"A40", PARO_ARCH_SM80},    {"A10", PARO_ARCH_SM80},   {"L40", PARO_ARCH_SM80},
                 {"V100", PARO_ARCH_SM70}};
    for (guint i = 0; name && i < G_N_ELEMENTS(known); i++)
        if (strstr(name, known[i].part))
            return known[i].arch;
    return PARO_ARCH_SM80; /* an unknown GPU: Ampere's tables */
}

ParoGpuTraits paro_gpu_traits_from_name(const char *name)
{
    /* MAMF: the best dense bf16 GEMM rate found by a shape search over cuBLAS (Bekman,
     * ml-engineering, compute/accelerator/README.md, "Maximum Achievable Matmul FLOPS
     * comparison table", CUDA 12.1): A100 SXM 267.9 of 312, H100 SXM 792.1 of 989 (our own
     * H100 measured 788.7 at 4096^3, validation/data/h100), GH200 821.0 of 989. H200 and H800
     * are the H100's die. FlashAttention: an assumption per generation (docs/compute.md):
     * FlashAttention-2 reaches 50-73% of the A100's peak forward and less backward (Dao
     * 2023). On Hopper, the FlashAttention-2 that PyTorch's SDPA and the frameworks ran
     * until FlashAttention-3 (2024, opt-in), measured inside whole layers on our H100
     * (validation/data/h100/2026-11-25_layer.txt): 0.27 of peak with compute.c's per-tile
     * cost and wave fill, fitted to 41 layers; FlashAttention-3 and cuDNN attention users
     * set gpu.attention_efficiency (about 0.5-0.75). No FlashAttention on V100 (sm70).
     * Elementwise kernels: the share of the datasheet HBM bandwidth they reach inside whole
     * layers, measured where we have layers (compute.h); the H200, with 1.43x the H100's
     * bandwidth and the same SMs and clocks, runs them only 1.16x as fast
     * (validation/data/h200/2026-11-26_layer.txt): 0.38 against the H100's 0.47. The
     * others are not measured and take the H100's share. cuDNN's fused attention, timed
     * inside the same layers on our H100 (validation/data/h100/2026-11-26_layer-cudnn.txt):
     * 0.55 of peak with the same per-tile cost, 1.9x FlashAttention-2. fp8 GEMMs (E4M3,
     * validation/data/h100/2026-11-26_gemm-fp8-llama7b.txt): 0.70 of the fp8 peak with the
     * GEMM model's tiles (0.703 on the H100, 0.710 on the H200). The Hopper die's figures
     * stand for the H200, H800 and GH200 (same SMs); the PCIe H100's clocks and power differ,
     * so it has none. The more specific names come first. FlashAttention-1's generation on
     * Hopper (the 2022 Triton kernel llm-foundry ran): not published; calibrated on the
     * llm-foundry H100 bf16 runs of 8k-64k tokens, checked on its fp8 runs
     * (validation/published/fit_flash1.py, docs/compute.md); elsewhere half of
     * FlashAttention-2's rate (Dao 2023). Passes over a unit's flat gradient (the
     * frameworks' casts and divisions, decision 44): large flat kernels that reach more of
     * HBM than a layer's small ones, measured with PyTorch's kernels on 7B-70B units
     * (validation/data/h{100,200}/2026-11-26_passes.txt): 0.750 on the H100 (compute.h),
     * 0.661 on the H200. The power cap on GEMM-heavy layers (decision 45) was fitted on our
     * H100's layers; the A100 (400 W) takes the same figures, not measured on an A100 but
     * checked on every A100 source of the published corpus, each of which it brings closer
     * (decision 47). */
#define HOPPER_FLASH1 0.175
#define HOPPER_POWER 0.50, 0.24 /* also the A100's: decision 47 */
    /* FlashAttention-2's kernel on Hopper beyond the 8k tokens the layer fit saw: measured
     * alone at 16k-128k tokens and as one rank of ring attention up to 1M tokens on our
     * H200 (validation/data/h200/2026-11-28_longseq.txt), 0.34 with the tile cost at which
     * it meets the layer fit at 8k tokens (decision 92) */
#define HOPPER_FLASH_LONG 0.34
    static const struct {
        const char *part;
        ParoGpuTraits traits;
    } known[] = {
        {"GH200",
         {132, 821.0 / 989.0, 0.27, 0, 0.55, 0.70, HOPPER_FLASH1, 0, HOPPER_POWER,
          HOPPER_FLASH_LONG}},
        {"H100 PCIe", {114, 0, 0.27, .long_attention_efficiency = HOPPER_FLASH_LONG}},
        {"H100-PCIE", {114, 0, 0.27, .long_attention_efficiency = HOPPER_FLASH_LONG}},
        {"H100",
         {132, 792.1 / 989.0, 0.27, 0, 0.55, 0.70, HOPPER_FLASH1, 0, HOPPER_POWER,
          HOPPER_FLASH_LONG}},
        {"H200",
         {132, 792.1 / 989.0, 0.27, 0.38, 0.55, 0.70, HOPPER_FLASH1, 0.661, HOPPER_POWER,
          HOPPER_FLASH_LONG}},
        {"H800",
         {132, 792.1 / 989.0, 0.27, 0, 0.55, 0.70, HOPPER_FLASH1, 0, HOPPER_POWER,
          HOPPER_FLASH_LONG}},
        {"A100", {108, 267.9 / 312.0, 0.60, 0, 0, 0, 0, 0, HOPPER_POWER}},
        {"A800", {108, 267.9 / 312.0, 0.60, 0, 0, 0, 0, 0, HOPPER_POWER}},
        {"V100", {80, 0, 0}},
    };
    for (guint i = 0; name && i < G_N_ELEMENTS(known); i++)
        if (strstr(name, known[i].part))
            return known[i].traits;
    return (ParoGpuTraits){0, 0, 0};
}

void paro_topology_free(ParoTopology *t)
{
    if (t == NULL)
        return;
    g_free(t->name);
    g_free(t->source_path);
    g_free(t->gpu.name);
    g_free(t);
}

gint64 paro_topology_n_gpus(const ParoTopology *t)
{
    return t->nodes * t->gpus_per_node;
}

double paro_topology_inter_Bps(const ParoTopology *t)
{
    double node_Bps = (double)t->nics.count * t->nics.bandwidth_Bps;
    if (t->nodes > t->network.nodes_per_leaf)
        node_Bps /= t->network.oversubscription;
    return node_Bps / (double)t->gpus_per_node;
}

double paro_topology_inter_latency_s(const ParoTopology *t)
{
    return t->nics.latency_s + t->network.latency_s;
}

/* Host figures from the DGX datasheets (decision 80). DGX A100 (320 GB): 1 TB of system
 * memory, two AMD EPYC 7742, PCIe Gen4; DGX H100: 2 TB, two Xeon Platinum 8480C, PCIe Gen5
 * (NVIDIA DGX A100 and DGX H100 datasheets). PCIe x16 per GPU, one direction: Gen4 16 GT/s
 * x 16 lanes x 128/130 / 8 = 31.5 GB/s, Gen5 twice that (PCI-SIG base specifications). The
 * CPU optimizer's rate is the memory-bandwidth roofline of DeepSpeedCPUAdam's step: it
 * reads the fp32 parameter, gradient and both moments (16 bytes) and writes parameter and
 * moments (12 bytes) (DeepSpeed csrc/includes/cpu_adam.h, Step_AVX, at edaa7221), then the
 * 16-bit copy reads the fp32 parameter and writes 2 bytes (stage_1_and_2.py step): 34
 * bytes a parameter, over the two sockets' DDR channels: EPYC 7742 8 x DDR4-3200 = 204.8
 * GB/s a socket (AMD's specification), 409.6 GB/s / 34 = 12.05e9 parameters a second;
 * Xeon 8480C 8 x DDR5-4800 = 307.2 GB/s a socket (Intel ARK), 614.4 / 34 = 18.07e9. A
 * roofline: measured CPU Adam runs below it (docs/formats.md says so). */
ParoHostDefault paro_topology_host_default(ParoGpuArch arch)
{
    static const ParoHostDefault dgx_a100 = {"DGX A100 datasheet", 1e12, 31.5e9, 12.05e9};
    static const ParoHostDefault dgx_h100 = {"DGX H100 datasheet", 2e12, 63.0e9, 18.07e9};
    return arch == PARO_ARCH_SM90 || arch == PARO_ARCH_SM100 ? dgx_h100 : dgx_a100;
}

void paro_topology_fill_host(ParoTopology *t)
{
    ParoHostDefault d = paro_topology_host_default(t->gpu.arch);
    gboolean filled = FALSE;
    double *figures[] = {&t->host.memory_bytes, &t->host.pcie_Bps, &t->host.optimizer_rate};
    const double values[] = {d.memory_bytes, d.pcie_Bps, d.optimizer_rate};
    for (guint i = 0; i < G_N_ELEMENTS(figures); i++)
        if (*figures[i] == 0) {
            *figures[i] = values[i];
            filled = TRUE;
        }
    t->host.defaulted = filled ? d.name : NULL;
}
