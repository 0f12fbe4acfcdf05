/* SPDX-License-Identifier: MIT */
/* Unit parser tables: every quantity kind, SI vs IEC, bits vs bytes, and the refusals; the
 * order statistics of core/stats.h. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "check-main.h"
#include "core/error.h"
#include "core/spell.h"
#include "core/stats.h"
#include "core/units.h"

typedef struct {
    const char *text;
    ParoQuantity kind;
    double want; /* SI base units */
} Good;

/* Expected values are the unit definitions themselves (SI and IEC prefixes; 8 bits a byte). */
static const Good good[] = {
    {"80 GiB", PARO_QUANTITY_BYTES, 85899345920.0},
    {"80 GB", PARO_QUANTITY_BYTES, 80e9},
    {"1.5KiB", PARO_QUANTITY_BYTES, 1536.0},
    {"0", PARO_QUANTITY_BYTES, 0},
    {"400 Gb/s", PARO_QUANTITY_BANDWIDTH, 50e9},
    {"100 Gbps", PARO_QUANTITY_BANDWIDTH, 12.5e9},
    {"450 GB/s", PARO_QUANTITY_BANDWIDTH, 450e9},
    {"25 GiB/s", PARO_QUANTITY_BANDWIDTH, 25.0 * 1073741824.0},
    {"2 us", PARO_QUANTITY_TIME, 2e-6},
    {"1.5 ms", PARO_QUANTITY_TIME, 1.5e-3},
    {"500 ns", PARO_QUANTITY_TIME, 5e-7},
    {"312 TFLOP/s", PARO_QUANTITY_FLOP_RATE, 312e12},
    {"1.979 PFLOP/s", PARO_QUANTITY_FLOP_RATE, 1.979e15},
    {"  7e2 MB  ", PARO_QUANTITY_BYTES, 700e6},
};

START_TEST(units_parse_good)
{
    const Good *g = &good[_i];
    double got = -1;
    g_autoptr(GError) error = NULL;
    ck_assert_msg(paro_units_parse(g->text, g->kind, &got, &error), "'%s': %s", g->text,
                  error ? error->message : "");
    /* Tolerance: one part in 1e12 of the value, the rounding of one multiply. */
    ck_assert_double_eq_tol(got, g->want, fabs(g->want) * 1e-12 + 1e-300);
}
END_TEST

typedef struct {
    const char *text;
    ParoQuantity kind;
    int code;
} Bad;

static const Bad bad[] = {
    {"400", PARO_QUANTITY_BANDWIDTH, PARO_CONFIG_ERROR_UNIT},    /* no unit */
    {"400 GB", PARO_QUANTITY_BANDWIDTH, PARO_CONFIG_ERROR_UNIT}, /* a size, not a rate */
    {"80 gib", PARO_QUANTITY_BYTES, PARO_CONFIG_ERROR_UNIT},     /* case matters */
    {"fast", PARO_QUANTITY_BANDWIDTH, PARO_CONFIG_ERROR_TYPE},
    {"inf GB/s", PARO_QUANTITY_BANDWIDTH, PARO_CONFIG_ERROR_RANGE},
    {"nan us", PARO_QUANTITY_TIME, PARO_CONFIG_ERROR_RANGE},
    {"1e400 B", PARO_QUANTITY_BYTES, PARO_CONFIG_ERROR_RANGE},
    {"0x10 B", PARO_QUANTITY_BYTES, PARO_CONFIG_ERROR_TYPE},
    {"", PARO_QUANTITY_TIME, PARO_CONFIG_ERROR_TYPE},
};

START_TEST(units_parse_bad)
{
    const Bad *b = &bad[_i];
    double got = 42;
    g_autoptr(GError) error = NULL;
    ck_assert_msg(!paro_units_parse(b->text, b->kind, &got, &error), "'%s' accepted", b->text);
    ck_assert_msg(g_error_matches(error, PARO_CONFIG_ERROR, b->code), "'%s': got %s (%s)", b->text,
                  paro_config_error_code_name(error->code), error->message);
    ck_assert_double_eq(got, 42); /* nothing written on failure */
}
END_TEST

START_TEST(units_unknown_unit_lists_accepted)
{
    g_autoptr(GError) error = NULL;
    double v;
    ck_assert(!paro_units_parse("3 furlongs/s", PARO_QUANTITY_BANDWIDTH, &v, &error));
    ck_assert_ptr_nonnull(strstr(error->message, "Gb/s"));
}
END_TEST

START_TEST(units_ratio)
{
    double v;
    g_autoptr(GError) error = NULL;
    ck_assert(paro_units_parse_number("1/16", TRUE, &v, NULL));
    ck_assert_double_eq(v, 0.0625);
    ck_assert(paro_units_parse_number("3/1000", TRUE, &v, NULL));
    ck_assert_double_eq_tol(v, 0.003, 1e-15);
    ck_assert(!paro_units_parse_number("1/16", FALSE, &v, NULL));
    ck_assert(!paro_units_parse_number("1/0", TRUE, &v, &error));
    ck_assert(g_error_matches(error, PARO_CONFIG_ERROR, PARO_CONFIG_ERROR_RANGE));
}
END_TEST

START_TEST(units_format_is_locale_free)
{
    g_autofree char *a = paro_units_format(12.5e9, PARO_QUANTITY_BANDWIDTH);
    g_autofree char *b = paro_units_format(2e-6, PARO_QUANTITY_TIME);
    g_autofree char *c = paro_units_format(85899345920.0, PARO_QUANTITY_BYTES);
    ck_assert_str_eq(a, "12.5 GB/s");
    ck_assert_str_eq(b, "2 us");
    ck_assert_str_eq(c, "85.9 GB");
}
END_TEST

START_TEST(spell_distance_and_nearest)
{
    /* Expectations: Levenshtein's textbook pair kitten/sitting is 3 (k->s, e->i, +g); the
     * optimal string alignment distance counts a swap of neighbours as one edit (ca/ac 1,
     * where Levenshtein gives 2); the empty string is as far as the other's length. */
    ck_assert_uint_eq(paro_spell_distance("kitten", "sitting"), 3);
    ck_assert_uint_eq(paro_spell_distance("ca", "ac"), 1);
    ck_assert_uint_eq(paro_spell_distance("", "abc"), 3);
    ck_assert_uint_eq(paro_spell_distance("accumulation", "accumulation"), 0);
    const char *const commands[] = {"run", "sweep", "strategies", "plan", "plot"};
    ck_assert_str_eq(paro_spell_nearest("runn", commands, 5), "run");
    ck_assert_str_eq(paro_spell_nearest("stratgies", commands, 5), "strategies");
    /* "plon" is one edit from both plan and plot: no suggestion rather than a guess */
    ck_assert_ptr_null(paro_spell_nearest("plon", commands, 5));
    /* too far: a third of the word's length, at least one edit */
    ck_assert_ptr_null(paro_spell_nearest("xyz", commands, 5));
}
END_TEST

START_TEST(stats_percentile_definition_7)
{
    /* System: the sample {15, 20, 35, 40, 50} (Wikipedia, "Percentile", whose worked
     * examples use it) given out of order, and the six values of NumPy's percentile()
     * documentation example, [[10, 7, 4], [3, 2, 1]].
     * Expectations, derived by hand from Hyndman and Fan's definition 7 (h = (n - 1) p /
     * 100, then linear between the ranks floor(h) and floor(h) + 1), and the same figures
     * from Python's statistics.quantiles(method='inclusive'), which implements it: p5 =
     * 15 + 0.2 x 5 = 16; p30 = 20 + 0.2 x 15 = 23; p40 = 20 + 0.6 x 15 = 29; p50 = 35;
     * p95 = 40 + 0.8 x 10 = 48; p0 and p100 the extremes. Six values: the median (3 +
     * 4) / 2 = 3.5, p25 = 2 + 0.25 x 1 = 2.25, p90 = 7 + 0.5 x 3 = 8.5.
     * Tolerance: p / 100 and h - floor(h) are rounded once each (0.6 is not a binary
     * fraction), a few ulps of values below 100: 1e-12. */
    double x[] = {40, 15, 50, 20, 35};
    const double p[] = {0, 5, 30, 40, 50, 95, 100}, want[] = {15, 16, 23, 29, 35, 48, 50};
    for (guint i = 0; i < G_N_ELEMENTS(p); i++)
        ck_assert_double_eq_tol(paro_stats_percentile(x, G_N_ELEMENTS(x), p[i]), want[i], 1e-12);
    ck_assert_double_eq(x[0], 15); /* sorted in place */
    ck_assert_double_eq(x[4], 50);
    g_autoptr(GArray) six = g_array_new(FALSE, FALSE, sizeof(double));
    const double v[] = {10, 7, 4, 3, 2, 1};
    g_array_append_vals(six, v, G_N_ELEMENTS(v));
    ck_assert_double_eq(paro_stats_median_array(six), 3.5);
    const double *sorted = (const double *)six->data;
    ck_assert_double_eq_tol(paro_stats_percentile_sorted(sorted, six->len, 25), 2.25, 1e-12);
    ck_assert_double_eq_tol(paro_stats_percentile_sorted(sorted, six->len, 90), 8.5, 1e-12);
}
END_TEST

START_TEST(stats_median_edges)
{
    /* Expectations: nothing has no median (NaN), as p outside [0, 100] has no percentile;
     * one value is every percentile of itself; an infinite neighbour does not turn an
     * exact rank into NaN (0 x inf); the median of an even sample is exactly (a + b) / 2,
     * the double the five copies of it that core/stats replaced computed (their tables
     * are golden files), here for neighbours whose sum is inexact; and two values near
     * DBL_MAX have their mean as median, where (a + b) / 2 would overflow. */
    ck_assert(isnan(paro_stats_median(NULL, 0)));
    double one[] = {7.25};
    ck_assert_double_eq(paro_stats_percentile(one, 1, 0), 7.25);
    ck_assert_double_eq(paro_stats_percentile(one, 1, 100), 7.25);
    ck_assert(isnan(paro_stats_percentile(one, 1, 100.5)));
    ck_assert(isnan(paro_stats_percentile(one, 1, NAN)));
    double inf[] = {INFINITY, 1, 2};
    ck_assert_double_eq(paro_stats_median(inf, 3), 2);
    ck_assert_double_eq(paro_stats_percentile_sorted(inf, 3, 0), 1);
    const double pairs[][2] = {{0.1, 0.2}, {1.0 / 3, 2.0 / 3}, {1e-17, 1}, {0.1324, 0.4926}};
    for (guint i = 0; i < G_N_ELEMENTS(pairs); i++) {
        double v[] = {pairs[i][1], 5, pairs[i][0], -1};
        ck_assert(paro_stats_median(v, 4) == (pairs[i][0] + pairs[i][1]) / 2);
    }
    double big[] = {1.7e308, 1e308};
    ck_assert_double_eq_tol(paro_stats_median(big, 2), 1.35e308, 1e296);
}
END_TEST

static Suite *units_suite(void)
{
    Suite *s = suite_create("units");
    TCase *tc = tcase_create("parse");
    tcase_add_loop_test(tc, units_parse_good, 0, G_N_ELEMENTS(good));
    tcase_add_loop_test(tc, units_parse_bad, 0, G_N_ELEMENTS(bad));
    tcase_add_test(tc, units_unknown_unit_lists_accepted);
    tcase_add_test(tc, units_ratio);
    tcase_add_test(tc, units_format_is_locale_free);
    tcase_add_test(tc, spell_distance_and_nearest);
    tcase_add_test(tc, stats_percentile_definition_7);
    tcase_add_test(tc, stats_median_edges);
    suite_add_tcase(s, tc);
    return s;
}

PARO_CHECK_MAIN(units_suite)
