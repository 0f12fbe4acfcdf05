/* SPDX-License-Identifier: MIT */
/* Sweeps (sweep/sweep.c): axis expansion (lists, arithmetic and geometric ranges), the
 * size of the cartesian product, located errors in the --vary argument, and a parallel
 * run that gives the same results, in the same order, as a serial one. */
#include <glib.h>
#include <string.h>

#include "check-main.h"
#include "core/error.h"
#include "strategy/strategy.h"
#include "sweep/sweep.h"

static char *joined(const ParoSweepAxis *a)
{
    g_ptr_array_add(a->values, NULL);
    char *s = g_strjoinv(" ", (char **)a->values->pdata);
    g_ptr_array_remove_index(a->values, a->values->len - 1);
    return s;
}

static void expect_values(const char *arg, const char *path, const char *want)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(ParoSweepAxis) a = paro_sweep_axis_parse(arg, 1, &error);
    ck_assert_msg(a != NULL, "%s: %s", arg, error ? error->message : "");
    ck_assert_str_eq(a->path, path);
    g_autofree char *got = joined(a);
    ck_assert_msg(strcmp(got, want) == 0, "%s: got '%s', want '%s'", arg, got, want);
}

START_TEST(axis_expansion)
{
    /* Expectations written out by hand from the range definitions in sweep.h:
     * A..B*F is A, AF, AF^2, ... <= B; A..B+S is A, A+S, ... <= B; A..B steps by 1. */
    expect_values("topology.nodes=2..64*2", "topology.nodes", "2 4 8 16 32 64");
    expect_values("topology.nodes=2..63*2", "topology.nodes", "2 4 8 16 32");
    expect_values("training.accumulation=1..5", "training.accumulation", "1 2 3 4 5");
    expect_values("training.efficiency=0.3..0.6+0.1", "training.efficiency", "0.3 0.4 0.5 0.6");
    expect_values("training.trainable.fraction=1,1/16,3/1000", "training.trainable.fraction",
                  "1 1/16 3/1000");
    /* lists and ranges mix; units pass through as written for the scenario to parse */
    expect_values("parallelism.group=1,2..8*2,16", "parallelism.group", "1 2 4 8 16");
    expect_values("topology.node.nics.bandwidth=100 Gb/s", "topology.node.nics.bandwidth",
                  "100 Gb/s");
}
END_TEST

static void expect_error(const char *arg, int code, int column)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(ParoSweepAxis) a = paro_sweep_axis_parse(arg, 2, &error);
    ck_assert_msg(a == NULL, "%s parsed", arg);
    ck_assert_msg(g_error_matches(error, PARO_CONFIG_ERROR, code), "%s: %s (code %d, want %d)", arg,
                  error->message, error->code, code);
    const ParoConfigErrorPrivate *at = paro_config_error_get_location(error);
    ck_assert_str_eq(at->file, "--vary[2]");
    ck_assert_int_eq(at->line, 1);
    ck_assert_msg(at->column == column, "%s: column %d, want %d (%s)", arg, at->column, column,
                  error->message);
}

START_TEST(axis_errors_are_located)
{
    /* columns are 1-based positions in the argument, counted by hand */
    expect_error("topology.nodes", PARO_CONFIG_ERROR_SYNTAX, 15);           /* no '=' */
    expect_error("=1,2", PARO_CONFIG_ERROR_SYNTAX, 1);                      /* no path */
    expect_error("topology.nodes=1,,2", PARO_CONFIG_ERROR_SYNTAX, 18);      /* empty value */
    expect_error("topology.nodes=2,x..4", PARO_CONFIG_ERROR_SYNTAX, 18);    /* bad bound */
    expect_error("topology.nodes=8..2*2", PARO_CONFIG_ERROR_RANGE, 16);     /* A > B */
    expect_error("topology.nodes=2..8*1", PARO_CONFIG_ERROR_RANGE, 16);     /* endless */
    expect_error("topology.nodes=0..8*2", PARO_CONFIG_ERROR_RANGE, 16);     /* 0 x F stays 0 */
    expect_error("topology.nodes=1..2000000", PARO_CONFIG_ERROR_RANGE, 16); /* too many */
    /* Found by fuzz_sweep_axis: ranges that took seconds to build (a million formatted
     * values) before failing; now counted, and refused, before any value is made. */
    expect_error("training.efy=0.0..21e300", PARO_CONFIG_ERROR_RANGE, 14);
    expect_error("topology.nodes=1..1e300", PARO_CONFIG_ERROR_RANGE, 16);
    expect_error("topology.nodes=1e20..2e20+1", PARO_CONFIG_ERROR_RANGE, 16); /* step lost */
    expect_error("topology.nodes=1..1e300*1.0000001", PARO_CONFIG_ERROR_RANGE, 16);
    expect_error("topology.nodes=1..10001", PARO_CONFIG_ERROR_RANGE, 16);     /* 10,001 > 10,000 */
    expect_error("topology.nodes=1,2,3..10002", PARO_CONFIG_ERROR_RANGE, 20); /* with the list */
}
END_TEST

static GPtrArray *axes_of(const char *const *args)
{
    GPtrArray *axes = g_ptr_array_new_with_free_func((GDestroyNotify)paro_sweep_axis_free);
    for (int i = 0; args[i]; i++) {
        g_autoptr(GError) error = NULL;
        ParoSweepAxis *a = paro_sweep_axis_parse(args[i], i + 1, &error);
        ck_assert_msg(a != NULL, "%s", error ? error->message : "");
        g_ptr_array_add(axes, a);
    }
    return axes;
}

START_TEST(product_size)
{
    /* 6 x 3 x 2 points: the product of the axes' lengths */
    const char *args[] = {"topology.nodes=2..64*2", "training.accumulation=1,2,4",
                          "parallelism.group=4,8", NULL};
    g_autoptr(GPtrArray) axes = axes_of(args);
    ck_assert_uint_eq(paro_sweep_n_points(axes), 36);
    /* 1000^4 = 1e12 exceeds the cap: 0 means too many */
    const char *huge[] = {"a=1..1000", "b=1..1000", "c=1..1000", "d=1..1000", NULL};
    g_autoptr(GPtrArray) big = axes_of(huge);
    ck_assert_uint_eq(paro_sweep_n_points(big), 0);
}
END_TEST

/* @axes must outlive the points: their values are borrowed. */
static GPtrArray *run_sweep(GPtrArray *axes, int jobs, GError **error)
{
    g_autofree char *path = paro_test_path("scenarios/llama-7b_a100x8-100g_n32.yaml");
    g_autoptr(GPtrArray) strategies = g_ptr_array_new();
    const char *names[] = {"zero-2", "zero-3", "NII", "IIG"};
    for (guint i = 0; i < G_N_ELEMENTS(names); i++)
        g_ptr_array_add(strategies, (gpointer)paro_strategy_lookup(names[i]));
    return paro_sweep_run(path, NULL, axes, strategies, jobs, NULL, NULL, error);
}

START_TEST(parallel_equals_serial)
{
    /* The same sweep on 1 and on 3 worker threads: identical results per point, in point
     * order (first axis slowest), since each point's result lands in its own slot. */
    const char *args[] = {"topology.nodes=2..8*2", "training.trainable.fraction=1,1/16", NULL};
    g_autoptr(GPtrArray) axes = axes_of(args);
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) serial = run_sweep(axes, 1, &error);
    ck_assert_msg(serial != NULL, "%s", error ? error->message : "");
    g_autoptr(GPtrArray) parallel = run_sweep(axes, 3, &error);
    ck_assert_msg(parallel != NULL, "%s", error ? error->message : "");
    ck_assert_uint_eq(serial->len, 6);
    ck_assert_uint_eq(parallel->len, 6);
    const char *order[][2] = {{"2", "1"},    {"2", "1/16"}, {"4", "1"},
                              {"4", "1/16"}, {"8", "1"},    {"8", "1/16"}};
    for (guint i = 0; i < serial->len; i++) {
        const ParoSweepPoint *a = g_ptr_array_index(serial, i), *b = g_ptr_array_index(parallel, i);
        ck_assert_uint_eq(a->point, i);
        ck_assert_str_eq(g_ptr_array_index(a->values, 0), order[i][0]);
        ck_assert_str_eq(g_ptr_array_index(a->values, 1), order[i][1]);
        ck_assert_uint_eq(a->results->len, 4);
        for (guint k = 0; k < a->results->len; k++) {
            const ParoStepResult *ra = &g_array_index(a->results, ParoStepResult, k);
            const ParoStepResult *rb = &g_array_index(b->results, ParoStepResult, k);
            ck_assert_ptr_eq(ra->strategy, rb->strategy);
            ck_assert_int_eq(ra->step, rb->step); /* integer picoseconds: exact */
            ck_assert(ra->peak_bytes == rb->peak_bytes);
        }
    }
}
END_TEST

START_TEST(sweeps_one_after_another)
{
    /* Found by fuzz_cli_sweep (issue #16): GLib keeps a finished pool's threads for the
     * next, with their private collective cache, which read the scenario of a point of the
     * previous sweep, freed by then (heap-use-after-free under ASan). A second sweep after
     * the first is freed must make its own caches and give the same results. */
    const char *args[] = {"topology.nodes=2,4", NULL};
    g_autoptr(GPtrArray) axes = axes_of(args);
    g_autoptr(GError) error = NULL;
    GPtrArray *first = run_sweep(axes, 1, &error);
    ck_assert_msg(first != NULL, "%s", error ? error->message : "");
    const ParoSweepPoint *p = g_ptr_array_index(first, 1);
    ParoTime want = g_array_index(p->results, ParoStepResult, 0).step;
    g_ptr_array_unref(first);
    g_autoptr(GPtrArray) second = run_sweep(axes, 1, &error);
    ck_assert_msg(second != NULL, "%s", error ? error->message : "");
    p = g_ptr_array_index(second, 1);
    ck_assert_int_eq(g_array_index(p->results, ParoStepResult, 0).step, want);
}
END_TEST

START_TEST(bad_value_fails_before_running)
{
    /* A value the scenario rejects (a negative node count) fails the whole sweep with the
     * location of that value inside its --vary argument, not a file position. */
    g_autofree char *path = paro_test_path("scenarios/llama-7b_a100x8-100g_n32.yaml");
    const char *args[] = {"training.accumulation=1,2", "topology.nodes=2,4,-1", NULL};
    g_autoptr(GPtrArray) axes = axes_of(args);
    g_autoptr(GPtrArray) strategies = g_ptr_array_new();
    g_ptr_array_add(strategies, (gpointer)paro_strategy_lookup("NII"));
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) points =
        paro_sweep_run(path, NULL, axes, strategies, 2, NULL, NULL, &error);
    ck_assert(points == NULL);
    const ParoConfigErrorPrivate *at = paro_config_error_get_location(error);
    ck_assert_msg(at != NULL, "%s", error->message);
    ck_assert_str_eq(at->file, "--vary[2]");
    ck_assert_int_eq(at->column, 20); /* "topology.nodes=2,4,-1": '-' is the 20th character */
}
END_TEST

static Suite *sweep_suite(void)
{
    Suite *s = suite_create("sweep");
    TCase *tc = tcase_create("sweep");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, axis_expansion);
    tcase_add_test(tc, axis_errors_are_located);
    tcase_add_test(tc, product_size);
    tcase_add_test(tc, parallel_equals_serial);
    tcase_add_test(tc, bad_value_fails_before_running);
    tcase_add_test(tc, sweeps_one_after_another);
    suite_add_tcase(s, tc);
    return s;
}

PARO_CHECK_MAIN(sweep_suite)
