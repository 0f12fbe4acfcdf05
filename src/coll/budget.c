/* SPDX-License-Identifier: MIT */
/* The estimate mirrors simulate.c's shape of a run: its stages (one ring phase, or two or
 * three for hierarchical and ho-ring), the members of each ring, the ring steps merged
 * into at most max_steps macro-steps, the members tracked (a node's in the aggregated
 * mode) and the chunks; tree.c's transfers are four per GPU and piece, two where tree 1
 * is folded onto tree 0; alltoall.c's flows one per tracked GPU and peer. */
#include "coll/budget.h"

#include "core/limits.h"

/* Seconds per send, measured (see budget.h): by events, and by the recurrence of a ring
 * phase that shares no link (14-15 ns on explicit rings of 16,384 and 131,072 GPUs). */
#define SECONDS_PER_SEND 0.5e-6
/* A tree's transfer, with its flow's latency event and solve: 1.43 s for the 2.1 million
 * of a 131,072-GPU tree AllReduce (tree 0's; 2026-11-26, bench/README.md). */
#define SECONDS_PER_TREE_TRANSFER 0.65e-6
#define SECONDS_PER_RECURRED_SEND 20e-9
/* An all-to-all (coll/alltoall.c), 2026-11-28 on a 2-core machine, dgx-h100x8, 1 GiB: each
 * route a tracked GPU finds to a peer, with the solves of the few classes they fall in
 * (aggregated: 0.29 s for 16,384 GPUs' 131,064 routes, 0.85 s for 131,072 GPUs' 1,048,568),
 * and each flow of an explicit graph, where every peer's route is its own class (0.71 s for
 * 256 GPUs' 65,280 flows, 2.84 s for 512, 12.1 s for 1,024 GPUs' 1,047,552). */
#define SECONDS_PER_ALLTOALL_ROUTE 2.5e-6
#define SECONDS_PER_ALLTOALL_FLOW 12e-6
/* Below this many seconds by events, not worth finding the routes to ask. */
#define RECURRENCE_WORTH_ASKING_S 0.05

static gint64 ring_steps(ParoCollKind op, gint64 k, gint64 max_steps)
{
    if (k <= 1)
        return 0;
    gint64 steps = op == PARO_COLL_ALLREDUCE ? 2 * (k - 1) : op == PARO_COLL_SENDRECV ? 1 : k - 1;
    return MAX(1, MIN(steps, max_steps));
}

ParoCollWork paro_coll_estimate(const ParoGraph *g, ParoNetFidelity fidelity,
                                const ParoCollSpec *spec)
{
    ParoCollWork w = {0};
    gint64 n = MAX(1, spec->n), m = MAX(1, spec->m);
    w.tracked = MIN(n, paro_graph_instantiated_gpus(g));
    w.channels = MAX(1, spec->channels);
    w.chunks = 1;
    gint64 pieces = MAX(1, spec->chunks), max_steps = MAX(1, spec->max_steps);
    if (spec->op == PARO_COLL_ALLTOALL) {
        /* every tracked GPU's flow to each other member of its communicator */
        gint64 k = spec->scope == PARO_SCOPE_INTRA   ? m
                   : spec->scope == PARO_SCOPE_INTER ? n / m
                                                     : n;
        w.steps = 1;
        w.channels = 1;
        w.peers = k - 1;
        w.sends = (double)w.tracked * (double)(k - 1);
        w.seconds = w.sends * (paro_graph_is_aggregated(g) ? SECONDS_PER_ALLTOALL_ROUTE
                                                           : SECONDS_PER_ALLTOALL_FLOW);
        return w;
    }
    if (spec->algorithm == PARO_ALGO_TREE && spec->scope == PARO_SCOPE_GLOBAL &&
        spec->op == PARO_COLL_ALLREDUCE) {
        w.tracked = n;
        w.steps = pieces;
        /* tree 1 mirrors tree 0 and is not simulated where the graph is its own mirror */
        g_autofree guint *mirror = g_new(guint, paro_graph_n_links(g));
        w.sends = (paro_coll_tree_folds(g, spec, mirror) ? 2.0 : 4.0) * (double)n * (double)pieces;
    } else if (spec->op == PARO_COLL_BROADCAST) {
        w.steps = pieces;
        w.sends = (double)w.tracked * (double)w.channels * (double)pieces;
    } else {
        gint64 k_global = n, k_intra = m, k_inter = n / m;
        gboolean staged = spec->scope == PARO_SCOPE_GLOBAL && spec->algorithm != PARO_ALGO_RING;
        if (!staged) {
            gint64 k = spec->scope == PARO_SCOPE_INTRA   ? k_intra
                       : spec->scope == PARO_SCOPE_INTER ? k_inter
                                                         : k_global;
            w.steps = ring_steps(spec->op, k, max_steps);
        } else {
            /* intra ReduceScatter/AllGather around an inter phase of the same op */
            gboolean allreduce = spec->op == PARO_COLL_ALLREDUCE;
            w.steps =
                ring_steps(allreduce ? PARO_COLL_REDUCESCATTER : spec->op, k_intra, max_steps) +
                ring_steps(spec->op, k_inter, max_steps) +
                (allreduce ? ring_steps(PARO_COLL_ALLGATHER, k_intra, max_steps) : 0);
            if (spec->algorithm == PARO_ALGO_HO_RING)
                w.chunks = pieces;
        }
        w.sends = (double)w.tracked * (double)w.channels * (double)w.steps * (double)w.chunks;
    }
    gboolean tree = spec->algorithm == PARO_ALGO_TREE && spec->scope == PARO_SCOPE_GLOBAL &&
                    spec->op == PARO_COLL_ALLREDUCE;
    w.seconds = w.sends * (tree ? SECONDS_PER_TREE_TRANSFER : SECONDS_PER_SEND);
    if (!tree && w.seconds > RECURRENCE_WORTH_ASKING_S) {
        w.recurred = paro_coll_recurred_share(g, fidelity, spec);
        w.seconds = w.sends *
                    ((1 - w.recurred) * SECONDS_PER_SEND + w.recurred * SECONDS_PER_RECURRED_SEND);
    }
    return w;
}

char *paro_coll_work_describe(const ParoCollWork *w)
{
    g_autofree char *tracked = paro_format_count((double)w->tracked);
    g_autofree char *steps = paro_format_count((double)w->steps);
    g_autofree char *chunks = paro_format_count((double)w->chunks);
    g_autofree char *sends = paro_format_count(w->sends);
    if (w->peers > 0) {
        g_autofree char *peers = paro_format_count((double)w->peers);
        return g_strdup_printf("%s GPUs simulated x %s peer%s = %s flows", tracked, peers,
                               w->peers == 1 ? "" : "s", sends);
    }
    g_autofree char *by_recurrence =
        w->recurred >= 1  ? g_strdup(", by recurrence (no link shared)")
        : w->recurred > 0 ? g_strdup_printf(", %.0f%% of them by recurrence", 100 * w->recurred)
                          : g_strdup("");
    return g_strdup_printf("%s GPUs simulated x %" G_GINT64_FORMAT " channel%s x %s steps x %s "
                           "chunk%s = %s sends%s",
                           tracked, w->channels, w->channels == 1 ? "" : "s", steps, chunks,
                           w->chunks == 1 ? "" : "s", sends, by_recurrence);
}
