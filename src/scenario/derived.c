/* SPDX-License-Identifier: MIT */
/* The derived quantities of a scenario (derived.h). */
#include "scenario/derived.h"

#include "calib/layer-check.h"

ParoCommModel paro_scenario_comm_model(const ParoScenario *s)
{
    const ParoTopology *t = s->topology;
    return (ParoCommModel){
        .n = paro_scenario_dp_ranks(s),
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

/* One NCCL connection's buffers, a protocol each, at NCCL's defaults (src/init.cc
 * computeBuffSizes): LL, NCCL_LL_LINES_PER_THREAD 8 x NCCL_LL_MAX_NTHREADS 512 x NCCL_STEPS 8
 * x 16-byte lines = 512 KiB; LL128, NCCL_LL128_ELEMS_PER_THREAD 120 x
 * NCCL_LL128_MAX_NTHREADS 640 x 8 steps x 8 bytes = 4,915,200; Simple, NCCL_BUFFSIZE 4 MiB.
 * A channel of a ring holds a connection to its previous and one to its next peer, and a
 * communicator (one per scope the strategy uses) its channels' (decision 94). */
#define NCCL_CONNECTION_BYTES (524288.0 + 4915200.0 + 4194304.0)

double paro_scenario_comm_buffers(const ParoScenario *s, const ParoStrategy *st)
{
    ParoStateSizes z = paro_scenario_state_sizes(s);
    g_autoptr(GArray) calls = g_array_new(FALSE, FALSE, sizeof(ParoCollCall));
    paro_strategy_collectives(st, &z, calls);
    gboolean used[3] = {FALSE, FALSE, FALSE};
    for (guint i = 0; i < calls->len; i++)
        used[g_array_index(calls, ParoCollCall, i).scope] = TRUE;
    const ParoTopology *t = s->topology;
    double channels = (double)(t->nccl.channels ? t->nccl.channels : MAX(1, t->nics.count));
    return (double)(used[0] + used[1] + used[2]) * 2.0 * channels * NCCL_CONNECTION_BYTES;
}

ParoComputeSetup paro_scenario_compute_setup(const ParoScenario *s)
{
    double trainable, params = paro_model_params(s->model, &s->training.trainable, &trainable);
    const ParoCalibration *c = &s->calibration;
    const ParoTopology *t = s->topology;
    /* A measured rate (calibration) or a stated efficiency is one flat rate; else the
     * GPU's shape-aware roofline, or half its peak for a GPU whose GEMM rate is not known. */
    double flat = c->has_compute               ? c->matmul_flops
                  : s->training.efficiency > 0 ? t->gpu.peak_flops * s->training.efficiency
                  : t->gpu.traits.matmul_efficiency > 0
                      ? 0
                      : t->gpu.peak_flops * PARO_UNKNOWN_GPU_EFFICIENCY;
    ParoComputeSetup setup = paro_compute_setup_of_gpu(t);
    setup.flat_flops = flat;
    if (c->has_compute) /* the optimizer streams at the measured bandwidth */
        setup.hbm_Bps = c->hbm_Bps;
    setup.batch = s->training.micro_batch;
    setup.seq = s->training.sequence;
    setup.cp = s->cp;
    setup.trainable_share = trainable / params;
    setup.recompute = s->training.recompute;
    setup.recompute_every = s->training.recompute_every;
    setup.attention = s->training.attention;
    setup.fp8 = s->training.fp8;
    setup.fused_softmax = paro_framework_fused_softmax(&s->framework);
    setup.fused_loss = paro_framework_fused_loss(&s->framework);
    setup.fused_swiglu = paro_framework_fused_swiglu(&s->framework);
    setup.eager_norm = !paro_framework_fused_norm(&s->framework);
    setup.rope = paro_framework_rope(&s->framework);
    if (s->training.trainable.kind == PARO_TRAINABLE_LORA) {
        setup.lora_targets = s->training.trainable.lora_targets;
        setup.lora_dropout = s->training.trainable.lora_dropout;
        setup.packed_lora = paro_framework_packed_lora(&s->framework);
    }
    setup.tp = s->tp;
    setup.ep = s->ep;
    setup.etp = s->etp;
    setup.expert_load = paro_scenario_moe_load(s);
    setup.sequence_parallel = s->sequence_parallel;
    return setup;
}

ParoStateSizes paro_scenario_state_sizes(const ParoScenario *s)
{
    ParoStateSizes z;
    z.n = paro_scenario_dp_ranks(s);
    z.m = s->group;
    z.params = paro_model_params(s->model, &s->training.trainable, &z.trainable);
    z.param_bytes = paro_precision_bytes(s->training.precision);
    z.grad_bytes = z.param_bytes;
    z.optim_bytes = s->training.optimizer_bytes;
    return z;
}

double paro_scenario_moe_load(const ParoScenario *s)
{
    double load = s->training.moe_imbalance, cap = s->training.moe_capacity;
    return cap > 0 ? MIN(load, cap) : load;
}

void paro_scenario_param_groups(const ParoScenario *s, const ParoStateSizes *all,
                                ParoStateSizes *dense, ParoStateSizes *experts)
{
    *dense = *all;
    *experts = *all;
    experts->params = experts->trainable = 0;
    if (s->ep == 1)
        return;
    double routed = paro_model_expert_params(s->model);
    double trainable = all->params > 0 ? all->trainable / all->params : 0;
    gint64 n = paro_scenario_expert_dp_ranks(s), folded = s->ep * s->etp;
    gint64 per_node = MIN(n, MAX(1, s->tp * paro_scenario_dp_per_node(s) / folded));
    gint64 m = s->group / s->ep;
    experts->n = n;
    experts->m = m >= 1 && n % m == 0 && (per_node % m == 0 || m % per_node == 0) ? m : per_node;
    /* one GPU's: its ep-th of the experts, cut by etp (the step divides the dense ones by tp) */
    experts->params = routed / (double)s->ep * (double)s->tp / (double)s->etp;
    experts->trainable = experts->params * trainable;
    dense->params = all->params - routed;
    dense->trainable = all->trainable - routed * trainable;
}

void paro_scenario_layer_activations(const ParoScenario *s, gint64 tp, double *kept, double *whole)
{
    const ParoModel *m = s->model;
    gint64 mb = s->training.micro_batch, seq = s->training.sequence;
    ParoRecompute recompute = s->training.recompute;
    gboolean fused = paro_framework_fused_softmax(&s->framework), sp = s->sequence_parallel;
    *kept =
        paro_model_activation_bytes_tp(m, mb, seq, recompute, s->training.attention, fused, tp, sp);
    *whole = paro_model_activation_bytes_tp(m, mb, seq, PARO_RECOMPUTE_NONE, s->training.attention,
                                            fused, tp, sp);
    if (s->training.fp8) {
        *kept -= paro_model_fp8_activation_saving(m, mb, seq, recompute, tp, sp);
        *whole -= paro_model_fp8_activation_saving(m, mb, seq, PARO_RECOMPUTE_NONE, tp, sp);
    }
    if (s->training.fp8_attention) { /* decision 53 */
        *kept -= paro_model_fp8_attention_saving(m, mb, seq, recompute, tp);
        *whole -= paro_model_fp8_attention_saving(m, mb, seq, PARO_RECOMPUTE_NONE, tp);
    }
    if (paro_framework_fused_swiglu(&s->framework)) { /* decision 51 */
        *kept -= paro_model_fused_swiglu_saving(m, mb, seq, recompute, tp, sp);
        *whole -= paro_model_fused_swiglu_saving(m, mb, seq, PARO_RECOMPUTE_NONE, tp, sp);
    }
    const ParoTrainable *tr = &s->training.trainable;
    if (tr->kind == PARO_TRAINABLE_LORA) { /* frozen linears keep no inputs (decision 41) */
        ParoAttention att = s->training.attention;
        gboolean fp8 = s->training.fp8;
        *kept -= paro_model_frozen_input_saving(m, mb, seq, recompute, att, tr->lora_targets, fp8,
                                                tp, sp);
        *whole -= paro_model_frozen_input_saving(m, mb, seq, PARO_RECOMPUTE_NONE, att,
                                                 tr->lora_targets, fp8, tp, sp);
        /* what the adapters keep themselves (decision 52) */
        gboolean packed = paro_framework_packed_lora(&s->framework);
        gboolean fp8_att = s->training.fp8_attention;
        *kept += paro_model_lora_adapter_memory(m, mb, seq, recompute, att, tr->lora_targets,
                                                tr->lora_dropout, packed, fp8, fp8_att, tp, sp);
        *whole +=
            paro_model_lora_adapter_memory(m, mb, seq, PARO_RECOMPUTE_NONE, att, tr->lora_targets,
                                           tr->lora_dropout, packed, fp8, fp8_att, tp, sp);
    }
    if (s->cp > 1) {
        /* a rank keeps its s/cp tokens' tensors (an eager score matrix: its s/cp rows of s) */
        *kept /= (double)s->cp;
        *whole /= (double)s->cp;
        /* the all-gathered K and V are the attention's inputs, kept for its backward where the
         * layer's activations are (torchtitan, decision 71) */
        if (s->cp_algorithm == PARO_CP_ALLGATHER) {
            double others = paro_scenario_cp_kv_bytes(s, tp) * (double)(s->cp - 1);
            *whole += others;
            if (recompute != PARO_RECOMPUTE_FULL)
                *kept += others;
        }
    }
}

double paro_scenario_cp_kv_bytes(const ParoScenario *s, gint64 tp)
{
    const ParoModel *m = s->model;
    double kv = (double)m->kv_heads * (double)m->head_dim / (double)tp;
    return 2.0 * paro_scenario_tokens_per_rank(s) * kv *
           paro_precision_bytes(s->training.precision);
}

ParoLossMemory paro_scenario_loss_memory(const ParoScenario *s, gint64 tp)
{
    const ParoModel *m = s->model;
    ParoLossMemory per_logit = paro_framework_loss_memory(&s->framework);
    double logits =
        m->has_shape ? paro_scenario_tokens_per_rank(s) * (double)m->vocab / (double)tp : 0;
    return (ParoLossMemory){per_logit.forward_peak * logits, per_logit.kept * logits,
                            per_logit.backward_peak * logits};
}

/* Bytes of fp8 copies per weight: the fp8 weight and its transpose. */
#define FP8_COPY_BYTES 2.0

double paro_scenario_fp8_weight_bytes(const ParoScenario *s, const ParoStrategy *strategy,
                                      double param_state_bytes)
{
    /* with fp8_params the copies are the weights: the parameters' 2 bytes a weight are the
     * fp8 weight and its transpose, nothing more */
    if (!s->training.fp8 || s->training.fp8_params || paro_strategy_gathers(strategy))
        return 0;
    /* torchao's Float8Linear (the fsdp profile's fp8: torchtitan) casts each weight as it is
     * used and saves the bf16 weight for the backward (float8_linear.py
     * matmul_with_hp_or_float8_args: save_for_backward(input_hp, weight_hp_t)): no fp8 copy
     * outlives its layer; Transformer Engine keeps them across micro-batches (decision 94) */
    if (paro_framework_pytorch_runtime(&s->framework))
        return 0;
    const ParoModel *m = s->model; /* fp8 needs the shape (scenario.c) */
    double linear = (double)m->layers * paro_model_layer_params(m) / paro_model_shape_params(m);
    return param_state_bytes / paro_precision_bytes(s->training.precision) * FP8_COPY_BYTES *
           linear;
}

double paro_scenario_gathered_bytes(const ParoScenarioDerived *d, double params)
{
    const ParoTraining *tr = &d->scenario->training;
    return (tr->fp8_params ? FP8_COPY_BYTES
                           : d->sizes.param_bytes + (tr->fp8 ? FP8_COPY_BYTES : 0)) *
           params;
}

double paro_scenario_recomputed_layers(const ParoScenario *s)
{
    if (s->training.recompute != PARO_RECOMPUTE_FULL)
        return 0;
    gint64 L = s->model->has_shape ? s->model->layers : 1;
    return (double)(L / MAX(1, s->training.recompute_every));
}

/* Mixed-precision Adam's K: the fp32 master weights and two moments. */
#define ADAM_STATE_BYTES 12.0

double paro_scenario_optimizer_s(const ParoScenarioDerived *d, double owned)
{
    const ParoStateSizes *z = &d->sizes;
    if (!paro_framework_fused_optimizer(&d->scenario->framework))
        /* PyTorch's kernels, one pass each, at the rate measured for such passes over flat
         * tensors; an optimizer of other state sizes scales with its states */
        return PARO_UNFUSED_ADAMW_BYTES * (z->optim_bytes / ADAM_STATE_BYTES) * owned /
               paro_compute_setup_flat_pass_Bps(&d->compute);
    return (2.0 * z->optim_bytes + z->grad_bytes + z->param_bytes) * owned / d->compute.hbm_Bps;
}

ParoScenarioDerived *paro_scenario_derive(const ParoScenario *s)
{
    ParoScenarioDerived *d = g_new0(ParoScenarioDerived, 1);
    d->scenario = s;
    d->sizes = paro_scenario_state_sizes(s);
    d->comm = paro_scenario_comm_model(s);
    d->compute = paro_scenario_compute_setup(s);
    double share = d->sizes.trainable / d->sizes.params;
    gint64 mb = s->training.micro_batch, seq = s->training.sequence;
    d->flops_per_micro_step =
        paro_model_step_flops(s->model, mb, seq, share, s->training.recompute);
    if (s->training.recompute == PARO_RECOMPUTE_FULL && s->training.recompute_every > 1) {
        /* the recomputed forward of the layers recompute_every picks only */
        double none = paro_model_step_flops(s->model, mb, seq, share, PARO_RECOMPUTE_NONE);
        d->flops_per_micro_step = none + (d->flops_per_micro_step - none) *
                                             paro_scenario_recomputed_layers(s) /
                                             (double)MAX(1, s->model->layers);
    }
    d->layers = paro_compute_layers(s->model, &d->compute);
    for (guint l = 0; l < d->layers->len; l++) {
        const ParoLayerCost *lc = &g_array_index(d->layers, ParoLayerCost, l);
        d->micro_step_s += lc->forward_s + lc->backward_s;
    }
    return d;
}

void paro_scenario_derived_free(ParoScenarioDerived *d)
{
    if (d == NULL)
        return;
    g_clear_pointer(&d->layers, g_array_unref);
    g_free(d);
}
