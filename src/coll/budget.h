/* SPDX-License-Identifier: MIT */
/* What simulating a collective costs, estimated before it runs (issue #16 H1-H3): the
 * sends of a simulation (one per ring step, member and channel, or per piece of a chain
 * or tree). Measured on the 2-core machine of 2026-11-26 with the incremental max-min
 * solver (explicit rings of 2,048 to 4,096 GPUs of 8 a node, hierarchical on 8,192,
 * ho-ring on 1,024 and 2,048, aggregated nodes of 128 and 256 GPUs): 0.35 to 0.65 us per
 * send, 0.5 taken. Before that solver, each solve visited every flow of a node, and a
 * send cost 0.8 us times 1 + (GPUs of a node) / 100. Commands refuse at once what would
 * take longer than paro_limit_work_seconds instead of running for minutes. A lone ring
 * phase whose connections share no link is timed by its recurrence (coll/recurrence.c) at
 * 14-15 ns a send (explicit rings of 16,384 and 131,072 GPUs, 2026-11-26), 20 ns taken;
 * where only some stages' phases are (ho-ring's inter-node one), each share at its rate. */
#pragma once

#include "coll/simulate.h"

G_BEGIN_DECLS

typedef struct {
    double sends;    /* transfers the simulation starts */
    double seconds;  /* estimated wall time on the reference machine */
    gint64 tracked;  /* GPUs simulated: a node's (aggregated) or all of them (explicit) */
    gint64 steps;    /* ring steps after merging, summed over the stages, or pieces */
    gint64 channels; /* rings per phase */
    gint64 chunks;   /* pipelined chunks (ho-ring), else 1 */
    double recurred; /* share of the sends timed by recurrence (paro_coll_recurred_share) */
    gint64 peers;    /* an all-to-all's: flows from each tracked GPU (0: rings, trees) */
} ParoCollWork;

/** paro_coll_estimate: the work of paro_coll_simulate(@graph, @fidelity, @spec), without
 * running it. */
ParoCollWork paro_coll_estimate(const ParoGraph *graph, ParoNetFidelity fidelity,
                                const ParoCollSpec *spec);

/** paro_coll_work_describe: "16,384 GPUs simulated x 1 channel x 1,024 ring steps x 1
 * chunk" ("4,096 GPUs simulated x 4,095 peers = 16,773,120 flows" for an all-to-all)
 * (transfer full), for messages. */
char *paro_coll_work_describe(const ParoCollWork *work);

G_END_DECLS
