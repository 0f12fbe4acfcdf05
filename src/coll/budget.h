/* SPDX-License-Identifier: MIT */
/* What simulating a collective costs, estimated before it runs (issue #16 H1-H3): the
 * sends of a simulation (one per ring step, member and channel, or per piece of a chain
 * or tree), weighted by the GPUs of a node, whose flows share links and make each solve
 * of the max-min network dearer. Measured on the 2-core machine of 2026 (explicit rings
 * of 256 to 2,048 GPUs of 8 a node, ho-ring, aggregated nodes of 128 to 512 GPUs): about
 * 0.8 us per weighted send, within a factor of two. Commands refuse at once what would
 * take longer than paro_limit_work_seconds instead of running for minutes. */
#pragma once

#include "coll/simulate.h"

G_BEGIN_DECLS

typedef struct {
    double sends;    /* transfers the simulation starts */
    double weight;   /* cost of one relative to a send among 8 GPUs a node */
    double seconds;  /* estimated wall time on the reference machine */
    gint64 tracked;  /* GPUs simulated: a node's (aggregated) or all of them (explicit) */
    gint64 steps;    /* ring steps after merging, summed over the stages, or pieces */
    gint64 channels; /* rings per phase */
    gint64 chunks;   /* pipelined chunks (ho-ring), else 1 */
} ParoCollWork;

/** paro_coll_estimate: the work of paro_coll_simulate(@graph, @spec), without running it. */
ParoCollWork paro_coll_estimate(const ParoGraph *graph, const ParoCollSpec *spec);

/** paro_coll_work_describe: "16,384 GPUs simulated x 1 channel x 1,024 ring steps x 1
 * chunk" (transfer full), for messages. */
char *paro_coll_work_describe(const ParoCollWork *work);

G_END_DECLS
