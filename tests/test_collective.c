/* SPDX-License-Identifier: MIT */
/* Oracles for simulated collectives: closed forms on uniform rings, the phase sums of
 * hierarchical, the bounds of ho-ring, conservation, aggregated vs explicit agreement,
 * a straggler, and HO-Ring's margin over Ring. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "coll/analytic.h"
#include "coll/cache.h"
#include "coll/simulate.h"
#include "fixtures.h"
#include "yaml/loaders.h"

/* A cluster of @nodes nodes of @gpn GPUs: NVSwitch ports of @intra GB/s, @nics NICs of
 * @nic Gb/s each, latencies alpha' = 3 us and alpha = @nic_us + 1 us. */
static ParoTopology *cluster_far(gint64 nodes, gint64 gpn, double intra, gint64 nics, double nic,
                                 gint64 per_leaf, double oversub, double nic_us)
{
    g_autofree char *text = g_strdup_printf(
        "kind: topology\nschema: 1\nname: test\nnodes: %" G_GINT64_FORMAT "\n"
        "gpu: {name: G, memory: 80 GiB, peak_flops: 312 TFLOP/s, hbm_bandwidth: 2 TB/s}\n"
        "node:\n  gpus: %" G_GINT64_FORMAT "\n"
        "  fabric: {kind: nvswitch, bandwidth: %g GB/s, latency: 3 us}\n"
        "  nics: {count: %" G_GINT64_FORMAT ", bandwidth: %g Gb/s, latency: %g us}\n"
        "network: {nodes_per_leaf: %" G_GINT64_FORMAT ", oversubscription: %g, latency: 1 us}\n",
        nodes, gpn, intra, nics, nic, nic_us, per_leaf, oversub);
    return paro_test_topology(text);
}

/* The same with NICs of 8 us: alpha = 9 us. */
static ParoTopology *cluster(gint64 nodes, gint64 gpn, double intra, gint64 nics, double nic,
                             gint64 per_leaf, double oversub)
{
    return cluster_far(nodes, gpn, intra, nics, nic, per_leaf, oversub, 8);
}

static ParoCollResult run(const ParoTopology *t, gboolean aggregated, ParoCollKind op,
                          ParoAlgorithm algo, gint64 m, double size, gint64 channels, gint64 chunks)
{
    gint64 n = paro_topology_n_gpus(t);
    g_autoptr(GError) error = NULL;
    g_autoptr(ParoGraph) g = paro_graph_new(t, t->nodes, aggregated, &error);
    ck_assert_msg(g != NULL, "%s", error ? error->message : "");
    ParoCollSpec spec = {op, algo, n, m, size, channels, chunks, 1024};
    ParoCollResult r;
    ck_assert_msg(paro_coll_simulate(g, PARO_NET_MAXMIN, &spec, &r, &error), "%s",
                  error ? error->message : "");
    return r;
}

START_TEST(collective_ring_allreduce_closed_form)
{
    /* System: one node of 8 GPUs on an NVSwitch of 100 GB/s per port, alpha' = 3 us;
     * AllReduce of 1 GiB, one channel.
     * Expectation (nccl-tests PERFORMANCE.md ring model): 2(k-1)*alpha' + 2(k-1)/k*S/B'.
     * Tolerance: each of the 14 steps rounds its bandwidth phase up to the picosecond. */
    g_autoptr(ParoTopology) t = cluster(1, 8, 100, 1, 100, 1, 1);
    double S = 1073741824.0;
    ParoCollResult r = run(t, FALSE, PARO_COLL_ALLREDUCE, PARO_ALGO_RING, 8, S, 1, 1);
    double want = 14 * 3e-6 + 14.0 / 8 * S / 100e9;
    ck_assert_double_eq_tol(paro_time_to_s(r.time), want, 14e-12);
}
END_TEST

START_TEST(collective_ring_multi_node_closed_form)
{
    /* System: 4 nodes x 8 GPUs, one 100 Gb/s NIC per node, one channel; AllGather 256 MiB.
     * Expectation: the NIC is the ring's slowest link, and with NCCL's slots it carries the
     * ring's 31 steps back to back (the NVLink hops deliver each step's data before the
     * NIC is free), so only the last step's hop latency shows:
     * 31 * S/(32 * 12.5 GB/s) + alpha, alpha = 9 us (NIC + switch). The closed form of
     * coll/analytic.c, 31 * (alpha + S/(32 B)), pays the latency at every step (one send
     * at a time), an upper bound by 30 alpha. */
    g_autoptr(ParoTopology) t = cluster(4, 8, 300, 1, 100, 32, 1);
    double S = 268435456.0;
    ParoCollResult r = run(t, FALSE, PARO_COLL_ALLGATHER, PARO_ALGO_RING, 8, S, 1, 1);
    double want = 31 * S / 32 / 12.5e9 + 9e-6;
    ck_assert_double_eq_tol(paro_time_to_s(r.time), want, want * 1e-6);
    ParoCommModel cm = {32, 8, 8, 300e9, 3e-6, 12.5e9 / 8, 9e-6, PARO_ALGO_RING, 1};
    ck_assert_double_eq_tol(paro_coll_closed_form_s(&cm, PARO_COLL_ALLGATHER, PARO_SCOPE_GLOBAL, S),
                            want + 30 * 9e-6, want * 1e-9);
}
END_TEST

START_TEST(collective_hierarchical_is_sum_of_phases)
{
    /* Expectation: hierarchical AllReduce = RS(intra, S) + AR(inter, S/m) + AG(intra, S)
     * in sequence, each a uniform ring: the closed form of coll/analytic.c with the
     * hierarchical algorithm. Tolerance: 1e-6 relative (picosecond rounding per step). */
    g_autoptr(ParoTopology) t = cluster(4, 8, 300, 1, 100, 32, 1);
    double S = 1073741824.0;
    ParoCollResult r = run(t, FALSE, PARO_COLL_ALLREDUCE, PARO_ALGO_HIERARCHICAL, 8, S, 1, 1);
    ParoCommModel cm = {32, 8, 8, 300e9, 3e-6, 12.5e9 / 8, 9e-6, PARO_ALGO_HIERARCHICAL, 1};
    double want = paro_coll_closed_form_s(&cm, PARO_COLL_ALLREDUCE, PARO_SCOPE_GLOBAL, S);
    ck_assert_double_eq_tol(paro_time_to_s(r.time), want, want * 1e-6);
}
END_TEST

START_TEST(collective_ho_ring_between_max_and_sum)
{
    /* Expectation: ho-ring AllGather lies between max(inter, intra) and their sum
     * (hierarchical), and gets closer to the max as the chunks grow in number. The intra
     * links are made slow (20 GB/s) so both parts matter. */
    g_autoptr(ParoTopology) t = cluster(4, 8, 20, 8, 100, 32, 1);
    double S = 1073741824.0;
    ParoCommModel cm = {32, 8, 8, 20e9, 3e-6, 8 * 12.5e9 / 8, 9e-6, PARO_ALGO_RING, 1};
    double inter = paro_coll_closed_form_s(&cm, PARO_COLL_ALLGATHER, PARO_SCOPE_INTER, S / 8);
    double intra = paro_coll_closed_form_s(&cm, PARO_COLL_ALLGATHER, PARO_SCOPE_INTRA, S);
    double sum =
        paro_time_to_s(run(t, FALSE, PARO_COLL_ALLGATHER, PARO_ALGO_HIERARCHICAL, 8, S, 1, 1).time);
    ck_assert_double_eq_tol(sum, inter + intra, sum * 1e-6);
    double previous = sum * 1.000001;
    for (gint64 chunks = 2; chunks <= 32; chunks *= 4) {
        double t_ho = paro_time_to_s(
            run(t, FALSE, PARO_COLL_ALLGATHER, PARO_ALGO_HO_RING, 8, S, 1, chunks).time);
        ck_assert_msg(t_ho < previous && t_ho >= fmax(inter, intra),
                      "chunks %" G_GINT64_FORMAT ": %g (max %g, sum %g)", chunks, t_ho,
                      fmax(inter, intra), sum);
        previous = t_ho;
    }
    /* With 32 chunks the pipeline fill is 1/32 of the smaller part plus latencies. */
    ck_assert_double_eq_tol(previous, fmax(inter, intra), 0.06 * fmax(inter, intra));
}
END_TEST

START_TEST(collective_conservation)
{
    /* Bytes sent equal bytes received, equal the ring's 2(k-1)/k*S per GPU, and no link
     * is ever loaded beyond its capacity. */
    g_autoptr(ParoTopology) t = cluster(4, 8, 300, 2, 200, 2, 2);
    double S = 64e6;
    for (int algo = 0; algo < 3; algo++) {
        ParoCollResult r = run(t, FALSE, PARO_COLL_ALLREDUCE, (ParoAlgorithm)algo, 8, S, 4, 4);
        ck_assert_double_eq_tol(r.sent_bytes, r.received_bytes, 1e-3);
        ck_assert(r.max_utilisation <= 1 + 1e-9);
        ck_assert(r.intra_bytes + r.inter_bytes >= r.sent_bytes); /* >= 2 links a hop */
    }
    ParoCollResult ring = run(t, FALSE, PARO_COLL_ALLREDUCE, PARO_ALGO_RING, 8, S, 4, 1);
    ck_assert_double_eq_tol(ring.sent_bytes, 32 * 2 * 31.0 / 32 * S, 1);
}
END_TEST

typedef struct {
    gint64 nodes, gpn, nics, per_leaf;
    double nic, oversub;
} Shape;

static const Shape shapes[] = {
    {4, 8, 1, 32, 100, 1}, /* the PaRO paper's cluster */
    {8, 8, 8, 32, 400, 1}, /* DGX H100, rail per GPU */
    {16, 4, 2, 4, 100, 2}, /* Lassen-like, 4 leaves, 2:1 oversubscribed */
};

START_TEST(collective_aggregated_matches_explicit)
{
    /* On symmetric clusters the folded simulation and the one with every GPU agree
     * within 1% (they are in fact identical up to rounding). */
    const Shape *sh = &shapes[_i];
    g_autoptr(ParoTopology) t =
        cluster(sh->nodes, sh->gpn, 300, sh->nics, sh->nic, sh->per_leaf, sh->oversub);
    const ParoCollKind ops[] = {PARO_COLL_ALLREDUCE, PARO_COLL_ALLGATHER, PARO_COLL_REDUCESCATTER};
    for (int algo = 0; algo < 3; algo++)
        for (guint o = 0; o < G_N_ELEMENTS(ops); o++) {
            ParoCollResult a = run(t, TRUE, ops[o], (ParoAlgorithm)algo, sh->gpn, 256e6, 4, 4);
            ParoCollResult x = run(t, FALSE, ops[o], (ParoAlgorithm)algo, sh->gpn, 256e6, 4, 4);
            double ta = paro_time_to_s(a.time), tx = paro_time_to_s(x.time);
            ck_assert_msg(fabs(ta - tx) <= 0.01 * tx, "shape %d algo %d op %u: %g vs %g", _i, algo,
                          o, ta, tx);
            ck_assert_double_eq_tol(a.inter_bytes, x.inter_bytes, 1e-6 * x.inter_bytes + 1);
            ck_assert_double_eq_tol(a.intra_bytes, x.intra_bytes, 1e-6 * x.intra_bytes + 1);
        }
}
END_TEST

typedef struct {
    Shape shape;
    gint64 m; /* the group: beyond a node, the inter-group hop spans m / gpn nodes */
} Ragged;

static const Ragged ragged[] = {
    {{6, 8, 1, 4, 100, 1}, 8},   /* a leaf of 4 and one of 2 */
    {{9, 8, 2, 4, 200, 2}, 8},   /* two full leaves and a node alone, 2:1 */
    {{13, 4, 2, 4, 100, 4}, 4},  /* 4:1, small nodes */
    {{10, 8, 1, 4, 100, 4}, 16}, /* hops of 2 nodes, 4:1 */
    {{8, 8, 1, 2, 100, 4}, 32},  /* full leaves, hops of 4 nodes: beyond a leaf */
};

/* The folded simulation's error against the explicit one on @t, relative. */
static double fold_error(const ParoTopology *t, ParoCollKind op, int algo, gint64 m, double size)
{
    ParoCollResult a = run(t, TRUE, op, (ParoAlgorithm)algo, m, size, 2, 4);
    ParoCollResult x = run(t, FALSE, op, (ParoAlgorithm)algo, m, size, 2, 4);
    ck_assert_double_eq_tol(a.sent_bytes, x.sent_bytes, 1e-9 * x.sent_bytes);
    return (paro_time_to_s(a.time) - paro_time_to_s(x.time)) / paro_time_to_s(x.time);
}

START_TEST(collective_partly_filled_leaf_folds_near_explicit)
{
    /* Folding with a partly filled last leaf (issue #18) is not exact: the folded node's
     * uplink carries a full leaf's flows, and a hop's latency is the average over the
     * real hops (the share of nodes whose hop leaves its leaf). The oracle is the explicit
     * simulation of every GPU, and the bar is the fold's own error on full leaves: folding
     * averages a ring's hop latencies, and shares links alike on every node, there too.
     * With the last leaf part full, the error may exceed that of the cluster with the
     * same leaves filled by 0.1 point at 1 GB and 1 point at 1 MB. Measured: at most 0.4
     * point more at 1 MB (ho-ring, 6 nodes of 4 a leaf: -0.94% against -0.56%), none at
     * 1 GB; on 33 to 129 nodes of 32 a leaf, all within 0.14% of explicit (bench/README.md).
     * The fold's own error is large for ho-ring with groups of two nodes at 4:1
     * oversubscription (12 nodes: +16% at 1 GB), a doubt of the fold, not of the leaf.
     * The last shape has full leaves and hops beyond a leaf, which the fold used to count
     * as one flow per uplink instead of a leaf's (23% fast at 4:1 on 64 nodes of 4). */
    const Ragged *rg = &ragged[_i];
    const Shape *sh = &rg->shape;
    gint64 full_nodes = (sh->nodes + sh->per_leaf - 1) / sh->per_leaf * sh->per_leaf;
    g_autoptr(ParoTopology) t =
        cluster(sh->nodes, sh->gpn, 300, sh->nics, sh->nic, sh->per_leaf, sh->oversub);
    g_autoptr(ParoTopology) full =
        cluster(full_nodes, sh->gpn, 300, sh->nics, sh->nic, sh->per_leaf, sh->oversub);
    const ParoCollKind ops[] = {PARO_COLL_ALLREDUCE, PARO_COLL_ALLGATHER, PARO_COLL_REDUCESCATTER};
    for (int algo = 0; algo < 3; algo++)
        for (guint o = 0; o < G_N_ELEMENTS(ops); o++)
            for (int big = 0; big < 2; big++) {
                double size = big ? 1e9 : 1e6, room = big ? 1e-3 : 1e-2;
                double e = fold_error(t, ops[o], algo, rg->m, size);
                double e_full =
                    full_nodes == sh->nodes ? e : fold_error(full, ops[o], algo, rg->m, size);
                ck_assert_msg(fabs(e) <= fabs(e_full) + room,
                              "ragged %d algo %d op %u, %g B: %+.3f%%, full leaves %+.3f%%", _i,
                              algo, o, size, 100 * e, 100 * e_full);
            }
}
END_TEST

START_TEST(collective_straggler_nic)
{
    /* System: 4 nodes x 8 GPUs, one 100 Gb/s NIC each; node 2's NIC sends at a quarter.
     * Expectation: every ring step waits for the slow hop, so the flat-ring AllGather
     * takes about 4x as long (the NIC is the bottleneck of every step), while the other
     * nodes' NICs idle part of the time. */
    g_autoptr(ParoTopology) t = cluster(4, 8, 300, 1, 100, 32, 1);
    g_autoptr(ParoGraph) g = paro_graph_new(t, 4, FALSE, NULL);
    ParoCollSpec spec = {PARO_COLL_ALLGATHER, PARO_ALGO_RING, 32, 8, 256e6, 1, 1, 1024};
    ParoCollResult fast, slow;
    ck_assert(paro_coll_simulate(g, PARO_NET_MAXMIN, &spec, &fast, NULL));
    paro_graph_scale_link(g, paro_graph_nic_tx(g, 2, 0), 0.25);
    ck_assert(paro_coll_simulate(g, PARO_NET_MAXMIN, &spec, &slow, NULL));
    double ratio = paro_time_to_s(slow.time) / paro_time_to_s(fast.time);
    ck_assert_msg(ratio > 3.5 && ratio < 4.01, "slowdown %g", ratio);
}
END_TEST

START_TEST(collective_never_limiting_leaf_links)
{
    /* System: 40 nodes of 1 NIC at 100 Gb/s, 16 a leaf: leaves of 16, 16 and 8 nodes.
     * Expectation: without oversubscription a leaf's uplink and downlink (16 x 100 Gb/s)
     * carry what all its NICs can send or receive, so none can limit a max-min allocation:
     * all six are listed (the half-full leaf's too). At 2:1 only the half-full leaf's two
     * (8 x 100 Gb/s = 16 x 100 / 2); none in the aggregated mode, whose weights stand for several
     * flows; nor a full leaf's uplink slowed to half (a degraded link, paro_graph_scale_link),
     * while its downlink still is. */
    g_autoptr(ParoTopology) t = cluster(40, 8, 300, 1, 100, 16, 1);
    g_autoptr(ParoTopology) t2 = cluster(40, 8, 300, 1, 100, 16, 2);
    g_autoptr(ParoGraph) g = paro_graph_new(t, 40, FALSE, NULL);
    g_autoptr(ParoGraph) g2 = paro_graph_new(t2, 40, FALSE, NULL);
    g_autoptr(ParoGraph) folded = paro_graph_new(t, 40, TRUE, NULL);
    g_autoptr(GArray) links = g_array_new(FALSE, FALSE, sizeof(guint));
    paro_graph_never_limiting(g, links);
    ck_assert_uint_eq(links->len, 6);
    guint first_leaf_link = paro_graph_n_links(g) - 6;
    for (guint i = 0; i < links->len; i++)
        ck_assert_uint_eq(g_array_index(links, guint, i), first_leaf_link + i);
    g_array_set_size(links, 0);
    paro_graph_never_limiting(g2, links);
    ck_assert_uint_eq(links->len, 2);
    ck_assert_uint_eq(g_array_index(links, guint, 0), first_leaf_link + 4);
    g_array_set_size(links, 0);
    paro_graph_never_limiting(folded, links);
    ck_assert_uint_eq(links->len, 0);
    paro_graph_scale_link(g, first_leaf_link, 0.5);
    paro_graph_never_limiting(g, links);
    ck_assert_uint_eq(links->len, 5);
    ck_assert_uint_eq(g_array_index(links, guint, 0), first_leaf_link + 1);
}
END_TEST

START_TEST(collective_mirror_needs_a_symmetric_graph)
{
    /* The mirror maps the graph onto itself on full leaves with G even and rails that map
     * onto rails; not with a partly filled last leaf (its nodes' images sit in a full one),
     * three NICs for eight GPUs (GPUs 0 and 1 share rail 0, their images 4 and 5 do not
     * share one), or one NIC slowed alone (its image is not). */
    g_autoptr(ParoTopology) full = cluster(8, 8, 300, 2, 100, 4, 1);
    g_autoptr(ParoTopology) partial = cluster(10, 8, 300, 2, 100, 4, 1);
    g_autoptr(ParoTopology) three = cluster(8, 8, 300, 3, 100, 4, 1);
    g_autoptr(ParoGraph) g = paro_graph_new(full, 8, FALSE, NULL);
    g_autoptr(ParoGraph) gr = paro_graph_new(partial, 10, FALSE, NULL);
    g_autoptr(ParoGraph) g3 = paro_graph_new(three, 8, FALSE, NULL);
    g_autofree guint *mirror = g_new(guint, paro_graph_n_links(gr));
    ck_assert(paro_graph_mirror(g, mirror));
    /* node 0's rail-0 NIC (GPUs 0-3) is node 7's rail 1 (GPUs 4-7), and an involution */
    guint tx = paro_graph_nic_tx(g, 0, 0);
    ck_assert_uint_eq(mirror[tx], paro_graph_nic_tx(g, 7, 1));
    for (guint l = 0; l < paro_graph_n_links(g); l++)
        ck_assert_uint_eq(mirror[mirror[l]], l);
    ck_assert(!paro_graph_mirror(gr, mirror));
    ck_assert(!paro_graph_mirror(g3, mirror));
    paro_graph_scale_link(g, tx, 0.5);
    ck_assert(!paro_graph_mirror(g, mirror));
}
END_TEST

START_TEST(collective_ho_ring_margin_grows_with_link_ratio)
{
    /* System: 16 nodes x 8 GPUs (128), NVSwitch 300 GB/s, one NIC per node at 800, 200
     * and 50 Gb/s (intra/inter-node ratio 3, 12 and 48); AllGather of 1 GiB, 8 chunks.
     * Expectation: HO-Ring's gain over the flat ring grows with the ratio. Measured with
     * this model: flat/ho-ring = 0.922, 1.021 and 1.049 (2026-11-23; 1.021, 1.048, 1.056
     * before NCCL's slots let the flat ring hide its 127 hop latencies, 1.1 ms, behind its
     * transfers: at ratio 3 the flat ring now wins, HO-Ring paying its stage boundaries).
     * The bound is ((n-1)/n) / ((g-1)/g) = (127/128)/(15/16) = 1.058: an NCCL flat ring
     * already drives all of a node's NIC bandwidth, so HO-Ring saves only the share of
     * the message that the ring sends across nodes needlessly, plus the intra part it
     * hides. (PaRO's 36.5% is against a ring whose every step runs at one GPU's share.) */
    const double nic[] = {800, 200, 50};
    double previous = 0;
    for (guint i = 0; i < G_N_ELEMENTS(nic); i++) {
        g_autoptr(ParoTopology) t = cluster(16, 8, 300, 1, nic[i], 32, 1);
        double ring = paro_time_to_s(
            run(t, TRUE, PARO_COLL_ALLGATHER, PARO_ALGO_RING, 8, 1073741824.0, 1, 1).time);
        double ho = paro_time_to_s(
            run(t, TRUE, PARO_COLL_ALLGATHER, PARO_ALGO_HO_RING, 8, 1073741824.0, 1, 8).time);
        double gain = ring / ho;
        ck_assert_msg(gain > previous, "NIC %g Gb/s: gain %g not above %g", nic[i], gain, previous);
        previous = gain;
    }
    ck_assert(previous > 1.045 && previous < 1.0585);
}
END_TEST

START_TEST(collective_bad_shapes_are_errors)
{
    g_autoptr(ParoTopology) t = cluster(4, 8, 300, 1, 100, 32, 1);
    g_autoptr(ParoGraph) g = paro_graph_new(t, 4, TRUE, NULL);
    ParoCollResult r;
    g_autoptr(GError) error = NULL;
    ParoCollSpec spec = {PARO_COLL_ALLGATHER, PARO_ALGO_HIERARCHICAL, 32, 3, 1e6, 1, 1, 1024};
    ck_assert(!paro_coll_simulate(g, PARO_NET_MAXMIN, &spec, &r, &error));
    ck_assert(g_error_matches(error, PARO_SIM_ERROR, PARO_SIM_ERROR_INFEASIBLE));
    g_clear_error(&error);
    ParoCollSpec bcast = {PARO_COLL_BROADCAST, PARO_ALGO_RING, 32, 8, 1e6, 1, 8, 1024};
    ck_assert(!paro_coll_simulate(g, PARO_NET_MAXMIN, &bcast, &r, &error));
}
END_TEST

START_TEST(collective_broadcast_chain)
{
    /* System: one node of 8, 100 GB/s ports, alpha' = 3 us; Broadcast of 80 MB in 8
     * pieces on one channel. Expectation (pipelined chain, the pieces following one
     * another on each connection within its 8 slots, so each hop's latency is paid once):
     * (k-1 + P-1) * S/(P*B') + (k-1) * alpha' = 14 x 100 us + 7 x 3 us. */
    g_autoptr(ParoTopology) t = cluster(1, 8, 100, 1, 100, 1, 1);
    ParoCollResult r = run(t, FALSE, PARO_COLL_BROADCAST, PARO_ALGO_RING, 8, 80e6, 1, 8);
    ck_assert_double_eq_tol(paro_time_to_s(r.time), 14 * 100e-6 + 7 * 3e-6, 1e-9);
}
END_TEST

START_TEST(collective_tree_latency_and_traffic)
{
    /* System: 8 nodes x 8 GPUs, 100 Gb/s NIC each, alpha = 9 us, alpha' = 3 us.
     * Expectation: an 8-byte AllReduce is latency-bound: the ring's 2(n-1) = 126 steps
     * each pay its average hop, (56 x 3 + 8 x 9)/64 = 3.75 us (472.5 us, and at most a
     * hop more as the ring drains), while the tree pays about 2*(log2(8)*9 + 7*3) = 96 us
     * plus its P-1 = 7 pipeline chunks: the tree must be at least 2.5x faster. For 64 MB each tree
     * edge carries its half up and down once: inter-node payload 2 trees x 2 x (N-1) x
     * S/2 = 2(N-1)S, counted on the NIC's transmit and receive links: 4(N-1)S. */
    g_autoptr(ParoTopology) t = cluster(8, 8, 300, 1, 100, 32, 1);
    g_autoptr(ParoGraph) g = paro_graph_new(t, 8, FALSE, NULL);
    ParoCollSpec tree = {PARO_COLL_ALLREDUCE, PARO_ALGO_TREE, 64, 8, 8, 1, 8, 1024};
    ParoCollSpec ring = {PARO_COLL_ALLREDUCE, PARO_ALGO_RING, 64, 8, 8, 1, 8, 1024};
    ParoCollResult rt, rr;
    ck_assert(paro_coll_simulate(g, PARO_NET_MAXMIN, &tree, &rt, NULL));
    ck_assert(paro_coll_simulate(g, PARO_NET_MAXMIN, &ring, &rr, NULL));
    ck_assert_msg(paro_time_to_s(rr.time) > 2.5 * paro_time_to_s(rt.time), "ring %g tree %g",
                  paro_time_to_s(rr.time), paro_time_to_s(rt.time));
    ck_assert(paro_time_to_s(rr.time) >= 126 * 3.75e-6 &&
              paro_time_to_s(rr.time) <= 126 * 3.75e-6 + 9e-6);
    tree.size_bytes = 64e6;
    ck_assert(paro_coll_simulate(g, PARO_NET_MAXMIN, &tree, &rt, NULL));
    ck_assert_double_eq_tol(rt.inter_bytes, 4 * 7 * 64e6, 1);
    ck_assert(rt.max_utilisation <= 1 + 1e-9);
}
END_TEST

typedef struct {
    gint64 nodes, gpn, nics, per_leaf;
    double oversub;
    gboolean free_leaves; /* leaf links that can never limit (decision 55) */
} MirrorShape;

static const MirrorShape mirror_shapes[] = {
    {8, 8, 1, 4, 1, TRUE},   /* two full leaves */
    {12, 8, 2, 4, 2, FALSE}, /* two rails, three leaves at 2:1: their links limit */
    {9, 4, 4, 3, 1, TRUE},   /* an odd number of nodes, a rail a GPU */
    {7, 1, 1, 7, 1, FALSE},  /* one GPU a node: the middle node is its own mirror; one leaf */
    {16, 8, 8, 4, 3, FALSE}, /* eight rails, four leaves at 3:1 */
};

START_TEST(collective_tree_shortcuts_match_every_transfer)
{
    /* Against the tree simulated transfer by transfer with every link in the solve
     * (events_only), for both fidelities and any size:
     * - tree 1 run as tree 0's mirror image (decision 56) is exact: the max-min allocation
     *   is unique, hence symmetric (within 1e-9: a link that is its own mirror subtracts its
     *   pair's share once, not twice; measured identical on 1,088 cases of every topology
     *   file, 2026-11-27, in half the events);
     * - leaf links that can never limit, left out of the solve (decision 55), change no
     *   rate, but flows are re-solved less often, and each solve rounds a flow's end up to
     *   the picosecond afresh: the ends move by picoseconds. Within 1e-6 (measured: 73 of
     *   those 1,088 cases differ, by at most 1.8e-7, 51 ps of 288 us). */
    const MirrorShape *sh = &mirror_shapes[_i];
    g_autoptr(ParoTopology) t =
        cluster(sh->nodes, sh->gpn, 300, sh->nics, 100, sh->per_leaf, sh->oversub);
    g_autoptr(ParoGraph) g = paro_graph_new(t, sh->nodes, FALSE, NULL);
    g_autoptr(GArray) free_links = g_array_new(FALSE, FALSE, sizeof(guint));
    paro_graph_never_limiting(g, free_links);
    ck_assert_int_eq(free_links->len > 0, sh->free_leaves);
    double room = sh->free_leaves ? 1e-6 : 1e-9;
    const double sizes[] = {8, 1e6, 1e9};
    for (int fidelity = 0; fidelity < 2; fidelity++)
        for (guint k = 0; k < G_N_ELEMENTS(sizes); k++) {
            ParoCollSpec spec = {PARO_COLL_ALLREDUCE,
                                 PARO_ALGO_TREE,
                                 sh->nodes * sh->gpn,
                                 sh->gpn,
                                 sizes[k],
                                 1,
                                 4,
                                 1024};
            ParoCollResult quick, every;
            ck_assert(paro_coll_simulate(g, (ParoNetFidelity)fidelity, &spec, &quick, NULL));
            spec.events_only = TRUE;
            ck_assert(paro_coll_simulate(g, (ParoNetFidelity)fidelity, &spec, &every, NULL));
            double a = paro_time_to_s(quick.time), b = paro_time_to_s(every.time);
            ck_assert_msg(fabs(a - b) <= room * b, "shape %d, %g B: %.12g s against %.12g s", _i,
                          sizes[k], a, b);
            ck_assert_double_eq_tol(quick.inter_bytes, every.inter_bytes,
                                    room * every.inter_bytes + 1e-3);
            ck_assert_double_eq_tol(quick.intra_bytes, every.intra_bytes,
                                    room * every.intra_bytes + 1e-3);
            ck_assert_double_eq(quick.sent_bytes, every.sent_bytes);
            ck_assert_uint_lt(quick.events, every.events);
        }
}
END_TEST

START_TEST(collective_sendrecv)
{
    /* Every GPU sends S to the next: one step; within a node at the port bandwidth, and
     * the node's exit GPU through the NIC: (alpha + S/B_nic) with one channel. */
    g_autoptr(ParoTopology) t = cluster(4, 8, 300, 1, 100, 32, 1);
    ParoCollResult r = run(t, TRUE, PARO_COLL_SENDRECV, PARO_ALGO_RING, 8, 125e6, 1, 1);
    ck_assert_double_eq_tol(paro_time_to_s(r.time), 9e-6 + 125e6 / 12.5e9, 1e-9);
    ck_assert_double_eq_tol(r.sent_bytes, 32 * 125e6, 1);
}
END_TEST

/* An all-to-all of @S over @scope (groups of @m) on @t; its flow classes in @flows. */
static ParoCollResult run_alltoall(const ParoTopology *t, gboolean aggregated, ParoScope scope,
                                   gint64 m, double S, double *flows)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(ParoGraph) g = paro_graph_new(t, t->nodes, aggregated, &error);
    ck_assert_msg(g != NULL, "%s", error ? error->message : "");
    ParoCollSpec spec;
    paro_coll_spec_init(&spec, t, PARO_COLL_ALLTOALL, PARO_ALGO_AUTO, paro_topology_n_gpus(t), m,
                        S);
    spec.scope = scope;
    ParoCollResult r;
    ck_assert_msg(paro_coll_simulate(g, PARO_NET_MAXMIN, &spec, &r, &error), "%s",
                  error ? error->message : "");
    if (flows)
        *flows = paro_coll_alltoall_flows(g, &spec);
    return r;
}

START_TEST(collective_alltoall_closed_form)
{
    /* System: 8 nodes x 8 GPUs (64), NVSwitch ports of 450 GB/s, alpha' = 3 us, a 400 Gb/s
     * NIC per GPU (50 GB/s), alpha = 8 + 1 = 9 us; all-to-all of S = 1 GiB.
     * Hand derivation: each GPU sends S/64 to each of the 63 others at once: 7 flows over its
     * switch port, S*7/64 in all at 450 GB/s (0.26 ms), and 56 through its rail, S*56/64 at
     * 50 GB/s (18.79 ms), each of its rail's 56 flows at 1/56 of it (the receiving rails
     * carry the same). The NIC sets the time: alpha + S*56/64 / 50 GB/s, which is
     * paro_coll_alltoall_s with B = the GPU's rail. Link bytes, whole cluster: every byte
     * crosses two links of its class (port up and down; rail out and in): intra 64 x 2 x
     * S*7/64 = 14 S, inter 64 x 2 x S*56/64 = 112 S; sent 64 x S*63/64.
     * Flow classes: explicit, one per GPU and peer (64 x 63); aggregated, a node's GPU has 7
     * peers on its node and 8 rails to receive on, the same from every other node (8 x 15).
     * Tolerance: the bandwidth phases round up to the picosecond. */
    g_autoptr(ParoTopology) t = cluster(8, 8, 450, 8, 400, 32, 1);
    double S = 1073741824.0, want = 9e-6 + S * 56 / 64 / 50e9;
    for (int aggregated = 0; aggregated <= 1; aggregated++) {
        double flows;
        ParoCollResult r = run_alltoall(t, aggregated, PARO_SCOPE_GLOBAL, 8, S, &flows);
        ck_assert_double_eq_tol(paro_time_to_s(r.time), want, 1e-9);
        ck_assert_double_eq_tol(r.intra_bytes, 14 * S, 1e-6 * S);
        ck_assert_double_eq_tol(r.inter_bytes, 112 * S, 1e-6 * S);
        ck_assert_double_eq_tol(r.sent_bytes, 64 * S * 63 / 64, 1e-6 * S);
        ck_assert_double_eq(flows, aggregated ? 8 * 15 : 64 * 63);
    }
    ParoCommModel cm = {64, 8, 8, 450e9, 3e-6, 50e9, 9e-6, PARO_ALGO_RING, 1};
    ck_assert_double_eq_tol(paro_coll_alltoall_s(&cm, 64, 8, S), want, 1e-9);
}
END_TEST

START_TEST(collective_alltoall_scopes)
{
    /* The same cluster, groups of m = 8 (a node). Hand derivation: intra, every node's 8
     * GPUs at once, each S*7/8 over its port: alpha' + S*7/8 / 450 GB/s; inter, the 8 GPUs
     * of each local rank (one a node), each S*7/8 through its own rail: alpha + S*7/8 /
     * 50 GB/s. */
    g_autoptr(ParoTopology) t = cluster(8, 8, 450, 8, 400, 32, 1);
    double S = 268435456.0;
    for (int aggregated = 0; aggregated <= 1; aggregated++) {
        ParoCollResult intra = run_alltoall(t, aggregated, PARO_SCOPE_INTRA, 8, S, NULL);
        ck_assert_double_eq_tol(paro_time_to_s(intra.time), 3e-6 + S * 7 / 8 / 450e9, 1e-9);
        ck_assert_double_eq(intra.inter_bytes, 0);
        ParoCollResult inter = run_alltoall(t, aggregated, PARO_SCOPE_INTER, 8, S, NULL);
        ck_assert_double_eq_tol(paro_time_to_s(inter.time), 9e-6 + S * 7 / 8 / 50e9, 1e-9);
        ck_assert_double_eq(inter.intra_bytes, 0);
    }
}
END_TEST

START_TEST(collective_alltoall_contention)
{
    /* Where links are shared the flows share them. Hand derivations, S = 1 GiB:
     * - 2 nodes x 8 GPUs with 2 NICs of 400 Gb/s each: GPUs 0-3 on rail 0, 4-7 on rail 1;
     *   a rail carries 4 GPUs x 8 peers x S/16 = 2 S at 50 GB/s: alpha + 2 S / 50 GB/s,
     *   paro_coll_alltoall_s with a GPU's NIC share, 12.5 GB/s.
     * - 4 nodes x 8 GPUs, a NIC per GPU, 2 nodes a leaf, oversubscription 2: a leaf's
     *   uplink (2 x 8 x 50 / 2 = 400 GB/s) carries its 16 GPUs' flows to the 16 GPUs of the
     *   other leaf, 16 x 16 x S/32 = 8 S, from the instant they start (after alpha + 2 us
     *   for the spine and far leaf = 11 us) at 1.5625 GB/s each; the flows within the leaf
     *   take the rest of the rails and end first: 11 us + 8 S / 400 GB/s. The fold onto one
     *   node counts the flows of a hop of d nodes that cross leaves, d = 3 wrapping past the
     *   last node included (one of a leaf's two), as the explicit graph has them; its
     *   flows of a hop of 1 or 3 nodes stand for one crossing and one staying flow each and
     *   pay their average latency, 10 us (decision 27), so the uplink fills 1 us earlier
     *   there: within 1 us of the explicit time, with the same link bytes. */
    double S = 1073741824.0;
    g_autoptr(ParoTopology) shared = cluster(2, 8, 450, 2, 400, 32, 1);
    double want = 9e-6 + 2 * S / 50e9;
    ParoCommModel cm = {16, 8, 8, 450e9, 3e-6, 12.5e9, 9e-6, PARO_ALGO_RING, 1};
    ck_assert_double_eq_tol(paro_coll_alltoall_s(&cm, 16, 8, S), want, 1e-9);
    g_autoptr(ParoTopology) leaves = cluster(4, 8, 450, 8, 400, 2, 2);
    double explicit_bytes = 0;
    for (int aggregated = 0; aggregated <= 1; aggregated++) {
        ParoCollResult r = run_alltoall(shared, aggregated, PARO_SCOPE_GLOBAL, 8, S, NULL);
        ck_assert_double_eq_tol(paro_time_to_s(r.time), want, 1e-9);
        r = run_alltoall(leaves, aggregated, PARO_SCOPE_GLOBAL, 8, S, NULL);
        ck_assert_double_eq_tol(paro_time_to_s(r.time),
                                (aggregated ? 10e-6 : 11e-6) + 8 * S / 400e9, 1e-9);
        if (!aggregated)
            explicit_bytes = r.inter_bytes;
        else
            ck_assert_double_eq_tol(r.inter_bytes, explicit_bytes, 1e-9 * explicit_bytes);
    }
}
END_TEST

START_TEST(collective_step_overhead)
{
    /* A fixed per-step cost adds once per ring step: 14 steps x 2 us on an 8-GPU
     * AllReduce, exactly. */
    g_autoptr(ParoTopology) t = cluster(1, 8, 100, 1, 100, 1, 1);
    g_autoptr(ParoGraph) g = paro_graph_new(t, 1, FALSE, NULL);
    ParoCollSpec spec = {PARO_COLL_ALLREDUCE, PARO_ALGO_RING, 8, 8, 8e6, 1, 1, 1024, 0};
    ParoCollResult plain, slow;
    ck_assert(paro_coll_simulate(g, PARO_NET_MAXMIN, &spec, &plain, NULL));
    spec.step_overhead = 2000000;
    ck_assert(paro_coll_simulate(g, PARO_NET_MAXMIN, &spec, &slow, NULL));
    ck_assert_int_eq(slow.time - plain.time, 14 * 2000000);
}
END_TEST

/* A collective timed both ways: by its recurrence where it applies, and by events. Zeros
 * stand for one channel, 1,024 merged steps, a 3 us step overhead, max-min, all GPUs. */
typedef struct {
    Shape shape;
    ParoCollKind op;
    double size;
    gboolean recurs; /* expected: the recurrence times every phase */
    int partly;      /* else the phases it times (ho-ring's inter-node stage), if any */
    double share;    /* and the share of the sends promised to it beforehand */
    gboolean aggregated;
    ParoScope scope;
    gint64 channels, max_steps;
    ParoNetFidelity fidelity;
    gboolean slow_nic;    /* node 1's NIC at a quarter (explicit only) */
    gboolean no_overhead; /* no per-step overhead: hops of 3 and 9 us */
    double nic_us;        /* a NIC's latency when not 8 us */
    ParoAlgorithm algo;   /* ring (0) unless named */
    gboolean by_symmetry; /* in lockstep by symmetry, not shown beforehand */
    gboolean overtaken;   /* a send overtaken: seen once timed */
    gboolean starved_nic; /* node 3's NIC 0 at 1e-3 of its capacity (explicit only) */
} Twin;

#define PAPER                                                                                      \
    {                                                                                              \
        4, 8, 1, 32, 100, 1                                                                        \
    }
#define LEAVES                                                                                     \
    {                                                                                              \
        16, 4, 2, 4, 100, 2                                                                        \
    }
#define DGX_H100                                                                                   \
    {                                                                                              \
        8, 8, 8, 32, 400, 1                                                                        \
    }
#define AR PARO_COLL_ALLREDUCE
#define AG PARO_COLL_ALLGATHER

static const Twin twins[] = {
    /* one channel: every link carries one connection */
    {PAPER, AR, 256e6, TRUE},
    {PAPER, AR, 256e6, TRUE, .aggregated = TRUE},
    {PAPER, AG, 1e6, TRUE},
    {PAPER, PARO_COLL_REDUCESCATTER, 3e5, TRUE, .aggregated = TRUE},
    {PAPER, PARO_COLL_SENDRECV, 125e6, TRUE},
    {PAPER, AR, 64e6, TRUE, .scope = PARO_SCOPE_INTRA},
    {PAPER, AR, 64e6, TRUE, .fidelity = PARO_NET_ANALYTIC},
    {PAPER, AG, 64e6, TRUE, .slow_nic = TRUE},
    {LEAVES, AR, 1e8, TRUE},
    {DGX_H100, AG, 1e8, TRUE},
    /* groups in lockstep: the 8 inter-node rings that share each NIC (one of them slow),
     * and hierarchical's three phases in sequence, on every GPU or folded */
    {PAPER, AR, 64e6, TRUE, .scope = PARO_SCOPE_INTER},
    {PAPER, AG, 64e6, TRUE, .scope = PARO_SCOPE_INTER, .slow_nic = TRUE},
    {PAPER, AR, 256e6, TRUE, .algo = PARO_ALGO_HIERARCHICAL},
    {PAPER, AR, 256e6, TRUE, .algo = PARO_ALGO_HIERARCHICAL, .aggregated = TRUE},
    /* (the rings leaving a leaf share its uplink, and receive from a node whose two NICs
     * are two groups: in lockstep because those two are alike, which only timing shows) */
    {LEAVES, PARO_COLL_REDUCESCATTER, 1e8, TRUE, .algo = PARO_ALGO_HIERARCHICAL,
     .by_symmetry = TRUE, .share = 3.0 / 18},
    /* ho-ring's chunks: stages whose links no other stage uses, the inter-node phases
     * timed by recurrence while the intra-node ones run beside them as events; both stages
     * of an AllGather or a ReduceScatter (NVSwitch ports against NICs) */
    {PAPER, AG, 64e6, TRUE, .algo = PARO_ALGO_HO_RING},
    {PAPER, PARO_COLL_REDUCESCATTER, 64e6, TRUE, .algo = PARO_ALGO_HO_RING, .aggregated = TRUE},
    {PAPER, AR, 64e6, FALSE, .algo = PARO_ALGO_HO_RING, .slow_nic = TRUE, .partly = 4,
     .share = 6.0 / 20},
    {DGX_H100, AR, 1e8, FALSE, .algo = PARO_ALGO_HO_RING, .partly = 4, .share = 14.0 / 28},
    {LEAVES, AR, 1e8, FALSE, .algo = PARO_ALGO_HO_RING, .aggregated = TRUE, .partly = 4,
     .share = 30.0 / 36},
    {PAPER, AR, 8, FALSE, .algo = PARO_ALGO_HO_RING, .no_overhead = TRUE, .partly = 4,
     .share = 6.0 / 20},
    /* merged steps of unequal length: big, or latency-bound with hops alike (all 6 us) */
    {PAPER, AR, 256e6, TRUE, .max_steps = 10},
    {PAPER, AR, 8, TRUE, .max_steps = 10},
    /* latency-bound, a node's exit hop 34x the others (101 us against 3), 15 fast hops
     * before it: the exit GPU has 8 sends on their way 21 us in, and waits for a slot */
    {{2, 16, 1, 32, 100, 1}, AG, 8, TRUE, .no_overhead = TRUE, .nic_us = 100},
    /* the events decide: 62 ring steps merged into 40 sends, the first 22 of two steps and
     * two latencies; latency-bound (8 B), a wave of sends reaches a node's exit GPU (9 us a
     * hop) 2 x 3 us after the one before it, so send 22 (one latency) arrives before send
     * 21 (two); two channels on a GPU's port, one to a GPU of its node and one out of it
     * (out of lockstep); ho-ring's chunks overlapping phases on NVSwitch ports (the
     * inter-node stage alone recurs); a shared NIC under the analytic fidelity, whose rate is
     * each flow's own slowest link (the estimate, told the fidelity, promises nothing) */
    {PAPER, AR, 8, FALSE, .max_steps = 40, .no_overhead = TRUE, .overtaken = TRUE},
    {PAPER, AR, 64e6, FALSE, .channels = 2},
    {DGX_H100, AG, 1e8, FALSE, .aggregated = TRUE, .channels = 8},
    {PAPER, AR, 64e6, FALSE, .algo = PARO_ALGO_HO_RING, .partly = 4, .share = 6.0 / 20},
    {PAPER, AR, 64e6, FALSE, .scope = PARO_SCOPE_INTER, .fidelity = PARO_NET_ANALYTIC},
    /* a fill of two rounds: node 3's rings leave its leaf on one uplink, those on NIC 0
     * held by that NIC, starved, those on NIC 1 then sharing what is left */
    {LEAVES, AR, 1e8, FALSE, .scope = PARO_SCOPE_INTER, .starved_nic = TRUE},
};

START_TEST(collective_recurrence_equals_events)
{
    /* Oracle: the event simulation of every send (spec.events_only). Where no link carries
     * two connections of a lone ring phase, its recurrence (coll/recurrence.c) must give
     * the same picoseconds, the same bytes on every link class and the same utilisation,
     * bit for bit; elsewhere it must step aside (no events fired means it timed the
     * phase). */
    const Twin *tw = &twins[_i];
    const Shape *sh = &tw->shape;
    g_autoptr(ParoTopology) t = cluster_far(sh->nodes, sh->gpn, 300, sh->nics, sh->nic,
                                            sh->per_leaf, sh->oversub, tw->nic_us ? tw->nic_us : 8);
    g_autoptr(ParoGraph) g = paro_graph_new(t, t->nodes, tw->aggregated, NULL);
    if (tw->slow_nic)
        paro_graph_scale_link(g, paro_graph_nic_tx(g, 1, 0), 0.25);
    if (tw->starved_nic)
        paro_graph_scale_link(g, paro_graph_nic_tx(g, 3, 0), 1e-3);
    ParoCollSpec spec = {.op = tw->op,
                         .algorithm = tw->algo,
                         .n = paro_topology_n_gpus(t),
                         .m = sh->gpn,
                         .size_bytes = tw->size,
                         .channels = MAX(tw->channels, 1),
                         .chunks = 4,
                         .max_steps = tw->max_steps ? tw->max_steps : 1024,
                         .step_overhead = tw->no_overhead ? 0 : 3000000,
                         .scope = tw->scope};
    ParoCollResult fast, events;
    g_autoptr(GError) error = NULL;
    ck_assert_msg(paro_coll_simulate(g, tw->fidelity, &spec, &fast, &error), "%s",
                  error ? error->message : "");
    spec.events_only = TRUE;
    ck_assert(paro_coll_simulate(g, tw->fidelity, &spec, &events, NULL));
    ck_assert(paro_coll_recurred_share(g, tw->fidelity, &spec) == 0);
    ck_assert_uint_eq(events.recurred_phases, 0);
    /* every phase by recurrence: no event but each phase's end */
    ck_assert_msg(tw->recurs ? fast.recurred_phases > 0 && fast.events == fast.recurred_phases
                             : fast.recurred_phases == (guint64)tw->partly &&
                                   fast.events > fast.recurred_phases,
                  "twin %d: %" G_GUINT64_FORMAT " phases recurred, %" G_GUINT64_FORMAT " events",
                  _i, fast.recurred_phases, fast.events);
    /* what the work estimate is told beforehand: a promise, but for lockstep by symmetry
     * (not promised) and an overtaking (only seen when timed) */
    spec.events_only = FALSE;
    gboolean promised = (tw->recurs && !tw->by_symmetry) || tw->overtaken;
    double share = paro_coll_recurred_share(g, tw->fidelity, &spec);
    ck_assert_msg(fabs(share - (promised ? 1 : tw->share)) < 1e-12, "twin %d: share %g", _i, share);
    ck_assert_uint_gt(events.events, 0);
    ck_assert_int_eq(fast.time, events.time);
    ck_assert_msg(fast.intra_bytes == events.intra_bytes && fast.inter_bytes == events.inter_bytes,
                  "twin %d: link bytes %.17g %.17g vs %.17g %.17g", _i, fast.intra_bytes,
                  fast.inter_bytes, events.intra_bytes, events.inter_bytes);
    ck_assert(fast.max_utilisation == events.max_utilisation);
    ck_assert_double_eq_tol(fast.sent_bytes, events.sent_bytes, 1e-12 * events.sent_bytes);
    ck_assert_double_eq_tol(fast.received_bytes, events.received_bytes,
                            1e-12 * events.received_bytes);
}
END_TEST

START_TEST(collective_cache_is_keyed_by_value)
{
    /* The cache keeps durations by the value of what they depend on, never by pointer:
     * - a cached time equals a fresh simulation of the same spec, exactly;
     * - a second, separately loaded topology with the same figures hits the same entry;
     * - one figure changed (the NIC bandwidth) is another entry with another time;
     * - the topology a time was computed for may be freed, and the cache still answers and
     *   simulates new sizes on the same cluster (under AddressSanitizer a kept pointer to
     *   a freed input fails here; issue #13's heap-use-after-free). */
    g_autoptr(ParoCollCache) cache = paro_coll_cache_new();
    g_autoptr(GError) error = NULL;
    double S = 64.0 * 1048576.0;
    ParoTopology *first = cluster(4, 8, 300, 1, 100, 4, 1);
    ParoCollSpec spec;
    paro_coll_spec_init(&spec, first, PARO_COLL_ALLREDUCE, PARO_ALGO_RING, 32, 8, S);
    ParoTime cached = 0, again = 0, other = 0, later = 0;
    ck_assert(paro_coll_cache_time(cache, first, &spec, PARO_COLL_MODEL_FLOW, PARO_NET_MAXMIN,
                                   &cached, &error));
    ParoCollResult fresh =
        run(first, TRUE, PARO_COLL_ALLREDUCE, PARO_ALGO_RING, 8, S, 1, first->nccl.chunks);
    ck_assert_int_eq(cached, fresh.time);
    paro_topology_free(first);

    g_autoptr(ParoTopology) same = cluster(4, 8, 300, 1, 100, 4, 1);
    ck_assert(paro_coll_cache_time(cache, same, &spec, PARO_COLL_MODEL_FLOW, PARO_NET_MAXMIN,
                                   &again, &error));
    ck_assert_int_eq(again, cached);
    ck_assert_uint_eq(paro_coll_cache_n_entries(cache), 1);

    g_autoptr(ParoTopology) slower = cluster(4, 8, 300, 1, 50, 4, 1);
    ck_assert(paro_coll_cache_time(cache, slower, &spec, PARO_COLL_MODEL_FLOW, PARO_NET_MAXMIN,
                                   &other, &error));
    ck_assert_int_gt(other, cached);
    ck_assert_uint_eq(paro_coll_cache_n_entries(cache), 2);

    spec.size_bytes = 2 * S;
    ck_assert(paro_coll_cache_time(cache, same, &spec, PARO_COLL_MODEL_FLOW, PARO_NET_MAXMIN,
                                   &later, &error));
    ck_assert_int_gt(later, cached);
    ck_assert_uint_eq(paro_coll_cache_n_entries(cache), 3);
}
END_TEST

static Suite *collective_suite(void)
{
    Suite *s = suite_create("collective");
    TCase *tc = tcase_create("simulate");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, collective_ring_allreduce_closed_form);
    tcase_add_test(tc, collective_ring_multi_node_closed_form);
    tcase_add_test(tc, collective_hierarchical_is_sum_of_phases);
    tcase_add_test(tc, collective_ho_ring_between_max_and_sum);
    tcase_add_test(tc, collective_conservation);
    tcase_add_loop_test(tc, collective_aggregated_matches_explicit, 0, G_N_ELEMENTS(shapes));
    tcase_add_loop_test(tc, collective_partly_filled_leaf_folds_near_explicit, 0,
                        G_N_ELEMENTS(ragged));
    tcase_add_test(tc, collective_straggler_nic);
    tcase_add_test(tc, collective_never_limiting_leaf_links);
    tcase_add_test(tc, collective_mirror_needs_a_symmetric_graph);
    tcase_add_test(tc, collective_ho_ring_margin_grows_with_link_ratio);
    tcase_add_test(tc, collective_bad_shapes_are_errors);
    tcase_add_test(tc, collective_broadcast_chain);
    tcase_add_test(tc, collective_tree_latency_and_traffic);
    tcase_add_loop_test(tc, collective_tree_shortcuts_match_every_transfer, 0,
                        G_N_ELEMENTS(mirror_shapes));
    tcase_add_test(tc, collective_sendrecv);
    tcase_add_test(tc, collective_alltoall_closed_form);
    tcase_add_test(tc, collective_alltoall_scopes);
    tcase_add_test(tc, collective_alltoall_contention);
    tcase_add_test(tc, collective_step_overhead);
    tcase_add_test(tc, collective_cache_is_keyed_by_value);
    tcase_add_loop_test(tc, collective_recurrence_equals_events, 0, G_N_ELEMENTS(twins));
    suite_add_tcase(s, tc);
    return s;
}

PARO_CHECK_MAIN(collective_suite)
