/* SPDX-License-Identifier: MIT */
/* Simulated collective durations, each computed once and shared. A duration is keyed by
 * the value of everything it depends on (ParoCollKey: the cluster's link figures, the
 * collective's spec and the network fidelity), never by a pointer to the scenario that
 * asked, so one cache serves every strategy, point of a sweep and configuration of a plan,
 * whichever scenarios come and go. The cache owns the link graphs it builds (one folded and
 * one explicit graph per distinct cluster). Thread-safe: lookups and inserts hold a lock;
 * simulations run outside it, so two threads may compute the same entry once each. */
#pragma once

#include "coll/nccl.h"
#include "coll/simulate.h"

G_BEGIN_DECLS

/* A cluster as far as a collective's time depends on it: the topology's nodes, GPUs per
 * node, fabric, NICs, network and NCCL figures (names and GPU figures left out). Build it
 * with paro_coll_key_init so that padding bytes are zero: keys are compared as bytes. */
typedef struct {
    ParoTopology cluster; /* name, source_path and gpu zeroed but its generation */
    ParoCollSpec spec;
    ParoCollModel model;
    ParoNetFidelity fidelity; /* of the flow model */
} ParoCollKey;

/**
 * paro_coll_key_init:
 * Fills @key (all of it, padding included) from @cluster's link figures, @spec and @fidelity.
 */
void paro_coll_key_init(ParoCollKey *key, const ParoTopology *cluster, const ParoCollSpec *spec,
                        ParoCollModel model, ParoNetFidelity fidelity);

typedef struct _ParoCollCache ParoCollCache;

ParoCollCache *paro_coll_cache_new(void);
ParoCollCache *paro_coll_cache_ref(ParoCollCache *cache);
void paro_coll_cache_unref(ParoCollCache *cache);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ParoCollCache, paro_coll_cache_unref)

/**
 * paro_coll_cache_time:
 * The duration of @spec on @cluster: from the cache, or computed and stored: with @model
 * NCCL, NCCL's cost model (coll/nccl.c); with FLOW, simulated with @fidelity on the
 * cluster's folded graph (its explicit graph when the collective has a root or the nodes do
 * not fill leaf switches). Errors: those of paro_nccl_collective_s, paro_graph_new and
 * paro_coll_simulate.
 */
gboolean paro_coll_cache_time(ParoCollCache *cache, const ParoTopology *cluster,
                              const ParoCollSpec *spec, ParoCollModel model,
                              ParoNetFidelity fidelity, ParoTime *out, GError **error);

/** paro_coll_cache_n_entries: durations held (for tests and benchmarks). */
guint paro_coll_cache_n_entries(ParoCollCache *cache);

G_END_DECLS
