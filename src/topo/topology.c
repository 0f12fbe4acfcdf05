/* SPDX-License-Identifier: MIT */
/* Derived figures of a cluster description. */
#include "topo/topology.h"

const char *const paro_fabric_names[] = {"nvswitch", "nvlink", "pcie", NULL};
const char *const paro_gpu_arch_names[] = {"auto", "sm70", "sm80", "sm90", "sm100", NULL};

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
