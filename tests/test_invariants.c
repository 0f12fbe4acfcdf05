/* SPDX-License-Identifier: MIT */
/* Invariants over random valid inputs (seeded, so every failure reproduces): hundreds of
 * random clusters and training set-ups, each checked for properties that hold whatever
 * the numbers are: bytes conserved and no link over capacity in every collective; the
 * aggregated (folded) simulation equal to the explicit one on symmetric clusters; every
 * strategy's step time between its lower bound max(compute, communication) and its
 * serial bound compute + communication; memory non-negative and model states equal to
 * the closed form; reports byte-identical across runs. PAROSIM_SEED changes the seed. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coll/budget.h"
#include "coll/simulate.h"
#include "fixtures.h"
#include "report/report.h"
#include "step/step.h"
#include "yaml/loaders.h"

static guint32 seed(void)
{
    const char *s = g_getenv("PAROSIM_SEED");
    return s ? (guint32)strtoul(s, NULL, 10) : 20261123u;
}

/* log-uniform in [lo, hi] */
static double log_uniform(GRand *r, double lo, double hi)
{
    return exp(g_rand_double_range(r, log(lo), log(hi)));
}

static char *random_topology_text(GRand *r, gint64 *nodes_out)
{
    const gint64 gpn_choices[] = {1, 2, 4, 8};
    gint64 gpn = gpn_choices[g_rand_int_range(r, 0, 4)];
    gint64 per_leaf = 1 << g_rand_int_range(r, 0, 4);          /* 1..8 nodes per leaf */
    gint64 nodes = per_leaf * g_rand_int_range(r, 1, 5);       /* full leaves: symmetric */
    gint64 nics = gpn % 2 == 0 && g_rand_boolean(r) ? gpn : 1; /* one rail or one per GPU */
    const char *fabric = gpn == 1 || g_rand_boolean(r) ? "nvswitch" : "pcie";
    *nodes_out = nodes;
    return g_strdup_printf(
        "kind: topology\nschema: 1\nname: random\nnodes: %" G_GINT64_FORMAT "\n"
        "gpu: {name: G, memory: %d GiB, peak_flops: %.3f TFLOP/s, hbm_bandwidth: %.1f GB/s}\n"
        "node:\n  gpus: %" G_GINT64_FORMAT "\n"
        "  fabric: {kind: %s, bandwidth: %.3f GB/s, latency: %.3f us}\n"
        "  nics: {count: %" G_GINT64_FORMAT ", bandwidth: %.3f Gb/s, latency: %.3f us}\n"
        "network: {nodes_per_leaf: %" G_GINT64_FORMAT
        ", oversubscription: %.2f, latency: %.3f us}\n",
        nodes, 16 << g_rand_int_range(r, 0, 4), log_uniform(r, 50, 2000), log_uniform(r, 500, 8000),
        gpn, fabric, log_uniform(r, 10, 900), log_uniform(r, 0.5, 10), nics,
        log_uniform(r, 10, 800), log_uniform(r, 1, 20), per_leaf, g_rand_double_range(r, 1, 4),
        log_uniform(r, 0.1, 5));
}

START_TEST(collectives_conserve_bytes_and_fold_exactly)
{
    /* 150 random symmetric clusters x one random collective each, both modes. */
    g_autoptr(GRand) r = g_rand_new_with_seed(seed());
    const ParoAlgorithm algos[] = {PARO_ALGO_RING, PARO_ALGO_HIERARCHICAL, PARO_ALGO_HO_RING};
    const ParoCollKind ops[] = {PARO_COLL_ALLREDUCE, PARO_COLL_ALLGATHER, PARO_COLL_REDUCESCATTER};
    for (int c = 0; c < 150; c++) {
        gint64 nodes;
        g_autofree char *text = random_topology_text(r, &nodes);
        g_autoptr(ParoTopology) t = paro_test_topology(text);
        gint64 gpn = t->gpus_per_node;
        ParoCollSpec spec = {ops[g_rand_int_range(r, 0, 3)], algos[g_rand_int_range(r, 0, 3)],
                             paro_topology_n_gpus(t),        gpn,
                             log_uniform(r, 1024, 4e9),      g_rand_int_range(r, 1, 5),
                             g_rand_int_range(r, 1, 9),      1024};
        if (nodes == 1)
            spec.algorithm = PARO_ALGO_RING; /* a group of one node: nothing hierarchical */
        ParoCollResult res[2];
        gint64 ring_steps = 0; /* of every stage and chunk, on the explicit graph */
        for (int aggregated = 0; aggregated < 2; aggregated++) {
            g_autoptr(GError) error = NULL;
            g_autoptr(ParoGraph) g = paro_graph_new(t, nodes, aggregated && nodes > 1, &error);
            ck_assert_msg(g != NULL, "case %d: %s", c, error ? error->message : "");
            if (!aggregated) {
                ParoCollWork w = paro_coll_estimate(g, PARO_NET_MAXMIN, &spec);
                ring_steps = w.steps * w.chunks;
            }
            ck_assert_msg(paro_coll_simulate(g, PARO_NET_MAXMIN, &spec, &res[aggregated], &error),
                          "case %d: %s\n%s", c, error ? error->message : "", text);
            const ParoCollResult *x = &res[aggregated];
            ck_assert_msg(fabs(x->sent_bytes - x->received_bytes) <= 1e-9 * x->sent_bytes,
                          "case %d: sent %g, received %g", c, x->sent_bytes, x->received_bytes);
            ck_assert_msg(x->max_utilisation <= 1 + 1e-9, "case %d: a link at %g of capacity", c,
                          x->max_utilisation);
            ck_assert(x->time >= 0 && x->time < PARO_TIME_MAX && (x->time > 0 || spec.n == 1));
        }
        /* Folding symmetric nodes onto node 0 keeps the bytes, and the time where every hop
         * of a ring is alike, as on one leaf (to the rounding of a picosecond per step), the
         * node standing for its peers hop for hop. Where hops differ
         * (leaves of an oversubscribed spine), the explicit ring hides latency behind its
         * slowest link while the folded hop stands for all of them (coll/simulate.c, the
         * slots): they differ by at most a hop latency per ring step. */
        double te = paro_time_to_s(res[0].time), ta = paro_time_to_s(res[1].time);
        double hop_s = t->fabric.latency_s + t->nics.latency_s + 3 * t->network.latency_s +
                       t->nccl.step_overhead_s;
        gboolean one_leaf = nodes <= t->network.nodes_per_leaf;
        ck_assert_msg(fabs(te - ta) <= 1e-6 * te + 1e-9 + (one_leaf ? 0 : ring_steps * hop_s),
                      "case %d: explicit %.9g s, aggregated %.9g s\n%s", c, te, ta, text);
        ck_assert_msg(fabs(res[0].inter_bytes - res[1].inter_bytes) <=
                          1e-6 * res[0].inter_bytes + 1,
                      "case %d: inter bytes %g vs %g", c, res[0].inter_bytes, res[1].inter_bytes);
    }
}
END_TEST

static ParoScenario *random_scenario(GRand *r, char **topology_path, GError **error)
{
    gint64 nodes;
    g_autofree char *text = random_topology_text(r, &nodes);
    /* the scenario loader reads files: write the topology beside nothing else */
    g_autofree char *dir = g_dir_make_tmp("parosim-inv-XXXXXX", error);
    *topology_path = g_build_filename(dir, "random.yaml", NULL);
    g_assert(g_file_set_contents(*topology_path, text, -1, NULL));
    g_autoptr(ParoTopology) t = paro_test_topology(text);
    gint64 gpn = t->gpus_per_node;
    const char *models[] = {"models/llama-7b.yaml", "models/llama-13b.yaml",
                            "models/gpt-neox-20b.yaml"};
    const char *fractions[] = {"1", "1/4", "1/16", "3/1000"};
    const char *recompute[] = {"none", "selective", "full"};
    const char *algos[] = {"ring", "hierarchical", "ho-ring"};
    g_autofree char *source = paro_test_path(".");
    char *sets[12];
    sets[0] = g_strdup_printf("topology=%s", *topology_path);
    sets[1] = g_strdup_printf("model=%s/%s", source, models[g_rand_int_range(r, 0, 3)]);
    sets[2] =
        g_strdup_printf("training.trainable.fraction=%s", fractions[g_rand_int_range(r, 0, 4)]);
    sets[3] = g_strdup_printf("training.recompute=%s", recompute[g_rand_int_range(r, 0, 3)]);
    sets[4] = g_strdup_printf("training.accumulation=%d", g_rand_int_range(r, 1, 5));
    sets[5] = g_strdup_printf("training.micro_batch=%d", g_rand_int_range(r, 1, 5));
    sets[6] = g_strdup_printf("parallelism.group=%" G_GINT64_FORMAT, gpn);
    sets[7] = g_strdup_printf("collectives.algorithm=%s",
                              nodes > 1 ? algos[g_rand_int_range(r, 0, 3)] : "ring");
    sets[8] = g_strdup_printf("training.overlap=%s", g_rand_boolean(r) ? "true" : "false");
    sets[9] = g_strdup_printf("training.sequence=%d", 256 << g_rand_int_range(r, 0, 4));
    sets[10] = NULL;
    g_autofree char *path = paro_test_path("scenarios/llama-7b_a100x8-100g_n32.yaml");
    ParoScenario *s = paro_scenario_load(path, (const char *const *)sets, error);
    for (int i = 0; sets[i]; i++)
        g_free(sets[i]);
    return s;
}

START_TEST(steps_within_their_bounds)
{
    /* 40 random scenarios x all 29 strategies (1,160 simulated steps). */
    g_autoptr(GRand) r = g_rand_new_with_seed(seed() + 1);
    for (int c = 0; c < 40; c++) {
        g_autofree char *topology_path = NULL;
        g_autoptr(GError) error = NULL;
        g_autoptr(ParoScenario) s = random_scenario(r, &topology_path, &error);
        ck_assert_msg(s != NULL, "case %d: %s", c, error ? error->message : "");
        g_autoptr(ParoScenarioDerived) g_derived = paro_scenario_derive(s);
        g_autoptr(ParoGuideline) g = paro_guideline_evaluate(g_derived);
        g_autoptr(ParoCollCache) cache = paro_coll_cache_new();
        ck_assert_msg(cache != NULL, "case %d: %s", c, error ? error->message : "");
        for (guint i = 0; i < paro_strategy_n_all(); i++) {
            const ParoStrategy *st = paro_strategy_get(i);
            ParoStepResult x;
            ck_assert_msg(paro_step_simulate(g->derived, st, cache, &(ParoStepOptions){FALSE, TRUE},
                                             &x, &error),
                          "case %d %s: %s", c, st->name, error ? error->message : "");
            double step = paro_time_to_s(x.step), slack = 1e-9 * step + 1e-9;
            ck_assert_msg(step + slack >= fmax(x.compute_s, x.comm_s),
                          "case %d %s: step %.9g below compute %.9g / comm %.9g", c, st->name, step,
                          x.compute_s, x.comm_s);
            ck_assert_msg(step <= x.compute_s + x.comm_s + slack,
                          "case %d %s: step %.9g above serial %.9g", c, st->name, step,
                          x.compute_s + x.comm_s);
            for (int k = 0; k < PARO_MEM_N_CATEGORIES; k++)
                ck_assert_msg(x.at_peak.bytes[k] >= 0, "case %d %s: category %d negative", c,
                              st->name, k);
            const ParoStrategyResult *cf = paro_test_guideline_of(g, st);
            double states = x.at_peak.bytes[PARO_MEM_PARAMS] + x.at_peak.bytes[PARO_MEM_GRADS] +
                            x.at_peak.bytes[PARO_MEM_OPTIMIZER];
            ck_assert_msg(fabs(states - cf->mem_model_states) <= 1e-9 * states + 1,
                          "case %d %s: model states %.0f, formula %.0f", c, st->name, states,
                          cf->mem_model_states);
            ck_assert_msg(x.peak_bytes >= states && isfinite(x.peak_bytes), "case %d %s", c,
                          st->name);
            paro_step_result_clear(&x);
        }
        g_autofree char *dir = g_path_get_dirname(topology_path);
        g_unlink(topology_path);
        g_rmdir(dir);
    }
}
END_TEST

static char *report_of(const ParoScenario *s)
{
    g_autoptr(ParoScenarioDerived) g_derived = paro_scenario_derive(s);
    g_autoptr(ParoGuideline) g = paro_guideline_evaluate(g_derived);
    g_autoptr(ParoCollCache) cache = paro_coll_cache_new();
    GArray *rows = g_array_new(FALSE, TRUE, sizeof(ParoStepResult));
    for (guint i = 0; i < paro_strategy_n_all(); i++) {
        ParoStepResult x;
        g_assert(paro_step_simulate(g->derived, paro_strategy_get(i), cache,
                                    &(ParoStepOptions){FALSE, TRUE}, &x, NULL));
        g_array_append_val(rows, x);
    }
    g_array_sort(rows, paro_step_result_compare);
    g_autoptr(GString) out = g_string_new(NULL);
    paro_report_run(g->derived, (ParoStepResult *)rows->data, rows->len, PARO_FORMAT_JSON, out);
    for (guint i = 0; i < rows->len; i++)
        paro_step_result_clear(&g_array_index(rows, ParoStepResult, i));
    g_array_unref(rows);
    return g_string_free(g_steal_pointer(&out), FALSE);
}

START_TEST(reports_are_reproducible)
{
    /* 10 random scenarios, each simulated twice from a fresh load: identical bytes. */
    g_autoptr(GRand) r = g_rand_new_with_seed(seed() + 2);
    for (int c = 0; c < 10; c++) {
        g_autofree char *topology_path = NULL;
        g_autoptr(GError) error = NULL;
        g_autoptr(ParoScenario) s = random_scenario(r, &topology_path, &error);
        ck_assert_msg(s != NULL, "case %d: %s", c, error ? error->message : "");
        g_autofree char *first = report_of(s);
        g_autofree char *second = report_of(s);
        ck_assert_msg(strcmp(first, second) == 0, "case %d: two runs differ", c);
        g_autofree char *dir = g_path_get_dirname(topology_path);
        g_unlink(topology_path);
        g_rmdir(dir);
    }
}
END_TEST

static Suite *invariants_suite(void)
{
    Suite *s = suite_create("invariants");
    TCase *tc = tcase_create("invariants");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, collectives_conserve_bytes_and_fold_exactly);
    tcase_add_test(tc, steps_within_their_bounds);
    tcase_add_test(tc, reports_are_reproducible);
    suite_add_tcase(s, tc);
    return s;
}

PARO_CHECK_MAIN(invariants_suite)
