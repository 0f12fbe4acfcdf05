/* SPDX-License-Identifier: MIT */
/* Benchmark (prints figures; asserts nothing about speed): simulating a 1 GiB AllReduce
 * with ring and ho-ring over 64 to 131,072 GPUs in the aggregated mode, and 512 GPUs
 * explicitly, on the 8 x A100 / 200 Gb/s topology. Reports wall time, events, max-min
 * solves and simulated seconds per wall second. */
#include <glib.h>
#include <gsl/gsl_errno.h>
#include <stdio.h>

#include "coll/simulate.h"
#include "yaml/loaders.h"

static void one(const ParoTopology *t, gint64 gpus, ParoAlgorithm algo, gboolean aggregated)
{
    gint64 nodes = gpus / t->gpus_per_node;
    g_autoptr(GError) error = NULL;
    gint64 t0 = g_get_monotonic_time();
    g_autoptr(ParoGraph) g = paro_graph_new(t, nodes, aggregated, &error);
    ParoCollSpec spec = {PARO_COLL_ALLREDUCE,
                         algo,
                         gpus,
                         t->gpus_per_node,
                         1073741824.0,
                         MAX(1, t->nics.count),
                         8,
                         1024,
                         0};
    ParoCollResult r;
    if (g == NULL || !paro_coll_simulate(g, PARO_NET_MAXMIN, &spec, &r, &error)) {
        printf("%-12s %8" G_GINT64_FORMAT " %-10s error: %s\n", paro_algorithm_names[algo], gpus,
               aggregated ? "aggregated" : "explicit", error->message);
        return;
    }
    double wall = (double)(g_get_monotonic_time() - t0) / 1e6;
    double sim = paro_time_to_s(r.time);
    printf("%-12s %8" G_GINT64_FORMAT
           " %-10s %10.3f ms wall %10.3f ms simulated %10.1f sim-s/wall-s"
           " %9" G_GUINT64_FORMAT " events %8" G_GUINT64_FORMAT " solves\n",
           paro_algorithm_names[algo], gpus, aggregated ? "aggregated" : "explicit", wall * 1e3,
           sim * 1e3, sim / wall, r.events, r.solves);
}

int main(int argc, char **argv)
{
    gsl_set_error_handler_off();
    const char *root = g_getenv("PARO_SOURCE_ROOT");
    g_autofree char *path =
        g_build_filename(root ? root : ".", "topologies/a100x8-200g.yaml", NULL);
    g_autoptr(GError) error = NULL;
    g_autoptr(ParoTopology) t = paro_topology_load(path, &error);
    if (t == NULL) {
        fprintf(stderr, "%s\n", error->message);
        return 1;
    }
    printf("# AllReduce 1 GiB on %s (leaves of %" G_GINT64_FORMAT " nodes)\n", t->name,
           t->network.nodes_per_leaf);
    const gint64 sizes[] = {64, 1024, 16384, 131072};
    const ParoAlgorithm algos[] = {PARO_ALGO_RING, PARO_ALGO_HO_RING};
    for (guint a = 0; a < G_N_ELEMENTS(algos); a++) {
        for (guint i = 0; i < G_N_ELEMENTS(sizes); i++)
            one(t, sizes[i], algos[a], TRUE);
        one(t, 512, algos[a], FALSE);
    }
    return 0;
}
