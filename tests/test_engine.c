/* SPDX-License-Identifier: MIT */
/* The event queue: time order, priority, FIFO among ties, cancellation, determinism. */
#include <glib.h>
#include <string.h>

#include "check-main.h"
#include "core/engine.h"

typedef struct {
    GString *log;
    char tag;
} Mark;

static void record(ParoEngine *e, gpointer data)
{
    Mark *m = data;
    g_string_append_printf(m->log, "%c@%" G_GINT64_FORMAT " ", m->tag, paro_engine_now(e));
}

START_TEST(engine_orders_by_time_then_priority_then_fifo)
{
    g_autoptr(ParoEngine) e = paro_engine_new();
    g_autoptr(GString) log = g_string_new(NULL);
    Mark a = {log, 'a'}, b = {log, 'b'}, c = {log, 'c'}, d = {log, 'd'}, f = {log, 'f'};
    paro_engine_schedule(e, 30, 0, record, &a);
    paro_engine_schedule(e, 10, 0, record, &b);
    paro_engine_schedule(e, 10, 0, record, &c); /* same time and priority: after b */
    paro_engine_schedule(e, 10, 5, record, &d); /* higher priority: first at 10 */
    paro_engine_schedule(e, 20, 0, record, &f);
    paro_engine_run(e, PARO_TIME_MAX);
    ck_assert_str_eq(log->str, "d@10 b@10 c@10 f@20 a@30 ");
    ck_assert_int_eq(paro_engine_n_fired(e), 5);
}
END_TEST

START_TEST(engine_ties_are_fifo_at_scale)
{
    /* 1000 events at one instant fire in insertion order (the heap is not stable by
     * itself; the sequence number makes it so). */
    g_autoptr(ParoEngine) e = paro_engine_new();
    g_autoptr(GString) log = g_string_new(NULL);
    Mark marks[1000];
    for (int i = 0; i < 1000; i++) {
        marks[i] = (Mark){log, (char)('A' + i % 26)};
        paro_engine_schedule(e, 7, 0, record, &marks[i]);
    }
    paro_engine_run(e, PARO_TIME_MAX);
    for (int i = 0; i < 1000; i++)
        ck_assert_int_eq(log->str[i * 4], 'A' + i % 26); /* "X@7 " is 4 characters */
}
END_TEST

/* A run of events scheduled from a fixed seed, some batched (paro_engine_schedule_batched)
 * and some not, at a few instants and priorities; every seventh event, as it fires,
 * schedules another at its instant or the next, at a priority of its own (a higher one
 * included, which must fire before the rest of a batch). */
typedef struct {
    ParoEngine *engine;
    GString *log;
    gboolean batching;
    int n;
    guint32 draws[4096];
} Mix;

typedef struct {
    Mix *mix;
    int id;
} MixEvent;

static MixEvent mix_events[4096];

static void mix_schedule(Mix *m, ParoTime at, int priority, gboolean batched);

static void mix_fired(ParoEngine *e, gpointer data)
{
    MixEvent *ev = data;
    Mix *m = ev->mix;
    g_string_append_printf(m->log, "%d@%" G_GINT64_FORMAT " ", ev->id, paro_engine_now(e));
    if (ev->id % 7 == 0 && m->n < 4000) {
        guint32 d = m->draws[ev->id];
        mix_schedule(m, paro_engine_now(e) + (d & 1), (int)(d >> 1) % 3 - 1, (d >> 3) & 1);
    }
}

static void mix_schedule(Mix *m, ParoTime at, int priority, gboolean batched)
{
    MixEvent *ev = &mix_events[m->n];
    *ev = (MixEvent){m, m->n++};
    if (batched && m->batching)
        paro_engine_schedule_batched(m->engine, at, priority, mix_fired, ev);
    else
        paro_engine_schedule(m->engine, at, priority, mix_fired, ev);
}

static char *mix_run(gboolean batching)
{
    g_autoptr(ParoEngine) e = paro_engine_new();
    g_autoptr(GRand) rand = g_rand_new_with_seed(18);
    Mix m = {e, g_string_new(NULL), batching, 0, {0}};
    for (int i = 0; i < 4096; i++)
        m.draws[i] = g_rand_int(rand);
    for (int i = 0; i < 2000; i++) {
        guint32 d = g_rand_int(rand);
        mix_schedule(&m, d % 20, (int)(d >> 8) % 3 - 1, (d >> 12) & 1);
    }
    paro_engine_run(e, PARO_TIME_MAX);
    ck_assert_int_eq(paro_engine_n_fired(e), m.n);
    return g_string_free(m.log, FALSE);
}

START_TEST(engine_batched_events_keep_the_order)
{
    /* Oracle: the same events all scheduled one by one, which the tests above check fire
     * in (time, priority, insertion) order. Batching (issue #18: a tree's transfers end
     * their latency together) must not move any. */
    g_autofree char *plain = mix_run(FALSE);
    g_autofree char *batched = mix_run(TRUE);
    ck_assert_str_eq(batched, plain);
    ck_assert(strlen(plain) > 2000 * 4);
}
END_TEST

START_TEST(engine_cancel)
{
    g_autoptr(ParoEngine) e = paro_engine_new();
    g_autoptr(GString) log = g_string_new(NULL);
    Mark a = {log, 'a'}, b = {log, 'b'};
    ParoEventId id = paro_engine_schedule(e, 5, 0, record, &a);
    paro_engine_schedule(e, 6, 0, record, &b);
    paro_engine_cancel(e, id);
    paro_engine_run(e, PARO_TIME_MAX);
    ck_assert_str_eq(log->str, "b@6 ");
}
END_TEST

static void chain(ParoEngine *e, gpointer data)
{
    Mark *m = data;
    record(e, m);
    if (m->log->len < 60)
        paro_engine_schedule(e, paro_engine_now(e) + 3, 0, chain, m);
}

START_TEST(engine_events_scheduled_now_and_later)
{
    g_autoptr(ParoEngine) e = paro_engine_new();
    g_autoptr(GString) log = g_string_new(NULL);
    Mark a = {log, 'a'};
    paro_engine_schedule(e, 0, 0, chain, &a);
    paro_engine_run(e, 9); /* stops before an event past the limit */
    ck_assert_str_eq(log->str, "a@0 a@3 a@6 a@9 ");
    ck_assert_int_eq(paro_engine_now(e), 9);
}
END_TEST

START_TEST(engine_is_deterministic)
{
    g_autoptr(GString) first = NULL;
    for (int run = 0; run < 2; run++) {
        g_autoptr(ParoEngine) e = paro_engine_new();
        GString *log = g_string_new(NULL);
        Mark marks[64];
        for (int i = 0; i < 64; i++) {
            marks[i] = (Mark){log, (char)('a' + i % 26)};
            paro_engine_schedule(e, (i * 7919) % 13, i % 3, record, &marks[i]);
        }
        paro_engine_run(e, PARO_TIME_MAX);
        if (run == 0)
            first = log;
        else {
            ck_assert_str_eq(log->str, first->str);
            g_string_free(log, TRUE);
        }
    }
}
END_TEST

static Suite *engine_suite(void)
{
    Suite *s = suite_create("engine");
    TCase *tc = tcase_create("queue");
    tcase_add_test(tc, engine_orders_by_time_then_priority_then_fifo);
    tcase_add_test(tc, engine_ties_are_fifo_at_scale);
    tcase_add_test(tc, engine_batched_events_keep_the_order);
    tcase_add_test(tc, engine_cancel);
    tcase_add_test(tc, engine_events_scheduled_now_and_later);
    tcase_add_test(tc, engine_is_deterministic);
    suite_add_tcase(s, tc);
    return s;
}

PARO_CHECK_MAIN(engine_suite)
