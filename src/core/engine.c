/* SPDX-License-Identifier: MIT */
/* Binary heap of events (cimba's event_compare order) and the engine loop. Cancelled ids
 * are marked in a bit set indexed by the id (ids are the sequence numbers 1, 2, ...),
 * consulted when an event reaches the top (lazy deletion): no allocation or hashing per
 * cancel, which the scheduler does at every change of a task's speed. The set is only
 * looked up, never iterated, so it cannot influence order. */
#include "core/engine.h"
#include "core/error.h"

typedef struct {
    ParoTime time;
    int priority;
    guint64 seq;
    ParoEventFunc func;
    gpointer user_data;
} Event;

typedef struct {
    const ParoModelHooks *hooks;
    gpointer model;
} Model;

struct _ParoEngine {
    ParoTime now;
    guint64 next_seq;
    guint64 n_fired;
    GArray *heap;        /* Event */
    GArray *cancelled;   /* guint64 words: bit seq set while event seq is cancelled */
    guint64 n_cancelled; /* bits set */
    GArray *models;      /* Model */
    gboolean overflowed; /* something needed a time beyond PARO_TIME_MAX */
};

ParoEngine *paro_engine_new(void)
{
    ParoEngine *e = g_new0(ParoEngine, 1);
    e->heap = g_array_new(FALSE, FALSE, sizeof(Event));
    e->cancelled = g_array_new(FALSE, TRUE, sizeof(guint64));
    e->models = g_array_new(FALSE, FALSE, sizeof(Model));
    return e;
}

void paro_engine_free(ParoEngine *e)
{
    if (e == NULL)
        return;
    g_array_unref(e->heap);
    g_array_unref(e->cancelled);
    g_array_unref(e->models);
    g_free(e);
}

ParoTime paro_engine_now(const ParoEngine *e)
{
    return e->now;
}

guint64 paro_engine_n_fired(const ParoEngine *e)
{
    return e->n_fired;
}

static gboolean before(const Event *a, const Event *b)
{
    if (a->time != b->time)
        return a->time < b->time;
    if (a->priority != b->priority)
        return a->priority > b->priority;
    return a->seq < b->seq;
}

static void sift_up(GArray *heap, guint i)
{
    Event *h = (Event *)heap->data;
    Event moving = h[i];
    while (i > 0) {
        guint parent = (i - 1) / 2;
        if (!before(&moving, &h[parent]))
            break;
        h[i] = h[parent];
        i = parent;
    }
    h[i] = moving;
}

static void sift_down(GArray *heap, guint i)
{
    Event *h = (Event *)heap->data;
    guint n = heap->len;
    Event moving = h[i];
    for (;;) {
        guint child = 2 * i + 1;
        if (child >= n)
            break;
        if (child + 1 < n && before(&h[child + 1], &h[child]))
            child++;
        if (!before(&h[child], &moving))
            break;
        h[i] = h[child];
        i = child;
    }
    h[i] = moving;
}

static Event pop(GArray *heap)
{
    Event *h = (Event *)heap->data;
    Event top = h[0];
    h[0] = h[heap->len - 1];
    g_array_set_size(heap, heap->len - 1);
    if (heap->len > 0)
        sift_down(heap, 0);
    return top;
}

ParoEventId paro_engine_schedule(ParoEngine *e, ParoTime time, int priority, ParoEventFunc func,
                                 gpointer user_data)
{
    g_return_val_if_fail(func != NULL, 0);
    g_return_val_if_fail(time >= e->now, 0);
    if (time == PARO_TIME_MAX)
        e->overflowed = TRUE; /* a saturated time: the event stands for "too late" */
    Event ev = {time, priority, ++e->next_seq, func, user_data};
    g_array_append_val(e->heap, ev);
    sift_up(e->heap, e->heap->len - 1);
    return ev.seq;
}

void paro_engine_cancel(ParoEngine *e, ParoEventId id)
{
    if (id == 0 || id > e->next_seq)
        return;
    guint word = (guint)(id / 64);
    guint64 bit = G_GUINT64_CONSTANT(1) << (id % 64);
    if (word >= e->cancelled->len)
        g_array_set_size(e->cancelled, MAX(word + 1, e->cancelled->len * 2));
    guint64 *w = &g_array_index(e->cancelled, guint64, word);
    if (!(*w & bit)) {
        *w |= bit;
        e->n_cancelled++;
    }
}

/* Clears and returns whether event @seq was cancelled. */
static gboolean take_cancelled(ParoEngine *e, guint64 seq)
{
    guint word = (guint)(seq / 64);
    guint64 bit = G_GUINT64_CONSTANT(1) << (seq % 64);
    if (e->n_cancelled == 0 || word >= e->cancelled->len)
        return FALSE;
    guint64 *w = &g_array_index(e->cancelled, guint64, word);
    if (!(*w & bit))
        return FALSE;
    *w &= ~bit;
    e->n_cancelled--;
    return TRUE;
}

void paro_engine_add_model(ParoEngine *e, const ParoModelHooks *hooks, gpointer model)
{
    Model m = {hooks, model};
    g_array_append_val(e->models, m);
}

/* Drops cancelled events from the top; returns the time of the next live one. */
static ParoTime next_event_time(ParoEngine *e)
{
    while (e->heap->len > 0) {
        Event *top = &g_array_index(e->heap, Event, 0);
        if (!take_cancelled(e, top->seq))
            return top->time;
        pop(e->heap);
    }
    return PARO_TIME_MAX;
}

void paro_engine_run(ParoEngine *e, ParoTime until)
{
    for (;;) {
        ParoTime t = next_event_time(e);
        for (guint i = 0; i < e->models->len; i++) {
            Model *m = &g_array_index(e->models, Model, i);
            t = MIN(t, m->hooks->next_event(m->model, e->now));
        }
        if (t == PARO_TIME_MAX || t > until)
            return;
        g_assert(t >= e->now);
        /* The clock moves first, so what completions schedule starts at t. */
        ParoTime from = e->now;
        e->now = t;
        for (guint i = 0; i < e->models->len; i++) {
            Model *m = &g_array_index(e->models, Model, i);
            m->hooks->advance(m->model, from, t);
        }
        while (next_event_time(e) == t) {
            Event ev = pop(e->heap);
            e->n_fired++;
            ev.func(e, ev.user_data);
        }
    }
}

void paro_engine_note_overflow(ParoEngine *e)
{
    e->overflowed = TRUE;
}

gboolean paro_engine_overflowed(const ParoEngine *e)
{
    return e->overflowed;
}

void paro_engine_set_overflow_error(GError **error)
{
    g_set_error(error, PARO_SIM_ERROR, PARO_SIM_ERROR_INFEASIBLE,
                "simulated time beyond %.0f days, the range of integer picoseconds: a "
                "bandwidth too small or a size too large for this model",
                (double)PARO_TIME_MAX / PARO_PS_PER_S / 86400.0);
}
