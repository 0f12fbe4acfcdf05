/* SPDX-License-Identifier: MIT */
/* Work estimates of a scenario's simulation (scenario/workload.h).
 *
 * Rates measured with build/src/parosim (debugoptimized) on the 2-core machine of
 * 2026-11-23, LLaMA-7B on 32 A100 (32 layers), all 29 strategies:
 *   step (1D): accumulation 1,000 / 10,000: 1.2 / 17.8 s, 57 / 330 MB peak: about 2 us
 *     and 1.1 KB per layer-step (micro-step x layer: its forward, backward, gathers and
 *     reduce-scatter tasks, their edges and memory actions);
 *   with tensor or pipeline parallelism the same graph (step/step-build.c) takes a
 *     layer-step per stage's layer and micro-batch, twice with its TP collectives;
 *   trace: 1.34 KB (TSV) and 3.2 KB (Chrome JSON) per layer-step of one strategy;
 *   collectives, with the link-level model (collectives.model: flow): coll/budget.h (NCCL's
 *     model costs microseconds and is not counted); the cache simulates about 20 collectives for
 * the 29 strategies (forward and backward gathers, bucket reduce-scatters, syncs), split between
 * the group's, the inter-group and the global scope. The estimates err on the high side, by up to
 * two. */
#include "scenario/workload.h"

#include <string.h>

#include "core/error.h"
#include "core/limits.h"
#include "core/time.h"
#include "scenario/guideline.h"

#define STEP_S_PER_LAYER_STEP 2e-6
#define STEP_BYTES_PER_LAYER_STEP 1200.0
#define TRACE_BYTES_PER_LAYER_STEP 3300.0 /* Chrome JSON; TSV is smaller */
#define COLL_SIMS_PER_STRATEGY 3.0
#define COLL_SIMS_MAX 24.0
#define TREE_SIMS_MAX 2.0

static const char *const site_keys[PARO_SITE_N] = {
    [PARO_SITE_ACCUMULATION] = "training.accumulation",
    [PARO_SITE_LAYERS] = "model.architecture.layers",
    [PARO_SITE_NODES] = "topology.nodes",
    [PARO_SITE_GPUS_PER_NODE] = "topology.node.gpus",
    [PARO_SITE_CHANNELS] = "topology.nccl.channels",
    [PARO_SITE_CHUNKS] = "collectives.chunks",
    [PARO_SITE_PP] = "parallelism.pp",
    [PARO_SITE_VIRTUAL] = "training.pipeline.virtual",
};

/* The node at @path in @root, or the deepest mapping on the way (where a default applies). */
static const ParoNode *find(const ParoNode *root, const char *path)
{
    g_auto(GStrv) keys = g_strsplit(path, ".", -1);
    const ParoNode *at = root;
    for (int i = 0; keys[i]; i++) {
        if (at->kind != PARO_NODE_MAPPING)
            return at;
        const ParoNode *next = paro_node_lookup(at, keys[i]);
        if (next == NULL && strcmp(keys[i], "architecture") == 0)
            next = paro_node_lookup(at, "num_hidden_layers"); /* a HuggingFace config */
        if (next == NULL)
            return at;
        at = next;
        if (at->kind == PARO_NODE_SCALAR)
            return at;
    }
    return at;
}

void paro_workload_record_sites(ParoScenario *s, const ParoNode *root)
{
    for (int i = 0; i < PARO_SITE_N; i++) {
        const char *key = site_keys[i];
        const ParoNode *node = find(root, key);
        /* The NICs give the channels when nccl.channels is not written. */
        if (i == PARO_SITE_CHANNELS && node->kind != PARO_NODE_SCALAR) {
            const ParoNode *nics = find(root, "topology.node.nics.count");
            if (nics->kind == PARO_NODE_SCALAR) {
                node = nics;
                key = "topology.node.nics.count";
            }
        }
        g_free(s->sites[i].file);
        s->sites[i] = (ParoSourceSite){key, g_strdup(node->source), node->line, node->column};
    }
}

/* The topology the collective cache simulates on: the scenario's, or with tp*pp > 1 its
 * data-parallel view (step/step-coll.c): dp/q nodes of q = GPUs per node / tp. */
static ParoTopology dp_view(const ParoScenario *s, gint64 *n, gint64 *m)
{
    ParoTopology t = *s->topology; /* shallow: only counts are read */
    *n = paro_scenario_dp_ranks(s);
    *m = s->group;
    if (s->tp > 1 || s->pp > 1) {
        gint64 q = paro_scenario_dp_per_node(s);
        t.nodes = MAX(1, s->dp / q);
        t.gpus_per_node = q;
    }
    return t;
}

/* Links of the graph paro_graph_new would build, before building it. */
static double graph_links(const ParoTopology *t, gint64 inst_nodes)
{
    double G = (double)t->gpus_per_node;
    double fabric = t->fabric.kind == PARO_FABRIC_NVLINK ? G * G : 2 * G + 1;
    return (double)inst_nodes * (fabric + 2.0 * (double)t->nics.count) + 2.0 * (double)t->nodes;
}

gboolean paro_workload_estimate(const ParoScenario *s, guint n_strategies, ParoWorkload *out,
                                GError **error)
{
    *out = (ParoWorkload){0};
    const ParoModel *model = s->model;
    double A = (double)s->training.accumulation, L = model->has_shape ? (double)model->layers : 1;
    out->tasks = A * L * (s->tp > 1 ? 2.0 : 1.0); /* a TP collective per layer-step */
    out->step_s = out->tasks * STEP_S_PER_LAYER_STEP;
    out->step_bytes = out->tasks * STEP_BYTES_PER_LAYER_STEP;
    out->trace_bytes = out->tasks * TRACE_BYTES_PER_LAYER_STEP;
    if (paro_compress_is_active(&s->compression))
        out->step_s *= 2; /* the step again without compression: the time it saves */

    /* NCCL's model times a collective in closed form: microseconds, nothing to budget. */
    if (s->coll_model == PARO_COLL_MODEL_NCCL)
        return TRUE;
    gint64 n, m;
    ParoTopology t = dp_view(s, &n, &m);
    /* Folded onto a node (coll/cache.c; a partly filled last leaf too), except trees, which
     * have a root. */
    out->explicit_graph = s->algorithm == PARO_ALGO_TREE;
    gint64 inst_nodes = out->explicit_graph ? t.nodes : 1;
    double links = graph_links(&t, inst_nodes);
    if (!paro_limit_check(&paro_limit_links, links) ||
        (out->explicit_graph && (double)t.nodes * (double)t.gpus_per_node > 131072)) {
        g_autofree char *text = paro_format_count(links);
        g_set_error(error, PARO_SIM_ERROR, PARO_SIM_ERROR_INFEASIBLE,
                    "the network graph of %s GPUs would hold %s links: beyond what a simulation "
                    "can hold (%s)",
                    out->explicit_graph ? "every" : "a node's", text, paro_limit_links.why);
        return FALSE;
    }
    /* The global collective runs on the graph of its kind; the scoped ones (a group's, a
     * local rank's) are rings, which fold even when the global one is a tree. */
    g_autoptr(GError) local = NULL;
    g_autoptr(ParoGraph) graph = paro_graph_new(&t, t.nodes, !out->explicit_graph, &local);
    g_autoptr(ParoGraph) folded =
        out->explicit_graph && t.nodes > 1 ? paro_graph_new(&t, t.nodes, TRUE, &local) : NULL;
    if (graph == NULL || (out->explicit_graph && t.nodes > 1 && folded == NULL)) {
        g_propagate_error(error, g_steal_pointer(&local));
        return FALSE;
    }
    ParoCollSpec spec = {
        .op = PARO_COLL_ALLREDUCE,
        .algorithm = s->algorithm == PARO_ALGO_AUTO ? PARO_ALGO_RING : s->algorithm,
        .n = n,
        .m = m,
        .channels = t.nccl.channels ? t.nccl.channels : MAX(1, t.nics.count),
        .chunks = s->chunks,
        .max_steps = 1024,
        .scope = PARO_SCOPE_GLOBAL,
    };
    out->coll = paro_coll_estimate(graph, s->network, &spec);
    double scoped = 0;
    for (int scope = PARO_SCOPE_INTRA; scope <= PARO_SCOPE_INTER; scope++) {
        spec.scope = (ParoScope)scope;
        scoped += paro_coll_estimate(folded ? folded : graph, s->network, &spec).seconds;
    }
    out->coll_sims = MIN(COLL_SIMS_MAX, COLL_SIMS_PER_STRATEGY * (double)n_strategies);
    /* The sims spread over the three scopes. A tree, though, runs only the global
     * AllReduce, of the gradients of the strategies that do not shard them, and they share
     * its sizes (the whole gradient, or its buckets and the last one's remainder): at most
     * two tree simulations (one for the 29 strategies of LLaMA-7B, 2026-11-26); the other
     * global collectives are rings. */
    double global_sims = out->coll_sims / 3.0;
    if (out->explicit_graph)
        global_sims = MIN(global_sims, TREE_SIMS_MAX);
    out->coll_s = global_sims * out->coll.seconds + out->coll_sims / 3.0 * scoped;
    return TRUE;
}

/* The collective input furthest above its usual value (coll/budget.h's factors). */
ParoSite paro_workload_coll_driver(const ParoScenario *s, const ParoWorkload *w)
{
    double gpn = (double)w->coll.tracked / 64, ch = (double)w->coll.channels / 8,
           chunks = (double)w->coll.chunks / 8;
    if (ch >= gpn && ch >= chunks)
        return PARO_SITE_CHANNELS;
    if (chunks >= gpn)
        return PARO_SITE_CHUNKS;
    return w->explicit_graph ? PARO_SITE_NODES : PARO_SITE_GPUS_PER_NODE;
}

/* The step input that drives its tasks: the accumulation or the model's depth (a layer-step
 * of every stage's layers and micro-batches, whatever the pipeline). */
ParoSite paro_workload_step_driver(const ParoScenario *s)
{
    double A = (double)s->training.accumulation;
    double L = s->model->has_shape ? (double)s->model->layers : 1;
    /* relative to usual values: 32 micro-steps, 64 layers */
    return A / 32 >= L / 64 ? PARO_SITE_ACCUMULATION : PARO_SITE_LAYERS;
}

gboolean paro_workload_refuse(GError **error, const ParoScenario *s, ParoSite site,
                              const char *message)
{
    const ParoSourceSite *at = &s->sites[site];
    paro_config_error_set(error, PARO_CONFIG_ERROR_RANGE, at->file ? at->file : s->path,
                          at->file ? at->line : 1, at->file ? at->column : 1, "%s%slower %s",
                          message, g_str_has_suffix(message, " or") ? " " : "; ",
                          at->key ? at->key : "the inputs");
    return FALSE;
}

static gboolean refuse(GError **error, const ParoScenario *s, ParoSite site, const char *format,
                       ...) G_GNUC_PRINTF(4, 5);

static gboolean refuse(GError **error, const ParoScenario *s, ParoSite site, const char *format,
                       ...)
{
    va_list args;
    va_start(args, format);
    g_autofree char *message = g_strdup_vprintf(format, args);
    va_end(args);
    return paro_workload_refuse(error, s, site, message);
}

gboolean paro_workload_check(const ParoScenario *s, guint n_strategies, gboolean trace,
                             gboolean extrapolate, GError **error)
{
    ParoWorkload w;
    if (!paro_workload_estimate(s, n_strategies, &w, error))
        return FALSE;
    /* Without pipeline, an extrapolated step simulates 2 + 3 + 4 micro-batches, whatever A
     * (step/extrapolate.c); pipelines may fall back to the whole step, so A counts. */
    double A = (double)s->training.accumulation;
    if (extrapolate && !trace && s->pp == 1 &&
        s->training.accumulation_order != PARO_PIPE_LAYERED && A > 9) {
        w.tasks *= 9 / A;
        w.step_s *= 9 / A;
        w.step_bytes *= 9 / A;
    }
    double n = (double)MAX(1u, n_strategies), budget = paro_limit_work_budget_s();
    double total = n * w.step_s + w.coll_s;
    const char *unit = s->tp > 1 ? "layer-steps with their TP collectives" : "layer-steps";
    g_autofree char *tasks = paro_format_count(w.tasks);
    if (w.step_bytes > paro_limit_memory.max)
        return refuse(error, s, paro_workload_step_driver(s),
                      "a step of %s %s would need about %.3g GB to simulate, beyond the limit "
                      "of %.3g GB for one simulation",
                      tasks, unit, w.step_bytes / 1e9, paro_limit_memory.max / 1e9);
    if (total > budget) {
        gboolean coll = w.coll_s > n * w.step_s;
        g_autofree char *what = paro_coll_work_describe(&w.coll);
        return refuse(error, s,
                      coll ? paro_workload_coll_driver(s, &w) : paro_workload_step_driver(s),
                      "simulating %.0f strateg%s would take about %.0f s (a step of %s %s: %.2g s "
                      "each; about %.0f collectives of up to %s: %.2g s), beyond the limit of "
                      "%.3g s",
                      n, n == 1 ? "y" : "ies", total, tasks, unit, w.step_s, w.coll_sims, what,
                      w.coll_s, budget);
    }
    if (trace && n * w.trace_bytes > paro_limit_trace_bytes.max)
        return refuse(error, s, paro_workload_step_driver(s),
                      "the trace of %.0f strateg%s would be about %.0f MB (%s %s each), beyond the "
                      "limit of %.0f MB (%s): trace fewer strategies (--strategies), or",
                      n, n == 1 ? "y" : "ies", n * w.trace_bytes / 1e6, tasks, unit,
                      paro_limit_trace_bytes.max / 1e6, paro_limit_trace_bytes.why);
    return TRUE;
}

/* ---- the clock's range ---- */

typedef struct {
    const char *path; /* in the combined tree */
    double ratio;     /* how far the value drives the time beyond its usual one */
} Driver;

gboolean paro_workload_check_clock(const ParoScenario *s, const ParoNode *root, GError **error)
{
    g_autoptr(ParoScenarioDerived) derived = paro_scenario_derive(s);
    g_autoptr(ParoGuideline) g = paro_guideline_evaluate(derived);
    const ParoStrategyResult *worst = NULL;
    for (guint i = 0; i < g->results->len; i++) {
        const ParoStrategyResult *r = &g_array_index(g->results, ParoStrategyResult, i);
        if (worst == NULL || !(r->t_serial <= worst->t_serial))
            worst = r;
    }
    double clock_s = paro_time_to_s(PARO_TIME_MAX);
    if (worst == NULL || worst->t_serial <= clock_s)
        return TRUE;
    const ParoTopology *t = s->topology;
    const ParoTraining *tr = &s->training;
    double params = paro_model_base_params(s->model);
    /* usual values: LLaMA-7B on A100 nodes of 100 Gb/s, 10 micro-steps of 4 x 512 */
    Driver compute[] = {
        {"training.accumulation", (double)tr->accumulation / 10},
        {"training.micro_batch", (double)tr->micro_batch / 4},
        {"training.sequence", (double)tr->sequence / 2048},
        {s->model->params_given > 0 ? "model.parameters" : "model.architecture", params / 7e9},
        {"topology.gpu.peak_flops", 312e12 / t->gpu.peak_flops},
        {"training.efficiency", tr->efficiency > 0 ? 0.5 / tr->efficiency : 0},
        {"topology.gpu.hbm_bandwidth", 2e12 / t->gpu.hbm_Bps},
    };
    Driver comm[] = {
        {"topology.node.nics.bandwidth", 12.5e9 / t->nics.bandwidth_Bps},
        {"topology.node.fabric.bandwidth", 300e9 / t->fabric.bandwidth_Bps},
        {"topology.node.nics.latency", t->nics.latency_s / 1e-5},
        {"topology.node.fabric.latency", t->fabric.latency_s / 1e-5},
        {"topology.network.latency", t->network.latency_s / 1e-5},
        {"topology.nccl.step_overhead", t->nccl.step_overhead_s / 1e-5},
        {"topology.nodes", (double)t->nodes / 4},
        {"training.accumulation", (double)tr->accumulation / 10},
        {s->model->params_given > 0 ? "model.parameters" : "model.architecture", params / 7e9},
    };
    gboolean by_compute = worst->t_compute >= worst->t_comm;
    const Driver *d = by_compute ? compute : comm;
    gsize n = by_compute ? G_N_ELEMENTS(compute) : G_N_ELEMENTS(comm), best = 0;
    for (gsize i = 1; i < n; i++)
        if (d[i].ratio > d[best].ratio)
            best = i;
    const ParoNode *at = find(root, d[best].path);
    paro_node_error(error, at, PARO_CONFIG_ERROR_RANGE,
                    "the step of %s would take %.3g s (compute %.3g s, communication %.3g s in "
                    "closed form), beyond the %.0f days the simulator's picosecond clock holds; "
                    "%s drives it",
                    worst->strategy->name, worst->t_serial, worst->t_compute, worst->t_comm,
                    clock_s / 86400, d[best].path);
    return FALSE;
}
