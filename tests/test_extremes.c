/* SPDX-License-Identifier: MIT */
/* The edges of what parosim is asked about: 10-trillion-parameter models, 1,048,576 GPUs,
 * 1-byte and 1-TiB messages, links from 1 Mb/s to 10 TB/s. Every output must stay finite
 * (no NaN, no infinity, no wrapped integer), and what lies beyond the model's range
 * (simulated time past integer picoseconds, explicit graphs past their cap) must be a clear
 * error rather than a hang or a silent wrong number. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "coll/simulate.h"
#include "core/error.h"
#include "fixtures.h"
#include "report/report.h"
#include "step/step.h"
#include "yaml/loaders.h"

static const char *const ten_trillion[] = {
    /* 12 L h^2 + 2 V h = 12 x 350 x 49152^2 (gated MLP of 131072) ~ 1.0e13 parameters */
    "model=models/llama-65b.yaml",   "model.architecture.hidden=49152",
    "model.architecture.layers=350", "model.architecture.heads=384",
    "model.architecture.ffn=131072", "topology.nodes=131072",
    "training.recompute=full",       NULL};

static ParoScenario *load(const char *const *sets, GError **error)
{
    g_autofree char *path = paro_test_path("scenarios/llama-7b_a100x8-100g_n32.yaml");
    /* --set model=FILE is relative to the current directory: run from the source root */
    g_autofree char *root = paro_test_path(".");
    g_autofree char *cwd = g_get_current_dir();
    g_assert(g_chdir(root) == 0);
    ParoScenario *s = paro_scenario_load(path, sets, error);
    g_assert(g_chdir(cwd) == 0);
    return s;
}

static void assert_finite_text(const char *what, const GString *text)
{
    g_autofree char *lower = g_ascii_strdown(text->str, (gssize)text->len);
    ck_assert_msg(strstr(lower, "nan") == NULL && strstr(lower, "inf") == NULL,
                  "%s has a NaN or an infinity:\n%.2000s", what, text->str);
}

START_TEST(ten_trillion_parameters_on_a_million_gpus)
{
    /* Expectation: the guideline and the simulated step of every strategy are finite and
     * positive; the model has ~1e13 parameters; model states per GPU are positive; the
     * reports contain no NaN or infinity. */
    g_autoptr(GError) error = NULL;
    g_autoptr(ParoScenario) s = load(ten_trillion, &error);
    ck_assert_msg(s != NULL, "%s", error ? error->message : "");
    ck_assert_int_eq(paro_topology_n_gpus(s->topology), 1048576);
    g_autoptr(ParoScenarioDerived) g_derived = paro_scenario_derive(s);
    g_autoptr(ParoGuideline) g = paro_guideline_evaluate(g_derived);
    ck_assert(g->derived->sizes.params > 9e12 && g->derived->sizes.params < 1.2e13);
    g_autoptr(ParoCollCache) cache = paro_coll_cache_new();
    ck_assert_msg(cache != NULL, "%s", error ? error->message : "");
    const char *names[] = {"IIG", "zero-3", "NII", "zero++"};
    ParoStepResult rows[G_N_ELEMENTS(names)];
    for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
        ck_assert_msg(paro_step_simulate(g->derived, paro_strategy_lookup(names[i]), cache,
                                         &(ParoStepOptions){FALSE, TRUE}, &rows[i], &error),
                      "%s: %s", names[i], error ? error->message : "");
        double step = paro_time_to_s(rows[i].step);
        ck_assert_msg(isfinite(step) && step > 0 && rows[i].step < PARO_TIME_MAX, "%s: %g",
                      names[i], step);
        ck_assert(isfinite(rows[i].peak_bytes) && rows[i].peak_bytes > 0);
        ck_assert(isfinite(rows[i].samples_per_s) && rows[i].samples_per_s > 0);
    }
    for (int f = PARO_FORMAT_TABLE; f <= PARO_FORMAT_CSV; f++) {
        g_autoptr(GString) out = g_string_new(NULL);
        paro_report_run(g->derived, rows, G_N_ELEMENTS(names), (ParoFormat)f, out);
        assert_finite_text("the run report", out);
    }
    for (guint i = 0; i < G_N_ELEMENTS(names); i++)
        paro_step_result_clear(&rows[i]);
}
END_TEST

static ParoTopology *cluster(gint64 nodes, const char *nic_bandwidth, const char *fabric_bandwidth)
{
    g_autofree char *text = g_strdup_printf(
        "kind: topology\nschema: 1\nname: extreme\nnodes: %" G_GINT64_FORMAT "\n"
        "gpu: {name: G, memory: 80 GiB, peak_flops: 312 TFLOP/s, hbm_bandwidth: 2 TB/s}\n"
        "node:\n  gpus: 8\n  fabric: {kind: nvswitch, bandwidth: %s, latency: 3 us}\n"
        "  nics: {count: 8, bandwidth: %s, latency: 8 us}\n"
        "network: {nodes_per_leaf: 32, oversubscription: 1, latency: 1 us}\n",
        nodes, fabric_bandwidth, nic_bandwidth);
    return paro_test_topology(text);
}

static gboolean simulate(const ParoTopology *t, ParoAlgorithm algo, ParoCollKind op, double size,
                         ParoCollResult *r, GError **error)
{
    g_autoptr(ParoGraph) g = paro_graph_new(t, t->nodes, TRUE, error);
    if (g == NULL)
        return FALSE;
    ParoCollSpec spec = {op, algo, paro_topology_n_gpus(t), 8, size, 8, 8, 1024};
    return paro_coll_simulate(g, PARO_NET_MAXMIN, &spec, r, error);
}

START_TEST(messages_from_one_byte_to_one_tebibyte)
{
    /* 1,048,576 GPUs (131,072 nodes), aggregated: for ring, hierarchical and ho-ring
     * AllReduce and AllGather, 1 B and 1 TiB give finite, positive times, finite byte
     * counters, and 1 TiB takes longer than 1 B (no wrap-around). */
    g_autoptr(ParoTopology) t = cluster(131072, "200 Gb/s", "300 GB/s");
    const ParoAlgorithm algos[] = {PARO_ALGO_RING, PARO_ALGO_HIERARCHICAL, PARO_ALGO_HO_RING};
    const ParoCollKind ops[] = {PARO_COLL_ALLREDUCE, PARO_COLL_ALLGATHER};
    for (guint a = 0; a < G_N_ELEMENTS(algos); a++)
        for (guint o = 0; o < G_N_ELEMENTS(ops); o++) {
            ParoCollResult small, big;
            g_autoptr(GError) error = NULL;
            ck_assert_msg(simulate(t, algos[a], ops[o], 1, &small, &error), "%s",
                          error ? error->message : "");
            ck_assert_msg(simulate(t, algos[a], ops[o], 1099511627776.0, &big, &error), "%s",
                          error ? error->message : "");
            ck_assert(small.time > 0 && big.time > small.time && big.time < PARO_TIME_MAX);
            ck_assert(isfinite(big.intra_bytes) && isfinite(big.inter_bytes) &&
                      big.inter_bytes > 0);
            /* a ring moves at least 2(n-1)/n x S per GPU for AllReduce: ~2 TiB x 2^20 GPUs */
            if (ops[o] == PARO_COLL_ALLREDUCE && algos[a] == PARO_ALGO_RING)
                ck_assert(big.sent_bytes > 1.9 * 1099511627776.0 * 1048576.0);
        }
}
END_TEST

START_TEST(links_from_one_megabit_to_ten_terabytes)
{
    /* 1 Mb/s fabric ports and NICs (one NIC per GPU), 64 GPUs, 1 GiB AllReduce by ring:
     * each GPU sends the bus volume 2(n-1)/n x S; it can send at most through its fabric
     * port and its NIC together (250 kB/s) and at least through its fabric port alone
     * (125 kB/s), so the time lies between those two bounds (plus latencies, negligible
     * here). 10 TB/s links: finite and faster. */
    g_autoptr(ParoTopology) slow = cluster(8, "1 Mb/s", "1 Mb/s");
    g_autoptr(ParoTopology) fast = cluster(8, "10 TB/s", "10 TB/s");
    ParoCollResult rs, rf;
    g_autoptr(GError) error = NULL;
    ck_assert_msg(simulate(slow, PARO_ALGO_RING, PARO_COLL_ALLREDUCE, 1073741824.0, &rs, &error),
                  "%s", error ? error->message : "");
    ck_assert_msg(simulate(fast, PARO_ALGO_RING, PARO_COLL_ALLREDUCE, 1073741824.0, &rf, &error),
                  "%s", error ? error->message : "");
    double bus = 2.0 * 63 / 64 * 1073741824.0;
    double lower = bus / 250000.0, upper = bus / 125000.0 * 1.01, got = paro_time_to_s(rs.time);
    ck_assert_msg(got >= lower && got <= upper, "%g not in [%g, %g]", got, lower, upper);
    ck_assert(rf.time > 0 && rf.time < rs.time);
}
END_TEST

START_TEST(beyond_the_time_range_is_an_error)
{
    /* 8 b/s (1 B/s, the least bandwidth a file may give: paro_limit_bandwidth): a 1 GiB
     * AllGather would take ~1e9 s, past the ~107 days of integer picoseconds: a
     * PARO_SIM_ERROR_INFEASIBLE naming the range, not a deadlock. */
    g_autoptr(ParoTopology) t = cluster(4, "8 b/s", "300 GB/s");
    ck_assert(t != NULL);
    ParoCollResult r;
    g_autoptr(GError) error = NULL;
    ck_assert(!simulate(t, PARO_ALGO_RING, PARO_COLL_ALLGATHER, 1073741824.0, &r, &error));
    ck_assert_msg(g_error_matches(error, PARO_SIM_ERROR, PARO_SIM_ERROR_INFEASIBLE), "%s",
                  error->message);
    ck_assert(strstr(error->message, "integer picoseconds") != NULL);
    /* and a scenario on it is refused at load, located at the bandwidth, by every command
     * alike (issue #16 W3: `strategies` printed inf where `run` refused) */
    const char *sets[] = {"topology.node.nics.bandwidth=8 b/s", NULL};
    g_clear_error(&error);
    g_autoptr(ParoScenario) s = load(sets, &error);
    ck_assert(s == NULL);
    ck_assert_msg(g_error_matches(error, PARO_CONFIG_ERROR, PARO_CONFIG_ERROR_RANGE), "%s",
                  error->message);
    ck_assert(strstr(error->message, "picosecond clock") != NULL);
    const ParoConfigErrorPrivate *loc = paro_config_error_get_location(error);
    ck_assert_str_eq(loc->file, "--set[1]");
    ck_assert_int_eq(loc->column, 30);
}
END_TEST

START_TEST(explicit_graphs_have_a_cap)
{
    /* 1,048,576 GPUs explicitly: refused, naming the cap, instead of hours and gigabytes */
    g_autoptr(ParoTopology) t = cluster(131072, "200 Gb/s", "300 GB/s");
    g_autoptr(GError) error = NULL;
    g_autoptr(ParoGraph) g = paro_graph_new(t, t->nodes, FALSE, &error);
    ck_assert(g == NULL);
    ck_assert_msg(g_error_matches(error, PARO_SIM_ERROR, PARO_SIM_ERROR_INFEASIBLE), "%s",
                  error->message);
    ck_assert(strstr(error->message, "131072") != NULL);
}
END_TEST

static Suite *extremes_suite(void)
{
    Suite *s = suite_create("extremes");
    TCase *tc = tcase_create("extremes");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, ten_trillion_parameters_on_a_million_gpus);
    tcase_add_test(tc, messages_from_one_byte_to_one_tebibyte);
    tcase_add_test(tc, links_from_one_megabit_to_ten_terabytes);
    tcase_add_test(tc, beyond_the_time_range_is_an_error);
    tcase_add_test(tc, explicit_graphs_have_a_cap);
    suite_add_tcase(s, tc);
    return s;
}

PARO_CHECK_MAIN(extremes_suite)
