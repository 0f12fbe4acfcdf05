/* SPDX-License-Identifier: MIT */
/* Oracles for NCCL's view of a cluster (coll/nccl.c): the channels and channel bandwidths
 * its topology search finds on datasheet machines, and its tuning model's latency,
 * bandwidth and choice, against values worked by hand from NCCL 2.30's search.cc,
 * connect.cc and tuning.cc (docs/nccl.md gives each derivation) and against what NCCL
 * prints and what its maintainers report (the 8-GPU H100 ring's 360 GB/s model bus
 * bandwidth against 365-370 measured, NVIDIA/nccl#1455; NVLS's 272 GB/s algorithm
 * bandwidth against 273-275 measured). */
#include <glib.h>
#include <math.h>

#include "check-main.h"
#include "coll/nccl.h"
#include "fixtures.h"

/* @nodes of 8 GPUs named @gpu on an NVSwitch of @nvlink GB/s per GPU, @nics NICs of
 * @nic_gbps Gb/s each. */
static ParoTopology *machine(const char *gpu, gint64 nodes, double nvlink, gint64 nics,
                             double nic_gbps)
{
    g_autofree char *text = g_strdup_printf(
        "kind: topology\nschema: 1\nname: m\nnodes: %" G_GINT64_FORMAT "\n"
        "gpu: {name: %s, memory: 80 GiB, peak_flops: 989 TFLOP/s, hbm_bandwidth: 3 TB/s}\n"
        "node:\n  gpus: 8\n  fabric: {kind: nvswitch, bandwidth: %g GB/s}\n"
        "  nics: {count: %" G_GINT64_FORMAT ", bandwidth: %g Gb/s}\n",
        nodes, gpu, nvlink, nics, nic_gbps);
    return paro_test_topology(text);
}

START_TEST(nccl_search_on_datasheet_machines)
{
    /* Expected (docs/nccl.md, section "search"):
     * - 8 x H100 SXM, one node: NVLink 18 links x 20.6 = 370.8 GB/s; the sm90 speeds give
     *   6 x 60 = 360 best (50: 7 x 50, 40: 9 x 40 and 30: 12 x 30 are not better), then
     *   duplication (60 >= 50): 12 channels x 30; kernels on 24. NVLS: 8 heads at 40
     *   (9 x 40 = 360 <= 370.8), inter raised to 60.
     * - 8 x A100 SXM, one node: 12 x 20 = 240; 6 x 40 = 240 is perfect, duplicated: 12 x 20.
     * - 2 nodes of 8 x H100 with 8 x 400 Gb/s: speed <= min(NIC 50, PCIe Gen5 48) = 48,
     *   8 NICs x 1 channel, NVLink 8 x 48 x 7/8 = 336 <= 370.8: 8 x 48, no duplication
     *   (48 < 50 with 8 > 4 channels), 16 compute channels; simple tree pattern (a NIC per
     *   GPU).
     * - the same with 4 NICs: 4 x 48, duplicated (4 channels): 8 x 24.
     * - 2 nodes of 8 x A100 with 8 x 200 Gb/s: speed <= min(25, 24) = 24: 8 x 24, no
     *   duplication (24 < 25). */
    static const struct {
        const char *gpu;
        gint64 nodes;
        double nvlink;
        gint64 nics;
        double nic;
        int ring_channels;
        double ring_bw;
        int compute;
        int nvls_heads;
        double nvls_intra, nvls_inter;
    } cases[] = {
        {"H100-SXM5-80GB", 1, 450, 8, 400, 12, 30, 24, 8, 40, 60},
        {"A100-SXM4-80GB", 1, 300, 8, 200, 12, 20, 24, 0, 0, 0},
        {"H100-SXM5-80GB", 2, 450, 8, 400, 8, 48, 16, 0, 0, 0},
        {"H100-SXM5-80GB", 2, 450, 4, 400, 8, 24, 16, 0, 0, 0},
        {"A100-SXM4-80GB", 2, 300, 8, 200, 8, 24, 16, 0, 0, 0},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(ParoTopology) t =
            machine(cases[i].gpu, cases[i].nodes, cases[i].nvlink, cases[i].nics, cases[i].nic);
        ParoNcclSystem s;
        paro_nccl_system_init(&s, t, 8 * cases[i].nodes, 8);
        const ParoNcclGraph *ring = &s.graphs[PARO_NCCL_RING];
        ck_assert_msg(ring->channels == cases[i].ring_channels, "case %u: %d channels", i,
                      ring->channels);
        ck_assert_double_eq_tol(ring->bw_intra, cases[i].ring_bw, 1e-9);
        ck_assert_int_eq(s.compute_channels, cases[i].compute);
        if (cases[i].nodes == 1) {
            const ParoNcclGraph *nvls = &s.graphs[PARO_NCCL_NVLS];
            ck_assert_int_eq(nvls->channels, cases[i].nvls_heads);
            ck_assert_double_eq_tol(nvls->bw_intra, cases[i].nvls_intra, 1e-9);
            ck_assert_double_eq_tol(nvls->bw_inter, cases[i].nvls_inter, 1e-9);
        }
    }
    g_autoptr(ParoTopology) h2 = machine("H100-SXM5-80GB", 2, 450, 8, 400);
    ParoNcclSystem s;
    paro_nccl_system_init(&s, h2, 16, 8);
    ck_assert(s.graphs[PARO_NCCL_TREE].tree_pattern);
    ck_assert_int_eq(s.graphs[PARO_NCCL_NVLS_TREE].channels, 8);
    ck_assert_double_eq_tol(s.graphs[PARO_NCCL_NVLS_TREE].bw_inter, 48, 1e-9);
}
END_TEST

START_TEST(nccl_tuning_model_worked_by_hand)
{
    /* Expected (tuning.cc; docs/nccl.md, section "tuning"; latency us, algbw GB/s):
     * 1 x 8 H100, ring Simple AllReduce: 8.4 + 14 x 3.4 = 56.0; 12 x 30 = 360 bus, x 8/14
     * = 205.714; AllGather: 8.4 + 7 x 3.4 = 32.2, 360 x 8/7 = 411.43; ring LL AllReduce:
     * 6.6 + 14 x 0.6 = 15.0, min(141, 180) x 8/14 = 80.571. NVLS AllReduce: 25, bus 8 x
     * min(40 x 0.85 x 7/8 x 2, 60) = 476, x 8/14 = 272.
     * 2 x 8 H100 with 8 x 400 Gb/s (Intel host, IB): ring Simple AllReduce 8.4 + 28 x
     * max(3.4, 3) + 2 x 14 = 131.6 (x 1.4 = 184.24 past 64 B a channel and rank), bus 8 x 48
     * = 384, x 16/30 = 204.8. Tree Simple: 8.4 + 2 (7 x 4.0 + 14) = 92.4, bus
     * min(0.92 x 384, 8 x 41.4) = 331.2 x 0.85 (simple tree) x 0.5 = 140.76. NVLSTree:
     * 0 + 25 + 2 x 20.9 = 66.8; bw min(40 x 0.85 x 7/8 x 2 = 59.5, 48 x 2 = 96, 57.7) =
     * 57.7, bus 461.6 x 16/30 = 246.19.
     * 1 x 8 A100: ring Simple AllReduce 56.0 and 240 x 8/14 = 137.14. */
    g_autoptr(ParoTopology) h1 = machine("H100-SXM5-80GB", 1, 450, 8, 400);
    g_autoptr(ParoTopology) h2 = machine("H100-SXM5-80GB", 2, 450, 8, 400);
    g_autoptr(ParoTopology) a1 = machine("A100-SXM4-80GB", 1, 300, 8, 200);
    ParoNcclSystem s1, s2, sa;
    paro_nccl_system_init(&s1, h1, 8, 8);
    paro_nccl_system_init(&s2, h2, 16, 8);
    paro_nccl_system_init(&sa, a1, 8, 8);
    static const struct {
        int system;
        ParoCollKind op;
        ParoNcclAlgo algo;
        ParoNcclProto proto;
        double bytes, latency, algbw;
    } cases[] = {
        {0, PARO_COLL_ALLREDUCE, PARO_NCCL_RING, PARO_NCCL_SIMPLE, 1 << 20, 56.0, 360.0 * 8 / 14},
        {0, PARO_COLL_ALLGATHER, PARO_NCCL_RING, PARO_NCCL_SIMPLE, 1 << 20, 32.2, 360.0 * 8 / 7},
        {0, PARO_COLL_ALLREDUCE, PARO_NCCL_RING, PARO_NCCL_LL, 1 << 20, 15.0, 141.0 * 8 / 14},
        {0, PARO_COLL_ALLREDUCE, PARO_NCCL_NVLS, PARO_NCCL_SIMPLE, 1 << 20, 25.0, 476.0 * 8 / 14},
        {1, PARO_COLL_ALLREDUCE, PARO_NCCL_RING, PARO_NCCL_SIMPLE, 8, 131.6, 384.0 * 16 / 30},
        {1, PARO_COLL_ALLREDUCE, PARO_NCCL_RING, PARO_NCCL_SIMPLE, 1 << 20, 131.6 * 1.4,
         384.0 * 16 / 30},
        {1, PARO_COLL_ALLREDUCE, PARO_NCCL_TREE, PARO_NCCL_SIMPLE, 1 << 30, 92.4, 331.2 * 0.85 / 2},
        {1, PARO_COLL_ALLREDUCE, PARO_NCCL_NVLS_TREE, PARO_NCCL_SIMPLE, 1 << 20, 66.8,
         57.7 * 8 * 16 / 30},
        {2, PARO_COLL_ALLREDUCE, PARO_NCCL_RING, PARO_NCCL_SIMPLE, 1 << 20, 56.0, 240.0 * 8 / 14},
    };
    const ParoNcclSystem *systems[] = {&s1, &s2, &sa};
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        ParoNcclCost c = paro_nccl_cost(systems[cases[i].system], cases[i].op, cases[i].algo,
                                        cases[i].proto, cases[i].bytes);
        ck_assert_msg(fabs(c.latency_us - cases[i].latency) < 1e-3, "case %u: latency %.4f", i,
                      c.latency_us);
        ck_assert_msg(fabs(c.algbw_GBps - cases[i].algbw) < 1e-3, "case %u: algbw %.4f", i,
                      c.algbw_GBps);
    }
    /* The choice (docs/nccl.md): on one H100 node Ring/LL for small AllReduces, NVLS from
     * about 1.14 MB; AllGather Ring/Simple at 1 GiB. On two nodes Tree/LL at 8 B and
     * NVLSTree at 1 GiB. */
    ParoNcclAlgo a;
    ParoNcclProto p;
    double t;
    ck_assert(paro_nccl_choose(&s1, PARO_COLL_ALLREDUCE, 65536, 0, 0, &a, &p, &t));
    ck_assert(a == PARO_NCCL_RING && p == PARO_NCCL_LL);
    ck_assert(paro_nccl_choose(&s1, PARO_COLL_ALLREDUCE, 32 << 20, 0, 0, &a, &p, &t));
    ck_assert(a == PARO_NCCL_NVLS);
    ck_assert(paro_nccl_choose(&s1, PARO_COLL_ALLGATHER, 1 << 30, 0, 0, &a, &p, &t));
    ck_assert(a == PARO_NCCL_RING && p == PARO_NCCL_SIMPLE);
    ck_assert(paro_nccl_choose(&s2, PARO_COLL_ALLREDUCE, 8, 0, 0, &a, &p, &t));
    ck_assert(a == PARO_NCCL_TREE && p == PARO_NCCL_LL);
    ck_assert(paro_nccl_choose(&s2, PARO_COLL_ALLREDUCE, 1 << 30, 0, 0, &a, &p, &t));
    ck_assert(a == PARO_NCCL_NVLS_TREE);
    /* forced to ring: NCCL_ALGO=Ring */
    ck_assert(
        paro_nccl_choose(&s2, PARO_COLL_ALLREDUCE, 1 << 30, 1u << PARO_NCCL_RING, 0, &a, &p, &t));
    ck_assert(a == PARO_NCCL_RING && p == PARO_NCCL_SIMPLE);
    ck_assert_double_eq_tol(t * 1e6, 184.24 + 1073741824.0 / (1000 * 204.8), 1e-3);
}
END_TEST

START_TEST(nccl_small_calls_launch_on_fewer_channels)
{
    /* Expected (enqueue.cc, topoGetAlgoInfo; docs/nccl.md, section "launch"): one node of 8
     * H100, 24 compute channels on 12 search rings of 30 GB/s.
     * - Ring/LL, 8 ranks: 8 x 8 = 64 B a thread, 512 threads: 32 KiB a channel. 100 KiB ->
     *   3 channels (100 < 4 x 32); 1 KiB -> 1 channel, then threads halve while 1 KiB < 1 x
     *   nt x 64 and nt is a multiple of 128: 512, 256, 128 -> 64 (4 KiB, still above,
     *   but 64 is no multiple of 128).
     * - Ring/Simple: 64 B a thread, 512 threads (12 x 30 > PCIe Gen3's 12 GB/s): 32 KiB a
     *   channel; 1 MiB -> 24 channels (1 MiB >= 24 channels x 32 KiB = 768 KiB: no cut).
     * - Ring/LL128: 8 B x 640 threads = 5 KiB a channel: 64 KiB -> 12 channels (64 < 13 x 5).
     * - NVLS keeps its 8 heads.
     * The time at 100 KiB on Ring/LL: 15.0 us + 102,400 B / (80.571 GB/s x 3/12). */
    g_autoptr(ParoTopology) h1 = machine("H100-SXM5-80GB", 1, 450, 8, 400);
    ParoNcclSystem s;
    paro_nccl_system_init(&s, h1, 8, 8);
    ParoNcclLaunch l = paro_nccl_launch(&s, PARO_NCCL_RING, PARO_NCCL_LL, 100 * 1024);
    ck_assert_int_eq(l.channels, 3);
    ck_assert_int_eq(l.threads, 512);
    l = paro_nccl_launch(&s, PARO_NCCL_RING, PARO_NCCL_LL, 1024);
    ck_assert_int_eq(l.channels, 1);
    ck_assert_int_eq(l.threads, 64);
    l = paro_nccl_launch(&s, PARO_NCCL_RING, PARO_NCCL_SIMPLE, 1 << 20);
    ck_assert_int_eq(l.channels, 24);
    ck_assert_int_eq(l.threads, 512);
    l = paro_nccl_launch(&s, PARO_NCCL_RING, PARO_NCCL_LL128, 64 * 1024);
    ck_assert_int_eq(l.channels, 12);
    l = paro_nccl_launch(&s, PARO_NCCL_NVLS, PARO_NCCL_SIMPLE, 1024);
    ck_assert_int_eq(l.channels, 8);
    double t =
        paro_nccl_predict_s(&s, PARO_COLL_ALLREDUCE, PARO_NCCL_RING, PARO_NCCL_LL, 100 * 1024);
    ck_assert_double_eq_tol(t * 1e6, 15.0 + 102400.0 / (1000 * (141.0 * 8 / 14) * 3 / 12), 1e-6);
    /* a call large enough for every channel costs what NCCL's estimate says */
    ck_assert_double_eq_tol(
        paro_nccl_predict_s(&s, PARO_COLL_ALLREDUCE, PARO_NCCL_RING, PARO_NCCL_SIMPLE, 1 << 30),
        paro_nccl_time_s(&s, PARO_COLL_ALLREDUCE, PARO_NCCL_RING, PARO_NCCL_SIMPLE, 1 << 30),
        1e-15);
}
END_TEST

START_TEST(nccl_alltoall_as_grouped_send_receive)
{
    /* Expected (coll/nccl.c p2p_cost; docs/nccl.md, section "All-to-all"; us and GB/s):
     * 8 nodes of 8 H100 with a 400 Gb/s NIC per GPU (Intel host, IB), 64 ranks: a GPU's
     * NVLink as NCCL counts it, 18 x 20.6 = 370.8; its NIC share min(PCIe Gen5 48, 8 x 50
     * / 8) = 48. A GPU sends S*7/64 over NVLink and S*56/64 through the NIC at once: algbw
     * = 1 / max(7/64 / 370.8, 56/64 / 48) = 48 x 64/56 = 54.857. Simple: latency 8.4 (the
     * ring's base) + 14.0 (a NET hop) = 22.4. LL (a peer's part <= 16 KiB,
     * NCCL_P2P_LL_THRESHOLD): half the bandwidth, 27.429, latency 6.6 + 2.7 = 9.3. At
     * 1 MiB a peer's part is exactly 16 KiB: LL, 9.3 + 1,048,576 B / 27.429 GB/s = 47.53.
     * One node of 8: NVLink only, 370.8 x 8/7 = 423.77; Simple latency 8.4 + 3.4 = 11.8.
     * NCCL_ALGO does not apply (a ring-forced call still gets p2p); the other algorithms
     * have no all-to-all, and p2p no other collective. */
    g_autoptr(ParoTopology) h8 = machine("H100-SXM5-80GB", 8, 450, 8, 400);
    g_autoptr(ParoTopology) h1 = machine("H100-SXM5-80GB", 1, 450, 8, 400);
    ParoNcclSystem s8, s1;
    paro_nccl_system_init(&s8, h8, 64, 8);
    paro_nccl_system_init(&s1, h1, 8, 8);
    ParoNcclCost c =
        paro_nccl_cost(&s8, PARO_COLL_ALLTOALL, PARO_NCCL_P2P, PARO_NCCL_SIMPLE, 1 << 30);
    ck_assert_double_eq_tol(c.latency_us, 22.4, 1e-9);
    ck_assert_double_eq_tol(c.algbw_GBps, 48.0 * 64 / 56, 1e-9);
    c = paro_nccl_cost(&s8, PARO_COLL_ALLTOALL, PARO_NCCL_P2P, PARO_NCCL_LL, 1 << 20);
    ck_assert_double_eq_tol(c.latency_us, 9.3, 1e-9);
    ck_assert_double_eq_tol(c.algbw_GBps, 24.0 * 64 / 56, 1e-9);
    /* one protocol by size: Simple is not offered at 1 MiB, LL not at 2 MiB */
    ck_assert_double_eq(
        paro_nccl_cost(&s8, PARO_COLL_ALLTOALL, PARO_NCCL_P2P, PARO_NCCL_SIMPLE, 1 << 20)
            .algbw_GBps,
        0);
    ck_assert_double_eq(
        paro_nccl_cost(&s8, PARO_COLL_ALLTOALL, PARO_NCCL_P2P, PARO_NCCL_LL, 2 << 20).algbw_GBps,
        0);
    ck_assert_double_eq(
        paro_nccl_cost(&s8, PARO_COLL_ALLTOALL, PARO_NCCL_RING, PARO_NCCL_SIMPLE, 1 << 30)
            .algbw_GBps,
        0);
    ck_assert_double_eq(
        paro_nccl_cost(&s8, PARO_COLL_ALLREDUCE, PARO_NCCL_P2P, PARO_NCCL_SIMPLE, 1 << 30)
            .algbw_GBps,
        0);
    ParoNcclAlgo a;
    ParoNcclProto p;
    double t;
    ck_assert(
        paro_nccl_choose(&s8, PARO_COLL_ALLTOALL, 1 << 20, 1u << PARO_NCCL_RING, 0, &a, &p, &t));
    ck_assert(a == PARO_NCCL_P2P && p == PARO_NCCL_LL);
    ck_assert_double_eq_tol(t * 1e6, 9.3 + 1048576.0 / (1000 * 24.0 * 64 / 56), 1e-9);
    ck_assert(
        !paro_nccl_choose(&s8, PARO_COLL_ALLTOALL, 1 << 20, 0, 1u << PARO_NCCL_SIMPLE, &a, &p, &t));
    c = paro_nccl_cost(&s1, PARO_COLL_ALLTOALL, PARO_NCCL_P2P, PARO_NCCL_SIMPLE, 1 << 30);
    ck_assert_double_eq_tol(c.latency_us, 11.8, 1e-9);
    ck_assert_double_eq_tol(c.algbw_GBps, 370.8 * 8 / 7, 1e-9);
    /* as it runs: no launch share, the same as NCCL's estimate */
    ck_assert_double_eq_tol(
        paro_nccl_predict_s(&s8, PARO_COLL_ALLTOALL, PARO_NCCL_P2P, PARO_NCCL_LL, 65536),
        paro_nccl_time_s(&s8, PARO_COLL_ALLTOALL, PARO_NCCL_P2P, PARO_NCCL_LL, 65536), 1e-15);
}
END_TEST

START_TEST(nccl_two_level_never_slower_where_the_nic_decides)
{
    /* System: nodes of 8 A100 on NVSwitch (300 GB/s a GPU) with one 100 Gb/s NIC (the
     * default PaRO cluster, topologies/a100x8-100g.yaml), 16 to 128 GPUs, a 1 GiB
     * AllGather, ReduceScatter and AllReduce, group m = 8, HO-Ring's 8 chunks.
     * Expectation, by hand (decision 93): every node's bytes cross its one NIC, the flat
     * ring's (n - 1)/n S and the two-level algorithms' (g - 1)/g S for g = n / 8 nodes
     * (AllReduce twice each), while NVLink (24x the NIC) carries the rest; so HO-Ring,
     * which pipelines the node's phase behind the NIC's, is never slower than the flat
     * ring, and its inter-node phase of every local rank's ring at once takes the NIC's
     * 12.5 GB/s whole, (g - 1)/g S / 12.5 GB/s: 42.9, 64.4, 75.2 and 80.5 ms for an
     * AllGather. (Before, each local rank's ring searched an eighth of the NIC and NCCL's
     * speed list cut 1.5625 GB/s to 1.2: 30% slower, and HO-Ring lost to the ring from 64
     * GPUs on.) */
    g_autoptr(ParoTopology) t = machine("A100-SXM4-80GB", 16, 300, 1, 100);
    static const ParoCollKind ops[] = {PARO_COLL_ALLGATHER, PARO_COLL_REDUCESCATTER,
                                       PARO_COLL_ALLREDUCE};
    for (gint64 n = 16; n <= 128; n *= 2) {
        for (guint i = 0; i < G_N_ELEMENTS(ops); i++) {
            ParoCollSpec spec = {.op = ops[i],
                                 .algorithm = PARO_ALGO_RING,
                                 .n = n,
                                 .m = 8,
                                 .size_bytes = 1073741824.0,
                                 .chunks = 8};
            double ring, ho;
            ck_assert(paro_nccl_collective_s(t, &spec, ~0u, &ring, NULL, NULL, NULL));
            spec.algorithm = PARO_ALGO_HO_RING;
            ck_assert(paro_nccl_collective_s(t, &spec, ~0u, &ho, NULL, NULL, NULL));
            ck_assert_msg(ho <= ring, "%s over %" G_GINT64_FORMAT ": HO-Ring %.4g s, ring %.4g s",
                          paro_coll_kind_names[ops[i]], n, ho, ring);
        }
        double g = (double)n / 8.0, want = (g - 1.0) / g * 1073741824.0 / 12.5e9;
        ParoCollSpec inter = {.op = PARO_COLL_ALLGATHER,
                              .algorithm = PARO_ALGO_RING,
                              .n = n,
                              .m = 8,
                              .size_bytes = 1073741824.0 / 8.0,
                              .chunks = 8,
                              .scope = PARO_SCOPE_INTER};
        double got;
        ck_assert(paro_nccl_collective_s(t, &inter, ~0u, &got, NULL, NULL, NULL));
        /* Tolerance: 2%, the ring's latency over g - 1 steps (tens of us) on 43-81 ms. */
        ck_assert_msg(fabs(got / want - 1.0) < 0.02,
                      "inter phase over %" G_GINT64_FORMAT ": %.4g s against %.4g s", n, got, want);
    }
}
END_TEST

static Suite *nccl_suite(void)
{
    Suite *s = suite_create("nccl");
    TCase *tc = tcase_create("model");
    tcase_add_test(tc, nccl_search_on_datasheet_machines);
    tcase_add_test(tc, nccl_tuning_model_worked_by_hand);
    tcase_add_test(tc, nccl_small_calls_launch_on_fewer_channels);
    tcase_add_test(tc, nccl_alltoall_as_grouped_send_receive);
    tcase_add_test(tc, nccl_two_level_never_slower_where_the_nic_decides);
    suite_add_tcase(s, tc);
    return s;
}

PARO_CHECK_MAIN(nccl_suite)
