/* SPDX-License-Identifier: MIT */
/* Oracles for the closed-form collective costs (coll/analytic.c). */
#include <glib.h>
#include <math.h>

#include "check-main.h"
#include "coll/analytic.h"

/* 4 nodes x 8 GPUs, B' = 300 GB/s, alpha' = 3 us, B = 12.5 Gb/s per GPU, alpha = 9 us. */
static ParoCommModel cluster(ParoAlgorithm algo, gint64 chunks)
{
    return (ParoCommModel){.n = 32,
                           .m = 8,
                           .gpus_per_node = 8,
                           .intra_Bps = 300e9,
                           .intra_lat_s = 3e-6,
                           .inter_Bps = 12.5e9 / 8,
                           .inter_lat_s = 9e-6,
                           .algorithm = algo,
                           .chunks = chunks};
}

START_TEST(analytic_intra_ring_allreduce)
{
    /* System: ring AllReduce over the 8 GPUs of one node, S = 1 GiB.
     * Expectation: 2(k-1)*alpha' + 2(k-1)/k * S/B' (nccl-tests PERFORMANCE.md ring model).
     * Tolerance: 1e-12 relative (one rounding per term). */
    ParoCommModel cm = cluster(PARO_ALGO_RING, 1);
    double S = 1073741824.0;
    double want = 14 * 3e-6 + 14.0 / 8 * S / 300e9;
    double got = paro_coll_closed_form_s(&cm, PARO_COLL_ALLREDUCE, PARO_SCOPE_INTRA, S);
    ck_assert_double_eq_tol(got, want, want * 1e-12);
}
END_TEST

START_TEST(analytic_inter_ring_allgather)
{
    /* System: AllGather among the g = 4 GPUs of one local rank, one per node, S = 1 GB.
     * Expectation: (g-1)*alpha + (g-1)/g * S/B with B = 100 Gb/s / 8 GPUs = 1.5625 GB/s. */
    ParoCommModel cm = cluster(PARO_ALGO_RING, 1);
    double want = 3 * 9e-6 + 0.75 * 1e9 / 1.5625e9;
    double got = paro_coll_closed_form_s(&cm, PARO_COLL_ALLGATHER, PARO_SCOPE_INTER, 1e9);
    ck_assert_double_eq_tol(got, want, want * 1e-12);
}
END_TEST

START_TEST(analytic_global_flat_ring_uses_node_nics)
{
    /* System: flat ring AllGather over all 32 GPUs, S = 1 GB.
     * Expectation: NCCL's rings leave each node through its NICs with all channels, so the
     * per-step bottleneck is the node's 100 Gb/s: 31*alpha + 31/32 * S / 12.5 GB/s. */
    ParoCommModel cm = cluster(PARO_ALGO_RING, 1);
    double want = 31 * 9e-6 + 31.0 / 32 * 1e9 / 12.5e9;
    double got = paro_coll_closed_form_s(&cm, PARO_COLL_ALLGATHER, PARO_SCOPE_GLOBAL, 1e9);
    ck_assert_double_eq_tol(got, want, want * 1e-12);
}
END_TEST

START_TEST(analytic_hierarchical_is_sum_of_phases)
{
    /* Expectation (docs/strategies.md, "Traffic accounting"): AllGather(global, S) =
     * AllGather(inter, S/m) then AllGather(intra, S); ReduceScatter the reverse; AllReduce =
     * RS(intra, S) + AR(inter, S/m) + AG(intra, S). */
    ParoCommModel cm = cluster(PARO_ALGO_HIERARCHICAL, 1);
    double S = 2e9;
    double ag_inter = paro_coll_closed_form_s(&cm, PARO_COLL_ALLGATHER, PARO_SCOPE_INTER, S / 8);
    double ag_intra = paro_coll_closed_form_s(&cm, PARO_COLL_ALLGATHER, PARO_SCOPE_INTRA, S);
    double rs_intra = paro_coll_closed_form_s(&cm, PARO_COLL_REDUCESCATTER, PARO_SCOPE_INTRA, S);
    double ar_inter = paro_coll_closed_form_s(&cm, PARO_COLL_ALLREDUCE, PARO_SCOPE_INTER, S / 8);
    double ag = paro_coll_closed_form_s(&cm, PARO_COLL_ALLGATHER, PARO_SCOPE_GLOBAL, S);
    double ar = paro_coll_closed_form_s(&cm, PARO_COLL_ALLREDUCE, PARO_SCOPE_GLOBAL, S);
    ck_assert_double_eq_tol(ag, ag_inter + ag_intra, ag * 1e-12);
    ck_assert_double_eq_tol(ar, rs_intra + ar_inter + ag_intra, ar * 1e-12);
}
END_TEST

START_TEST(analytic_ho_ring_between_max_and_sum)
{
    /* Expectation: with latencies set to zero, ho-ring lies between max(intra, inter) and
     * the hierarchical sum, equals the sum with one chunk, and tends to the max as the
     * chunk count grows (T = max + min/C). */
    ParoCommModel h = cluster(PARO_ALGO_HIERARCHICAL, 1);
    h.intra_lat_s = h.inter_lat_s = 0;
    /* Make the two parts comparable so the overlap matters: B' = 10 GB/s. */
    h.intra_Bps = 10e9;
    double S = 1e9;
    double intra = paro_coll_closed_form_s(&h, PARO_COLL_ALLGATHER, PARO_SCOPE_INTRA, S);
    double inter = paro_coll_closed_form_s(&h, PARO_COLL_ALLGATHER, PARO_SCOPE_INTER, S / 8);
    double sum = paro_coll_closed_form_s(&h, PARO_COLL_ALLGATHER, PARO_SCOPE_GLOBAL, S);
    ck_assert_double_eq_tol(sum, intra + inter, sum * 1e-12);
    double previous = sum * (1 + 1e-9);
    for (gint64 chunks = 1; chunks <= 1024; chunks *= 4) {
        ParoCommModel ho = h;
        ho.algorithm = PARO_ALGO_HO_RING;
        ho.chunks = chunks;
        double t = paro_coll_closed_form_s(&ho, PARO_COLL_ALLGATHER, PARO_SCOPE_GLOBAL, S);
        ck_assert(t <= sum * (1 + 1e-12) && t >= fmax(intra, inter) * (1 - 1e-12));
        ck_assert(t < previous);
        previous = t;
        if (chunks == 1)
            ck_assert_double_eq_tol(t, sum, sum * 1e-12);
    }
    ck_assert_double_eq_tol(previous, fmax(intra, inter), fmax(intra, inter) * 0.002);
}
END_TEST

START_TEST(analytic_traffic_hierarchical_accounting)
{
    /* Expectation (docs/strategies.md, "Traffic accounting"): per GPU, AllReduce(global, S) sends
     * 2(m-1)/m*S over intra links and 2(g-1)/g*S/m over inter links; AllGather(inter, S) (g-1)/g*S.
     */
    ParoCommModel cm = cluster(PARO_ALGO_RING, 1);
    double intra, inter;
    paro_coll_traffic(&cm, PARO_COLL_ALLREDUCE, PARO_SCOPE_GLOBAL, 8e9, &intra, &inter);
    ck_assert_double_eq(intra, 2.0 * 7 / 8 * 8e9);
    ck_assert_double_eq(inter, 2.0 * 3 / 4 * 1e9);
    paro_coll_traffic(&cm, PARO_COLL_ALLGATHER, PARO_SCOPE_INTER, 4e9, &intra, &inter);
    ck_assert_double_eq(intra, 0);
    ck_assert_double_eq(inter, 3e9);
}
END_TEST

START_TEST(analytic_bus_factors)
{
    /* nccl-tests PERFORMANCE.md. */
    ck_assert_double_eq(paro_coll_bus_factor(PARO_COLL_ALLREDUCE, 8), 1.75);
    ck_assert_double_eq(paro_coll_bus_factor(PARO_COLL_ALLGATHER, 8), 0.875);
    ck_assert_double_eq(paro_coll_bus_factor(PARO_COLL_REDUCESCATTER, 4), 0.75);
    ck_assert_double_eq(paro_coll_bus_factor(PARO_COLL_BROADCAST, 8), 1.0);
    /* AlltoAll: (n-1)/n (PERFORMANCE.md; src/alltoall.cu AlltoAllGetBw); a GPU sends S/n
     * to each of the n-1 others. */
    ck_assert_double_eq(paro_coll_bus_factor(PARO_COLL_ALLTOALL, 64), 63.0 / 64);
    ck_assert_double_eq(paro_coll_bytes_sent(PARO_COLL_ALLTOALL, 8, 8e9), 7e9);
}
END_TEST

START_TEST(analytic_group_spanning_nodes)
{
    /* System: groups of m = 16 spanning two 8-GPU nodes. The intra-group ring leaves the
     * node, so it runs at the node's NIC bandwidth (8 GPUs x B) with alpha per step. */
    ParoCommModel cm = cluster(PARO_ALGO_RING, 1);
    cm.m = 16;
    double want = 15 * 9e-6 + 15.0 / 16 * 1e9 / 12.5e9;
    double got = paro_coll_closed_form_s(&cm, PARO_COLL_ALLGATHER, PARO_SCOPE_INTRA, 1e9);
    ck_assert_double_eq_tol(got, want, want * 1e-12);
}
END_TEST

START_TEST(analytic_tree_allreduce)
{
    /* Expectation (analytic.c): 2*(ceil(log2 N)*alpha + (G-1)*alpha') + S/min(B', G*B);
     * for 4 nodes of 8, 1 GB: 2*(2*9 + 7*3) us + 1e9/12.5e9 s. Other ops fall back to the
     * ring, as NCCL runs them. */
    ParoCommModel cm = cluster(PARO_ALGO_TREE, 1);
    double want = 2 * (2 * 9e-6 + 7 * 3e-6) + 1e9 / 12.5e9;
    ck_assert_double_eq_tol(
        paro_coll_closed_form_s(&cm, PARO_COLL_ALLREDUCE, PARO_SCOPE_GLOBAL, 1e9), want,
        want * 1e-12);
    ParoCommModel ring = cluster(PARO_ALGO_RING, 1);
    ck_assert_double_eq(
        paro_coll_closed_form_s(&cm, PARO_COLL_ALLGATHER, PARO_SCOPE_GLOBAL, 1e9),
        paro_coll_closed_form_s(&ring, PARO_COLL_ALLGATHER, PARO_SCOPE_GLOBAL, 1e9));
}
END_TEST

START_TEST(analytic_alltoall_over_scopes)
{
    /* System: 8 nodes x 8 GPUs (64), groups of m = 8, B' = 450 GB/s, alpha' = 3 us, a GPU's
     * NIC share B = 50 GB/s, alpha = 9 us; S = 1 GiB.
     * Hand derivation: each GPU keeps S/64 and sends S/64 to each other GPU at once, S*7/64
     * to its node's 7 over the fabric and S*56/64 to the other 56 through the NIC; the
     * slower sets the time: alpha + max(S*7/64 / B', S*56/64 / B) = alpha + S*56/64 / B,
     * whatever the algorithm (no phases: hierarchical and ho-ring give the same). Over the
     * intra scope, each node's 8: alpha' + S*7/8 / B'; over the inter scope, the 8 GPUs of
     * a local rank, one a node: alpha + S*7/8 / B. Traffic: global S*7/64 intra-group and
     * S*56/64 inter-group; the scopes (k-1)/k S on their side. */
    ParoCommModel cm = {64, 8, 8, 450e9, 3e-6, 50e9, 9e-6, PARO_ALGO_RING, 1};
    double S = 1073741824.0;
    double global = 9e-6 + S * 56 / 64 / 50e9;
    ck_assert_double_eq_tol(paro_coll_closed_form_s(&cm, PARO_COLL_ALLTOALL, PARO_SCOPE_GLOBAL, S),
                            global, global * 1e-12);
    cm.algorithm = PARO_ALGO_HO_RING;
    cm.chunks = 4;
    ck_assert_double_eq_tol(paro_coll_closed_form_s(&cm, PARO_COLL_ALLTOALL, PARO_SCOPE_GLOBAL, S),
                            global, global * 1e-12);
    double intra = 3e-6 + S * 7 / 8 / 450e9, inter = 9e-6 + S * 7 / 8 / 50e9;
    ck_assert_double_eq_tol(paro_coll_closed_form_s(&cm, PARO_COLL_ALLTOALL, PARO_SCOPE_INTRA, S),
                            intra, intra * 1e-12);
    ck_assert_double_eq_tol(paro_coll_closed_form_s(&cm, PARO_COLL_ALLTOALL, PARO_SCOPE_INTER, S),
                            inter, inter * 1e-12);
    double in, out;
    paro_coll_traffic(&cm, PARO_COLL_ALLTOALL, PARO_SCOPE_GLOBAL, S, &in, &out);
    ck_assert_double_eq_tol(in, S * 7 / 64, 1);
    ck_assert_double_eq_tol(out, S * 56 / 64, 1);
    paro_coll_traffic(&cm, PARO_COLL_ALLTOALL, PARO_SCOPE_INTER, S, &in, &out);
    ck_assert_double_eq(in, 0);
    ck_assert_double_eq_tol(out, S * 7 / 8, 1);
    /* Where the fabric is the slower class: 2 nodes of 8 with B = 1 TB/s, S*7/16 at B'
     * (S*8/16 at B would take 0.54 ms, the fabric 1.04 ms). */
    ParoCommModel fast = {16, 8, 8, 450e9, 3e-6, 1e12, 9e-6, PARO_ALGO_RING, 1};
    double want = 9e-6 + S * 7 / 16 / 450e9;
    ck_assert_double_eq_tol(paro_coll_alltoall_s(&fast, 16, 8, S), want, want * 1e-12);
}
END_TEST

static Suite *analytic_suite(void)
{
    Suite *s = suite_create("analytic");
    TCase *tc = tcase_create("closed-form");
    tcase_add_test(tc, analytic_intra_ring_allreduce);
    tcase_add_test(tc, analytic_inter_ring_allgather);
    tcase_add_test(tc, analytic_global_flat_ring_uses_node_nics);
    tcase_add_test(tc, analytic_hierarchical_is_sum_of_phases);
    tcase_add_test(tc, analytic_ho_ring_between_max_and_sum);
    tcase_add_test(tc, analytic_traffic_hierarchical_accounting);
    tcase_add_test(tc, analytic_bus_factors);
    tcase_add_test(tc, analytic_group_spanning_nodes);
    tcase_add_test(tc, analytic_tree_allreduce);
    tcase_add_test(tc, analytic_alltoall_over_scopes);
    suite_add_tcase(s, tc);
    return s;
}

PARO_CHECK_MAIN(analytic_suite)
