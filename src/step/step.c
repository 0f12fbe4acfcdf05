/* SPDX-License-Identifier: MIT */
/* Simulating a step: the graph (step-build.c) run on the scheduler (sched/), and the result
 * read off it. Time figures are the busiest stage's (the most compute; the step cannot be
 * shorter), memory figures the stage with the highest peak (the one that must fit). */
#include "step/step-private.h"

#include <string.h>

#include "core/error.h"
#include "step/memo.h"

int paro_step_result_compare(gconstpointer pa, gconstpointer pb)
{
    const ParoStepResult *a = pa, *b = pb;
    if (a->fits != b->fits)
        return a->fits ? -1 : 1;
    if (a->tight != b->tight) /* decision 84: the margin before the speed */
        return a->tight ? 1 : -1;
    if (a->step != b->step)
        return a->step < b->step ? -1 : 1;
    if (a->peak_bytes != b->peak_bytes)
        return a->peak_bytes < b->peak_bytes ? -1 : 1;
    return strcmp(a->strategy->name, b->strategy->name);
}

void paro_step_result_clear(ParoStepResult *r)
{
    g_clear_pointer(&r->trace, g_array_unref);
    g_clear_pointer(&r->memory, g_array_unref);
}

/* Model states, NCCL's buffers, the workspace and the fixed overhead, from time 0. */
static void add_resident(const ParoStepBuild *b, guint d)
{
    const ParoScenario *sc = b->d->scenario;
    /* the stage's share (exact for one stage: the share is 1), less what it offloads
     * (paro_step_offload_init) */
    ParoStateMemory states = b->stages[d].offload.gpu;
    ParoMemLedger *ledger = paro_task_graph_ledger(b->graph, d);
    paro_mem_ledger_change(ledger, 0, PARO_MEM_PARAMS, states.params);
    /* from each layer's backward on (step-build.c); FSDP's sharded ones are the output of
     * its reduce-scatter, made on that stream (on one GPU too: a copy) */
    if (b->grads_on_demand && b->strategy->g != PARO_PART_N)
        paro_mem_ledger_set_pool(ledger, PARO_MEM_GRADS, PARO_MEM_POOL_REDUCE);
    if (!b->grads_on_demand)
        paro_mem_ledger_change(ledger, 0, PARO_MEM_GRADS, states.grads);
    paro_mem_ledger_change(ledger, 0, PARO_MEM_OPTIMIZER, states.optimizer);
    paro_mem_ledger_change(ledger, 0, PARO_MEM_COMM_BUFFERS,
                           paro_scenario_comm_buffers(sc, b->strategy));
    paro_mem_ledger_change(ledger, 0, PARO_MEM_WORKSPACE,
                           PARO_CUBLAS_WORKSPACE_BYTES +
                               paro_scenario_fp8_weight_bytes(sc, b->strategy, states.params));
    paro_mem_ledger_change(ledger, 0, PARO_MEM_OVERHEAD, paro_scenario_memory_overhead(sc));
}

void paro_step_result_finish(const ParoScenarioDerived *d, gint64 micro_steps, ParoStepResult *r)
{
    const ParoScenario *sc = d->scenario;
    double step_s = paro_time_to_s(r->step);
    r->compute_s = paro_time_to_s(r->compute);
    r->comm_s = paro_time_to_s(r->comm);
    r->intra_busy_s = paro_time_to_s(r->intra_busy);
    r->inter_busy_s = paro_time_to_s(r->inter_busy);
    r->exposed_comm_s = step_s - r->compute_s;
    double samples = (double)sc->dp * (double)sc->training.micro_batch * (double)micro_steps;
    r->samples_per_s = samples / step_s;
    r->tokens_per_s = r->samples_per_s * (double)sc->training.sequence;
    double model_flops =
        (double)micro_steps *
        paro_model_step_flops(sc->model, sc->training.micro_batch, sc->training.sequence,
                              d->compute.trainable_share, PARO_RECOMPUTE_NONE) /
        (double)(sc->tp * sc->pp * sc->cp); /* exact for tp = pp = cp = 1 */
    r->tflops_per_gpu = model_flops / step_s / 1e12;
    r->mfu = model_flops / step_s / sc->topology->gpu.peak_flops;
    r->host_fits = r->host_bytes <= sc->topology->host.memory_bytes;
    r->fits = r->peak_bytes <= sc->topology->gpu.memory_bytes && r->host_fits;
    /* the allocator gives back its cached blocks and retries before it fails
     * (CUDACachingAllocator.cpp: release_cached_blocks, num_alloc_retries), so what must fit
     * is the tensors, and it never holds more than the GPU; a run whose reserve reaches into
     * the headroom is tight (decision 94) */
    r->tight = r->fits && paro_scenario_is_tight(sc, MIN(r->reserved_bytes + r->outside_bytes,
                                                         sc->topology->gpu.memory_bytes));
}

static void collect(const ParoStepBuild *b, gboolean keep_trace, ParoStepResult *out)
{
    const ParoScenario *sc = b->d->scenario;
    const ParoTaskGraph *g = b->graph;
    *out = (ParoStepResult){0};
    out->strategy = b->strategy;
    out->step = paro_task_graph_makespan(g);
    out->stages = (guint)b->P;
    out->simulated_micro = b->M;
    out->periodic_from = paro_step_build_periodic_from(b);
    ParoTime most = -1;
    double peak = -1;
    for (guint d = 0; d < (guint)b->P; d++) {
        ParoTime compute = paro_task_graph_kind_busy(g, d, PARO_TASK_COMPUTE);
        if (compute > most)
            most = compute, out->busiest = d;
        double p = paro_mem_ledger_peak(paro_task_graph_ledger(b->graph, d), NULL);
        if (p > peak)
            peak = p, out->fullest = d;
    }
    guint d = out->busiest;
    out->compute = paro_task_graph_kind_busy(g, d, PARO_TASK_COMPUTE);
    out->comm = paro_task_graph_kind_busy(g, d, PARO_TASK_COMM);
    out->intra_busy = paro_task_graph_stream_busy(g, d, PARO_STREAM_INTRA);
    out->inter_busy = paro_task_graph_stream_busy(g, d, PARO_STREAM_INTER);
    out->compress_s = b->stages[d].compress_s;
    out->bytes_saved = b->stages[d].bytes_saved;
    const ParoMemLedger *fullest = paro_task_graph_ledger(b->graph, out->fullest);
    out->peak_bytes = paro_mem_ledger_peak(fullest, &out->at_peak);
    out->allocated_bytes = paro_mem_ledger_allocated_peak(fullest);
    out->reserved_bytes = paro_mem_ledger_reserved_peak(fullest);
    out->outside_bytes = paro_mem_ledger_pool_peak(fullest, PARO_MEM_POOL_OUTSIDE);
    for (guint s = 0; s < (guint)b->P; s++)
        out->host_bytes =
            MAX(out->host_bytes,
                paro_offload_host_bytes(sc, &b->stages[s].offload, b->stages[s].host_activations));
    paro_step_result_finish(b->d, b->M, out);
    if (!paro_scenario_is_dp_only(sc))
        out->guideline_s = paro_step_build_textbook_s(b);
    if (!keep_trace)
        return;
    guint n = paro_task_graph_n_tasks(g);
    out->trace = g_array_sized_new(FALSE, FALSE, sizeof(ParoTraceTask), n);
    for (ParoTaskId i = 0; i < n; i++) {
        ParoTaskInfo t = paro_task_graph_get(g, i);
        ParoTraceTask tt = {t.name, t.device, t.streams, t.micro, t.layer, t.start, t.end};
        g_array_append_val(out->trace, tt);
    }
    const GArray *tl = paro_mem_ledger_timeline(fullest);
    out->memory = g_array_sized_new(FALSE, FALSE, sizeof(ParoMemSample), tl->len);
    g_array_append_vals(out->memory, tl->data, tl->len);
}

gboolean paro_step_simulate(const ParoScenarioDerived *d, const ParoStrategy *st,
                            ParoCollCache *cache, const ParoStepOptions *o, ParoStepResult *out,
                            GError **error)
{
    const ParoScenario *sc = d->scenario;
    ParoStepOptions key = *o;
    key.micro_steps = o->micro_steps > 0 ? o->micro_steps : sc->training.accumulation;
    gboolean memo = o->memo != NULL && !o->keep_trace && !o->without_data_parallel;
    if (memo && paro_step_memo_lookup(o->memo, o->memo_context, st, &key, out))
        return TRUE;
    ParoCompression none;
    paro_compress_preset(&none, PARO_COMPRESS_NONE);
    ParoStepBuild b = {0};
    b.d = d;
    b.strategy = st;
    b.compression = o->compress ? &sc->compression : &none;
    b.micro_steps = o->micro_steps;
    b.without_data_parallel = o->without_data_parallel;
    b.cache = cache;
    b.error = error;
    gboolean ok = paro_step_build_init(&b);
    if (ok) {
        b.graph = paro_task_graph_new((guint)b.P, (guint)b.P * PARO_RES_N, o->keep_trace);
        for (guint s = 0; s < (guint)b.P; s++)
            add_resident(&b, s);
        ok = paro_step_build(&b) && paro_task_graph_run(b.graph, error);
    }
    if (ok)
        collect(&b, o->keep_trace, out);
    if (ok && memo)
        paro_step_memo_store(o->memo, o->memo_context, st, &key, out);
    paro_task_graph_free(b.graph);
    paro_step_build_clear(&b);
    return ok;
}
