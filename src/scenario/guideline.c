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
 * Memory: model states (strategy.c) + activations of one micro-batch over all layers +
 * transient buffers + NCCL's buffers + cuBLAS's workspace + the scenario's fixed overhead. Buffers,
 * an estimate the training- step simulation refines: a strategy that gathers parameters holds two
 * gathered layers (the one in use and the prefetched one); one that reduces gradients holds one
 * layer's full gradient before its reduce-scatter.
 *
 * Dominance: another triple needs no more memory, no more step time and no more serial
 * time, and strictly less of one of them. The serial time breaks the ties that full
 * overlap creates when compute hides every collective. */
#include "scenario/guideline.h"

#include <math.h>

void paro_guideline_free(ParoGuideline *g)
{
    if (g == NULL)
        return;
    g_clear_pointer(&g->results, g_array_unref);
    g_free(g);
}

ParoCommModel paro_guideline_comm_model(const ParoScenario *s)
{
    const ParoTopology *t = s->topology;
    return (ParoCommModel){
        .n = paro_scenario_n_gpus(s),
        .m = s->group,
        .gpus_per_node = t->gpus_per_node,
        .intra_Bps = t->fabric.bandwidth_Bps,
        /* The simulation adds nccl.step_overhead to every ring step's route latency, so
         * the closed form does too. */
        .intra_lat_s = t->fabric.latency_s + t->nccl.step_overhead_s,
        .inter_Bps = paro_topology_inter_Bps(t),
        .inter_lat_s = paro_topology_inter_latency_s(t) + t->nccl.step_overhead_s,
        .algorithm = s->algorithm,
        .chunks = s->chunks,
    };
}

double paro_guideline_comm_buffers(const ParoScenario *s, const ParoStrategy *st)
{
    ParoStateSizes z = paro_guideline_state_sizes(s);
    g_autoptr(GArray) calls = g_array_new(FALSE, FALSE, sizeof(ParoCollCall));
    paro_strategy_collectives(st, &z, calls);
    gboolean used[3] = {FALSE, FALSE, FALSE};
    for (guint i = 0; i < calls->len; i++)
        used[g_array_index(calls, ParoCollCall, i).scope] = TRUE;
    const ParoTopology *t = s->topology;
    double channels = (double)(t->nccl.channels ? t->nccl.channels : MAX(1, t->nics.count));
    return (double)(used[0] + used[1] + used[2]) * 2.0 * channels * 4.0 * 1048576.0;
}

ParoComputeSetup paro_guideline_compute_setup(const ParoScenario *s)
{
    double trainable, params = paro_model_params(s->model, &s->training.trainable, &trainable);
    const ParoCalibration *c = &s->calibration;
    return (ParoComputeSetup){
        .rate_flops =
            c->has_compute ? c->matmul_flops : s->topology->gpu.peak_flops * s->training.efficiency,
        .hbm_Bps = c->has_compute ? c->hbm_Bps : s->topology->gpu.hbm_Bps,
        .batch = s->training.micro_batch,
        .seq = s->training.sequence,
        .trainable_share = trainable / params,
        .recompute = s->training.recompute,
    };
}

ParoStateSizes paro_guideline_state_sizes(const ParoScenario *s)
{
    ParoStateSizes z;
    z.n = paro_scenario_n_gpus(s);
    z.m = s->group;
    z.params = paro_model_params(s->model, &s->training.trainable, &z.trainable);
    z.param_bytes = paro_precision_bytes(s->training.precision);
    z.grad_bytes = z.param_bytes;
    z.optim_bytes = s->training.optimizer_bytes;
    return z;
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
    if (a->t_step != b->t_step)
        return a->t_step < b->t_step ? -1 : 1;
    if (a->mem_total != b->mem_total)
        return a->mem_total < b->mem_total ? -1 : 1;
    return g_strcmp0(a->strategy->name, b->strategy->name);
}

static void evaluate_one(const ParoGuideline *g, const ParoStrategy *st, ParoStrategyResult *r)
{
    const ParoScenario *s = g->scenario;
    const ParoStateSizes *z = &g->sizes;
    double A = (double)s->training.accumulation;
    r->strategy = st;
    r->effective = paro_strategy_is_effective(st);

    ParoStateMemory mem = paro_strategy_memory(st, z);
    r->mem_params = mem.params;
    r->mem_grads = mem.grads;
    r->mem_optimizer = mem.optimizer;
    r->mem_model_states = mem.params + mem.grads + mem.optimizer;
    const ParoModel *model = s->model;
    r->mem_activations = (double)model->layers *
                         paro_model_activation_bytes(model, s->training.micro_batch,
                                                     s->training.sequence, s->training.recompute);
    double layer = paro_model_layer_params(model);
    gboolean gathers = st->p != PARO_PART_N || st->kind == PARO_STRATEGY_FSDP_HSZ;
    r->mem_buffers = (gathers ? 2.0 * z->param_bytes * layer : 0) +
                     (st->g != PARO_PART_N ? z->grad_bytes * layer * z->trainable / z->params : 0);
    r->mem_comm_buffers = paro_guideline_comm_buffers(s, st);
    r->mem_workspace = PARO_CUBLAS_WORKSPACE_BYTES;
    r->mem_overhead = s->training.memory_overhead;
    r->mem_total = r->mem_model_states + r->mem_activations + r->mem_buffers + r->mem_comm_buffers +
                   r->mem_workspace + r->mem_overhead;
    r->fits = r->mem_total <= s->topology->gpu.memory_bytes;

    g_autoptr(GArray) calls = g_array_new(FALSE, FALSE, sizeof(ParoCollCall));
    paro_strategy_collectives(st, z, calls);
    for (guint i = 0; i < calls->len; i++) {
        const ParoCollCall *c = &g_array_index(calls, ParoCollCall, i);
        double times = paro_phase_is_per_micro_step(c->phase) ? A : 1;
        ParoCompressCost cc =
            paro_compress_cost(&s->compression.kinds[paro_compress_tensor_of(c->phase)], c->op,
                               paro_compress_ranks(c->scope, z->n, z->m), c->size_bytes);
        double t = times * paro_compress_time_s(&cc, paro_coll_closed_form_s(
                                                         &g->comm, c->op, c->scope, cc.wire_bytes));
        double intra, inter;
        paro_coll_traffic(&g->comm, c->op, c->scope, cc.wire_bytes, &intra, &inter);
        r->traffic_intra += times * intra;
        r->traffic_inter += times * inter;
        r->t_compress += times * cc.codec_s;
        r->bytes_saved +=
            times * paro_compress_saved_bytes(&g->comm, c->op, c->scope, c->size_bytes, &cc);
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
    double owned = z->trainable / paro_strategy_divisor(st->os, z->n, z->m);
    double optimizer_bytes = (2.0 * z->optim_bytes + z->grad_bytes + z->param_bytes) * owned;
    r->t_optimizer = optimizer_bytes / paro_guideline_compute_setup(s).hbm_Bps;
    r->t_compute = A * g->micro_step_s + r->t_optimizer;
    r->t_step = fmax(r->t_compute, r->t_comm);
    r->t_serial = r->t_compute + r->t_comm;
}

ParoGuideline *paro_guideline_evaluate(const ParoScenario *s)
{
    g_return_val_if_fail(s != NULL, NULL);
    ParoGuideline *g = g_new0(ParoGuideline, 1);
    g->scenario = s;
    g->sizes = paro_guideline_state_sizes(s);
    g->comm = paro_guideline_comm_model(s);
    g->flops_per_micro_step =
        paro_model_step_flops(s->model, s->training.micro_batch, s->training.sequence,
                              g->sizes.trainable / g->sizes.params, s->training.recompute);
    ParoComputeSetup setup = paro_guideline_compute_setup(s);
    g->achieved_flops = setup.rate_flops;
    g_autoptr(GArray) layers = paro_compute_layers(s->model, &setup);
    for (guint l = 0; l < layers->len; l++) {
        const ParoLayerCost *lc = &g_array_index(layers, ParoLayerCost, l);
        g->micro_step_s += lc->forward_s + lc->backward_s;
    }

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
