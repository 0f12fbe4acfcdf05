/* SPDX-License-Identifier: MIT */
/* A task graph executed on the discrete-event engine: the one scheduler every training step
 * and pipeline runs on.
 *
 * Tasks belong to a device (a GPU standing for all that do the same work) and hold some of
 * its streams, FIFO queues in the order tasks were added, as CUDA streams are: a task starts
 * when its dependencies have ended and it heads every queue it holds. A task that holds no
 * stream (a point-to-point message) starts as soon as its dependencies have ended.
 *
 * Shared links. A communication task names the resources it loads (a device's NVLink or NIC
 * port, per direction) and the share of each resource's capacity it takes when it runs alone
 * (its bytes through that port over its duration, at most 1). Tasks running at the same time
 * share a resource by weighted max-min fairness (progressive filling on their speeds, as
 * the flow-level network shares links): while the shares on a resource sum to more than 1,
 * its tasks slow down, and their ends move. A task that never shares ends exactly its
 * duration after its start, so a graph without contention is simulated exactly as its
 * durations add up (durations come from simulating each collective alone on the cluster's
 * links, coll/cache.c: this is the second, coarser level of the same max-min model).
 *
 * Memory: each device has a ledger (mem/memory.h) that tasks change when they start and end.
 * Time is integer picoseconds and every tie is broken by insertion order, so runs are
 * bit-reproducible. */
#pragma once

#include <glib.h>

#include "core/time.h"
#include "mem/memory.h"

G_BEGIN_DECLS

typedef guint ParoTaskId;
#define PARO_TASK_NONE G_MAXUINT

/* Streams per device (bits of a task's stream mask). */
#define PARO_SCHED_STREAMS 6

typedef enum {
    PARO_TASK_COMPUTE, /* kernels: counted as compute */
    PARO_TASK_COMM,    /* collectives and messages: counted as communication */
} ParoTaskKind;

typedef struct _ParoTaskGraph ParoTaskGraph;

/**
 * paro_task_graph_new:
 * @devices: devices (>= 1), each with PARO_SCHED_STREAMS streams and a memory ledger
 * @resources: shared resources (links), numbered from 0; any device's task may use any
 * @keep_memory_timeline: ledgers keep every change (for traces)
 */
ParoTaskGraph *paro_task_graph_new(guint devices, guint resources, gboolean keep_memory_timeline);
void paro_task_graph_free(ParoTaskGraph *graph);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ParoTaskGraph, paro_task_graph_free)

/** paro_task_graph_reserve: room for @tasks more tasks and @edges more dependencies (a
 * builder that knows its counts saves the arrays' regrowth). */
void paro_task_graph_reserve(ParoTaskGraph *graph, guint tasks, guint edges);

/**
 * paro_task_graph_add:
 * @name: static text for traces ("forward", "allgather", ...)
 * @streams: bit mask of @device's streams the task holds (0: none)
 * @micro, @layer: labels for traces, -1 when not per micro-batch or layer
 * Returns: the task, numbered from 0 in the order of addition.
 */
ParoTaskId paro_task_graph_add(ParoTaskGraph *graph, const char *name, ParoTaskKind kind,
                               guint device, guint streams, gint micro, gint layer,
                               ParoTime duration);

/** paro_task_graph_depend: @later starts after @first ends; no effect when @first is
 * PARO_TASK_NONE. */
void paro_task_graph_depend(ParoTaskGraph *graph, ParoTaskId later, ParoTaskId first);

/** paro_task_graph_use: @task takes @share (0 < share <= 1; larger is taken as 1) of
 * @resource's capacity while it runs at full speed. At most 4 uses per task. */
void paro_task_graph_use(ParoTaskGraph *graph, ParoTaskId task, guint resource, double share);

/**
 * paro_task_graph_take_sms:
 * Communication task @task holds @share (0 < share <= 1) of its device's SMs while it runs:
 * NCCL's kernels run one block per channel, each on an SM the device's compute kernels then
 * lack. While collectives holding a sum S of shares run, the device's compute tasks run at
 * 1 - S of their speed (at least 0.1); the collectives themselves are not slowed.
 */
void paro_task_graph_take_sms(ParoTaskGraph *graph, ParoTaskId task, double share);

/** paro_task_graph_on_start, _on_end: @task changes its device's ledger by @delta bytes of
 * @category when it starts (ends). At most 3 of each per task. */
void paro_task_graph_on_start(ParoTaskGraph *graph, ParoTaskId task, ParoMemCategory category,
                              double delta);
void paro_task_graph_on_end(ParoTaskGraph *graph, ParoTaskId task, ParoMemCategory category,
                            double delta);

/** paro_task_graph_ledger: (transfer none) @device's ledger, for what is there from time 0. */
ParoMemLedger *paro_task_graph_ledger(ParoTaskGraph *graph, guint device);

/**
 * paro_task_graph_run:
 * Runs every task. Errors: PARO_SIM_ERROR_DEADLOCK (tasks that never become ready: a
 * dependency cycle or a stream order against the dependencies), PARO_SIM_ERROR_INFEASIBLE
 * (time beyond the picosecond range).
 */
gboolean paro_task_graph_run(ParoTaskGraph *graph, GError **error);

/** paro_task_graph_makespan: the last end (0 before a run). */
ParoTime paro_task_graph_makespan(const ParoTaskGraph *graph);

guint paro_task_graph_n_tasks(const ParoTaskGraph *graph);
guint paro_task_graph_n_devices(const ParoTaskGraph *graph);

typedef struct {
    const char *name;
    ParoTaskKind kind;
    guint device, streams;
    gint micro, layer;
    ParoTime duration;   /* alone */
    ParoTime start, end; /* after a run */
} ParoTaskInfo;

/** paro_task_graph_get: @task's record. */
ParoTaskInfo paro_task_graph_get(const ParoTaskGraph *graph, ParoTaskId task);

/** paro_task_graph_kind_busy: the time @device's tasks of @kind ran, start to end, summed
 * (overlapping tasks count each); integer, so every period of a periodic step adds the
 * same to it. */
ParoTime paro_task_graph_kind_busy(const ParoTaskGraph *graph, guint device, ParoTaskKind kind);

/** paro_task_graph_stream_busy: the time @device's stream @stream_bit (one bit) was held. */
ParoTime paro_task_graph_stream_busy(const ParoTaskGraph *graph, guint device, guint stream_bit);

/** paro_task_graph_n_shared: tasks whose speed changed at least once (for tests). */
guint paro_task_graph_n_shared(const ParoTaskGraph *graph);

G_END_DECLS
