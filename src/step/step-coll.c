/* SPDX-License-Identifier: MIT */
/* The data-parallel collectives of a step, timed on the collective cache (coll/cache.c).
 *
 * With tp*pp > 1 the DP collectives of one (TP rank, stage) run over dp ranks, gpn/tp of
 * them per node (Megatron's layout), while the node's tp such rings share its NICs: they are
 * simulated on a view of the cluster with dp/(gpn/tp) nodes of gpn/tp GPUs, each GPU keeping
 * its own share of the NICs (NIC bandwidth x (gpn/tp)/gpn) and its own fabric links. The pp
 * stages sit on disjoint nodes and sync at once: with an oversubscribed leaf their uplink
 * sharing is not modelled. */
#include "step/step-private.h"

void paro_step_dp_cluster(const ParoScenario *s, ParoTopology *out)
{
    *out = *s->topology; /* shallow: the strings stay the scenario's */
    if (paro_scenario_is_3d(s)) {
        const ParoTopology *t = s->topology;
        gint64 q = paro_scenario_dp_per_node(s);
        out->nodes = s->dp / q;
        out->gpus_per_node = q;
        out->nics.bandwidth_Bps = t->nics.bandwidth_Bps * (double)q / (double)t->gpus_per_node;
    }
}

ParoCommModel paro_step_dp_comm_model(const ParoScenario *s)
{
    if (!paro_scenario_is_3d(s))
        return paro_scenario_comm_model(s);
    ParoTopology view;
    paro_step_dp_cluster(s, &view);
    ParoScenario flat = *s;
    flat.topology = &view;
    flat.tp = flat.pp = 1;
    return paro_scenario_comm_model(&flat);
}

gboolean paro_step_dp_coll_time(const ParoScenario *s, ParoCollCache *cache, ParoCollKind op,
                                ParoScope scope, double size_bytes, ParoTime *out, GError **error)
{
    ParoTopology view;
    paro_step_dp_cluster(s, &view);
    ParoCollSpec spec;
    paro_coll_spec_init(&spec, &view, op, paro_coll_algorithm_for(op, (ParoAlgorithm)s->algorithm),
                        paro_scenario_n_gpus(s), s->group, size_bytes);
    spec.chunks = s->chunks;
    spec.scope = scope;
    return paro_coll_cache_time(cache, &view, &spec, (ParoNetFidelity)s->network, out, error);
}
