/* SPDX-License-Identifier: MIT */
/* The PaRO guideline, generalised: every strategy's memory, traffic and closed-form time.
 *
 * t_comm = (t_param + t_gradient)*A + t_syncg + t_syncp  (PaRO, formula 2), each collective
 * at its alpha-beta cost (coll/analytic.c). t_comp = A * (the layers' forward and backward
 * times, model/compute.c: FLOPs at peak x efficiency plus elementwise bytes at HBM
 * bandwidth) + the optimizer's bytes / HBM bandwidth, where mixed-precision Adam reads the fp32
 * master, both moments and the gradient and writes master, moments and the 16-bit parameter: (2K +
 * b_g + b_p) bytes per parameter it owns. T = max(t_comp, t_comm) (full overlap) is the step time
 * the ranking uses; t_comp + t_comm is the serial bound. With compression, a collective of S bytes
 * costs its alpha-beta time at S/ratio combined with the codec time of compress/compress.c
 * (pipelined or in series), as the training-step simulation does. The guideline takes one call per
 * phase at the step's summed size, the simulation one per layer or bucket; in series the codec is
 * linear in S and the two agree exactly, pipelined they differ by the pipeline fill of each extra
 * call (a few 1e-5 of a step).
 *
 * Memory: model states (strategy.c) + activations of one micro-batch over all layers and
 * the loss's logits at its peak (decision 50) + transient buffers + NCCL's buffers + cuBLAS's
 * workspace + the scenario's fixed overhead. Buffers, an estimate the training- step simulation
 * refines: a strategy that gathers parameters holds two gathered layers (the one in use and the
 * prefetched one); one that reduces gradients holds one layer's full gradient before its
 * reduce-scatter.
 *
 * Dominance: another triple needs no more memory, no more step time and no more serial
 * time, and strictly less of one of them. The serial time breaks the ties that full
 * overlap creates when compute hides every collective. */
#include "scenario/guideline.h"

#include <math.h>

#include "scenario/offload.h"

void paro_guideline_free(ParoGuideline *g)
{
    if (g == NULL)
        return;
    g_clear_pointer(&g->results, g_array_unref);
    g_free(g);
}

/* Relative tolerance for "no more than": the I and G variants of one state coincide
 * when m = n, and their figures may then differ in the last bit. */
static gboolean leq(double a, double b)
{
    return a <= b * (1 + 1e-12) + 1e-300;
}

static gboolean dominates(const ParoStrategyResult *a, const ParoStrategyResult *b)
{
    if (!(leq(a->mem_total, b->mem_total) && leq(a->t_step, b->t_step) &&
          leq(a->t_serial, b->t_serial)))
        return FALSE;
    return !(leq(b->mem_total, a->mem_total) && leq(b->t_step, a->t_step) &&
             leq(b->t_serial, a->t_serial));
}

static int compare_rank(gconstpointer pa, gconstpointer pb)
{
    const ParoStrategyResult *a = pa, *b = pb;
    if (a->fits != b->fits)
        return a->fits ? -1 : 1;
    if (a->tight != b->tight) /* decision 84: the margin before the speed */
        return a->tight ? 1 : -1;
    if (a->t_step != b->t_step)
        return a->t_step < b->t_step ? -1 : 1;
    if (a->mem_total != b->mem_total)
        return a->mem_total < b->mem_total ? -1 : 1;
    return g_strcmp0(a->strategy->name, b->strategy->name);
}

static void evaluate_one(const ParoGuideline *g, const ParoStrategy *st, ParoStrategyResult *r)
{
    const ParoScenarioDerived *d = g->derived;
    const ParoScenario *s = d->scenario;
    const ParoStateSizes *z = &d->sizes;
    double A = (double)s->training.accumulation;
    r->strategy = st;
    r->effective = paro_strategy_is_effective(st);

    /* offloaded state leaves the GPU (decisions 80-82) */
    ParoOffloadState off = paro_offload_state(s, st, z);
    ParoStateMemory mem = off.gpu;
    if (s->ep > 1) { /* no offload with experts apart: each group sharded over its own ranks */
        ParoStateSizes dense, experts;
        paro_scenario_param_groups(s, z, &dense, &experts);
        ParoStateMemory a = paro_strategy_memory(st, &dense),
                        b = paro_strategy_memory(st, &experts);
        mem = (ParoStateMemory){a.params + b.params, a.grads + b.grads, a.optimizer + b.optimizer};
    }
    r->mem_params = mem.params;
    r->mem_grads = mem.grads;
    r->mem_optimizer = mem.optimizer;
    r->mem_model_states = mem.params + mem.grads + mem.optimizer;
    const ParoModel *model = s->model;
    /* every layer's kept activations, and at the peak the most of: the loss's forward,
     * the loss's backward, or one layer's more while its backward recomputes them (the
     * simulation's ledger peaks there too; decision 50) */
    double kept, whole;
    paro_scenario_layer_activations(s, 1, &kept, &whole);
    ParoLossMemory loss = paro_scenario_loss_memory(s, 1);
    /* layers full recomputation skips (recompute_every) keep everything */
    double L = (double)model->layers, again = s->training.recompute == PARO_RECOMPUTE_FULL
                                                  ? paro_scenario_recomputed_layers(s)
                                                  : L;
    /* checkpoints offloaded: the GPU keeps the last layer's and the one restored for its
     * backward, the host the others */
    double act_host = paro_offload_activation_bytes(s, kept, again);
    r->mem_activations =
        again * kept - act_host + (L - again) * whole +
        MAX(MAX(loss.forward_peak, loss.backward_peak), again > 0 ? whole - kept : 0);
    r->mem_host = paro_offload_host_bytes(s, &off, act_host);
    double layer = paro_model_layer_params(model);
    r->mem_buffers =
        (paro_strategy_gathers(st) ? 2.0 * paro_scenario_gathered_bytes(d, layer) : 0) +
        (st->g != PARO_PART_N ? z->grad_bytes * layer * z->trainable / z->params : 0);
    r->mem_comm_buffers = paro_scenario_comm_buffers(s, st);
    r->mem_workspace =
        PARO_CUBLAS_WORKSPACE_BYTES + paro_scenario_fp8_weight_bytes(s, st, mem.params);
    r->mem_overhead = paro_scenario_memory_overhead(s);
    r->mem_total = r->mem_model_states + r->mem_activations + r->mem_buffers + r->mem_comm_buffers +
                   r->mem_workspace + r->mem_overhead;
    r->host_fits = r->mem_host <= s->topology->host.memory_bytes;
    r->fits = r->mem_total <= s->topology->gpu.memory_bytes && r->host_fits;
    r->tight = r->fits && paro_scenario_is_tight(s, r->mem_total);

    g_autoptr(GArray) calls = g_array_new(FALSE, FALSE, sizeof(ParoCollCall));
    paro_strategy_collectives(st, z, calls);
    for (guint i = 0; i < calls->len; i++) {
        const ParoCollCall *c = &g_array_index(calls, ParoCollCall, i);
        double times = paro_phase_is_per_micro_step(c->phase) ? A : 1;
        ParoCompressCost cc =
            paro_compress_cost(&s->compression.kinds[paro_compress_tensor_of(c->phase)], c->op,
                               paro_compress_ranks(c->scope, z->n, z->m), c->size_bytes);
        double t = times * paro_compress_time_s(&cc, paro_coll_closed_form_s(
                                                         &d->comm, c->op, c->scope, cc.wire_bytes));
        double intra, inter;
        paro_coll_traffic(&d->comm, c->op, c->scope, cc.wire_bytes, &intra, &inter);
        r->traffic_intra += times * intra;
        r->traffic_inter += times * inter;
        r->t_compress += times * cc.codec_s;
        r->bytes_saved +=
            times * paro_compress_saved_bytes(&d->comm, c->op, c->scope, c->size_bytes, &cc);
        switch (c->phase) {
        case PARO_PHASE_FORWARD:
        case PARO_PHASE_BACKWARD:
            r->t_param += t;
            break;
        case PARO_PHASE_GRADIENT:
            r->t_gradient += t;
            break;
        case PARO_PHASE_SYNC_GRAD:
            r->t_sync_grad += t;
            break;
        case PARO_PHASE_SYNC_PARAM:
            r->t_sync_param += t;
            break;
        }
    }
    r->t_comm = r->t_param + r->t_gradient + r->t_sync_grad + r->t_sync_param;
    /* the optimizer phase with its copies in series; the micro-steps' copies beside them */
    gboolean to_gpu;
    r->t_optimizer = paro_offload_optimizer_s(d, &off) +
                     paro_offload_pcie_s(s, paro_offload_after_step_bytes(s, &off, &to_gpu)) +
                     (off.optimizer && !off.grads_per_micro
                          ? paro_offload_pcie_s(s, PARO_OFFLOAD_GRAD_BYTES * off.grad_shard)
                          : 0);
    r->t_offload = paro_offload_copies_s(s, &off, act_host, A);
    r->t_compute = A * d->micro_step_s + r->t_optimizer;
    r->t_step = fmax(fmax(r->t_compute, r->t_comm), r->t_offload);
    r->t_serial = r->t_compute + r->t_comm + r->t_offload;
}

const ParoStrategyResult *paro_guideline_find(const ParoGuideline *g, const ParoStrategy *st)
{
    for (guint i = 0; i < g->results->len; i++)
        if (g_array_index(g->results, ParoStrategyResult, i).strategy == st)
            return &g_array_index(g->results, ParoStrategyResult, i);
    return NULL;
}

ParoGuideline *paro_guideline_evaluate(const ParoScenarioDerived *d)
{
    g_return_val_if_fail(d != NULL, NULL);
    ParoGuideline *g = g_new0(ParoGuideline, 1);
    g->derived = d;
    guint n = paro_strategy_n_all();
    g->results = g_array_sized_new(FALSE, TRUE, sizeof(ParoStrategyResult), n);
    g_array_set_size(g->results, n);
    for (guint i = 0; i < n; i++)
        evaluate_one(g, paro_strategy_get(i), &g_array_index(g->results, ParoStrategyResult, i));
    for (guint i = 0; i < n; i++) {
        ParoStrategyResult *r = &g_array_index(g->results, ParoStrategyResult, i);
        for (guint j = 0; j < n && !r->dominated; j++) {
            const ParoStrategyResult *o = &g_array_index(g->results, ParoStrategyResult, j);
            if (j != i && o->strategy->kind == PARO_STRATEGY_TRIPLE && dominates(o, r))
                r->dominated = TRUE;
        }
    }
    g_array_sort(g->results, compare_rank);
    for (guint i = 0; i < n; i++)
        g_array_index(g->results, ParoStrategyResult, i).rank = (int)i + 1;
    return g;
}
