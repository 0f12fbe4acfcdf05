/* SPDX-License-Identifier: MIT */
/* The collective-duration cache: a table from ParoCollKey (compared as bytes, which is why
 * keys are built field by field into zeroed memory) to the simulated time, and per distinct
 * cluster its link graphs, built on first need. The graphs keep a pointer to their
 * topology, so each cluster's topology is a copy the cache owns. Tables are only looked
 * up, never iterated, so their order cannot reach an output. */
#include "coll/cache.h"

#include <string.h>

typedef struct {
    ParoCollKey key;
    ParoTime time;
} Entry;

typedef struct {
    ParoTopology topology; /* the key's cluster, owned (no strings) */
    ParoGraph *folded;     /* NULL until needed, or when it could not be built */
    gboolean folded_tried;
    ParoGraph *explicit_graph;
} Cluster;

struct _ParoCollCache {
    gint refs;
    GMutex lock;
    GHashTable *times;    /* Entry (key and value) */
    GHashTable *clusters; /* ParoTopology (a Cluster's first field) -> Cluster */
};

/* Keys are structs of 8-byte fields: mixed a word at a time (a multiply-xorshift in the
 * manner of splitmix64), the tail bytes one by one. */
static guint hash_bytes(const void *p, gsize n)
{
    guint64 h = 0x9E3779B97F4A7C15ull;
    gsize words = n / 8;
    for (gsize i = 0; i < words; i++) {
        guint64 w;
        memcpy(&w, (const guchar *)p + 8 * i, 8);
        h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
        h ^= h >> 31;
    }
    for (gsize i = 8 * words; i < n; i++)
        h = (h ^ ((const guchar *)p)[i]) * 0x94D049BB133111EBull;
    return (guint)(h ^ (h >> 32));
}

static guint entry_hash(gconstpointer p)
{
    return hash_bytes(p, sizeof(ParoCollKey));
}

static gboolean entry_equal(gconstpointer a, gconstpointer b)
{
    return memcmp(a, b, sizeof(ParoCollKey)) == 0;
}

static guint cluster_hash(gconstpointer p)
{
    return hash_bytes(p, sizeof(ParoTopology));
}

static gboolean cluster_equal(gconstpointer a, gconstpointer b)
{
    return memcmp(a, b, sizeof(ParoTopology)) == 0;
}

static void cluster_free(gpointer data)
{
    Cluster *c = data;
    paro_graph_free(c->folded);
    paro_graph_free(c->explicit_graph);
    g_free(c);
}

/* Field by field into zeroed memory: a struct assignment may copy the source's padding. */
static void cluster_init(ParoTopology *out, const ParoTopology *t)
{
    memset(out, 0, sizeof *out);
    out->nodes = t->nodes;
    out->gpus_per_node = t->gpus_per_node;
    out->fabric.kind = t->fabric.kind;
    out->fabric.bandwidth_Bps = t->fabric.bandwidth_Bps;
    out->fabric.latency_s = t->fabric.latency_s;
    out->nics.count = t->nics.count;
    out->nics.bandwidth_Bps = t->nics.bandwidth_Bps;
    out->nics.latency_s = t->nics.latency_s;
    out->network.nodes_per_leaf = t->network.nodes_per_leaf;
    out->network.oversubscription = t->network.oversubscription;
    out->network.latency_s = t->network.latency_s;
    out->nccl.channels = t->nccl.channels;
    out->nccl.chunks = t->nccl.chunks;
    out->nccl.step_overhead_s = t->nccl.step_overhead_s;
    out->nccl.net_latency_s = t->nccl.net_latency_s;
    out->nccl.nvls = t->nccl.nvls;
    for (int i = 0; i < 2; i++) {
        out->nccl.latency_scale[i] = t->nccl.latency_scale[i];
        out->nccl.bandwidth_scale[i] = t->nccl.bandwidth_scale[i];
    }
    out->cpu_amd = t->cpu_amd;
    out->gpu.arch = paro_nccl_gpu_arch(t); /* resolved: the key has no GPU name */
}

void paro_coll_key_init(ParoCollKey *key, const ParoTopology *cluster, const ParoCollSpec *spec,
                        ParoCollModel model, ParoNetFidelity fidelity)
{
    memset(key, 0, sizeof *key);
    cluster_init(&key->cluster, cluster);
    key->spec.op = spec->op;
    key->spec.algorithm = spec->algorithm;
    key->spec.n = spec->n;
    key->spec.m = spec->m;
    key->spec.size_bytes = spec->size_bytes;
    key->spec.channels = spec->channels;
    key->spec.chunks = spec->chunks;
    key->spec.max_steps = spec->max_steps;
    key->spec.step_overhead = spec->step_overhead;
    key->spec.scope = spec->scope;
    key->model = model;
    key->fidelity = model == PARO_COLL_MODEL_FLOW ? fidelity : PARO_NET_MAXMIN;
}

ParoCollCache *paro_coll_cache_new(void)
{
    ParoCollCache *c = g_new0(ParoCollCache, 1);
    c->refs = 1;
    g_mutex_init(&c->lock);
    c->times = g_hash_table_new_full(entry_hash, entry_equal, g_free, NULL);
    c->clusters = g_hash_table_new_full(cluster_hash, cluster_equal, NULL, cluster_free);
    return c;
}

ParoCollCache *paro_coll_cache_ref(ParoCollCache *c)
{
    g_atomic_int_inc(&c->refs);
    return c;
}

void paro_coll_cache_unref(ParoCollCache *c)
{
    if (c == NULL || !g_atomic_int_dec_and_test(&c->refs))
        return;
    g_hash_table_unref(c->times);
    g_hash_table_unref(c->clusters);
    g_mutex_clear(&c->lock);
    g_free(c);
}

guint paro_coll_cache_n_entries(ParoCollCache *c)
{
    g_mutex_lock(&c->lock);
    guint n = g_hash_table_size(c->times);
    g_mutex_unlock(&c->lock);
    return n;
}

/* The graph a collective runs on, built on first need; called with the lock held. Graphs
 * are read-only once built, so simulations may share them outside the lock. */
static const ParoGraph *graph_for(ParoCollCache *c, const ParoCollKey *key, GError **error)
{
    Cluster *cl = g_hash_table_lookup(c->clusters, &key->cluster);
    if (cl == NULL) {
        cl = g_new0(Cluster, 1);
        cl->topology = key->cluster;
        g_hash_table_insert(c->clusters, &cl->topology, cl);
    }
    const ParoTopology *t = &cl->topology;
    gint64 nodes = (key->spec.n + t->gpus_per_node - 1) / t->gpus_per_node;
    gboolean rooted = paro_coll_spec_has_root(&key->spec, t->gpus_per_node);
    if (!rooted && t->nodes > 1 && !cl->folded_tried) {
        cl->folded_tried = TRUE;
        cl->folded = paro_graph_new(t, t->nodes, TRUE, NULL); /* NULL: too many links */
    }
    if (!rooted && cl->folded != NULL && nodes == t->nodes)
        return cl->folded;
    if (cl->explicit_graph == NULL)
        cl->explicit_graph = paro_graph_new(t, t->nodes, FALSE, error);
    return cl->explicit_graph;
}

/* NCCL's model of the key's collective, on the key's own cluster. */
static gboolean nccl_time(const ParoCollKey *key, ParoTime *out, GError **error)
{
    double s;
    if (!paro_nccl_collective_s(&key->cluster, &key->spec, 0, &s, NULL, NULL, error))
        return FALSE;
    *out = paro_time_from_s(s);
    return TRUE;
}

gboolean paro_coll_cache_time(ParoCollCache *c, const ParoTopology *cluster,
                              const ParoCollSpec *spec, ParoCollModel model,
                              ParoNetFidelity fidelity, ParoTime *out, GError **error)
{
    Entry *entry = g_new(Entry, 1);
    paro_coll_key_init(&entry->key, cluster, spec, model, fidelity);
    g_mutex_lock(&c->lock);
    const Entry *hit = g_hash_table_lookup(c->times, &entry->key);
    if (hit != NULL) {
        *out = hit->time;
        g_mutex_unlock(&c->lock);
        g_free(entry);
        return TRUE;
    }
    ParoTime time = 0;
    if (model == PARO_COLL_MODEL_NCCL) {
        g_mutex_unlock(&c->lock);
        if (!nccl_time(&entry->key, &time, error)) {
            g_free(entry);
            return FALSE;
        }
    } else {
        const ParoGraph *g = graph_for(c, &entry->key, error);
        g_mutex_unlock(&c->lock);
        ParoCollResult r;
        if (g == NULL || !paro_coll_simulate(g, fidelity, &entry->key.spec, &r, error)) {
            g_free(entry);
            return FALSE;
        }
        time = r.time;
    }
    entry->time = time;
    g_mutex_lock(&c->lock);
    if (!g_hash_table_contains(c->times, &entry->key))
        g_hash_table_add(c->times, entry);
    else
        g_free(entry); /* another thread simulated it meanwhile: the same value */
    g_mutex_unlock(&c->lock);
    *out = time;
    return TRUE;
}
