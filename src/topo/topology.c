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
