/* SPDX-License-Identifier: MIT */
/* All-to-all as flows on the cluster's links.
 *
 * NCCL runs AllToAll as one send and one receive to each peer, posted in one group (no
 * ring, no tree: enqueue.cc's p2p schedule, docs/nccl.md "All-to-all"): every GPU of a
 * communicator of k sends S/k to each of the k-1 others at once. Here each of those sends is
 * a flow from the first instant, on its route (NVSwitch ports or NVLink pairs to the node's
 * peers; the GPU's NIC rail, the leaf and the peer's rail to the others), so the max-min
 * network shares every link among the flows crossing it: a GPU's S(k-c)/k through its rail
 * and S(c-1)/k over the fabric (c members on its node) move at once, and the slower class
 * sets the time, as paro_coll_alltoall_s has it, now with contention where links are shared
 * (GPUs on one rail, oversubscribed leaves). Each flow pays its route's latency and the step
 * overhead once.
 *
 * Scopes: over all n GPUs; each group of m (intra) or each set of one local rank across
 * groups (inter), all at once, as the ring phases of the same scopes run.
 *
 * Size: only the tracked GPUs send (a node's in the aggregated mode, where a flow to node d
 * stands for the same flow from every node, paro_graph_route's fold). A GPU's flows whose
 * routes are the same links, weights and latency (to one rail's GPUs on every other node of
 * the leaf, say) are one flow of the class standing for all of them: its weights times their
 * count, as the network's weights count the flows of a class. So a node's GPUs of 8 start
 * 7 + 8 x (the distinct leaf crossings) flows each, not k - 1. */
#include "coll/simulate.h"

#include <string.h>

#include "core/error.h"

typedef struct {
    gint64 left;
    double sent;
} Run;

static void flow_done(ParoNetwork *net, gpointer data)
{
    Run *r = data;
    r->left--;
}

/* First member of @rank's communicator in @spec's scope, the stride between its members and
 * their count. */
static void members(const ParoCollSpec *spec, gint64 rank, gint64 *first, gint64 *stride, gint64 *k)
{
    switch (spec->scope) {
    case PARO_SCOPE_GLOBAL:
        *first = 0, *stride = 1, *k = spec->n;
        return;
    case PARO_SCOPE_INTRA:
        *first = rank / spec->m * spec->m, *stride = 1, *k = spec->m;
        return;
    case PARO_SCOPE_INTER:
        *first = rank % spec->m, *stride = spec->m, *k = spec->n / spec->m;
        return;
    }
    g_assert_not_reached();
}

/* One class of a GPU's flows: the same route (its links and weights in the arrays from
 * @first) and latency; @count flows. */
typedef struct {
    guint first, n_links;
    ParoTime latency;
    double count;
} Class;

/* The key of a route: its latency, links and weights, byte for byte. */
static GBytes *route_key(ParoTime latency, const GArray *links, const GArray *weights)
{
    GByteArray *key = g_byte_array_new();
    g_byte_array_append(key, (const guint8 *)&latency, sizeof latency);
    g_byte_array_append(key, (const guint8 *)links->data, links->len * (guint)sizeof(guint));
    g_byte_array_append(key, (const guint8 *)weights->data, weights->len * (guint)sizeof(double));
    return g_byte_array_free_to_bytes(key);
}

/* The classes of @src's flows: appended to @classes, their routes to @links and @weights. */
static void classify(const ParoGraph *graph, const ParoCollSpec *spec, gint64 src, GArray *classes,
                     GArray *links, GArray *weights)
{
    gint64 first, stride, k;
    members(spec, src, &first, &stride, &k);
    g_autoptr(GHashTable) seen =
        g_hash_table_new_full(g_bytes_hash, g_bytes_equal, (GDestroyNotify)g_bytes_unref, NULL);
    g_autoptr(GArray) l = g_array_new(FALSE, FALSE, sizeof(guint));
    g_autoptr(GArray) w = g_array_new(FALSE, FALSE, sizeof(double));
    guint base = classes->len;
    for (gint64 i = 0; i < k; i++) {
        gint64 dst = first + i * stride;
        if (dst == src)
            continue;
        g_array_set_size(l, 0);
        g_array_set_size(w, 0);
        ParoTime latency = paro_graph_route(graph, src, dst, l, w);
        GBytes *key = route_key(latency, l, w);
        gpointer at;
        if (g_hash_table_lookup_extended(seen, key, NULL, &at)) {
            g_array_index(classes, Class, base + GPOINTER_TO_UINT(at)).count += 1;
            g_bytes_unref(key);
            continue;
        }
        Class c = {links->len, l->len, latency, 1};
        g_array_append_vals(links, l->data, l->len);
        g_array_append_vals(weights, w->data, w->len);
        g_hash_table_insert(seen, key, GUINT_TO_POINTER(classes->len - base));
        g_array_append_val(classes, c);
    }
}

/* The flows @spec starts on @graph: per tracked GPU, its classes. */
static GArray *all_classes(const ParoGraph *graph, const ParoCollSpec *spec, GArray *links,
                           GArray *weights)
{
    GArray *classes = g_array_new(FALSE, FALSE, sizeof(Class));
    gint64 tracked = MIN(spec->n, paro_graph_instantiated_gpus(graph));
    for (gint64 src = 0; src < tracked; src++)
        classify(graph, spec, src, classes, links, weights);
    return classes;
}

double paro_coll_alltoall_flows(const ParoGraph *graph, const ParoCollSpec *spec)
{
    g_autoptr(GArray) links = g_array_new(FALSE, FALSE, sizeof(guint));
    g_autoptr(GArray) weights = g_array_new(FALSE, FALSE, sizeof(double));
    g_autoptr(GArray) classes = all_classes(graph, spec, links, weights);
    return (double)classes->len;
}

gboolean paro_coll_simulate_alltoall(const ParoGraph *graph, ParoNetFidelity fidelity,
                                     const ParoCollSpec *spec, ParoCollResult *out, GError **error)
{
    g_autoptr(ParoEngine) engine = paro_engine_new();
    g_autoptr(ParoNetwork) net = paro_coll_network_new(graph, engine, fidelity, spec);
    g_autoptr(GArray) links = g_array_new(FALSE, FALSE, sizeof(guint));
    g_autoptr(GArray) weights = g_array_new(FALSE, FALSE, sizeof(double));
    g_autoptr(GArray) classes = all_classes(graph, spec, links, weights);
    gint64 first, stride, k;
    members(spec, 0, &first, &stride, &k);
    double part = spec->size_bytes / (double)k; /* every communicator has k members */
    Run run = {0, 0};
    g_autoptr(GArray) scaled = g_array_new(FALSE, FALSE, sizeof(double));
    for (guint i = 0; part > 0 && i < classes->len; i++) {
        const Class *c = &g_array_index(classes, Class, i);
        g_array_set_size(scaled, c->n_links);
        for (guint j = 0; j < c->n_links; j++)
            g_array_index(scaled, double, j) =
                g_array_index(weights, double, c->first + j) * c->count;
        run.left++;
        run.sent += part * c->count;
        paro_network_start(net, &g_array_index(links, guint, c->first),
                           (const double *)scaled->data, c->n_links, part,
                           paro_time_add(c->latency, spec->step_overhead), flow_done, &run);
    }
    paro_engine_run(engine, PARO_TIME_MAX);
    if (paro_engine_overflowed(engine)) {
        paro_engine_set_overflow_error(error);
        return FALSE;
    }
    if (run.left != 0) {
        g_set_error(error, PARO_SIM_ERROR, PARO_SIM_ERROR_DEADLOCK,
                    "alltoall: %" G_GINT64_FORMAT " flows never finished", run.left);
        return FALSE;
    }
    /* The tracked GPUs stand for all: one node's worth in the aggregated mode. */
    gint64 tracked = MIN(spec->n, paro_graph_instantiated_gpus(graph));
    double scale = paro_graph_is_aggregated(graph) ? (double)spec->n / (double)tracked : 1;
    paro_coll_result_fill(out, graph, net, run.sent * scale, run.sent * scale);
    return TRUE;
}
