/* SPDX-License-Identifier: MIT */
/* `kind: topology` documents: the GPU, the node (fabric and NICs) and the network. */
#include "yaml/loaders.h"

#include "yaml/schema.h"

/* PARO_FIELD_ENUM fields are written as ints. */
G_STATIC_ASSERT(sizeof(ParoFabricKind) == sizeof(int));
G_STATIC_ASSERT(sizeof(ParoGpuArch) == sizeof(int));
G_STATIC_ASSERT(sizeof(gboolean) == sizeof(int)); /* node.cpu: intel 0, amd 1 */

static const char *const cpu_names[] = {"intel", "amd", NULL};

static const ParoField gpu_fields[] = {
    {"arch", PARO_FIELD_ENUM, 0, G_STRUCT_OFFSET(ParoTopology, gpu.arch), 0, paro_gpu_arch_names,
     NULL, "generation for NCCL's model: auto (default: from the name), sm70, sm80, sm90, sm100"},
    {"name", PARO_FIELD_STRING, PARO_FIELD_REQUIRED, G_STRUCT_OFFSET(ParoTopology, gpu.name), 0,
     NULL, NULL, "GPU model"},
    {"memory", PARO_FIELD_QUANTITY, PARO_FIELD_REQUIRED | PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(ParoTopology, gpu.memory_bytes), PARO_QUANTITY_BYTES, NULL, NULL,
     "HBM capacity, e.g. 80 GiB", &paro_limit_bytes},
    {"peak_flops", PARO_FIELD_QUANTITY, PARO_FIELD_REQUIRED | PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(ParoTopology, gpu.peak_flops), PARO_QUANTITY_FLOP_RATE, NULL, NULL,
     "dense 16-bit tensor rate, e.g. 312 TFLOP/s", &paro_limit_flop_rate},
    {"hbm_bandwidth", PARO_FIELD_QUANTITY, PARO_FIELD_REQUIRED | PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(ParoTopology, gpu.hbm_Bps), PARO_QUANTITY_BANDWIDTH, NULL, NULL,
     "HBM bandwidth, e.g. 2039 GB/s", &paro_limit_bandwidth},
    {"sms", PARO_FIELD_INT, PARO_FIELD_POSITIVE, G_STRUCT_OFFSET(ParoTopology, gpu.traits.sms), 0,
     NULL, NULL, "streaming multiprocessors (default: from the name; A100 108, H100 132)",
     &paro_limit_sms},
    {"matmul_efficiency", PARO_FIELD_DOUBLE, PARO_FIELD_POSITIVE | PARO_FIELD_UNIT_RANGE,
     G_STRUCT_OFFSET(ParoTopology, gpu.traits.matmul_efficiency), 0, NULL, NULL,
     "best measured GEMM rate / peak (default: from the name; A100 0.859, H100 0.801)"},
    {"attention_efficiency", PARO_FIELD_DOUBLE, PARO_FIELD_POSITIVE | PARO_FIELD_UNIT_RANGE,
     G_STRUCT_OFFSET(ParoTopology, gpu.traits.attention_efficiency), 0, NULL, NULL,
     "FlashAttention's rate / peak (default: from the name; A100 0.60, H100 0.27)"},
    {"elementwise_efficiency", PARO_FIELD_DOUBLE, PARO_FIELD_POSITIVE | PARO_FIELD_UNIT_RANGE,
     G_STRUCT_OFFSET(ParoTopology, gpu.traits.elementwise_share), 0, NULL, NULL,
     "elementwise kernels' bandwidth / hbm_bandwidth (default: from the name; H100 0.47, "
     "H200 0.38)"},
    {"flat_pass_efficiency", PARO_FIELD_DOUBLE, PARO_FIELD_POSITIVE | PARO_FIELD_UNIT_RANGE,
     G_STRUCT_OFFSET(ParoTopology, gpu.traits.flat_pass_share), 0, NULL, NULL,
     "the frameworks' passes over a unit's flat gradient: bandwidth / hbm_bandwidth "
     "(default: from the name; H100 0.750, H200 0.661)"},
    {"gemm_power_knee", PARO_FIELD_DOUBLE, PARO_FIELD_POSITIVE | PARO_FIELD_UNIT_RANGE,
     G_STRUCT_OFFSET(ParoTopology, gpu.traits.power_knee), 0, NULL, NULL,
     "the power cap: the share of a layer's time in GEMMs above which they slow down "
     "(default: from the name; Hopper and A100 0.50, else none)"},
    {"gemm_power_slope", PARO_FIELD_DOUBLE, PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(ParoTopology, gpu.traits.power_slope), 0, NULL, NULL,
     "the power cap: a layer's GEMMs take 1 + slope x (their share - knee) as long "
     "(default: from the name; Hopper and A100 0.24, else none)"},
    {"cudnn_attention_efficiency", PARO_FIELD_DOUBLE, PARO_FIELD_POSITIVE | PARO_FIELD_UNIT_RANGE,
     G_STRUCT_OFFSET(ParoTopology, gpu.traits.cudnn_attention_efficiency), 0, NULL, NULL,
     "cuDNN's fused attention rate / peak (training.attention: cudnn; default: from the name, "
     "H100 0.55; else FlashAttention's)"},
    {"fp8_matmul_efficiency", PARO_FIELD_DOUBLE, PARO_FIELD_POSITIVE | PARO_FIELD_UNIT_RANGE,
     G_STRUCT_OFFSET(ParoTopology, gpu.traits.fp8_matmul_efficiency), 0, NULL, NULL,
     "best fp8 GEMM rate / fp8 peak, twice peak_flops (training.fp8; default: from the name, "
     "H100 0.70)"},
    {"flash1_attention_efficiency", PARO_FIELD_DOUBLE, PARO_FIELD_POSITIVE | PARO_FIELD_UNIT_RANGE,
     G_STRUCT_OFFSET(ParoTopology, gpu.traits.flash1_attention_efficiency), 0, NULL, NULL,
     "FlashAttention-1's generation rate / peak (training.attention: flash1; default: from the "
     "name, H100 0.175; else half of attention_efficiency)"},
    {"long_attention_efficiency", PARO_FIELD_DOUBLE, PARO_FIELD_POSITIVE | PARO_FIELD_UNIT_RANGE,
     G_STRUCT_OFFSET(ParoTopology, gpu.traits.long_attention_efficiency), 0, NULL, NULL,
     "FlashAttention-2's rate / peak on long sequences, a second tile model whose larger rate "
     "is taken (training.attention: flash; default: from the name, Hopper 0.34; else none; at or "
     "below attention_efficiency x 32.5 / 35.25: no effect)"},
};

static const ParoField fabric_fields[] = {
    {"kind", PARO_FIELD_ENUM, PARO_FIELD_REQUIRED, G_STRUCT_OFFSET(ParoTopology, fabric.kind), 0,
     paro_fabric_names, NULL, "nvswitch, nvlink or pcie"},
    {"bandwidth", PARO_FIELD_QUANTITY, PARO_FIELD_REQUIRED | PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(ParoTopology, fabric.bandwidth_Bps), PARO_QUANTITY_BANDWIDTH, NULL, NULL,
     "per GPU, one direction", &paro_limit_bandwidth},
    {"latency", PARO_FIELD_QUANTITY, PARO_FIELD_NONNEG,
     G_STRUCT_OFFSET(ParoTopology, fabric.latency_s), PARO_QUANTITY_TIME, NULL, NULL, "per hop",
     &paro_limit_latency},
};

static const ParoField nic_fields[] = {
    {"count", PARO_FIELD_INT, PARO_FIELD_REQUIRED | PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(ParoTopology, nics.count), 0, NULL, NULL, "NICs (rails) per node",
     &paro_limit_nics},
    {"bandwidth", PARO_FIELD_QUANTITY, PARO_FIELD_REQUIRED | PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(ParoTopology, nics.bandwidth_Bps), PARO_QUANTITY_BANDWIDTH, NULL, NULL,
     "each NIC, one direction, e.g. 200 Gb/s", &paro_limit_bandwidth},
    {"latency", PARO_FIELD_QUANTITY, PARO_FIELD_NONNEG,
     G_STRUCT_OFFSET(ParoTopology, nics.latency_s), PARO_QUANTITY_TIME, NULL, NULL,
     "per hop, NIC to NIC", &paro_limit_latency},
};

static gboolean parse_fabric(const ParoNode *node, gpointer ptr, gpointer record, GError **error)
{
    return paro_schema_apply(node, "fabric", fabric_fields, G_N_ELEMENTS(fabric_fields), record,
                             NULL, NULL, error);
}

static gboolean parse_nics(const ParoNode *node, gpointer ptr, gpointer record, GError **error)
{
    return paro_schema_apply(node, "nics", nic_fields, G_N_ELEMENTS(nic_fields), record, NULL, NULL,
                             error);
}

/* node.host: the host side, for offloading (decision 80); left-out figures take the
 * datasheet default of the GPU's generation (paro_topology_fill_host). */
static const ParoField host_fields[] = {
    {"memory", PARO_FIELD_QUANTITY, PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(ParoTopology, host.memory_bytes), PARO_QUANTITY_BYTES, NULL, NULL,
     "host memory per node, e.g. 2 TB (default: the DGX of the GPU's generation)",
     &paro_limit_bytes},
    {"pcie_bandwidth", PARO_FIELD_QUANTITY, PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(ParoTopology, host.pcie_Bps), PARO_QUANTITY_BANDWIDTH, NULL, NULL,
     "host <-> GPU per GPU, each direction, e.g. 31.5 GB/s for PCIe Gen4 x16 (default: Gen4 "
     "before Hopper, Gen5 from Hopper on)",
     &paro_limit_bandwidth},
    {"nvme_read", PARO_FIELD_QUANTITY, PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(ParoTopology, host.nvme_read_Bps), PARO_QUANTITY_BANDWIDTH, NULL, NULL,
     "the node's NVMe read bandwidth, all drives (no default: nvme offload needs it)",
     &paro_limit_bandwidth},
    {"nvme_write", PARO_FIELD_QUANTITY, PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(ParoTopology, host.nvme_write_Bps), PARO_QUANTITY_BANDWIDTH, NULL, NULL,
     "the node's NVMe write bandwidth, all drives (no default: nvme offload needs it)",
     &paro_limit_bandwidth},
    {"optimizer_rate", PARO_FIELD_DOUBLE, PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(ParoTopology, host.optimizer_rate), 0, NULL, NULL,
     "parameters a second the node's CPUs update with a fused CPU Adam (DeepSpeedCPUAdam), "
     "shared by its GPUs (default: the DGX datasheet's memory-bandwidth roofline)",
     &paro_limit_parameters},
};

static gboolean parse_host(const ParoNode *node, gpointer ptr, gpointer record, GError **error)
{
    return paro_schema_apply(node, "host", host_fields, G_N_ELEMENTS(host_fields), record, NULL,
                             NULL, error);
}

static const ParoField node_fields[] = {
    {"gpus", PARO_FIELD_INT, PARO_FIELD_REQUIRED | PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(ParoTopology, gpus_per_node), 0, NULL, NULL, "GPUs per node",
     &paro_limit_gpus_per_node},
    {"fabric", PARO_FIELD_CUSTOM, PARO_FIELD_REQUIRED, 0, 0, NULL, parse_fabric,
     "intra-node links"},
    {"nics", PARO_FIELD_CUSTOM, PARO_FIELD_REQUIRED, 0, 0, NULL, parse_nics, "network interfaces"},
    {"cpu", PARO_FIELD_ENUM, 0, G_STRUCT_OFFSET(ParoTopology, cpu_amd), 0, cpu_names, NULL,
     "intel (default) or amd: NCCL's per-step network overhead and LL caps differ"},
    {"host", PARO_FIELD_CUSTOM, 0, 0, 0, NULL, parse_host,
     "host memory, PCIe, NVMe and CPU optimizer figures, for offloading"},
};

static const ParoField network_fields[] = {
    {"nodes_per_leaf", PARO_FIELD_INT, PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(ParoTopology, network.nodes_per_leaf), 0, NULL, NULL,
     "nodes under one leaf switch", &paro_limit_nodes},
    {"oversubscription", PARO_FIELD_DOUBLE, PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(ParoTopology, network.oversubscription), 0, NULL, NULL,
     "leaf downlink:uplink bandwidth ratio (1 = non-blocking)"},
    {"latency", PARO_FIELD_QUANTITY, PARO_FIELD_NONNEG,
     G_STRUCT_OFFSET(ParoTopology, network.latency_s), PARO_QUANTITY_TIME, NULL, NULL,
     "switch latency added to each inter-node hop", &paro_limit_latency},
};

static const ParoField nccl_fields[] = {
    {"channels", PARO_FIELD_INT, PARO_FIELD_POSITIVE, G_STRUCT_OFFSET(ParoTopology, nccl.channels),
     0, NULL, NULL, "rings per ring phase (default: NICs per node)", &paro_limit_channels},
    {"chunks", PARO_FIELD_INT, PARO_FIELD_POSITIVE, G_STRUCT_OFFSET(ParoTopology, nccl.chunks), 0,
     NULL, NULL, "ho-ring chunks, tree and broadcast pieces (default 8)", &paro_limit_chunks},
    {"step_overhead", PARO_FIELD_QUANTITY, PARO_FIELD_NONNEG,
     G_STRUCT_OFFSET(ParoTopology, nccl.step_overhead_s), PARO_QUANTITY_TIME, NULL, NULL,
     "fixed cost of each ring step or tree hop, beyond the links' latency", &paro_limit_latency},
    {"net_latency", PARO_FIELD_QUANTITY, PARO_FIELD_NONNEG,
     G_STRUCT_OFFSET(ParoTopology, nccl.net_latency_s), PARO_QUANTITY_TIME, NULL, NULL,
     "latency the network plugin reports to NCCL (0 for InfiniBand, 75 us for AWS EFA)",
     &paro_limit_latency},
    {"nvls", PARO_FIELD_BOOL, 0, G_STRUCT_OFFSET(ParoTopology, nccl.nvls), 0, NULL, NULL,
     "true (default) or false: NVLink SHARP where the NVSwitch has it (Hopper and later)"},
};

static gboolean parse_nccl(const ParoNode *node, gpointer ptr, gpointer record, GError **error)
{
    return paro_schema_apply(node, "nccl", nccl_fields, G_N_ELEMENTS(nccl_fields), record, NULL,
                             NULL, error);
}

static gboolean parse_gpu(const ParoNode *node, gpointer ptr, gpointer record, GError **error)
{
    return paro_schema_apply(node, "gpu", gpu_fields, G_N_ELEMENTS(gpu_fields), record, NULL, NULL,
                             error);
}

static gboolean parse_node(const ParoNode *node, gpointer ptr, gpointer record, GError **error)
{
    return paro_schema_apply(node, "node", node_fields, G_N_ELEMENTS(node_fields), record, record,
                             NULL, error);
}

static gboolean parse_network(const ParoNode *node, gpointer ptr, gpointer record, GError **error)
{
    ParoTopology *t = record;
    if (!paro_schema_apply(node, "network", network_fields, G_N_ELEMENTS(network_fields), record,
                           NULL, NULL, error))
        return FALSE;
    if (t->network.oversubscription < 1) {
        paro_node_error(error, paro_node_lookup(node, "oversubscription"), PARO_CONFIG_ERROR_RANGE,
                        "'oversubscription' must be at least 1");
        return FALSE;
    }
    return TRUE;
}

static const ParoField topology_fields[] = {
    {"kind", PARO_FIELD_HEADER, 0, 0, 0, NULL, NULL, "topology"},
    {"schema", PARO_FIELD_HEADER, 0, 0, 0, NULL, NULL, "1"},
    {"name", PARO_FIELD_STRING, PARO_FIELD_REQUIRED, G_STRUCT_OFFSET(ParoTopology, name), 0, NULL,
     NULL, "short name used in reports"},
    {"description", PARO_FIELD_HEADER, 0, 0, 0, NULL, NULL, "free text"},
    {"nodes", PARO_FIELD_INT, PARO_FIELD_REQUIRED | PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(ParoTopology, nodes), 0, NULL, NULL, "nodes in the cluster",
     &paro_limit_nodes},
    {"gpu", PARO_FIELD_CUSTOM, PARO_FIELD_REQUIRED, 0, 0, NULL, parse_gpu, "the GPU"},
    {"node", PARO_FIELD_CUSTOM, PARO_FIELD_REQUIRED, 0, 0, NULL, parse_node, "one node"},
    {"network", PARO_FIELD_CUSTOM, 0, 0, 0, NULL, parse_network, "switches between nodes"},
    {"nccl", PARO_FIELD_CUSTOM, 0, 0, 0, NULL, parse_nccl, "collective protocol parameters"},
};

ParoTopology *paro_topology_from_node(const ParoNode *root, GError **error)
{
    if (!paro_schema_check_header(root, "topology", error))
        return NULL;
    g_autoptr(ParoTopology) t = g_new0(ParoTopology, 1);
    t->network.nodes_per_leaf = G_MAXINT32;
    t->network.oversubscription = 1;
    t->nccl.chunks = 8;
    t->nccl.nvls = TRUE;
    for (int i = 0; i < 2; i++)
        t->nccl.latency_scale[i] = t->nccl.bandwidth_scale[i] = 1;
    if (!paro_schema_apply(root, "topology", topology_fields, G_N_ELEMENTS(topology_fields), t, t,
                           NULL, error))
        return NULL;
    if (t->gpu.arch == PARO_ARCH_AUTO)
        t->gpu.arch = paro_gpu_arch_from_name(t->gpu.name);
    ParoGpuTraits named = paro_gpu_traits_from_name(t->gpu.name);
    ParoGpuTraits *traits = &t->gpu.traits;
    if (traits->sms == 0)
        traits->sms = named.sms;
    if (traits->matmul_efficiency == 0)
        traits->matmul_efficiency = named.matmul_efficiency;
    if (traits->attention_efficiency == 0)
        traits->attention_efficiency = named.attention_efficiency;
    if (traits->elementwise_share == 0)
        traits->elementwise_share = named.elementwise_share;
    if (traits->flat_pass_share == 0)
        traits->flat_pass_share = named.flat_pass_share;
    if (traits->power_knee == 0)
        traits->power_knee = named.power_knee;
    if (traits->power_slope == 0)
        traits->power_slope = named.power_slope;
    if (traits->cudnn_attention_efficiency == 0)
        traits->cudnn_attention_efficiency = named.cudnn_attention_efficiency;
    if (traits->fp8_matmul_efficiency == 0)
        traits->fp8_matmul_efficiency = named.fp8_matmul_efficiency;
    if (traits->flash1_attention_efficiency == 0)
        traits->flash1_attention_efficiency = named.flash1_attention_efficiency;
    if (traits->long_attention_efficiency == 0)
        traits->long_attention_efficiency = named.long_attention_efficiency;
    paro_topology_fill_host(t);
    t->source_path = g_strdup(root->source);
    return g_steal_pointer(&t);
}

ParoTopology *paro_topology_load(const char *path, GError **error)
{
    g_autoptr(ParoNode) root = paro_yaml_load_file(path, error);
    if (root == NULL)
        return NULL;
    return paro_topology_from_node(root, error);
}
