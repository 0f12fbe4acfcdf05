/* SPDX-License-Identifier: MIT */
/* Closed forms of ring-based collectives on a two-level cluster.
 *
 * Ring over k GPUs, c of them on each node (c = k: inside one node):
 *   steps   AllGather, ReduceScatter: k-1; AllReduce: 2(k-1); Broadcast: k-1 (pipelined)
 *   volume  each GPU sends (k-1)/k*S per pass (AllReduce: two passes); Broadcast S
 *   time    steps*lat + volume/bw
 * Inside one node lat = alpha' and bw = B'. A ring that leaves the node does so through
 * the NICs; all GPUs of the node run the same kind of collective at once (gpus_per_node/c
 * rings share the node), so each ring gets c*B of the node's NIC bandwidth, with NCCL's
 * channels spread over the rails: bw = min(B', c*B), lat = alpha. So the global flat ring
 * (c = gpus_per_node) is limited by the node's whole NIC bandwidth, not one GPU's share:
 * what NCCL achieves, and why the measured gain of HO-Ring over Ring is tens of percent
 * rather than the ratio of the links.
 *
 * Global collectives (S the whole array, m GPUs per group, g = n/m groups):
 *   ring          one ring over all n GPUs, as above
 *   hierarchical  AllGather = AllGather(inter, S/m) then AllGather(intra, S);
 *                 ReduceScatter = ReduceScatter(intra, S) then ReduceScatter(inter, S/m);
 *                 AllReduce = ReduceScatter(intra, S), AllReduce(inter, S/m), AllGather(intra, S)
 *                 in sequence: the sum of the phase times.
 *   ho-ring       the same two parts cut into C chunks that pipeline over the two link
 *                 classes: with part times Ti, Ta (each paying its latency C times, once per
 *                 chunk), T = max(Ti, Ta) + min(Ti, Ta)/C, a two-stage pipeline. AllReduce
 *                 pipelines three stages per chunk, intra ReduceScatter, inter AllReduce,
 *                 intra AllGather: T = (sum)/C + (C-1)/C * max, as coll/simulate.c runs it.
 *                 As C grows T tends to max(Ti, Ta) (plus the growing latency); with C = 1
 *                 it equals the hierarchical sum.
 *   tree          AllReduce by NCCL's double binary tree (tree_allreduce_s below); the
 *                 other collectives on the ring, as NCCL does.
 * All-to-all has no ring or phases whatever the algorithm: every GPU sends S/k to each
 * other member at once (paro_coll_alltoall_s), over a scope as over all n GPUs. */
#include "coll/analytic.h"

#include <math.h>

double paro_coll_ring_s(const ParoCommModel *cm, ParoCollKind op, gint64 k, gint64 per_node,
                        double size_bytes)
{
    if (k <= 1 || size_bytes <= 0)
        return 0;
    gboolean spans_nodes = k > per_node;
    double bw = spans_nodes ? fmin(cm->intra_Bps, (double)per_node * cm->inter_Bps) : cm->intra_Bps;
    double lat = spans_nodes ? cm->inter_lat_s : cm->intra_lat_s;
    double steps = op == PARO_COLL_ALLREDUCE ? 2.0 * (double)(k - 1) : (double)(k - 1);
    if (op == PARO_COLL_SENDRECV)
        return lat + size_bytes / bw;
    double volume =
        op == PARO_COLL_BROADCAST ? size_bytes : paro_coll_bytes_sent(op, k, size_bytes);
    return steps * lat + volume / bw;
}

double paro_coll_alltoall_s(const ParoCommModel *cm, gint64 k, gint64 per_node, double size_bytes)
{
    if (k <= 1 || size_bytes <= 0)
        return 0;
    /* each GPU keeps 1/k of its S and sends S/k to every other rank: those of its node
     * over the fabric, the others through its share of the NICs, both at once (NCCL posts
     * every send and receive of the group together) */
    gint64 local = MIN(per_node, k);
    double intra = size_bytes * (double)(local - 1) / (double)k;
    double inter = size_bytes * (double)(k - local) / (double)k;
    double lat = k > per_node ? cm->inter_lat_s : cm->intra_lat_s;
    return lat + fmax(intra / cm->intra_Bps, inter > 0 ? inter / cm->inter_Bps : 0);
}

static double scope_ring_s(const ParoCommModel *cm, ParoCollKind op, ParoScope scope,
                           double size_bytes)
{
    gint64 k, per_node;
    paro_coll_scope_shape(scope, cm->n, cm->m, cm->gpus_per_node, &k, &per_node);
    if (op == PARO_COLL_ALLTOALL) /* no ring: grouped sends to every member at once */
        return paro_coll_alltoall_s(cm, k, per_node, size_bytes);
    return paro_coll_ring_s(cm, op, k, per_node, size_bytes);
}

/* Time of a phase carried in @chunks pieces back to back on one link class: the
 * bandwidth term is unchanged, the latency term is paid once per chunk. */
static double chunked_s(ParoPhaseTime phase, gpointer data, ParoCollKind op, ParoScope scope,
                        double size_bytes, gint64 chunks)
{
    if (chunks <= 1)
        return phase(op, scope, size_bytes, data);
    return (double)chunks * phase(op, scope, size_bytes / (double)chunks, data);
}

/* Stages of total times a, b, c (c = 0 for two stages) over C chunks: the first chunk
 * crosses every stage, then the slowest stage sets the pace:
 * (a + b + c)/C + (C-1)/C * max(a, b, c); for two stages, max + min/C. */
static double pipeline_s(double a, double b, double c, gint64 chunks)
{
    double n = (double)MAX(chunks, 1);
    return (a + b + c) / n + (n - 1) / n * fmax(a, fmax(b, c));
}

double paro_coll_two_level_s(ParoCollKind op, gboolean overlap, gint64 m, gint64 chunks,
                             double size_bytes, ParoPhaseTime phase, gpointer data)
{
    double s_inter = size_bytes / (double)m;
    gint64 c = overlap ? MAX(chunks, 1) : 1;
    switch (op) {
    case PARO_COLL_ALLGATHER: {
        double inter = chunked_s(phase, data, op, PARO_SCOPE_INTER, s_inter, c);
        double intra = chunked_s(phase, data, op, PARO_SCOPE_INTRA, size_bytes, c);
        return overlap ? pipeline_s(inter, intra, 0, c) : inter + intra;
    }
    case PARO_COLL_REDUCESCATTER: {
        double intra = chunked_s(phase, data, op, PARO_SCOPE_INTRA, size_bytes, c);
        double inter = chunked_s(phase, data, op, PARO_SCOPE_INTER, s_inter, c);
        return overlap ? pipeline_s(intra, inter, 0, c) : intra + inter;
    }
    case PARO_COLL_ALLREDUCE: {
        double rs =
            chunked_s(phase, data, PARO_COLL_REDUCESCATTER, PARO_SCOPE_INTRA, size_bytes, c);
        double ar = chunked_s(phase, data, PARO_COLL_ALLREDUCE, PARO_SCOPE_INTER, s_inter, c);
        double ag = chunked_s(phase, data, PARO_COLL_ALLGATHER, PARO_SCOPE_INTRA, size_bytes, c);
        return overlap ? pipeline_s(rs, ar, ag, c) : rs + ar + ag;
    }
    case PARO_COLL_SENDRECV:
    case PARO_COLL_ALLTOALL: /* one level: every GPU's sends at once, whatever the algorithm */
        return phase(op, PARO_SCOPE_GLOBAL, size_bytes, data);
    case PARO_COLL_BROADCAST: {
        /* Inter-group broadcast of the whole message, then intra-group. */
        double inter = chunked_s(phase, data, op, PARO_SCOPE_INTER, size_bytes, c);
        double intra = chunked_s(phase, data, op, PARO_SCOPE_INTRA, size_bytes, c);
        return overlap ? pipeline_s(inter, intra, 0, c) : inter + intra;
    }
    }
    g_assert_not_reached();
}

static double ring_phase(ParoCollKind op, ParoScope scope, double size_bytes, gpointer data)
{
    return scope_ring_s(data, op, scope, size_bytes);
}

/* Double binary tree AllReduce (NCCL): each of two trees over the nodes carries half the
 * message, reduced up a chain inside each node and the tree, then broadcast back down,
 * pipelined. Latency: 2*(ceil(log2 N)*alpha + (G-1)*alpha'); bandwidth: every node's NICs
 * send and receive about S in each direction (S/2 per tree, up and down), so
 * S/min(B', G*B), the same order as a ring's 2(n-1)/n*S over the node: trees win on
 * latency, not bandwidth. */
static double tree_allreduce_s(const ParoCommModel *cm, double size_bytes)
{
    gint64 gpn = MIN(cm->n, cm->gpus_per_node), nodes = cm->n / gpn;
    double depth = nodes > 1 ? ceil(log2((double)nodes)) : 0;
    double lat = 2.0 * (depth * cm->inter_lat_s + (double)(gpn - 1) * cm->intra_lat_s);
    double bw = nodes > 1 ? fmin(cm->intra_Bps, (double)gpn * cm->inter_Bps) : cm->intra_Bps;
    return lat + size_bytes / bw;
}

static double global_s(const ParoCommModel *cm, ParoCollKind op, double size_bytes)
{
    switch (cm->algorithm) {
    case PARO_ALGO_TREE:
        if (op == PARO_COLL_ALLREDUCE)
            return tree_allreduce_s(cm, size_bytes);
        /* NCCL runs the other collectives on rings. */
        return scope_ring_s(cm, op, PARO_SCOPE_GLOBAL, size_bytes);
    case PARO_ALGO_RING:
    case PARO_ALGO_AUTO: /* the closed form has NCCL's ring; its choice is coll/nccl.c's */
    case PARO_ALGO_NVLS:
    case PARO_ALGO_NVLS_TREE:
        return scope_ring_s(cm, op, PARO_SCOPE_GLOBAL, size_bytes);
    case PARO_ALGO_HIERARCHICAL:
    case PARO_ALGO_HO_RING:
        break;
    }
    /* ring phases of the scope; a broadcast's of the whole message */
    return paro_coll_two_level_s(op, cm->algorithm == PARO_ALGO_HO_RING, cm->m, cm->chunks,
                                 size_bytes, ring_phase, (gpointer)cm);
}

double paro_coll_closed_form_s(const ParoCommModel *cm, ParoCollKind op, ParoScope scope,
                               double size_bytes)
{
    g_return_val_if_fail(cm->m >= 1 && cm->n % cm->m == 0, 0);
    if (scope == PARO_SCOPE_GLOBAL)
        return global_s(cm, op, size_bytes);
    return scope_ring_s(cm, op, scope, size_bytes);
}

void paro_coll_traffic(const ParoCommModel *cm, ParoCollKind op, ParoScope scope, double size_bytes,
                       double *out_intra, double *out_inter)
{
    gint64 g = cm->n / cm->m;
    double s_inter = size_bytes / (double)cm->m;
    *out_intra = 0;
    *out_inter = 0;
    switch (scope) {
    case PARO_SCOPE_INTRA:
        *out_intra = paro_coll_bytes_sent(op, cm->m, size_bytes);
        return;
    case PARO_SCOPE_INTER:
        *out_inter = paro_coll_bytes_sent(op, g, size_bytes);
        return;
    case PARO_SCOPE_GLOBAL:
        break;
    }
    if (op == PARO_COLL_ALLTOALL) {
        /* every GPU's S/n to each other GPU: its group's members over the intra links, the
         * rest over the inter ones (not a two-level algorithm's phases) */
        double n = (double)cm->n, m = (double)cm->m;
        *out_intra = size_bytes * (m - 1) / n;
        *out_inter = size_bytes * (n - m) / n;
        return;
    }
    switch (op) {
    case PARO_COLL_ALLGATHER:
    case PARO_COLL_REDUCESCATTER:
        *out_intra = paro_coll_bytes_sent(op, cm->m, size_bytes);
        *out_inter = paro_coll_bytes_sent(op, g, s_inter);
        return;
    case PARO_COLL_ALLREDUCE:
        *out_intra = 2.0 * paro_coll_bytes_sent(PARO_COLL_ALLGATHER, cm->m, size_bytes);
        *out_inter = paro_coll_bytes_sent(PARO_COLL_ALLREDUCE, g, s_inter);
        return;
    case PARO_COLL_BROADCAST:
    case PARO_COLL_SENDRECV:
        *out_intra = paro_coll_bytes_sent(op, cm->m, size_bytes);
        *out_inter = paro_coll_bytes_sent(op, g, size_bytes);
        return;
    case PARO_COLL_ALLTOALL:
        g_assert_not_reached(); /* above */
    }
}
