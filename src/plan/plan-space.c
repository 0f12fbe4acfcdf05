/* SPDX-License-Identifier: MIT */
/* The space plan searches, and the bounds that prune it before any step is simulated.
 *
 * A shape is a layout (tp, cp, ep, pp with its schedule, sequence parallelism,
 * recomputation, offload) and a micro-batch. Each is loaded once, at the largest group
 * size the search gives it, and the closed form (scenario/guideline.c) gives two bounds:
 * - memory: a strategy's model states, workspace and fixed overhead (and, without a
 *   pipeline, every layer's kept activations of one micro-batch; under the fsdp profile,
 *   beside them the optimizer's states only) are held by the simulated step too, so a strategy
 * whose bound exceeds the GPU's memory is not simulated, and a shape no strategy can fit is
 * dropped. A larger micro-batch only adds activations, so a layout's micro-batches stop at the
 * first none fits;
 * - compute: a device runs its stage's layers for every micro-batch and its optimizer
 *   step, and a pipeline's last device waits at least for the first micro-batch's forward
 *   through the P - 1 devices before it and is waited on for its backward through them
 *   (paro_plan_compute_bound). The search (plan.c) simulates configurations in the
 *   order of this bound and stops where it exceeds the best time found.
 * tests/test_plan.c checks both against every step it simulates on small clusters. */
#include "plan/plan-private.h"

#include <string.h>

#include "core/error.h"

/* Recomputation levels, lightest first: none, selective (the attention core), full on
 * every second layer (torchtitan's every-k), full. */
static const struct {
    ParoRecompute recompute;
    gint64 every;
} recompute_levels[] = {
    {PARO_RECOMPUTE_NONE, 1},
    {PARO_RECOMPUTE_SELECTIVE, 1},
    {PARO_RECOMPUTE_FULL, 2},
    {PARO_RECOMPUTE_FULL, 1},
};

static const gint64 micro_batches[] = {1, 2, 4, 8, 16};

double paro_plan_largest_batch(const ParoPlanRequest *rq)
{
    return rq->fixed_batch ? 2.0 * rq->batch_tokens
                           : PARO_PLAN_LAW_BATCH_CAP * rq->budget.critical_batch_tokens;
}

gboolean paro_plan_layout_equal(const ParoPlanLayout *a, const ParoPlanLayout *b)
{
    return a->tp == b->tp && a->cp == b->cp && a->ep == b->ep && a->pp == b->pp &&
           a->schedule == b->schedule && a->virtual_stages == b->virtual_stages &&
           a->layered == b->layered && a->uneven == b->uneven &&
           a->sequence_parallel == b->sequence_parallel && a->recompute == b->recompute &&
           a->recompute_every == b->recompute_every && a->offload == b->offload;
}

/* The layers of each stage when pp does not divide them: the first stage holds the
 * embedding and the last the loss, so the extra layers go to the stages between. */
static char *uneven_stage_layers(gint64 layers, gint64 pp)
{
    gint64 each = layers / pp, extra = layers % pp, from = (pp - extra) / 2;
    GString *out = g_string_new(NULL);
    for (gint64 k = 0; k < pp; k++)
        g_string_append_printf(out, "%s%" G_GINT64_FORMAT, k ? "," : "",
                               each + (k >= from && k < from + extra ? 1 : 0));
    return g_string_free(out, FALSE);
}

GPtrArray *paro_plan_overrides(const ParoPlanRequest *rq, const ParoPlanShape *sh, gint64 group,
                               gint64 accumulation, int algorithm)
{
    const ParoPlanLayout *l = &sh->layout;
    GPtrArray *sets = g_ptr_array_new_with_free_func(g_free);
    for (int i = 0; rq->sets && rq->sets[i]; i++)
        g_ptr_array_add(sets, g_strdup(rq->sets[i]));
#define SET(...) g_ptr_array_add(sets, g_strdup_printf(__VA_ARGS__))
    SET("parallelism.group=%" G_GINT64_FORMAT, group);
    SET("training.micro_batch=%" G_GINT64_FORMAT, sh->micro_batch);
    SET("training.accumulation=%" G_GINT64_FORMAT, accumulation);
    SET("collectives.algorithm=%s", paro_algorithm_names[algorithm]);
    SET("parallelism.tp=%" G_GINT64_FORMAT, l->tp);
    SET("parallelism.cp=%" G_GINT64_FORMAT, l->cp);
    SET("parallelism.ep=%" G_GINT64_FORMAT, l->ep);
    SET("parallelism.pp=%" G_GINT64_FORMAT, l->pp);
    SET("parallelism.dp=%" G_GINT64_FORMAT, sh->dp);
    SET("parallelism.sequence_parallel=%s", l->sequence_parallel ? "true" : "false");
    SET("training.pipeline.schedule=%s", paro_pipe_schedule_names[l->schedule]);
    SET("training.pipeline.virtual=%" G_GINT64_FORMAT, l->virtual_stages);
    SET("training.pipeline.accumulation=%s", l->layered ? "layered" : "depth-first");
    SET("training.recompute=%s", paro_recompute_names[l->recompute]);
    SET("training.recompute_every=%" G_GINT64_FORMAT, l->recompute_every);
    SET("training.offload.optimizer=%s", l->offload >= 1 ? "cpu" : "none");
    SET("training.offload.parameters=%s", l->offload >= 2 ? "cpu" : "none");
#undef SET
    if (l->uneven) {
        g_autofree char *stages = uneven_stage_layers(sh->layers, l->pp);
        g_ptr_array_add(sets, g_strconcat("parallelism.stage_layers=", stages, NULL));
    }
    g_ptr_array_add(sets, NULL);
    return sets;
}

GPtrArray *paro_plan_row_overrides(const ParoPlanRequest *rq, const ParoPlanRow *row)
{
    const ParoPlanLayout *l = &row->layout;
    ParoPlanShape sh = {.layout = *l,
                        .micro_batch = row->micro_batch,
                        .dp = rq->gpus / (l->tp * l->cp * l->pp),
                        .layers = rq->layers};
    return paro_plan_overrides(rq, &sh, row->group, row->accumulation, row->algorithm);
}

double paro_plan_bubble_bound(const ParoPlanShape *sh)
{
    const ParoPlanLayout *l = &sh->layout;
    if (l->pp == 1 || l->uneven)
        return 0; /* uneven stages: no closed form bounds their fill; 0 is a bound */
    return (double)(l->pp - 1) / (double)l->virtual_stages * sh->stage_micro_s;
}

double paro_plan_compute_bound(const ParoPlanShape *sh, gint64 accumulation)
{
    return (double)accumulation * sh->stage_micro_s + sh->optimizer_s;
}

/* The group sizes the search gives a layout: for data parallelism alone, divisors of a
 * node and whole nodes dividing the ranks; otherwise the DP ranks of a node (the
 * scenario's default), which keeps every group inside a node. */
GArray *paro_plan_group_sizes(const ParoPlanShape *sh, gint64 gpus_per_node)
{
    const ParoPlanLayout *l = &sh->layout;
    GArray *out = g_array_new(FALSE, FALSE, sizeof(gint64));
    gint64 n = sh->dp * l->cp;
    if (paro_plan_layout_is_dp(l)) {
        for (gint64 m = 1; m <= n; m *= 2)
            if ((m <= gpus_per_node && gpus_per_node % m == 0) ||
                (m > gpus_per_node && m % gpus_per_node == 0 && n % m == 0))
                g_array_append_val(out, m);
    } else {
        gint64 m = MAX(1, MIN(n, gpus_per_node / l->tp));
        g_array_append_val(out, m);
    }
    return out;
}

gboolean paro_plan_layout_is_dp(const ParoPlanLayout *l)
{
    return l->tp == 1 && l->pp == 1 && l->cp == 1 && l->ep == 1 && !l->layered;
}

/* A layout (all but the micro-batch) and the shapes it gives. */
typedef struct {
    ParoPlanShape first; /* micro_batch unset */
    GArray *shapes;      /* ParoPlanShape */
    GError *error;
} Family;

typedef struct {
    const char *path;
    const ParoPlanRequest *rq;
    gint64 gpus_per_node;
    double largest_batch; /* a micro-step beyond it is not a choice (plan.c) */
    gint64 sequence;
} Space;

/* The memory lower bound of @r (see the file's comment). The closed form counts the
 * states of every layer, uncut by tensor parallelism (scenario/derived.c), and one
 * micro-batch's activations of a whole sequence: a GPU holds at least their average over
 * the tp x pp (and cp) ranks that share them. */
static double memory_bound(const ParoStrategyResult *r, const ParoPlanLayout *l, gboolean fsdp)
{
    double ranks = (double)(l->tp * l->pp), fixed = r->mem_workspace + r->mem_overhead;
    double activations =
        l->pp == 1 && !l->layered ? r->mem_activations / (double)(l->tp * l->cp) : 0;
    /* The fsdp profile's gradients live from the backward to the optimizer step and its
     * sharded parameters are the master (decision 94): the states are all held at the
     * optimizer step, where the activations are gone, and beside the activations only the
     * optimizer's are sure to be. */
    if (fsdp)
        return MAX(r->mem_model_states / ranks, r->mem_optimizer / ranks + activations) + fixed;
    return r->mem_model_states / ranks + fixed + activations;
}

/* Loads @sh and fills its bounds; FALSE with no error: the scenario refuses the shape (a
 * layout the model or cluster cannot take is not a plan). @signature (n doubles) gets each
 * strategy's memory and compute, to find shapes the closed form cannot tell apart. */
static gboolean bound_shape(const Space *sp, ParoPlanShape *sh, double *signature, GError **error)
{
    g_autoptr(GArray) groups = paro_plan_group_sizes(sh, sp->gpus_per_node);
    gint64 m = g_array_index(groups, gint64, groups->len - 1);
    gint64 a = MAX(1, sh->layout.pp * sh->layout.virtual_stages);
    g_autoptr(GPtrArray) sets = paro_plan_overrides(sp->rq, sh, m, a, PARO_ALGO_AUTO);
    g_autoptr(GError) local = NULL;
    g_autoptr(ParoRun) run =
        paro_run_load(sp->path, (const char *const *)sets->pdata, NULL, &local);
    if (run == NULL) {
        if (local->domain == PARO_SIM_ERROR ||
            g_error_matches(local, PARO_CONFIG_ERROR, PARO_CONFIG_ERROR_CONSTRAINT))
            return FALSE;
        g_propagate_error(error, g_steal_pointer(&local));
        return FALSE;
    }
    const ParoScenario *s = paro_run_get_scenario(run);
    const ParoScenarioDerived *d = paro_run_get_derived(run);
    const ParoGuideline *g = paro_run_get_guideline(run);
    sh->stage_micro_s = d->micro_step_s / (double)sh->layout.pp;
    sh->optimizer_s = G_MAXDOUBLE;
    sh->strategies = 0;
    guint n = paro_strategy_n_all();
    for (guint i = 0; i < n; i++) {
        const ParoStrategy *st = paro_strategy_get(i);
        const ParoStrategyResult *r = paro_guideline_find(g, st);
        signature[2 * i] = r->mem_total;
        signature[2 * i + 1] = r->t_compute;
        if (memory_bound(r, &sh->layout, paro_framework_pytorch_runtime(&s->framework)) >
                s->topology->gpu.memory_bytes ||
            !r->host_fits)
            continue;
        sh->strategies |= G_GUINT64_CONSTANT(1) << i;
        /* with a pipeline, the device that bounds the step need not hold the most
         * states: its optimizer is left out of the bound */
        sh->optimizer_s =
            sh->layout.pp == 1 ? MIN(sh->optimizer_s, r->t_optimizer / (double)sh->layout.tp) : 0;
    }
    return sh->strategies != 0;
}

static void bound_family(gpointer data, gpointer user_data)
{
    Family *f = data;
    const Space *sp = user_data;
    guint n = paro_strategy_n_all();
    f->shapes = g_array_new(FALSE, FALSE, sizeof(ParoPlanShape));
    /* per micro-batch, the closed form's figures at the last level kept: a heavier level
     * the closed form cannot tell from it (selective recomputation with FlashAttention,
     * which keeps no scores to recompute) is the same step, searched once */
    g_autofree double *kept = g_new0(double, 2 * n * G_N_ELEMENTS(micro_batches));
    gboolean kept_any[G_N_ELEMENTS(micro_batches)] = {FALSE};
    g_autofree double *signature = g_new0(double, 2 * n);
    for (guint ri = 0; ri < G_N_ELEMENTS(recompute_levels); ri++) {
        /* layered accumulation keeps every micro-batch's activations of a module until its
         * backward: whether it must recompute is the memory's answer, searched like any
         * layout's (the old planner forced full recomputation on it) */
        ParoPlanShape sh = f->first;
        sh.layout.recompute = recompute_levels[ri].recompute;
        sh.layout.recompute_every = recompute_levels[ri].every;
        for (guint bi = 0; bi < G_N_ELEMENTS(micro_batches); bi++) {
            sh.micro_batch = micro_batches[bi];
            if (bi > 0 &&
                (double)sh.dp * (double)sh.micro_batch * (double)sp->sequence > sp->largest_batch)
                break;
            if (!bound_shape(sp, &sh, signature, &f->error)) {
                if (f->error != NULL)
                    return;
                break; /* nothing fits: a larger micro-batch only holds more */
            }
            double *last = kept + 2 * n * bi;
            if (kept_any[bi] && memcmp(last, signature, 2 * n * sizeof(double)) == 0)
                continue;
            memcpy(last, signature, 2 * n * sizeof(double));
            kept_any[bi] = TRUE;
            g_array_append_val(f->shapes, sh);
        }
    }
}

/* Powers of two from 1 to @max (inclusive) that divide @of (0: any). */
static GArray *powers_of_two(gint64 max, gint64 of)
{
    GArray *out = g_array_new(FALSE, FALSE, sizeof(gint64));
    for (gint64 k = 1; k <= max; k *= 2)
        if (of == 0 || of % k == 0)
            g_array_append_val(out, k);
    return out;
}

static void add_family(GArray *families, const ParoPlanLayout *l, gint64 dp, gint64 layers)
{
    Family f = {.first = {.layout = *l, .dp = dp, .layers = layers}};
    g_array_append_val(families, f);
}

/* Every layout of the space, in a fixed order: tp, cp, ep, pp, schedule, sequence
 * parallelism, offload (recomputation and micro-batch inside a family). */
static GArray *layouts(const ParoScenario *base, const ParoPlanRequest *rq)
{
    GArray *families = g_array_new(FALSE, TRUE, sizeof(Family));
    const ParoModel *model = base->model;
    gint64 gpn = base->topology->gpus_per_node, n = rq->gpus, seq = base->training.sequence;
    gint64 L = model->has_shape ? model->layers : 1;
    gboolean wide = !rq->dp_only && model->has_shape;
    g_autoptr(GArray) tps = powers_of_two(wide ? gpn : 1, gpn);
    /* context parallelism while each rank keeps 4,096 tokens or more of the sequence
     * (decision 88), causal balancing in 2 cp chunks */
    g_autoptr(GArray) cps = powers_of_two(wide ? MAX(1, seq / 4096) : 1, seq / 2 > 0 ? seq / 2 : 1);
    g_autoptr(GArray) eps =
        powers_of_two(wide && model->experts > 1 ? model->experts : 1, MAX(1, model->experts));
    g_autoptr(GArray) pps = powers_of_two(wide ? MIN(MAX(1, L / 2), 64) : 1, 0);
    for (guint ti = 0; ti < tps->len; ti++)
        for (guint ci = 0; ci < cps->len; ci++)
            for (guint ei = 0; ei < eps->len; ei++)
                for (guint pi = 0; pi < pps->len; pi++) {
                    gint64 tp = g_array_index(tps, gint64, ti), cp = g_array_index(cps, gint64, ci),
                           ep = g_array_index(eps, gint64, ei), pp = g_array_index(pps, gint64, pi);
                    if (n % (tp * cp * pp) != 0)
                        continue;
                    gint64 dp = n / (tp * cp * pp);
                    /* stages that share a node run, but the search leaves them out: they put
                     * the pipeline where tensor parallelism would use the node's NVLink */
                    if ((n / pp) % gpn != 0 || (dp * cp) % ep != 0)
                        continue;
                    ParoPlanLayout l = {.tp = tp,
                                        .cp = cp,
                                        .ep = ep,
                                        .pp = pp,
                                        .schedule = PARO_PIPE_1F1B,
                                        .virtual_stages = 1,
                                        .recompute_every = 1,
                                        .uneven = L % pp != 0};
                    for (int sp = 0; sp <= (tp > 1 ? 1 : 0); sp++) {
                        l.sequence_parallel = sp;
                        /* offload: DeepSpeed's, with data (and tensor) parallelism */
                        int offloads = pp == 1 && cp == 1 && ep == 1 ? 2 : 0;
                        for (int off = 0; off <= offloads; off++) {
                            l.offload = off;
                            add_family(families, &l, dp, L);
                        }
                        if (pp == 1 || l.uneven)
                            continue;
                        l.offload = 0;
                        for (gint64 v = 2; v <= 4; v *= 2)
                            if (L % (pp * v) == 0) {
                                ParoPlanLayout il = l;
                                il.schedule = PARO_PIPE_INTERLEAVED;
                                il.virtual_stages = v;
                                add_family(families, &il, dp, L);
                            }
                        if (rq->lga) {
                            ParoPlanLayout ll = l;
                            ll.schedule = PARO_PIPE_MODULAR;
                            ll.virtual_stages = L / pp;
                            ll.layered = TRUE;
                            add_family(families, &ll, dp, L);
                        }
                    }
                }
    return families;
}

guint paro_plan_count_shapes(const ParoScenario *base, const ParoPlanRequest *rq)
{
    g_autoptr(GArray) families = layouts(base, rq);
    return families->len * G_N_ELEMENTS(recompute_levels) * G_N_ELEMENTS(micro_batches);
}

GArray *paro_plan_shapes(const char *path, const ParoScenario *base, ParoPlanRequest *rq,
                         GError **error)
{
    g_autoptr(GArray) families = layouts(base, rq);
    Space sp = {path, rq, base->topology->gpus_per_node, paro_plan_largest_batch(rq),
                base->training.sequence};
    int jobs = rq->jobs > 0 ? rq->jobs : (int)g_get_num_processors();
    GThreadPool *pool = g_thread_pool_new(bound_family, &sp, MAX(1, jobs), TRUE, NULL);
    for (guint i = 0; i < families->len; i++)
        g_thread_pool_push(pool, &g_array_index(families, Family, i), NULL);
    g_thread_pool_free(pool, FALSE, TRUE);
    GArray *shapes = g_array_new(FALSE, FALSE, sizeof(ParoPlanShape));
    GError *first = NULL;
    for (guint i = 0; i < families->len; i++) {
        Family *f = &g_array_index(families, Family, i);
        if (f->error != NULL && first == NULL)
            first = g_steal_pointer(&f->error);
        g_clear_error(&f->error);
        if (f->shapes != NULL)
            g_array_append_vals(shapes, f->shapes->data, f->shapes->len);
        g_clear_pointer(&f->shapes, g_array_unref);
    }
    rq->shapes = shapes->len;
    if (first != NULL) {
        g_propagate_error(error, first);
        g_array_unref(shapes);
        return NULL;
    }
    return shapes;
}
