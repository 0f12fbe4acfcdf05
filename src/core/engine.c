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

/* Events scheduled batched at one (time, priority), in sequence order. The heap holds one
 * Event for the batch (func NULL, user_data the batch) keyed by the sequence of its first
 * event still waiting, put back with the next one's after each fires: so every event,
 * batched or not, fires at its place in (time, priority, seq) order. */
typedef struct {
    guint64 seq;
    ParoEventFunc func;
    gpointer user_data;
} Batched;

typedef struct {
    ParoTime time;
    int priority;
    GArray *events; /* Batched */
    guint next;     /* the first that has not fired */
} Batch;

struct _ParoEngine {
    ParoTime now;
    guint64 next_seq;
    guint64 n_fired;
    GArray *heap;        /* Event */
    GArray *cancelled;   /* guint64 words: bit seq set while event seq is cancelled */
    guint64 n_cancelled; /* bits set */
    GArray *models;      /* Model */
    GHashTable *batches; /* the open batches, each its own key (looked up, never iterated) */
    GPtrArray *spare;    /* emptied batches, for reuse */
    Batch *last_batch;   /* the open batch an event last went into (or NULL) */
    gboolean overflowed; /* something needed a time beyond PARO_TIME_MAX */
};

static guint batch_hash(gconstpointer key)
{
    const Batch *b = key;
    return g_int64_hash(&b->time) ^ (guint)b->priority;
}

static gboolean batch_equal(gconstpointer a, gconstpointer b)
{
    const Batch *x = a, *y = b;
    return x->time == y->time && x->priority == y->priority;
}

static void batch_free(Batch *b)
{
    g_array_unref(b->events);
    g_free(b);
}

ParoEngine *paro_engine_new(void)
{
    ParoEngine *e = g_new0(ParoEngine, 1);
    e->heap = g_array_new(FALSE, FALSE, sizeof(Event));
    e->cancelled = g_array_new(FALSE, TRUE, sizeof(guint64));
    e->models = g_array_new(FALSE, FALSE, sizeof(Model));
    e->batches = g_hash_table_new_full(batch_hash, batch_equal, NULL, (GDestroyNotify)batch_free);
    e->spare = g_ptr_array_new_with_free_func((GDestroyNotify)batch_free);
    return e;
}

void paro_engine_free(ParoEngine *e)
{
    if (e == NULL)
        return;
    g_array_unref(e->heap);
    g_array_unref(e->cancelled);
    g_array_unref(e->models);
    g_hash_table_unref(e->batches); /* the open batches (their heap entries go with it) */
    g_ptr_array_unref(e->spare);
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

static void push(ParoEngine *e, ParoTime time, int priority, guint64 seq, ParoEventFunc func,
                 gpointer user_data)
{
    Event ev = {time, priority, seq, func, user_data};
    g_array_append_val(e->heap, ev);
    sift_up(e->heap, e->heap->len - 1);
}

ParoEventId paro_engine_schedule(ParoEngine *e, ParoTime time, int priority, ParoEventFunc func,
                                 gpointer user_data)
{
    g_return_val_if_fail(func != NULL, 0);
    g_return_val_if_fail(time >= e->now, 0);
    if (time == PARO_TIME_MAX)
        e->overflowed = TRUE; /* a saturated time: the event stands for "too late" */
    push(e, time, priority, ++e->next_seq, func, user_data);
    return e->next_seq;
}

void paro_engine_schedule_batched(ParoEngine *e, ParoTime time, int priority, ParoEventFunc func,
                                  gpointer user_data)
{
    g_return_if_fail(func != NULL);
    g_return_if_fail(time >= e->now);
    if (time == PARO_TIME_MAX)
        e->overflowed = TRUE;
    Batch key = {time, priority, NULL, 0};
    Batch *b = e->last_batch != NULL && batch_equal(e->last_batch, &key)
                   ? e->last_batch
                   : g_hash_table_lookup(e->batches, &key);
    Batched ev = {++e->next_seq, func, user_data};
    if (b == NULL) {
        b = e->spare->len > 0 ? g_ptr_array_steal_index_fast(e->spare, e->spare->len - 1)
                              : g_new0(Batch, 1);
        if (b->events == NULL)
            b->events = g_array_new(FALSE, FALSE, sizeof(Batched));
        b->time = time;
        b->priority = priority;
        g_hash_table_add(e->batches, b);
        push(e, time, priority, ev.seq, NULL, b);
    }
    g_array_append_val(b->events, ev);
    e->last_batch = b;
}

/* Fires the first waiting event of the batch @b, whose heap entry was just popped, after
 * putting the entry back for the next one (or closing the batch): what the event schedules
 * then takes its place after it. */
static void fire_batched(ParoEngine *e, Batch *b)
{
    Batched ev = g_array_index(b->events, Batched, b->next++);
    if (b->next < b->events->len) {
        push(e, b->time, b->priority, g_array_index(b->events, Batched, b->next).seq, NULL, b);
    } else {
        g_hash_table_steal(e->batches, b);
        if (e->last_batch == b)
            e->last_batch = NULL;
        g_array_set_size(b->events, 0);
        b->next = 0;
        g_ptr_array_add(e->spare, b);
    }
    ev.func(e, ev.user_data);
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
            if (ev.func == NULL)
                fire_batched(e, ev.user_data);
            else
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
