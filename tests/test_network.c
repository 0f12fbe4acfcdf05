/* SPDX-License-Identifier: MIT */
/* Max-min sharing on systems small enough to solve by hand, to the picosecond. */
#include <glib.h>
#include <string.h>

#include "check-main.h"
#include "net/network.h"

typedef struct {
    ParoTime at[8];
    int n;
} Ends;

static void ended(ParoNetwork *net, gpointer data)
{
    Ends *e = data;
    e->at[e->n++] = paro_engine_now(paro_network_get_engine(net));
}

static const double one[] = {1, 1, 1};

START_TEST(network_two_flows_share_one_link)
{
    /* System: one link of 1 GB/s; two flows of 1 GB start together.
     * Expectation: each gets 0.5 GB/s and ends at exactly 2 s = 2e12 ps. */
    g_autoptr(ParoEngine) e = paro_engine_new();
    double cap[] = {1e9};
    g_autoptr(ParoNetwork) net = paro_network_new(e, PARO_NET_MAXMIN, cap, 1);
    Ends a = {0}, b = {0};
    guint l0[] = {0};
    paro_network_start(net, l0, one, 1, 1e9, 0, ended, &a);
    paro_network_start(net, l0, one, 1, 1e9, 0, ended, &b);
    paro_engine_run(e, PARO_TIME_MAX);
    ck_assert_int_eq(a.at[0], 2000000000000);
    ck_assert_int_eq(b.at[0], 2000000000000);
    ck_assert_double_eq_tol(paro_network_carried(net, 0), 2e9, 1e-3);
}
END_TEST

START_TEST(network_shared_bottleneck)
{
    /* System: L1 = 1 GB/s, L2 = 2 GB/s. Flow A (1 GB) on L1, B (1 GB) on L1 and L2,
     * C (4 GB) on L2.
     * Expectation by hand: L1 is the bottleneck, A = B = 0.5 GB/s; C takes the rest of L2,
     * 1.5 GB/s. A and B end at 2 s; C has then moved 3 GB and runs alone at 2 GB/s for the
     * last 1 GB: it ends at 2.5 s. */
    g_autoptr(ParoEngine) e = paro_engine_new();
    double cap[] = {1e9, 2e9};
    g_autoptr(ParoNetwork) net = paro_network_new(e, PARO_NET_MAXMIN, cap, 2);
    Ends a = {0}, b = {0}, c = {0};
    guint la[] = {0}, lb[] = {0, 1}, lc[] = {1};
    paro_network_start(net, la, one, 1, 1e9, 0, ended, &a);
    paro_network_start(net, lb, one, 2, 1e9, 0, ended, &b);
    paro_network_start(net, lc, one, 1, 4e9, 0, ended, &c);
    paro_engine_run(e, PARO_TIME_MAX);
    ck_assert_int_eq(a.at[0], 2000000000000);
    ck_assert_int_eq(b.at[0], 2000000000000);
    ck_assert_int_eq(c.at[0], 2500000000000);
    ck_assert(paro_network_max_utilisation(net) <= 1 + 1e-12);
}
END_TEST

START_TEST(network_resolves_only_the_component_that_changed)
{
    /* System: links A and B of 1 GB/s. Flows 1 and 2 (1 GB each) on A and flow 3 (1 GB) on
     * B start at 0; flow 4 (1 GB) on B joins after a 0.5 s latency.
     * Expectation by hand: 1 and 2 share A at 0.5 GB/s and end at 2 s. Flow 3 moves 0.5 GB
     * alone by 0.5 s, then shares B with 4 at 0.5 GB/s: it ends at 1.5 s; 4 has then moved
     * 0.5 GB and runs alone: it ends at 2 s.
     * Solves: at 0, A's {1, 2} and B's {3}; at 0.5 s, B's {3, 4}; at 1.5 s, B's {4}: four
     * solves setting six rates. A solver of every active flow at each change would set
     * 3 + 4 + 3 = 10 (issue #18: the incremental solver re-solves only what a change
     * touches). */
    g_autoptr(ParoEngine) e = paro_engine_new();
    double cap[] = {1e9, 1e9};
    g_autoptr(ParoNetwork) net = paro_network_new(e, PARO_NET_MAXMIN, cap, 2);
    Ends f[4];
    memset(f, 0, sizeof f);
    guint la[] = {0}, lb[] = {1};
    paro_network_start(net, la, one, 1, 1e9, 0, ended, &f[0]);
    paro_network_start(net, la, one, 1, 1e9, 0, ended, &f[1]);
    paro_network_start(net, lb, one, 1, 1e9, 0, ended, &f[2]);
    paro_network_start(net, lb, one, 1, 1e9, 500000000000, ended, &f[3]);
    paro_engine_run(e, PARO_TIME_MAX);
    ck_assert_int_eq(f[0].at[0], 2000000000000);
    ck_assert_int_eq(f[1].at[0], 2000000000000);
    ck_assert_int_eq(f[2].at[0], 1500000000000);
    ck_assert_int_eq(f[3].at[0], 2000000000000);
    ck_assert_uint_eq(paro_network_n_solves(net), 4);
    ck_assert_uint_eq(paro_network_n_flow_solves(net), 6);
    ck_assert_double_eq_tol(paro_network_carried(net, 1), 2e9, 1e-3);
}
END_TEST

START_TEST(network_latency_then_bandwidth)
{
    /* 1 MB over 1 GB/s after 5 us of latency: 5 us + 1 ms. A second flow starting later
     * shares the link only from its own start. */
    g_autoptr(ParoEngine) e = paro_engine_new();
    double cap[] = {1e9};
    g_autoptr(ParoNetwork) net = paro_network_new(e, PARO_NET_MAXMIN, cap, 1);
    Ends a = {0};
    guint l0[] = {0};
    paro_network_start(net, l0, one, 1, 1e6, 5000000, ended, &a);
    paro_engine_run(e, PARO_TIME_MAX);
    ck_assert_int_eq(a.at[0], 5000000 + 1000000000);
}
END_TEST

START_TEST(network_weights_count_identical_flows)
{
    /* A flow class standing for 4 flows on one 1 GB/s link gets 0.25 GB/s each. */
    g_autoptr(ParoEngine) e = paro_engine_new();
    double cap[] = {1e9};
    g_autoptr(ParoNetwork) net = paro_network_new(e, PARO_NET_MAXMIN, cap, 1);
    Ends a = {0};
    guint l0[] = {0};
    double w4[] = {4};
    paro_network_start(net, l0, w4, 1, 1e9, 0, ended, &a);
    paro_engine_run(e, PARO_TIME_MAX);
    ck_assert_int_eq(a.at[0], 4000000000000);
}
END_TEST

START_TEST(network_analytic_shares_at_the_start)
{
    /* The analytic fidelity: each flow pays its latency, then moves at its slowest link's
     * capacity shared by weight with the flows on it when it begins, and never re-solves.
     * Two flows of 1 GB that begin together on a 1 GB/s link: 0.5 GB/s each, 2 s + 7 ps
     * (issue #14: m rings entering one NIC together each had all of it). A flow of weight 2
     * alone on another link: two instances at 0.5 GB/s, 2 s. */
    g_autoptr(ParoEngine) e = paro_engine_new();
    double cap[] = {1e9, 1e9};
    g_autoptr(ParoNetwork) net = paro_network_new(e, PARO_NET_ANALYTIC, cap, 2);
    Ends a = {0}, b = {0}, c = {0};
    guint l0[] = {0}, l1[] = {1};
    double two[] = {2};
    paro_network_start(net, l0, one, 1, 1e9, 7, ended, &a);
    paro_network_start(net, l0, one, 1, 1e9, 7, ended, &b);
    paro_network_start(net, l1, two, 1, 1e9, 0, ended, &c);
    paro_engine_run(e, PARO_TIME_MAX);
    ck_assert_int_eq(a.at[0], 2000000000007);
    ck_assert_int_eq(b.at[0], 2000000000007);
    ck_assert_int_eq(c.at[0], 2000000000000);
    ck_assert_double_eq(paro_network_carried(net, 0), 2e9);
}
END_TEST

static Suite *network_suite(void)
{
    Suite *s = suite_create("network");
    TCase *tc = tcase_create("maxmin");
    tcase_add_test(tc, network_two_flows_share_one_link);
    tcase_add_test(tc, network_shared_bottleneck);
    tcase_add_test(tc, network_resolves_only_the_component_that_changed);
    tcase_add_test(tc, network_latency_then_bandwidth);
    tcase_add_test(tc, network_weights_count_identical_flows);
    tcase_add_test(tc, network_analytic_shares_at_the_start);
    suite_add_tcase(s, tc);
    return s;
}

PARO_CHECK_MAIN(network_suite)
