/* SPDX-License-Identifier: MIT */
/* Link layout, per instantiated node v (G GPUs, R NICs):
 *   nvswitch: up(v,j) = base(v) + j, down(v,j) = base(v) + G + j
 *   pcie:     the same ports, plus the host bridge base(v) + 2G shared by peer traffic
 *   nvlink:   pair(v,i,j) = base(v) + i*G + j, each B'/(G-1): a GPU's links split evenly
 *             over its peers (a fully connected node; Lassen's X-bus is not modelled)
 *   NICs:     tx(v,r) = nic(v) + 2r, rx(v,r) = nic(v) + 2r + 1
 * then per instantiated leaf l: up(l), down(l), of (nodes per leaf) x (node NIC bandwidth) /
 * oversubscription. GPU j uses the NIC of its rail, r = j*R/G. Latency: the fabric's per
 * intra-node route; NIC latency plus one switch latency per inter-node route, plus two
 * more (spine and far leaf) when the route leaves the leaf. */
#include "topo/graph.h"

#include "core/error.h"
#include "core/limits.h"

struct _ParoGraph {
    const ParoTopology *topo;
    gboolean aggregated;
    gint64 nodes;      /* taking part */
    gint64 inst_nodes; /* instantiated */
    gint64 leaves, inst_leaves, nodes_per_leaf;
    guint fabric_per_node, per_node, leaf_base;
    GArray *capacity;  /* double */
    GArray *klass;     /* ParoLinkClass as int */
    GArray *instances; /* double */
};

static void add_link(ParoGraph *g, double capacity, ParoLinkClass k, double instances)
{
    int kk = k;
    g_array_append_val(g->capacity, capacity);
    g_array_append_val(g->klass, kk);
    g_array_append_val(g->instances, instances);
}

/* Nodes of a leaf of @s whose hop of d nodes, modulo all @nodes, stays in the leaf: for a
 * leaf [a, a + s), those below a + s - d, and those that wrap past the last node back into
 * it (v >= a + nodes - d); neither depends on a, as no leaf runs past the last node. */
static gint64 staying(gint64 nodes, gint64 s, gint64 d)
{
    return MAX(0, s - d) + MAX(0, s - (nodes - d));
}

/* The share of all nodes whose hop of d crosses into another leaf: the latency a folded
 * hop pays on average (see paro_graph_route). */
static double crossing_share(const ParoGraph *g, gint64 d)
{
    gint64 full = g->nodes / g->nodes_per_leaf, rest = g->nodes % g->nodes_per_leaf;
    gint64 stay = full * staying(g->nodes, g->nodes_per_leaf, d) + staying(g->nodes, rest, d);
    return (double)(g->nodes - stay) / (double)g->nodes;
}

ParoGraph *paro_graph_new(const ParoTopology *t, gint64 nodes, gboolean aggregated, GError **error)
{
    g_return_val_if_fail(nodes >= 1, NULL);
    gint64 G = t->gpus_per_node, R = t->nics.count;
    gint64 npl = MIN(t->network.nodes_per_leaf, nodes);
    gint64 leaves = (nodes + npl - 1) / npl;
    if (!aggregated && nodes * G > PARO_GRAPH_EXPLICIT_MAX_GPUS) {
        g_set_error(error, PARO_SIM_ERROR, PARO_SIM_ERROR_INFEASIBLE,
                    "%" G_GINT64_FORMAT " GPUs are beyond the %d that an explicit simulation "
                    "(every GPU and flow: --explicit, trees, asymmetric clusters) supports; "
                    "fill the leaf switches and use ring, hierarchical or ho-ring, which "
                    "fold symmetric nodes",
                    nodes * G, PARO_GRAPH_EXPLICIT_MAX_GPUS);
        return NULL;
    }
    /* The links are counted before they are made: an NVLink node has G^2 of them. */
    double inst = aggregated ? 1 : (double)nodes;
    double per_node =
        (t->fabric.kind == PARO_FABRIC_NVLINK ? (double)G * (double)G : 2.0 * (double)G + 1) +
        2.0 * (double)R;
    double n_links = inst * per_node + 2.0 * (double)leaves;
    if (!paro_limit_check(&paro_limit_links, n_links)) {
        g_autofree char *text = paro_limit_describe(&paro_limit_links, NULL, n_links, NULL);
        g_set_error(error, PARO_SIM_ERROR, PARO_SIM_ERROR_INFEASIBLE, "the network graph: %s",
                    text);
        return NULL;
    }
    ParoGraph *g = g_new0(ParoGraph, 1);
    g->topo = t;
    g->aggregated = aggregated;
    g->nodes = nodes;
    g->inst_nodes = aggregated ? 1 : nodes;
    g->leaves = leaves;
    g->nodes_per_leaf = npl;
    g->inst_leaves = leaves > 1 ? (aggregated ? 1 : leaves) : 0;
    /* sized once from the count above (grown, they were copied over and over) */
    g->capacity = g_array_sized_new(FALSE, FALSE, sizeof(double), (guint)n_links);
    g->klass = g_array_sized_new(FALSE, FALSE, sizeof(int), (guint)n_links);
    g->instances = g_array_sized_new(FALSE, FALSE, sizeof(double), (guint)n_links);
    double node_instances = aggregated ? (double)nodes / (double)g->inst_nodes : 1;
    double bw = t->fabric.bandwidth_Bps;
    for (gint64 v = 0; v < g->inst_nodes; v++) {
        guint before = g->capacity->len;
        switch (t->fabric.kind) {
        case PARO_FABRIC_NVLINK:
            for (gint64 i = 0; i < G * G; i++)
                add_link(g, G > 1 ? bw / (double)(G - 1) : bw, PARO_LINK_INTRA, node_instances);
            break;
        case PARO_FABRIC_PCIE:
        case PARO_FABRIC_NVSWITCH:
            for (gint64 i = 0; i < 2 * G; i++)
                add_link(g, bw, PARO_LINK_INTRA, node_instances);
            if (t->fabric.kind == PARO_FABRIC_PCIE)
                add_link(g, bw, PARO_LINK_INTRA, node_instances);
            break;
        }
        g->fabric_per_node = g->capacity->len - before;
        for (gint64 r = 0; r < 2 * R; r++)
            add_link(g, t->nics.bandwidth_Bps, PARO_LINK_INTER, node_instances);
        g->per_node = g->capacity->len - before;
    }
    g->leaf_base = g->capacity->len;
    double uplink = (double)npl * (double)R * t->nics.bandwidth_Bps / t->network.oversubscription;
    for (gint64 l = 0; l < 2 * g->inst_leaves; l++)
        add_link(g, uplink, PARO_LINK_INTER, aggregated ? (double)leaves : 1);
    return g;
}

void paro_graph_free(ParoGraph *g)
{
    if (g == NULL)
        return;
    g_array_unref(g->capacity);
    g_array_unref(g->klass);
    g_array_unref(g->instances);
    g_free(g);
}

guint paro_graph_n_links(const ParoGraph *g)
{
    return g->capacity->len;
}

const double *paro_graph_capacities(const ParoGraph *g)
{
    return (const double *)g->capacity->data;
}

ParoLinkClass paro_graph_link_class(const ParoGraph *g, guint link)
{
    return (ParoLinkClass)g_array_index(g->klass, int, link);
}

double paro_graph_link_instances(const ParoGraph *g, guint link)
{
    return g_array_index(g->instances, double, link);
}

gboolean paro_graph_is_aggregated(const ParoGraph *g)
{
    return g->aggregated;
}

gint64 paro_graph_gpus_per_node(const ParoGraph *g)
{
    return g->topo->gpus_per_node;
}

void paro_graph_scale_link(ParoGraph *g, guint link, double factor)
{
    g_return_if_fail(link < g->capacity->len && factor > 0);
    g_array_index(g->capacity, double, link) *= factor;
}

static guint node_base(const ParoGraph *g, gint64 node)
{
    return (guint)((node % g->inst_nodes) * g->per_node);
}

gint64 paro_graph_instantiated_gpus(const ParoGraph *g)
{
    return g->inst_nodes * g->topo->gpus_per_node;
}

guint paro_graph_nic_tx(const ParoGraph *g, gint64 node, gint64 rail)
{
    return node_base(g, node) + g->fabric_per_node + (guint)(2 * rail);
}

void paro_graph_never_limiting(const ParoGraph *g, GArray *links)
{
    if (g->aggregated)
        return;
    const double *cap = (const double *)g->capacity->data;
    gint64 R = g->topo->nics.count;
    for (gint64 l = 0; l < g->inst_leaves; l++) {
        double tx = 0, rx = 0; /* what the leaf's NICs can send and receive together */
        for (gint64 v = l * g->nodes_per_leaf; v < MIN((l + 1) * g->nodes_per_leaf, g->nodes); v++)
            for (gint64 r = 0; r < R; r++) {
                tx += cap[paro_graph_nic_tx(g, v, r)];
                rx += cap[paro_graph_nic_tx(g, v, r) + 1];
            }
        guint up = g->leaf_base + (guint)(2 * l), down = up + 1;
        if (cap[up] >= tx)
            g_array_append_val(links, up);
        if (cap[down] >= rx)
            g_array_append_val(links, down);
    }
}

gboolean paro_graph_mirror(const ParoGraph *g, guint *mirror)
{
    const ParoTopology *t = g->topo;
    gint64 G = t->gpus_per_node, R = t->nics.count, N = g->nodes;
    if (g->aggregated || (G > 1 && G % 2 != 0) ||
        (g->inst_leaves > 1 && N % g->nodes_per_leaf != 0))
        return FALSE;
    /* The image of each rail: that of the image of its GPUs, one rail for all of them. */
    g_autofree gint64 *rail = g_new(gint64, R);
    for (gint64 r = 0; r < R; r++)
        rail[r] = r; /* a rail no GPU uses carries nothing: its own image */
    g_autofree gboolean *seen = g_new0(gboolean, R);
    for (gint64 j = 0; j < G; j++) {
        gint64 r = j * R / G, image = (j + G / 2) % G * R / G;
        if (seen[r] && rail[r] != image)
            return FALSE;
        seen[r] = TRUE;
        rail[r] = image;
    }
    for (gint64 v = 0; v < N; v++) {
        guint base = node_base(g, v), image = node_base(g, N - 1 - v);
        for (guint k = 0; k < g->fabric_per_node; k++) {
            guint k_image = k;
            if (t->fabric.kind == PARO_FABRIC_NVLINK) {
                gint64 i = k / G, j = k % G;
                k_image = (guint)((i + G / 2) % G * G + (j + G / 2) % G);
            } else if (k < 2 * G) { /* up (j) then down (G + j) ports; a PCIe bridge stays */
                k_image = (guint)(k / G * G + (k % G + G / 2) % G);
            }
            mirror[base + k] = image + k_image;
        }
        for (gint64 r = 0; r < R; r++)
            for (guint dir = 0; dir < 2; dir++)
                mirror[base + g->fabric_per_node + 2 * r + dir] =
                    image + g->fabric_per_node + (guint)(2 * rail[r]) + dir;
    }
    for (gint64 l = 0; l < g->inst_leaves; l++)
        for (guint dir = 0; dir < 2; dir++)
            mirror[g->leaf_base + 2 * l + dir] =
                g->leaf_base + (guint)(2 * (g->inst_leaves - 1 - l)) + dir;
    const double *cap = (const double *)g->capacity->data;
    for (guint l = 0; l < g->capacity->len; l++)
        if (cap[mirror[l]] != cap[l] ||
            paro_graph_link_class(g, mirror[l]) != paro_graph_link_class(g, l))
            return FALSE;
    return TRUE;
}

static void push(GArray *links, GArray *weights, guint link, double weight)
{
    g_array_append_val(links, link);
    g_array_append_val(weights, weight);
}

ParoTime paro_graph_route(const ParoGraph *g, gint64 src, gint64 dst, GArray *links,
                          GArray *weights)
{
    const ParoTopology *t = g->topo;
    gint64 G = t->gpus_per_node, R = t->nics.count;
    gint64 sn = src / G, dn = dst / G, sj = src % G, dj = dst % G;
    if (src == dst)
        return 0;
    if (sn == dn) {
        guint b = node_base(g, sn);
        if (t->fabric.kind == PARO_FABRIC_NVLINK) {
            push(links, weights, b + (guint)(sj * G + dj), 1);
        } else {
            push(links, weights, b + (guint)sj, 1);
            push(links, weights, b + (guint)(G + dj), 1);
            if (t->fabric.kind == PARO_FABRIC_PCIE)
                push(links, weights, b + (guint)(2 * G), 1);
        }
        return paro_time_from_s(t->fabric.latency_s);
    }
    push(links, weights, paro_graph_nic_tx(g, sn, sj * R / G), 1);
    double latency = t->nics.latency_s + t->network.latency_s;
    gint64 sl = sn / g->nodes_per_leaf, dl = dn / g->nodes_per_leaf;
    if (sl != dl && !g->aggregated) {
        push(links, weights, g->leaf_base + (guint)(2 * (sl % g->inst_leaves)), 1);
        push(links, weights, g->leaf_base + (guint)(2 * (dl % g->inst_leaves) + 1), 1);
        latency += 2 * t->network.latency_s;
    } else if (g->aggregated && g->leaves > 1) {
        /* Folded onto node 0, a hop of d nodes stands for the same hop from every node;
         * of the npl nodes of a leaf, min(d, npl) cross into another leaf (all of them
         * when d >= npl: a folded hop to another leaf is not one flow per uplink). Per uplink
         * instance that is min(d, npl) flows of the class (weight); the hop's latency is
         * the average of the npl hops it stands for, as a ring's hop latencies average
         * along it (coll/simulate.c, NCCL's slots). */
        gint64 d = ((dn - sn) % g->nodes + g->nodes) % g->nodes;
        /* min(d, npl) but for the hops that wrap past the last node back into the leaf
         * (d > nodes - npl: an all-to-all's far peers; a ring's hops are shorter) */
        double w = (double)(g->nodes_per_leaf - staying(g->nodes, g->nodes_per_leaf, d));
        push(links, weights, g->leaf_base, w);
        push(links, weights, g->leaf_base + 1, w);
        /* With a partly filled last leaf (issue #18), the uplink's weight is a full leaf's,
         * the most loaded, and the latency the average over the real hops of all nodes. */
        double share = g->nodes % g->nodes_per_leaf != 0 ? crossing_share(g, d)
                                                         : w / (double)g->nodes_per_leaf;
        latency += 2 * t->network.latency_s * share;
    }
    push(links, weights, paro_graph_nic_tx(g, dn, dj * R / G) + 1, 1);
    return paro_time_from_s(latency);
}
