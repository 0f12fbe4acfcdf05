/* SPDX-License-Identifier: MIT */
/* The task graph of a global step and its scheduler.
 *
 * Program order (what a framework issues), for each micro-step:
 *   forward   for each layer l: [gather l] -> forward l
 *   backward  for each layer l, last first: [gather l] -> backward l -> [reduce-scatter of
 *             the bucket, once it holds `bucket` bytes or at the first layer]
 * then the gradient sync, the optimizer and the parameter sync. The collectives are those
 * of paro_strategy_collectives (strategy.c), per-micro-step ones cut per layer in
 * proportion to the layers' parameters, so the step moves exactly the guideline's bytes.
 *
 * Streams: compute; intra (collectives inside a group); inter (between groups); a
 * global collective holds both communication streams. Each stream runs its tasks in
 * program order (as CUDA streams do); a task starts when its dependencies are done and
 * it heads every stream it needs. Dependencies: forward l after gather l; gather l (prefetch
 * depth d) after forward l-d-1; backward l after its gather, which follows backward l+d+1;
 * a bucket's reduce-scatter after the backward that fills it; a backward that opens a new
 * bucket after the reduce-scatter two buckets back (bounded buffers); syncs after the last
 * micro-step's reductions. With overlap off, every task runs on one stream: the step is
 * then the sum of all tasks, which the tests compare with the closed form.
 *
 * Memory (the ledger, mem/memory.h): model states and the fixed overhead from the start;
 * a gathered layer from its gather's start to the end of the compute using it;
 * activations kept from a layer's forward to its backward (plus the recomputed part while
 * its backward runs); a layer's full gradients from its backward to its bucket's
 * reduce-scatter. */
#include "step/step-private.h"

#include <math.h>
#include <string.h>

#include "core/engine.h"
#include "core/error.h"

#define MAX_ACTIONS 3
/* Gradient buckets that may wait for their reduce-scatter at once (DeepSpeed and FSDP keep
 * a small fixed number of reduce buffers; without a bound a slow network would let
 * gradients of whole micro-steps pile up in memory). */
#define BUCKETS_IN_FLIGHT 2

typedef struct {
    ParoMemCategory category;
    double delta;
} MemAction;

typedef struct {
    const char *name;
    guint streams;
    gint micro, layer;
    ParoTime duration;
    int waiting;
    guint first_edge; /* index into Sched.edges of the first follower; G_MAXUINT: none */
    MemAction on_start[MAX_ACTIONS], on_end[MAX_ACTIONS];
    int n_start, n_end;
    gboolean started, done;
    ParoTime start, end;
} Task;

typedef struct {
    guint to;   /* the follower */
    guint next; /* next edge of the same task, G_MAXUINT at the end */
} Edge;

typedef struct {
    ParoEngine *engine;
    ParoMemLedger *ledger;
    GArray *tasks;     /* Task */
    GArray *edges;     /* Edge: all dependencies, one array for the whole step */
    GArray *queues[3]; /* guint task indices per stream, program order */
    guint heads[3];
    guint left;
    double compute_s, comm_s, intra_s, inter_s;
    struct _Ending *endings; /* one per task, made once the graph is built */
} Sched;

static int stream_index(guint bit)
{
    return bit == PARO_STREAM_COMPUTE ? 0 : bit == PARO_STREAM_INTRA ? 1 : 2;
}

static guint add_task(Sched *s, const char *name, guint streams, gint micro, gint layer,
                      ParoTime duration)
{
    Task t = {name,  streams, micro, layer, duration, 0, G_MAXUINT, {{0}},
              {{0}}, 0,       0,     FALSE, FALSE,    0, 0};
    g_array_append_val(s->tasks, t);
    guint index = s->tasks->len - 1;
    for (guint bit = 1; bit <= 4; bit <<= 1)
        if (streams & bit)
            g_array_append_val(s->queues[stream_index(bit)], index);
    return index;
}

static Task *task(Sched *s, guint i)
{
    return &g_array_index(s->tasks, Task, i);
}

static void depend(Sched *s, guint later, guint first)
{
    if (first == G_MAXUINT)
        return;
    Edge e = {later, task(s, first)->first_edge};
    g_array_append_val(s->edges, e);
    task(s, first)->first_edge = s->edges->len - 1;
    task(s, later)->waiting++;
}

static void on_start(Sched *s, guint t, ParoMemCategory c, double delta)
{
    Task *x = task(s, t);
    g_assert(x->n_start < MAX_ACTIONS);
    x->on_start[x->n_start++] = (MemAction){c, delta};
}

static void on_end(Sched *s, guint t, ParoMemCategory c, double delta)
{
    Task *x = task(s, t);
    g_assert(x->n_end < MAX_ACTIONS);
    x->on_end[x->n_end++] = (MemAction){c, delta};
}

static void try_start(Sched *s);

/* The engine passes one pointer: a task's ending names its scheduler and index. */
typedef struct _Ending {
    Sched *sched;
    guint index;
} Ending;

static void end_task(ParoEngine *engine, gpointer data)
{
    Ending *e = data;
    Sched *s = e->sched;
    Task *t = task(s, e->index);
    ParoTime now = paro_engine_now(engine);
    t->done = TRUE;
    t->end = now;
    for (int i = 0; i < t->n_end; i++)
        paro_mem_ledger_change(s->ledger, now, t->on_end[i].category, t->on_end[i].delta);
    for (guint bit = 1; bit <= 4; bit <<= 1)
        if (t->streams & bit)
            s->heads[stream_index(bit)]++;
    for (guint k = t->first_edge; k != G_MAXUINT; k = g_array_index(s->edges, Edge, k).next)
        task(s, g_array_index(s->edges, Edge, k).to)->waiting--;
    s->left--;
    try_start(s);
}

static gboolean heads_all(Sched *s, guint index)
{
    Task *t = task(s, index);
    for (guint bit = 1; bit <= 4; bit <<= 1) {
        if (!(t->streams & bit))
            continue;
        int q = stream_index(bit);
        if (s->heads[q] >= s->queues[q]->len ||
            g_array_index(s->queues[q], guint, s->heads[q]) != index)
            return FALSE;
    }
    return TRUE;
}

static void try_start(Sched *s)
{
    ParoTime now = paro_engine_now(s->engine);
    for (int q = 0; q < 3; q++) {
        if (s->heads[q] >= s->queues[q]->len)
            continue;
        guint index = g_array_index(s->queues[q], guint, s->heads[q]);
        Task *t = task(s, index);
        if (t->started || t->waiting > 0 || !heads_all(s, index))
            continue;
        t->started = TRUE;
        t->start = now;
        for (int i = 0; i < t->n_start; i++)
            paro_mem_ledger_change(s->ledger, now, t->on_start[i].category, t->on_start[i].delta);
        double d = paro_time_to_s(t->duration);
        if (t->streams & PARO_STREAM_COMPUTE)
            s->compute_s += d;
        else
            s->comm_s += d;
        if (t->streams & PARO_STREAM_INTRA)
            s->intra_s += d;
        if (t->streams & PARO_STREAM_INTER)
            s->inter_s += d;
        Ending *e = &s->endings[index];
        *e = (Ending){s, index};
        paro_engine_schedule(s->engine, paro_time_add(now, t->duration), 0, end_task, e);
    }
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

/* The per-micro-step collective of @phase, if the strategy has one. */
static const ParoCollCall *find_phase(GArray *calls, ParoPhase phase)
{
    for (guint i = 0; i < calls->len; i++) {
        const ParoCollCall *c = &g_array_index(calls, ParoCollCall, i);
        if (c->phase == phase)
            return c;
    }
    return NULL;
}

typedef struct {
    const ParoScenarioDerived *d;
    const ParoCompression *compression; /* the scenario's, or none */
    ParoCollCache *cache;
    Sched *s;
    gboolean overlap;
    GError **error;
    gboolean failed;
    double compress_s, bytes_saved;
} Builder;

/* A collective task: the network time of its bytes on the wire (compressed when the
 * scenario compresses this tensor kind and the piece reaches the threshold) combined with
 * the compression kernels' time, pipelined or in series, on the collective's stream
 * (compress/compress.c). */
static guint add_coll(Builder *b, const char *name, const ParoCollCall *call, double size,
                      gint micro, gint layer)
{
    const ParoScenario *sc = b->d->scenario;
    const ParoStateSizes *z = &b->d->sizes;
    ParoCompressCost cc =
        paro_compress_cost(&b->compression->kinds[paro_compress_tensor_of(call->phase)], call->op,
                           paro_compress_ranks(call->scope, z->n, z->m), size);
    ParoTime d = 0;
    if (!b->failed &&
        !paro_step_dp_coll_time(sc, b->cache, call->op, call->scope, cc.wire_bytes, &d, b->error))
        b->failed = TRUE;
    if (cc.applied && cc.codec_s > 0) /* else d stays the simulated picoseconds, exactly */
        d = paro_time_from_s(paro_compress_time_s(&cc, paro_time_to_s(d)));
    b->compress_s += cc.codec_s;
    b->bytes_saved += paro_compress_saved_bytes(&b->d->comm, call->op, call->scope, size, &cc);
    return add_task(b->s, name, streams_of(call->scope, b->overlap), micro, layer, d);
}

static gboolean build(Builder *b, const ParoStrategy *st)
{
    const ParoScenarioDerived *dv = b->d;
    const ParoScenario *sc = dv->scenario;
    GArray *layers = dv->layers;
    Sched *s = b->s;
    const ParoStateSizes *z = &dv->sizes;
    gint L = (gint)layers->len, A = (gint)sc->training.accumulation;
    gint d = (gint)sc->training.prefetch;
    g_autoptr(GArray) calls = g_array_new(FALSE, FALSE, sizeof(ParoCollCall));
    paro_strategy_collectives(st, z, calls);
    const ParoCollCall *gather_f = find_phase(calls, PARO_PHASE_FORWARD);
    const ParoCollCall *gather_b = find_phase(calls, PARO_PHASE_BACKWARD);
    const ParoCollCall *reduce = find_phase(calls, PARO_PHASE_GRADIENT);
    g_autofree guint *fwd = g_new(guint, L), *bwd = g_new(guint, L);
    g_autoptr(GArray) last_reductions = g_array_new(FALSE, FALSE, sizeof(guint));
    g_autoptr(GArray) all_reductions = g_array_new(FALSE, FALSE, sizeof(guint));
    for (gint mu = 0; mu < A; mu++) {
        for (gint l = 0; l < L; l++) {
            const ParoLayerCost *lc = &g_array_index(layers, ParoLayerCost, l);
            guint gather = G_MAXUINT;
            double gathered = z->param_bytes * z->params * lc->weight_share;
            if (gather_f) {
                gather = add_coll(b, "allgather", gather_f, gather_f->size_bytes * lc->weight_share,
                                  mu, l);
                on_start(s, gather, PARO_MEM_GATHERED, gathered);
                if (l - d - 1 >= 0)
                    depend(s, gather, fwd[l - d - 1]);
            }
            fwd[l] =
                add_task(s, "forward", PARO_STREAM_COMPUTE, mu, l, paro_time_from_s(lc->forward_s));
            depend(s, fwd[l], gather);
            on_end(s, fwd[l], PARO_MEM_ACTIVATIONS, lc->act_kept);
            if (gather_f)
                on_end(s, fwd[l], PARO_MEM_GATHERED, -gathered);
        }
        double bucket = 0;
        if (mu == A - 1)
            g_array_set_size(last_reductions, 0);
        for (gint l = L - 1; l >= 0; l--) {
            const ParoLayerCost *lc = &g_array_index(layers, ParoLayerCost, l);
            guint gather = G_MAXUINT;
            double gathered = z->param_bytes * z->params * lc->weight_share;
            if (gather_b) {
                gather = add_coll(b, "allgather", gather_b, gather_b->size_bytes * lc->weight_share,
                                  mu, l);
                on_start(s, gather, PARO_MEM_GATHERED, gathered);
                depend(s, gather, l + d + 1 <= L - 1 ? bwd[l + d + 1] : fwd[L - 1]);
            }
            bwd[l] = add_task(s, "backward", PARO_STREAM_COMPUTE, mu, l,
                              paro_time_from_s(lc->backward_s));
            depend(s, bwd[l], gather);
            /* Back-pressure: a backward that opens a new bucket needs one of the
             * BUCKETS_IN_FLIGHT bucket buffers, freed when an older reduce-scatter ends. */
            if (reduce && bucket == 0 && all_reductions->len >= BUCKETS_IN_FLIGHT)
                depend(
                    s, bwd[l],
                    g_array_index(all_reductions, guint, all_reductions->len - BUCKETS_IN_FLIGHT));
            on_start(s, bwd[l], PARO_MEM_ACTIVATIONS, lc->act_transient);
            on_end(s, bwd[l], PARO_MEM_ACTIVATIONS, -(lc->act_kept + lc->act_transient));
            if (gather_b)
                on_end(s, bwd[l], PARO_MEM_GATHERED, -gathered);
            if (reduce) {
                double grads = reduce->size_bytes * lc->weight_share;
                on_end(s, bwd[l], PARO_MEM_BUCKETS, grads);
                bucket += grads;
                if (bucket >= sc->training.bucket_bytes || l == 0) {
                    guint rs = add_coll(b, "reducescatter", reduce, bucket, mu, l);
                    depend(s, rs, bwd[l]);
                    on_end(s, rs, PARO_MEM_BUCKETS, -bucket);
                    if (mu == A - 1)
                        g_array_append_val(last_reductions, rs);
                    g_array_append_val(all_reductions, rs);
                    bucket = 0;
                }
            }
        }
    }
    /* Once per step: gradient sync, optimizer, parameter sync, in sequence. */
    guint previous = bwd[0];
    for (guint i = 0; i < calls->len; i++) {
        const ParoCollCall *c = &g_array_index(calls, ParoCollCall, i);
        if (c->phase != PARO_PHASE_SYNC_GRAD)
            continue;
        guint t = add_coll(b, paro_coll_kind_names[c->op], c, c->size_bytes, -1, -1);
        depend(s, t, previous);
        for (guint r = 0; r < last_reductions->len; r++)
            depend(s, t, g_array_index(last_reductions, guint, r));
        previous = t;
    }
    double owned = z->trainable / paro_strategy_divisor(st->os, z->n, z->m);
    double optimizer_s = paro_scenario_optimizer_s(dv, owned);
    guint opt =
        add_task(s, "optimizer", PARO_STREAM_COMPUTE, -1, -1, paro_time_from_s(optimizer_s));
    depend(s, opt, previous);
    for (guint r = 0; r < last_reductions->len; r++)
        depend(s, opt, g_array_index(last_reductions, guint, r));
    previous = opt;
    for (guint i = 0; i < calls->len; i++) {
        const ParoCollCall *c = &g_array_index(calls, ParoCollCall, i);
        if (c->phase != PARO_PHASE_SYNC_PARAM)
            continue;
        guint t = add_coll(b, paro_coll_kind_names[c->op], c, c->size_bytes, -1, -1);
        depend(s, t, previous);
        previous = t;
    }
    return !b->failed;
}

int paro_step_result_compare(gconstpointer pa, gconstpointer pb)
{
    const ParoStepResult *a = pa, *b = pb;
    if (a->fits != b->fits)
        return a->fits ? -1 : 1;
    if (a->step != b->step)
        return a->step < b->step ? -1 : 1;
    if (a->peak_bytes != b->peak_bytes)
        return a->peak_bytes < b->peak_bytes ? -1 : 1;
    return strcmp(a->strategy->name, b->strategy->name);
}

void paro_step_result_clear(ParoStepResult *r)
{
    g_clear_pointer(&r->trace, g_array_unref);
    g_clear_pointer(&r->memory, g_array_unref);
}

gboolean paro_step_simulate(const ParoScenarioDerived *d, const ParoStrategy *st,
                            ParoCollCache *cache, const ParoStepOptions *o, ParoStepResult *out,
                            GError **error)
{
    const ParoScenario *sc = d->scenario;
    if (paro_scenario_is_3d(sc))
        return paro_step3d_simulate(d, st, cache, o, out, error);
    const ParoStateSizes *z = &d->sizes;
    const ParoComputeSetup *setup = &d->compute;
    gboolean keep_trace = o->keep_trace;
    ParoCompression none;
    paro_compression_preset(&none, PARO_COMPRESS_NONE);
    g_autoptr(ParoEngine) engine = paro_engine_new();
    g_autoptr(ParoMemLedger) ledger = paro_mem_ledger_new(keep_trace);
    Sched s = {engine,
               ledger,
               g_array_new(FALSE, FALSE, sizeof(Task)),
               g_array_new(FALSE, FALSE, sizeof(Edge)),
               {NULL},
               {0},
               0,
               0,
               0,
               0,
               0,
               NULL};
    for (int q = 0; q < 3; q++)
        s.queues[q] = g_array_new(FALSE, FALSE, sizeof(guint));
    Builder b = {
        d, o->compress ? &sc->compression : &none, cache, &s, sc->training.overlap, error, FALSE, 0,
        0};
    gboolean ok = build(&b, st);

    ParoStateMemory states = paro_strategy_memory(st, z);
    paro_mem_ledger_change(ledger, 0, PARO_MEM_PARAMS, states.params);
    paro_mem_ledger_change(ledger, 0, PARO_MEM_GRADS, states.grads);
    paro_mem_ledger_change(ledger, 0, PARO_MEM_OPTIMIZER, states.optimizer);
    paro_mem_ledger_change(ledger, 0, PARO_MEM_COMM_BUFFERS, paro_scenario_comm_buffers(sc, st));
    paro_mem_ledger_change(ledger, 0, PARO_MEM_WORKSPACE, PARO_CUBLAS_WORKSPACE_BYTES);
    paro_mem_ledger_change(ledger, 0, PARO_MEM_OVERHEAD, sc->training.memory_overhead);
    if (ok) {
        s.left = s.tasks->len;
        s.endings = g_new(Ending, s.tasks->len);
        try_start(&s);
        paro_engine_run(engine, PARO_TIME_MAX);
        if (paro_engine_overflowed(engine)) {
            paro_engine_set_overflow_error(error);
            ok = FALSE;
        } else if (s.left != 0) {
            g_set_error(error, PARO_SIM_ERROR, PARO_SIM_ERROR_DEADLOCK,
                        "%s: %u tasks of the step never ran", st->name, s.left);
            ok = FALSE;
        }
    }
    if (ok) {
        *out = (ParoStepResult){0};
        out->strategy = st;
        out->step = paro_engine_now(engine);
        double step_s = paro_time_to_s(out->step);
        out->compute_s = s.compute_s;
        out->comm_s = s.comm_s;
        out->intra_busy_s = s.intra_s;
        out->inter_busy_s = s.inter_s;
        out->exposed_comm_s = step_s - s.compute_s;
        out->compress_s = b.compress_s;
        out->bytes_saved = b.bytes_saved;
        double samples =
            (double)z->n * (double)sc->training.micro_batch * (double)sc->training.accumulation;
        out->samples_per_s = samples / step_s;
        out->tokens_per_s = out->samples_per_s * (double)sc->training.sequence;
        double model_flops =
            (double)sc->training.accumulation *
            paro_model_step_flops(sc->model, sc->training.micro_batch, sc->training.sequence,
                                  setup->trainable_share, PARO_RECOMPUTE_NONE);
        out->tflops_per_gpu = model_flops / step_s / 1e12;
        out->mfu = model_flops / step_s / sc->topology->gpu.peak_flops;
        out->peak_bytes = paro_mem_ledger_peak(ledger, &out->at_peak);
        out->fits = out->peak_bytes <= sc->topology->gpu.memory_bytes;
        if (keep_trace) {
            out->trace = g_array_sized_new(FALSE, FALSE, sizeof(ParoTraceTask), s.tasks->len);
            for (guint i = 0; i < s.tasks->len; i++) {
                Task *t = task(&s, i);
                ParoTraceTask tt = {t->name, t->streams, t->micro, t->layer, t->start, t->end};
                g_array_append_val(out->trace, tt);
            }
            const GArray *tl = paro_mem_ledger_timeline(ledger);
            out->memory = g_array_sized_new(FALSE, FALSE, sizeof(ParoMemSample), tl->len);
            g_array_append_vals(out->memory, tl->data, tl->len);
        }
    }
    g_free(s.endings);
    g_array_unref(s.edges);
    g_array_unref(s.tasks);
    for (int q = 0; q < 3; q++)
        g_array_unref(s.queues[q]);
    return ok;
}
