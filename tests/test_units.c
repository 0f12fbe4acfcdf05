/* SPDX-License-Identifier: MIT */
/* Unit parser tables: every quantity kind, SI vs IEC, bits vs bytes, and the refusals. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "check-main.h"
#include "core/error.h"
#include "core/spell.h"
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
    suite_add_tcase(s, tc);
    return s;
}

PARO_CHECK_MAIN(units_suite)
