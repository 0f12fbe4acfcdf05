/* SPDX-License-Identifier: MIT */
/* NCCL's topology search and tuning model (nccl.h), paraphrased from NCCL 2.30's
 * src/graph/search.cc, connect.cc, tuning.cc and topo.h; docs/nccl.md traces each rule.
 *
 * Search, as far as a datasheet cluster needs it (one GPU kind, NICs shared evenly):
 * - Link bandwidths as NCCL counts them: NVLink 20 GB/s a link on sm70/sm80, 20.6 on
 *   sm90, 40.1 on sm100, against 25 (50 on sm100) in datasheets, so a GPU's NVLink
 *   bandwidth is the datasheet's x 0.8 (0.824 on sm90); PCIe x16 12/24/48 GB/s for Gen
 *   3/4/5 (sm70/sm80/sm90+); a NIC's Gb/s / 8.
 * - One node: a ring channel loads each GPU's NVLink once each way; the search takes the
 *   speeds of its list from the highest the links allow and keeps the one with the most
 *   channels x speed (ties to the faster), stopping when the next speed is below 0.49 of
 *   the best. Several nodes: a channel enters a node through one NIC and leaves through
 *   another, so channels are bounded by NICs x (NIC bandwidth / speed) and by NVLink
 *   (channels x speed x (ppn-1)/ppn <= a GPU's NVLink), the speed by the NIC and PCIe.
 * - Duplication: the channels double at half the speed unless the speed is below 25, or on
 *   sm90+ below 50 with more than 4 channels. The kernels run on twice the search's
 *   channels, twice again on sm90+ across nodes below 16 when the speed exceeds 45.
 * - Trees take the ring's channels; on sm90 across nodes with a NIC per GPU NCCL falls back
 *   to a simple tree pattern, counted at 0.85. NVLS (NVSwitch, sm90+): one channel per
 *   head GPU (every GPU on one node, one per NIC across nodes) at the highest speed for
 *   which a GPU's link carries heads + 1 channels; across nodes its inter speed is the NIC's.
 *
 * Tuning: the constants of tuning.cc's ncclTunerConstantsDefaults (base and per-hop
 * latencies per algorithm, protocol and link class; LL, LL128, tree and NVLS-tree caps per
 * GPU generation and node count), its bus-bandwidth refinements, the conversion to
 * algorithm bandwidth, the ring's latency plateau and the tree's correction table. */
#include "coll/nccl.h"

#include <math.h>
#include <string.h>

#include "core/error.h"

const char *const paro_nccl_algo_names[] = {"tree", "ring", "nvls", "nvlstree", "p2p", NULL};
const char *const paro_nccl_proto_names[] = {"LL", "LL128", "Simple", NULL};

/* ---- search ---- */

static const double speeds_intra[] = {40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3};
static const double speeds_inter[] = {48, 30, 28, 24, 20, 18,  15,  12,   10,  9,
                                      7,  6,  5,  4,  3,  2.4, 1.2, 0.24, 0.12};
static const double sm90_intra[] = {60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3};
static const double sm90_inter[] = {48, 45, 42, 40, 30,  24,  22,   20,  17.5,
                                    15, 12, 6,  3,  2.4, 1.2, 0.24, 0.12};
static const double sm100_intra[] = {90, 80, 70, 60, 50, 45, 40, 30, 24, 20, 19, 18};
static const double sm100_inter[] = {96, 86,   80, 48, 45.1, 42, 40,  30,  24,   22,
                                     20, 17.5, 15, 12, 6,    3,  2.4, 1.2, 0.24, 0.12};

/* MAXCHANNELS / 2: the ring graph's bound (NCCL 2.25+). */
#define MAX_SEARCH_CHANNELS 32

static void speed_list(int arch, gboolean inter, const double **list, int *n)
{
#define PICK(a) (*list = (a), *n = (int)G_N_ELEMENTS(a))
    if (arch >= 100)
        inter ? PICK(sm100_inter) : PICK(sm100_intra);
    else if (arch >= 90)
        inter ? PICK(sm90_inter) : PICK(sm90_intra);
    else
        inter ? PICK(speeds_inter) : PICK(speeds_intra);
#undef PICK
}

/* Channels a ring gets at @speed. */
static int ring_channels(const ParoNcclSystem *s, double speed)
{
    double eps = 1e-9;
    int ch = MAX_SEARCH_CHANNELS;
    if (s->nodes == 1) {
        ch = MIN(ch, (int)floor(s->nvlink_GBps / speed + eps));
    } else {
        ch = MIN(ch, (int)((double)s->nics * floor(s->nic_GBps / speed + eps)));
        if (s->per_node > 1)
            ch = MIN(ch,
                     (int)floor(s->nvlink_GBps * s->per_node / ((s->per_node - 1) * speed) + eps));
    }
    return MAX(ch, 0);
}

static void search_ring(ParoNcclSystem *s)
{
    gboolean inter = s->nodes > 1;
    const double *list;
    int n;
    speed_list(s->arch, inter, &list, &n);
    double max_bw = inter ? MIN(s->nic_GBps, s->pcie_GBps) : s->nvlink_GBps;
    if (!s->nvlink && !inter)
        max_bw = s->pcie_GBps;
    int i = 0;
    while (i < n - 1 && list[i] > max_bw)
        i++;
    int best_ch = 0;
    double best_speed = 0;
    for (; i < n; i++) {
        int ch = s->nvlink || inter ? ring_channels(s, list[i]) : (list[i] <= max_bw ? 1 : 0);
        if ((double)ch * list[i] > (double)best_ch * best_speed + 1e-9) {
            best_ch = ch;
            best_speed = list[i];
        }
        if (best_ch == MAX_SEARCH_CHANNELS)
            break;
        if (i + 1 < n && best_ch > 0 && list[i + 1] / best_speed <= 0.49)
            break;
    }
    if (best_ch == 0) { /* slower than every speed of the list */
        best_ch = 1;
        best_speed = max_bw;
    }
    /* ncclTopoDupChannels */
    gboolean dup = !(best_speed < 25 || (s->arch > 80 && best_speed < 50 && best_ch > 4));
    if (dup) {
        best_ch = MIN(2 * best_ch, MAX_SEARCH_CHANNELS);
        best_speed /= 2;
    }
    s->graphs[PARO_NCCL_RING] = (ParoNcclGraph){best_ch, best_speed, best_speed, FALSE};
    s->compute_channels = 2 * best_ch;
    if (s->arch >= 90 && inter && best_speed > 45.0 && s->compute_channels < 16)
        s->compute_channels *= 2;
    s->simple_threads = best_speed * best_ch <= 12.0 ? 256 : 512; /* PCI_BW */
}

static void search_tree_and_nvls(ParoNcclSystem *s)
{
    ParoNcclGraph tree = s->graphs[PARO_NCCL_RING];
    /* sm90 across nodes with a NIC for every GPU: no balanced tree, NCCL's simple one */
    tree.tree_pattern = s->arch >= 90 && s->nodes > 1 && (double)s->nics >= s->per_node;
    s->graphs[PARO_NCCL_TREE] = tree;
    if (!s->nvls || s->per_node < 2)
        return;
    gint64 heads = s->nodes == 1 ? (gint64)s->per_node : MIN(s->nics, (gint64)s->per_node);
    const double *list;
    int n;
    speed_list(s->arch, FALSE, &list, &n);
    double intra = 0;
    for (int i = 0; i < n && intra == 0; i++)
        if ((double)(heads + 1) * list[i] <= s->nvlink_GBps + 1e-9)
            intra = list[i];
    if (intra == 0)
        return;
    double inter;
    if (s->nodes == 1) { /* pass 2 raises bwInter while below twice bwIntra */
        inter = intra;
        for (int i = n - 1; i >= 0; i--)
            if (list[i] > inter && list[i] <= 2 * intra)
                inter = list[i];
    } else {
        const double *il;
        int ni;
        speed_list(s->arch, TRUE, &il, &ni);
        double max_bw = MIN(s->nic_GBps, s->pcie_GBps);
        inter = 0;
        for (int i = 0; i < ni && inter == 0; i++)
            if (il[i] <= max_bw)
                inter = il[i];
    }
    s->graphs[PARO_NCCL_NVLS] = (ParoNcclGraph){(int)heads, intra, inter, FALSE};
    s->graphs[PARO_NCCL_NVLS_TREE] = s->graphs[PARO_NCCL_NVLS];
}

ParoGpuArch paro_nccl_gpu_arch(const ParoTopology *t)
{
    return t->gpu.arch != PARO_ARCH_AUTO ? t->gpu.arch : paro_gpu_arch_from_name(t->gpu.name);
}

/* The GPU generation as compute capability x 10. */
static int arch_of(const ParoTopology *t)
{
    static const int cc[] = {80, 70, 80, 90, 100};
    return cc[paro_nccl_gpu_arch(t)];
}

void paro_nccl_system_init(ParoNcclSystem *s, const ParoTopology *t, gint64 ranks, gint64 per_node)
{
    *s = (ParoNcclSystem){0};
    s->arch = arch_of(t);
    s->ranks = ranks;
    per_node = MAX(1, MIN(per_node, ranks));
    s->nodes = MAX(1, ranks / per_node);
    s->per_node = (double)ranks / (double)s->nodes;
    s->nvlink = t->fabric.kind != PARO_FABRIC_PCIE;
    /* NCCL's per-link figure over the datasheet's */
    double ratio = s->arch >= 100 ? 40.1 / 50 : s->arch >= 90 ? 20.6 / 25 : 20.0 / 25;
    s->nvlink_GBps = t->fabric.bandwidth_Bps / 1e9 * (s->nvlink ? ratio : 1);
    s->pcie_GBps = s->arch >= 90 ? 48 : s->arch >= 80 ? 24 : 12;
    if (!s->nvlink)
        s->nvlink_GBps = MIN(s->nvlink_GBps, s->pcie_GBps);
    /* More NICs than GPUs, a whole number a GPU: NCCL sees one network device per GPU
     * carrying them all (NCCL 2.24+ fuses a NIC's ports, NCCL_NET_MERGE_LEVEL; AWS's plugin
     * groups a GPU's EFA rails into one device). */
    gint64 nics = t->nics.count;
    double nic = t->nics.bandwidth_Bps / 1e9;
    if (nics > t->gpus_per_node && nics % t->gpus_per_node == 0) {
        nic *= (double)(nics / t->gpus_per_node);
        nics = t->gpus_per_node;
    }
    s->nic_GBps = nic;
    if (s->nodes > t->network.nodes_per_leaf)
        s->nic_GBps /= t->network.oversubscription;
    /* the NICs a node's GPUs of this communicator reach: their share of the node's */
    double share = s->per_node / (double)t->gpus_per_node;
    s->nics = MAX(1, (gint64)floor((double)nics * share + 1e-9));
    s->net_share_GBps = (double)nics * share < 1 ? s->nic_GBps * (double)nics * share : 0;
    s->amd_cpu = t->cpu_amd;
    s->net_latency_us = t->nccl.net_latency_s * 1e6;
    s->nvls = t->fabric.kind == PARO_FABRIC_NVSWITCH && s->arch >= 90 && t->nccl.nvls;
    int across = s->nodes > 1;
    s->latency_scale = t->nccl.latency_scale[across] > 0 ? t->nccl.latency_scale[across] : 1;
    s->bandwidth_scale = t->nccl.bandwidth_scale[across] > 0 ? t->nccl.bandwidth_scale[across] : 1;
    search_ring(s);
    search_tree_and_nvls(s);
}

/* ---- tuning ---- */

enum { HW_NVLINK, HW_PCI, HW_NET };

/* tuning.cc's defaults: [algo][proto], algorithms in ParoNcclAlgo order */
static const double base_latency[PARO_NCCL_N_ALGOS][PARO_NCCL_N_PROTOS] = {
    {6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}};
static const double hw_latency[3][PARO_NCCL_N_ALGOS][PARO_NCCL_N_PROTOS] = {
    /* NVLINK */ {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, 25}, {0, 0, 25}},
    /* PCI */ {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 0}, {0, 0, 0}},
    /* NET */ {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 18}, {0, 0, 20.9}},
};
/* [generation row][1 node, 2 nodes, more]; the LL row is the GPU's on one node, the CPU's
 * (Intel 0, AMD 1) across nodes */
static const double ll_max_bw[4][3] = {
    {39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}};
static const double per_ch_ring_ll128[4][3] = {
    {20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 36.7}, {40, 40, 40}};
static const double per_ch_tree_ll128[4][3] = {
    {20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
static const double per_ch_tree[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};
static const double per_ch_nvls_tree[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 80.0}};
static const double nvls_efficiency[4] = {0, 0, 0.85, 0.74};
/* Powers of two from 64 B to 256 MiB: NCCL's correction of the tree's bandwidth. */
static const double tree_correction[PARO_NCCL_N_PROTOS][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6,  .5,
     .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6,  .6,
     .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
     .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9},
};

static int generation(int arch)
{
    return arch >= 100 ? 3 : arch >= 90 ? 2 : arch >= 80 ? 1 : 0;
}

static int log2_floor(double x)
{
    int l = -1;
    while (x >= 1 && l < 62) {
        x /= 2;
        l++;
    }
    return l;
}

/* A part of at most this many bytes a peer goes with LL (enqueue.cc, addP2pToPlan:
 * protoLL while bytes <= nChannels x NCCL_P2P_LL_THRESHOLD, 16384 by default; a part below
 * 64 KiB, half or an eighth of the p2p chunk size, takes one channel). */
#define P2P_LL_THRESHOLD 16384.0

/* AllToAll as NCCL runs it (enqueue.cc, scheduleP2pTasksToPlan and addP2pToPlan, NCCL
 * 2.30): one send and one receive to each peer, posted in one group, over NVLink to the
 * node's peers and through the network to the others, all at once. tuning.cc has no cost
 * of send/receive; this one takes the search's figures (a GPU's NVLink, or PCIe, as NCCL
 * counts it; the NICs the communicator's GPUs of a node reach, shared by them, and at most
 * a GPU's PCIe) for the two link classes and paro_coll_alltoall_s's formula for the
 * bandwidth; LL moves half its lines' bytes as data (addP2pToPlan: chunkDataSize /= 2);
 * latency: the protocol's base and one hop of the slower class (every send is posted
 * together), as for a ring step (NET hops pay the network plugin's latency, Simple's
 * twice with the flush). LL128 is never used for send/receive. */
static ParoNcclCost p2p_cost(const ParoNcclSystem *s, ParoNcclProto p)
{
    ParoNcclCost none = {0, 0};
    if (s->ranks <= 1 || p == PARO_NCCL_LL128)
        return none;
    double ppn = s->per_node;
    ParoCommModel cm = {
        .n = s->ranks,
        .m = s->ranks,
        .gpus_per_node = (gint64)ppn,
        .intra_Bps = s->nvlink_GBps * 1e9,
        .inter_Bps = MIN(MIN(s->pcie_GBps, s->nic_GBps * (double)s->nics / ppn),
                         s->net_share_GBps > 0 ? s->net_share_GBps : INFINITY) *
                     1e9,
        .algorithm = PARO_ALGO_RING,
        .chunks = 1,
    };
    /* no latency in cm: the time of 1 GB is its transfer alone */
    double bw = 1.0 / paro_coll_alltoall_s(&cm, s->ranks, (gint64)ppn, 1e9);
    if (p == PARO_NCCL_LL)
        bw *= 0.5;
    int intra_hw = s->nvlink ? HW_NVLINK : HW_PCI;
    double hop = s->nodes > 1 ? hw_latency[HW_NET][PARO_NCCL_RING][p] +
                                    s->net_latency_us * (p == PARO_NCCL_SIMPLE ? 2 : 1)
                              : hw_latency[intra_hw][PARO_NCCL_RING][p];
    return (ParoNcclCost){base_latency[PARO_NCCL_RING][p] + hop, bw};
}

/* The model's tables for @op: bus bandwidth converted to algorithm bandwidth, latency. */
static ParoNcclCost base_cost(const ParoNcclSystem *s, ParoCollKind op, ParoNcclAlgo a,
                              ParoNcclProto p)
{
    ParoNcclCost none = {0, 0};
    if (op == PARO_COLL_ALLTOALL || a == PARO_NCCL_P2P)
        return op == PARO_COLL_ALLTOALL && a == PARO_NCCL_P2P ? p2p_cost(s, p) : none;
    const ParoNcclGraph *g = &s->graphs[a];
    gboolean ar = op == PARO_COLL_ALLREDUCE,
             ag_rs = op == PARO_COLL_ALLGATHER || op == PARO_COLL_REDUCESCATTER;
    if (g->channels == 0 || s->ranks <= 1)
        return none;
    if (!ar && !ag_rs && a != PARO_NCCL_RING)
        return none;
    if (ag_rs && a != PARO_NCCL_RING && a != PARO_NCCL_NVLS)
        return none;
    if ((a == PARO_NCCL_NVLS || a == PARO_NCCL_NVLS_TREE) && p != PARO_NCCL_SIMPLE)
        return none;
    /* enablement: NVLSTree only across nodes, NVLS only on one (no CollNet), NVLS
     * AllGather/ReduceScatter across nodes need CollNet */
    if (a == PARO_NCCL_NVLS_TREE && s->nodes == 1)
        return none;
    if (a == PARO_NCCL_NVLS && s->nodes > 1)
        return none;
    /* LL128 needs NVLink-class paths inside the node (and GPU-NIC paths NCCL accepts) */
    if (p == PARO_NCCL_LL128 && !s->nvlink)
        return none;
    int gen = generation(s->arch), nodes_index = s->nodes <= 2 ? (int)s->nodes - 1 : 2;
    int ll_row = s->nodes == 1 ? gen : (s->amd_cpu ? 1 : 0);
    double ppn = s->per_node, n = (double)s->ranks;
    double nsteps = ar ? 2 * (n - 1) : ag_rs ? n - 1 : n;
    double bw = s->nodes <= 2 ? g->bw_intra : g->bw_inter;
    if (a == PARO_NCCL_NVLS || a == PARO_NCCL_NVLS_TREE) {
        if (g->channels < 2)
            return none;
        double intra = g->bw_intra * nvls_efficiency[gen] * (g->channels - 1) / g->channels;
        intra *= ar ? 2.0 : (ppn - 1) / ppn;
        double inter = g->bw_inter * (s->nodes <= 2 && a == PARO_NCCL_NVLS_TREE ? 2 : 1);
        bw = MIN(intra, inter);
        if (a == PARO_NCCL_NVLS_TREE)
            bw = MIN(bw, per_ch_nvls_tree[gen][nodes_index]);
    }
    double bus = g->channels * bw;
    /* the search saw a whole NIC; the communicators that share it at once get their part */
    if (s->nodes > 1 && s->net_share_GBps > 0)
        bus = MIN(bus, s->net_share_GBps);
    if (a == PARO_NCCL_RING && p == PARO_NCCL_LL)
        bus = MIN(ll_max_bw[ll_row][nodes_index], bus * .5);
    if (a == PARO_NCCL_RING && p == PARO_NCCL_LL128)
        bus = MIN(bus * 0.92, g->channels * per_ch_ring_ll128[gen][nodes_index]);
    if (a == PARO_NCCL_TREE && ar)
        bus = MIN(bus * .92, g->channels * per_ch_tree[gen][nodes_index]);
    if (a == PARO_NCCL_TREE && p == PARO_NCCL_LL)
        bus = MIN(bus / 3.8, ll_max_bw[ll_row][nodes_index]);
    if (a == PARO_NCCL_TREE && p == PARO_NCCL_LL128)
        bus = MIN(bus * (s->nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                  g->channels * per_ch_tree_ll128[gen][nodes_index]);
    if (a == PARO_NCCL_TREE && g->tree_pattern)
        bus *= .85;
    if (!(a != PARO_NCCL_RING && ag_rs))
        bus *= a == PARO_NCCL_TREE ? 0.5 : n / nsteps;

    int intra_hw = s->nvlink ? HW_NVLINK : HW_PCI;
    double lat = base_latency[a][p];
    double intra_lat = hw_latency[intra_hw][a][p];
    double inter_lat =
        (ppn == 1 ? hw_latency[HW_NET][PARO_NCCL_TREE][p] : hw_latency[HW_NET][a][p]) +
        s->net_latency_us;
    if (p == PARO_NCCL_SIMPLE)
        inter_lat += s->net_latency_us; /* the flush */
    int log_nodes = log2_floor((double)s->nodes);
    switch (a) {
    case PARO_NCCL_RING: {
        double net_overhead = 0;
        if (s->nodes > 1)
            net_overhead = (s->amd_cpu ? 2.0 : 1.0) * (p == PARO_NCCL_SIMPLE ? 3 : 1);
        intra_lat = MAX(intra_lat, net_overhead);
        double inter_steps = s->nodes == 1 ? 0 : (double)(ar ? 2 * (s->nodes - 1) : s->nodes - 1);
        lat += (nsteps - inter_steps) * intra_lat + inter_steps * inter_lat;
        break;
    }
    case PARO_NCCL_TREE:
        lat += 2 * ((ppn - 1) * intra_lat + log_nodes * inter_lat);
        break;
    case PARO_NCCL_NVLS:
        lat = intra_lat + (s->nodes > 1 ? inter_lat : 0);
        break;
    case PARO_NCCL_NVLS_TREE:
        lat += intra_lat + 2 * log_nodes * inter_lat;
        break;
    case PARO_NCCL_P2P: /* p2p_cost */
    case PARO_NCCL_N_ALGOS:
        g_assert_not_reached();
    }
    return (ParoNcclCost){lat, bus};
}

ParoNcclCost paro_nccl_cost(const ParoNcclSystem *s, ParoCollKind op, ParoNcclAlgo a,
                            ParoNcclProto p, double bytes)
{
    ParoNcclCost c = base_cost(s, op, a, p);
    if (c.algbw_GBps <= 0)
        return c;
    if (op == PARO_COLL_ALLTOALL) { /* the one protocol NCCL's size rule picks */
        gboolean ll = bytes / (double)s->ranks <= P2P_LL_THRESHOLD;
        return (p == PARO_NCCL_LL) == ll ? c : (ParoNcclCost){0, 0};
    }
    int log_size = log2_floor(bytes / 64);
    if (a == PARO_NCCL_TREE && op == PARO_COLL_ALLREDUCE && log_size >= 0 && log_size < 23)
        c.algbw_GBps *= tree_correction[p][log_size];
    if (a == PARO_NCCL_RING && p == PARO_NCCL_SIMPLE && s->nodes > 1 && op == PARO_COLL_ALLREDUCE &&
        bytes / ((double)s->compute_channels * (double)s->ranks) >= 64)
        c.latency_us *= s->arch < 80 ? 1.9 : 1.4; /* the ring's plateau */
    return c;
}

double paro_nccl_time_s(const ParoNcclSystem *s, ParoCollKind op, ParoNcclAlgo a, ParoNcclProto p,
                        double bytes)
{
    ParoNcclCost c = paro_nccl_cost(s, op, a, p, bytes);
    if (c.algbw_GBps <= 0)
        return INFINITY;
    return (c.latency_us + bytes / (1000.0 * c.algbw_GBps)) * 1e-6;
}

ParoNcclLaunch paro_nccl_launch(const ParoNcclSystem *s, ParoNcclAlgo a, ParoNcclProto p,
                                double bytes)
{
    if (a == PARO_NCCL_NVLS || a == PARO_NCCL_NVLS_TREE) /* NVLS keeps its channels */
        return (ParoNcclLaunch){s->graphs[a].channels, 640};
    static const double per_thread[PARO_NCCL_N_PROTOS] = {8, 8, 64};
    static const int max_threads[PARO_NCCL_N_PROTOS] = {512, 640, 512};
    double threshold = per_thread[p] * (a == PARO_NCCL_RING && p == PARO_NCCL_LL ? s->ranks : 1);
    int nc = MAX(1, s->compute_channels);
    int nt = p == PARO_NCCL_SIMPLE && a == PARO_NCCL_RING ? s->simple_threads : max_threads[p];
    while (nc >= 2 && bytes < nc * (double)nt * threshold)
        nc--;
    while (nt % 128 == 0 && bytes < nc * (double)nt * threshold)
        nt /= 2;
    return (ParoNcclLaunch){nc, nt};
}

gboolean paro_nccl_terms(const ParoNcclSystem *s, ParoCollKind op, ParoNcclAlgo a, ParoNcclProto p,
                         double bytes, double *out_latency_us, double *out_transfer_us)
{
    ParoNcclCost c = paro_nccl_cost(s, op, a, p, bytes);
    if (c.algbw_GBps <= 0)
        return FALSE;
    double share = 1;
    if (a == PARO_NCCL_RING || a == PARO_NCCL_TREE)
        share = MIN(1.0, (double)paro_nccl_launch(s, a, p, bytes).channels /
                             (double)MAX(1, s->graphs[a].channels));
    *out_latency_us = c.latency_us;
    *out_transfer_us = bytes / (1000.0 * c.algbw_GBps * share);
    return TRUE;
}

double paro_nccl_predict_s(const ParoNcclSystem *s, ParoCollKind op, ParoNcclAlgo a,
                           ParoNcclProto p, double bytes)
{
    double latency_us, transfer_us;
    if (!paro_nccl_terms(s, op, a, p, bytes, &latency_us, &transfer_us))
        return INFINITY;
    return (latency_us * s->latency_scale + transfer_us / s->bandwidth_scale) * 1e-6;
}

gboolean paro_nccl_run(const ParoNcclSystem *s, ParoCollKind op, double bytes, guint algos,
                       guint protos, ParoNcclAlgo *out_algo, ParoNcclProto *out_proto,
                       double *out_s)
{
    double estimate;
    if (!paro_nccl_choose(s, op, bytes, algos, protos, out_algo, out_proto, &estimate))
        return FALSE;
    *out_s = paro_nccl_predict_s(s, op, *out_algo, *out_proto, bytes);
    return TRUE;
}

gboolean paro_nccl_choose(const ParoNcclSystem *s, ParoCollKind op, double bytes, guint algos,
                          guint protos, ParoNcclAlgo *out_algo, ParoNcclProto *out_proto,
                          double *out_s)
{
    double best = INFINITY;
    if (op == PARO_COLL_ALLTOALL) /* NCCL_ALGO does not apply to send/receive */
        algos = 1u << PARO_NCCL_P2P;
    for (int a = 0; a < PARO_NCCL_N_ALGOS; a++) {
        if (algos && !(algos & (1u << a)))
            continue;
        for (int p = 0; p < PARO_NCCL_N_PROTOS; p++) {
            if (protos && !(protos & (1u << p)))
                continue;
            double t = paro_nccl_time_s(s, op, (ParoNcclAlgo)a, (ParoNcclProto)p, bytes);
            if (t < best) {
                best = t;
                *out_algo = (ParoNcclAlgo)a;
                *out_proto = (ParoNcclProto)p;
            }
        }
    }
    if (!isfinite(best))
        return FALSE;
    *out_s = best;
    return TRUE;
}

/* ---- a collective of a spec ---- */

typedef struct {
    const ParoTopology *cluster;
    const ParoCollSpec *spec;
    guint algos, protos;
    double largest_s;
    ParoNcclAlgo algo;
    ParoNcclProto proto;
    gboolean failed;
} Phase;

static double phase_s(ParoCollKind op, ParoScope scope, double bytes, gpointer data)
{
    Phase *p = data;
    gint64 k, per_node;
    paro_coll_scope_shape(scope, p->spec->n, p->spec->m, p->cluster->gpus_per_node, &k, &per_node);
    if (k <= 1 || bytes <= 0)
        return 0;
    ParoNcclSystem sys;
    paro_nccl_system_init(&sys, p->cluster, k, per_node);
    guint algos = op == PARO_COLL_ALLREDUCE ? p->algos : p->algos & ~(1u << PARO_NCCL_TREE);
    if (algos == 0 && p->algos != 0) /* NCCL's trees do AllReduce only: rings for the rest */
        algos = 1u << PARO_NCCL_RING;
    ParoNcclAlgo a;
    ParoNcclProto pr;
    double t;
    if (!paro_nccl_run(&sys, op, bytes, algos, p->protos, &a, &pr, &t)) {
        p->failed = TRUE;
        return 0;
    }
    if (t > p->largest_s) {
        p->largest_s = t;
        p->algo = a;
        p->proto = pr;
    }
    return t;
}

gboolean paro_nccl_collective_s(const ParoTopology *cluster, const ParoCollSpec *spec, guint protos,
                                double *out_s, ParoNcclAlgo *out_algo, ParoNcclProto *out_proto,
                                GError **error)
{
    static const guint masks[] = {
        [PARO_ALGO_RING] = 1u << PARO_NCCL_RING,
        [PARO_ALGO_HIERARCHICAL] = 0,
        [PARO_ALGO_HO_RING] = 0,
        [PARO_ALGO_TREE] = 1u << PARO_NCCL_TREE,
        [PARO_ALGO_AUTO] = 0,
        [PARO_ALGO_NVLS] = 1u << PARO_NCCL_NVLS,
        [PARO_ALGO_NVLS_TREE] = 1u << PARO_NCCL_NVLS_TREE,
    };
    Phase p = {
        cluster,          spec, spec->scope == PARO_SCOPE_GLOBAL ? masks[spec->algorithm] : 0,
        protos,           0,    PARO_NCCL_RING,
        PARO_NCCL_SIMPLE, FALSE};
    if (spec->op == PARO_COLL_SENDRECV) {
        g_set_error(error, PARO_SIM_ERROR, PARO_SIM_ERROR_INFEASIBLE,
                    "NCCL's cost model has no send/receive: use the flow model");
        return FALSE;
    }
    if (!paro_coll_spec_check_shape(spec, cluster->gpus_per_node, error))
        return FALSE;
    gboolean two_level =
        spec->scope == PARO_SCOPE_GLOBAL &&
        (spec->algorithm == PARO_ALGO_HIERARCHICAL || spec->algorithm == PARO_ALGO_HO_RING);
    double t = two_level
                   ? paro_coll_two_level_s(spec->op, spec->algorithm == PARO_ALGO_HO_RING, spec->m,
                                           spec->chunks, spec->size_bytes, phase_s, &p)
                   : phase_s(spec->op, spec->scope, spec->size_bytes, &p);
    if (p.failed) {
        g_set_error(error, PARO_SIM_ERROR, PARO_SIM_ERROR_INFEASIBLE,
                    "%s %s over %" G_GINT64_FORMAT " GPUs: NCCL has no such algorithm here "
                    "(NVLS needs NVLink SHARP on one node, NVLS trees several nodes)",
                    paro_algorithm_names[spec->algorithm], paro_coll_kind_names[spec->op], spec->n);
        return FALSE;
    }
    *out_s = t;
    if (out_algo)
        *out_algo = p.algo;
    if (out_proto)
        *out_proto = p.proto;
    return TRUE;
}
