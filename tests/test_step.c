/* SPDX-License-Identifier: MIT */
/* Oracles for the training-step simulation (step/step.c) against the closed form, the
 * bounds of overlap, the memory formulas, and the PaRO paper's partial-training ranking. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "fixtures.h"
#include "step/step.h"

/* The flow model: its simulated rings are the closed form's alpha-beta rings. */
static const char *const no_latency[] = {
    "collectives.model=flow",
    "training.overlap=false",
    "topology.node.fabric.latency=0",
    "topology.node.nics.latency=0",
    "topology.network.latency=0",
    "training.trainable.fraction=1/4",
    "training.accumulation=3",
    NULL,
    NULL, /* algorithm, filled by the loop */
};

START_TEST(step_without_overlap_equals_closed_form)
{
    /* System: the default scenario with overlap off and zero latencies, Psi' = Psi/4,
     * A = 3, global collectives by ring and by hierarchical on the flow model.
     * Expectation: every task runs in sequence, so the step is the sum of compute and of
     * every collective; with no latency, the per-layer collectives add up to the whole-
     * model ones of the guideline, and each simulated collective equals its alpha-beta
     * form (coll tests): step = t_comp + t_comm of the guideline, for all 29 entries.
     * Tolerance: 1e-6 relative (each task rounds up to the picosecond). */
    const char *algos[] = {"collectives.algorithm=ring", "collectives.algorithm=hierarchical"};
    for (guint a = 0; a < G_N_ELEMENTS(algos); a++) {
        const char *sets[G_N_ELEMENTS(no_latency)];
        memcpy(sets, no_latency, sizeof sets);
        sets[7] = algos[a];
        g_autoptr(ParoScenario) s = paro_test_default_scenario(sets);
        g_autoptr(ParoScenarioDerived) g_derived = paro_scenario_derive(s);
        g_autoptr(ParoGuideline) g = paro_guideline_evaluate(g_derived);
        g_autoptr(ParoCollCache) cache = paro_coll_cache_new();
        for (guint i = 0; i < paro_strategy_n_all(); i++) {
            const ParoStrategy *st = paro_strategy_get(i);
            ParoStepResult r;
            g_autoptr(GError) error = NULL;
            ck_assert_msg(paro_step_simulate(g->derived, st, cache, &(ParoStepOptions){FALSE, TRUE},
                                             &r, &error),
                          "%s", error ? error->message : "");
            double want = paro_test_guideline_of(g, st)->t_serial, got = paro_time_to_s(r.step);
            ck_assert_msg(fabs(got - want) <= 1e-6 * want,
                          "%s %s: simulated %.9g, closed form %.9g", algos[a], st->name, got, want);
        }
    }
}
END_TEST

START_TEST(step_with_overlap_within_bounds)
{
    /* Expectation: overlapping can hide communication but not compute, nor make one stream
     * do two things at once: max(compute, busiest communication stream) <= step <=
     * compute + communication. Every strategy, ring and ho-ring. */
    const char *algos[][2] = {{"collectives.algorithm=ring", NULL},
                              {"collectives.algorithm=ho-ring", NULL}};
    for (guint a = 0; a < G_N_ELEMENTS(algos); a++) {
        g_autoptr(ParoScenario) s = paro_test_default_scenario(algos[a]);
        g_autoptr(ParoScenarioDerived) g_derived = paro_scenario_derive(s);
        g_autoptr(ParoGuideline) g = paro_guideline_evaluate(g_derived);
        g_autoptr(ParoCollCache) cache = paro_coll_cache_new();
        for (guint i = 0; i < paro_strategy_n_all(); i++) {
            ParoStepResult r;
            ck_assert(paro_step_simulate(g->derived, paro_strategy_get(i), cache,
                                         &(ParoStepOptions){FALSE, TRUE}, &r, NULL));
            double step = paro_time_to_s(r.step);
            double lower = fmax(r.compute_s, fmax(r.intra_busy_s, r.inter_busy_s));
            ck_assert_msg(step >= lower * (1 - 1e-9) &&
                              step <= (r.compute_s + r.comm_s) * (1 + 1e-9),
                          "%s: step %g, bounds %g .. %g", paro_strategy_get(i)->name, step, lower,
                          r.compute_s + r.comm_s);
        }
    }
}
END_TEST

/* A small GPT-style model as Korthikanti et al. count it (h = 1024, a = 16, f = 4h, plain
 * MLP, 4 layers, dropout, Megatron's fused softmax), micro-batch 2 of 512 tokens. */
static const char *const small_gpt[] = {"model.architecture.hidden=1024",
                                        "model.architecture.heads=16",
                                        "model.architecture.ffn=4096",
                                        "model.architecture.layers=4",
                                        "model.architecture.mlp=plain",
                                        "model.architecture.attention_dropout=0.1",
                                        "model.architecture.hidden_dropout=0.1",
                                        "framework.fused_softmax=true",
                                        "training.micro_batch=2",
                                        NULL};

/* The small GPT's memory under DDP with @extra settings (NULL-terminated, or NULL): the
 * simulated step's at its peak and the guideline's closed form. */
typedef struct {
    double params;                            /* Psi */
    double states, activations, peak;         /* the simulated step's, at its peak */
    double closed_states, closed_activations; /* the guideline's */
} SmallGptDdp;

static SmallGptDdp small_gpt_ddp(const char *const extra[])
{
    const char *sets[G_N_ELEMENTS(small_gpt) + 4];
    guint n = 0;
    for (; small_gpt[n] != NULL; n++)
        sets[n] = small_gpt[n];
    for (guint i = 0; extra != NULL && extra[i] != NULL; i++) {
        g_assert(n + 1 < G_N_ELEMENTS(sets));
        sets[n++] = extra[i];
    }
    sets[n] = NULL;
    g_autoptr(ParoScenario) s = paro_test_default_scenario(sets);
    g_autoptr(ParoScenarioDerived) d = paro_scenario_derive(s);
    g_autoptr(ParoGuideline) g = paro_guideline_evaluate(d);
    g_autoptr(ParoCollCache) cache = paro_coll_cache_new();
    ParoStepResult r;
    const ParoStrategy *ddp = paro_strategy_lookup("ddp");
    ck_assert(paro_step_simulate(d, ddp, cache, &(ParoStepOptions){FALSE, TRUE}, &r, NULL));
    const ParoStrategyResult *cf = paro_test_guideline_of(g, ddp);
    SmallGptDdp out = {
        .params = d->sizes.params,
        .states = r.at_peak.bytes[PARO_MEM_PARAMS] + r.at_peak.bytes[PARO_MEM_GRADS] +
                  r.at_peak.bytes[PARO_MEM_OPTIMIZER],
        .activations = r.at_peak.bytes[PARO_MEM_ACTIVATIONS],
        .peak = r.peak_bytes,
        .closed_states = cf->mem_model_states,
        .closed_activations = cf->mem_activations,
    };
    paro_step_result_clear(&r);
    return out;
}

START_TEST(step_memory_model_states_and_activations)
{
    /* System: a small GPT-style model (h = 1024, a = 16, f = 4h, plain MLP, 4 layers, with
     * dropout and Megatron's fused softmax, as Korthikanti et al. count), micro-batch 2 of
     * 512 tokens, no recomputation, DDP on the default cluster.
     * Expectation: DDP gathers nothing and buckets nothing, so the peak is model states
     * (16 bytes per parameter) + overhead + all layers' activations at the end of the
     * forward: 4 * s*b*h*(34 + 5*a*s/h) = 4 * 512*2*1024*(34 + 40) = 310,378,496 bytes
     * (Korthikanti et al. 2022, eq. 1), and the loss's backward over the s*b*V = 512*2*32000
     * = 32,768,000 logits (LLaMA's vocabulary): PyTorch's cross_entropy on fp32 logits holds
     * log_softmax's saved fp32 output, nll_loss's dense fp32 gradient and log_softmax's
     * fp32 input gradient at once, 12 bytes a logit (aten's derivatives.yaml: _log_softmax
     * saves its result; decision 50): 393,216,000 bytes, 703,594,496 in all. */
    SmallGptDdp m = small_gpt_ddp(NULL);
    ck_assert_double_eq_tol(m.states, m.closed_states, 1);
    ck_assert_double_eq_tol(m.states, 16.0 * m.params, 1);
    ck_assert_double_eq_tol(m.activations, 703594496.0, 1);
    ck_assert_double_eq_tol(m.closed_activations, 703594496.0, 1);
    /* Fixed: 2 GiB overhead, 32 MiB cuBLAS workspace, NCCL buffers of the global
     * communicator: 2 connections x 1 channel x (LL 524,288 + LL128 4,915,200 + Simple
     * 4,194,304 bytes), NCCL's default buffer sizes (src/init.cc). */
    double fixed = 2.0 * 1073741824.0 + 32.0 * 1048576.0 + 2.0 * (524288.0 + 4915200.0 + 4194304.0);
    ck_assert_double_eq_tol(m.peak, m.states + fixed + 703594496.0, 1);
}
END_TEST

START_TEST(step_out_of_memory)
{
    /* LLaMA-65B under DDP needs 16 bytes x 65.3e9 = 1.04 TB per GPU: out of memory on
     * 80 GiB; ZeRO-3 over 32 GPUs (32.6 GB of states) with full recomputation fits. */
    g_autofree char *model = paro_test_path("models/llama-65b.yaml");
    g_autofree char *swap = g_strdup_printf("model=%s", model);
    const char *sets[] = {swap, "training.recompute=full", "training.accumulation=2", NULL};
    g_autoptr(ParoScenario) s = paro_test_default_scenario(sets);
    g_autoptr(ParoScenarioDerived) g_derived = paro_scenario_derive(s);
    g_autoptr(ParoGuideline) g = paro_guideline_evaluate(g_derived);
    g_autoptr(ParoCollCache) cache = paro_coll_cache_new();
    ParoStepResult ddp, zero3;
    ck_assert(paro_step_simulate(g->derived, paro_strategy_lookup("ddp"), cache,
                                 &(ParoStepOptions){FALSE, TRUE}, &ddp, NULL));
    ck_assert(paro_step_simulate(g->derived, paro_strategy_lookup("zero-3"), cache,
                                 &(ParoStepOptions){FALSE, TRUE}, &zero3, NULL));
    ck_assert(!ddp.fits);
    ck_assert(ddp.peak_bytes > 1e12);
    ck_assert(zero3.fits);
}
END_TEST

START_TEST(step_partial_training_ranking)
{
    /* System: LLaMA-65B, Psi' = Psi/16, 32 A100-80GB in groups of 8, full recomputation
     * (PaRO section 4: partial training of 65B).
     * Expectation (PaRO's argument for partial training, section 3.1 and the ING
     * discussion in DeepSpeed issue 5607): with few trainable parameters the
     * parameters dominate memory, so the strategies that replicate them (DDP, ZeRO-1,
     * ZeRO-2) run out of memory; the ones that split parameters inside the group and keep
     * the small gradients unpartitioned or group-local (ING, IIG) fit and beat ZeRO-3,
     * whose per-layer gathers cross the slow inter-node links every micro-step. */
    g_autofree char *model = paro_test_path("models/llama-65b.yaml");
    g_autofree char *swap = g_strdup_printf("model=%s", model);
    const char *sets[] = {swap, "training.trainable.fraction=1/16", "training.recompute=full",
                          "training.accumulation=4", NULL};
    g_autoptr(ParoScenario) s = paro_test_default_scenario(sets);
    g_autoptr(ParoScenarioDerived) g_derived = paro_scenario_derive(s);
    g_autoptr(ParoGuideline) g = paro_guideline_evaluate(g_derived);
    g_autoptr(ParoCollCache) cache = paro_coll_cache_new();
    ParoStepResult r[6];
    const char *names[] = {"ddp", "zero-1", "zero-2", "zero-3", "ING", "IIG"};
    for (int i = 0; i < 6; i++)
        ck_assert(paro_step_simulate(g->derived, paro_strategy_lookup(names[i]), cache,
                                     &(ParoStepOptions){FALSE, TRUE}, &r[i], NULL));
    ck_assert(!r[0].fits && !r[1].fits && !r[2].fits);
    ck_assert(r[3].fits && r[4].fits && r[5].fits);
    ck_assert(r[4].step < r[3].step);
    ck_assert(r[5].step < r[3].step);
}
END_TEST

START_TEST(step_trace_is_consistent)
{
    /* Tasks never overlap on one stream, and the memory timeline ends where it began
     * (everything transient is freed by the end of the step). */
    g_autoptr(ParoScenario) s = paro_test_default_scenario(NULL);
    g_autoptr(ParoScenarioDerived) g_derived = paro_scenario_derive(s);
    g_autoptr(ParoGuideline) g = paro_guideline_evaluate(g_derived);
    g_autoptr(ParoCollCache) cache = paro_coll_cache_new();
    ParoStepResult r;
    ck_assert(paro_step_simulate(g->derived, paro_strategy_lookup("IIG"), cache,
                                 &(ParoStepOptions){TRUE, TRUE}, &r, NULL));
    ParoTime busy_until[3] = {0, 0, 0};
    for (guint i = 0; i < r.trace->len; i++) {
        const ParoTraceTask *t = &g_array_index(r.trace, ParoTraceTask, i);
        ck_assert(t->end >= t->start);
        for (int q = 0; q < 3; q++)
            if (t->streams & (1u << q)) {
                ck_assert_msg(t->start >= busy_until[q], "task %u overlaps on stream %d", i, q);
                busy_until[q] = t->end;
            }
    }
    const ParoMemSample *first = &g_array_index(r.memory, ParoMemSample, 5); /* fixed ones in */
    const ParoMemSample *last = &g_array_index(r.memory, ParoMemSample, r.memory->len - 1);
    for (int c = 0; c < PARO_MEM_N_CATEGORIES; c++)
        ck_assert_double_eq_tol(last->bytes[c], first->bytes[c], 16);
    paro_step_result_clear(&r);
}
END_TEST

/* The step of @strategy on the default scenario with @sets (NULL-terminated, or NULL),
 * simulated into @r, with its trace if @keep_trace; the caller clears @r. */
static void simulate_default(const char *const sets[], const char *strategy, gboolean keep_trace,
                             ParoStepResult *r)
{
    g_autoptr(ParoScenario) s = paro_test_default_scenario(sets);
    g_autoptr(ParoScenarioDerived) d = paro_scenario_derive(s);
    g_autoptr(ParoCollCache) cache = paro_coll_cache_new();
    g_autoptr(GError) error = NULL;
    ck_assert_msg(paro_step_simulate(d, paro_strategy_lookup(strategy), cache,
                                     &(ParoStepOptions){keep_trace, TRUE}, r, &error),
                  "%s", error ? error->message : "");
}

/* The step time in seconds of @strategy on the default scenario with @sets. */
static double default_step_s(const char *const sets[], const char *strategy)
{
    ParoStepResult r;
    simulate_default(sets, strategy, FALSE, &r);
    double seconds = paro_time_to_s(r.step);
    paro_step_result_clear(&r);
    return seconds;
}

START_TEST(step_deepspeed_stage2_reduces_in_series)
{
    /* DeepSpeed's profile for ZeRO-2 (docs/frameworks.md: overlap_comm defaults to false
     * below stage 3, use_multi_rank_bucket_allreduce to true): each gradient bucket is one
     * all-reduce on the compute stream. ZeRO-2 gathers nothing, so every task of the step
     * runs in series: the step is exactly the sum of its tasks' durations, and each
     * per-micro-batch reduction is an all-reduce on the compute stream. Under `ideal` the
     * same strategy reduce-scatters beside the backward and is faster. */
    const char *ds_sets[] = {"framework=deepspeed", NULL};
    const char *const *variants[] = {ds_sets, NULL};
    double step[2];
    for (guint v = 0; v < 2; v++) {
        ParoStepResult r;
        simulate_default(variants[v], "zero-2", TRUE, &r);
        step[v] = paro_time_to_s(r.step);
        ParoTime sum = 0;
        guint reductions = 0;
        for (guint i = 0; i < r.trace->len; i++) {
            const ParoTraceTask *t = &g_array_index(r.trace, ParoTraceTask, i);
            sum += t->end - t->start;
            if (t->micro >= 0 &&
                (strcmp(t->name, "allreduce") == 0 || strcmp(t->name, "reducescatter") == 0)) {
                reductions++;
                ck_assert_str_eq(t->name, v == 0 ? "allreduce" : "reducescatter");
                ck_assert_uint_eq(t->streams == PARO_STREAM_COMPUTE, v == 0);
            }
        }
        ck_assert_uint_gt(reductions, 0);
        if (v == 0)
            ck_assert_int_eq(sum, r.step);
        paro_step_result_clear(&r);
    }
    ck_assert_msg(step[0] > step[1], "deepspeed %.6g s, ideal %.6g s", step[0], step[1]);
}
END_TEST

START_TEST(step_gradient_passes_lengthen_backward)
{
    /* System: the default scenario (LLaMA-7B, bf16, A = 10, 32 A100s) under FSDP's profile
     * reducing in fp32, ZeRO-3, with overlap off. FSDP copies each unit's flat gradient out
     * of its views, casts it to fp32 and pre-divides it: 2 x 2 + (2 + 4) + 2 x 4 = 18 bytes a
     * trainable parameter after each micro-batch's backward (decision 42).
     * Expectation, by hand: with overlap off every task runs in series on the compute
     * stream, so the step grows by exactly A x 18 x Psi' / (the flat passes' bandwidth,
     * decision 44) over the same step with `framework.grad_passes: false`; each of the A x L
     * backward tasks rounds up to the picosecond once. DeepSpeed's BF16_Optimizer (18 bytes)
     * runs only in its pipeline engine: ZeRO-1 without a pipeline is unchanged at the
     * profile's version (0.19, whose stage 1 hooks its gradients: not modelled), with pp 2 it
     * grows; ZeRO-2 (its ZeRO optimizer) and Megatron's profile (fused accumulation) never
     * change. Adding a later micro-batch's gradients where the products do not (decision 59)
     * costs (A - 1) x bytes: DeepSpeed before 0.13 at ZeRO-1 lets PyTorch's AccumulateGrad add
     * into the 16-bit .grad (2 + 2 + 2 = 6 bytes); Megatron-LM v2.5 in bf16 adds into an fp32
     * main_grad (2 + 4 + 4 = 10 bytes); ZeRO-2 hooks its gradients into buckets (none). */
    const char *fsdp_on[] = {"framework=fsdp", "framework.reduce_precision=fp32",
                             "training.overlap=false", NULL};
    const char *fsdp_off[] = {"framework=fsdp", "framework.reduce_precision=fp32",
                              "training.overlap=false", "framework.grad_passes=false", NULL};
    const char *ds_on[] = {"framework=deepspeed", NULL};
    const char *ds_off[] = {"framework=deepspeed", "framework.grad_passes=false", NULL};
    const char *ds_pp_on[] = {"framework=deepspeed", "parallelism.pp=2", "parallelism.dp=16", NULL};
    const char *ds_pp_off[] = {"framework=deepspeed", "parallelism.pp=2", "parallelism.dp=16",
                               "framework.grad_passes=false", NULL};
    const char *mg_on[] = {"framework=megatron", NULL};
    const char *mg_off[] = {"framework=megatron", "framework.grad_passes=false", NULL};
    const char *ds10_on[] = {"framework=deepspeed", "framework.version=0.10.0",
                             "training.overlap=false", NULL};
    const char *ds10_off[] = {"framework=deepspeed", "framework.version=0.10.0",
                              "training.overlap=false", "framework.grad_passes=false", NULL};
    const char *mg25_on[] = {"framework=megatron", "framework.version=2.5",
                             "training.overlap=false", NULL};
    const char *mg25_off[] = {"framework=megatron", "framework.version=2.5",
                              "training.overlap=false", "framework.grad_passes=false", NULL};
    enum { UNCHANGED, GROWS, EXACT };
    const struct {
        const char *const *with, *const *without;
        const char *strategy;
        int expect;
        double bytes;       /* EXACT: a trainable parameter, each micro-batch counted */
        gboolean not_first; /* EXACT: the first micro-batch does not pay */
    } cases[] = {{fsdp_on, fsdp_off, "zero-3", EXACT, 18, FALSE},
                 {ds_on, ds_off, "zero-1", UNCHANGED, 0, FALSE},
                 {ds_pp_on, ds_pp_off, "zero-1", GROWS, 0, FALSE},
                 {ds_pp_on, ds_pp_off, "zero-2", UNCHANGED, 0, FALSE},
                 {mg_on, mg_off, "zero-1", UNCHANGED, 0, FALSE},
                 {ds10_on, ds10_off, "zero-1", EXACT, 6, TRUE},
                 {ds10_on, ds10_off, "zero-2", UNCHANGED, 0, FALSE},
                 {mg25_on, mg25_off, "zero-1", EXACT, 10, TRUE}};
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
        double grew = default_step_s(cases[c].with, cases[c].strategy) -
                      default_step_s(cases[c].without, cases[c].strategy);
        g_autoptr(ParoScenario) s = paro_test_default_scenario(cases[c].with);
        g_autoptr(ParoScenarioDerived) d = paro_scenario_derive(s);
        double micro = (double)s->training.accumulation - (cases[c].not_first ? 1 : 0);
        double want =
            micro * cases[c].bytes * d->sizes.trainable / (double)s->tp / d->compute.flat_pass_Bps;
        double tasks = (double)(s->training.accumulation * s->model->layers);
        if (cases[c].expect == EXACT)
            ck_assert_msg(want > 0 && fabs(grew - want) <= tasks * 1e-12,
                          "case %u: grew %.12g s, want %.12g s", c, grew, want);
        else if (cases[c].expect == GROWS)
            ck_assert_msg(grew > 0, "case %u: grew %.12g s", c, grew);
        else
            ck_assert_msg(grew == 0, "case %u: grew %.12g s", c, grew);
    }
}
END_TEST

START_TEST(step_fsdp2_copies_gathers_out)
{
    /* System: the default scenario (LLaMA-7B, bf16, A = 10, 32 A100s) under FSDP's profile
     * reducing in fp32, with overlap off so that every task runs in series and the step
     * changes by exactly the tasks' changes. FSDP2 (`fsdp2: true`, decision 62) against
     * FSDP1, by hand from _fsdp_collectives.py: each all-gather's output is copied into the
     * parameters on the compute stream, 2 bytes moved a gathered byte; ZeRO-3 gathers every
     * layer in the forward and again in the backward of each micro-batch, so 2 x 2 x G
     * bytes a micro-batch (G: the gathered bytes of all the parameters); its gradient passes
     * move 14 bytes a trainable parameter instead of FSDP1's 18. Step change = A x (4 G -
     * 4 Psi') / (the flat passes' bandwidth), each of the 2 A L layer tasks rounding to the
     * picosecond once. ZeRO-2 gathers nothing: only the passes' -4 Psi' remain. */
    const char *one[] = {"framework=fsdp", "framework.reduce_precision=fp32",
                         "training.overlap=false", NULL};
    const char *two[] = {"framework=fsdp", "framework.reduce_precision=fp32",
                         "training.overlap=false", "framework.fsdp2=true", NULL};
    const struct {
        const char *strategy;
        double gather_passes; /* gathers of each layer a micro-batch */
    } cases[] = {{"zero-3", 2}, {"zero-2", 0}};
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
        double grew =
            default_step_s(two, cases[c].strategy) - default_step_s(one, cases[c].strategy);
        g_autoptr(ParoScenario) s = paro_test_default_scenario(two);
        g_autoptr(ParoScenarioDerived) d = paro_scenario_derive(s);
        double A = (double)s->training.accumulation;
        double gathered = paro_scenario_gathered_bytes(d, d->sizes.params);
        double want = A * (cases[c].gather_passes * 2.0 * gathered - 4.0 * d->sizes.trainable) /
                      d->compute.flat_pass_Bps;
        double tasks = 2.0 * A * (double)s->model->layers;
        ck_assert_msg(fabs(grew - want) <= tasks * 1e-12, "%s: grew %.12g s, want %.12g s",
                      cases[c].strategy, grew, want);
    }
}
END_TEST

START_TEST(step_unfused_optimizer_by_hand)
{
    /* System: the default scenario (LLaMA-7B, 6,738,415,616 parameters; 32 A100-SXM4-80GB,
     * 2,039 GB/s datasheet HBM) under FSDP's profile, ZeRO-3, overlap off, so every task runs
     * in series and the step changes by exactly the optimizer's change. Each GPU updates
     * 6,738,415,616 / 32 = 210,575,488 parameters.
     * Expectation, by hand (decision 46): PyTorch's AdamW moves 80 bytes a parameter
     * (Composer's DecoupledAdamW: mul and add of m 8 + 12, mul and addcmul of v 8 + 12, sqrt,
     * divide, add eps 3 x 8, addcdiv 16) at the flat passes' rate, 0.75 x 2,039 GB/s:
     * 80 x 210,575,488 / 1.52925e12 = 11.01593 ms; fused Adam 2 x 12 + 2 + 2 = 28 bytes at
     * the datasheet rate: 28 x 210,575,488 / 2.039e12 = 2.89172 ms. The step grows by
     * 8.12421 ms (8.124214 ms to seven digits), and FSDP's profile is unfused by default. */
    const char *unfused[] = {"framework=fsdp", "training.overlap=false", NULL};
    const char *fused[] = {"framework=fsdp", "training.overlap=false",
                           "framework.fused_optimizer=true", NULL};
    double step[2];
    for (guint v = 0; v < 2; v++) {
        ParoStepResult r;
        simulate_default(v == 0 ? unfused : fused, "zero-3", FALSE, &r);
        step[v] = paro_time_to_s(r.step);
        paro_step_result_clear(&r);
    }
    double grew = step[0] - step[1];
    ck_assert_msg(fabs(grew - 8.124214e-3) <= 1e-9, "grew %.12g s, want 8.124214 ms", grew);
}
END_TEST

START_TEST(step_fsdp_memory_matches_the_harness)
{
    /* System: our harness's FSDP2 run on one H200 (tests/data/good/scenario-fsdp2-one-h200.yaml:
     * Llama 3.2 3B's shape, 8,192 tokens, foreach AdamW, bf16 gathers, fp32 reductions).
     * Expectation, measured (validation/data/h200/2026-11-28_peaks.txt, torch 2.11, MiB):
     * full recomputation, max_memory_allocated 68,809, at the optimizer step: the fp32
     * parameters and two moments (41,288 after a step) + the fp32 gradients (13,759: backward's
     * end minus that) + foreach AdamW's square roots (13,760: the step's peak minus the
     * backward's end), five times the 13,761 MiB of fp32 parameters; within 1%. Without
     * recomputation the peak is the backward's, 78,234, within 3%, and the reserve (101,196)
     * lies nearer parosim's reserved than its allocated peak: FSDP's gradients come from the
     * reduce-scatter stream's pool, which the activations' freed blocks do not serve
     * (decision 94). */
    const double mib = 1048576.0;
    const char *none[] = {"training.recompute=none", NULL};
    g_autoptr(ParoScenario) a =
        paro_test_scenario("tests/data/good/scenario-fsdp2-one-h200.yaml", NULL);
    g_autoptr(ParoScenario) b =
        paro_test_scenario("tests/data/good/scenario-fsdp2-one-h200.yaml", none);
    ParoStepResult ra = paro_test_step(a, "zero-3", FALSE), rb = paro_test_step(b, "zero-3", FALSE);
    ck_assert_msg(fabs(ra.allocated_bytes / (68809 * mib) - 1) < 0.01, "full: %.0f MiB",
                  ra.allocated_bytes / mib);
    ck_assert(fabs(ra.at_peak.bytes[PARO_MEM_GRADS] / (13759 * mib) - 1) < 0.01);
    ck_assert(fabs(ra.at_peak.bytes[PARO_MEM_OPTIMIZER_TEMPS] / (13760 * mib) - 1) < 0.01);
    ck_assert_double_eq(ra.at_peak.bytes[PARO_MEM_PARAMS], 0); /* the master is the parameter */
    ck_assert_msg(fabs(rb.allocated_bytes / (78234 * mib) - 1) < 0.03, "none: %.0f MiB",
                  rb.allocated_bytes / mib);
    ck_assert(fabs(rb.reserved_bytes - 101196 * mib) < fabs(rb.allocated_bytes - 101196 * mib));
    paro_step_result_clear(&ra);
    paro_step_result_clear(&rb);
}
END_TEST

START_TEST(step_loss_memory_by_framework)
{
    /* System: the small GPT of step_memory_model_states_and_activations (all layers'
     * activations 310,378,496 bytes at the end of the forward, s*b*V = 32,768,000 logits),
     * DDP, each framework's loss.
     * Expectation, bytes a logit at the loss's peak read from each loss's code (decision 50):
     * PyTorch's cross_entropy on fp32 logits (ideal, fsdp), backward: saved log-probs,
     * nll_loss's gradient, log_softmax's input gradient, 12; Megatron's vocab-parallel
     * cross-entropy (megatron, deepspeed; tensor_parallel/cross_entropy.py: an fp32 copy
     * beside the 16-bit logits, softmax and gradient computed in it in place), 2 + 4 = 6;
     * flash-attn's fused CrossEntropyLoss (fused_loss), the 16-bit logits and their 16-bit
     * gradient, 4. The simulated peak and the guideline's closed form agree. */
    static const struct {
        const char *framework, *fused;
        double per_logit;
    } cases[] = {{"framework.name=ideal", "framework.fused_loss=default", 12},
                 {"framework.name=megatron", "framework.fused_loss=default", 6},
                 {"framework.name=deepspeed", "framework.fused_loss=default", 6},
                 {"framework.name=fsdp", "framework.fused_loss=true", 4}};
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
        /* a fused optimizer: the fsdp profile's foreach AdamW would take the peak to the
         * optimizer step, where the fp32 states, gradients and its temporaries outweigh this
         * small model's activations (decision 94) */
        const char *const extra[] = {cases[c].framework, cases[c].fused,
                                     "framework.fused_optimizer=true", NULL};
        double want = 310378496.0 + cases[c].per_logit * 32768000.0;
        SmallGptDdp m = small_gpt_ddp(extra);
        ck_assert_double_eq_tol(m.activations, want, 1);
        ck_assert_double_eq_tol(m.closed_activations, want, 1);
    }
}
END_TEST

START_TEST(step_recompute_every_second_layer_memory)
{
    /* System: the small GPT of step_memory_model_states_and_activations (4 layers, s = 512,
     * b = 2, h = 1024, a = 16, dropout, fused softmax), DDP, full recomputation of every
     * second layer only (training.recompute_every = 2: torchtitan's selective layer
     * checkpointing wraps blocks 2 and 4, counted from 1).
     * Expectation (Korthikanti et al. 2022, eq. 1 and section 4.1): a layer that is not
     * recomputed keeps s*b*h*(34 + 5*a*s/h) = 77,594,624 bytes, a recomputed one only its
     * input, 2*s*b*h = 2,097,152; at the end of the forward 2 x 77,594,624 + 2 x 2,097,152 =
     * 159,383,552 bytes. The backward of block 4 comes first and recomputes it: its other
     * 75,497,472 bytes come back, so the peak is 234,881,024 bytes, which the guideline's
     * closed form gives too. A vocabulary of 1,000 keeps the loss's memory below that
     * (12 bytes a logit, 12,288,000 bytes: step_loss_memory_by_framework). */
    const char *const extra[] = {"model.architecture.vocab=1000", "training.recompute=full",
                                 "training.recompute_every=2", NULL};
    SmallGptDdp m = small_gpt_ddp(extra);
    ck_assert_double_eq_tol(m.activations, 234881024.0, 1);
    ck_assert_double_eq_tol(m.closed_activations, 234881024.0, 1);
}
END_TEST

START_TEST(step_recompute_every_needs_full)
{
    /* System: recompute_every without full recomputation. Expectation: a located error
     * naming the key (the scenario loader's constraint check). */
    const char *sets[] = {"training.recompute=selective", "training.recompute_every=2", NULL};
    g_autofree char *path = paro_test_path("scenarios/llama-7b_a100x8-100g_n32.yaml");
    g_autoptr(GError) error = NULL;
    g_autoptr(ParoScenario) s = paro_scenario_load(path, sets, &error);
    ck_assert(s == NULL);
    ck_assert_msg(strstr(error->message, "recompute_every 2") != NULL &&
                      strstr(error->message, "needs recompute: full, not selective") != NULL &&
                      strstr(error->message, "--set[2]:1:") != NULL,
                  "%s", error->message);
}
END_TEST

START_TEST(step_recompute_op_refuses_experts)
{
    /* System: per-op recomputation of Mixtral 8x7B (HuggingFace config.json). Expectation:
     * a located error, since the policy follows a dense block's products (decision 49). */
    g_autofree char *model = paro_test_path("models/hf/mixtral-8x7b-config.json");
    g_autofree char *set_model = g_strdup_printf("model=%s", model);
    const char *sets[] = {set_model, "training.recompute=op", NULL};
    g_autofree char *path = paro_test_path("scenarios/llama-7b_a100x8-100g_n32.yaml");
    g_autoptr(GError) error = NULL;
    g_autoptr(ParoScenario) s = paro_scenario_load(path, sets, &error);
    ck_assert(s == NULL);
    ck_assert_msg(strstr(error->message, "--set[2]:1:20:") != NULL &&
                      strstr(error->message, "has experts") != NULL,
                  "%s", error->message);
}
END_TEST

/* The simulated step of zero-3 on the default scenario at one micro-step, with
 * memory_overhead written as @overhead_bytes (and @headroom when not NULL). */
static ParoStepResult headroom_step(double overhead_bytes, const char *headroom)
{
    char value[G_ASCII_DTOSTR_BUF_SIZE];
    g_autofree char *overhead = g_strdup_printf(
        "training.memory_overhead=%s B", g_ascii_dtostr(value, sizeof value, overhead_bytes));
    g_autofree char *margin =
        headroom ? g_strdup_printf("training.memory_headroom=%s", headroom) : NULL;
    const char *sets[] = {"training.accumulation=1", overhead, margin, NULL};
    g_autoptr(ParoScenario) s = paro_test_default_scenario(sets);
    return paro_test_step(s, "zero-3", FALSE);
}

START_TEST(step_memory_headroom_tight)
{
    /* System: zero-3 on the default scenario's A100-SXM4-80GB (M = 80 GiB), its peak moved
     * by training.memory_overhead, which the ledger holds from time 0, so the peak moves by
     * exactly the overhead's change.
     * Expectations (by hand, decision 84): the default headroom is 5% of 80 GiB = 4 GiB, so
     * the allocator's line is at 76 GiB: a peak of 77 GiB fits but is tight, 75 GiB fits
     * with margin, 81 GiB does not fit and is not called tight; with memory_headroom: 0
     * the 77 GiB peak fits with margin, and with 2 GiB written as a size its line is at
     * 78 GiB, so 77 GiB has margin too.
     * Tolerance: the peak is hit to within a byte of rounding, far from the lines. */
    const double gib = 1073741824.0;
    ParoStepResult base = headroom_step(0, NULL);
    const struct {
        double peak_gib;
        const char *headroom;
        gboolean fits, tight;
    } cases[] = {
        {77, NULL, TRUE, TRUE}, {75, NULL, TRUE, FALSE},    {81, NULL, FALSE, FALSE},
        {77, "0", TRUE, FALSE}, {77, "2 GiB", TRUE, FALSE}, {77, "0.04", TRUE, TRUE},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        ParoStepResult r =
            headroom_step(cases[i].peak_gib * gib - base.peak_bytes, cases[i].headroom);
        ck_assert_double_eq_tol(r.peak_bytes, cases[i].peak_gib * gib, 1);
        ck_assert_msg(r.fits == cases[i].fits && r.tight == cases[i].tight,
                      "peak %g GiB, headroom %s: fits %d tight %d", cases[i].peak_gib,
                      cases[i].headroom ? cases[i].headroom : "default", r.fits, r.tight);
        paro_step_result_clear(&r);
    }
    paro_step_result_clear(&base);
}
END_TEST

START_TEST(step_tight_ranks_after_margin)
{
    /* Expectation (decision 84): a row that fits with margin ranks before a tight one
     * however much faster the tight one is, and a tight one before one out of memory;
     * within a class, the faster first. */
    static const ParoStrategy a = {.name = "a"}, b = {.name = "b"}, c = {.name = "c"};
    ParoStepResult margin = {.strategy = &a, .step = 5000, .fits = TRUE};
    ParoStepResult tight = {.strategy = &b, .step = 1000, .fits = TRUE, .tight = TRUE};
    ParoStepResult oom = {.strategy = &c, .step = 10};
    ck_assert_int_lt(paro_step_result_compare(&margin, &tight), 0);
    ck_assert_int_gt(paro_step_result_compare(&tight, &margin), 0);
    ck_assert_int_lt(paro_step_result_compare(&tight, &oom), 0);
    ParoStepResult faster = margin;
    faster.step = 4000;
    ck_assert_int_lt(paro_step_result_compare(&faster, &margin), 0);
}
END_TEST

static Suite *step_suite(void)
{
    Suite *s = suite_create("step");
    TCase *tc = tcase_create("simulate");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, step_without_overlap_equals_closed_form);
    tcase_add_test(tc, step_with_overlap_within_bounds);
    tcase_add_test(tc, step_memory_model_states_and_activations);
    tcase_add_test(tc, step_out_of_memory);
    tcase_add_test(tc, step_partial_training_ranking);
    tcase_add_test(tc, step_trace_is_consistent);
    tcase_add_test(tc, step_deepspeed_stage2_reduces_in_series);
    tcase_add_test(tc, step_gradient_passes_lengthen_backward);
    tcase_add_test(tc, step_fsdp2_copies_gathers_out);
    tcase_add_test(tc, step_unfused_optimizer_by_hand);
    tcase_add_test(tc, step_recompute_every_second_layer_memory);
    tcase_add_test(tc, step_loss_memory_by_framework);
    tcase_add_test(tc, step_fsdp_memory_matches_the_harness);
    tcase_add_test(tc, step_recompute_every_needs_full);
    tcase_add_test(tc, step_recompute_op_refuses_experts);
    tcase_add_test(tc, step_memory_headroom_tight);
    tcase_add_test(tc, step_tight_ranks_after_margin);
    suite_add_tcase(s, tc);
    return s;
}

PARO_CHECK_MAIN(step_suite)
