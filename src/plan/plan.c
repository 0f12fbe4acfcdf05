/* SPDX-License-Identifier: MIT */
#include "plan/plan-private.h"

#include <math.h>
#include <string.h>

#include "core/error.h"
#include "core/limits.h"
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

const char *const paro_plan_bound_names[] = {
    "compute", "exposed communication", "bubble", "memory", "the law", NULL};

/* Rows that fit with the allocator's margin first, then tight ones, then the rest. */
static int usable_class(const ParoPlanRow *r)
{
    return r->fits ? (r->tight ? 1 : 0) : 2;
}

#define CMP(x, y)                                                                                  \
    do {                                                                                           \
        if ((x) != (y))                                                                            \
            return (x) < (y) ? -1 : 1;                                                             \
    } while (0)

static int compare_layouts(const ParoPlanLayout *a, const ParoPlanLayout *b)
{
    CMP(a->tp, b->tp);
    CMP(a->cp, b->cp);
    CMP(a->ep, b->ep);
    CMP(a->pp, b->pp);
    CMP(a->layered, b->layered);
    CMP(a->schedule, b->schedule);
    CMP(a->virtual_stages, b->virtual_stages);
    CMP(a->sequence_parallel, b->sequence_parallel);
    CMP(a->recompute, b->recompute);
    CMP(a->recompute_every, b->recompute_every);
    CMP(a->offload, b->offload);
    return 0;
}

static int compare_rows(gconstpointer pa, gconstpointer pb)
{
    const ParoPlanRow *x = pa, *y = pb;
    CMP(usable_class(x), usable_class(y));
    CMP(x->train_s, y->train_s);
    CMP(x->peak_bytes, y->peak_bytes);
    int c = strcmp(x->strategy->name, y->strategy->name);
    if (c)
        return c;
    if ((c = compare_layouts(&x->layout, &y->layout)) != 0)
        return c;
    CMP(x->group, y->group);
    CMP(x->micro_batch, y->micro_batch);
    CMP(x->accumulation, y->accumulation);
    return x->algorithm - y->algorithm;
}

/* The accumulations the search gives a shape: the one nearest a fixed batch, or in the
 * law's mode the powers of two while the batch stays within the law's cap (S(B) step(B)
 * is flat near its least: T(2B) / T(B) = (2B + B_crit) / (2B + 2 B_crit) with a step
 * proportional to the batch). */
static GArray *accumulations(const ParoPlanRequest *rq, const ParoPlanShape *sh, gint64 sequence)
{
    GArray *out = g_array_new(FALSE, FALSE, sizeof(gint64));
    double micro = (double)sh->dp * (double)sh->micro_batch * (double)sequence;
    if (rq->fixed_batch) {
        gint64 a = paro_plan_accumulation(rq->batch_tokens, sh->dp, sh->micro_batch, sequence);
        g_array_append_val(out, a);
        return out;
    }
    double cap = paro_plan_largest_batch(rq);
    for (gint64 a = 1; a <= paro_limit_accumulation.max; a *= 2) {
        if (out->len > 0 && micro * (double)a > cap)
            break;
        g_array_append_val(out, a);
    }
    return out;
}

static double steps_at(const ParoPlanRequest *rq, double batch)
{
    return ceil(rq->fixed_tokens ? rq->tokens / batch : paro_scaling_steps(&rq->budget, batch));
}

/* One configuration of the search: a shape, a group size and an algorithm, the
 * accumulations it is asked for, and what simulating it gave. */
typedef struct {
    const ParoPlanShape *shape;
    gint64 group;
    int algorithm;
    GArray *accumulations; /* gint64 */
    GArray *bounds;        /* double: each accumulation's time-to-train lower bound */
    double bound;          /* the least of them */
    GArray *rows;          /* ParoPlanRow, or NULL */
    GError *error;         /* or NULL */
    guint index;           /* in the enumeration: the tie-break of the order */
} Config;

typedef struct {
    const char *path;
    ParoPlanRequest *rq;
    ParoCollCache *cache;
    gint64 sequence;
    GMutex lock;
    double best; /* the shortest time to train found that fits with its margin */
} Search;

static void complete_row(const ParoPlanRequest *rq, ParoPlanRow *r);

static double search_threshold(Search *s)
{
    g_mutex_lock(&s->lock);
    double t = (1.0 + PARO_PLAN_WINDOW) * s->best;
    g_mutex_unlock(&s->lock);
    return t;
}

/* @c's accumulations in the order of their bounds, least first (then as listed). */
static GArray *accumulation_order(const Config *c)
{
    GArray *order = g_array_new(FALSE, FALSE, sizeof(guint));
    for (guint i = 0; i < c->accumulations->len; i++) {
        guint k = order->len;
        double b = g_array_index(c->bounds, double, i);
        while (k > 0 && g_array_index(c->bounds, double, g_array_index(order, guint, k - 1)) > b)
            k--;
        g_array_insert_val(order, k, i);
    }
    return order;
}

/* Completes the rows from @from on and lowers the search's best with those that fit with
 * their margin, at once: the configurations and accumulations after it prune against it. */
static void publish_rows(Search *s, Config *c, guint from, double floor_s)
{
    double best = INFINITY;
    for (guint k = from; k < c->rows->len; k++) {
        ParoPlanRow *r = &g_array_index(c->rows, ParoPlanRow, k);
        r->floor_s = floor_s;
        complete_row(s->rq, r);
        if (r->fits && !r->tight)
            best = MIN(best, r->train_s);
    }
    g_mutex_lock(&s->lock);
    s->best = MIN(s->best, best);
    g_mutex_unlock(&s->lock);
}

static void run_one(gpointer data, gpointer user_data)
{
    Config *c = data;
    Search *s = user_data;
    /* the best found so far only falls, so what is skipped here is beyond the window of
     * the final best too */
    if (c->bound > search_threshold(s))
        return;
    c->rows = g_array_new(FALSE, FALSE, sizeof(ParoPlanRow));
    g_autoptr(ParoPlanUnit) unit =
        paro_plan_unit_new(s->path, s->rq, c->shape, c->group, c->algorithm, s->cache);
    g_autoptr(GArray) order = accumulation_order(c);
    for (guint j = 0; j < order->len; j++) {
        guint i = g_array_index(order, guint, j);
        if (g_array_index(c->bounds, double, i) > search_threshold(s))
            break; /* the rest are bounded higher */
        gint64 a = g_array_index(c->accumulations, gint64, i);
        g_autoptr(GError) local = NULL;
        double floor_s = 0;
        if (paro_plan_unit_floor(unit, a, &floor_s, &local)) {
            /* the step without data-parallel collectives bounds every strategy's (with the
             * pipeline's real fill, tensor-parallel and pipeline sends): one simulation
             * instead of all of them where that is already too slow */
            double batch = (double)c->shape->dp * (double)c->shape->micro_batch * (double)a *
                           (double)s->sequence;
            if (steps_at(s->rq, batch) * floor_s > search_threshold(s))
                continue;
            guint from = c->rows->len;
            if (paro_plan_unit_rows(unit, a, c->rows, &local)) {
                publish_rows(s, c, from, floor_s);
                continue;
            }
        }
        /* a configuration the cluster cannot take is not a plan; bad input is an error */
        if (local->domain != PARO_SIM_ERROR &&
            !g_error_matches(local, PARO_CONFIG_ERROR, PARO_CONFIG_ERROR_CONSTRAINT)) {
            c->error = g_steal_pointer(&local);
            return;
        }
    }
    g_mutex_lock(&s->lock);
    s->rq->simulated++;
    g_mutex_unlock(&s->lock);
}

static int compare_configs(gconstpointer pa, gconstpointer pb)
{
    const Config *a = pa, *b = pb;
    CMP(a->bound, b->bound);
    CMP(a->index, b->index);
    return 0;
}

static void config_clear(Config *c)
{
    g_clear_pointer(&c->accumulations, g_array_unref);
    g_clear_pointer(&c->bounds, g_array_unref);
    g_clear_pointer(&c->rows, g_array_unref);
    g_clear_error(&c->error);
}

/* Each row's law figures and what bounds it. */
static void complete_row(const ParoPlanRequest *rq, ParoPlanRow *r)
{
    r->steps = steps_at(rq, r->batch_tokens);
    r->tokens = r->steps * r->batch_tokens;
    r->train_s = r->steps * r->step_s;
    r->gpu_hours = (double)rq->gpus * r->train_s / 3600.0;
    double exposed = r->step_s - r->compute_bound_s - r->bubble_bound_s;
    if (!r->fits || r->tight)
        r->bound = PARO_PLAN_BOUND_MEMORY;
    else if (!rq->fixed_tokens && r->batch_tokens > 2 * rq->budget.critical_batch_tokens)
        r->bound = PARO_PLAN_BOUND_LAW;
    else if (exposed >= r->compute_bound_s && exposed >= r->bubble_bound_s)
        r->bound = PARO_PLAN_BOUND_EXPOSED;
    else
        r->bound = r->bubble_bound_s > r->compute_bound_s ? PARO_PLAN_BOUND_BUBBLE
                                                          : PARO_PLAN_BOUND_COMPUTE;
}

/* The lower bound of a row's time to train that decided whether it was simulated: the
 * closed form's, or its step without data-parallel collectives. */
static double row_bound(const ParoPlanRow *r)
{
    return r->steps * MAX(r->compute_bound_s + r->bubble_bound_s, r->floor_s);
}

gboolean paro_plan_search_part(const char *path, ParoPlanRequest *rq, ParoPlanPart *part,
                               GError **error)
{
    *part = (ParoPlanPart){NULL, INFINITY};
    g_autoptr(ParoScenario) base = paro_scenario_load(path, rq->sets, error);
    if (base == NULL)
        return FALSE;
    rq->params = law_params(base->model);
    paro_scaling_budget(&paro_scaling_kaplan2020, rq->params, &rq->budget);
    rq->fixed_tokens = rq->tokens > 0;
    rq->fixed_batch = rq->batch_tokens > 0;
    if (!rq->fixed_batch)
        rq->batch_tokens = rq->budget.critical_batch_tokens; /* for the work estimate */
    rq->gpus = paro_topology_n_gpus(base->topology);
    rq->memory_bytes = base->topology->gpu.memory_bytes;
    rq->layers = base->model->has_shape ? base->model->layers : 1;
    if (!paro_plan_check_work(base, rq, error))
        return FALSE;
    g_autoptr(GArray) shapes = paro_plan_shapes(path, base, rq, error);
    if (shapes == NULL)
        return FALSE;
    gint64 sequence = base->training.sequence, gpn = base->topology->gpus_per_node;
    g_autoptr(GArray) configs = g_array_new(FALSE, TRUE, sizeof(Config));
    for (guint si = 0; si < shapes->len; si++) {
        const ParoPlanShape *sh = &g_array_index(shapes, ParoPlanShape, si);
        g_autoptr(GArray) groups = paro_plan_group_sizes(sh, gpn);
        gint64 n = sh->dp * sh->layout.cp;
        for (guint gi = 0; gi < groups->len; gi++) {
            gint64 m = g_array_index(groups, gint64, gi);
            for (int alg = 0; alg < 2; alg++) {
                /* ho-ring needs groups inside and across nodes; with tp, cp, ep or pp the
                 * DP collectives keep to ring, which bounds the search */
                if (alg == 1 && (m == 1 || m == n || !paro_plan_layout_is_dp(&sh->layout)))
                    continue;
                Config c = {.shape = sh,
                            .group = m,
                            .algorithm = alg == 0 ? PARO_ALGO_AUTO : PARO_ALGO_HO_RING,
                            .accumulations = accumulations(rq, sh, sequence),
                            .bounds = g_array_new(FALSE, FALSE, sizeof(double)),
                            .bound = G_MAXDOUBLE,
                            .index = configs->len};
                for (guint ai = 0; ai < c.accumulations->len; ai++) {
                    gint64 a = g_array_index(c.accumulations, gint64, ai);
                    double batch =
                        (double)sh->dp * (double)sh->micro_batch * (double)a * (double)sequence;
                    double b = steps_at(rq, batch) *
                               (paro_plan_compute_bound(sh, a) + paro_plan_bubble_bound(sh));
                    g_array_append_val(c.bounds, b);
                    c.bound = MIN(c.bound, b);
                }
                g_array_append_val(configs, c);
            }
        }
    }
    g_array_sort(configs, compare_configs);
    rq->configurations = configs->len;
    /* In the order of the bound on all cores, each configuration skipped when its bound
     * exceeds the best time to train found so far (with the window's margin): it cannot
     * do better. Which configurations beyond the window are simulated depends on the
     * threads' timing; what is kept (paro_plan_finish) never does. Under MPI this process
     * takes every ranks-th configuration of that order, from its rank: each rank's share
     * reaches as far down the order as the others', and its best, never below the whole
     * search's, prunes no more than one process would. */
    g_autoptr(ParoCollCache) cache = paro_coll_cache_new();
    Search search = {path, rq, cache, sequence};
    g_mutex_init(&search.lock);
    search.best = INFINITY;
    rq->simulated = 0;
    guint ranks = rq->ranks > 1 ? (guint)rq->ranks : 1;
    guint rank = rq->rank > 0 ? (guint)rq->rank % ranks : 0;
    int jobs = rq->jobs > 0 ? rq->jobs : (int)g_get_num_processors();
    GThreadPool *pool = g_thread_pool_new(run_one, &search, MAX(1, jobs), TRUE, NULL);
    for (guint i = rank; i < configs->len; i += ranks)
        g_thread_pool_push(pool, &g_array_index(configs, Config, i), NULL);
    g_thread_pool_free(pool, FALSE, TRUE);
    g_mutex_clear(&search.lock);
    for (guint i = 0; i < configs->len; i++) {
        Config *c = &g_array_index(configs, Config, i);
        if (c->error != NULL) {
            /* the first error in the order of the search that is bad input */
            g_propagate_error(error, g_steal_pointer(&c->error));
            for (guint k = 0; k < configs->len; k++)
                config_clear(&g_array_index(configs, Config, k));
            return FALSE;
        }
    }
    /* the rows within the window of this share's best: a superset of those within the
     * window of the whole search's, which is at most this one */
    part->best = search.best;
    part->rows = g_array_new(FALSE, FALSE, sizeof(ParoPlanRow));
    double keep = (1.0 + PARO_PLAN_WINDOW) * part->best;
    for (guint i = 0; i < configs->len; i++) {
        Config *c = &g_array_index(configs, Config, i);
        for (guint k = 0; c->rows != NULL && k < c->rows->len; k++) {
            const ParoPlanRow *r = &g_array_index(c->rows, ParoPlanRow, k);
            if (row_bound(r) <= keep)
                g_array_append_val(part->rows, *r);
        }
        config_clear(c);
    }
    return TRUE;
}

GArray *paro_plan_finish(const ParoPlanPart *part)
{
    /* what is kept: the rows whose bound is within the window of the best, which every
     * order of simulation reaches (all rows when none fits with its margin) */
    g_autoptr(GArray) rows = g_array_new(FALSE, FALSE, sizeof(ParoPlanRow));
    double keep = (1.0 + PARO_PLAN_WINDOW) * part->best;
    for (guint k = 0; part->rows != NULL && k < part->rows->len; k++) {
        const ParoPlanRow *r = &g_array_index(part->rows, ParoPlanRow, k);
        if (row_bound(r) <= keep)
            g_array_append_val(rows, *r);
    }
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
                   paro_plan_layout_equal(&q->layout, &r->layout) &&
                   q->accumulation == r->accumulation && q->peak_bytes == r->peak_bytes;
        }
        if (!copy)
            g_array_append_val(kept, *r);
    }
    return kept;
}

GArray *paro_plan_search(const char *path, ParoPlanRequest *rq, GError **error)
{
    g_auto(ParoPlanPart) part = {NULL, INFINITY};
    if (!paro_plan_search_part(path, rq, &part, error))
        return NULL;
    return paro_plan_finish(&part);
}
