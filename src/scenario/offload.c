/* SPDX-License-Identifier: MIT */
/* Offloading (decisions 80-82), as DeepSpeed's ZeRO-Offload and ZeRO-Infinity run it
 * (deepspeedai/DeepSpeed at edaa7221267243c7be7fb49c5d5f5c4fb97b4641) and PyTorch FSDP's
 * CPUOffload (pytorch/pytorch torch/distributed/fsdp/api.py at 0aafd810: offload_params
 * "offloads gradients to CPU as well, meaning that the optimizer step runs on CPU").
 *
 * Optimizer offload: the fp32 master and both moments live in host memory
 * (runtime/zero/stage_1_and_2.py: single_partition_of_fp32_groups on 'cpu', pinned;
 * stage3.py: fp32_partitioned_groups_flat), with the gradients the CPU step reads in fp32
 * (their .grad, pinned), and a pinned 16-bit copy of the owned shard the step writes before
 * it goes to the GPU (stage_1_and_2.py param_buffer_of_bit16_for_cpu_offload_groups,
 * stage3.py param_groups_fp16_flat_cpu_memory). Gradients leave the GPU as each reduction
 * ends (stage_1_and_2.py async_inplace_copy_grad_to_fp32_buffer_from_gpu, stage3.py
 * partition_grads), so a strategy that reduces them every micro-batch keeps none on the GPU;
 * one that keeps them whole (g = N) reduces them at the sync and copies its owned part then.
 * With nvme, master and moments live on NVMe, read before and written after the CPU step
 * (swap_tensor/partitioned_optimizer_swapper.py; pipeline_read and pipeline_write default
 * false in runtime/zero/offload_config.py, so in series), through buffer_count = 4 pinned
 * buffers of a sub-group (sub_group_size 1e9 elements, fp32).
 *
 * Parameter offload: the 16-bit shard of a strategy that shards parameters lives in host
 * memory (stage3.py offload_param: partitioned parameters on 'cpu') or on NVMe
 * (partitioned_param_swapper.py, buffer_count 5 x buffer_size 1e8 elements pinned,
 * offload_config.py), and is fetched to the GPU before each gather. */
#include "scenario/offload.h"

#include <math.h>

/* runtime/zero/offload_config.py and config.py defaults (edaa7221). */
#define OPTIMIZER_SWAP_BUFFERS 4.0
#define SUB_GROUP_ELEMENTS 1e9
#define PARAM_SWAP_BUFFERS 5.0
#define PARAM_SWAP_ELEMENTS 1e8

ParoOffloadState paro_offload_state(const ParoScenario *s, const ParoStrategy *st,
                                    const ParoStateSizes *z)
{
    const ParoOffload *f = &s->training.offload;
    ParoOffloadState o = {0};
    double dp = paro_strategy_divisor(st->p, z->n, z->m);
    double dg = paro_strategy_divisor(st->g, z->n, z->m);
    double dos = paro_strategy_divisor(st->os, z->n, z->m);
    o.gpu = paro_strategy_memory(st, z);
    o.owned = z->trainable / dos;
    o.param_shard = z->params / dp;
    o.grads_per_micro = st->g != PARO_PART_N;
    o.grad_shard = o.grads_per_micro ? z->trainable / dg : o.owned;
    o.optimizer = f->optimizer != PARO_OFFLOAD_NONE;
    o.nvme_state = f->optimizer == PARO_OFFLOAD_NVME;
    /* a strategy that keeps whole parameters has no shard to fetch: DeepSpeed offloads
     * parameters in stage 3 only (decision 81) */
    o.parameters = f->parameters != PARO_OFFLOAD_NONE && st->p != PARO_PART_N && dp > 1;
    o.nvme_params = o.parameters && f->parameters == PARO_OFFLOAD_NVME;
    o.activations = f->activations != PARO_OFFLOAD_NONE;
    if (o.optimizer) {
        o.gpu.optimizer = 0;
        if (o.grads_per_micro)
            o.gpu.grads = 0;
        o.host_states += PARO_OFFLOAD_GRAD_BYTES * o.grad_shard;
        if (o.nvme_state) {
            o.nvme_bytes += z->optim_bytes * o.owned;
            o.host_buffers += OPTIMIZER_SWAP_BUFFERS * MIN(o.owned, SUB_GROUP_ELEMENTS) * 4.0;
        } else {
            o.host_states += z->optim_bytes * o.owned;
        }
        if (!o.parameters)
            o.host_buffers += z->param_bytes * o.owned;
    }
    if (o.parameters) {
        double shard = z->param_bytes * o.param_shard;
        o.gpu.params -= shard; /* zero++ keeps its secondary copy on the GPU */
        if (o.nvme_params) {
            o.nvme_bytes += shard;
            o.host_buffers +=
                PARAM_SWAP_BUFFERS * MIN(o.param_shard, PARAM_SWAP_ELEMENTS) * z->param_bytes;
        } else {
            o.host_states += shard;
        }
    }
    return o;
}

double paro_offload_pcie_s(const ParoScenario *s, double bytes)
{
    return bytes > 0 ? bytes / s->topology->host.pcie_Bps : 0;
}

double paro_offload_nvme_s(const ParoScenario *s, double bytes, gboolean write)
{
    const ParoTopology *t = s->topology;
    double Bps = write ? t->host.nvme_write_Bps : t->host.nvme_read_Bps;
    return bytes > 0 && Bps > 0 ? bytes * (double)t->gpus_per_node / Bps : 0;
}

double paro_offload_cpu_step_s(const ParoScenario *s, double owned)
{
    const ParoTopology *t = s->topology;
    return owned * (double)t->gpus_per_node / t->host.optimizer_rate;
}

double paro_offload_optimizer_s(const ParoScenarioDerived *d, const ParoOffloadState *o)
{
    const ParoScenario *s = d->scenario;
    double t = 0;
    if (o->optimizer) {
        t = paro_offload_cpu_step_s(s, o->owned);
        if (o->nvme_state)
            t += paro_offload_nvme_s(s, d->sizes.optim_bytes * o->owned, FALSE) +
                 paro_offload_nvme_s(s, d->sizes.optim_bytes * o->owned, TRUE);
    } else {
        t = paro_scenario_optimizer_s(d, o->owned);
    }
    if (o->nvme_params)
        t += paro_offload_nvme_s(s, d->sizes.param_bytes * o->param_shard, TRUE);
    return t;
}

double paro_offload_after_step_bytes(const ParoScenario *s, const ParoOffloadState *o,
                                     gboolean *to_gpu)
{
    double b_p = paro_precision_bytes(s->training.precision);
    *to_gpu = o->optimizer && !o->parameters;
    if (o->optimizer == o->parameters)
        return 0; /* neither offloaded, or the CPU writes the host's shard in place */
    return b_p * (o->optimizer ? o->owned : o->param_shard);
}

double paro_offload_activation_bytes(const ParoScenario *s, double kept, double layers)
{
    return s->training.offload.activations != PARO_OFFLOAD_NONE && layers > 1 ? kept * (layers - 1)
                                                                              : 0;
}

double paro_offload_copies_s(const ParoScenario *s, const ParoOffloadState *o, double activations,
                             double micro)
{
    double b_p = paro_precision_bytes(s->training.precision);
    double grads = o->optimizer && o->grads_per_micro ? PARO_OFFLOAD_GRAD_BYTES * o->grad_shard : 0;
    double params = o->parameters ? b_p * o->param_shard : 0;
    double to_host = micro * (grads + activations);
    double to_gpu = (micro - 1) * grads + micro * (2 * params + activations);
    double nvme = o->nvme_params ? micro * paro_offload_nvme_s(s, 2 * params, FALSE) : 0;
    return fmax(paro_offload_pcie_s(s, to_host), paro_offload_pcie_s(s, to_gpu) + nvme);
}

double paro_offload_host_bytes(const ParoScenario *s, const ParoOffloadState *o, double activations)
{
    return (double)s->topology->gpus_per_node * (o->host_states + o->host_buffers + activations);
}

static char *figure(double value, double unit)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    return g_strdup(g_ascii_formatd(buf, sizeof buf, "%.4g", value / unit));
}

char *paro_offload_describe(const ParoScenario *s)
{
    if (!paro_scenario_offloads(s))
        return NULL;
    const ParoOffload *f = &s->training.offload;
    const ParoTopology *t = s->topology;
    g_autofree char *memory = figure(t->host.memory_bytes, 1e12);
    g_autofree char *pcie = figure(t->host.pcie_Bps, 1e9);
    g_autofree char *rate = figure(t->host.optimizer_rate, 1e9);
    g_autofree char *read = figure(t->host.nvme_read_Bps, 1e9);
    g_autofree char *write = figure(t->host.nvme_write_Bps, 1e9);
    g_autofree char *nvme = t->host.nvme_read_Bps > 0 && t->host.nvme_write_Bps > 0
                                ? g_strdup_printf("%s/%s GB/s", read, write)
                                : g_strdup("-");
    g_autofree char *source =
        t->host.defaulted ? g_strdup_printf(" (%s default)", t->host.defaulted) : g_strdup("");
    return g_strdup_printf("offload: optimizer %s  parameters %s  activations %s  host: %s TB a "
                           "node, PCIe %s GB/s a GPU, NVMe %s a node, CPU Adam %se9 "
                           "parameters/s a node%s",
                           paro_offload_names[f->optimizer], paro_offload_names[f->parameters],
                           paro_offload_activation_names[f->activations], memory, pcie, nvme, rate,
                           source);
}
