/* SPDX-License-Identifier: MIT */
/* Pipeline-parallel schedules on the discrete-event engine: P devices, a model cut into S
 * modules (module s runs on device s % P), M micro-batches. Each device runs a fixed
 * program (the order a framework issues its forwards and backwards: GPipe, 1F1B,
 * Megatron's interleaved 1F1B, or the modular/breadth-first loop of layered gradient
 * accumulation) one task at a time; a task starts when it heads its device's program,
 * the device is free, and its inputs have arrived (activations and gradients cross
 * device boundaries as point-to-point messages of latency + bytes / bandwidth).
 * The schedule is built into the task graph of sched/ (paro_pipe_build), the one every
 * training step runs on: the training step (step/) emits each pass as its layers'
 * compute and collectives; paro_pipe_simulate emits one compute task of the module's time
 * per pass, which is `parosim pipeline`: the step's graph without collectives. */
#pragma once

#include <glib.h>

#include "core/time.h"
#include "sched/taskgraph.h"

G_BEGIN_DECLS

typedef enum {
    PARO_PIPE_GPIPE,       /* all forwards, then all backwards; S = P */
    PARO_PIPE_1F1B,        /* PipeDream-Flush: P-1-rank warm-up forwards, 1F1B, cool-down; S = P */
    PARO_PIPE_INTERLEAVED, /* Megatron's interleaved 1F1B, v chunks per device; S = v*P */
    PARO_PIPE_MODULAR,     /* round-robin modules, all forwards then all backwards; S = L*P */
} ParoPipeSchedule;

/* "gpipe", "1f1b", "interleaved", "modular", NULL */
extern const char *const paro_pipe_schedule_names[];

typedef enum {
    PARO_PIPE_DEPTH_FIRST, /* a device's tasks ordered micro-batch by micro-batch */
    PARO_PIPE_LAYERED,     /* all micro-batches through a module before the next module */
} ParoPipeAccumulation;

/* The most tasks (2 S M) one simulation takes: beyond it the arrays alone take gigabytes. */
#define PARO_PIPE_MAX_TASKS ((gint64)1 << 26)

/* "depth-first", "layered", NULL */
extern const char *const paro_pipe_accumulation_names[];

typedef enum { PARO_PIPE_FORWARD, PARO_PIPE_BACKWARD } ParoPipeKind;

typedef struct {
    ParoPipeSchedule schedule;
    ParoPipeAccumulation accumulation; /* layered only with gpipe and modular */
    gint64 devices;                    /* P >= 1 */
    gint64 chunks;            /* modules per device: v (interleaved), L (modular); 1 otherwise */
    gint64 micro;             /* M >= 1; a multiple of P for interleaved (as Megatron-LM) */
    const ParoTime *forward;  /* S = P * chunks forward times, one per module (ps) */
    const ParoTime *backward; /* S backward times (ps) */
    ParoTime p2p_latency;     /* per message (ps) */
    double p2p_bytes;         /* one micro-batch's activation (or its gradient) at a boundary */
    double p2p_bandwidth_Bps; /* 0: the bytes add no time */
    gboolean timeline;        /* keep every task's start and end */
    gboolean torch_warmup;    /* interleaved as PyTorch's ScheduleInterleaved1F1B warms up: no
                               * all-forwards warm-up when M = P (Megatron-LM's rule) */
} ParoPipeSpec;

typedef struct {
    gint64 device, module, micro;
    ParoPipeKind kind;
    ParoTime start, end;
} ParoPipeTask;

typedef struct {
    ParoTime makespan;      /* first task start (0) to last task end */
    ParoTime ideal;         /* the busiest device's compute time */
    double bubble;          /* makespan / ideal - 1 (0 when ideal is 0) */
    ParoTime p2p_time;      /* one message: latency + bytes / bandwidth */
    gint64 p2p_messages;    /* activations and gradients sent between different devices */
    double p2p_bytes;       /* p2p_messages * spec->p2p_bytes */
    GArray *busy;           /* ParoTime per device: its compute time */
    GArray *peak_in_flight; /* gint64 per device: most (module, micro-batch) activations held,
                             * forward done and backward not yet */
    GArray *timeline;       /* ParoPipeTask, device by device in program order; NULL unless
                             * spec->timeline */
} ParoPipeResult;

void paro_pipe_result_free(ParoPipeResult *result);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ParoPipeResult, paro_pipe_result_free)

/** paro_pipe_n_modules: S = devices * chunks. */
gint64 paro_pipe_n_modules(const ParoPipeSpec *spec);

/**
 * paro_pipe_check:
 * Fails with PARO_CONFIG_ERROR_RANGE (a count below 1, a negative time, a run too large
 * to simulate) or PARO_CONFIG_ERROR_CONSTRAINT (gpipe or 1f1b with more than one module
 * per device; interleaved with M not a multiple of P; layered accumulation with 1f1b or
 * interleaved, which are depth-first by construction). Messages carry no location.
 */
gboolean paro_pipe_check(const ParoPipeSpec *spec, GError **error);

/**
 * paro_pipe_simulate:
 * Runs @spec's schedule on the engine.
 * Returns: (transfer full) (nullable): the result, or NULL with the error of
 * paro_pipe_check, PARO_SIM_ERROR_DEADLOCK (a program waits on work that never comes) or
 * PARO_SIM_ERROR_INFEASIBLE (time past the picosecond range).
 */
ParoPipeResult *paro_pipe_simulate(const ParoPipeSpec *spec, GError **error);

/**
 * paro_pipe_bubble_formula:
 * The textbook bubble of @spec's schedule for equal modules and no p2p time, as a share of
 * the ideal: (P-1)/M for gpipe and 1f1b, (P-1)/(vM) for interleaved and for layered modular
 * with M >= P, (vP + M - 1)/(vM) - 1 for layered modular with M < P (lga.md); NAN for
 * depth-first modular, which has none.
 */
double paro_pipe_bubble_formula(const ParoPipeSpec *spec);

/* What paro_pipe_build asks its caller to add for each pass and message. */
typedef struct {
    /* Adds the tasks of @kind's pass of @module for micro-batch @micro on @device, in the
     * device's program order; returns the task that waits for the pass's input and the task
     * whose end is its output (the same task for a pass of one task). */
    void (*pass)(gpointer data, ParoTaskGraph *graph, gint64 device, ParoPipeKind kind,
                 gint64 module, gint64 micro, ParoTaskId *out_first, ParoTaskId *out_last);
    /* Adds the message that carries the output of @kind's pass of @module from device @from
     * to device @to; returns it. */
    ParoTaskId (*send)(gpointer data, ParoTaskGraph *graph, gint64 from, gint64 to,
                       ParoPipeKind kind, gint64 module, gint64 micro);
    gpointer data;
} ParoPipeEmitter;

/**
 * paro_pipe_build:
 * Checks @spec (paro_pipe_check), then adds to @graph (of at least spec->devices devices)
 * every device's passes in its program's order (pipe-order.c) through @emit, each followed
 * by the message carrying its output to another device (so a device's messages come in the
 * order it produces them), and the dependencies between them: F(s, m) after F(s-1, m)'s activation,
 * B(s, m) after its own F(s, m) and B(s+1, m)'s gradient; an output crosses to another device
 * through a message from emit->send, to the same device at once.
 * @out_messages: (out) (optional): the messages added
 */
gboolean paro_pipe_build(const ParoPipeSpec *spec, const ParoPipeEmitter *emit,
                         ParoTaskGraph *graph, gint64 *out_messages, GError **error);

/**
 * paro_pipe_split:
 * @per_device: one device's share of the model (1/P of it) for one micro-batch
 * Returns: (transfer full): S = devices * chunks module times, each device's @chunks
 * modules summing to @per_device exactly (the picoseconds that do not divide go to the
 * first modules of each device).
 */
ParoTime *paro_pipe_split(ParoTime per_device, gint64 devices, gint64 chunks);

G_END_DECLS
