/* SPDX-License-Identifier: MIT */
/* Offloading in the step's task graph (decision 82): each copy over PCIe a task on its
 * direction's stream (PARO_STREAM_H2D, PARO_STREAM_D2H: one CUDA stream each, copies in
 * issue order), beside the compute and the collectives, as DeepSpeed issues them
 * non_blocking on side streams (deepspeedai/DeepSpeed at edaa7221): gradient shards after
 * each bucket's reduction (runtime/zero/stage3.py partition_grads on the reduce-and-
 * partition stream; stage_1_and_2.py async_inplace_copy_grad_to_fp32_buffer_from_gpu), the
 * bucket buffer held until its copy ends; the parameter shard fetched before its gather
 * (stage3 offload_param); checkpoints copied out on the activation offload engine's stream
 * after each forward and back when the layer's backward asks for them, the last one kept
 * (runtime/activation_checkpointing/offload_activations.py: keep_last_count 1,
 * restore_input at the backward). The CPU optimizer step and its NVMe traffic hold the
 * compute stream: the training loop waits for the step (stage_1_and_2.py step,
 * stage3.py step). Without overlap every copy runs on the compute stream. */
#include "step/step-private.h"

static guint copy_stream(const ParoStepBuild *b, gboolean to_gpu)
{
    if (!b->d->scenario->training.overlap)
        return PARO_STREAM_COMPUTE;
    return to_gpu ? PARO_STREAM_H2D : PARO_STREAM_D2H;
}

static ParoTaskId add_copy(ParoStepBuild *b, const char *name, guint d, gboolean to_gpu, gint micro,
                           gint layer, double seconds)
{
    return paro_task_graph_add(b->graph, name, PARO_TASK_COMM, d, copy_stream(b, to_gpu), micro,
                               layer, paro_time_from_s(seconds));
}

void paro_step_offload_init(ParoStepBuild *b)
{
    const ParoScenario *sc = b->d->scenario;
    for (gint64 d = 0; d < b->P; d++) {
        ParoStepStage *st = &b->stages[d];
        ParoStateSizes z = b->z;
        z.params *= st->share; /* as add_resident scales them */
        z.trainable *= st->share;
        st->offload = paro_offload_state(sc, b->strategy, &z);
        /* the checkpoints of a micro-batch's pass over the stage's layers */
        gint64 first;
        double recomputed = 0;
        for (gint64 k = d; k < b->S; k += b->P) {
            gint64 n = paro_scenario_module_span(sc, (gint64)b->d->layers->len, k, &first);
            for (gint64 l = first; l < first + n; l++)
                recomputed += g_array_index(b->d->layers, ParoLayerCost, l).recomputed ? 1 : 0;
        }
        st->host_activations = paro_offload_activation_bytes(sc, b->act_kept, recomputed);
    }
}

ParoTaskId paro_step_offload_fetch(ParoStepBuild *b, guint d, gint micro, gint64 layer,
                                   double share)
{
    const ParoScenario *sc = b->d->scenario;
    const ParoOffloadState *o = &b->stages[d].offload;
    if (!o->parameters)
        return PARO_TASK_NONE;
    double bytes = b->z.param_bytes * o->param_shard * share / b->stages[d].share;
    double seconds = paro_offload_pcie_s(sc, bytes);
    if (o->nvme_params)
        seconds += paro_offload_nvme_s(sc, bytes, FALSE); /* read into a pinned buffer first */
    return add_copy(b, "fetch", d, TRUE, micro, (gint)layer, seconds);
}

ParoTaskId paro_step_offload_grads(ParoStepBuild *b, guint d, ParoTaskId rs, double share,
                                   gint micro, gint layer)
{
    const ParoScenario *sc = b->d->scenario;
    const ParoOffloadState *o = &b->stages[d].offload;
    if (!o->optimizer || !o->grads_per_micro)
        return rs;
    double seconds = paro_offload_pcie_s(sc, PARO_OFFLOAD_GRAD_BYTES * o->grad_shard * share /
                                                 b->stages[d].share);
    ParoTaskId after = rs;
    if (micro > 0) {
        after = add_copy(b, "restore", d, TRUE, micro, layer, seconds);
        paro_task_graph_depend(b->graph, after, rs);
    }
    ParoTaskId out = add_copy(b, "d2h", d, FALSE, micro, layer, seconds);
    paro_task_graph_depend(b->graph, out, after);
    return out;
}

void paro_step_offload_checkpoint_out(ParoStepBuild *b, guint d, ParoTaskId c, gint micro,
                                      gint64 layer, double bytes, gboolean last)
{
    const ParoScenario *sc = b->d->scenario;
    if (sc->training.offload.activations == PARO_OFFLOAD_NONE || last ||
        !g_array_index(b->d->layers, ParoLayerCost, layer).recomputed)
        return;
    ParoTaskId t =
        add_copy(b, "offload", d, FALSE, micro, (gint)layer, paro_offload_pcie_s(sc, bytes));
    paro_task_graph_depend(b->graph, t, c);
    paro_task_graph_on_end(b->graph, t, PARO_MEM_ACTIVATIONS, -bytes);
}

ParoTaskId paro_step_offload_checkpoint_in(ParoStepBuild *b, guint d, ParoTaskId after, gint micro,
                                           gint64 layer, double bytes, gboolean first)
{
    const ParoScenario *sc = b->d->scenario;
    if (sc->training.offload.activations == PARO_OFFLOAD_NONE || first ||
        !g_array_index(b->d->layers, ParoLayerCost, layer).recomputed)
        return PARO_TASK_NONE;
    ParoTaskId t =
        add_copy(b, "reload", d, TRUE, micro, (gint)layer, paro_offload_pcie_s(sc, bytes));
    paro_task_graph_depend(b->graph, t, after);
    paro_task_graph_on_start(b->graph, t, PARO_MEM_ACTIVATIONS, bytes);
    return t;
}

ParoTaskId paro_step_offload_before_step(ParoStepBuild *b, guint d, ParoTaskId previous)
{
    const ParoOffloadState *o = &b->stages[d].offload;
    if (!o->optimizer || o->grads_per_micro)
        return previous;
    ParoTaskId t =
        add_copy(b, "d2h", d, FALSE, -1, -1,
                 paro_offload_pcie_s(b->d->scenario, PARO_OFFLOAD_GRAD_BYTES * o->grad_shard));
    paro_task_graph_depend(b->graph, t, previous);
    return t;
}

ParoTaskId paro_step_offload_after_step(ParoStepBuild *b, guint d, ParoTaskId opt)
{
    const ParoScenario *sc = b->d->scenario;
    gboolean to_gpu;
    double bytes = paro_offload_after_step_bytes(sc, &b->stages[d].offload, &to_gpu);
    if (bytes <= 0)
        return opt;
    ParoTaskId t =
        add_copy(b, to_gpu ? "h2d" : "d2h", d, to_gpu, -1, -1, paro_offload_pcie_s(sc, bytes));
    paro_task_graph_depend(b->graph, t, opt);
    return t;
}
