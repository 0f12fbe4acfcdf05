/* SPDX-License-Identifier: MIT */
/* A pipeline-parallel step on the discrete-event engine.
 *
 * Tasks: F(s, m) and B(s, m) for each module s < S and micro-batch m < M, of the given
 * per-module durations. Dependencies: F(s, m) needs F(s-1, m)'s activation; B(s, m) needs
 * its own F(s, m) (the activation it differentiates; for s = S-1 also the loss) and
 * B(s+1, m)'s gradient. An output crossing to another device arrives p2p_time later
 * (latency + bytes / bandwidth; links are full-duplex and messages do not queue behind each
 * other); on the same device it is there at once. Each device runs its program
 * (pipe-order.c) one task at a time, in order: a task starts when it heads the program,
 * the device is free and its inputs have arrived.
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

typedef struct _Sim Sim;

typedef struct {
    int waiting; /* inputs not yet arrived */
    gboolean done;
    ParoTime start, end;
} Task;

typedef struct {
    GArray *program; /* gint64 task ids */
    guint head;      /* next task of the program */
    gboolean busy;
    gint64 in_flight, peak;
    ParoTime busy_time;
} Device;

/* The engine passes one pointer: the simulation and the task an event is about. */
typedef struct {
    Sim *sim;
    gint64 id;
} Ref;

struct _Sim {
    const ParoPipeSpec *spec;
    ParoEngine *engine;
    gint64 S, M, P;
    Task *tasks;
    Ref *refs;
    Device *devices;
    ParoTime p2p_time;
    gint64 messages;
};

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

static gint64 device_of(const Sim *sim, gint64 id)
{
    return (id / sim->M) % sim->S % sim->P;
}

static ParoTime duration_of(const Sim *sim, gint64 id)
{
    gint64 module = (id / sim->M) % sim->S;
    return id < sim->S * sim->M ? sim->spec->forward[module] : sim->spec->backward[module];
}

static void end_task(ParoEngine *engine, gpointer data);

static void try_start(Sim *sim, gint64 d)
{
    Device *dev = &sim->devices[d];
    if (dev->busy || dev->head >= dev->program->len)
        return;
    gint64 id = g_array_index(dev->program, gint64, dev->head);
    Task *t = &sim->tasks[id];
    if (t->waiting > 0)
        return;
    dev->busy = TRUE;
    dev->head++;
    t->start = paro_engine_now(sim->engine);
    ParoTime d_ps = duration_of(sim, id);
    dev->busy_time = paro_time_add(dev->busy_time, d_ps);
    paro_engine_schedule(sim->engine, paro_time_add(t->start, d_ps), 0, end_task, &sim->refs[id]);
}

/* An input of task @id is there. */
static void release(Sim *sim, gint64 id)
{
    Task *t = &sim->tasks[id];
    g_assert(t->waiting > 0);
    if (--t->waiting == 0)
        try_start(sim, device_of(sim, id));
}

static void arrive(ParoEngine *engine, gpointer data)
{
    (void)engine;
    Ref *ref = data;
    release(ref->sim, ref->id);
}

/* Hands @from's output to @to: at once on the same device, p2p_time later across. */
static void send(Sim *sim, gint64 from, gint64 to)
{
    if (device_of(sim, from) == device_of(sim, to)) {
        release(sim, to);
        return;
    }
    sim->messages++;
    ParoTime at = paro_time_add(paro_engine_now(sim->engine), sim->p2p_time);
    paro_engine_schedule(sim->engine, at, 0, arrive, &sim->refs[to]);
}

static void end_task(ParoEngine *engine, gpointer data)
{
    Ref *ref = data;
    Sim *sim = ref->sim;
    gint64 id = ref->id, S = sim->S, M = sim->M;
    gint64 module = (id / M) % S, m = id % M, d = device_of(sim, id);
    Task *t = &sim->tasks[id];
    Device *dev = &sim->devices[d];
    t->done = TRUE;
    t->end = paro_engine_now(engine);
    dev->busy = FALSE;
    if (id < S * M) {
        dev->in_flight++;
        dev->peak = MAX(dev->peak, dev->in_flight);
        release(sim, paro_pipe_task_id(S, M, PARO_PIPE_BACKWARD, module, m));
        if (module + 1 < S)
            send(sim, id, paro_pipe_task_id(S, M, PARO_PIPE_FORWARD, module + 1, m));
    } else {
        dev->in_flight--;
        if (module > 0)
            send(sim, id, paro_pipe_task_id(S, M, PARO_PIPE_BACKWARD, module - 1, m));
    }
    try_start(sim, d);
}

static void set_deadlock(const Sim *sim, GError **error)
{
    for (gint64 d = 0; d < sim->P; d++) {
        const Device *dev = &sim->devices[d];
        if (dev->head >= dev->program->len)
            continue;
        gint64 id = g_array_index(dev->program, gint64, dev->head);
        g_set_error(error, PARO_SIM_ERROR, PARO_SIM_ERROR_DEADLOCK,
                    "pipeline %s: device %" G_GINT64_FORMAT
                    " waits forever on its %s of module %" G_GINT64_FORMAT
                    ", micro-batch %" G_GINT64_FORMAT,
                    paro_pipe_schedule_names[sim->spec->schedule], d,
                    id < sim->S * sim->M ? "forward" : "backward", (id / sim->M) % sim->S,
                    id % sim->M);
        return;
    }
    g_assert_not_reached();
}

static ParoPipeResult *collect(const Sim *sim)
{
    ParoPipeResult *r = g_new0(ParoPipeResult, 1);
    r->p2p_time = sim->p2p_time;
    r->p2p_messages = sim->messages;
    r->p2p_bytes = (double)sim->messages * sim->spec->p2p_bytes;
    r->busy = g_array_sized_new(FALSE, FALSE, sizeof(ParoTime), (guint)sim->P);
    r->peak_in_flight = g_array_sized_new(FALSE, FALSE, sizeof(gint64), (guint)sim->P);
    if (sim->spec->timeline)
        r->timeline =
            g_array_sized_new(FALSE, FALSE, sizeof(ParoPipeTask), (guint)(2 * sim->S * sim->M));
    for (gint64 d = 0; d < sim->P; d++) {
        const Device *dev = &sim->devices[d];
        g_array_append_val(r->busy, dev->busy_time);
        g_array_append_val(r->peak_in_flight, dev->peak);
        r->ideal = MAX(r->ideal, dev->busy_time);
        for (guint i = 0; i < dev->program->len; i++) {
            gint64 id = g_array_index(dev->program, gint64, i);
            const Task *t = &sim->tasks[id];
            r->makespan = MAX(r->makespan, t->end);
            if (r->timeline) {
                ParoPipeTask row = {
                    d,           (id / sim->M) % sim->S,
                    id % sim->M, id < sim->S * sim->M ? PARO_PIPE_FORWARD : PARO_PIPE_BACKWARD,
                    t->start,    t->end};
                g_array_append_val(r->timeline, row);
            }
        }
    }
    r->bubble = r->ideal > 0 ? (double)r->makespan / (double)r->ideal - 1 : 0;
    return r;
}

ParoPipeResult *paro_pipe_simulate(const ParoPipeSpec *spec, GError **error)
{
    if (!paro_pipe_check(spec, error))
        return NULL;
    g_autoptr(ParoEngine) engine = paro_engine_new();
    Sim sim = {.spec = spec,
               .engine = engine,
               .S = paro_pipe_n_modules(spec),
               .M = spec->micro,
               .P = spec->devices};
    gint64 n = 2 * sim.S * sim.M;
    g_autofree Task *tasks = g_new0(Task, n);
    g_autofree Ref *refs = g_new(Ref, n);
    g_autofree Device *devices = g_new0(Device, sim.P);
    sim.tasks = tasks, sim.refs = refs, sim.devices = devices;
    sim.p2p_time = spec->p2p_latency;
    if (spec->p2p_bandwidth_Bps > 0)
        sim.p2p_time = paro_time_add(sim.p2p_time,
                                     paro_time_from_s(spec->p2p_bytes / spec->p2p_bandwidth_Bps));
    for (gint64 id = 0; id < n; id++) {
        gint64 module = (id / sim.M) % sim.S;
        refs[id] = (Ref){&sim, id};
        if (id < sim.S * sim.M)
            tasks[id].waiting = module > 0 ? 1 : 0;
        else
            tasks[id].waiting = module + 1 < sim.S ? 2 : 1;
    }
    for (gint64 d = 0; d < sim.P; d++)
        devices[d].program = paro_pipe_program(spec, d);
    for (gint64 d = 0; d < sim.P; d++)
        try_start(&sim, d);
    paro_engine_run(engine, PARO_TIME_MAX);
    ParoPipeResult *result = NULL;
    gboolean finished = TRUE;
    for (gint64 d = 0; d < sim.P; d++)
        finished = finished && devices[d].head == devices[d].program->len && !devices[d].busy;
    if (paro_engine_overflowed(engine))
        paro_engine_set_overflow_error(error);
    else if (!finished)
        set_deadlock(&sim, error);
    else
        result = collect(&sim);
    for (gint64 d = 0; d < sim.P; d++)
        g_array_unref(devices[d].program);
    return result;
}
