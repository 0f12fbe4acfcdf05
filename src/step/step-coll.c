/* SPDX-License-Identifier: MIT */
/* The communication of a step: data-parallel collectives, tensor-parallel collectives and
 * pipeline sends, each timed alone (collectives on the collective cache, coll/cache.c) and
 * described by the share of its GPU's links it takes, which is how concurrent tasks slow
 * each other in the step's graph (sched/taskgraph.h).
 *
 * With tp*pp > 1 the DP collectives of one (TP rank, stage) run over dp ranks, q = gpn/tp of
 * them per node (Megatron's layout), while the node's tp such rings share its NICs: they are
 * timed on a view of the cluster with dp/q nodes of q GPUs that keep their share of the NICs,
 * R q/gpn of them at full speed (one at a fraction of its speed when the share is less than a
 * NIC), and their own fabric links. (Until issue #14 the view kept all R NICs, each scaled
 * down by q/gpn, while each GPU used one rail: the DP collectives ran tp times too slowly.)
 * The pp stages sit on disjoint nodes and sync at once: with an oversubscribed leaf their
 * uplink sharing is not modelled.
 *
 * TP collectives take the closed-form ring over the node's fabric (coll/analytic.c:
 * 2(t-1)(alpha' + S/(t B')) per AllReduce), not a simulation on the node's link graph: that
 * graph gives a ring on an NVLink mesh one link's share of the GPU's bandwidth, where NCCL's
 * channels spread over all of them (its channel model is issue #14's).
 *
 * A task's share of a link: the bytes one GPU sends through it (hierarchical accounting,
 * coll/analytic.c) over the task's time and the link's bandwidth; the latency part of a
 * collective takes no bandwidth, so a small collective beside a large one slows neither. */
#include "step/step-private.h"

#include <math.h>

#include "coll/nccl.h"

static gboolean is_dp_only(const ParoScenario *s)
{
    return s->tp == 1 && s->pp == 1;
}

void paro_step_dp_cluster(const ParoScenario *s, ParoTopology *out)
{
    *out = *s->topology; /* shallow: the strings stay the scenario's */
    if (!is_dp_only(s)) {
        /* the q GPUs keep their share of the node's NICs, on as many rails as that share
         * fills (at least one): a GPU's ring leaves through its own rail */
        const ParoTopology *t = s->topology;
        gint64 q = paro_scenario_dp_per_node(s), gpn = t->gpus_per_node;
        double share = (double)t->nics.count * (double)q / (double)gpn;
        out->nodes = paro_scenario_dp_ranks(s) / q;
        out->gpus_per_node = q;
        out->nics.count = MAX(1, (gint64)floor(share + 1e-9));
        out->nics.bandwidth_Bps = t->nics.bandwidth_Bps * share / (double)out->nics.count;
    }
}

void paro_step_expert_view(const ParoScenario *s, ParoScenario *view, ParoTopology *topology)
{
    const ParoTopology *t = s->topology;
    ParoStateSizes all = paro_scenario_state_sizes(s), dense, experts;
    paro_scenario_param_groups(s, &all, &dense, &experts);
    /* the expert-data-parallel ranks of a node: its stage's GPUs over ep x etp, at least
     * one, timed as data parallelism alone on nodes of that many GPUs, each keeping its share
     * of the node's NICs (as paro_step_dp_cluster does) */
    gint64 n = experts.n;
    gint64 per_node = MIN(n, MAX(1, s->tp * paro_scenario_dp_per_node(s) / (s->ep * s->etp)));
    double nics = (double)t->nics.count * (double)per_node / (double)t->gpus_per_node;
    *topology = *t; /* shallow: the strings stay the scenario's */
    topology->gpus_per_node = per_node;
    topology->nodes = n / per_node;
    topology->nics.count = MAX(1, (gint64)floor(nics + 1e-9));
    topology->nics.bandwidth_Bps = t->nics.bandwidth_Bps * nics / (double)topology->nics.count;
    *view = *s;
    view->topology = topology;
    view->dp = n;
    view->tp = view->pp = view->cp = view->ep = view->etp = 1;
    view->group = experts.m;
}

ParoCommModel paro_step_dp_comm_model(const ParoScenario *s)
{
    if (is_dp_only(s))
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
    paro_coll_spec_init(&spec, &view, op, paro_coll_algorithm_for(op, s->algorithm),
                        paro_scenario_dp_ranks(s), s->group, size_bytes);
    spec.chunks = s->chunks;
    spec.scope = scope;
    return paro_coll_cache_time(cache, &view, &spec, s->coll_model, s->network, out, error);
}

double paro_step_link_share(double bytes, double seconds, double bandwidth_Bps)
{
    return seconds > 0 && bandwidth_Bps > 0 ? MIN(1.0, bytes / (seconds * bandwidth_Bps)) : 0;
}

double paro_step_dp_coll_sms(const ParoScenario *s, ParoScope scope)
{
    ParoTopology view;
    paro_step_dp_cluster(s, &view);
    gint64 n = paro_scenario_dp_ranks(s), m = s->group, ranks, per_node;
    switch (scope) {
    case PARO_SCOPE_INTRA:
        ranks = per_node = m;
        break;
    case PARO_SCOPE_INTER:
        ranks = n / m, per_node = 1;
        break;
    default:
        ranks = n, per_node = MIN(n, view.gpus_per_node);
        break;
    }
    if (ranks < 2 || view.gpu.traits.sms <= 0)
        return 0;
    ParoNcclSystem sys;
    paro_nccl_system_init(&sys, &view, ranks, per_node);
    return MIN(1.0, (double)sys.compute_channels / (double)view.gpu.traits.sms);
}

gboolean paro_step_dp_coll(const ParoScenario *s, const ParoCompression *compression,
                           ParoCollCache *cache, const ParoCollCall *call, double size_bytes,
                           ParoStepComm *out, GError **error)
{
    ParoCommModel cm = paro_step_dp_comm_model(s);
    ParoCompressCost cc = paro_compress_cost(
        &compression->kinds[paro_compress_tensor_of(call->phase)], call->op,
        paro_compress_ranks(call->scope, paro_scenario_dp_ranks(s), s->group), size_bytes);
    ParoTime net;
    if (!paro_step_dp_coll_time(s, cache, call->op, call->scope, cc.wire_bytes, &net, error))
        return FALSE;
    *out = (ParoStepComm){0};
    out->time = net;
    if (cc.applied && cc.codec_s > 0) /* else the simulated picoseconds, exactly */
        out->time = paro_time_from_s(paro_compress_time_s(&cc, paro_time_to_s(net)));
    out->codec_s = cc.codec_s;
    out->saved_bytes = paro_compress_saved_bytes(&cm, call->op, call->scope, size_bytes, &cc);
    double intra, inter, seconds = paro_time_to_s(out->time);
    paro_coll_traffic(&cm, call->op, call->scope, cc.wire_bytes, &intra, &inter);
    out->intra_share = paro_step_link_share(intra, seconds, cm.intra_Bps);
    out->inter_share = paro_step_link_share(inter, seconds, cm.inter_Bps);
    if (s->training.sm_contention)
        out->sms_share = paro_step_dp_coll_sms(s, call->scope);
    return TRUE;
}

/* One TP collective @op of a layer's activations S over the node's fabric, through the
 * activations' compressor: its time, and its compression cost in @cc. */
static double tp_collective_s(const ParoScenario *s, const ParoCommModel *cm,
                              const ParoCompression *compression, ParoCollKind op, double S,
                              ParoCompressCost *cc)
{
    *cc = paro_compress_cost(&compression->kinds[PARO_TENSOR_ACTIVATIONS], op, s->tp, S);
    return paro_compress_time_s(cc, paro_coll_ring_s(cm, op, s->tp, s->tp, cc->wire_bytes));
}

static double tp_activation_bytes(const ParoScenario *s)
{
    return paro_scenario_tokens_per_rank(s) * (double)s->model->hidden *
           paro_precision_bytes(s->training.precision);
}

gboolean paro_step_tp_layer(const ParoScenario *s, const ParoCompression *compression,
                            ParoCollCache *cache, gboolean backward, gboolean recomputed,
                            ParoStepComm *out, GError **error)
{
    *out = (ParoStepComm){0};
    if (s->tp == 1)
        return TRUE;
    const ParoTopology *t = s->topology;
    ParoCommModel cm = paro_scenario_comm_model(s);
    double S = tp_activation_bytes(s);
    ParoCollKind ops[2] = {PARO_COLL_ALLREDUCE, PARO_COLL_ALLREDUCE};
    int n_ops = 1;
    if (s->sequence_parallel)
        ops[0] = PARO_COLL_ALLGATHER, ops[1] = PARO_COLL_REDUCESCATTER, n_ops = 2;
    double count = backward && recomputed ? 4 : 2;
    double time_s = 0, bytes = 0;
    for (int i = 0; i < n_ops; i++) {
        ParoCompressCost cc;
        double passes = ops[i] == PARO_COLL_ALLREDUCE ? 2 : 1;
        double per_gpu = passes * (double)(s->tp - 1) / (double)s->tp;
        time_s += count * tp_collective_s(s, &cm, compression, ops[i], S, &cc);
        out->codec_s += count * cc.codec_s;
        out->saved_bytes += count * per_gpu * (S - cc.wire_bytes);
        bytes += count * per_gpu * cc.wire_bytes;
    }
    out->time = paro_time_from_s(time_s);
    out->intra_share = paro_step_link_share(bytes, time_s, t->fabric.bandwidth_Bps);
    return TRUE;
}

ParoTime paro_step_tp_exposed(const ParoScenario *s, const ParoLayerCost *lc, gboolean forward,
                              ParoTime time)
{
    double products =
        forward ? lc->gemm_forward_s
                : lc->gemm_s - lc->gemm_forward_s + (lc->recomputed ? lc->gemm_forward_s : 0);
    double t = paro_time_to_s(time);
    return paro_time_from_s(MAX(t / (double)s->tp, t - products));
}

/* The shares of a layer's forward products taken by its two column-parallel ones, the QKV
 * product and the MLP's first (both halves of a gated one), by FLOPs; a mixture of experts
 * runs each token's k experts. */
static void column_shares(const ParoModel *m, double *qkv, double *mlp_in)
{
    double q = (double)(m->heads * m->head_dim);
    double kv = (double)(m->kv_heads * m->head_dim), f = (double)m->ffn;
    double k = m->experts > 0 ? (double)m->experts_per_token : 1;
    double in = k * f * (m->mlp == PARO_MLP_GATED ? 2 : 1), out = k * f;
    double total = (q + 2 * kv) + q + in + out;
    *qkv = total > 0 ? (q + 2 * kv) / total : 0;
    *mlp_in = total > 0 ? in / total : 0;
}

ParoTime paro_step_tp_backward_async(const ParoScenario *s, const ParoCompression *compression,
                                     const ParoComputeSetup *c, const ParoLayerCost *lc)
{
    if (s->tp == 1)
        return 0;
    ParoCommModel cm = paro_scenario_comm_model(s);
    double S = tp_activation_bytes(s);
    ParoCompressCost cc;
    double shares[2];
    column_shares(s->model, &shares[0], &shares[1]);
    /* the weight gradients computed: none of a frozen LoRA base (compute.c's rule) */
    double wgrad = c->lora_targets != 0 ? 0 : c->trainable_share;
    double exposed = 0;
    if (s->sequence_parallel) {
        double ag = tp_collective_s(s, &cm, compression, PARO_COLL_ALLGATHER, S, &cc);
        double rs = tp_collective_s(s, &cm, compression, PARO_COLL_REDUCESCATTER, S, &cc);
        exposed = 2 * ag; /* the row-parallel products' output-gradient gathers */
        for (int k = 0; k < 2; k++) {
            double product = lc->gemm_forward_s * shares[k];
            exposed += MAX(0, rs - wgrad * product) + MAX(0, ag - product);
        }
    } else {
        double ar = tp_collective_s(s, &cm, compression, PARO_COLL_ALLREDUCE, S, &cc);
        for (int k = 0; k < 2; k++)
            exposed += MAX(0, ar - wgrad * lc->gemm_forward_s * shares[k]);
    }
    return paro_time_from_s(exposed);
}

gboolean paro_step_p2p_is_intra(const ParoScenario *s, gint64 from, gint64 to)
{
    gint64 per_stage = s->tp * paro_scenario_dp_ranks(s), gpn = s->topology->gpus_per_node;
    if (per_stage >= gpn)
        return FALSE; /* each stage has nodes of its own */
    gint64 stages_per_node = gpn / per_stage;
    return from / stages_per_node == to / stages_per_node;
}

ParoStepComm paro_step_p2p(const ParoScenario *s, const ParoCompression *compression,
                           gboolean intra)
{
    const ParoTopology *t = s->topology;
    double act = paro_scenario_tokens_per_rank(s) * (double)s->model->hidden *
                 paro_precision_bytes(s->training.precision) / (double)s->tp;
    ParoCompressCost cc =
        paro_compress_cost(&compression->kinds[PARO_TENSOR_PIPELINE], PARO_COLL_SENDRECV, 2, act);
    double bw = intra ? t->fabric.bandwidth_Bps : paro_topology_inter_Bps(t);
    double lat = intra ? t->fabric.latency_s : paro_topology_inter_latency_s(t);
    double net_s = lat + cc.wire_bytes / bw;
    double time_s = paro_compress_time_s(&cc, net_s);
    ParoStepComm c = {0};
    c.time = paro_time_from_s(time_s);
    c.codec_s = cc.codec_s;
    c.saved_bytes = act - cc.wire_bytes;
    c.intra_share = intra ? paro_step_link_share(cc.wire_bytes, time_s, bw) : 0;
    c.inter_share = intra ? 0 : paro_step_link_share(cc.wire_bytes, time_s, bw);
    return c;
}

double paro_step_stage_share(const ParoScenarioDerived *d, gint64 stage)
{
    const ParoScenario *s = d->scenario;
    if (s->pp == 1)
        return 1.0;
    gint64 L = (gint64)d->layers->len, S = s->pp * s->training.pipeline_virtual;
    double sum = 0;
    for (gint64 k = stage; k < S; k += s->pp) {
        gint64 first, count = paro_scenario_module_span(s, L, k, &first);
        for (gint64 l = first; l < first + count; l++)
            sum += g_array_index(d->layers, ParoLayerCost, l).weight_share;
    }
    return sum;
}
