/* SPDX-License-Identifier: MIT */
/* Collective operations, their scopes and algorithms, and the nccl-tests definitions
 * shared by the simulator and the calibration harness (bus-bandwidth factors). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
    PARO_COLL_ALLREDUCE,
    PARO_COLL_ALLGATHER,
    PARO_COLL_REDUCESCATTER,
    PARO_COLL_BROADCAST,
    PARO_COLL_SENDRECV, /* every GPU sends S to the next and receives S from the previous */
    PARO_COLL_ALLTOALL, /* every GPU sends S/n of its S to each GPU (NCCL: grouped send/recv);
                         * last, so the values and loops up to SENDRECV keep their meaning */
} ParoCollKind;

/* Which GPUs take part, in PaRO's terms: the m GPUs of one group, the g = n/m GPUs with
 * the same local rank (one per group), or all n. */
typedef enum {
    PARO_SCOPE_GLOBAL, /* first, so a zeroed spec means "all GPUs" */
    PARO_SCOPE_INTRA,
    PARO_SCOPE_INTER,
} ParoScope;

/* How a global collective is carried out: NCCL's algorithms (auto: what NCCL's tuner
 * picks; coll/nccl.c) and PaRO's two-level ones (coll/analytic.c, coll/simulate.c). */
typedef enum {
    PARO_ALGO_RING,
    PARO_ALGO_HIERARCHICAL, /* intra, inter, intra phases in sequence */
    PARO_ALGO_HO_RING,      /* the same phases pipelined over chunks (PaRO-CC) */
    PARO_ALGO_TREE,         /* NCCL's double binary tree across nodes (AllReduce; others: ring) */
    PARO_ALGO_AUTO,         /* NCCL's choice by size (ring with the flow model) */
    PARO_ALGO_NVLS,         /* NVLink SHARP inside one node (Hopper NVSwitch) */
    PARO_ALGO_NVLS_TREE,    /* NVLS inside nodes, trees between them */
} ParoAlgorithm;

/* What times a collective: NCCL's own cost model from the cluster's figures (coll/nccl.c),
 * or the flow-level simulation of its transfers on the cluster's links (coll/simulate.c). */
typedef enum { PARO_COLL_MODEL_NCCL, PARO_COLL_MODEL_FLOW } ParoCollModel;
extern const char *const paro_coll_model_names[]; /* "nccl", "flow", NULL */

extern const char *const paro_coll_kind_names[]; /* "allreduce", ..., "alltoall", NULL */
extern const char *const paro_scope_names[];     /* "global", "intra", "inter", NULL */
extern const char *const paro_algorithm_names[]; /* "ring", ..., "tree", NULL */

/**
 * paro_coll_bus_factor:
 * nccl-tests doc/PERFORMANCE.md: busbw = algbw x 2(n-1)/n for AllReduce, (n-1)/n for
 * AllGather and ReduceScatter (S = the whole array), 1 for Broadcast and SendRecv;
 * (n-1)/n for AlltoAll (src/alltoall.cu's AlltoAllGetBw: factor (nranks-1)/nranks).
 */
double paro_coll_bus_factor(ParoCollKind kind, gint64 nranks);

/** paro_coll_scope_shape: members (@out_k) and members on one node (@out_per_node) of a
 * collective over @scope, for @n ranks in contiguous groups of @m, @gpn GPUs a node. */
void paro_coll_scope_shape(ParoScope scope, gint64 n, gint64 m, gint64 gpn, gint64 *out_k,
                           gint64 *out_per_node);

/**
 * paro_coll_bytes_sent:
 * Bytes each of @k GPUs sends (and receives) in a ring collective of total size @size:
 * (k-1)/k*S for AllGather and ReduceScatter, 2(k-1)/k*S for AllReduce, S for Broadcast
 * (every rank but the last forwards the whole message; the average is (k-1)/k*S);
 * (k-1)/k*S for AllToAll (S/k to each of the k-1 others, its own 1/k kept).
 */
double paro_coll_bytes_sent(ParoCollKind kind, gint64 k, double size_bytes);

G_END_DECLS
