/* SPDX-License-Identifier: MIT */
#include "plan/plan.h"

#include <math.h>
#include <string.h>

#include "core/error.h"
#include "pipe/pipe.h"

gint64 paro_plan_accumulation(double batch_tokens, gint64 gpus, gint64 micro_batch, gint64 sequence)
{
    double per_step = (double)gpus * (double)micro_batch * (double)sequence;
    return MAX(1, (gint64)llround(batch_tokens / per_step));
}

/* Non-embedding parameters, as the scaling law counts them: the layers' parameters. */
static double law_params(const ParoModel *m)
{
    double layers = paro_model_layer_params(m) * (double)m->layers;
    return layers > 0 ? layers : paro_model_base_params(m);
}

/* Group sizes that map onto nodes: divisors of a node, then whole nodes dividing n. */
static GArray *group_sizes(const ParoScenario *s)
{
    GArray *out = g_array_new(FALSE, FALSE, sizeof(gint64));
    gint64 n = paro_scenario_dp_ranks(s), gpn = s->topology->gpus_per_node;
    for (gint64 m = 1; m <= n; m *= 2)
        if ((m <= gpn && gpn % m == 0) || (m > gpn && m % gpn == 0 && n % m == 0))
            g_array_append_val(out, m);
    return out;
}

static int compare_rows(gconstpointer a, gconstpointer b)
{
    const ParoPlanRow *x = a, *y = b;
    if (x->fits != y->fits)
        return x->fits ? -1 : 1;
    if (x->train_s != y->train_s)
        return x->train_s < y->train_s ? -1 : 1;
    if (x->peak_bytes != y->peak_bytes)
        return x->peak_bytes < y->peak_bytes ? -1 : 1;
    int c = strcmp(x->strategy->name, y->strategy->name);
    if (c)
        return c;
    if (x->layout.tp != y->layout.tp)
        return x->layout.tp < y->layout.tp ? -1 : 1;
    if (x->layout.pp != y->layout.pp)
        return x->layout.pp < y->layout.pp ? -1 : 1;
    if (x->layout.layered != y->layout.layered)
        return x->layout.layered ? 1 : -1;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    if (x->micro_batch != y->micro_batch)
        return x->micro_batch < y->micro_batch ? -1 : 1;
    return x->algorithm - y->algorithm;
}

/* The step grows by the same amount with every period of micro-batches once its schedule is
 * in its steady state: for data parallelism alone (a period of one micro-step) from the
 * second micro-step on, for a pipeline of P stages (a period of P micro-batches, in which
 * every stage runs each of its passes P times) once the warm-up's P - 1 are past. So a step
 * of A > B micro-batches, B = 4 without pipeline and 3P with one, is
 * step(B) + (A - B)/P (step(B) - step(B - P)), and so is its peak memory (constant but for
 * layered accumulation, which keeps a module's activations of every micro-batch). Layered
 * accumulation gets there later (the step's periodic_from estimates when), so pipelines and
 * layered schedules start from that estimate and are checked on a third point. tests/test_plan.c
 * checks all this against full simulations; it makes the search about A/B times cheaper. */
#define PLAN_SIMULATED_MICRO_STEPS 4

static gint64 simulated_micro_steps(const ParoPlanLayout *lay)
{
    return lay->pp > 1 ? 3 * lay->pp : PLAN_SIMULATED_MICRO_STEPS;
}

typedef struct {
    const ParoStrategy *strategy;
    double step_s, peak_bytes;
    gboolean fits;
    gint64 periodic_from;
    gboolean host_fits; /* offloaded state in host memory: independent of the accumulation */
} Simulated;

static gboolean simulate_all(const char *path, const ParoPlanRequest *rq, const ParoPlanLayout *lay,
                             gint64 group, gint64 micro_batch, gint64 accumulation, int algorithm,
                             ParoCollCache *cache, Simulated *out, gint64 *gpus, gint64 *sequence,
                             double *memory_bytes, GError **error)
{
    g_autoptr(GPtrArray) sets = g_ptr_array_new_with_free_func(g_free);
    for (int i = 0; rq->sets && rq->sets[i]; i++)
        g_ptr_array_add(sets, g_strdup(rq->sets[i]));
    g_ptr_array_add(sets, g_strdup_printf("parallelism.group=%" G_GINT64_FORMAT, group));
    g_ptr_array_add(sets, g_strdup_printf("training.micro_batch=%" G_GINT64_FORMAT, micro_batch));
    g_ptr_array_add(sets, g_strdup_printf("training.accumulation=%" G_GINT64_FORMAT, accumulation));
    g_ptr_array_add(sets,
                    g_strdup_printf("collectives.algorithm=%s", paro_algorithm_names[algorithm]));
    if (lay->tp > 1 || lay->pp > 1 || lay->layered) {
        g_ptr_array_add(sets, g_strdup_printf("parallelism.tp=%" G_GINT64_FORMAT, lay->tp));
        g_ptr_array_add(sets, g_strdup_printf("parallelism.pp=%" G_GINT64_FORMAT, lay->pp));
        g_ptr_array_add(sets, g_strdup_printf("parallelism.dp=%" G_GINT64_FORMAT,
                                              rq->gpus / (lay->tp * lay->pp)));
        g_ptr_array_add(sets, g_strdup_printf("training.pipeline.schedule=%s",
                                              paro_pipe_schedule_names[lay->schedule]));
        g_ptr_array_add(sets, g_strdup_printf("training.pipeline.virtual=%" G_GINT64_FORMAT,
                                              lay->virtual_stages));
        if (lay->layered) {
            g_ptr_array_add(sets, g_strdup("training.pipeline.accumulation=layered"));
            g_ptr_array_add(sets, g_strdup("training.recompute=full"));
        }
    }
    g_ptr_array_add(sets, NULL);
    g_autoptr(ParoRun) run = paro_run_load(path, (const char *const *)sets->pdata, cache, error);
    if (run == NULL)
        return FALSE;
    const ParoScenario *s = paro_run_get_scenario(run);
    /* no time saved: plans rank plain steps; the planner extrapolates over all strategies */
    ParoRunOptions options = {FALSE, FALSE, FALSE};
    *gpus = paro_scenario_dp_ranks(s);
    *sequence = s->training.sequence;
    *memory_bytes = s->topology->gpu.memory_bytes;
    for (guint i = 0; i < paro_strategy_n_all(); i++) {
        ParoStepResult r;
        if (!paro_run_strategy(run, paro_strategy_get(i), &options, &r, error))
            return FALSE;
        out[i] = (Simulated){r.strategy, paro_time_to_s(r.step), r.peak_bytes,
                             r.fits,     r.periodic_from,        r.host_fits};
        paro_step_result_clear(&r);
    }
    return TRUE;
}

/* Three points one period apart on a line, to 1e-9 of the last. */
static gboolean is_linear(double y0, double y1, double y2)
{
    return paro_extrapolate_is_linear(y0, y1, y2, 1e-9);
}

/* @y lies on the line through @before and @at, @periods periods past @at (1e-9 relative,
 * as is_linear). */
static gboolean on_line(double at, double before, double periods, double y)
{
    double want = at + periods * (at - before);
    return fabs(y - want) <= 1e-9 * fabs(want);
}

/* Two more points, base + 2P and base + 3P, after the three of a step that was not yet
 * periodic: each strategy's step and peak extrapolated to @accumulation linearly where its
 * five points are on a line, geometrically (paro_extrapolate_geometric) where they
 * converge so within PARO_PLAN_GEOMETRIC_TOLERANCE; FALSE (and no error) when a strategy
 * does neither. */
static gboolean extrapolate_converging(const char *path, const ParoPlanRequest *rq,
                                       const ParoPlanLayout *lay, gint64 group, gint64 micro_batch,
                                       gint64 accumulation, int algorithm, ParoCollCache *cache,
                                       gint64 base, const Simulated *before, const Simulated *at,
                                       const Simulated *after, double *final_step,
                                       double *final_peak, gint64 *n, gint64 *sequence,
                                       double *memory, GError **error)
{
    guint n_strategies = paro_strategy_n_all();
    gint64 period = lay->pp;
    g_autofree Simulated *more = g_new0(Simulated, 2 * n_strategies);
    for (int k = 0; k < 2; k++)
        if (!simulate_all(path, rq, lay, group, micro_batch, base + (2 + k) * period, algorithm,
                          cache, more + k * n_strategies, n, sequence, memory, error))
            return FALSE;
    double periods = (double)(accumulation - (base + 3 * period)) / (double)period;
    for (guint i = 0; i < n_strategies; i++) {
        const Simulated *p[5] = {&before[i], &at[i], &after[i], &more[i], &more[n_strategies + i]};
        double step[5], peak[5];
        for (int k = 0; k < 5; k++) {
            step[k] = p[k]->step_s;
            peak[k] = p[k]->peak_bytes;
        }
        if (!paro_extrapolate_five(step, periods, PARO_PLAN_GEOMETRIC_TOLERANCE, &final_step[i]) ||
            !paro_extrapolate_five(peak, periods, PARO_PLAN_GEOMETRIC_TOLERANCE, &final_peak[i]))
            return FALSE;
    }
    return TRUE;
}

static gboolean run_config(const char *path, const ParoPlanRequest *rq, const ParoPlanLayout *lay,
                           gint64 group, gint64 micro_batch, gint64 accumulation, int algorithm,
                           ParoCollCache *cache, GArray *rows, GError **error)
{
    guint n_strategies = paro_strategy_n_all();
    g_autofree Simulated *at = g_new0(Simulated, n_strategies);
    g_autofree Simulated *before = g_new0(Simulated, n_strategies);
    g_autofree Simulated *after = g_new0(Simulated, n_strategies);
    gint64 n = 0, sequence = 0, base = simulated_micro_steps(lay), period = lay->pp;
    double memory = 0;
    /* A schedule with a pipeline or layered accumulation is checked on a third point before
     * it is extrapolated: layered accumulation's per-module collectives are fixed while its
     * compute grows with A, so its step is linear only once the compute hides them. Until
     * the slopes agree, the base doubles; past A, the step is simulated whole.
     * A doubt: with GEMMs timed by shape, an interleaved pipeline can be quasi-periodic
     * (periods of P micro-batches alternate within 4%), so three points may agree and a
     * later period differ: the extrapolation is then within 1%, not 1e-9 (test_plan.c).
     * A second doubt: layered accumulation's peak is piecewise linear in A (which phase
     * holds the peak changes with A), so three points on one piece can agree and a later,
     * steeper piece be missed. Since the loss's memory (decision 50) a layered step's last
     * module keeps every micro-batch's logits, a steep piece that overtakes early (the
     * default scenario's layered case: from A = 11), so a fourth point at 4 x base must lie
     * on the line too; a piece that overtakes beyond it is still missed (on the calibrated
     * PaRO cluster, fsdp-hybrid-zero2's layered case at tp 2, virtual 32, was 0.17% above
     * the extrapolation at A = 19 before the loss's memory). Exact would need the ledger's
     * peak per phase as a function of A, not samples of the maximum.
     * With the SMs collectives take from compute (training.sm_contention, the default) a
     * pipeline's slopes converge geometrically (each period's change 7/9 of the last in
     * the default scenario's 1F1B) and agree to 1e-9 only some 50 periods on: two more
     * points measure the ratio and the step is summed to A within 1e-6
     * (extrapolate_converging; test_plan.c checks it against full simulations). */
    gboolean checked = lay->pp > 1 || lay->layered;
    gboolean extrapolate = FALSE;
    g_autofree double *final_step = g_new0(double, n_strategies);
    g_autofree double *final_peak = g_new0(double, n_strategies);
    if (checked && accumulation > base + period) {
        /* where the schedule says it turns periodic */
        if (!simulate_all(path, rq, lay, group, micro_batch, base, algorithm, cache, at, &n,
                          &sequence, &memory, error))
            return FALSE;
        for (guint i = 0; i < n_strategies; i++)
            base = MAX(base, (at[i].periodic_from + period - 1) / period * period);
    }
    for (;;) {
        extrapolate = accumulation > base + (checked ? period : 0);
        if (!extrapolate)
            break;
        if (!simulate_all(path, rq, lay, group, micro_batch, base, algorithm, cache, at, &n,
                          &sequence, &memory, error) ||
            !simulate_all(path, rq, lay, group, micro_batch, base - period, algorithm, cache,
                          before, &n, &sequence, &memory, error))
            return FALSE;
        double periods = (double)(accumulation - base) / (double)period;
        for (guint i = 0; i < n_strategies; i++) {
            final_step[i] = at[i].step_s + periods * (at[i].step_s - before[i].step_s);
            final_peak[i] = at[i].peak_bytes + periods * (at[i].peak_bytes - before[i].peak_bytes);
        }
        if (!checked)
            break;
        if (!simulate_all(path, rq, lay, group, micro_batch, base + period, algorithm, cache, after,
                          &n, &sequence, &memory, error))
            return FALSE;
        gboolean linear = TRUE;
        for (guint i = 0; i < n_strategies && linear; i++)
            linear = is_linear(before[i].step_s, at[i].step_s, after[i].step_s) &&
                     is_linear(before[i].peak_bytes, at[i].peak_bytes, after[i].peak_bytes);
        if (linear && lay->layered) {
            /* Layered accumulation's peak is the highest of several lines in A: a fourth
             * point at 4 x base must lie on the same line, else the base doubles (or, with
             * A that close, the step is simulated whole). */
            gint64 far = 4 * base;
            if (accumulation <= far + period) {
                extrapolate = FALSE;
                break;
            }
            g_autofree Simulated *far_at = g_new0(Simulated, n_strategies);
            if (!simulate_all(path, rq, lay, group, micro_batch, far, algorithm, cache, far_at, &n,
                              &sequence, &memory, error))
                return FALSE;
            double ahead = (double)(far - base) / (double)period;
            for (guint i = 0; i < n_strategies && linear; i++)
                linear =
                    on_line(at[i].step_s, before[i].step_s, ahead, far_at[i].step_s) &&
                    on_line(at[i].peak_bytes, before[i].peak_bytes, ahead, far_at[i].peak_bytes);
        }
        if (linear)
            break;
        /* Not periodic yet: with SM contention a pipeline's slopes approach their limit
         * geometrically (each period's change a fixed ratio of the last), reaching it only
         * at picosecond rounding, dozens of periods on. Two more points measure the ratio,
         * and the step is summed to A within PARO_PLAN_GEOMETRIC_TOLERANCE. */
        if (accumulation > base + 3 * period &&
            extrapolate_converging(path, rq, lay, group, micro_batch, accumulation, algorithm,
                                   cache, base, before, at, after, final_step, final_peak, &n,
                                   &sequence, &memory, error))
            break;
        if (error && *error)
            return FALSE;
        base *= 2;
    }
    if (!extrapolate && !simulate_all(path, rq, lay, group, micro_batch, accumulation, algorithm,
                                      cache, at, &n, &sequence, &memory, error))
        return FALSE;
    double batch = (double)n * (double)micro_batch * (double)accumulation * (double)sequence;
    for (guint i = 0; i < n_strategies; i++) {
        double step = at[i].step_s, peak = at[i].peak_bytes;
        gboolean fits = at[i].fits;
        if (extrapolate) {
            step = final_step[i];
            peak = final_peak[i];
            fits = peak <= memory && at[i].host_fits;
        }
        ParoPlanRow row = {
            .strategy = at[i].strategy,
            .layout = *lay,
            .group = group,
            .micro_batch = micro_batch,
            .accumulation = accumulation,
            .algorithm = algorithm,
            .batch_tokens = batch,
            .step_s = step,
            .steps = ceil(rq->tokens / batch),
            .peak_bytes = peak,
            .fits = fits,
        };
        row.train_s = row.steps * row.step_s;
        row.gpu_hours = (double)rq->gpus * row.train_s / 3600.0;
        g_array_append_val(rows, row);
    }
    return TRUE;
}

/* One configuration of the search, and what simulating it gave. */
typedef struct {
    ParoPlanLayout layout;
    gint64 group, micro_batch, accumulation;
    int algorithm;
    GArray *rows;  /* ParoPlanRow, or NULL */
    GError *error; /* or NULL */
} Config;

typedef struct {
    const char *path;
    const ParoPlanRequest *rq;
    ParoCollCache *cache;
} Search;

static void run_one(gpointer data, gpointer user_data)
{
    Config *c = data;
    const Search *s = user_data;
    c->rows = g_array_new(FALSE, FALSE, sizeof(ParoPlanRow));
    if (!run_config(s->path, s->rq, &c->layout, c->group, c->micro_batch, c->accumulation,
                    c->algorithm, s->cache, c->rows, &c->error))
        g_clear_pointer(&c->rows, g_array_unref);
}

static void config_clear(Config *c)
{
    g_clear_pointer(&c->rows, g_array_unref);
    g_clear_error(&c->error);
}

GArray *paro_plan_search(const char *path, ParoPlanRequest *rq, GError **error)
{
    g_autoptr(ParoScenario) base = paro_scenario_load(path, rq->sets, error);
    if (base == NULL)
        return NULL;
    rq->params = law_params(base->model);
    paro_scaling_budget(&paro_scaling_kaplan2020, rq->params, &rq->budget);
    if (rq->tokens <= 0)
        rq->tokens = rq->budget.tokens;
    if (rq->batch_tokens <= 0)
        rq->batch_tokens = rq->budget.critical_batch_tokens;
    rq->gpus = paro_topology_n_gpus(base->topology);
    if (!paro_plan_check_work(base, rq, error))
        return NULL;
    gint64 gpn = base->topology->gpus_per_node,
           L = base->model->has_shape ? base->model->layers : 1;
    g_autoptr(GArray) layouts = g_array_new(FALSE, FALSE, sizeof(ParoPlanLayout));
    for (gint64 tp = 1; tp <= (rq->dp_only ? 1 : gpn); tp *= 2)
        for (gint64 pp = 1; pp <= (rq->dp_only ? 1 : MIN(L, 64)); pp *= 2) {
            if (gpn % tp != 0 || L % pp != 0 || rq->gpus % (tp * pp) != 0)
                continue;
            /* stages that share a node (fewer DP ranks than a node holds) run, but the
             * search leaves them out: they put the pipeline where tensor parallelism would
             * use the node's NVLink, and simulating their many stages costs the search most
             * of its time (plan-budget.c counts the same layouts) */
            if ((rq->gpus / (tp * pp)) % (gpn / tp) != 0)
                continue;
            ParoPlanLayout plain = {tp, pp, PARO_PIPE_1F1B, 1, FALSE};
            g_array_append_val(layouts, plain);
            if (rq->lga && base->model->has_shape) {
                ParoPlanLayout lga = {tp, pp, PARO_PIPE_MODULAR, L / pp, TRUE};
                g_array_append_val(layouts, lga);
            }
        }
    const gint64 micro_batches[] = {1, 2, 4, 8, 16};
    const int algorithms[] = {PARO_ALGO_AUTO, PARO_ALGO_HO_RING};
    g_autoptr(GArray) configs = g_array_new(FALSE, TRUE, sizeof(Config));
    for (guint li = 0; li < layouts->len; li++) {
        const ParoPlanLayout *lay = &g_array_index(layouts, ParoPlanLayout, li);
        gboolean plain_dp = lay->tp == 1 && lay->pp == 1 && !lay->layered;
        gint64 dp = rq->gpus / (lay->tp * lay->pp);
        /* PaRO groups: searched for data parallelism alone; with tp or pp, the DP ranks of
         * a node (the scenario's default), which keeps every group inside a node */
        g_autoptr(GArray) groups =
            plain_dp ? group_sizes(base) : g_array_new(FALSE, FALSE, sizeof(gint64));
        if (!plain_dp) {
            gint64 m = MAX(1, MIN(dp, gpn / lay->tp));
            g_array_append_val(groups, m);
        }
        for (guint gi = 0; gi < groups->len; gi++) {
            gint64 m = g_array_index(groups, gint64, gi);
            for (guint bi = 0; bi < G_N_ELEMENTS(micro_batches); bi++) {
                gint64 b = micro_batches[bi];
                gint64 a = paro_plan_accumulation(rq->batch_tokens, dp, b, base->training.sequence);
                /* a micro-batch larger than the batch allows is not a choice */
                if ((double)dp * (double)b * (double)base->training.sequence >
                        2 * rq->batch_tokens &&
                    b > 1)
                    continue;
                for (guint ai = 0; ai < G_N_ELEMENTS(algorithms); ai++) {
                    /* ho-ring needs groups inside and across nodes; with tp or pp the DP
                     * collectives keep to ring, which bounds the search */
                    if (algorithms[ai] == PARO_ALGO_HO_RING && (m == 1 || m == dp || !plain_dp))
                        continue;
                    Config c = {.layout = *lay,
                                .group = m,
                                .micro_batch = b,
                                .accumulation = a,
                                .algorithm = algorithms[ai]};
                    g_array_append_val(configs, c);
                }
            }
        }
    }
    /* one cache for the whole search: keyed by value and thread-safe, it serves every
     * configuration; the configurations run on all cores, each into its own rows */
    g_autoptr(ParoCollCache) cache = paro_coll_cache_new();
    Search search = {path, rq, cache};
    int jobs = rq->jobs > 0 ? rq->jobs : (int)g_get_num_processors();
    GThreadPool *pool = g_thread_pool_new(run_one, &search, MAX(1, jobs), TRUE, NULL);
    for (guint i = 0; i < configs->len; i++)
        g_thread_pool_push(pool, &g_array_index(configs, Config, i), NULL);
    g_thread_pool_free(pool, FALSE, TRUE);
    /* in the order of a sequential search: its rows, and its first error that is bad input
     * (a configuration the cluster cannot take is not a plan) */
    g_autoptr(GArray) rows = g_array_new(FALSE, FALSE, sizeof(ParoPlanRow));
    for (guint i = 0; i < configs->len; i++) {
        Config *c = &g_array_index(configs, Config, i);
        if (c->error != NULL && c->error->domain != PARO_SIM_ERROR &&
            !g_error_matches(c->error, PARO_CONFIG_ERROR, PARO_CONFIG_ERROR_CONSTRAINT)) {
            g_propagate_error(error, g_steal_pointer(&c->error));
            for (guint k = 0; k < configs->len; k++)
                config_clear(&g_array_index(configs, Config, k));
            return NULL;
        }
        if (c->rows != NULL)
            g_array_append_vals(rows, c->rows->data, c->rows->len);
    }
    for (guint k = 0; k < configs->len; k++)
        config_clear(&g_array_index(configs, Config, k));
    g_array_sort(rows, compare_rows);
    /* A strategy that does not use groups (no I in its triple) gives the same step for
     * every m, and one without global collectives for every algorithm: keep the first of
     * such equals (the smallest m, ring) and drop the copies. */
    GArray *kept = g_array_new(FALSE, FALSE, sizeof(ParoPlanRow));
    for (guint i = 0; i < rows->len; i++) {
        const ParoPlanRow *r = &g_array_index(rows, ParoPlanRow, i);
        gboolean copy = FALSE;
        for (guint k = kept->len; k-- > 0 && !copy;) {
            const ParoPlanRow *q = &g_array_index(kept, ParoPlanRow, k);
            if (q->train_s != r->train_s)
                break; /* sorted by time: copies are adjacent */
            copy = q->strategy == r->strategy && q->micro_batch == r->micro_batch &&
                   q->layout.tp == r->layout.tp && q->layout.pp == r->layout.pp &&
                   q->layout.layered == r->layout.layered && q->accumulation == r->accumulation &&
                   q->peak_bytes == r->peak_bytes;
        }
        if (!copy)
            g_array_append_val(kept, *r);
    }
    return kept;
}
