/* SPDX-License-Identifier: MIT */
/* Simulation of one collective on the cluster's links: the algorithm is expanded into
 * ring phases (sets of concurrent NCCL-style rings with C channels), arranged as a
 * pipeline of stages over chunks, each ring step a transfer on the flow-level network. */
#pragma once

#include <glib.h>

#include "coll/collective.h"
#include "net/network.h"
#include "topo/graph.h"

G_BEGIN_DECLS

typedef struct {
    ParoCollKind op;
    ParoAlgorithm algorithm; /* for global collectives */
    gint64 n;                /* GPUs taking part: ranks 0..n-1, node = rank / gpus_per_node */
    gint64 m;                /* group size for hierarchical and ho-ring */
    double size_bytes;       /* S, the whole array (nccl-tests convention) */
    gint64 channels;         /* rings per ring phase */
    gint64 chunks;           /* ho-ring pipeline chunks */
    gint64 max_steps;        /* ring steps are merged into at most this many (see simulate.c) */
    ParoTime step_overhead;  /* added to the latency of every ring step or tree hop */
    ParoScope scope;         /* GLOBAL (0, the default): over all n; INTRA / INTER: every group's
                              * (or every local rank's) ring at once, as in data-parallel training */
    gboolean events_only;    /* every send as events, even where a ring phase shares no link and
                              * its recurrence gives the same times (coll/recurrence.c), both
                              * trees, though tree 1 mirrors tree 0 (coll/tree.c), and every
                              * link in the max-min solve (decision 55); for tests and
                              * `collective --events` */
} ParoCollSpec;

typedef struct {
    ParoTime time;         /* from the first transfer to the last */
    double intra_bytes;    /* carried by intra-node links, whole cluster */
    double inter_bytes;    /* carried by NIC and switch links, whole cluster */
    double sent_bytes;     /* payload handed to the network, whole cluster */
    double received_bytes; /* payload delivered, whole cluster */
    double max_utilisation;
    guint64 events;
    guint64 solves;
    guint64 recurred_phases; /* ring phases (a stage of a chunk) timed by their recurrence */
} ParoCollResult;

/* Ring steps beyond this are merged into macro-steps (exact for identical steps), which
 * bounds the cost of a ring phase whatever the ring's length. */
#define PARO_COLL_MAX_STEPS 1024

/**
 * paro_coll_spec_init:
 * The one set-up policy of a collective on @cluster, for every caller: scope global, the
 * cluster's nccl.channels rings per phase or else one per NIC (a ring per rail), its
 * nccl.chunks, its nccl.step_overhead on every step, PARO_COLL_MAX_STEPS. Callers then
 * change what they choose (scope, channels, chunks).
 */
void paro_coll_spec_init(ParoCollSpec *spec, const ParoTopology *cluster, ParoCollKind op,
                         ParoAlgorithm algorithm, gint64 n, gint64 m, double size_bytes);

/**
 * paro_coll_spec_has_root:
 * TRUE when the collective has a root over more than one node (a tree, a broadcast chain),
 * so no node stands for the others: it must run on an explicit graph.
 */
gboolean paro_coll_spec_has_root(const ParoCollSpec *spec, gint64 gpus_per_node);

/**
 * paro_coll_spec_check_shape:
 * Why @spec's GPUs cannot run it on nodes of @gpus_per_node (groups of m that do not divide
 * them, a partial node beyond the first, a two-level group across node boundaries, a size
 * that is not a finite count), as PARO_SIM_ERROR_INFEASIBLE; TRUE when they can. Both
 * models check it: a shape one refuses, the other does not time.
 */
gboolean paro_coll_spec_check_shape(const ParoCollSpec *spec, gint64 gpus_per_node, GError **error);

/**
 * paro_coll_algorithm_for:
 * The algorithm NCCL runs @op with when @algorithm is asked of a training step: its trees do
 * AllReduce only, and other operations go on rings.
 */
ParoAlgorithm paro_coll_algorithm_for(ParoCollKind op, ParoAlgorithm algorithm);

/**
 * paro_coll_simulate:
 * @graph: links of the cluster (explicit or aggregated); @graph's capacities are used
 * Errors: PARO_SIM_ERROR_INFEASIBLE (a shape the algorithm cannot take, or a collective
 * that aggregation cannot fold), PARO_SIM_ERROR_DEADLOCK.
 */
gboolean paro_coll_simulate(const ParoGraph *graph, ParoNetFidelity fidelity,
                            const ParoCollSpec *spec, ParoCollResult *out, GError **error);

/**
 * paro_coll_recurred_share:
 * The share of @spec's sends that paro_coll_simulate will time without events (0 to 1):
 * those of ring phases whose connections share links only in groups shown to move in
 * lockstep, alone on their links (coll/recurrence.c), about 30 times faster than events.
 * Its routes are found to say so. (Unless a merged step is overtaken by the next,
 * latency-bound, which only the timing finds: the events then take over.)
 */
double paro_coll_recurred_share(const ParoGraph *graph, ParoNetFidelity fidelity,
                                const ParoCollSpec *spec);

/* For the algorithm files: the network of @graph's links, its never-limiting links marked
 * (paro_graph_never_limiting) unless @spec asks for every send as events. */
ParoNetwork *paro_coll_network_new(const ParoGraph *graph, ParoEngine *engine,
                                   ParoNetFidelity fidelity, const ParoCollSpec *spec);

/* For the algorithm files: the result of a finished run (link bytes, counters). */
void paro_coll_result_fill(ParoCollResult *out, const ParoGraph *graph, const ParoNetwork *net,
                           double sent, double received);

/* coll/tree.c: whether tree 1 runs as tree 0's mirror image (decision 56): the tree spans
 * @graph's GPUs, @spec allows it (not events_only) and the graph is its own mirror, which
 * @mirror (paro_graph_n_links entries) then holds. */
gboolean paro_coll_tree_folds(const ParoGraph *graph, const ParoCollSpec *spec, guint *mirror);

/* coll/alltoall.c: an all-to-all as every GPU's flows to all its peers at once, called by
 * paro_coll_simulate. */
gboolean paro_coll_simulate_alltoall(const ParoGraph *graph, ParoNetFidelity fidelity,
                                     const ParoCollSpec *spec, ParoCollResult *out, GError **error);

/* coll/alltoall.c: the flows (classes of identical flows) paro_coll_simulate_alltoall starts,
 * found from every tracked GPU's routes; for the work estimate. */
double paro_coll_alltoall_flows(const ParoGraph *graph, const ParoCollSpec *spec);

/* coll/tree.c: the double binary tree, called by paro_coll_simulate. */
gboolean paro_coll_simulate_tree(const ParoGraph *graph, ParoNetFidelity fidelity,
                                 const ParoCollSpec *spec, ParoCollResult *out, GError **error);

G_END_DECLS
