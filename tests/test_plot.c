/* SPDX-License-Identifier: MIT */
/* Plot inputs (plot/table.c, plot/plot-data.c): the CSV reader with its located errors,
 * the best-strategy map's winners and margins on a hand-made sweep, and the plan-scaling
 * table (each strategy's best plan per GPU count) on hand-made plans, whose answers are
 * worked out in the comments. Rendering itself is tested by tests/plots.sh (needs
 * gnuplot). */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "check-main.h"
#include "core/error.h"
#include "plan/plan.h"
#include "plot/plot.h"
#include "plot/table.h"

static void expect_located(const GError *error, int code, const char *file_suffix, int line,
                           int column)
{
    ck_assert_msg(error != NULL, "no error");
    ck_assert_msg(g_error_matches(error, PARO_CONFIG_ERROR, code), "%s (code %d, want %d)",
                  error->message, error->code, code);
    const ParoConfigErrorPrivate *at = paro_config_error_get_location(error);
    ck_assert_msg(g_str_has_suffix(at->file, file_suffix), "%s", at->file);
    ck_assert_msg(at->line == line && at->column == column, "%s: at %d:%d, want %d:%d",
                  error->message, at->line, at->column, line, column);
}

START_TEST(csv_reader)
{
    g_autofree char *path = paro_test_path("tests/data/plot/sweep-2x2.csv");
    g_autoptr(GError) error = NULL;
    g_autoptr(ParoTable) t = paro_table_read(path, ',', &error);
    ck_assert_msg(t != NULL, "%s", error ? error->message : "");
    ck_assert_uint_eq(t->rows->len, 9);
    ck_assert_int_eq(paro_table_column(t, "model", NULL), 2);
    ck_assert_str_eq(paro_table_field(t, 0, 2), "a,b"); /* quoted comma stays in the field */
    ck_assert_int_eq(g_array_index(t->lines, int, 8), 10);
    double v = 0;
    ck_assert(paro_table_number(t, 7, 6, &v, NULL));
    ck_assert(v == 1.0);
    ck_assert_int_eq(paro_table_column(t, "samples_per_s", &error), -1);
    expect_located(error, PARO_CONFIG_ERROR_MISSING_KEY, "sweep-2x2.csv", 1, 1);
}
END_TEST

START_TEST(csv_quoted_line_breaks)
{
    /* RFC 4180, as sweep writes it since issue #16 W5: a quoted field may hold doubled
     * quotes and line breaks; the record's rows keep the line they start on. */
    g_autofree char *path = NULL;
    int fd = g_file_open_tmp("paro-rfc-XXXXXX.csv", &path, NULL);
    ck_assert_int_ge(fd, 0);
    close(fd);
    const char *text = "a,b\n1,\"q\"\"m\"\n2,\"n\nl\"\n3,x\n";
    ck_assert(g_file_set_contents(path, text, -1, NULL));
    g_autoptr(GError) error = NULL;
    g_autoptr(ParoTable) t = paro_table_read(path, ',', &error);
    g_unlink(path);
    ck_assert_msg(t != NULL, "%s", error ? error->message : "");
    ck_assert_uint_eq(t->rows->len, 3);
    ck_assert_str_eq(paro_table_field(t, 0, 1), "q\"m");
    ck_assert_str_eq(paro_table_field(t, 1, 1), "n\nl");
    ck_assert_str_eq(paro_table_field(t, 2, 1), "x");
    ck_assert_int_eq(g_array_index(t->lines, int, 2), 5);
}
END_TEST

START_TEST(csv_errors_are_located)
{
    struct {
        const char *file;
        int code, line, column;
    } cases[] = {
        {"tests/data/plot/ragged.csv", PARO_CONFIG_ERROR_SYNTAX, 3, 1},       /* 6 of 7 fields */
        {"tests/data/plot/unterminated.csv", PARO_CONFIG_ERROR_SYNTAX, 2, 3}, /* the '"' */
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *path = paro_test_path(cases[i].file);
        g_autoptr(GError) error = NULL;
        g_autoptr(ParoTable) t = paro_table_read(path, ',', &error);
        ck_assert(t == NULL);
        expect_located(error, cases[i].code, strrchr(cases[i].file, '/') + 1, cases[i].line,
                       cases[i].column);
    }
    /* A NUL byte used to end the table there, silently (found with fuzz/, issue #8). */
    {
        g_autofree char *nul_path = NULL;
        int fd = g_file_open_tmp("paro-nul-XXXXXX.csv", &nul_path, NULL);
        ck_assert_int_ge(fd, 0);
        close(fd);
        ck_assert(g_file_set_contents(nul_path, "a,b\n1,2\n3,\0004\n5,6\n", 17, NULL));
        g_autoptr(GError) nul_error = NULL;
        g_autoptr(ParoTable) t = paro_table_read(nul_path, ',', &nul_error);
        g_unlink(nul_path);
        ck_assert(t == NULL);
        expect_located(nul_error, PARO_CONFIG_ERROR_SYNTAX, ".csv", 3, 3);
    }
    /* a non-number where the map needs a time: line 2, column 20 = after "0,1,1,1,NII,true," */
    g_autofree char *path = paro_test_path("tests/data/plot/not-a-number.csv");
    g_autoptr(GString) tsv = g_string_new(NULL);
    g_autofree char *winners = NULL, *x = NULL, *y = NULL;
    g_autoptr(GError) error = NULL;
    ck_assert(!paro_plot_best_map(path, NULL, NULL, tsv, &winners, &x, &y, &error));
    expect_located(error, PARO_CONFIG_ERROR_TYPE, "not-a-number.csv", 2, 18);
}
END_TEST

START_TEST(best_map_winners_and_margins)
{
    /* sweep-2x2.csv, worked by hand (margin = runner-up's step / winner's step - 1, among
     * strategies that fit only):
     *   point 0 (1, "a,b"): NII 2.0 and zero-2 3.0 fit        -> NII, 3/2 - 1 = 0.5
     *   point 1 (1, y): NII does not fit; zero-2 4.0, IIG 5.0 -> zero-2, 5/4 - 1 = 0.25
     *   point 2 (2, "a,b"): nothing fits                      -> OOM (index -1), no margin
     *   point 3 (2, y): only IIG fits                         -> IIG, no runner-up
     * Winners are numbered in order of first appearance: NII 0, zero-2 1, IIG 2. */
    g_autofree char *path = paro_test_path("tests/data/plot/sweep-2x2.csv");
    g_autoptr(GString) tsv = g_string_new(NULL);
    g_autofree char *winners = NULL, *x = NULL, *y = NULL;
    g_autoptr(GError) error = NULL;
    ck_assert_msg(paro_plot_best_map(path, NULL, NULL, tsv, &winners, &x, &y, &error), "%s",
                  error ? error->message : "");
    ck_assert_str_eq(tsv->str,
                     "# x_index\ty_index\twinner_index\tmargin\tx_value\ty_value\twinner\n"
                     "0\t0\t0\t0.500000\t1\ta,b\tNII\n"
                     "0\t1\t1\t0.250000\t1\ty\tzero-2\n"
                     "1\t0\t-1\tNaN\t2\ta,b\tOOM\n"
                     "1\t1\t2\tNaN\t2\ty\tIIG\n");
    ck_assert_str_eq(winners, "NII zero-2 IIG");
    ck_assert_str_eq(x, "training.accumulation");
    ck_assert_str_eq(y, "model");

    /* the axes swapped by name: x and y indices trade places */
    g_autoptr(GString) swapped = g_string_new(NULL);
    g_autofree char *w2 = NULL, *x2 = NULL, *y2 = NULL;
    ck_assert(
        paro_plot_best_map(path, "model", "training.accumulation", swapped, &w2, &x2, &y2, NULL));
    ck_assert(strstr(swapped->str, "\n1\t0\t1\t0.250000\ty\t1\tzero-2\n") != NULL);
}
END_TEST

START_TEST(best_map_tight_wins_last)
{
    /* sweep-tight.csv, worked by hand (decision 84: a tight row wins only where no row fits
     * with margin; the margin is to the runner-up of the same kind):
     *   point 0 (1, a): zero-2 3.0 and IIG 4.5 with margin, NII 2.0 tight -> zero-2,
     *                   4.5/3 - 1 = 0.5 (NII, faster, does not win)
     *   point 1 (1, b): NII 2.0 and NNG 2.5 tight, ddp out of memory     -> NII, 0.25 */
    g_autofree char *path = paro_test_path("tests/data/plot/sweep-tight.csv");
    g_autoptr(GString) tsv = g_string_new(NULL);
    g_autofree char *winners = NULL, *x = NULL, *y = NULL;
    g_autoptr(GError) error = NULL;
    ck_assert_msg(paro_plot_best_map(path, NULL, NULL, tsv, &winners, &x, &y, &error), "%s",
                  error ? error->message : "");
    ck_assert_str_eq(tsv->str,
                     "# x_index\ty_index\twinner_index\tmargin\tx_value\ty_value\twinner\n"
                     "0\t0\t0\t0.500000\t1\ta\tzero-2\n"
                     "0\t1\t1\t0.250000\t1\tb\tNII\n");
    ck_assert_str_eq(winners, "zero-2 NII");
}
END_TEST

START_TEST(best_map_needs_two_axes)
{
    g_autofree char *path = paro_test_path("tests/data/plot/sweep-3axes.csv");
    g_autoptr(GString) tsv = g_string_new(NULL);
    g_autofree char *winners = NULL, *x = NULL, *y = NULL;
    g_autoptr(GError) error = NULL;
    /* three varied axes and no choice: refused at the header */
    ck_assert(!paro_plot_best_map(path, NULL, NULL, tsv, &winners, &x, &y, &error));
    expect_located(error, PARO_CONFIG_ERROR_CONSTRAINT, "sweep-3axes.csv", 1, 1);
    g_clear_error(&error);
    /* two chosen, but the third varies between points 0 and 1: the same cell twice */
    g_string_truncate(tsv, 0);
    ck_assert(!paro_plot_best_map(path, "a", "b", tsv, &winners, &x, &y, &error));
    expect_located(error, PARO_CONFIG_ERROR_CONSTRAINT, "sweep-3axes.csv", 3, 1);
    g_clear_error(&error);
    ck_assert(!paro_plot_best_map(path, "a", "nodes", tsv, &winners, &x, &y, &error));
    expect_located(error, PARO_CONFIG_ERROR_MISSING_KEY, "sweep-3axes.csv", 1, 1);
}
END_TEST

START_TEST(distinct_in_first_seen_order)
{
    g_autofree char *path = paro_test_path("tests/data/plot/sweep-2x2.csv");
    g_autofree char *names = paro_plot_distinct(path, "name", NULL);
    ck_assert_str_eq(names, "NII zero-2 IIG");
    ck_assert_int_eq(paro_plot_kind_from_name("best-map"), PARO_PLOT_BEST_MAP);
    ck_assert_int_eq(paro_plot_kind_from_name("pie"), -1);
    ck_assert_int_eq(paro_plot_kind_from_name("plan-scaling"), PARO_PLOT_PLAN_SCALING);
}
END_TEST

START_TEST(plan_scaling_best_per_strategy)
{
    /* plan-3sizes.csv: three plans concatenated (8, 32, then 16 GPUs), each with its header.
     * Worked by hand: a strategy's point is its least time_train among rows that fit and
     * are not tight, the first row on a tie; days = time_train / 86400; GPU-hours as given
     * (gpus x time_train / 3600 in the fixture: 8 x 172800 / 3600 = 384); exact when within
     * 5% of the best at its GPU count (plan kept every row that could beat it there).
     *   8 GPUs:  NNG 172800 s (line 2, not its 190080 s row) = 2 days, 384 GPU-h;
     *            NII 172800 s = 2 days (a tie: the best is NNG, first);
     *            zero++ 86400 s is tight and GGG's 43200 s does not fit: neither drawn
     *   32 GPUs: NII 43200 s = 0.5 days (tp4 cp2 pp2 interleaved v2), the best;
     *            NNG 64800 s = 0.75 days, 576 GPU-h, 1.5 x the best: not exact;
     *            zero++ 86400 s = 1 day, 768 GPU-h, 2 x: not exact
     *   16 GPUs: NNG 86400 s = 1 day, the best; NII 95040 s = 1.1 days, 422.4 GPU-h (ep4),
     *            1.1 x: not exact; zero++ 90720 s = 1.05 days, 403.2 GPU-h: exact at the
     *            window's edge
     * Strategies in order of their first row that fits with the headroom: NNG, NII, zero++
     * (zero++'s tight row at 8 GPUs comes earlier but does not count). Each block sorted by
     * GPUs; the last block is the best at each count. */
    g_autofree char *path = paro_test_path("tests/data/plot/plan-3sizes.csv");
    g_autoptr(GString) tsv = g_string_new(NULL);
    g_autofree char *names = NULL;
    g_autoptr(GError) error = NULL;
    ck_assert_msg(paro_plot_plan_scaling(path, NULL, tsv, &names, &error), "%s",
                  error ? error->message : "");
    ck_assert_str_eq(tsv->str, "# gpus\tstrategy_index\tstrategy\tdays\tgpu_hours\texact\tlayout\n"
                               "8\t0\tNNG\t2\t384\t1\ttp2 b1 A16\n"
                               "16\t0\tNNG\t1\t384\t1\ttp4 b1 A16\n"
                               "32\t0\tNNG\t0.75\t576\t0\ttp8 b1 A32\n"
                               "\n\n"
                               "8\t1\tNII\t2\t384\t1\ttp2 pp2 1f1b b1 A16\n"
                               "16\t1\tNII\t1.1\t422.4\t0\ttp4 ep4 b1 A16\n"
                               "32\t1\tNII\t0.5\t384\t1\ttp4 cp2 pp2 interleaved v2 b1 A32\n"
                               "\n\n"
                               "16\t2\tzero++\t1.05\t403.2\t1\ttp4 b1 A16\n"
                               "32\t2\tzero++\t1\t768\t0\ttp8 b1 A64\n"
                               "\n\n"
                               "8\t0\tNNG\t2\t384\t1\ttp2 b1 A16\n"
                               "16\t0\tNNG\t1\t384\t1\ttp4 b1 A16\n"
                               "32\t1\tNII\t0.5\t384\t1\ttp4 cp2 pp2 interleaved v2 b1 A32\n");
    ck_assert_str_eq(names, "NNG NII zero++");
    /* the window is plan's (plot does not include plan.h) */
    ck_assert(PARO_PLOT_PLAN_WINDOW == PARO_PLAN_WINDOW);

    /* named by alias (zero-1 is NNG) and in the order given; the best at 32 GPUs, NII, is
     * not drawn: index -1, still circled */
    g_autoptr(GString) some = g_string_new(NULL);
    g_autofree char *some_names = NULL;
    ck_assert(paro_plot_plan_scaling(path, "zero++, zero-1,NNG", some, &some_names, NULL));
    ck_assert_str_eq(some_names, "zero++ NNG");
    ck_assert(g_str_has_prefix(some->str, "# gpus\tstrategy_index\tstrategy\tdays\tgpu_hours\t"
                                          "exact\tlayout\n16\t0\tzero++\t1.05\t403.2\t1\ttp4 b1 "
                                          "A16\n32\t0\tzero++\t1\t768\t0\ttp8 b1 A64\n\n\n"
                                          "8\t1\tNNG\t2\t384\t1\ttp2 b1 A16\n"));
    ck_assert(g_str_has_suffix(some->str, "\n\n\n8\t1\tNNG\t2\t384\t1\ttp2 b1 A16\n"
                                          "16\t1\tNNG\t1\t384\t1\ttp4 b1 A16\n"
                                          "32\t-1\tNII\t0.5\t384\t1\ttp4 cp2 pp2 interleaved v2 "
                                          "b1 A32\n"));
}
END_TEST

/* The plan-scaling table of @text (a CSV written to a temporary file): fails, located. */
static void expect_plan_refused(const char *text, const char *strategies, int code, int line,
                                int column)
{
    g_autofree char *path = NULL;
    int fd = g_file_open_tmp("paro-plan-XXXXXX.csv", &path, NULL);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert(g_file_set_contents(path, text, -1, NULL));
    g_autoptr(GString) tsv = g_string_new(NULL);
    g_autofree char *names = NULL;
    g_autoptr(GError) error = NULL;
    gboolean ok = paro_plot_plan_scaling(path, strategies, tsv, &names, &error);
    g_unlink(path);
    ck_assert_msg(!ok, "accepted: %s", text);
    expect_located(error, code, ".csv", line, column);
}

START_TEST(plan_scaling_errors_are_located)
{
#define HEAD                                                                                       \
    "name,fits,tight,gpus,time_train,gpu_hours,tp,pp,cp,ep,schedule,virtual,micro_batch,"          \
    "accumulation\n"
#define KNOBS ",1,1,1,1,1f1b,1,1,8\n"
    /* a column missing: at the header */
    expect_plan_refused("name,fits,gpus,time_train,gpu_hours\nNNG,true,8,3600,8\n", NULL,
                        PARO_CONFIG_ERROR_MISSING_KEY, 1, 1);
    /* 'yes' for fits: line 2, column 5 (after "NNG,") */
    expect_plan_refused(HEAD "NNG,yes,false,8,3600,8" KNOBS, NULL, PARO_CONFIG_ERROR_TYPE, 2, 5);
    /* half a GPU count and none: column 15 (after "NNG,true,false,") */
    expect_plan_refused(HEAD "NNG,true,false,8,3600,8" KNOBS "NNG,true,false,8.5,3600,8" KNOBS,
                        NULL, PARO_CONFIG_ERROR_RANGE, 3, 16);
    expect_plan_refused(HEAD "NNG,true,false,0,3600,8" KNOBS, NULL, PARO_CONFIG_ERROR_RANGE, 2, 16);
    /* no time to train, or GPU-hours below 0: columns 18 and 23 */
    expect_plan_refused(HEAD "NNG,true,false,8,0,8" KNOBS, NULL, PARO_CONFIG_ERROR_RANGE, 2, 18);
    expect_plan_refused(HEAD "NNG,true,false,8,3600,-8" KNOBS, NULL, PARO_CONFIG_ERROR_RANGE, 2,
                        23);
    expect_plan_refused(HEAD "NNG,true,false,8,nan,8" KNOBS, NULL, PARO_CONFIG_ERROR_RANGE, 2, 18);
    /* a strategy name the script could not take as one word: line 2, column 1 */
    expect_plan_refused(HEAD "N G,true,false,8,3600,8" KNOBS, NULL, PARO_CONFIG_ERROR_TYPE, 2, 1);
    /* a second header unlike the first (fits and tight swapped): line 3, at 'tight' */
    expect_plan_refused(HEAD "NNG,true,false,8,3600,8" KNOBS
                             "name,tight,fits,gpus,time_train,gpu_hours,tp,pp,cp,ep,schedule,"
                             "virtual,micro_batch,accumulation\n",
                        NULL, PARO_CONFIG_ERROR_CONSTRAINT, 3, 6);
    /* nothing fits with the headroom (one tight, one out of memory), and no rows at all */
    expect_plan_refused(HEAD "NNG,true,true,8,3600,8" KNOBS "GGG,false,false,8,3600,8" KNOBS, NULL,
                        PARO_CONFIG_ERROR_CONSTRAINT, 2, 1);
    expect_plan_refused(HEAD HEAD, NULL, PARO_CONFIG_ERROR_CONSTRAINT, 2, 1);
    /* a strategy named that has no row fitting with the headroom (GGG does not fit) */
    expect_plan_refused(HEAD "NNG,true,false,8,3600,8" KNOBS "GGG,false,false,8,3600,8" KNOBS,
                        "NNG,zero-3", PARO_CONFIG_ERROR_CONSTRAINT, 1, 1);
#undef HEAD
#undef KNOBS
}
END_TEST

static Suite *plot_suite(void)
{
    Suite *s = suite_create("plot");
    TCase *tc = tcase_create("plot");
    tcase_add_test(tc, csv_reader);
    tcase_add_test(tc, csv_errors_are_located);
    tcase_add_test(tc, csv_quoted_line_breaks);
    tcase_add_test(tc, best_map_winners_and_margins);
    tcase_add_test(tc, best_map_tight_wins_last);
    tcase_add_test(tc, best_map_needs_two_axes);
    tcase_add_test(tc, distinct_in_first_seen_order);
    tcase_add_test(tc, plan_scaling_best_per_strategy);
    tcase_add_test(tc, plan_scaling_errors_are_located);
    suite_add_tcase(s, tc);
    return s;
}

PARO_CHECK_MAIN(plot_suite)
