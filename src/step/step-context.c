/* SPDX-License-Identifier: MIT */
/* The per-layer communication of context and expert parallelism (decision 71), beside the
 * TP collectives of step-coll.c, each timed in closed form on the cluster's alpha-beta
 * links (coll/analytic.c) and issued on the compute stream after its layer's kernels, as
 * Megatron-Core and Transformer Engine block on them.
 *
 * Placement (Megatron-Core's rank order: TP, then CP, then DP, with EP inside DP x CP): a
 * CP or EP group of k ranks holds min(k, GPUs per node / tp) of them a node; one that spans
 * nodes leaves through each GPU's share of the NICs.
 *
 * Context parallelism, per layer and micro-batch, with kv = a rank's s/cp tokens' keys and
 * values on one TP rank (paro_scenario_cp_kv_bytes):
 *   ring       forward cp-1 sends of kv to the next rank, each behind one block of the
 *              attention (1/cp of it): exposed (cp-1) max(0, send - block); backward the
 *              same with kv and its gradient (2 kv) behind the backward's blocks
 *              (Transformer Engine's AttnFuncWithCPAndKVP2P);
 *   allgather  forward an AllGather of the cp blocks of K and V, backward a ReduceScatter
 *              of their gradients, in series (torchtitan, Llama 3);
 *   alltoall   forward four all-to-alls (q, k, v before the attention, its output after),
 *              backward four of their gradients (DeepSpeed-Ulysses).
 * A recomputed layer's backward runs its forward's again.
 *
 * Expert parallelism, per MoE layer and micro-batch: a dispatch and a combine all-to-all
 * over the ep ranks forward, two backward (and two more recomputing the forward), each of
 * a TP rank's tokens x top-k x hidden x bytes (sequence parallelism hands each TP rank
 * its share of the tokens), scaled by the hottest rank's load (training.moe); in series
 * with the layer (no framework profile overlaps them by default). */
#include "step/step-private.h"

#include <math.h>

/* Ranks of a CP or EP group of @k on one node: the GPUs a node gives one TP rank. */
static gint64 group_per_node(const ParoScenario *s, gint64 k)
{
    return MAX(1, MIN(k, s->topology->gpus_per_node / s->tp));
}

/* One send of @bytes between neighbouring CP ranks, all ranks at once: over the fabric, or
 * through the GPU's NIC share when the ring leaves the node (its slowest hop sets the pace). */
static double ring_send_s(const ParoScenario *s, const ParoCommModel *cm, double bytes)
{
    gboolean spans = s->cp > group_per_node(s, s->cp);
    return spans ? cm->inter_lat_s + bytes / fmin(cm->intra_Bps, cm->inter_Bps)
                 : cm->intra_lat_s + bytes / cm->intra_Bps;
}

/* The link shares of @bytes sent in @seconds by a group that @spans nodes (its NIC share)
 * or not (the fabric). */
static void group_shares(const ParoCommModel *cm, gboolean spans, double bytes, double seconds,
                         ParoStepComm *out)
{
    if (spans)
        out->inter_share = paro_step_link_share(bytes, seconds, cm->inter_Bps);
    else
        out->intra_share = paro_step_link_share(bytes, seconds, cm->intra_Bps);
}

/* One pass of a layer's CP communication: what it leaves exposed and the bytes it sends. */
static double cp_pass_s(const ParoScenario *s, const ParoCommModel *cm, gboolean backward,
                        double attention_s, double *bytes)
{
    double kv = paro_scenario_cp_kv_bytes(s, s->tp), cp = (double)s->cp;
    gint64 per_node = group_per_node(s, s->cp);
    switch (s->cp_algorithm) {
    case PARO_CP_RING: {
        double block = backward ? 2.0 * kv : kv;
        *bytes += (cp - 1.0) * block;
        return (cp - 1.0) * MAX(0.0, ring_send_s(s, cm, block) - attention_s / cp);
    }
    case PARO_CP_ALLGATHER: {
        ParoCollKind op = backward ? PARO_COLL_REDUCESCATTER : PARO_COLL_ALLGATHER;
        *bytes += (cp - 1.0) * kv;
        return paro_coll_ring_s(cm, op, s->cp, per_node, cp * kv);
    }
    case PARO_CP_ALLTOALL: {
        const ParoModel *m = s->model;
        double token = paro_scenario_tokens_per_rank(s) *
                       paro_precision_bytes(s->training.precision) / (double)s->tp;
        double q = token * (double)m->heads * (double)m->head_dim, k = kv / 2.0;
        double sizes[4] = {q, k, k, q}, time = 0;
        for (int i = 0; i < 4; i++) {
            time += paro_coll_alltoall_s(cm, s->cp, per_node, sizes[i]);
            *bytes += sizes[i] * (cp - 1.0) / cp;
        }
        return time;
    }
    }
    g_assert_not_reached();
}

ParoStepComm paro_step_cp_layer(const ParoScenario *s, const ParoLayerCost *lc, gboolean backward)
{
    ParoStepComm out = {0};
    if (s->cp == 1 || !s->model->has_shape)
        return out;
    ParoCommModel cm = paro_scenario_comm_model(s);
    double bytes = 0, forward_attention = lc->attention_forward_s;
    double time = cp_pass_s(s, &cm, FALSE, forward_attention, &bytes);
    if (backward) {
        double redo = lc->recomputed ? time : 0, redo_bytes = lc->recomputed ? bytes : 0;
        bytes = 0;
        time = cp_pass_s(s, &cm, TRUE, lc->attention_s - forward_attention, &bytes) + redo;
        bytes += redo_bytes;
    }
    out.time = paro_time_from_s(time);
    group_shares(&cm, s->cp > group_per_node(s, s->cp), bytes, time, &out);
    return out;
}

ParoStepComm paro_step_ep_layer(const ParoScenario *s, gboolean backward, gboolean recomputed)
{
    ParoStepComm out = {0};
    const ParoModel *m = s->model;
    if (s->ep == 1 || m->experts == 0)
        return out;
    ParoCommModel cm = paro_scenario_comm_model(s);
    double bytes = paro_scenario_tokens_per_rank(s) / (double)s->tp * paro_model_routes(m) *
                   (double)m->hidden * paro_precision_bytes(s->training.precision) *
                   paro_scenario_moe_load(s);
    double count = backward ? (recomputed ? 4.0 : 2.0) : 2.0;
    /* expert-parallel ranks follow the expert tensor-parallel ones on a node */
    gint64 per_node = MAX(1, MIN(s->ep, s->topology->gpus_per_node / s->etp));
    double time = count * paro_coll_alltoall_s(&cm, s->ep, per_node, bytes);
    out.time = paro_time_from_s(time);
    double sent = count * bytes * (double)(s->ep - 1) / (double)s->ep;
    group_shares(&cm, s->ep > per_node, sent, time, &out);
    return out;
}
