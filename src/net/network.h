/* SPDX-License-Identifier: MIT */
/* Flow-level network model. A transfer pays its route's latency, then moves its bytes at
 * a rate shared max-min fairly with the other flows on its links, re-solved whenever a
 * flow starts or ends (progressive filling), for the flows connected to it only. A flow may
 * stand for several identical flows: its weight on a link is how many of them cross one
 * instance of that link, which is how the aggregated (symmetric) mode keeps one
 * representative of each flow class.
 * The analytic fidelity never re-solves: a transfer pays its latency, then moves at the rate
 * of its slowest link shared by weight with the flows on it when it begins (those beginning
 * at the same instant included), and keeps that rate to its end. */
#pragma once

#include <glib.h>

#include "core/engine.h"

G_BEGIN_DECLS

typedef enum { PARO_NET_MAXMIN, PARO_NET_ANALYTIC } ParoNetFidelity;
extern const char *const paro_net_fidelity_names[]; /* "maxmin", "analytic", NULL */

typedef struct _ParoNetwork ParoNetwork;

typedef void (*ParoFlowDone)(ParoNetwork *net, gpointer user_data);

/**
 * paro_network_new:
 * @capacities: bytes/s of each link, one direction (copied)
 * The network registers itself with @engine, which must outlive it.
 */
ParoNetwork *paro_network_new(ParoEngine *engine, ParoNetFidelity fidelity,
                              const double *capacities, guint n_links);
void paro_network_free(ParoNetwork *net);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ParoNetwork, paro_network_free)

/**
 * paro_network_set_never_limiting:
 * @link: a link that can never limit a max-min allocation (paro_graph_never_limiting)
 * The max-min solver leaves it out of its components and fills, so flows that share only
 * such a link are solved apart; its bytes are still counted. The allocation is the same,
 * as a constraint that no allocation can break changes nothing (in floating point, a
 * share the link would have tied with the NICs' could round differently). Nothing with the
 * analytic fidelity, whose rate is the slowest link's. Set before the first flow starts.
 */
void paro_network_set_never_limiting(ParoNetwork *net, guint link);

/**
 * paro_network_start:
 * @links, @weights: the route and each link's weight (copied); n_links may be 0
 * @bytes: payload of one flow of the class
 * @latency: paid before the bandwidth phase
 * Starts a transfer now; @done runs at its completion.
 */
void paro_network_start(ParoNetwork *net, const guint *links, const double *weights, guint n_links,
                        double bytes, ParoTime latency, ParoFlowDone done, gpointer user_data);

/**
 * paro_network_record:
 * @carried: bytes one instance of @link has carried in all, now: paro_network_carried's
 *   value with the caller's sends (bytes x weight) added onto it one by one in time order,
 *   as the solver retires them, so the sum rounds as the events' does
 * @residual: its capacity left while its flows moved, as the max-min fill leaves it
 * Flows that their caller timed without the solver (coll/recurrence.c: ring phases whose
 * groups of connections move in lockstep, so every solve would be the same): their bytes
 * are carried and, with the max-min fidelity, the link's utilisation noted as a solve
 * would. No flow joins.
 */
void paro_network_record(ParoNetwork *net, guint link, double carried, double residual);

/** paro_net_duration_ps: @bytes at @rate, rounded up to the picosecond as the solver
 * times a flow's end; 0 for nothing to move. */
ParoTime paro_net_duration_ps(double bytes, double rate);

/** paro_network_carried: bytes carried so far by one instance of @link. */
double paro_network_carried(const ParoNetwork *net, guint link);

/** paro_network_max_utilisation: the highest sum(weight*rate)/capacity seen on any link
 * at any solve (1 at most, up to rounding); for conservation tests. */
double paro_network_max_utilisation(const ParoNetwork *net);

/** paro_network_n_solves: max-min solves so far, one per component of flows re-solved (for
 * benchmarks). */
guint64 paro_network_n_solves(const ParoNetwork *net);

/** paro_network_n_flow_solves: the flows those solves set a rate for, summed: what an
 * incremental solver saves shows here (a solve of everything would count every active flow
 * each time). */
guint64 paro_network_n_flow_solves(const ParoNetwork *net);

ParoEngine *paro_network_get_engine(const ParoNetwork *net);

G_END_DECLS
