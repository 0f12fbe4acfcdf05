/* SPDX-License-Identifier: MIT */
/* The task graph of a global step, for every layout.
 *
 * The pipeline (pipe/) fixes which stage runs which pass in which order: stage d holds
 * modules d, d + P, ...; each device's program (1F1B, GPipe, interleaved, modular; depth-
 * first or layered) orders its forward and backward passes; without pipeline parallelism
 * it is one stage running, per micro-batch, the forward then the backward of one module of
 * every layer. This file emits each pass as a framework issues it:
 *   forward   for each layer l: [gather l] -> forward l -> [its TP collectives]
 *   backward  for each layer l, last first: [gather l] -> backward l -> [its TP
 *             collectives] -> [reduce-scatter of the bucket, once it holds `bucket` bytes or
 *             at the module's first layer]
 * then, per stage, the gradient sync, the optimizer and the parameter sync.
 *
 * The DP collectives are the strategy's (strategy.c) on one TP rank's share of the model,
 * per-micro-batch ones cut per layer in proportion to the layer's parameters, so a stage
 * moves exactly its share of the guideline's bytes. With layered accumulation (Lamy-
 * Poirier 2021) a module's micro-batches run back to back: its layers are gathered before
 * the first and kept until the last, and its gradients reduced after the last, once a step.
 *
 * Streams of a stage's GPU: compute (kernels and the TP collectives, which block the layer
 * as in Megatron); intra and inter (DP collectives inside a group and between groups; a
 * global one holds both); p2p (sends to the neighbouring stages). Each runs its tasks in
 * program order, as CUDA streams do. Dependencies: forward l after gather l; gather l (prefetch
 * depth p) after the forward p+1 layers earlier in the pass; backward l after its gather,
 * which follows the backward p+1 layers later (or, at the top of the pass, the stage's
 * previous compute task); a bucket's reduce-scatter after the backward that fills it; a
 * backward that opens a new bucket after the reduce-scatter two buckets back (bounded
 * buffers); the passes' inputs as pipe/ connects them; syncs after the last micro-batch's
 * reductions. With overlap off, every task of a stage runs on its compute stream.
 *
 * Memory (a ledger per stage): model states and the fixed overhead from the start; a
 * gathered layer from its gather's start to the end of the last compute using it;
 * activations kept from a layer's forward to its backward (plus the recomputed part while
 * its backward runs); a layer's full gradients from its backward to its bucket's
 * reduce-scatter. */
#include "step/step-private.h"

#include <math.h>

#include "pipe/pipe.h"

static const ParoLossMemory no_loss = {0, 0, 0};

/* Gradient buckets that may wait for their reduce-scatter at once (DeepSpeed and FSDP keep
 * a small fixed number of reduce buffers; without a bound a slow network would let
 * gradients of whole micro-steps pile up in memory). */
#define BUCKETS_IN_FLIGHT 2

static const ParoCollCall *find_phase(GArray *calls, ParoPhase phase)
{
    for (guint i = 0; i < calls->len; i++) {
        const ParoCollCall *c = &g_array_index(calls, ParoCollCall, i);
        if (c->phase == phase)
            return c;
    }
    return NULL;
}

/* The costs of a step's DP collectives repeat every micro-batch and layer: each (phase,
 * op, scope, size) is worked out once a step (a cache lookup hashes the whole cluster). */
typedef struct {
    ParoPhase phase;
    ParoCollKind op;
    ParoScope scope;
    gboolean experts; /* over the routed experts' group */
    double bytes;
    ParoStepComm cost;
} Cost;

static guint cost_hash(gconstpointer p)
{
    const Cost *c = p;
    return g_double_hash(&c->bytes) ^ ((guint)c->phase * 31u + (guint)c->op * 7u + (guint)c->scope +
                                       (c->experts ? 1009u : 0u));
}

static gboolean cost_equal(gconstpointer a, gconstpointer b)
{
    const Cost *x = a, *y = b;
    return x->phase == y->phase && x->op == y->op && x->scope == y->scope &&
           x->experts == y->experts && x->bytes == y->bytes;
}

static gboolean params_sharded(const ParoStrategy *strategy)
{
    return strategy->p != PARO_PART_N;
}

/* The element bytes of the gradient reductions: the framework's reduce type, else the
 * training precision's. */
static double reduce_element_bytes(const ParoScenario *sc)
{
    int r = sc->framework.reduce_precision;
    return paro_precision_bytes(r == 0 ? sc->training.precision : (ParoPrecision)(r - 1));
}

/* DeepSpeed's BF16_Optimizer runs this strategy's step (paro_framework_bf16_optimizer). */
static gboolean bf16_optimizer(const ParoStepBuild *b)
{
    const ParoScenario *sc = b->d->scenario;
    gboolean stage0 = sc->pp > 1 && b->strategy->p == PARO_PART_N && b->strategy->g == PARO_PART_N;
    return paro_framework_bf16_optimizer(&sc->framework,
                                         sc->training.precision == PARO_PRECISION_BF16, stage0);
}

/* The framework profile's changes to the strategy's gradient reductions: DeepSpeed's stages
 * 1-2 all-reduce each bucket and keep their part (use_multi_rank_bucket_allreduce), and a
 * reduction may run in another element type than the gradients (FSDP's reduce_dtype). */
static void apply_framework(ParoStepBuild *b, GArray *calls)
{
    const ParoScenario *sc = b->d->scenario;
    /* BF16_Optimizer's reduction is its own code path: an all-reduce in every version */
    gboolean allreduce = bf16_optimizer(b) || paro_framework_bucket_allreduce(
                                                  &sc->framework, params_sharded(b->strategy));
    double scale = reduce_element_bytes(sc) / paro_precision_bytes(sc->training.precision);
    for (guint i = 0; i < calls->len; i++) {
        ParoCollCall *c = &g_array_index(calls, ParoCollCall, i);
        if (c->phase != PARO_PHASE_GRADIENT && c->phase != PARO_PHASE_SYNC_GRAD)
            continue;
        c->size_bytes *= scale;
        if (allreduce && c->op == PARO_COLL_REDUCESCATTER)
            c->op = PARO_COLL_ALLREDUCE;
    }
}

/* The framework's elementwise passes over each micro-batch's gradients, in seconds a
 * trainable parameter at the rate measured for such passes over a unit's flat gradient
 * (decision 44): run after each layer's backward, on the compute stream (FSDP casts and
 * divides on its post-backward stream, but those kernels take every SM the next layer's
 * backward would; decision 42). */
static double flat_pass_s(const ParoStepBuild *b, double bytes)
{
    double Bps = paro_compute_setup_flat_pass_Bps(&b->d->compute);
    return bytes > 0 && Bps > 0 ? bytes / Bps : 0;
}

static double grad_pass_s(const ParoStepBuild *b)
{
    const ParoScenario *sc = b->d->scenario;
    return flat_pass_s(b, paro_framework_grad_pass_bytes(
                              &sc->framework, paro_precision_bytes(sc->training.precision),
                              reduce_element_bytes(sc), bf16_optimizer(b)));
}

/* Adding a micro-batch's weight gradients into the step's where the products do not
 * (paro_framework_accumulate_bytes), in seconds a trainable parameter, at the same rate. */
static double accumulate_s(const ParoStepBuild *b)
{
    const ParoScenario *sc = b->d->scenario;
    gboolean whole = b->strategy->p == PARO_PART_N && b->strategy->g == PARO_PART_N;
    return flat_pass_s(b, paro_framework_accumulate_bytes(
                              &sc->framework, paro_precision_bytes(sc->training.precision),
                              sc->training.precision == PARO_PRECISION_BF16, whole,
                              bf16_optimizer(b)));
}

/* The strategy's collectives on @z, for one parameter group; a collective over one GPU
 * moves nothing and gets no task (as a zero-time task on a stream it would wait its turn
 * behind real ones and hold back what depends on it). */
static GArray *strategy_calls(ParoStepBuild *b, const ParoStateSizes *z)
{
    GArray *calls = g_array_new(FALSE, FALSE, sizeof(ParoCollCall));
    if (b->without_data_parallel)
        return calls; /* as one data-parallel rank: the step's floor under every strategy */
    paro_strategy_collectives(b->strategy, z, calls);
    for (guint i = calls->len; i-- > 0;) {
        const ParoCollCall *c = &g_array_index(calls, ParoCollCall, i);
        if (paro_compress_ranks(c->scope, z->n, z->m) == 1)
            g_array_remove_index(calls, i);
    }
    apply_framework(b, calls);
    return calls;
}

/* Each layer's share of the dense parameters and of the routed experts' (the MoE layers
 * hold equal shares of the experts). */
static void split_layer_shares(ParoStepBuild *b)
{
    const ParoModel *m = b->d->scenario->model;
    gint64 L = (gint64)b->d->layers->len;
    double all = b->d->sizes.params, routed = paro_model_expert_params(m);
    double per_layer = routed / (double)MAX(1, paro_model_expert_layers(m));
    b->dense_share = g_new(double, L);
    b->expert_share = g_new(double, L);
    for (gint64 l = 0; l < L; l++) {
        double share = g_array_index(b->d->layers, ParoLayerCost, l).weight_share;
        /* the last layer carries the multi-token prediction modules (compute.c) */
        gint64 holders = paro_model_layer_has_experts(m, l);
        for (gint64 k = L; l == L - 1 && k < L + m->mtp_layers; k++)
            holders += paro_model_layer_has_experts(m, k);
        double experts = (double)holders * per_layer;
        b->dense_share[l] = (share * all - experts) / (all - routed);
        b->expert_share[l] = routed > 0 ? experts / routed : 0;
    }
}

/* Stage @d's shares of the dense parameters and of the routed experts. */
static void stage_group_shares(const ParoStepBuild *b, gint64 d, double *dense, double *experts)
{
    const ParoScenario *s = b->d->scenario;
    gint64 L = (gint64)b->d->layers->len, S = s->pp * s->training.pipeline_virtual;
    *dense = *experts = 0;
    for (gint64 k = d; k < S; k += s->pp) {
        gint64 first, count = paro_scenario_module_span(s, L, k, &first);
        for (gint64 l = first; l < first + count; l++) {
            *dense += b->dense_share[l];
            *experts += b->expert_share[l];
        }
    }
}

/* Layer @l's share of the dense group's parameters (all of them without expert
 * parallelism) and of the routed experts'. */
static double dense_share(const ParoStepBuild *b, gint64 l)
{
    return b->dense_share ? b->dense_share[l]
                          : g_array_index(b->d->layers, ParoLayerCost, l).weight_share;
}

static double expert_share(const ParoStepBuild *b, gint64 l)
{
    return b->expert_share ? b->expert_share[l] : 0;
}

/* Each stage's routed experts' states, sharded over their group, beside the dense ones
 * paro_step_offload_init counted (expert parallelism offloads nothing: scenario.c). */
static void add_expert_states(ParoStepBuild *b)
{
    for (gint64 d = 0; d < b->P; d++) {
        ParoStepStage *st = &b->stages[d];
        ParoStateSizes ze = b->ze;
        ze.params *= st->expert_share;
        ze.trainable *= st->expert_share;
        ParoStateMemory experts = paro_strategy_memory(b->strategy, &ze);
        st->offload.gpu.params += experts.params;
        st->offload.gpu.grads += experts.grads;
        st->offload.gpu.optimizer += experts.optimizer;
        st->offload.owned += ze.trainable / paro_strategy_divisor(b->strategy->os, ze.n, ze.m);
    }
}

/* PyTorch FSDP's mixed precision keeps the sharded parameters in fp32, the optimizer's
 * master copy itself, and casts each reduced gradient shard to them (FSDP2's
 * MixedPrecisionPolicy: param_dtype is the gathered copy's type; foreach_reduce's
 * `.to(orig_dtype)`; FSDP1's `_mixed_precision_enabled_for_buffers` keeps the flat
 * parameter's full precision): with 16-bit training there is no 16-bit shard beside the
 * master where the parameters are sharded as the optimizer state is (p = os: full and hybrid
 * sharding; DDP under autocast), and the gradients are fp32 where they are sharded as the
 * master is (g = os; FSDP2's reshard_after_forward=False too). ZeRO-1's layout (g = N, os
 * sharded) has no such PyTorch counterpart and keeps ZeRO's bytes, as the other profiles do
 * (decision 94). */
static void fsdp_state_layout(ParoStepBuild *b)
{
    double bp = b->z.param_bytes;
    /* mixed precision: 16-bit training with an fp32 master among the optimizer's bytes (K =
     * 12: master and two moments; bf16-pure training keeps none) */
    if (!paro_framework_pytorch_runtime(&b->d->scenario->framework) || bp >= 4 ||
        b->z.optim_bytes < 12)
        return;
    for (gint64 d = 0; d < b->P; d++) {
        ParoOffloadState *o = &b->stages[d].offload;
        if (o->optimizer || o->parameters)
            continue;
        if (b->strategy->p == b->strategy->os)
            o->gpu.params = MAX(0.0, o->gpu.params - bp * o->owned);
        if (b->strategy->g == b->strategy->os)
            o->gpu.grads *= 4.0 / bp;
    }
}

/* torch.distributed.pipelining runs an FSDP stage's backwards without gradient sync and
 * reduces once after the last micro-batch's (stage.py backward_maybe_with_nosync:
 * set_requires_gradient_sync(False), then post_backward on the last); meanwhile FSDP2 keeps
 * each parameter's unsharded gradient, accumulated in the reduce type
 * (FSDPParam.to_accumulated_grad_if_needed: unsharded_accumulated_grad). So under the fsdp
 * profile with pipeline parallelism the full gradients of the stage wait from their first
 * backward to the last micro-batch's reduce-scatter (decision 94). */
static gboolean deferred_sync(const ParoStepBuild *b)
{
    /* layered accumulation reduces in a module's last pass already */
    return paro_framework_pytorch_runtime(&b->d->scenario->framework) && b->P > 1 && !b->layered &&
           (b->reduce != NULL || b->reduce_e != NULL);
}

/* FSDP (1 and 2) does not reshard its root unit after the forward: the root's parameters
 * (the embeddings, the final norm and the output head, outside the blocks torchtitan and
 * Composer wrap) stay gathered from a micro-batch's forward to the end of its backward,
 * and the backward does not gather them again (FSDP2's _fsdp_state._lazy_init drops the
 * root's post-forward resharding; FSDP1's _post_forward_reshard frees only a non-root
 * handle). Under the fsdp profile for a strategy that gathers, one stage, depth-first, no
 * expert parallelism and no offloaded parameters (decision 94). */
static void fsdp_root_unit(ParoStepBuild *b)
{
    const ParoScenario *sc = b->d->scenario;
    const ParoModel *m = sc->model;
    gint64 L = (gint64)b->d->layers->len;
    b->root_share[0] = b->root_share[1] = 0;
    if (!paro_framework_pytorch_runtime(&sc->framework) || !paro_strategy_gathers(b->strategy) ||
        b->P > 1 || b->layered || b->dense_share != NULL || !m->has_shape || L < 2 ||
        b->stages[0].offload.parameters)
        return;
    /* the parts of the first and last layers' weight shares (model/compute.c) */
    double total = paro_model_shape_params(m);
    b->root_share[0] = paro_model_embedding_params(m) / total;
    b->root_share[1] = paro_model_head_params(m) / total;
}

/* The gathered bytes of @share of the parameters in the root unit: 16-bit copies only (the
 * embeddings and the head are no fp8 linears: torchao's converter and Transformer Engine
 * leave them in bf16). */
static double root_bytes(const ParoStepBuild *b, double share)
{
    return b->z.param_bytes * b->z.params * share;
}

/* Layer @l's share of the parameters the root unit keeps gathered (fsdp_root_unit). */
static double root_share(const ParoStepBuild *b, gint64 l)
{
    gint64 L = (gint64)b->d->layers->len;
    return l == 0 ? b->root_share[0] : l == L - 1 ? b->root_share[1] : 0;
}

/* Layer @l's gradients on stage @d's GPU (on-demand gradients): its share of the stage's
 * parameters, dense and routed experts alike. */
static double layer_grads(const ParoStepBuild *b, guint d, gint64 l)
{
    const ParoStepStage *st = &b->stages[d];
    double all = b->z.trainable * st->share + b->ze.trainable * st->expert_share;
    double mine = b->z.trainable * dense_share(b, l) + b->ze.trainable * expert_share(b, l);
    return all > 0 ? st->offload.gpu.grads * mine / all : 0;
}

gboolean paro_step_build_init(ParoStepBuild *b)
{
    const ParoScenario *sc = b->d->scenario;
    gint64 L = (gint64)b->d->layers->len;
    gboolean layered = sc->training.accumulation_order == PARO_PIPE_LAYERED;
    b->P = sc->pp;
    b->v = sc->training.pipeline_virtual;
    b->S = b->P * b->v;
    b->M = b->micro_steps > 0 ? b->micro_steps : sc->training.accumulation;
    b->layered = layered;
    /* full and per-op recomputation run the forward's TP, CP and EP communication again */
    gboolean full = sc->training.recompute == PARO_RECOMPUTE_FULL ||
                    sc->training.recompute == PARO_RECOMPUTE_OP;
    paro_scenario_param_groups(sc, &b->d->sizes, &b->z, &b->ze);
    b->z.params /= (double)sc->tp; /* exact for tp = 1 */
    b->z.trainable /= (double)sc->tp;
    b->calls = strategy_calls(b, &b->z);
    if (sc->ep > 1) {
        b->ze.params /= (double)sc->tp; /* paro_scenario_param_groups scaled it by tp / etp */
        b->ze.trainable /= (double)sc->tp;
        b->calls_e = strategy_calls(b, &b->ze);
        b->gather_f_e = find_phase(b->calls_e, PARO_PHASE_FORWARD);
        b->gather_b_e = find_phase(b->calls_e, PARO_PHASE_BACKWARD);
        b->reduce_e = find_phase(b->calls_e, PARO_PHASE_GRADIENT);
        paro_step_expert_view(sc, &b->expert_view, &b->expert_topology);
        split_layer_shares(b);
    }
    b->grad_pass_s = grad_pass_s(b);
    b->copy_out_s = flat_pass_s(b, paro_framework_gather_copy_bytes(&sc->framework));
    b->accumulate_s = accumulate_s(b);
    b->gather_f = find_phase(b->calls, PARO_PHASE_FORWARD);
    b->gather_b = find_phase(b->calls, PARO_PHASE_BACKWARD);
    b->reduce = find_phase(b->calls, PARO_PHASE_GRADIENT);
    paro_scenario_layer_activations(sc, sc->tp, &b->act_kept, &b->act_whole);
    b->loss = paro_scenario_loss_memory(sc, sc->tp);
    b->stages = g_new0(ParoStepStage, b->P);
    for (gint64 d = 0; d < b->P; d++) {
        ParoStepStage *st = &b->stages[d];
        st->reductions = g_array_new(FALSE, FALSE, sizeof(ParoTaskId));
        st->last_reductions = g_array_new(FALSE, FALSE, sizeof(ParoTaskId));
        st->previous = PARO_TASK_NONE;
        st->share = paro_step_stage_share(b->d, d);
        if (b->dense_share != NULL)
            stage_group_shares(b, d, &st->share, &st->expert_share);
    }
    paro_step_offload_init(b);
    if (b->calls_e != NULL)
        add_expert_states(b);
    fsdp_state_layout(b);
    /* PyTorch frees the gradients after the optimizer step (Optimizer.zero_grad's
     * set_to_none, the default since PyTorch 2.0) and makes each layer's in its backward
     * (autograd's .grad; FSDP's as the output of the unit's reduce-scatter: FSDP2's
     * foreach_reduce, FSDP1's post-backward hook), so the forward and the backward's first
     * layers, where the activations peak, run without them; the other profiles keep a
     * gradient buffer the whole step (Megatron's and DeepSpeed's contiguous buffers) */
    b->grads_on_demand = paro_framework_pytorch_runtime(&sc->framework);
    b->deferred_sync = deferred_sync(b);
    fsdp_root_unit(b);
    b->optimizer_temp_bytes =
        paro_framework_fused_optimizer(&sc->framework) ? 0 : PARO_FOREACH_OPTIMIZER_TEMP_BYTES;
    b->gathers_f = g_new(ParoTaskId, L);
    b->gathers_b = g_new(ParoTaskId, L);
    b->scratch = g_array_sized_new(FALSE, FALSE, sizeof(ParoTaskId), (guint)L);
    b->costs = g_hash_table_new_full(cost_hash, cost_equal, g_free, NULL);
    b->module_compute_s = g_new0(double, b->S);
    b->module_comm_s = g_new0(double, b->S);
    /* each layer's backward TP collectives as the profile runs them beside its products
     * (decision 58): the recomputed forward's in series, the backward's own hidden */
    if (sc->tp > 1 && !paro_framework_tp_overlap(&sc->framework) &&
        paro_framework_tp_async_dgrad(&sc->framework)) {
        b->tp_bwd_async = g_new(ParoTime, L);
        for (gint64 l = 0; l < L; l++)
            b->tp_bwd_async[l] = paro_step_tp_backward_async(
                sc, b->compression, &b->d->compute, &g_array_index(b->d->layers, ParoLayerCost, l));
    }
    if (sc->cp > 1) {
        b->cp_fwd = g_new(ParoStepComm, L);
        b->cp_bwd = g_new(ParoStepComm, L);
        for (gint64 l = 0; l < L; l++) {
            const ParoLayerCost *lc = &g_array_index(b->d->layers, ParoLayerCost, l);
            b->cp_fwd[l] = paro_step_cp_layer(sc, lc, FALSE);
            b->cp_bwd[l] = paro_step_cp_layer(sc, lc, TRUE);
        }
    }
    b->ep_fwd = paro_step_ep_layer(sc, FALSE, FALSE);
    b->ep_bwd = paro_step_ep_layer(sc, TRUE, full);
    b->ep_bwd_kept = paro_step_ep_layer(sc, TRUE, FALSE);
    b->p2p_intra = paro_step_p2p(sc, b->compression, TRUE);
    b->p2p_inter = paro_step_p2p(sc, b->compression, FALSE);
    b->p2p_stream =
        paro_framework_blocking_p2p(&sc->framework) ? PARO_STREAM_COMPUTE : PARO_STREAM_P2P;
    return paro_step_tp_layer(sc, b->compression, b->cache, FALSE, FALSE, &b->tp_fwd, b->error) &&
           paro_step_tp_layer(sc, b->compression, b->cache, TRUE, full, &b->tp_bwd, b->error) &&
           paro_step_tp_layer(sc, b->compression, b->cache, TRUE, FALSE, &b->tp_bwd_kept, b->error);
}

void paro_step_build_clear(ParoStepBuild *b)
{
    for (gint64 d = 0; b->stages && d < b->P; d++) {
        g_array_unref(b->stages[d].reductions);
        g_array_unref(b->stages[d].last_reductions);
    }
    g_clear_pointer(&b->stages, g_free);
    g_clear_pointer(&b->calls, g_array_unref);
    g_clear_pointer(&b->calls_e, g_array_unref);
    g_clear_pointer(&b->dense_share, g_free);
    g_clear_pointer(&b->expert_share, g_free);
    g_clear_pointer(&b->scratch, g_array_unref);
    g_clear_pointer(&b->costs, g_hash_table_unref);
    g_clear_pointer(&b->gathers_f, g_free);
    g_clear_pointer(&b->gathers_b, g_free);
    g_clear_pointer(&b->module_compute_s, g_free);
    g_clear_pointer(&b->module_comm_s, g_free);
    g_clear_pointer(&b->tp_bwd_async, g_free);
    g_clear_pointer(&b->cp_fwd, g_free);
    g_clear_pointer(&b->cp_bwd, g_free);
}

static guint streams_of(ParoScope scope, gboolean overlap)
{
    if (!overlap)
        return PARO_STREAM_COMPUTE;
    switch (scope) {
    case PARO_SCOPE_INTRA:
        return PARO_STREAM_INTRA;
    case PARO_SCOPE_INTER:
        return PARO_STREAM_INTER;
    case PARO_SCOPE_GLOBAL:
        return PARO_STREAM_INTRA | PARO_STREAM_INTER;
    }
    g_assert_not_reached();
}

/* A communication task of @cost on stage @d's links. */
static ParoTaskId add_comm(ParoStepBuild *b, const char *name, guint d, guint streams, gint micro,
                           gint layer, const ParoStepComm *cost)
{
    ParoTaskId t =
        paro_task_graph_add(b->graph, name, PARO_TASK_COMM, d, streams, micro, layer, cost->time);
    paro_task_graph_use(b->graph, t, paro_step_resource(d, PARO_RES_INTRA_TX), cost->intra_share);
    paro_task_graph_use(b->graph, t, paro_step_resource(d, PARO_RES_INTRA_RX), cost->intra_share);
    paro_task_graph_use(b->graph, t, paro_step_resource(d, PARO_RES_INTER_TX), cost->inter_share);
    paro_task_graph_use(b->graph, t, paro_step_resource(d, PARO_RES_INTER_RX), cost->inter_share);
    paro_task_graph_take_sms(b->graph, t, cost->sms_share);
    b->stages[d].compress_s += cost->codec_s;
    b->stages[d].bytes_saved += cost->saved_bytes;
    return t;
}

/* A DP collective of the strategy's @call, @size bytes before compression, over the dense
 * parameters' group or the routed @experts'. */
static ParoTaskId add_group_coll(ParoStepBuild *b, gboolean experts, const char *name, guint d,
                                 const ParoCollCall *call, double size, gint micro, gint layer)
{
    Cost key = {.phase = call->phase,
                .op = call->op,
                .scope = call->scope,
                .experts = experts,
                .bytes = size};
    Cost *known = g_hash_table_lookup(b->costs, &key);
    if (known == NULL) {
        const ParoScenario *group = experts ? &b->expert_view : b->d->scenario;
        if (!b->failed &&
            !paro_step_dp_coll(group, b->compression, b->cache, call, size, &key.cost, b->error))
            b->failed = TRUE;
        known = g_memdup2(&key, sizeof key);
        g_hash_table_add(b->costs, known);
    }
    const ParoScenario *sc = b->d->scenario;
    gboolean blocking =
        call->phase == PARO_PHASE_GRADIENT &&
        paro_framework_reduce_on_compute(&sc->framework, params_sharded(b->strategy));
    return add_comm(b, name, d, streams_of(call->scope, sc->training.overlap && !blocking), micro,
                    layer, &known->cost);
}

static ParoTaskId add_coll(ParoStepBuild *b, const char *name, guint d, const ParoCollCall *call,
                           double size, gint micro, gint layer)
{
    return add_group_coll(b, FALSE, name, d, call, size, micro, layer);
}

static ParoTaskId scratch_at(const ParoStepBuild *b, gint64 i)
{
    return g_array_index(b->scratch, ParoTaskId, i);
}

/* The layer at position @i of a pass over @module: backward runs the layers last first. */
static gint64 pass_layer(gboolean forward, gint64 first, gint64 count, gint64 i)
{
    return forward ? first + i : first + count - 1 - i;
}

/* Layer @l's gathered parameters: its dense share, and its experts' under expert
 * parallelism (where the strategy gathers them). */
static double layer_gathered_bytes(const ParoStepBuild *b, gint64 l)
{
    double params = b->z.params * dense_share(b, l);
    if (b->gather_f_e != NULL || b->gather_b_e != NULL)
        params += b->ze.params * expert_share(b, l);
    return paro_scenario_gathered_bytes(b->d, params);
}

/* One pass (paro_pipe_build's emitter): the layers of @module for micro-batch @micro. */
static void add_pass(gpointer data, ParoTaskGraph *graph, gint64 device, ParoPipeKind kind,
                     gint64 module, gint64 micro, ParoTaskId *out_first, ParoTaskId *out_last)
{
    ParoStepBuild *b = data;
    const ParoScenario *sc = b->d->scenario;
    const ParoStateSizes *z = &b->z;
    ParoStepStage *st = &b->stages[device];
    guint d = (guint)device;
    gint m = (gint)micro;
    gint64 lo, pm = paro_scenario_module_span(sc, (gint64)b->d->layers->len, module, &lo);
    gint64 p = sc->training.prefetch, tp = sc->tp;
    gboolean forward = kind == PARO_PIPE_FORWARD;
    /* layered: DP collectives in the module's first pass, memory freed in its last */
    gboolean first_pass = !b->layered || micro == 0, last_pass = !b->layered || micro == b->M - 1;
    const ParoCollCall *gather = forward ? b->gather_f : b->gather_b;
    const ParoCollCall *gather_e = forward ? b->gather_f_e : b->gather_b_e;
    ParoTaskId *kept = forward ? b->gathers_f : b->gathers_b;
    ParoTaskId last = PARO_TASK_NONE;
    double bucket = 0, bucket_e = 0, compute_s = 0, comm_s = 0;
    g_array_set_size(b->scratch, 0);
    gint64 issued = 0; /* gathers of this pass issued so far */
    for (gint64 i = 0; i < pm; i++) {
        gint64 l = pass_layer(forward, lo, pm, i);
        const ParoLayerCost *lc = &g_array_index(b->d->layers, ParoLayerCost, l);
        double gathered = layer_gathered_bytes(b, l);
        /* a layer full recomputation skips (recompute_every) keeps all its activations */
        gboolean skipped = sc->training.recompute == PARO_RECOMPUTE_FULL && !lc->recomputed;
        double act_kept = skipped ? b->act_whole : b->act_kept;
        const ParoStepComm *tp_cost = forward ? &b->tp_fwd : skipped ? &b->tp_bwd_kept : &b->tp_bwd;
        /* The gathers of the layers up to p ahead are issued before this layer's compute,
         * so before its reduce-scatter on the same stream: FSDP's BACKWARD_PRE and
         * DeepSpeed's stage-3 prefetch do so (docs/frameworks.md). Issued after it, the
         * next layer's gather would queue behind the reduce-scatter and run in series
         * with the backward. */
        for (; gather && first_pass && issued <= MIN(i + p, pm - 1); issued++) {
            gint64 j = issued, lj = pass_layer(forward, lo, pm, j);
            /* an offloaded shard comes over PCIe first (step-offload.c) */
            ParoTaskId f = paro_step_offload_fetch(b, d, m, lj, dense_share(b, lj));
            /* the backward does not gather the root unit's part again (fsdp_root_unit) */
            double again = forward ? 0 : root_share(b, lj);
            ParoTaskId t = add_coll(b, "allgather", d, gather,
                                    gather->size_bytes * (dense_share(b, lj) - again), m, (gint)lj);
            paro_task_graph_on_start(graph, t, PARO_MEM_GATHERED,
                                     layer_gathered_bytes(b, lj) - root_bytes(b, again));
            paro_task_graph_depend(graph, t, f);
            ParoTaskId head = f != PARO_TASK_NONE ? f : t;
            if (j - p - 1 >= 0)
                paro_task_graph_depend(graph, head, scratch_at(b, j - p - 1));
            else if (!forward)
                paro_task_graph_depend(graph, head, st->previous);
            comm_s += paro_time_to_s(paro_task_graph_get(graph, t).duration);
            if (gather_e != NULL && expert_share(b, lj) > 0) {
                /* the layer's experts, after its dense parameters */
                ParoTaskId e =
                    add_group_coll(b, TRUE, "allgather", d, gather_e,
                                   gather_e->size_bytes * expert_share(b, lj), m, (gint)lj);
                paro_task_graph_depend(graph, e, t);
                comm_s += paro_time_to_s(paro_task_graph_get(graph, e).duration);
                t = e;
            }
            kept[lj] = t;
        }
        ParoTaskId g = gather ? kept[l] : PARO_TASK_NONE;
        double seconds = forward ? lc->forward_s : lc->backward_s; /* one TP rank's */
        if (!forward)
            seconds += (b->grad_pass_s + (micro > 0 ? b->accumulate_s : 0)) *
                       (z->trainable * dense_share(b, l) + b->ze.trainable * expert_share(b, l));
        /* FSDP2 copies the gathered buffer out into the parameters before the layer's
         * kernels, on the compute stream (decision 62) */
        if (gather && first_pass)
            seconds += b->copy_out_s * gathered;
        /* an offloaded checkpoint comes back when its backward asks for it (step-offload.c) */
        ParoTaskId back =
            forward
                ? PARO_TASK_NONE
                : paro_step_offload_checkpoint_in(b, d, i > 0 ? scratch_at(b, i - 1) : st->previous,
                                                  m, l, act_kept, i == 0);
        ParoTaskId c =
            paro_task_graph_add(graph, forward ? "forward" : "backward", PARO_TASK_COMPUTE, d,
                                PARO_STREAM_COMPUTE, m, (gint)l, paro_time_from_s(seconds));
        compute_s += seconds;
        paro_task_graph_depend(graph, c, g);
        paro_task_graph_depend(graph, c, back);
        /* The last layer runs the output head and the loss: its logits' memory peaks in
         * the loss's forward, part stays to the backward, and the loss's backward peaks
         * before the layer's recomputation does (decision 50). Counted from the task's
         * start, as a backward's recomputed activations are, so the ledger holds the peak. */
        const ParoLossMemory *loss = l == (gint64)b->d->layers->len - 1 ? &b->loss : &no_loss;
        if (forward && loss->forward_peak > 0) {
            paro_task_graph_on_start(graph, c, PARO_MEM_ACTIVATIONS, act_kept + loss->forward_peak);
            paro_task_graph_on_end(graph, c, PARO_MEM_ACTIVATIONS, loss->kept - loss->forward_peak);
        } else if (forward) {
            paro_task_graph_on_end(graph, c, PARO_MEM_ACTIVATIONS, act_kept);
            paro_step_offload_checkpoint_out(b, d, c, m, l, act_kept, i == pm - 1);
        } else {
            /* Back-pressure: a backward that opens a new bucket needs one of the
             * BUCKETS_IN_FLIGHT bucket buffers, freed when an older reduce-scatter ends. */
            if (b->reduce && last_pass && bucket == 0 && st->reductions->len >= BUCKETS_IN_FLIGHT)
                paro_task_graph_depend(graph, c,
                                       g_array_index(st->reductions, ParoTaskId,
                                                     st->reductions->len - BUCKETS_IN_FLIGHT));
            double peak = MAX(b->act_whole, act_kept + loss->backward_peak);
            paro_task_graph_on_start(graph, c, PARO_MEM_ACTIVATIONS, peak - act_kept - loss->kept);
            paro_task_graph_on_end(graph, c, PARO_MEM_ACTIVATIONS, -peak);
            /* the layer's gradient shards, made by its first backward (later ones accumulate
             * into them), or deferred, by the reduction after the last */
            if (b->grads_on_demand && micro == (b->deferred_sync ? b->M - 1 : 0))
                paro_task_graph_on_end(graph, c, PARO_MEM_GRADS, layer_grads(b, d, l));
        }
        if (gather && last_pass) {
            /* the root unit's part stays to the end of the backward (fsdp_root_unit) */
            double root = root_bytes(b, root_share(b, l));
            if (!forward && l == 0)
                root = -root_bytes(b, b->root_share[1]);
            paro_task_graph_on_end(graph, c, PARO_MEM_GATHERED, -(gathered - root));
        }
        g_array_append_val(b->scratch, c);
        last = c;
        if (tp > 1) {
            ParoStepComm cost = *tp_cost;
            if (paro_framework_tp_overlap(&sc->framework))
                cost.time = paro_step_tp_exposed(sc, lc, forward, cost.time);
            else if (!forward && b->tp_bwd_async)
                cost.time = tp_cost->time - b->tp_bwd_kept.time + b->tp_bwd_async[l];
            last = add_comm(b, "tp", d, PARO_STREAM_COMPUTE, m, (gint)l, &cost);
            compute_s += paro_time_to_s(cost.time);
        }
        if (b->cp_fwd != NULL) {
            const ParoStepComm *cost = forward ? &b->cp_fwd[l] : &b->cp_bwd[l];
            last = add_comm(b, "cp", d, PARO_STREAM_COMPUTE, m, (gint)l, cost);
            compute_s += paro_time_to_s(cost->time);
        }
        if (sc->ep > 1 && b->expert_share[l] > 0) {
            const ParoStepComm *cost = forward   ? &b->ep_fwd
                                       : skipped ? &b->ep_bwd_kept
                                                 : &b->ep_bwd;
            last = add_comm(b, "ep", d, PARO_STREAM_COMPUTE, m, (gint)l, cost);
            compute_s += paro_time_to_s(cost->time);
        }
        if (!forward && (b->reduce || b->reduce_e) && last_pass) {
            double grads = b->reduce ? b->reduce->size_bytes * dense_share(b, l) : 0;
            double grads_e = b->reduce_e ? b->reduce_e->size_bytes * expert_share(b, l) : 0;
            /* deferred: the unsharded gradients held from the first micro-batch's backward,
             * reduced after the last's (the loop's last statement: nothing else to skip) */
            if (!b->deferred_sync || micro == 0)
                paro_task_graph_on_end(graph, c, PARO_MEM_BUCKETS, grads + grads_e);
            if (b->deferred_sync && micro != b->M - 1)
                continue;
            bucket += grads;
            bucket_e += grads_e;
            if (bucket + bucket_e >= sc->training.bucket_bytes || i == pm - 1) {
                /* the bucket's dense gradients, then its experts' over their own group */
                for (int group = 0; group < 2; group++) {
                    const ParoCollCall *reduce = group ? b->reduce_e : b->reduce;
                    double bytes = group ? bucket_e : bucket;
                    if (reduce == NULL || bytes <= 0)
                        continue;
                    ParoTaskId rs = add_group_coll(b, group == 1, paro_coll_kind_names[reduce->op],
                                                   d, reduce, bytes, m, (gint)l);
                    paro_task_graph_depend(graph, rs, c);
                    comm_s += paro_time_to_s(paro_task_graph_get(graph, rs).duration);
                    /* the bucket is held until its offloaded shard is copied out */
                    if (group == 0)
                        rs = paro_step_offload_grads(b, d, rs, bytes / reduce->size_bytes, m,
                                                     (gint)l);
                    paro_task_graph_on_end(graph, rs, PARO_MEM_BUCKETS, -bytes);
                    if (micro == b->M - 1)
                        g_array_append_val(st->last_reductions, rs);
                    g_array_append_val(st->reductions, rs);
                }
                bucket = bucket_e = 0;
            }
        }
    }
    st->previous = last;
    b->module_compute_s[module] += compute_s / (double)b->M;
    b->module_comm_s[module] += comm_s / (double)b->M;
    *out_first = scratch_at(b, 0);
    *out_last = last;
}

/* A pipeline send (paro_pipe_build's emitter): on the sender's p2p stream (NCCL runs a
 * communicator's operations in order), or, when the framework's sends block
 * (paro_framework_blocking_p2p), on its compute stream right after the pass that produced
 * it (paro_pipe_build emits a device's passes and sends in program order); through the
 * sender's and the receiver's ports; its codec is counted on the sender. */
static ParoTaskId add_send(gpointer data, ParoTaskGraph *graph, gint64 from, gint64 to,
                           ParoPipeKind kind, gint64 module, gint64 micro)
{
    ParoStepBuild *b = data;
    const ParoScenario *sc = b->d->scenario;
    const ParoStepComm *c = paro_step_p2p_is_intra(sc, from, to) ? &b->p2p_intra : &b->p2p_inter;
    ParoTaskId t = paro_task_graph_add(graph, "p2p", PARO_TASK_COMM, (guint)from, b->p2p_stream,
                                       (gint)micro, (gint)module, c->time);
    gboolean intra = c->intra_share > 0;
    double share = intra ? c->intra_share : c->inter_share;
    paro_task_graph_use(
        graph, t, paro_step_resource((guint)from, intra ? PARO_RES_INTRA_TX : PARO_RES_INTER_TX),
        share);
    paro_task_graph_use(
        graph, t, paro_step_resource((guint)to, intra ? PARO_RES_INTRA_RX : PARO_RES_INTER_RX),
        share);
    b->stages[from].compress_s += c->codec_s;
    b->stages[from].bytes_saved += c->saved_bytes;
    return t;
}

/* The stage's DP phase: gradient sync, optimizer, parameter sync, in sequence. */
/* Stage @d's syncs of @phase, the dense group's then the experts', after @previous;
 * with @after_reductions each waits for the last micro-batch's reductions too. */
static ParoTaskId add_syncs(ParoStepBuild *b, guint d, ParoPhase phase, ParoTaskId previous,
                            gboolean after_reductions)
{
    ParoStepStage *st = &b->stages[d];
    for (int group = 0; group < 2; group++) {
        GArray *calls = group ? b->calls_e : b->calls;
        double share = group ? st->expert_share : st->share;
        for (guint i = 0; calls != NULL && i < calls->len; i++) {
            const ParoCollCall *c = &g_array_index(calls, ParoCollCall, i);
            if (c->phase != phase || share <= 0)
                continue;
            ParoTaskId t = add_group_coll(b, group == 1, paro_coll_kind_names[c->op], d, c,
                                          c->size_bytes * share, -1, -1);
            paro_task_graph_depend(b->graph, t, previous);
            for (guint r = 0; after_reductions && r < st->last_reductions->len; r++)
                paro_task_graph_depend(b->graph, t,
                                       g_array_index(st->last_reductions, ParoTaskId, r));
            previous = t;
        }
    }
    return previous;
}

static void add_sync(ParoStepBuild *b, guint d)
{
    ParoStepStage *st = &b->stages[d];
    ParoTaskGraph *graph = b->graph;
    ParoTaskId previous = add_syncs(b, d, PARO_PHASE_SYNC_GRAD, st->previous, TRUE);
    /* the GPU's or, offloaded, the CPU's step on the owned shard (scenario/offload.c) */
    previous = paro_step_offload_before_step(b, d, previous);
    ParoTaskId opt =
        paro_task_graph_add(graph, "optimizer", PARO_TASK_COMPUTE, d, PARO_STREAM_COMPUTE, -1, -1,
                            paro_time_from_s(paro_offload_optimizer_s(b->d, &st->offload)));
    paro_task_graph_depend(graph, opt, previous);
    for (guint r = 0; r < st->last_reductions->len; r++)
        paro_task_graph_depend(graph, opt, g_array_index(st->last_reductions, ParoTaskId, r));
    /* PyTorch's foreach AdamW takes the square roots of all the second moments at once
     * (torch/optim/adam.py _multi_tensor_adam: exp_avg_sq_sqrt = _foreach_sqrt(...)), a
     * temporary of the states' fp32 for every parameter it steps; a fused kernel needs none */
    if (!st->offload.optimizer && b->optimizer_temp_bytes > 0) {
        double temps = st->offload.owned * b->optimizer_temp_bytes;
        paro_task_graph_on_start(graph, opt, PARO_MEM_OPTIMIZER_TEMPS, temps);
        paro_task_graph_on_end(graph, opt, PARO_MEM_OPTIMIZER_TEMPS, -temps);
    }
    if (b->grads_on_demand) /* zero_grad(set_to_none=True) */
        paro_task_graph_on_end(graph, opt, PARO_MEM_GRADS, -st->offload.gpu.grads);
    previous = paro_step_offload_after_step(b, d, opt);
    st->previous = add_syncs(b, d, PARO_PHASE_SYNC_PARAM, previous, FALSE);
}

gboolean paro_step_build(ParoStepBuild *b)
{
    const ParoScenario *sc = b->d->scenario;
    /* Without pipeline parallelism and depth-first, a stage runs each micro-batch's forward
     * then its backward: 1F1B on one device, whatever schedule the scenario names. */
    gboolean plain = b->P == 1 && b->v == 1 && !b->layered;
    g_autofree ParoTime *zero = g_new0(ParoTime, b->S);
    ParoPipeSpec spec = {
        .schedule = plain ? PARO_PIPE_1F1B : sc->training.pipeline_schedule,
        .accumulation = b->layered ? PARO_PIPE_LAYERED : PARO_PIPE_DEPTH_FIRST,
        .devices = b->P,
        .chunks = b->v,
        .micro = b->M,
        .forward = zero,
        .backward = zero,
        /* torchtitan pipelines with torch.distributed.pipelining (pipe-order.c) */
        .torch_warmup = paro_framework_pytorch_runtime(&sc->framework),
    };
    ParoPipeEmitter emit = {add_pass, add_send, b};
    if (!paro_pipe_build(&spec, &emit, b->graph, NULL, b->error))
        return FALSE;
    for (guint d = 0; d < (guint)b->P; d++)
        add_sync(b, d);
    return !b->failed;
}

double paro_step_build_textbook_s(const ParoStepBuild *b)
{
    const ParoScenario *sc = b->d->scenario;
    double slowest = 0;
    for (gint64 d = 0; d < b->P; d++) {
        double stage = 0;
        for (gint64 k = d; k < b->S; k += b->P) {
            double c = b->module_compute_s[k], m = b->module_comm_s[k];
            stage += sc->training.overlap ? MAX(c, m) : c + m;
        }
        slowest = MAX(slowest, stage);
    }
    /* the longest DP phase: the tasks of no micro-batch (syncs and optimizer) */
    g_autofree double *phase = g_new0(double, b->P);
    double longest = 0;
    for (guint i = 0; i < paro_task_graph_n_tasks(b->graph); i++) {
        ParoTaskInfo t = paro_task_graph_get(b->graph, i);
        if (t.micro < 0) {
            phase[t.device] += paro_time_to_s(t.duration);
            longest = MAX(longest, phase[t.device]);
        }
    }
    return ((double)b->M + (double)(b->P - 1) / (double)b->v) * slowest + longest;
}

gint64 paro_step_build_periodic_from(const ParoStepBuild *b)
{
    gint64 from = b->P > 1 ? 3 * b->P : 4;
    if (!b->layered)
        return from;
    /* A layered module's collectives run once a step while its compute grows with the
     * micro-batches: periodic once M x its compute a micro-batch exceeds them (twice that,
     * for the prefetch and the sharing that blur the turn). */
    double most = 0;
    for (gint64 k = 0; k < b->S; k++)
        if (b->module_compute_s[k] > 0)
            most = MAX(most, b->module_comm_s[k] * (double)b->M / b->module_compute_s[k]);
    double micro = 2 * ceil(most) + (double)from;
    return micro < (double)G_MAXINT32 ? (gint64)micro : G_MAXINT32;
}
