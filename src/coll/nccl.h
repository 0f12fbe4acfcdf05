/* SPDX-License-Identifier: MIT */
/* NCCL's view of a cluster and its cost of a collective, from datasheet figures.
 *
 * Two parts, as in NCCL (2.21 to 2.30; docs/nccl.md cites file and function for each):
 * - the topology search (graph/search.cc, connect.cc): from the GPUs' NVLink, PCIe and NIC
 *   bandwidths as NCCL counts them (20.6 GB/s an NVLink4 link, a NIC's Gb/s / 8, PCIe
 *   Gen5 x16 48 GB/s), the channels each algorithm's graph gets and the bandwidth of each
 *   inside and between nodes;
 * - the tuning model (graph/tuning.cc): for each (algorithm, protocol) a latency (a base
 *   plus per-hop latencies by link class) and a bus bandwidth (channels x channel bandwidth
 *   with each protocol's caps), time = latency + bytes / algorithm bandwidth, and the
 *   choice of the fastest enabled pair.
 * The result is NCCL's own estimate of a collective alone on the cluster, which is what it
 * chooses algorithms by; docs/nccl.md and validation/README.md say how close it is to
 * nccl-tests measurements. */
#pragma once

#include <glib.h>

#include "coll/analytic.h"
#include "coll/simulate.h"
#include "topo/topology.h"

G_BEGIN_DECLS

typedef enum {
    PARO_NCCL_TREE,
    PARO_NCCL_RING,
    PARO_NCCL_NVLS,
    PARO_NCCL_NVLS_TREE,
    PARO_NCCL_P2P, /* no collective algorithm: AllToAll as grouped send/receive (ncclGroup) */
    PARO_NCCL_N_ALGOS,
} ParoNcclAlgo;

typedef enum {
    PARO_NCCL_LL,
    PARO_NCCL_LL128,
    PARO_NCCL_SIMPLE,
    PARO_NCCL_N_PROTOS,
} ParoNcclProto;

extern const char *const paro_nccl_algo_names[];  /* "tree", ..., "nvlstree", "p2p", NULL */
extern const char *const paro_nccl_proto_names[]; /* "LL", "LL128", "Simple", NULL */

/* One algorithm's graph: what the topology search finds. */
typedef struct {
    int channels;          /* search channels (0: the algorithm has no graph here) */
    double bw_intra;       /* GB/s a channel inside a node */
    double bw_inter;       /* GB/s a channel between nodes */
    gboolean tree_pattern; /* a simple tree (sm90 fallback): its bandwidth counts 0.85 */
} ParoNcclGraph;

/* A communicator of @ranks GPUs, @per_node on each of its nodes, on a topology. */
typedef struct {
    int arch; /* compute capability x 10: 70, 80, 90, 100 */
    gint64 ranks, nodes;
    double per_node;    /* ranks / nodes */
    gboolean nvlink;    /* GPUs of a node talk over NVLink (else PCIe) */
    double nvlink_GBps; /* per GPU, as NCCL counts its links */
    double pcie_GBps;   /* GPU <-> NIC path */
    double nic_GBps;    /* one NIC, as the communicator's search sees it */
    gint64 nics;        /* per node */
    /* where the node's GPUs outnumber its NICs, each GPU's part of a NIC: concurrent
     * communicators of a GPU or two a node (every local rank's ring at once) share it,
     * which NCCL's search, seeing a whole NIC, does not; 0: a NIC or more each */
    double net_share_GBps;
    gboolean amd_cpu;      /* network overhead and LL cap rows */
    double net_latency_us; /* what the network plugin reports (0 for InfiniBand) */
    gboolean nvls;         /* NVLink SHARP: NVSwitch on Hopper or later, not disabled */
    ParoNcclGraph graphs[PARO_NCCL_N_ALGOS];
    int compute_channels; /* the ring's channels the kernels run on ("coll channels") */
    int simple_threads;   /* ring Simple's threads a channel: 256 below PCIe Gen3's 12 GB/s */
    double latency_scale, bandwidth_scale; /* a calibration's, for this many nodes; else 1 */
} ParoNcclSystem;

/** paro_nccl_gpu_arch: @topology's GPU generation, from its name unless it names one
 * (Ampere's tables for a GPU the table does not know). */
ParoGpuArch paro_nccl_gpu_arch(const ParoTopology *topology);

/**
 * paro_nccl_system_init:
 * NCCL's view of a communicator of @ranks GPUs of @topology, @per_node of them on each
 * node (ranks on whole nodes: @ranks a multiple of @per_node, or @ranks <= @per_node).
 */
void paro_nccl_system_init(ParoNcclSystem *sys, const ParoTopology *topology, gint64 ranks,
                           gint64 per_node);

typedef struct {
    double latency_us; /* NCCL's per-call latency for this (algorithm, protocol) */
    double algbw_GBps; /* its algorithm bandwidth; 0: not available */
} ParoNcclCost;

/**
 * paro_nccl_cost:
 * NCCL's model of @op with @algo and @proto on @sys for @bytes (nccl-tests' size: the whole
 * array): latency and algorithm bandwidth, with the size-dependent corrections (the ring's
 * latency plateau past 64 bytes a channel and rank on several nodes, the tree's correction
 * table). algbw 0 when the pair is disabled or unsupported for @op.
 * AllToAll: NCCL runs it as one send and one receive to every peer in a group, not as a
 * collective algorithm, and tuning.cc has no cost of it; PARO_NCCL_P2P times it
 * (docs/nccl.md, "All-to-all"): each GPU's S/k to each of its node's peers over NVLink and
 * to the others through its share of the NICs at once (paro_coll_alltoall_s), with the LL
 * protocol while a peer's part is at most NCCL_P2P_LL_THRESHOLD (16 KiB), else Simple,
 * and one base latency plus one hop of the slower link class.
 */
ParoNcclCost paro_nccl_cost(const ParoNcclSystem *sys, ParoCollKind op, ParoNcclAlgo algo,
                            ParoNcclProto proto, double bytes);

/** paro_nccl_time_s: latency + bytes / algbw, in seconds; INFINITY when not available. */
double paro_nccl_time_s(const ParoNcclSystem *sys, ParoCollKind op, ParoNcclAlgo algo,
                        ParoNcclProto proto, double bytes);

/**
 * paro_nccl_choose:
 * The (algorithm, protocol) NCCL's tuner picks for @op of @bytes among those allowed by
 * @algos and @protos (bit masks of 1 << ParoNccl*; 0: all, as NCCL_ALGO and NCCL_PROTO
 * unset), and its time in seconds. FALSE when none is available. For AllToAll @algos does
 * not apply (NCCL_ALGO chooses collective algorithms; send/receive has none): PARO_NCCL_P2P,
 * with the one protocol NCCL's size rule picks when @protos allows it.
 */
gboolean paro_nccl_choose(const ParoNcclSystem *sys, ParoCollKind op, double bytes, guint algos,
                          guint protos, ParoNcclAlgo *out_algo, ParoNcclProto *out_proto,
                          double *out_s);

/* What NCCL launches for one call (enqueue.cc, topoGetAlgoInfo): fewer channels and threads
 * than the communicator has when the call is small. */
typedef struct {
    int channels; /* of the communicator's compute_channels (NVLS: its own) */
    int threads;  /* a channel's, before the sync warps */
} ParoNcclLaunch;

/** paro_nccl_launch: the channels and threads NCCL gives a call of @bytes with @algo and
 * @proto: channels drop one by one, then threads halve, while @bytes is below channels x
 * threads x the protocol's per-thread threshold (LL 8, times the ranks on rings; LL128 8;
 * Simple 64). */
ParoNcclLaunch paro_nccl_launch(const ParoNcclSystem *sys, ParoNcclAlgo algo, ParoNcclProto proto,
                                double bytes);

/**
 * paro_nccl_terms:
 * The two terms of a call's time as it runs, before any calibration: NCCL's latency
 * (@out_latency_us) and the transfer at its bandwidth, scaled by the share of the search's
 * rings the call launches on (paro_nccl_launch; @out_transfer_us). FALSE when NCCL's model
 * has no such call.
 */
gboolean paro_nccl_terms(const ParoNcclSystem *sys, ParoCollKind op, ParoNcclAlgo algo,
                         ParoNcclProto proto, double bytes, double *out_latency_us,
                         double *out_transfer_us);

/**
 * paro_nccl_predict_s:
 * The time of @op with @algo and @proto for @bytes as it runs: paro_nccl_terms, each times
 * the calibration's scale (latency x latency_scale + transfer / bandwidth_scale). NCCL's
 * own estimate leaves out the launch share. INFINITY when not available.
 */
double paro_nccl_predict_s(const ParoNcclSystem *sys, ParoCollKind op, ParoNcclAlgo algo,
                           ParoNcclProto proto, double bytes);

/**
 * paro_nccl_run:
 * paro_nccl_choose's choice, timed by paro_nccl_predict_s into @out_s.
 */
gboolean paro_nccl_run(const ParoNcclSystem *sys, ParoCollKind op, double bytes, guint algos,
                       guint protos, ParoNcclAlgo *out_algo, ParoNcclProto *out_proto,
                       double *out_s);

/**
 * paro_nccl_collective_s:
 * @spec's collective on @cluster with NCCL's model: over its scope's communicator (the m
 * GPUs of a group, the n/m of one local rank across groups, or all n), with the algorithm
 * @spec names (auto: the tuner's choice; tree on AllReduce only, others on rings), or for
 * PaRO's hierarchical and ho-ring their phases each on NCCL's model
 * (paro_coll_two_level_s). @protos: allowed protocols (0: all). @out_algo and @out_proto
 * (nullable): the choice (of the largest phase for two-level algorithms). Errors:
 * PARO_SIM_ERROR_INFEASIBLE when NCCL has no such algorithm here (NVLS across nodes, or
 * without NVLink SHARP) or for send/receive, which NCCL's model does not cost.
 */
gboolean paro_nccl_collective_s(const ParoTopology *cluster, const ParoCollSpec *spec, guint protos,
                                double *out_s, ParoNcclAlgo *out_algo, ParoNcclProto *out_proto,
                                GError **error);

G_END_DECLS
