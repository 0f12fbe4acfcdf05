/* SPDX-License-Identifier: MIT */
/* The link graph of a cluster and the routes between GPUs. Links are one direction
 * each: NVSwitch ports (GPU->switch, switch->GPU), NVLink pairs, PCIe ports and a host
 * bridge, NIC transmit/receive per rail, leaf uplinks/downlinks to the spine. In the
 * aggregated mode only node 0 (and leaf 0) is instantiated and every route is folded onto
 * it (node v -> 0); each folded link stands for `instances` real ones, loaded alike by
 * symmetry, and a route's weight on it counts the real flows of its class per instance
 * (a full leaf's when the last leaf is partly filled). */
#pragma once

#include <glib.h>

#include "core/time.h"
#include "topo/topology.h"

G_BEGIN_DECLS

typedef enum { PARO_LINK_INTRA, PARO_LINK_INTER } ParoLinkClass;

typedef struct _ParoGraph ParoGraph;

/* Explicit graphs instantiate every GPU, link and flow: at 131,072 GPUs a tree AllReduce
 * takes ~1 s and 0.14 GB (2026-11-27; ~20 s and 0.7 GB on 2026-11-23); larger ones are
 * refused, a bound on the memory an explicit graph and its flows may take. */
#define PARO_GRAPH_EXPLICIT_MAX_GPUS 131072

/**
 * paro_graph_new:
 * @nodes: nodes taking part (<= the topology's)
 * @aggregated: fold onto node 0 (exact on full leaves; a partly filled last leaf folds
 *   within the fold's own error, docs/decisions.md 27)
 * Returns: (transfer full) (nullable); PARO_SIM_ERROR_INFEASIBLE for an explicit graph of
 * more than PARO_GRAPH_EXPLICIT_MAX_GPUS or beyond the limit on links.
 */
ParoGraph *paro_graph_new(const ParoTopology *topology, gint64 nodes, gboolean aggregated,
                          GError **error);
void paro_graph_free(ParoGraph *graph);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ParoGraph, paro_graph_free)

guint paro_graph_n_links(const ParoGraph *g);
const double *paro_graph_capacities(const ParoGraph *g);
ParoLinkClass paro_graph_link_class(const ParoGraph *g, guint link);
/** paro_graph_link_instances: real links one link of the graph stands for. */
double paro_graph_link_instances(const ParoGraph *g, guint link);
gboolean paro_graph_is_aggregated(const ParoGraph *g);
gint64 paro_graph_gpus_per_node(const ParoGraph *g);
/** paro_graph_instantiated_gpus: GPUs of the representative unit (all, when explicit). */
gint64 paro_graph_instantiated_gpus(const ParoGraph *g);

/** paro_graph_scale_link: multiplies a link's capacity (explicit mode: a degraded NIC). */
void paro_graph_scale_link(ParoGraph *g, guint link, double factor);

/**
 * paro_graph_never_limiting:
 * Appends to @links (guint) the links that can never limit a max-min allocation, so a
 * solver may leave them out of its components and only count their bytes: in an explicit
 * graph, a leaf's uplink (downlink) whose capacity covers the transmit (receive) links of
 * all its nodes' NICs together, since every flow on it crosses exactly one of those with
 * the same weight 1 (no oversubscription). None in the aggregated mode, whose weights
 * stand for several flows.
 */
void paro_graph_never_limiting(const ParoGraph *g, GArray *links);

/**
 * paro_graph_mirror:
 * @mirror: (out caller-allocates): paro_graph_n_links() entries
 * The mirror of an explicit graph of N nodes of G GPUs maps node v to N-1-v and local GPU
 * j to (j + G/2) mod G, each GPU's links (and its rail's NIC) to the image GPU's, leaf l to
 * leaf L-1-l: an involution that carries NCCL's tree 0 onto tree 1 (coll/tree.c). Fills
 * @mirror[link] with the image of each link and returns TRUE when it maps the graph onto
 * itself (the same capacity and class): G even or 1, rails that map onto rails, full
 * leaves (or one), no link scaled alone. FALSE otherwise, and in the aggregated mode.
 */
gboolean paro_graph_mirror(const ParoGraph *g, guint *mirror);

/** paro_graph_nic_tx: the transmit link of rail @rail on @node (for tests). */
guint paro_graph_nic_tx(const ParoGraph *g, gint64 node, gint64 rail);

/**
 * paro_graph_route:
 * Appends the (folded) links from GPU rank @src to @dst and their weights; returns the
 * route's latency.
 */
ParoTime paro_graph_route(const ParoGraph *g, gint64 src, gint64 dst, GArray *links,
                          GArray *weights);

G_END_DECLS
