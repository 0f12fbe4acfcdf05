/* SPDX-License-Identifier: MIT */
/* The discrete-event engine: an integer-picosecond clock, a binary-heap event queue ordered
 * by (time, priority descending, insertion sequence), batches of events that share an
 * instant, cancellation by id, and continuous
 * models (the network) advanced between events, SimGrid-style: the engine takes
 * t = min(next event, each model's next_event), advances every model to t (which may
 * fire completions), then fires the events due at t. All state lives in the engine
 * object, so runs are independent and bit-reproducible. */
#pragma once

#include <glib.h>

#include "core/time.h"

G_BEGIN_DECLS

typedef struct _ParoEngine ParoEngine;
typedef guint64 ParoEventId;

typedef void (*ParoEventFunc)(ParoEngine *engine, gpointer user_data);

/* A continuous model advanced by the engine. */
typedef struct {
    /* Earliest time at which the model has something to fire; PARO_TIME_MAX if none. */
    ParoTime (*next_event)(gpointer model, ParoTime now);
    /* Progress from @from to @to and fire what completes at @to (the clock reads @to). */
    void (*advance)(gpointer model, ParoTime from, ParoTime to);
} ParoModelHooks;

ParoEngine *paro_engine_new(void);
void paro_engine_free(ParoEngine *engine);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ParoEngine, paro_engine_free)

ParoTime paro_engine_now(const ParoEngine *engine);

/** paro_engine_schedule: runs @func at absolute @time (>= now); among events at the same
 * time, higher @priority first, then first scheduled first. Returns an id for cancelling. */
ParoEventId paro_engine_schedule(ParoEngine *engine, ParoTime time, int priority,
                                 ParoEventFunc func, gpointer user_data);

/** paro_engine_schedule_batched: paro_engine_schedule for the many events that share an
 * instant (a network's transfers ending their latency together): they fire in the same
 * order, but wait in one batch per (time, priority), so the heap holds one entry per
 * batch instead of one per event. Not cancellable. */
void paro_engine_schedule_batched(ParoEngine *engine, ParoTime time, int priority,
                                  ParoEventFunc func, gpointer user_data);

/** paro_engine_cancel: the event will not fire (no effect if it already did). */
void paro_engine_cancel(ParoEngine *engine, ParoEventId id);

/** paro_engine_add_model: the engine advances @model with @hooks (not owned). */
void paro_engine_add_model(ParoEngine *engine, const ParoModelHooks *hooks, gpointer model);

/** paro_engine_run: runs until nothing is left or the clock would pass @until. */
void paro_engine_run(ParoEngine *engine, ParoTime until);

/** paro_engine_n_fired: events fired so far (for benchmarks). */
guint64 paro_engine_n_fired(const ParoEngine *engine);

/** paro_engine_note_overflow: a model needed a time past PARO_TIME_MAX (saturated). */
void paro_engine_note_overflow(ParoEngine *engine);

/** paro_engine_overflowed: TRUE when an event or a model's time saturated: the results
 * of this run are not to be trusted, and callers report paro_engine_set_overflow_error(). */
gboolean paro_engine_overflowed(const ParoEngine *engine);

/** paro_engine_set_overflow_error: PARO_SIM_ERROR_INFEASIBLE saying time ran out of range. */
void paro_engine_set_overflow_error(GError **error);

G_END_DECLS
