/* SPDX-License-Identifier: MIT */
/* The collective-duration cache of a scenario: one link graph (folded when the cluster
 * is symmetric, explicit otherwise or for trees) and a lookup table keyed by operation,
 * scope and exact size. The table is only looked up, never iterated. */
#include "step/step.h"

#include "coll/simulate.h"

struct _ParoCollCache {
    const ParoScenario *scenario;
    ParoGraph *folded;   /* NULL when the cluster cannot be folded */
    ParoGraph *explicit_graph; /* made on first need */
    GHashTable *times;   /* "op/scope/size" -> ParoTime* */
};

ParoCollCache *paro_coll_cache_new(const ParoScenario *s, GError **error)
{
    ParoCollCache *c = g_new0(ParoCollCache, 1);
    c->scenario = s;
    c->times = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
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

gboolean paro_coll_cache_time(ParoCollCache *c, ParoCollKind op, ParoScope scope,
                              double size_bytes, ParoTime *out, GError **error)
{
    g_autofree char *key = g_strdup_printf("%d/%d/%a", op, scope, size_bytes);
    ParoTime *hit = g_hash_table_lookup(c->times, key);
    if (hit) {
        *out = *hit;
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
    ParoTime *value = g_new(ParoTime, 1);
    *value = r.time;
    g_hash_table_insert(c->times, g_steal_pointer(&key), value);
    *out = r.time;
    return TRUE;
}
