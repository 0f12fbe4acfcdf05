/* SPDX-License-Identifier: MIT */
/* The ring phases' state, shared by simulate.c (the phases as events on the flow network)
 * and recurrence.c (a phase whose connections share no link, timed without events). Not
 * for other modules. */
#pragma once

#include "coll/simulate.h"

G_BEGIN_DECLS

typedef struct {
    ParoScope scope;
    ParoCollKind op;
    double bytes; /* the array of one ring of this stage, whole message */
} Stage;

typedef struct _Sim Sim;
typedef struct _Task Task;
typedef struct _RingPlan RingPlan; /* recurrence.c: a stage's connections, groups and rates */

/* A member's hop to its successor: links and weights in the Sim's route store. */
typedef struct {
    gint64 dst;
    ParoTime latency;
    guint first, n_links; /* n_links G_MAXUINT: not found yet */
} Route;

/* Sends a connection may have on their way (NCCL_STEPS in NCCL's src/include/device.h). */
#define SLOTS 8

typedef struct {
    Task *task;
    gint64 member, channel, dst;
    double bytes;
    ParoTime latency; /* from the last byte leaving to its arrival */
} Send;

struct _Task {
    Sim *sim;
    int stage, chunk;
    ParoCollKind op;
    gint64 k, seg, stride, ring_len_steps, macro_steps;
    double bytes;          /* this task's array per ring */
    gint64 *sends, *recvs; /* per (member, channel): sends arrived, receives arrived */
    gint64 *begun;         /* sends begun */
    guint8 *leaving;       /* a send's bytes are leaving (the connection is busy) */
    guint8 *on_the_way;    /* sends begun and not arrived, at most SLOTS */
    Send *in_flight;       /* SLOTS records per (member, channel), by send number: freed with the
                            * task even when a run stops early */
    gint64 *pos;           /* per (member, channel): its place in its ring */
    Route *route;          /* per (member, channel): the hop to its successor, found at its
                            * first send (the same for every send of the ring) */
    gint64 pending;        /* (member, channel) pairs not finished */
    gboolean started, done;
};

struct _Sim {
    const ParoGraph *graph;
    ParoEngine *engine;
    ParoNetwork *net;
    ParoNetFidelity fidelity; /* the network's, or the one the estimate asks about */
    const ParoCollSpec *spec;
    gint64 gpn, tracked, channels, pieces;
    GArray *stages; /* Stage */
    gint64 n_chunks;
    Task *tasks; /* n_chunks x stages */
    gint64 n_tasks;
    gint64 tasks_left;
    GArray *links, *weights; /* every route found, one after the other */
    double sent, received;   /* payload of the tracked members */
    RingPlan **plans;        /* per stage: its phases' recurrence, NULL: events time them */
    guint64 recurred;        /* phases timed by their recurrence */
};

/* paro_ring_route: the hop from (member, channel) @i to its successor, found once */
const Route *paro_ring_route(Sim *s, Task *t, gint64 member, gint64 channel, gint64 i);

/* paro_ring_send: the payload and the arrival latency of send @step of a connection on
 * @route, one computation for both timings */
void paro_ring_send(const Sim *s, const Task *t, const Route *route, gint64 step, double *bytes,
                    ParoTime *latency);

/* paro_ring_fold: the tracked member that stands for @rank (itself on an explicit graph) */
gint64 paro_ring_fold(const Sim *s, gint64 rank);

/* paro_ring_recurrence_prepare (recurrence.c): the plan of each stage whose phases the
 * recurrence may time: its connections share links only in groups that fill in one round,
 * and no other stage whose phases may run beside its own (ho-ring's chunks) uses its links;
 * where @proven, only groups shown beforehand to move in lockstep (else timing checks it).
 * paro_ring_recurrence_clear frees them. */
void paro_ring_recurrence_prepare(Sim *s, gboolean proven);
void paro_ring_recurrence_clear(Sim *s);

/* paro_ring_recur_task: times phase @t from @start without events (its end in @end, its
 * bytes on the network's links, its payload in the Sim's) when its stage has a plan and it
 * stays in lockstep, its sends in order and its times in range; FALSE (nothing changed):
 * the events time it. */
gboolean paro_ring_recur_task(Sim *s, Task *t, ParoTime start, ParoTime *end);

/* paro_ring_recurred_share: the share of @s's sends in phases whose stage has a plan */
double paro_ring_recurred_share(const Sim *s);

G_END_DECLS
