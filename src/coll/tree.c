/* SPDX-License-Identifier: MIT */
/* NCCL's double binary tree AllReduce as a graph of transfers.
 *
 * Two binary trees over the N nodes each carry half of the message: tree 0 is the heap
 * order (children of node v: 2v+1, 2v+2), tree 1 the same over the mirrored numbering
 * v -> N-1-v, so most leaves of one tree are inner nodes of the other and every node
 * sends and receives about the same in total. Inside a node the G GPUs form a chain
 * starting at the tree's leader GPU (local 0 for tree 0, local G/2 for tree 1, so the
 * two trees leave through different rails). Each half is cut into P chunks; per chunk:
 *   reduce:    chain GPU G-1 -> ... -> leader, then leader -> parent's leader once the
 *              chunk has arrived from the chain and from both children;
 *   broadcast: root leader (after its reduce) -> children's leaders and down its chain;
 *              every leader forwards when the chunk arrives.
 * A link of the graph carries one chunk at a time: chunk c follows chunk c-1 on every
 * edge, which pipelines the chunks through the tree. Expected time on uniform links:
 * about (2*(depth + G - 1) + P - 1) * (alpha + S/(2*P*B)).
 * Where the graph is its own mirror (paro_graph_mirror: node v -> N-1-v, GPU j -> j + G/2),
 * tree 1's transfers are tree 0's images at the same instants: only tree 0 is simulated,
 * each of its flows loading its links and their mirrors (decision 56). */
#include "coll/simulate.h"

#include "core/error.h"

typedef struct _Tree Tree;

/* Kept small, and followers in one edge list, not an array each: a tree on 131,072 GPUs
 * has millions of transfers (an array apiece held 660 MB). */
typedef struct {
    Tree *tree;
    guint src, dst;  /* GPUs: an explicit graph has fewer than 2^32 */
    int waiting;     /* dependencies not yet met */
    guint first_out; /* index into edges of the first follower; G_MAXUINT: none */
} Xfer;

typedef struct {
    guint to;   /* the follower */
    guint next; /* the next edge of the same transfer, G_MAXUINT at the end */
} Edge;

struct _Tree {
    const ParoGraph *graph;
    ParoNetwork *net;
    Xfer *xfers; /* sized once: their count is known */
    guint n_xfers;
    Edge *edges; /* while the graph is built: at most four a transfer */
    guint n_edges;
    guint *follow_start; /* then transfer i's followers are follow[follow_start[i]...] */
    guint *follow;
    GArray *links, *weights;
    const guint *mirror; /* tree 1 folded onto tree 0 (paro_graph_mirror), or NULL */
    double chunk;        /* every transfer carries one chunk */
    gint64 left;
    double sent;
    ParoTime step_overhead;
};

static guint add_xfer(Tree *t, gint64 src, gint64 dst)
{
    t->xfers[t->n_xfers] = (Xfer){t, (guint)src, (guint)dst, 0, G_MAXUINT};
    return t->n_xfers++;
}

/* @later waits for @first. G_MAXUINT stands for "nothing". */
static void depend(Tree *t, guint later, guint first)
{
    if (first == G_MAXUINT)
        return;
    Xfer *f = &t->xfers[first];
    t->edges[t->n_edges] = (Edge){later, f->first_out};
    f->first_out = t->n_edges++;
    t->xfers[later].waiting++;
}

static void launch(Tree *t, guint i);

/* @data is the transfer itself: the array no longer grows once the simulation runs. */
static void finished(ParoNetwork *net, gpointer data)
{
    Xfer *x = data;
    Tree *t = x->tree;
    t->left--;
    guint i = (guint)(x - t->xfers);
    for (guint k = t->follow_start[i]; k < t->follow_start[i + 1]; k++) {
        guint f = t->follow[k];
        if (--t->xfers[f].waiting == 0)
            launch(t, f);
    }
}

/* The route of a tree-0 transfer as it loads the links folded onto their mirrors: tree 1's
 * mirror transfer crosses the mirrors of its links at the same instants, so each link
 * stands for itself and its mirror (the lower of the two is kept), and carries one flow of
 * the class for each of the pair that the route crosses (two on a link its own mirror). */
static void fold_route(Tree *t)
{
    guint *links = (guint *)t->links->data;
    double *weights = (double *)t->weights->data;
    guint n = 0;
    for (guint k = 0; k < t->links->len; k++) {
        guint l = links[k], image = t->mirror[l], kept = MIN(l, image);
        double w = weights[k] * (image == l ? 2 : 1);
        guint at = 0;
        while (at < n && links[at] != kept)
            at++;
        if (at < n) {
            weights[at] += w;
        } else {
            links[n] = kept;
            weights[n++] = w;
        }
    }
    g_array_set_size(t->links, n);
    g_array_set_size(t->weights, n);
}

static void launch(Tree *t, guint i)
{
    Xfer *x = &t->xfers[i];
    g_array_set_size(t->links, 0);
    g_array_set_size(t->weights, 0);
    ParoTime latency = paro_time_add(
        paro_graph_route(t->graph, x->src, x->dst, t->links, t->weights), t->step_overhead);
    t->sent += t->chunk;
    if (t->mirror != NULL) {
        fold_route(t);
        t->sent += t->chunk; /* its mirror in tree 1 */
    }
    paro_network_start(t->net, (const guint *)t->links->data, (const double *)t->weights->data,
                       t->links->len, t->chunk, latency, finished, x);
}

/* Node of tree @which at position @pos, and back. */
static gint64 node_of(gint64 which, gint64 pos, gint64 nodes)
{
    return which == 0 ? pos : nodes - 1 - pos;
}

gboolean paro_coll_tree_folds(const ParoGraph *graph, const ParoCollSpec *spec, guint *mirror)
{
    return spec->n == paro_graph_instantiated_gpus(graph) && !spec->events_only &&
           paro_graph_mirror(graph, mirror);
}

gboolean paro_coll_simulate_tree(const ParoGraph *graph, ParoNetFidelity fidelity,
                                 const ParoCollSpec *spec, ParoCollResult *out, GError **error)
{
    gint64 G = MIN(spec->n, paro_graph_gpus_per_node(graph)), N = spec->n / G;
    gint64 P = spec->chunks;
    /* The two trees are mirrors (node v -> N-1-v, GPU j -> j + G/2): on a graph its mirror
     * maps onto itself, tree 1's transfers run as tree 0's images and are not simulated
     * (half the transfers), tree 0's loading each link for both. The allocation is the
     * same (max-min's is unique, so it is symmetric); in floating point a pair's share is
     * summed once rather than twice (within 1e-9 of the unfolded run, collective tests).
     * Only when the tree spans the graph's GPUs: the mirror is the whole graph's. */
    g_autofree guint *mirror = g_new(guint, paro_graph_n_links(graph));
    gboolean folded = paro_coll_tree_folds(graph, spec, mirror);
    gint64 trees = folded ? 1 : 2;
    g_autoptr(ParoEngine) engine = paro_engine_new();
    g_autoptr(ParoNetwork) net = paro_coll_network_new(graph, engine, fidelity, spec);
    /* Sized once: per chunk and tree, the chains up and down (2 N (G - 1) transfers) and
     * the tree's edges up and down (2 (N - 1)); each waits for at most four others (its
     * predecessor on the edge, the chain or parent before it, two children). Grown, the
     * arrays were copied over and over: a fifth of a tree's time at 32,768 GPUs. */
    guint n_xfers = (guint)(P * trees * (2 * N * (G - 1) + 2 * (N - 1)));
    Tree t = {graph,
              net,
              g_new(Xfer, MAX(1u, n_xfers)),
              0,
              g_new(Edge, MAX(1u, 4 * n_xfers)),
              0,
              NULL,
              NULL,
              g_array_new(FALSE, FALSE, sizeof(guint)),
              g_array_new(FALSE, FALSE, sizeof(double)),
              folded ? mirror : NULL,
              spec->size_bytes / (2.0 * (double)P),
              0,
              0,
              spec->step_overhead};
    /* Per (tree, chunk): the transfer that delivers the chunk's reduction to each node's
     * leader from its chain (chain_up), from the leader up (up), from the parent down
     * (down), and down the chain; prev_* hold chunk c-1's transfer on the same edge. */
    gint64 slots = 2 * N * G;
    guint *prev_chain_up = g_new(guint, slots), *prev_chain_down = g_new(guint, slots);
    guint *prev_up = g_new(guint, 2 * N), *prev_down = g_new(guint, 2 * N * 2);
    for (gint64 i = 0; i < slots; i++)
        prev_chain_up[i] = prev_chain_down[i] = G_MAXUINT;
    for (gint64 i = 0; i < 2 * N; i++)
        prev_up[i] = G_MAXUINT;
    for (gint64 i = 0; i < 4 * N; i++)
        prev_down[i] = G_MAXUINT;
    guint *up = g_new(guint, N), *reduced = g_new(guint, N), *down = g_new(guint, N);
    for (gint64 c = 0; c < P; c++) {
        for (gint64 which = 0; which < trees; which++) {
            gint64 leader_local = which == 0 ? 0 : G / 2;
            /* Reduce: chains, then the tree from the leaves up (reverse heap order). */
            for (gint64 pos = N - 1; pos >= 0; pos--) {
                gint64 v = node_of(which, pos, N);
                guint last = G_MAXUINT;
                for (gint64 h = G - 1; h >= 1; h--) { /* chain hop h -> h-1 (in leader order) */
                    gint64 src = v * G + (leader_local + h) % G;
                    gint64 dst = v * G + (leader_local + h - 1) % G;
                    guint x = add_xfer(&t, src, dst);
                    depend(&t, x, last);
                    depend(&t, x, prev_chain_up[(which * N + v) * G + h]);
                    prev_chain_up[(which * N + v) * G + h] = x;
                    last = x;
                }
                reduced[pos] = last; /* the chain's arrival at the leader (or nothing) */
                up[pos] = G_MAXUINT;
                if (pos > 0) {
                    gint64 parent = node_of(which, (pos - 1) / 2, N);
                    guint x = add_xfer(&t, v * G + leader_local, parent * G + leader_local);
                    depend(&t, x, last);
                    for (gint64 child = 2 * pos + 1; child <= 2 * pos + 2 && child < N; child++)
                        depend(&t, x, up[child]);
                    depend(&t, x, prev_up[which * N + v]);
                    prev_up[which * N + v] = x;
                    up[pos] = x;
                }
            }
            /* Broadcast: from the root down, in heap order. */
            for (gint64 pos = 0; pos < N; pos++) {
                gint64 v = node_of(which, pos, N);
                /* What the leader waits for before forwarding: its parent's send, or, at
                 * the root, the whole reduction (its chain and both children). */
                guint ready[3], n_ready = 0;
                if (pos == 0) {
                    ready[n_ready++] = reduced[0];
                    for (gint64 child = 1; child <= 2 && child < N; child++)
                        ready[n_ready++] = up[child];
                } else {
                    ready[n_ready++] = down[pos];
                }
                for (gint64 k = 0; k < 2; k++) {
                    gint64 child = 2 * pos + 1 + k;
                    if (child >= N)
                        continue;
                    gint64 cv = node_of(which, child, N);
                    guint x = add_xfer(&t, v * G + leader_local, cv * G + leader_local);
                    for (guint r = 0; r < n_ready; r++)
                        depend(&t, x, ready[r]);
                    depend(&t, x, prev_down[(which * N + v) * 2 + k]);
                    prev_down[(which * N + v) * 2 + k] = x;
                    down[child] = x;
                }
                guint last = G_MAXUINT;
                for (gint64 h = 0; h + 1 < G; h++) {
                    gint64 src = v * G + (leader_local + h) % G;
                    gint64 dst = v * G + (leader_local + h + 1) % G;
                    guint x = add_xfer(&t, src, dst);
                    if (h == 0)
                        for (guint r = 0; r < n_ready; r++)
                            depend(&t, x, ready[r]);
                    depend(&t, x, last);
                    depend(&t, x, prev_chain_down[(which * N + v) * G + h]);
                    prev_chain_down[(which * N + v) * G + h] = x;
                    last = x;
                }
            }
        }
    }
    g_free(prev_chain_up);
    g_free(prev_chain_down);
    g_free(prev_up);
    g_free(prev_down);
    g_free(up);
    g_free(reduced);
    g_free(down);

    /* The followers of each transfer side by side, in the order its list gave them (a
     * list's edges lay scattered over the whole array: a cache miss a follower). */
    g_assert(t.n_xfers == n_xfers && t.n_edges <= 4 * n_xfers);
    t.follow_start = g_new(guint, t.n_xfers + 1);
    t.follow = g_new(guint, MAX(1u, t.n_edges));
    t.follow_start[0] = 0;
    for (guint i = 0, n = 0; i < t.n_xfers; i++) {
        t.follow_start[i] = n;
        for (guint k = t.xfers[i].first_out; k != G_MAXUINT; k = t.edges[k].next)
            t.follow[n++] = t.edges[k].to;
        t.follow_start[i + 1] = n;
    }
    g_clear_pointer(&t.edges, g_free);
    t.left = t.n_xfers;
    if (spec->size_bytes > 0)
        for (guint i = 0; i < t.n_xfers; i++)
            if (t.xfers[i].waiting == 0)
                launch(&t, i);
    paro_engine_run(engine, PARO_TIME_MAX);
    gboolean ok = (spec->size_bytes <= 0 || t.left == 0) && !paro_engine_overflowed(engine);
    if (paro_engine_overflowed(engine))
        paro_engine_set_overflow_error(error);
    else if (!ok)
        g_set_error(error, PARO_SIM_ERROR, PARO_SIM_ERROR_DEADLOCK,
                    "tree allreduce: %" G_GINT64_FORMAT " transfers never ran", t.left);
    else {
        /* A folded link's mirror carried what it did (tree 1's transfers, as tree 0's). */
        for (guint l = 0; folded && l < paro_graph_n_links(graph); l++)
            if (mirror[l] > l)
                paro_network_record(net, mirror[l], paro_network_carried(net, l),
                                    paro_graph_capacities(graph)[mirror[l]]);
        paro_coll_result_fill(out, graph, net, t.sent, t.sent); /* every transfer delivers */
    }
    g_free(t.xfers);
    g_free(t.follow_start);
    g_free(t.follow);
    g_array_unref(t.links);
    g_array_unref(t.weights);
    return ok;
}
