/* SPDX-License-Identifier: MIT */
/* A homogeneous GPU cluster: nodes of identical GPUs joined by an intra-node fabric
 * (NVSwitch, NVLink or PCIe), each node with NICs into a leaf/spine network. Built by the
 * loader and read-only afterwards. The link-level graph that the discrete-event network
 * model routes on is derived from this description. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum { PARO_FABRIC_NVSWITCH, PARO_FABRIC_NVLINK, PARO_FABRIC_PCIE } ParoFabricKind;
extern const char *const paro_fabric_names[]; /* "nvswitch", "nvlink", "pcie", NULL */

/* GPU generations as NCCL tells them apart. */
typedef enum {
    PARO_ARCH_AUTO, /* from the GPU's name (coll/nccl.c) */
    PARO_ARCH_SM70,
    PARO_ARCH_SM80,
    PARO_ARCH_SM90,
    PARO_ARCH_SM100,
} ParoGpuArch;
extern const char *const paro_gpu_arch_names[]; /* "auto", "sm70", ..., "sm100", NULL */

/** paro_gpu_arch_from_name: the generation a GPU's name says (H100 -> sm90; an unknown
 * name: sm80, Ampere's tables). The loader resolves `arch: auto` with it once, so a
 * collective's cache key never searches the name. */
ParoGpuArch paro_gpu_arch_from_name(const char *name);

/* What a GPU's name says about its compute, for the shape-aware compute model
 * (model/compute.c; sources in docs/compute.md). 0 where the name is not known. */
typedef struct {
    gint64 sms;                  /* streaming multiprocessors: the width of a GEMM wave */
    double matmul_efficiency;    /* best measured dense 16-bit GEMM rate / peak (MAMF) */
    double attention_efficiency; /* FlashAttention's forward+backward rate / peak; 0: none */
    double elementwise_share;    /* elementwise kernels' rate / hbm_Bps; 0: the H100's */
    double
        cudnn_attention_efficiency; /* cuDNN's fused attention rate / peak; 0: FlashAttention's */
    double fp8_matmul_efficiency;   /* best fp8 GEMM rate / fp8 peak; 0: not measured */
    double flash1_attention_efficiency; /* FlashAttention-1's generation; 0: half of FA-2's */
    double flat_pass_share; /* passes over a unit's flat gradient: rate / hbm_Bps; 0: the H100's */
    /* The power cap: a layer whose GEMMs take more than power_knee of its time at the
     * GEMMs' rate runs them 1 + power_slope x (duty - power_knee) times as long; 0: none */
    double power_knee, power_slope;
    /* FlashAttention-2 on long sequences: the rate / peak of a second tile model whose
     * larger rate is taken (decision 92); 0: the first alone */
    double long_attention_efficiency;
} ParoGpuTraits;

/** paro_gpu_traits_from_name: the published figures of a known GPU (A100, H100...). */
ParoGpuTraits paro_gpu_traits_from_name(const char *name);

typedef struct {
    char *name;
    char *source_path;
    gint64 nodes;
    struct {
        ParoGpuArch arch; /* the file's, else from the name at load; AUTO only if built by hand */
        char *name;
        double memory_bytes;  /* HBM capacity */
        double peak_flops;    /* dense 16-bit tensor rate, FLOP/s */
        double hbm_Bps;       /* HBM bandwidth */
        ParoGpuTraits traits; /* the file's, each unset one from the name at load */
    } gpu;
    gint64 gpus_per_node;
    gboolean cpu_amd; /* node.cpu: amd (NCCL's network overhead and LL caps differ) */
    /* The host side of a node, for offloading (node.host; decision 80): each figure the file
     * leaves out (0) is filled at load from the datasheet default of the GPU's generation
     * (paro_topology_host_default), which `defaulted` then names; NVMe has no default. */
    struct {
        double memory_bytes;   /* host memory per node */
        double pcie_Bps;       /* per GPU, host <-> device, each direction */
        double nvme_read_Bps;  /* per node; 0: no NVMe figure */
        double nvme_write_Bps; /* per node; 0: no NVMe figure */
        double optimizer_rate; /* fused CPU Adam, parameters a second per node */
        const char *defaulted; /* (static) the default some figures came from, or NULL */
    } host;
    struct {
        ParoFabricKind kind;
        double bandwidth_Bps; /* per GPU, one direction */
        double latency_s;     /* per hop */
    } fabric;
    struct {
        gint64 count;         /* NICs (rails) per node */
        double bandwidth_Bps; /* each, one direction */
        double latency_s;     /* per hop, NIC to NIC */
    } nics;
    struct {
        gint64 nodes_per_leaf;   /* nodes under one leaf switch */
        double oversubscription; /* leaf downlink:uplink ratio, >= 1 */
        double latency_s;        /* added per inter-node hop (switches) */
    } network;
    struct {
        gint64 channels;        /* rings per ring phase; 0: one per NIC */
        gint64 chunks;          /* ho-ring chunks, tree and broadcast pieces */
        double step_overhead_s; /* fixed cost of each ring step or tree hop */
        double net_latency_s;   /* what the network plugin reports to NCCL (0 for IB) */
        gboolean nvls;          /* NVLink SHARP where the NVSwitch has it (default TRUE) */
        /* Set by a calibration, not by topology files (calib/calib-nccl.c): NCCL's latency
         * and bandwidth times these for communicators on one node [0] and across nodes [1];
         * 1 from datasheets. */
        double latency_scale[2], bandwidth_scale[2];
    } nccl;
} ParoTopology;

void paro_topology_free(ParoTopology *topology);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ParoTopology, paro_topology_free)

/** paro_topology_n_gpus: nodes x GPUs per node. */
gint64 paro_topology_n_gpus(const ParoTopology *t);

/** paro_topology_inter_Bps: a GPU's share of its node's NIC bandwidth, reduced by the
 * oversubscription when the cluster spans more than one leaf switch. */
double paro_topology_inter_Bps(const ParoTopology *t);

/* A node's host figures from a datasheet (decision 80). */
typedef struct {
    const char *name; /* "DGX A100 datasheet" */
    double memory_bytes, pcie_Bps, optimizer_rate;
} ParoHostDefault;

/** paro_topology_host_default: the host figures of the DGX of @arch's generation (V100 and
 * A100: DGX A100; Hopper and later: DGX H100). */
ParoHostDefault paro_topology_host_default(ParoGpuArch arch);

/** paro_topology_fill_host: fills @t's host figures the file left at 0 (NVMe aside) from
 * paro_topology_host_default and names it in host.defaulted when it filled any. */
void paro_topology_fill_host(ParoTopology *t);

/** paro_topology_inter_latency_s: NIC latency plus the switches' latency. */
double paro_topology_inter_latency_s(const ParoTopology *t);

G_END_DECLS
