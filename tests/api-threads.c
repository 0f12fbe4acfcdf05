/* SPDX-License-Identifier: MIT */
/* One scenario shared by eight threads through the public API (parosim.h, issue #42):
 * each thread's text or rows equal what one thread alone gets from a scenario of its own.
 * The threads start together, so a scenario that built state on first need (the guideline
 * did) raced: the sanitized build's leak check fails these tests on the copies that leaked,
 * and ThreadSanitizer on the race itself. */
#include <glib.h>
#include <parosim.h>
#include <string.h>

#include "check-main.h"

#define THREADS 8
#define ROUNDS 16 /* fresh scenarios: a race shows on the first calls of each */

static const char *const scenario_name = "llama-7b_a100x8-100g_n32";
static const char *const pick = "zero-3,IIG,NII";

typedef enum { CALL_STRATEGIES, CALL_RUN, CALL_ROWS, CALL_MIXED } Call;

typedef struct {
    ParosimScenario *scenario;
    Call call;
    GMutex lock; /* the start gate: every thread waits for the others */
    GCond all_in;
    int waiting;
    char *text[THREADS]; /* each thread's result (rows as bytes), or its error */
    gsize size[THREADS];
} Shared;

typedef struct {
    Shared *shared;
    int index;
} Worker;

/* What call @call returns, as bytes to compare: the text, or the rows' memory. */
static char *call_once(ParosimScenario *s, Call call, gsize *size)
{
    char *error = NULL, *text = NULL;
    if (call == CALL_STRATEGIES) {
        text = parosim_strategies(s, "json", &error);
    } else if (call == CALL_RUN) {
        text = parosim_run(s, pick, "json", &error);
    } else {
        ParosimStepRow *rows = NULL;
        size_t n = 0;
        if (parosim_run_rows(s, pick, &rows, &n, &error) == 0) {
            *size = n * sizeof *rows;
            text = g_malloc0(*size + 1); /* NUL-ended, so a failure can print it */
            memcpy(text, rows, *size);
            parosim_free(rows);
            return text;
        }
    }
    if (text == NULL) {
        char *message = g_strdup_printf("error: %s", error ? error : "(none)");
        parosim_free(error);
        *size = strlen(message);
        return message;
    }
    *size = strlen(text);
    char *copy = g_strndup(text, *size);
    parosim_free(text);
    return copy;
}

static gpointer worker(gpointer data)
{
    Worker *w = data;
    Shared *sh = w->shared;
    g_mutex_lock(&sh->lock);
    if (++sh->waiting == THREADS)
        g_cond_broadcast(&sh->all_in);
    while (sh->waiting < THREADS)
        g_cond_wait(&sh->all_in, &sh->lock);
    g_mutex_unlock(&sh->lock);
    /* mixed: the three calls at once on the one scenario */
    Call call = sh->call == CALL_MIXED ? (Call)(w->index % 3) : sh->call;
    sh->text[w->index] = call_once(sh->scenario, call, &sh->size[w->index]);
    return NULL;
}

static ParosimScenario *load(void)
{
    char *error = NULL;
    ParosimScenario *s = parosim_scenario_load(scenario_name, NULL, &error);
    ck_assert_msg(s != NULL, "%s", error);
    return s;
}

/* @call by THREADS threads on one scenario, ROUNDS times, each against one thread alone. */
static void check_shared(Call call)
{
    gsize alone_size[3];
    char *alone[3];
    ParosimScenario *own = load();
    for (int c = 0; c < 3; c++)
        alone[c] = call_once(own, (Call)c, &alone_size[c]);
    parosim_scenario_free(own);
    for (int c = 0; c < 3; c++)
        ck_assert_msg(!g_str_has_prefix(alone[c], "error: "), "%s", alone[c]);
    for (int round = 0; round < ROUNDS; round++) {
        Shared sh = {.scenario = load(), .call = call};
        g_mutex_init(&sh.lock);
        g_cond_init(&sh.all_in);
        Worker workers[THREADS];
        GThread *threads[THREADS];
        for (int i = 0; i < THREADS; i++) {
            workers[i] = (Worker){&sh, i};
            threads[i] = g_thread_new("api-threads", worker, &workers[i]);
        }
        for (int i = 0; i < THREADS; i++)
            g_thread_join(threads[i]);
        parosim_scenario_free(sh.scenario);
        for (int i = 0; i < THREADS; i++) {
            int c = call == CALL_MIXED ? i % 3 : (int)call;
            ck_assert_msg(
                sh.size[i] == alone_size[c] && memcmp(sh.text[i], alone[c], alone_size[c]) == 0,
                "round %d, thread %d: not what one thread gets (%.200s)", round, i, sh.text[i]);
            g_free(sh.text[i]);
        }
        g_cond_clear(&sh.all_in);
        g_mutex_clear(&sh.lock);
    }
    for (int c = 0; c < 3; c++)
        g_free(alone[c]);
}

START_TEST(strategies_shared)
{
    check_shared(CALL_STRATEGIES);
}
END_TEST

START_TEST(run_shared)
{
    check_shared(CALL_RUN);
}
END_TEST

START_TEST(rows_shared)
{
    check_shared(CALL_ROWS);
}
END_TEST

START_TEST(mixed_shared)
{
    check_shared(CALL_MIXED);
}
END_TEST

static Suite *api_threads_suite(void)
{
    Suite *s = suite_create("api-threads");
    TCase *tc = tcase_create("shared");
    tcase_set_timeout(tc, 240); /* the sanitized build simulates 8 x 4 x 3 strategies */
    tcase_add_test(tc, strategies_shared);
    tcase_add_test(tc, run_shared);
    tcase_add_test(tc, rows_shared);
    tcase_add_test(tc, mixed_shared);
    suite_add_tcase(s, tc);
    return s;
}

PARO_CHECK_MAIN(api_threads_suite)
