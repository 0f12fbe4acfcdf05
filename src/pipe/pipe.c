/* SPDX-License-Identifier: MIT */
/* A pipeline-parallel step as a task graph (sched/taskgraph.h).
 *
 * Passes: F(s, m) and B(s, m) for each module s < S and micro-batch m < M. Dependencies:
 * F(s, m) needs F(s-1, m)'s activation; B(s, m) needs its own F(s, m) (the activation it
 * differentiates; for s = S-1 also the loss) and B(s+1, m)'s gradient. An output crossing
 * to another device arrives through a message task (paro_pipe_simulate's: latency + bytes /
 * bandwidth, holding no stream and no link, so messages do not queue behind each other);
 * on the same device it is there at once. Each device runs its program (pipe-order.c) in
 * order on its compute stream: a pass starts when it heads the program, the device is free
 * and its inputs have arrived.
 *
 * Definitions reported: makespan = the last end (the first task starts at 0); ideal = the
 * busiest device's compute time; bubble = makespan / ideal - 1, the share of the ideal
 * spent idle (GPipe's and Megatron's "bubble time fraction", (P-1)/M for uniform stages).
 * In flight: a (module, micro-batch) activation counts from the end of its forward to the
 * end of its backward. Network messages: each of the S-1 module boundaries carries one
 * activation forward and one gradient backward per micro-batch, 2M(S-1) in all; with
 * round-robin placement consecutive modules always sit on different devices when P > 1,
 * so all of them cross the network, and none when P = 1. */
#include "pipe/pipe-private.h"

#include <math.h>

#include "core/engine.h"
#include "core/error.h"

const char *const paro_pipe_schedule_names[] = {"gpipe", "1f1b", "interleaved", "modular", NULL};
const char *const paro_pipe_accumulation_names[] = {"depth-first", "layered", NULL};

gint64 paro_pipe_n_modules(const ParoPipeSpec *spec)
{
    return spec->devices * spec->chunks;
}

void paro_pipe_result_free(ParoPipeResult *result)
{
    if (result == NULL)
        return;
    g_clear_pointer(&result->busy, g_array_unref);
    g_clear_pointer(&result->peak_in_flight, g_array_unref);
    g_clear_pointer(&result->timeline, g_array_unref);
    g_free(result);
}

gboolean paro_pipe_check(const ParoPipeSpec *spec, GError **error)
{
    g_return_val_if_fail(spec != NULL && spec->forward != NULL && spec->backward != NULL, FALSE);
    g_return_val_if_fail(
        spec->schedule <= PARO_PIPE_MODULAR && spec->accumulation <= PARO_PIPE_LAYERED, FALSE);
    const char *name = paro_pipe_schedule_names[spec->schedule];
    if (spec->devices < 1 || spec->chunks < 1 || spec->micro < 1) {
        g_set_error(error, PARO_CONFIG_ERROR, PARO_CONFIG_ERROR_RANGE,
                    "pipeline: devices, modules per device and micro-batches must be at least 1, "
                    "got P = %" G_GINT64_FORMAT ", v = %" G_GINT64_FORMAT ", M = %" G_GINT64_FORMAT,
                    spec->devices, spec->chunks, spec->micro);
        return FALSE;
    }
    if (spec->devices > PARO_PIPE_MAX_TASKS / spec->chunks ||
        2 * spec->devices * spec->chunks > PARO_PIPE_MAX_TASKS / spec->micro) {
        g_set_error(error, PARO_CONFIG_ERROR, PARO_CONFIG_ERROR_RANGE,
                    "pipeline: 2 x S x M tasks exceed %" G_GINT64_FORMAT, PARO_PIPE_MAX_TASKS);
        return FALSE;
    }
    if ((spec->schedule == PARO_PIPE_GPIPE || spec->schedule == PARO_PIPE_1F1B) &&
        spec->chunks != 1) {
        g_set_error(error, PARO_CONFIG_ERROR, PARO_CONFIG_ERROR_CONSTRAINT,
                    "pipeline: %s places one module per device (S = P), got %" G_GINT64_FORMAT
                    " per device; interleaved and modular take several",
                    name, spec->chunks);
        return FALSE;
    }
    if (spec->schedule == PARO_PIPE_INTERLEAVED && spec->micro % spec->devices != 0) {
        g_set_error(error, PARO_CONFIG_ERROR, PARO_CONFIG_ERROR_CONSTRAINT,
                    "pipeline: interleaved needs micro-batches M a multiple of the devices P "
                    "(as Megatron-LM), got M = %" G_GINT64_FORMAT ", P = %" G_GINT64_FORMAT,
                    spec->micro, spec->devices);
        return FALSE;
    }
    if ((spec->schedule == PARO_PIPE_1F1B || spec->schedule == PARO_PIPE_INTERLEAVED) &&
        spec->accumulation == PARO_PIPE_LAYERED) {
        g_set_error(error, PARO_CONFIG_ERROR, PARO_CONFIG_ERROR_CONSTRAINT,
                    "pipeline: %s is depth-first by construction (one forward, one backward); "
                    "layered accumulation goes with gpipe or modular",
                    name);
        return FALSE;
    }
    gint64 S = paro_pipe_n_modules(spec);
    for (gint64 s = 0; s < S; s++)
        if (spec->forward[s] < 0 || spec->backward[s] < 0) {
            g_set_error(error, PARO_CONFIG_ERROR, PARO_CONFIG_ERROR_RANGE,
                        "pipeline: module %" G_GINT64_FORMAT " has a negative time", s);
            return FALSE;
        }
    if (!(spec->p2p_latency >= 0 && spec->p2p_bytes >= 0 && isfinite(spec->p2p_bytes) &&
          spec->p2p_bandwidth_Bps >= 0 && isfinite(spec->p2p_bandwidth_Bps))) {
        g_set_error(error, PARO_CONFIG_ERROR, PARO_CONFIG_ERROR_RANGE,
                    "pipeline: p2p latency, bytes and bandwidth must be finite and >= 0");
        return FALSE;
    }
    return TRUE;
}

ParoTime *paro_pipe_split(ParoTime per_device, gint64 devices, gint64 chunks)
{
    g_return_val_if_fail(per_device >= 0 && devices >= 1 && chunks >= 1, NULL);
    ParoTime *times = g_new(ParoTime, devices * chunks);
    for (gint64 c = 0; c < chunks; c++)
        for (gint64 r = 0; r < devices; r++)
            times[paro_pipe_module_of(devices, r, c)] =
                per_device / chunks + (c < per_device % chunks ? 1 : 0);
    return times;
}

double paro_pipe_bubble_formula(const ParoPipeSpec *s)
{
    double P = (double)s->devices, M = (double)s->micro, v = (double)s->chunks;
    switch (s->schedule) {
    case PARO_PIPE_GPIPE:
    case PARO_PIPE_1F1B:
        return (P - 1) / M;
    case PARO_PIPE_INTERLEAVED:
        return (P - 1) / (v * M);
    case PARO_PIPE_MODULAR:
        if (s->accumulation != PARO_PIPE_LAYERED)
            return NAN;
        return M >= P ? (P - 1) / (v * M) : (v * P + M - 1) / (v * M) - 1;
    }
    return NAN;
}

typedef struct {
    ParoTaskId first, last, message; /* message: PARO_TASK_NONE when the output stays */
} Pass;

/* Where the output of pass @id goes: the pass that consumes it, or -1 (none). */
static gint64 consumer(gint64 S, gint64 M, gint64 id)
{
    gboolean forward = id < S * M;
    gint64 module = (id / M) % S, m = id % M, next = forward ? module + 1 : module - 1;
    if (next < 0 || next >= S)
        return -1;
    return paro_pipe_task_id(S, M, forward ? PARO_PIPE_FORWARD : PARO_PIPE_BACKWARD, next, m);
}

gboolean paro_pipe_build(const ParoPipeSpec *spec, const ParoPipeEmitter *emit,
                         ParoTaskGraph *graph, gint64 *out_messages, GError **error)
{
    if (!paro_pipe_check(spec, error))
        return FALSE;
    g_return_val_if_fail(paro_task_graph_n_devices(graph) >= (guint)spec->devices, FALSE);
    gint64 S = paro_pipe_n_modules(spec), M = spec->micro, P = spec->devices;
    g_autofree Pass *passes = g_new(Pass, 2 * S * M);
    /* at least a task a pass and one a message; three dependencies a pass */
    paro_task_graph_reserve(graph, (guint)(4 * S * M), (guint)(6 * S * M));
    gint64 messages = 0;
    /* Each device's passes in its program's order, each followed by the message that carries
     * its output away, so a device's messages are added in the order it produces them. */
    for (gint64 d = 0; d < P; d++) {
        g_autoptr(GArray) program = paro_pipe_program(spec, d);
        for (guint i = 0; i < program->len; i++) {
            gint64 id = g_array_index(program, gint64, i);
            ParoPipeKind kind = id < S * M ? PARO_PIPE_FORWARD : PARO_PIPE_BACKWARD;
            gint64 module = (id / M) % S, m = id % M;
            Pass *p = &passes[id];
            emit->pass(emit->data, graph, d, kind, module, m, &p->first, &p->last);
            p->message = PARO_TASK_NONE;
            gint64 to = consumer(S, M, id);
            if (to >= 0 && (to / M) % S % P != d) {
                p->message = emit->send(emit->data, graph, d, (to / M) % S % P, kind, module, m);
                paro_task_graph_depend(graph, p->message, p->last);
                messages++;
            }
        }
    }
    for (gint64 id = 0; id < 2 * S * M; id++) {
        gint64 module = (id / M) % S, m = id % M;
        if (id >= S * M) /* its own forward's activation, on the same device */
            paro_task_graph_depend(
                graph, passes[id].first,
                passes[paro_pipe_task_id(S, M, PARO_PIPE_FORWARD, module, m)].last);
        gint64 to = consumer(S, M, id);
        if (to >= 0)
            paro_task_graph_depend(graph, passes[to].first,
                                   passes[id].message != PARO_TASK_NONE ? passes[id].message
                                                                        : passes[id].last);
    }
    if (out_messages)
        *out_messages = messages;
    return TRUE;
}

/* ---- paro_pipe_simulate: one compute task per pass ---- */

typedef struct {
    const ParoPipeSpec *spec;
    ParoTime p2p_time;
} Plain;

static void plain_pass(gpointer data, ParoTaskGraph *graph, gint64 device, ParoPipeKind kind,
                       gint64 module, gint64 micro, ParoTaskId *out_first, ParoTaskId *out_last)
{
    const Plain *p = data;
    gboolean forward = kind == PARO_PIPE_FORWARD;
    ParoTime d = forward ? p->spec->forward[module] : p->spec->backward[module];
    ParoTaskId t = paro_task_graph_add(graph, forward ? "forward" : "backward", PARO_TASK_COMPUTE,
                                       (guint)device, 1, (gint)micro, (gint)module, d);
    /* one activation in flight from the forward's end to the backward's end */
    if (forward)
        paro_task_graph_on_end(graph, t, PARO_MEM_ACTIVATIONS, 1);
    else
        paro_task_graph_on_end(graph, t, PARO_MEM_ACTIVATIONS, -1);
    *out_first = *out_last = t;
}

static ParoTaskId plain_send(gpointer data, ParoTaskGraph *graph, gint64 from, gint64 to,
                             ParoPipeKind kind, gint64 module, gint64 micro)
{
    const Plain *p = data;
    return paro_task_graph_add(graph, "p2p", PARO_TASK_COMM, (guint)from, 0, (gint)micro,
                               (gint)module, p->p2p_time);
}

ParoPipeResult *paro_pipe_simulate(const ParoPipeSpec *spec, GError **error)
{
    if (!paro_pipe_check(spec, error))
        return NULL;
    Plain plain = {spec, spec->p2p_latency};
    if (spec->p2p_bandwidth_Bps > 0)
        plain.p2p_time = paro_time_add(plain.p2p_time,
                                       paro_time_from_s(spec->p2p_bytes / spec->p2p_bandwidth_Bps));
    g_autoptr(ParoTaskGraph) graph = paro_task_graph_new((guint)spec->devices, 0, FALSE);
    ParoPipeEmitter emit = {plain_pass, plain_send, &plain};
    gint64 messages = 0;
    if (!paro_pipe_build(spec, &emit, graph, &messages, error) ||
        !paro_task_graph_run(graph, error))
        return NULL;
    ParoPipeResult *r = g_new0(ParoPipeResult, 1);
    r->makespan = paro_task_graph_makespan(graph);
    r->p2p_time = plain.p2p_time;
    r->p2p_messages = messages;
    r->p2p_bytes = (double)messages * spec->p2p_bytes;
    r->busy = g_array_sized_new(FALSE, TRUE, sizeof(ParoTime), (guint)spec->devices);
    r->peak_in_flight = g_array_sized_new(FALSE, FALSE, sizeof(gint64), (guint)spec->devices);
    g_array_set_size(r->busy, (guint)spec->devices);
    for (gint64 d = 0; d < spec->devices; d++) {
        double peak = paro_mem_ledger_peak(paro_task_graph_ledger(graph, (guint)d), NULL);
        gint64 in_flight = (gint64)llround(peak);
        g_array_append_val(r->peak_in_flight, in_flight);
    }
    guint n = paro_task_graph_n_tasks(graph);
    if (spec->timeline)
        r->timeline = g_array_sized_new(FALSE, FALSE, sizeof(ParoPipeTask), n);
    /* busy from the durations, exactly; the timeline device by device in program order,
     * which is the order each device's passes were added */
    g_autofree GArray **rows = g_new0(GArray *, spec->devices);
    for (ParoTaskId id = 0; id < n; id++) {
        ParoTaskInfo t = paro_task_graph_get(graph, id);
        if (t.kind != PARO_TASK_COMPUTE)
            continue;
        ParoTime *busy = &g_array_index(r->busy, ParoTime, t.device);
        *busy = paro_time_add(*busy, t.duration);
        if (r->timeline == NULL)
            continue;
        if (rows[t.device] == NULL)
            rows[t.device] = g_array_new(FALSE, FALSE, sizeof(ParoPipeTask));
        ParoPipeTask row = {
            t.device, t.layer,
            t.micro,  g_strcmp0(t.name, "forward") == 0 ? PARO_PIPE_FORWARD : PARO_PIPE_BACKWARD,
            t.start,  t.end};
        g_array_append_val(rows[t.device], row);
    }
    for (gint64 d = 0; d < spec->devices; d++)
        if (rows[d] != NULL) {
            g_array_append_vals(r->timeline, rows[d]->data, rows[d]->len);
            g_array_unref(rows[d]);
        }
    for (gint64 d = 0; d < spec->devices; d++)
        r->ideal = MAX(r->ideal, g_array_index(r->busy, ParoTime, d));
    r->bubble = r->ideal > 0 ? (double)r->makespan / (double)r->ideal - 1 : 0;
    return r;
}
