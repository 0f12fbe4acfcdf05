/* SPDX-License-Identifier: MIT */
/* The training step with tensor (tp) and pipeline (pp) parallelism and a PaRO/ZeRO strategy
 * on the data-parallel (dp) dimension, for the representative stage.
 *
 * Model. Step = pipeline makespan (pipe/, the scenario's schedule over pp devices, M = A
 * micro-batches) + the DP phase (gradient sync, optimizer, parameter sync, in sequence).
 * - Module times: the per-layer forward/backward compute of the module's layers divided by
 *   tp, plus per layer the TP collectives, which block the layer (Megatron): forward 2
 *   AllReduces of S = b*s*h*bytes over tp GPUs (with sequence parallelism AllGather +
 *   ReduceScatter pairs, the same bytes), backward 2 more, and 2 more again when full
 *   recomputation re-runs the forward. Their time is the closed-form ring on the intra-node
 *   fabric (coll/analytic.c): 2(t-1)(alpha' + S/(t B')) per AllReduce. The strategy's
 *   per-micro-batch DP collectives (parameter gathers, gradient reduce-scatters) of the
 *   module's share of the stage overlap the layers' compute, prefetched layer by layer
 *   and module by module (paro_step3d_module_s).
 * - p2p between stages: b*s*h*bytes/tp per micro-batch and boundary (Megatron's
 *   scatter-gather split across the TP ranks) at the per-GPU inter-node bandwidth and latency.
 * - DP collectives: the strategy's calls over n = dp ranks, simulated on the DP view of the
 *   cluster (coll-cache.c): the dp ranks of one (TP rank, stage) hold gpn/tp GPUs per node.
 * - Parameters: those of stage 0, the stage every figure is taken on (it holds the most
 *   activations under 1F1B): its share of the layers plus the input embedding (Megatron
 *   keeps the embedding on the first stage and the head, or the tied embedding's copy, on
 *   the last; the head is no larger than the input embedding, so stage 0 holds the most
 *   parameters too, and its DP phase ends the step), over tp (paro_step3d_stage_share).
 *   Compute follows model/compute.c's layers, whose last one carries the head's matmul,
 *   so the last stage is the busiest device and the compute column is taken there.
 * - Memory: the strategy's model states of the stage's share over dp; activations per
 *   layer per Korthikanti (paro_model_activation_bytes_tp) x the stage's layers per module
 *   x the most (module, micro-batch) pairs the pipeline holds on a device; with full
 *   recomputation one layer's full activations during its backward; gathered parameters
 *   (2 layers) when p != N; NCCL buffers, workspace and overhead as the DP-only step.
 * - Guideline beside it: the textbook bubble (A + (pp-1)/v) x the slowest device's module
 *   time per micro-batch + the DP phase. */
#include "step/step-private.h"

#include "coll/analytic.h"
#include "pipe/pipe.h"

/* Network time combined with codec time of one DP collective of @size over the DP view. */
static gboolean dp_coll(const ParoScenario *sc, const ParoStateSizes *z, const ParoCommModel *dpcm,
                        ParoCollCache *cache, const ParoCollCall *call, double size, double *io_s,
                        double *io_codec_s, double *io_saved, GError **error)
{
    ParoCompressCost cc =
        paro_compress_cost(&sc->compression.kinds[paro_compress_tensor_of(call->phase)], call->op,
                           paro_compress_ranks(call->scope, z->n, z->m), size);
    ParoTime d;
    if (!paro_step_dp_coll_time(sc, cache, call->op, call->scope, cc.wire_bytes, &d, error))
        return FALSE;
    *io_s += paro_compress_time_s(&cc, paro_time_to_s(d));
    *io_codec_s += cc.codec_s;
    *io_saved += paro_compress_saved_bytes(dpcm, call->op, call->scope, size, &cc);
    return TRUE;
}

/* One TP collective of @op over tp GPUs of a node, with the activations' compressor: a
 * ring sends (k-1)/k S per GPU per pass, two passes for an AllReduce. */
static void tp_coll(const ParoScenario *sc, const ParoCommModel *cm, ParoCollKind op, double size,
                    ParoStep3dComm *io)
{
    ParoCompressCost cc =
        paro_compress_cost(&sc->compression.kinds[PARO_TENSOR_ACTIVATIONS], op, sc->tp, size);
    io->time_s +=
        paro_compress_time_s(&cc, paro_coll_ring_s(cm, op, sc->tp, sc->tp, cc.wire_bytes));
    io->codec_s += cc.codec_s;
    double passes = op == PARO_COLL_ALLREDUCE ? 2 : 1;
    io->saved_bytes += passes * (double)(sc->tp - 1) / (double)sc->tp * (size - cc.wire_bytes);
}

ParoStep3dComm paro_step3d_tp_layer(const ParoScenario *sc, gboolean backward)
{
    ParoStep3dComm one = {0};
    if (sc->tp == 1)
        return one;
    ParoCommModel cm = paro_scenario_comm_model(sc);
    double S = (double)sc->training.micro_batch * (double)sc->training.sequence *
               (double)sc->model->hidden * paro_precision_bytes(sc->training.precision);
    if (sc->sequence_parallel) {
        tp_coll(sc, &cm, PARO_COLL_ALLGATHER, S, &one);
        tp_coll(sc, &cm, PARO_COLL_REDUCESCATTER, S, &one);
    } else {
        tp_coll(sc, &cm, PARO_COLL_ALLREDUCE, S, &one);
    }
    double count = backward && sc->training.recompute == PARO_RECOMPUTE_FULL ? 4 : 2;
    return (ParoStep3dComm){count * one.time_s, count * one.codec_s, count * one.saved_bytes};
}

double paro_step3d_stage_share(const ParoModel *m, gint64 pp)
{
    double all = paro_model_shape_params(m);
    if (all <= 0)
        return 1.0 / (double)pp; /* a parameter count only: balanced stages */
    double h = (double)m->hidden, v = (double)m->vocab;
    double input = v * h + (double)m->position_embeddings * h;
    double head = m->tied_embeddings ? 0 : v * h;
    if (pp == 1)
        return 1.0;
    return ((all - input - head) / (double)pp + input) / all;
}

/* A module's time for one micro-batch: its layers' compute (TP collectives included) and
 * the strategy's DP collectives of those layers. With overlap, each layer's DP collective
 * runs on the communication stream beside its neighbour's compute (the next layer's
 * gather prefetched, the previous layer's gradients reduced), as in the DP-only step with
 * prefetch 1, and across modules too: the gather of a device's next module runs during
 * its current one, as FSDP prefetches the next module. Uniform layers then take
 * max(c, d) each in steady state, k max(c, d) a module of k layers of compute c and
 * collectives d; the stream's fill, min(c, d), is paid once a step
 * (paro_step3d_dp_fill_s). Without overlap, in series. */
double paro_step3d_module_s(double compute, double comm, gboolean overlap)
{
    if (!overlap || comm == 0)
        return compute + comm;
    return MAX(compute, comm); /* k max(c, d) = max(C, D) for uniform layers */
}

double paro_step3d_dp_fill_s(double compute, double comm, gint64 layers, gboolean overlap)
{
    if (!overlap || comm == 0)
        return 0;
    return MIN(compute, comm) / (double)layers;
}

ParoStateSizes paro_step3d_sizes(const ParoScenario *sc)
{
    ParoStateSizes z = paro_scenario_state_sizes(sc);
    double share = paro_step3d_stage_share(sc->model, sc->pp) / (double)sc->tp;
    z.params *= share;
    z.trainable *= share;
    return z;
}

gboolean paro_step3d_simulate(const ParoScenarioDerived *d, const ParoStrategy *st,
                              ParoCollCache *cache, const ParoStepOptions *o, ParoStepResult *out,
                              GError **error)
{
    /* Without compression: a shallow twin of the scenario with the preset none. */
    ParoScenario plain = *d->scenario;
    if (!o->compress)
        paro_compression_preset(&plain.compression, PARO_COMPRESS_NONE);
    const ParoScenario *sc = &plain;
    gboolean keep_trace = o->keep_trace;
    const ParoTopology *t = sc->topology;
    const ParoComputeSetup setup = d->compute;
    GArray *layers = d->layers;
    ParoStateSizes z = paro_step3d_sizes(sc);
    ParoCommModel dpcm = paro_step_dp_comm_model(sc);
    g_autoptr(GArray) calls = g_array_new(FALSE, FALSE, sizeof(ParoCollCall));
    paro_strategy_collectives(st, &z, calls);
    gint64 P = sc->pp, v = sc->training.pipeline_virtual, S = P * v, L = (gint64)layers->len;
    gint64 A = sc->training.accumulation, per_module = L / S;
    double codec_s = 0, saved = 0, tp_s = 0, dp_micro_s = 0;
    /* Per micro-batch DP collectives of one module (1/v of the stage's share), with their
     * codec time and saved bytes for one (module, micro-batch) pass. Issued layer by layer,
     * as frameworks do (a layer's gather, a layer's reduce-scatter): per_module collectives
     * of a layer's share each, so every one pays its latency terms, which at thousands of
     * ranks (2(k-1) ring steps) outweigh the bytes. */
    double gather_f = 0, gather_b = 0, reduce = 0, micro_codec_s = 0, micro_saved = 0;
    for (guint i = 0; i < calls->len; i++) {
        const ParoCollCall *c = &g_array_index(calls, ParoCollCall, i);
        double *slot = c->phase == PARO_PHASE_FORWARD    ? &gather_f
                       : c->phase == PARO_PHASE_BACKWARD ? &gather_b
                       : c->phase == PARO_PHASE_GRADIENT ? &reduce
                                                         : NULL;
        double layer_s = 0, layer_codec_s = 0, layer_saved = 0;
        if (slot && !dp_coll(sc, &z, &dpcm, cache, c, c->size_bytes / (double)(v * per_module),
                             &layer_s, &layer_codec_s, &layer_saved, error))
            return FALSE;
        if (slot) {
            *slot += (double)per_module * layer_s;
            micro_codec_s += (double)per_module * layer_codec_s;
            micro_saved += (double)per_module * layer_saved;
        }
    }
    /* Layered accumulation (Lamy-Poirier 2021): a module's micro-batches run back to back,
     * so its parameters are gathered once per pass and its gradients reduced once per step,
     * not once per micro-batch: the DP traffic of sharded strategies drops by A. Spread over
     * the module's A tasks, so the pipeline sees the same total. */
    gboolean layered = sc->training.accumulation_order == PARO_PIPE_LAYERED;
    double per_pass = layered ? 1.0 / (double)A : 1.0;
    gather_f *= per_pass;
    gather_b *= per_pass;
    reduce *= per_pass;
    /* v modules a device, A micro-batches each (or one pass of them, layered). */
    double micro_passes = (double)A * (double)v * per_pass;
    codec_s += micro_passes * micro_codec_s;
    saved += micro_passes * micro_saved;
    ParoStep3dComm tp_fwd = paro_step3d_tp_layer(sc, FALSE),
                   tp_bwd = paro_step3d_tp_layer(sc, TRUE);
    double tp_f = tp_fwd.time_s, tp_b = tp_bwd.time_s;
    /* Every layer of the stage runs its TP collectives for each of the A micro-batches. */
    double tp_calls = (double)A * (double)per_module * (double)v;
    codec_s += tp_calls * (tp_fwd.codec_s + tp_bwd.codec_s);
    saved += tp_calls * (tp_fwd.saved_bytes + tp_bwd.saved_bytes);
    g_autofree ParoTime *fwd = g_new(ParoTime, S), *bwd = g_new(ParoTime, S);
    /* Forward gathers overlap only when issued ahead of use (prefetch >= 1); backward also
     * reduces the previous layer's gradients beside the compute, so overlap alone does. */
    gboolean prefetched = sc->training.overlap && sc->training.prefetch > 0;
    gboolean overlap_bwd = sc->training.overlap;
    double slowest_device_s = 0, fwd_compute0 = 0, bwd_compute0 = 0;
    g_autofree double *device_layers_s = g_new0(double, P); /* compute only, a micro-batch */
    for (gint64 k = 0; k < S; k++) {
        double f = 0, b = 0;
        for (gint64 l = k * per_module; l < (k + 1) * per_module; l++) {
            const ParoLayerCost *lc = &g_array_index(layers, ParoLayerCost, l);
            f += lc->forward_s / (double)sc->tp + tp_f;
            b += lc->backward_s / (double)sc->tp + tp_b;
            /* modules round-robin: device d holds k = d, d + P, d + 2P, ... */
            device_layers_s[k % P] += (lc->forward_s + lc->backward_s) / (double)sc->tp;
        }
        if (k == 0) {
            fwd_compute0 = f;
            bwd_compute0 = b;
        }
        fwd[k] = paro_time_from_s(paro_step3d_module_s(f, gather_f, prefetched));
        bwd[k] = paro_time_from_s(paro_step3d_module_s(b, gather_b + reduce, overlap_bwd));
    }
    for (gint64 dev = 0; dev < P; dev++) {
        double sum = 0;
        for (gint64 k = dev; k < S; k += P)
            sum += paro_time_to_s(fwd[k]) + paro_time_to_s(bwd[k]);
        slowest_device_s = MAX(slowest_device_s, sum);
    }
    tp_s = tp_calls * (tp_f + tp_b);
    dp_micro_s = (double)A * v * (gather_f + gather_b + reduce);
    double act_bytes = (double)sc->training.micro_batch * (double)sc->training.sequence *
                       (double)sc->model->hidden * paro_precision_bytes(sc->training.precision);
    /* A stage boundary's activation (forward) or gradient (backward) goes through the
     * pipeline's compressor like any send: S/ratio on the wire, the codec (the sender's
     * compression, the receiver's decompression) pipelined with the transfer or in series;
     * what it adds to the transfer is charged as latency. */
    ParoCompressCost p2p = paro_compress_cost(&sc->compression.kinds[PARO_TENSOR_PIPELINE],
                                              PARO_COLL_SENDRECV, 2, act_bytes / (double)sc->tp);
    double p2p_net_s =
        paro_topology_inter_latency_s(t) + p2p.wire_bytes / paro_topology_inter_Bps(t);
    double p2p_codec_extra_s = paro_compress_time_s(&p2p, p2p_net_s) - p2p_net_s;
    ParoPipeSpec spec = {
        .schedule = (ParoPipeSchedule)sc->training.pipeline_schedule,
        .accumulation = layered ? PARO_PIPE_LAYERED : PARO_PIPE_DEPTH_FIRST,
        .devices = P,
        .chunks = v,
        .micro = A,
        .forward = fwd,
        .backward = bwd,
        .p2p_latency = paro_time_from_s(paro_topology_inter_latency_s(t) + p2p_codec_extra_s),
        .p2p_bytes = p2p.wire_bytes,
        .p2p_bandwidth_Bps = paro_topology_inter_Bps(t),
        .timeline = keep_trace,
    };
    g_autoptr(ParoPipeResult) pr = paro_pipe_simulate(&spec, error);
    if (pr == NULL)
        return FALSE;
    /* The representative GPU's share of the sends: a message's sender compresses and its
     * receiver decompresses, so the step's codec work is messages x codec, over P devices. */
    if (p2p.applied) {
        double per_device = (double)pr->p2p_messages / (double)P;
        codec_s += per_device * p2p.codec_s;
        saved += per_device * (act_bytes / (double)sc->tp - p2p.wire_bytes);
    }

    /* The DP phase: gradient sync, optimizer, parameter sync, in sequence. */
    double sync_s = 0;
    for (guint i = 0; i < calls->len; i++) {
        const ParoCollCall *c = &g_array_index(calls, ParoCollCall, i);
        if (c->phase == PARO_PHASE_SYNC_GRAD &&
            !dp_coll(sc, &z, &dpcm, cache, c, c->size_bytes, &sync_s, &codec_s, &saved, error))
            return FALSE;
    }
    double owned = z.trainable / paro_strategy_divisor(st->os, z.n, z.m);
    double optimizer_s = (2.0 * z.optim_bytes + z.grad_bytes + z.param_bytes) * owned /
                         setup.hbm_Bps; /* paro_scenario_optimizer_s on the stage's sizes */
    for (guint i = 0; i < calls->len; i++) {
        const ParoCollCall *c = &g_array_index(calls, ParoCollCall, i);
        if (c->phase == PARO_PHASE_SYNC_PARAM &&
            !dp_coll(sc, &z, &dpcm, cache, c, c->size_bytes, &sync_s, &codec_s, &saved, error))
            return FALSE;
    }
    /* The DP stream's fill: the first gather before device 0's first layer runs, and the
     * last layer's reduce-scatter after its last backward. */
    double fill_s = paro_step3d_dp_fill_s(fwd_compute0, gather_f, per_module, prefetched) +
                    paro_step3d_dp_fill_s(bwd_compute0, gather_b + reduce, per_module, overlap_bwd);
    ParoTime step = paro_time_add(pr->makespan, paro_time_from_s(sync_s + fill_s));
    step = paro_time_add(step, paro_time_from_s(optimizer_s));

    /* Memory of the device holding the most activations (stage 0 for 1F1B). */
    gint64 in_flight = 0;
    for (guint dev = 0; dev < pr->peak_in_flight->len; dev++)
        in_flight = MAX(in_flight, g_array_index(pr->peak_in_flight, gint64, dev));
    ParoRecompute rc = (ParoRecompute)sc->training.recompute;
    double act_layer =
        paro_model_activation_bytes_tp(sc->model, sc->training.micro_batch, sc->training.sequence,
                                       rc, sc->tp, sc->sequence_parallel);
    double transient = rc == PARO_RECOMPUTE_NONE
                           ? 0
                           : paro_model_activation_bytes_tp(
                                 sc->model, sc->training.micro_batch, sc->training.sequence,
                                 PARO_RECOMPUTE_NONE, sc->tp, sc->sequence_parallel) -
                                 act_layer;
    ParoStateMemory states = paro_strategy_memory(st, &z);
    *out = (ParoStepResult){0};
    double *m = out->at_peak.bytes;
    m[PARO_MEM_PARAMS] = states.params;
    m[PARO_MEM_GRADS] = states.grads;
    m[PARO_MEM_OPTIMIZER] = states.optimizer;
    m[PARO_MEM_ACTIVATIONS] = (double)in_flight * (double)per_module * act_layer + transient;
    if (st->p != PARO_PART_N) { /* two layers gathered (the one in use, the next) */
        double layer = paro_model_layer_params(sc->model) / (double)sc->tp;
        m[PARO_MEM_GATHERED] =
            2.0 * z.param_bytes * (layer > 0 ? layer : z.params / (double)(L / P));
    }
    m[PARO_MEM_COMM_BUFFERS] = paro_scenario_comm_buffers(sc, st);
    m[PARO_MEM_WORKSPACE] = PARO_CUBLAS_WORKSPACE_BYTES;
    m[PARO_MEM_OVERHEAD] = sc->training.memory_overhead;
    for (int c = 0; c < PARO_MEM_N_CATEGORIES; c++)
        out->peak_bytes += m[c];

    out->strategy = st;
    out->step = step;
    double step_s = paro_time_to_s(step);
    /* The busiest device's own compute, which bounds the step: its layers for every
     * micro-batch (TP and DP collectives, which overlap or block, are communication) and
     * the optimizer. */
    double busiest_layers_s = 0;
    for (gint64 dev = 0; dev < P; dev++)
        busiest_layers_s = MAX(busiest_layers_s, device_layers_s[dev]);
    out->compute_s = (double)A * busiest_layers_s + optimizer_s;
    out->comm_s = tp_s + dp_micro_s + sync_s;
    out->intra_busy_s = tp_s;
    out->inter_busy_s = dp_micro_s + sync_s;
    out->exposed_comm_s = step_s - out->compute_s;
    out->compress_s = codec_s;
    out->bytes_saved = saved;
    out->samples_per_s = (double)sc->dp * (double)sc->training.micro_batch * (double)A / step_s;
    out->tokens_per_s = out->samples_per_s * (double)sc->training.sequence;
    double model_flops =
        (double)A *
        paro_model_step_flops(sc->model, sc->training.micro_batch, sc->training.sequence,
                              setup.trainable_share, PARO_RECOMPUTE_NONE) /
        (double)(sc->tp * sc->pp);
    out->tflops_per_gpu = model_flops / step_s / 1e12;
    out->mfu = model_flops / step_s / t->gpu.peak_flops;
    out->fits = out->peak_bytes <= t->gpu.memory_bytes;
    out->guideline_s =
        ((double)A + (double)(P - 1) / (double)v) * slowest_device_s + sync_s + optimizer_s;
    out->at_peak.time = step;
    if (keep_trace) {
        out->trace = g_array_new(FALSE, FALSE, sizeof(ParoTraceTask));
        for (guint i = 0; pr->timeline && i < pr->timeline->len; i++) {
            const ParoPipeTask *pt = &g_array_index(pr->timeline, ParoPipeTask, i);
            if (pt->device != 0)
                continue; /* the representative GPU: stage 0 */
            ParoTraceTask tt = {pt->kind == PARO_PIPE_FORWARD ? "forward" : "backward",
                                PARO_STREAM_COMPUTE,
                                (gint)pt->micro,
                                (gint)pt->module,
                                pt->start,
                                pt->end};
            g_array_append_val(out->trace, tt);
        }
        out->memory = g_array_new(FALSE, FALSE, sizeof(ParoMemSample));
        g_array_append_val(out->memory, out->at_peak);
    }
    return TRUE;
}
