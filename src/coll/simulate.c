/* SPDX-License-Identifier: MIT */
/* Collectives as ring phases on the flow-level network.
 *
 * Ring (NCCL-style; nccl-tests PERFORMANCE.md): over k members, AllGather and
 * ReduceScatter take k-1 steps and AllReduce 2(k-1); in each step every member sends
 * S/(k*C) bytes per channel to its successor. Each (member, channel) is a connection as
 * NCCL runs it: its sends leave one after the other (a send's bytes go once the one
 * before has left), and each arrives a hop latency after its last byte left; up to
 * NCCL_STEPS (8) sends may be on their way, not yet arrived (NCCL's slots, issue #14:
 * with one, every step paid the slowest hop of the ring). A member sends step s+1 once
 * it has received step s. On a uniform ring of bandwidth B and per-hop latency alpha this
 * gives exactly
 *   T = steps * (alpha + S/(k*B))  =  2(k-1)*alpha + 2(k-1)/k * S/B  for AllReduce,
 * and on a ring whose hops differ the latencies average along the ring instead of the
 * slowest one setting every step.
 * Channels: C rings over the same members; inside each node the members of a ring are
 * rotated by the channel number, so the C rings leave a node through different GPUs and
 * hence different NIC rails. Broadcast: a chain from member 0, the message cut into
 * `chunks` pieces forwarded as they arrive: T = (k-1 + P-1) * S/(P*B) + (k-1) * alpha, each
 * hop's latency paid once, as the pieces follow one another (P <= 8 slots).
 *
 * Hierarchical and ho-ring (PaRO-CC): stages of ring phases over the group scopes,
 *   AllGather      inter AllGather(S/m), then intra AllGather(S)
 *   ReduceScatter  intra ReduceScatter(S), then inter ReduceScatter(S/m)
 *   AllReduce      intra ReduceScatter(S), inter AllReduce(S/m), intra AllGather(S)
 * `hierarchical` runs the stages one after the other on the whole message; `ho-ring`
 * cuts the message into P chunks and pipelines them: stage i of chunk c starts when stage
 * i-1 of chunk c and stage i of chunk c-1 are done, so the intra and inter stages of
 * different chunks overlap on their different links (time tends to the slower stage's).
 *
 * Scale: ring steps beyond max_steps are merged into macro-steps that carry q steps'
 * bytes and q latencies, exact for rings whose steps are identical (which symmetric ones
 * are), so the cost of a phase is bounded whatever k. In the aggregated mode only the
 * members in the representative unit (topo/graph.h) send; a transfer leaving it is
 * delivered to the member of the unit in the same place, which by symmetry is in the same
 * state.
 *
 * All-to-all is no ring: coll/alltoall.c starts every GPU's flows to its peers at once. */
#include "coll/simulate.h"

#include <math.h>

#include "coll/simulate-private.h"
#include "core/error.h"

/* ---- ring geometry of a scope ---- */

static gint64 ring_start(const Sim *s, const Task *t, gint64 rank)
{
    switch (g_array_index(s->stages, Stage, t->stage).scope) {
    case PARO_SCOPE_GLOBAL:
        return 0;
    case PARO_SCOPE_INTRA:
        return rank / s->spec->m * s->spec->m;
    case PARO_SCOPE_INTER:
        return rank % s->spec->m;
    }
    g_assert_not_reached();
}

static gint64 position(const Task *t, gint64 start, gint64 channel, gint64 rank)
{
    gint64 base = (rank - start) / t->stride;
    gint64 a = base / t->seg, b_rot = base % t->seg;
    gint64 b = ((b_rot - channel) % t->seg + t->seg) % t->seg;
    return a * t->seg + b;
}

static gint64 member_at(const Task *t, gint64 start, gint64 channel, gint64 pos)
{
    gint64 a = pos / t->seg, b = pos % t->seg;
    return start + (a * t->seg + (b + channel) % t->seg) * t->stride;
}

gint64 paro_ring_fold(const Sim *s, gint64 rank)
{
    return rank % paro_graph_instantiated_gpus(s->graph);
}

/* ---- sends ---- */

static gint64 total_sends(const Sim *s, const Task *t, gint64 pos)
{
    if (t->k <= 1)
        return 0;
    if (t->op == PARO_COLL_BROADCAST)
        return pos == t->k - 1 ? 0 : s->pieces;
    return t->macro_steps;
}

static gint64 total_recvs(const Sim *s, const Task *t, gint64 pos)
{
    if (t->k <= 1)
        return 0;
    if (t->op == PARO_COLL_BROADCAST)
        return pos == 0 ? 0 : s->pieces;
    return t->macro_steps;
}

/* Real ring steps carried by macro-step @i. */
static gint64 steps_in(const Task *t, gint64 i)
{
    gint64 q = t->ring_len_steps / t->macro_steps, r = t->ring_len_steps % t->macro_steps;
    return q + (i < r ? 1 : 0);
}

static void task_done(Sim *s, Task *t);
static void try_send(Sim *s, Task *t, gint64 member, gint64 channel);

static void check_finished(Sim *s, Task *t, gint64 member, gint64 channel)
{
    gint64 i = member * s->channels + channel;
    gint64 pos = t->pos[i];
    if (t->sends[i] == total_sends(s, t, pos) && t->recvs[i] == total_recvs(s, t, pos) &&
        t->on_the_way[i] == 0) {
        t->sends[i]++; /* past the total: counted once */
        t->recvs[i]++;
        if (--t->pending == 0)
            task_done(s, t);
    }
}

static void arrived(ParoEngine *engine, gpointer data)
{
    Send *send = data;
    Task *t = send->task;
    Sim *s = t->sim;
    gint64 i = send->member * s->channels + send->channel;
    t->on_the_way[i]--;
    t->sends[i]++;
    gint64 receiver = paro_ring_fold(s, send->dst);
    t->recvs[receiver * s->channels + send->channel]++;
    gint64 member = send->member, channel = send->channel;
    s->received += send->bytes;
    check_finished(s, t, receiver, channel);
    if (receiver != member)
        check_finished(s, t, member, channel);
    try_send(s, t, receiver, channel);
    try_send(s, t, member, channel);
}

/* The last byte has left: the connection takes the next send; this one arrives a hop
 * latency later. */
static void left(ParoNetwork *net, gpointer data)
{
    Send *send = data;
    Task *t = send->task;
    Sim *s = t->sim;
    t->leaving[send->member * s->channels + send->channel] = FALSE;
    ParoTime now = paro_engine_now(s->engine);
    paro_engine_schedule(s->engine, paro_time_add(now, send->latency), 0, arrived, send);
    try_send(s, t, send->member, send->channel);
}

const Route *paro_ring_route(Sim *s, Task *t, gint64 member, gint64 channel, gint64 i)
{
    Route *r = &t->route[i];
    if (r->n_links != G_MAXUINT)
        return r;
    gint64 start = ring_start(s, t, member);
    r->dst = member_at(t, start, channel, (t->pos[i] + 1) % t->k);
    r->first = s->links->len;
    r->latency = paro_time_add(paro_graph_route(s->graph, member, r->dst, s->links, s->weights),
                               s->spec->step_overhead);
    r->n_links = s->links->len - r->first;
    return r;
}

void paro_ring_send(const Sim *s, const Task *t, const Route *route, gint64 step, double *bytes,
                    ParoTime *latency)
{
    double q = t->op == PARO_COLL_BROADCAST ? 1 : (double)steps_in(t, step);
    *bytes = t->op == PARO_COLL_BROADCAST  ? t->bytes / (double)(s->channels * s->pieces)
             : t->op == PARO_COLL_SENDRECV ? t->bytes / (double)s->channels
                                           : q * t->bytes / (double)(t->k * s->channels);
    /* q merged steps pay q latencies; saturated, not wrapped, past the clock's range (a
     * latency of 107 days or more was dropped from the step: issue #16 W2) */
    double q_latency = q * (double)route->latency;
    *latency = q_latency >= (double)PARO_TIME_MAX ? PARO_TIME_MAX : (ParoTime)q_latency;
}

static void try_send(Sim *s, Task *t, gint64 member, gint64 channel)
{
    if (t->done)
        return;
    gint64 i = member * s->channels + channel;
    gint64 pos = t->pos[i];
    gint64 step = t->begun[i];
    if (t->leaving[i] || t->on_the_way[i] >= SLOTS || step >= total_sends(s, t, pos))
        return;
    gboolean ready = t->op == PARO_COLL_BROADCAST ? (pos == 0 || t->recvs[i] >= step + 1)
                                                  : (step == 0 || t->recvs[i] >= step);
    if (!ready)
        return;
    const Route *route = paro_ring_route(s, t, member, channel, i);
    double bytes;
    ParoTime latency;
    paro_ring_send(s, t, route, step, &bytes, &latency);
    Send *send = &t->in_flight[i * SLOTS + step % SLOTS];
    *send = (Send){t, member, channel, route->dst, bytes, latency};
    s->sent += bytes;
    t->begun[i]++;
    t->leaving[i] = TRUE;
    t->on_the_way[i]++;
    const guint *links = route->n_links ? &g_array_index(s->links, guint, route->first) : NULL;
    const double *weights =
        route->n_links ? &g_array_index(s->weights, double, route->first) : NULL;
    paro_network_start(s->net, links, weights, route->n_links, bytes, 0, left, send);
}

/* ---- tasks and the stage pipeline ---- */

static Task *task_at(Sim *s, gint64 chunk, int stage)
{
    return &s->tasks[chunk * (gint64)s->stages->len + stage];
}

static void start_task(Sim *s, Task *t);

static void finish_later(ParoEngine *engine, gpointer data)
{
    Task *t = data;
    task_done(t->sim, t);
}

static void start_task(Sim *s, Task *t)
{
    t->started = TRUE;
    if (t->pending == 0) {
        /* Nothing to move (one member): done now, from the queue to bound recursion. */
        paro_engine_schedule(s->engine, paro_engine_now(s->engine), 0, finish_later, t);
        return;
    }
    ParoTime end;
    if (paro_ring_recur_task(s, t, paro_engine_now(s->engine), &end)) {
        s->recurred++;
        paro_engine_schedule(s->engine, end, 0, finish_later, t);
        return;
    }
    /* The sends' state, only for a phase the events time (at 131,072 GPUs the slots of
     * ho-ring's 24 phases alone would take 1.2 GB). */
    gint64 pairs = s->tracked * s->channels;
    t->sends = g_new0(gint64, pairs);
    t->recvs = g_new0(gint64, pairs);
    t->begun = g_new0(gint64, pairs);
    t->leaving = g_new0(guint8, pairs);
    t->on_the_way = g_new0(guint8, pairs);
    t->in_flight = g_new0(Send, pairs * SLOTS);
    for (gint64 member = 0; member < s->tracked; member++)
        for (gint64 c = 0; c < s->channels; c++)
            try_send(s, t, member, c);
}

static void maybe_start(Sim *s, gint64 chunk, int stage)
{
    if (chunk >= s->n_chunks || stage >= (int)s->stages->len)
        return;
    Task *t = task_at(s, chunk, stage);
    if (t->started)
        return;
    if (stage > 0 && !task_at(s, chunk, stage - 1)->done)
        return;
    if (chunk > 0 && !task_at(s, chunk - 1, stage)->done)
        return;
    start_task(s, t);
}

static void task_done(Sim *s, Task *t)
{
    if (t->done)
        return;
    t->done = TRUE;
    s->tasks_left--;
    maybe_start(s, t->chunk, t->stage + 1);
    maybe_start(s, t->chunk + 1, t->stage);
}

static void init_task(Sim *s, Task *t, int stage, gint64 chunk)
{
    const Stage *st = &g_array_index(s->stages, Stage, stage);
    const ParoCollSpec *spec = s->spec;
    t->sim = s;
    t->stage = stage;
    t->chunk = chunk;
    t->op = st->op;
    t->bytes = st->bytes / (double)s->n_chunks;
    switch (st->scope) {
    case PARO_SCOPE_GLOBAL:
        t->k = spec->n;
        t->stride = 1;
        t->seg = MIN(spec->n, s->gpn);
        break;
    case PARO_SCOPE_INTRA:
        t->k = spec->m;
        t->stride = 1;
        t->seg = MIN(spec->m, s->gpn);
        break;
    case PARO_SCOPE_INTER:
        t->k = spec->n / spec->m;
        t->stride = spec->m;
        t->seg = spec->m < s->gpn ? MIN(s->gpn / spec->m, t->k) : 1;
        break;
    }
    t->ring_len_steps = t->op == PARO_COLL_ALLREDUCE  ? 2 * (t->k - 1)
                        : t->op == PARO_COLL_SENDRECV ? 1
                                                      : t->k - 1;
    t->macro_steps = MAX(1, MIN(t->ring_len_steps, spec->max_steps));
    gint64 pairs = s->tracked * s->channels;
    t->pos = g_new(gint64, pairs);
    t->route = g_new(Route, pairs);
    for (gint64 member = 0; member < s->tracked; member++)
        for (gint64 c = 0; c < s->channels; c++) {
            gint64 i = member * s->channels + c;
            t->pos[i] = position(t, ring_start(s, t, member), c, member);
            t->route[i].n_links = G_MAXUINT;
        }
    t->pending = t->k <= 1 ? 0 : pairs;
}

static void build_stages(Sim *s)
{
    const ParoCollSpec *spec = s->spec;
    double S = spec->size_bytes, Sm = S / (double)spec->m;
    Stage add;
#define STAGE(sc, o, b) (add = (Stage){sc, o, b}, g_array_append_val(s->stages, add))
    if (spec->scope != PARO_SCOPE_GLOBAL) {
        STAGE(spec->scope, spec->op, S); /* S is the array of one ring */
        return;
    }
    if (spec->algorithm == PARO_ALGO_RING) {
        STAGE(PARO_SCOPE_GLOBAL, spec->op, S);
        return;
    }
    switch (spec->op) {
    case PARO_COLL_ALLGATHER:
        STAGE(PARO_SCOPE_INTER, PARO_COLL_ALLGATHER, Sm);
        STAGE(PARO_SCOPE_INTRA, PARO_COLL_ALLGATHER, S);
        break;
    case PARO_COLL_REDUCESCATTER:
        STAGE(PARO_SCOPE_INTRA, PARO_COLL_REDUCESCATTER, S);
        STAGE(PARO_SCOPE_INTER, PARO_COLL_REDUCESCATTER, Sm);
        break;
    case PARO_COLL_ALLREDUCE:
        STAGE(PARO_SCOPE_INTRA, PARO_COLL_REDUCESCATTER, S);
        STAGE(PARO_SCOPE_INTER, PARO_COLL_ALLREDUCE, Sm);
        STAGE(PARO_SCOPE_INTRA, PARO_COLL_ALLGATHER, S);
        break;
    case PARO_COLL_BROADCAST:
    case PARO_COLL_SENDRECV:
        g_assert_not_reached(); /* refused by check_spec */
    case PARO_COLL_ALLTOALL:
        g_assert_not_reached(); /* no ring: coll/alltoall.c */
    }
#undef STAGE
}

static gboolean refuse_spec(const ParoCollSpec *spec, const char *why, GError **error)
{
    g_set_error(error, PARO_SIM_ERROR, PARO_SIM_ERROR_INFEASIBLE,
                "%s %s over %" G_GINT64_FORMAT " GPUs (m = %" G_GINT64_FORMAT "): %s",
                paro_algorithm_names[spec->algorithm], paro_coll_kind_names[spec->op], spec->n,
                spec->m, why);
    return FALSE;
}

gboolean paro_coll_spec_check_shape(const ParoCollSpec *spec, gint64 gpn, GError **error)
{
    /* NCCL's own algorithms (ring, tree, NVLS) take any GPUs; PaRO's two-level ones and the
     * scoped phases need groups aligned with nodes. */
    gboolean one_level = spec->scope == PARO_SCOPE_GLOBAL &&
                         spec->algorithm != PARO_ALGO_HIERARCHICAL &&
                         spec->algorithm != PARO_ALGO_HO_RING;
    const char *why = NULL;
    if (spec->n < 1 || spec->m < 1 || spec->n % spec->m != 0)
        why = "the GPUs cannot be divided into groups of m";
    else if (spec->n > gpn && spec->n % gpn != 0)
        why = "GPUs beyond one node must fill whole nodes";
    else if (!one_level && !(gpn % spec->m == 0 || spec->m % gpn == 0))
        why = "the group size must divide, or be a multiple of, the GPUs of a node";
    else if (!(spec->size_bytes >= 0) || !isfinite(spec->size_bytes))
        why = "the size must be finite and not negative";
    return why == NULL || refuse_spec(spec, why, error);
}

static gboolean check_spec(const ParoGraph *g, const ParoCollSpec *spec, GError **error)
{
    gint64 gpn = paro_graph_gpus_per_node(g);
    if (!paro_coll_spec_check_shape(spec, gpn, error))
        return FALSE;
    const char *why = NULL;
    if ((spec->op == PARO_COLL_BROADCAST || spec->op == PARO_COLL_SENDRECV) &&
        spec->algorithm != PARO_ALGO_RING)
        why = "broadcast and sendrecv are simulated with the ring (chain) algorithm only";
    else if (spec->algorithm == PARO_ALGO_TREE && spec->scope == PARO_SCOPE_GLOBAL &&
             spec->op != PARO_COLL_ALLREDUCE)
        why = "NCCL's trees do AllReduce only; use ring";
    else if (spec->algorithm == PARO_ALGO_TREE && spec->scope == PARO_SCOPE_GLOBAL &&
             paro_graph_is_aggregated(g) && spec->n > gpn)
        why = "a tree has a root and leaves, so it is not symmetric: use --explicit";
    else if (spec->op == PARO_COLL_BROADCAST && paro_graph_is_aggregated(g) && spec->n > gpn)
        why = "a broadcast has a root, so it is not symmetric: use --explicit";
    else if (spec->channels < 1 || spec->chunks < 1 || spec->max_steps < 1)
        why = "channels, chunks and max_steps must be positive";
    return why == NULL || refuse_spec(spec, why, error);
}

void paro_coll_spec_init(ParoCollSpec *spec, const ParoTopology *t, ParoCollKind op,
                         ParoAlgorithm algorithm, gint64 n, gint64 m, double size_bytes)
{
    *spec = (ParoCollSpec){
        .op = op,
        .algorithm = algorithm,
        .n = n,
        .m = m,
        .size_bytes = size_bytes,
        .channels = t->nccl.channels ? t->nccl.channels : MAX(1, t->nics.count),
        .chunks = t->nccl.chunks,
        .max_steps = PARO_COLL_MAX_STEPS,
        .step_overhead = paro_time_from_s(t->nccl.step_overhead_s),
        .scope = PARO_SCOPE_GLOBAL,
    };
}

gboolean paro_coll_spec_has_root(const ParoCollSpec *spec, gint64 gpus_per_node)
{
    gboolean rooted = (spec->algorithm == PARO_ALGO_TREE && spec->scope == PARO_SCOPE_GLOBAL) ||
                      spec->op == PARO_COLL_BROADCAST;
    return rooted && spec->n > gpus_per_node;
}

ParoAlgorithm paro_coll_algorithm_for(ParoCollKind op, ParoAlgorithm algorithm)
{
    return algorithm == PARO_ALGO_TREE && op != PARO_COLL_ALLREDUCE ? PARO_ALGO_RING : algorithm;
}

ParoNetwork *paro_coll_network_new(const ParoGraph *graph, ParoEngine *engine,
                                   ParoNetFidelity fidelity, const ParoCollSpec *spec)
{
    ParoNetwork *net =
        paro_network_new(engine, fidelity, paro_graph_capacities(graph), paro_graph_n_links(graph));
    if (spec->events_only)
        return net; /* every link in the solve, to check that leaving some out changes nothing */
    g_autoptr(GArray) free_links = g_array_new(FALSE, FALSE, sizeof(guint));
    paro_graph_never_limiting(graph, free_links);
    for (guint i = 0; i < free_links->len; i++)
        paro_network_set_never_limiting(net, g_array_index(free_links, guint, i));
    return net;
}

void paro_coll_result_fill(ParoCollResult *out, const ParoGraph *graph, const ParoNetwork *net,
                           double sent, double received)
{
    ParoEngine *engine = paro_network_get_engine(net);
    *out = (ParoCollResult){0};
    out->time = paro_engine_now(engine);
    for (guint l = 0; l < paro_graph_n_links(graph); l++) {
        double bytes = paro_network_carried(net, l) * paro_graph_link_instances(graph, l);
        if (paro_graph_link_class(graph, l) == PARO_LINK_INTRA)
            out->intra_bytes += bytes;
        else
            out->inter_bytes += bytes;
    }
    out->sent_bytes = sent;
    out->received_bytes = received;
    out->max_utilisation = paro_network_max_utilisation(net);
    out->events = paro_engine_n_fired(engine);
    out->solves = paro_network_n_solves(net);
}

/* The phases of @spec on @graph as tasks, none started; @engine and @net may be NULL for a
 * look at its routes only. */
static void sim_init(Sim *s, const ParoGraph *graph, const ParoCollSpec *spec, ParoEngine *engine,
                     ParoNetwork *net, ParoNetFidelity fidelity)
{
    *s = (Sim){0};
    s->graph = graph;
    s->engine = engine;
    s->net = net;
    s->fidelity = fidelity;
    s->spec = spec;
    s->gpn = paro_graph_gpus_per_node(graph);
    s->tracked = MIN(spec->n, paro_graph_instantiated_gpus(graph));
    s->channels = spec->channels;
    s->pieces = spec->chunks;
    s->stages = g_array_new(FALSE, FALSE, sizeof(Stage));
    s->links = g_array_new(FALSE, FALSE, sizeof(guint));
    s->weights = g_array_new(FALSE, FALSE, sizeof(double));
    build_stages(s);
    s->n_chunks =
        spec->algorithm == PARO_ALGO_HO_RING && spec->scope == PARO_SCOPE_GLOBAL ? spec->chunks : 1;
    s->n_tasks = s->n_chunks * (gint64)s->stages->len;
    s->tasks = g_new0(Task, s->n_tasks);
    s->tasks_left = s->n_tasks;
    for (gint64 c = 0; c < s->n_chunks; c++)
        for (guint st = 0; st < s->stages->len; st++)
            init_task(s, task_at(s, c, (int)st), (int)st, c);
}

/* Frees what sim_init made (an engine that stops on time overflow leaves sends in flight:
 * they go with their tasks). */
static void sim_clear(Sim *s)
{
    for (gint64 i = 0; i < s->n_tasks; i++) {
        g_free(s->tasks[i].sends);
        g_free(s->tasks[i].recvs);
        g_free(s->tasks[i].begun);
        g_free(s->tasks[i].leaving);
        g_free(s->tasks[i].on_the_way);
        g_free(s->tasks[i].in_flight);
        g_free(s->tasks[i].pos);
        g_free(s->tasks[i].route);
    }
    g_free(s->tasks);
    paro_ring_recurrence_clear(s);
    g_array_unref(s->stages);
    g_array_unref(s->links);
    g_array_unref(s->weights);
}

/* @given with NCCL's choice as rings (its cost model's choice is coll/nccl.c's), or NULL
 * and why when the flow model cannot run it. */
static const ParoCollSpec *flow_spec(const ParoGraph *graph, const ParoCollSpec *given,
                                     ParoCollSpec *ring, GError **error)
{
    *ring = *given;
    /* all-to-all has no algorithm to choose: its sends go at once (coll/alltoall.c) */
    if (given->algorithm == PARO_ALGO_AUTO || given->op == PARO_COLL_ALLTOALL)
        ring->algorithm = PARO_ALGO_RING;
    if (ring->algorithm == PARO_ALGO_NVLS || ring->algorithm == PARO_ALGO_NVLS_TREE) {
        /* NVLS reduces inside the switch, which a flow on links does not describe */
        g_set_error(error, PARO_SIM_ERROR, PARO_SIM_ERROR_INFEASIBLE,
                    "%s has no flow model (the NVSwitch reduces in the switch): use the nccl "
                    "model",
                    paro_algorithm_names[ring->algorithm]);
        return NULL;
    }
    return check_spec(graph, ring, error) ? ring : NULL;
}

double paro_coll_recurred_share(const ParoGraph *graph, ParoNetFidelity fidelity,
                                const ParoCollSpec *given)
{
    ParoCollSpec ring;
    const ParoCollSpec *spec = flow_spec(graph, given, &ring, NULL);
    if (spec == NULL || (spec->algorithm == PARO_ALGO_TREE && spec->scope == PARO_SCOPE_GLOBAL) ||
        spec->op == PARO_COLL_ALLTOALL)
        return 0;
    Sim s;
    sim_init(&s, graph, spec, NULL, NULL, fidelity);
    paro_ring_recurrence_prepare(&s, TRUE);
    double share = paro_ring_recurred_share(&s);
    sim_clear(&s);
    return share;
}

gboolean paro_coll_simulate(const ParoGraph *graph, ParoNetFidelity fidelity,
                            const ParoCollSpec *given, ParoCollResult *out, GError **error)
{
    ParoCollSpec ring;
    const ParoCollSpec *spec = flow_spec(graph, given, &ring, error);
    if (spec == NULL)
        return FALSE;
    if (spec->algorithm == PARO_ALGO_TREE && spec->scope == PARO_SCOPE_GLOBAL)
        return paro_coll_simulate_tree(graph, fidelity, spec, out, error);
    if (spec->op == PARO_COLL_ALLTOALL)
        return paro_coll_simulate_alltoall(graph, fidelity, spec, out, error);
    g_autoptr(ParoEngine) engine = paro_engine_new();
    g_autoptr(ParoNetwork) net = paro_coll_network_new(graph, engine, fidelity, spec);
    Sim s;
    sim_init(&s, graph, spec, engine, net, fidelity);
    /* Phases whose groups of connections move in lockstep, alone on their links, are timed
     * by their recurrence as they start, else by events. */
    paro_ring_recurrence_prepare(&s, FALSE);
    if (spec->size_bytes > 0)
        maybe_start(&s, 0, 0);
    else
        s.tasks_left = 0;
    paro_engine_run(engine, PARO_TIME_MAX);

    gboolean ok = s.tasks_left == 0 && !paro_engine_overflowed(engine);
    if (paro_engine_overflowed(engine))
        paro_engine_set_overflow_error(error);
    else if (!ok)
        g_set_error(error, PARO_SIM_ERROR, PARO_SIM_ERROR_DEADLOCK,
                    "%s %s: %" G_GINT64_FORMAT " ring phases never finished",
                    paro_algorithm_names[spec->algorithm], paro_coll_kind_names[spec->op],
                    s.tasks_left);
    if (ok) {
        /* The tracked members stand for all: one node's worth in the aggregated mode. */
        double scale = paro_graph_is_aggregated(graph) ? (double)spec->n / (double)s.tracked : 1;
        paro_coll_result_fill(out, graph, net, s.sent * scale, s.received * scale);
        out->recurred_phases = s.recurred;
    }
    sim_clear(&s);
    return ok;
}
