/* SPDX-License-Identifier: MIT */
/* The collective-duration cache of a scenario: one link graph (folded when the cluster
 * is symmetric, explicit otherwise or for trees) and a lookup table keyed by operation,
 * scope and exact size (entries hold their key and value). The table is only looked up, never
 * iterated. */
#include "step/step-private.h"

#include <string.h>

#include "coll/simulate.h"

typedef struct {
    int op, scope;
    double size;
    ParoTime time;
} Entry;

struct _ParoCollCache {
    const ParoScenario *scenario; /* the scenario, or &view */
    /* With tp*pp > 1 the DP collectives of one (TP rank, stage) run over dp ranks, gpn/tp
     * of them per node (Megatron's layout), while the node's tp such rings share its NICs:
     * the cache simulates them on a view of the cluster with dp/(gpn/tp) nodes of gpn/tp
     * GPUs, each GPU keeping its own share of the NICs (NIC bandwidth x (gpn/tp)/gpn) and
     * its own fabric links. The pp stages sit on disjoint nodes and sync at once: with an
     * oversubscribed leaf their uplink sharing is not modelled. */
    ParoScenario view;
    ParoTopology view_topology;
    ParoGraph *folded;         /* NULL when the cluster cannot be folded */
    ParoGraph *explicit_graph; /* made on first need */
    GHashTable *times;         /* Entry (key and value) */
};

static guint entry_hash(gconstpointer p)
{
    const Entry *e = p;
    guint64 bits;
    memcpy(&bits, &e->size, sizeof bits);
    return (guint)(bits ^ (bits >> 29) ^ ((guint64)e->op << 7) ^ ((guint64)e->scope << 11));
}

static gboolean entry_equal(gconstpointer a, gconstpointer b)
{
    const Entry *x = a, *y = b;
    return x->op == y->op && x->scope == y->scope && x->size == y->size;
}

ParoCollCache *paro_coll_cache_new(const ParoScenario *s, GError **error)
{
    ParoCollCache *c = g_new0(ParoCollCache, 1);
    c->scenario = s;
    if (paro_scenario_is_3d(s)) {
        const ParoTopology *t = s->topology;
        gint64 q = paro_scenario_dp_per_node(s);
        c->view_topology = *t; /* shallow: the strings stay the scenario's */
        c->view_topology.nodes = s->dp / q;
        c->view_topology.gpus_per_node = q;
        c->view_topology.nics.bandwidth_Bps =
            t->nics.bandwidth_Bps * (double)q / (double)t->gpus_per_node;
        c->view = *s;
        c->view.topology = &c->view_topology;
        c->view.tp = c->view.pp = 1;
        c->scenario = &c->view;
        s = &c->view;
    }
    c->times = g_hash_table_new_full(entry_hash, entry_equal, g_free, NULL);
    if (s->topology->nodes > 1)
        c->folded = paro_graph_new(s->topology, s->topology->nodes, TRUE, NULL);
    return c;
}

void paro_coll_cache_free(ParoCollCache *c)
{
    if (c == NULL)
        return;
    paro_graph_free(c->folded);
    paro_graph_free(c->explicit_graph);
    g_hash_table_unref(c->times);
    g_free(c);
}

ParoCommModel paro_coll_cache_comm_model(const ParoCollCache *c)
{
    return paro_guideline_comm_model(c->scenario);
}

char *paro_coll_cache_context(const ParoScenario *s)
{
    if (paro_scenario_is_3d(s)) {
        /* Another layout is another DP view. */
        ParoScenario flat = *s;
        flat.tp = flat.pp = 1;
        g_autofree char *base = paro_coll_cache_context(&flat);
        return g_strdup_printf("%s tp%" G_GINT64_FORMAT " pp%" G_GINT64_FORMAT
                               " dp%" G_GINT64_FORMAT,
                               base, s->tp, s->pp, s->dp);
    }
    const ParoTopology *t = s->topology;
    return g_strdup_printf(
        "%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT " m%" G_GINT64_FORMAT
        " f%d %a %a n%" G_GINT64_FORMAT " %a %a l%" G_GINT64_FORMAT " %a %a c%" G_GINT64_FORMAT
        " k%" G_GINT64_FORMAT " %a a%d p%" G_GINT64_FORMAT " w%d",
        t->nodes, t->gpus_per_node, s->group, t->fabric.kind, t->fabric.bandwidth_Bps,
        t->fabric.latency_s, t->nics.count, t->nics.bandwidth_Bps, t->nics.latency_s,
        t->network.nodes_per_leaf, t->network.oversubscription, t->network.latency_s,
        t->nccl.channels, t->nccl.chunks, t->nccl.step_overhead_s, s->algorithm, s->chunks,
        s->network);
}

gboolean paro_coll_cache_time(ParoCollCache *c, ParoCollKind op, ParoScope scope, double size_bytes,
                              ParoTime *out, GError **error)
{
    Entry probe = {op, scope, size_bytes, 0};
    const Entry *hit = g_hash_table_lookup(c->times, &probe);
    if (hit) {
        *out = hit->time;
        return TRUE;
    }
    const ParoScenario *s = c->scenario;
    const ParoTopology *t = s->topology;
    ParoCollSpec spec = {
        .op = op,
        .algorithm = (ParoAlgorithm)s->algorithm,
        .n = paro_scenario_n_gpus(s),
        .m = s->group,
        .size_bytes = size_bytes,
        .channels = t->nccl.channels ? t->nccl.channels : MAX(1, t->nics.count),
        .chunks = s->chunks,
        .max_steps = 1024,
        .step_overhead = paro_time_from_s(t->nccl.step_overhead_s),
        .scope = scope,
    };
    gboolean tree = spec.algorithm == PARO_ALGO_TREE && scope == PARO_SCOPE_GLOBAL;
    if (tree && op != PARO_COLL_ALLREDUCE)
        spec.algorithm = PARO_ALGO_RING; /* NCCL runs the others on rings */
    const ParoGraph *g = c->folded;
    if (g == NULL || (tree && op == PARO_COLL_ALLREDUCE)) {
        if (c->explicit_graph == NULL) {
            c->explicit_graph = paro_graph_new(t, t->nodes, FALSE, error);
            if (c->explicit_graph == NULL)
                return FALSE;
        }
        g = c->explicit_graph;
    }
    ParoCollResult r;
    if (!paro_coll_simulate(g, (ParoNetFidelity)s->network, &spec, &r, error))
        return FALSE;
    Entry *entry = g_new(Entry, 1);
    *entry = (Entry){op, scope, size_bytes, r.time};
    g_hash_table_add(c->times, entry);
    *out = r.time;
    return TRUE;
}
