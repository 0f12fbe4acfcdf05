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

static void log_end(ParoNetwork *net, gpointer data)
{
    (void)net;
    g_string_append(data, "x");
}

static void log_a(ParoNetwork *net, gpointer data)
{
    (void)net;
    g_string_append((GString *)data, "A");
}

static void log_b(ParoNetwork *net, gpointer data)
{
    (void)net;
    g_string_append((GString *)data, "B");
}

START_TEST(network_ends_at_one_instant_complete_in_start_order)
{
    /* System: links L1 and L2 of 1 GB/s. A (1 GB) and C (0.5 GB) share L1; B (1.5 GB) is
     * alone on L2; A starts first, then B, then C.
     * By hand: A and C move at 0.5 GB/s; C ends at 1 s, A then has 0.5 GB left alone at
     * 1 GB/s and ends at 1.5 s, as does B (1.5 GB at 1 GB/s). B's end was set at 0 s, A's
     * at 1 s, yet A started first: their completions run A, then B, in start order
     * whatever order their ends were set in (finish.c keeps an instant's flows in the
     * order they came and hands them out by start). */
    g_autoptr(ParoEngine) e = paro_engine_new();
    double cap[] = {1e9, 1e9};
    g_autoptr(ParoNetwork) net = paro_network_new(e, PARO_NET_MAXMIN, cap, 2);
    g_autoptr(GString) order = g_string_new(NULL);
    guint l1[] = {0}, l2[] = {1};
    paro_network_start(net, l1, one, 1, 1e9, 0, log_a, order);
    paro_network_start(net, l2, one, 1, 1.5e9, 0, log_b, order);
    paro_network_start(net, l1, one, 1, 0.5e9, 0, log_end, order);
    paro_engine_run(e, PARO_TIME_MAX);
    ck_assert_str_eq(order->str, "xAB");
    ck_assert_int_eq(paro_engine_now(e), 1500000000000);
}
END_TEST

/* Two NICs of 1 and 3 GB/s feed an uplink of 4 GB/s (their sum). Flow A (1 GB) crosses
 * NIC 0 and the uplink, B (3 GB) NIC 1 and the uplink, C (1 GB) NIC 0 alone. By hand:
 * A = C = 0.5 GB/s on NIC 0, B = 3 GB/s on NIC 1 (the uplink carries 3.5 of its 4); A
 * and C end at 2 s, B at 1 s. The uplink can never limit them (every flow on it crosses
 * one of the NICs, which together carry no more than it): marked so, the solver leaves
 * it out, A and B share nothing else and are solved apart, the ends are the same and the
 * uplink still counts its 4 GB. */
static void uplink_fed_by_two_nics(gboolean mark, Ends ends[3], guint64 *flow_solves,
                                   double *uplink_bytes)
{
    g_autoptr(ParoEngine) e = paro_engine_new();
    double cap[] = {1e9, 3e9, 4e9};
    g_autoptr(ParoNetwork) net = paro_network_new(e, PARO_NET_MAXMIN, cap, 3);
    if (mark)
        paro_network_set_never_limiting(net, 2);
    guint la[] = {0, 2}, lb[] = {2, 1}, lc[] = {0};
    paro_network_start(net, la, one, 2, 1e9, 0, ended, &ends[0]);
    paro_network_start(net, lb, one, 2, 3e9, 0, ended, &ends[1]);
    paro_network_start(net, lc, one, 1, 1e9, 0, ended, &ends[2]);
    paro_engine_run(e, PARO_TIME_MAX);
    *flow_solves = paro_network_n_flow_solves(net);
    *uplink_bytes = paro_network_carried(net, 2);
}

START_TEST(network_never_limiting_link_splits_components)
{
    Ends with[3], without[3];
    memset(with, 0, sizeof with);
    memset(without, 0, sizeof without);
    guint64 solves_with, solves_without;
    double bytes_with, bytes_without;
    uplink_fed_by_two_nics(FALSE, without, &solves_without, &bytes_without);
    uplink_fed_by_two_nics(TRUE, with, &solves_with, &bytes_with);
    ParoTime expected[] = {2000000000000, 1000000000000, 2000000000000};
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(without[i].at[0], expected[i]);
        ck_assert_int_eq(with[i].at[0], expected[i]);
    }
    /* Rates set: without the mark {A, B, C} at 0 s and, when B ends at 1 s, {A, C} again
     * (they shared the uplink with B): 5; with it {A, C} and {B} at 0 s, and B's end
     * touches no link A or C can be limited by: 3. */
    ck_assert_uint_eq(solves_without, 5);
    ck_assert_uint_eq(solves_with, 3);
    ck_assert_double_eq_tol(bytes_without, 4e9, 1e-3);
    ck_assert_double_eq_tol(bytes_with, 4e9, 1e-3);
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
    tcase_add_test(tc, network_never_limiting_link_splits_components);
    tcase_add_test(tc, network_ends_at_one_instant_complete_in_start_order);
    suite_add_tcase(s, tc);
    return s;
}

PARO_CHECK_MAIN(network_suite)
