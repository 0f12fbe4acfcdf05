/* SPDX-License-Identifier: MIT */
/* Closed-form (alpha-beta) cost and per-GPU traffic of a collective over a PaRO scope,
 * for the guideline time of every strategy. The simulated step takes its collectives'
 * times from NCCL's model or the flow simulation (coll/cache.c) but keeps this traffic
 * accounting, which says how much of a GPU's links each collective takes. */
#pragma once

#include "coll/collective.h"

G_BEGIN_DECLS

typedef struct {
    gint64 n;                /* GPUs in data parallelism */
    gint64 m;                /* GPUs per PaRO group */
    gint64 gpus_per_node;    /* GPUs sharing one node's fabric and NICs */
    double intra_Bps;        /* B': fabric bandwidth per GPU, one direction */
    double intra_lat_s;      /* alpha': per-hop latency inside a node */
    double inter_Bps;        /* B: a GPU's share of its node's NIC bandwidth */
    double inter_lat_s;      /* alpha: per-hop latency between nodes */
    ParoAlgorithm algorithm; /* for global collectives */
    gint64 chunks;           /* ho-ring pipeline depth */
} ParoCommModel;

/**
 * paro_coll_closed_form_s:
 * Time of one collective of total size @size_bytes over @scope, in seconds.
 */
double paro_coll_closed_form_s(const ParoCommModel *cm, ParoCollKind op, ParoScope scope,
                               double size_bytes);

/**
 * paro_coll_traffic:
 * Bytes one GPU sends over intra-group and inter-group links for the collective, with
 * global collectives accounted hierarchically (docs/strategies.md, "Traffic accounting") whatever
 * the algorithm.
 */
void paro_coll_traffic(const ParoCommModel *cm, ParoCollKind op, ParoScope scope, double size_bytes,
                       double *out_intra, double *out_inter);

/* The time of a collective over a scope, for the phases of the two-level algorithms. */
typedef double (*ParoPhaseTime)(ParoCollKind op, ParoScope scope, double size_bytes,
                                gpointer user_data);

/**
 * paro_coll_two_level_s:
 * A global collective as PaRO's two-level algorithms run it from the times of its phases
 * (over the m GPUs of a group, and over the n/m groups): AllGather = inter AllGather(S/m)
 * then intra AllGather(S); ReduceScatter = intra then inter; AllReduce = intra
 * ReduceScatter, inter AllReduce(S/m), intra AllGather. In sequence (hierarchical: the
 * sum), or with @overlap (ho-ring) cut into @chunks pieces that pipeline, each phase
 * paying its latency once a chunk: max + min/C for two stages, (sum)/C + (C-1)/C max for
 * three. The closed form (ring phases) and NCCL's model (coll/nccl.c) both compose this way.
 */
double paro_coll_two_level_s(ParoCollKind op, gboolean overlap, gint64 m, gint64 chunks,
                             double size_bytes, ParoPhaseTime phase, gpointer user_data);

/** paro_coll_ring_s: a ring over @k GPUs, @per_node of them on each node; exposed for tests. */
double paro_coll_ring_s(const ParoCommModel *cm, ParoCollKind op, gint64 k, gint64 per_node,
                        double size_bytes);

/**
 * paro_coll_alltoall_s:
 * An all-to-all over @k GPUs, @per_node of them a node, each holding @size_bytes of which
 * it sends 1/k to every other: the node's peers over the fabric and the rest through the
 * GPU's NIC share at once, one hop's latency (the slower link class sets the time).
 */
double paro_coll_alltoall_s(const ParoCommModel *cm, gint64 k, gint64 per_node, double size_bytes);

G_END_DECLS
