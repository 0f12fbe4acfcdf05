/* SPDX-License-Identifier: MIT */
/* plan split over ranks (issue #44 item 7, decision 90), without MPI: ranks 0 .. R-1 of a
 * search run one after the other in this process, each part passes through the text
 * that mpirun's ranks send (plan-part.c), the parts are merged and finished, and the
 * result must be the single search's, every field of every row bit for bit. The case is
 * the oracle's cluster at a fixed batch, where rank 1 of 2 finds the best and rank 0
 * prunes with a worse one, so that a finish with rank 0's best keeps rows the single
 * search does not. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "check-main.h"
#include "plan/plan.h"

#define ORACLE "tests/data/good/scenario-plan-oracle.yaml"

static gboolean same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* Every field of ParoPlanRow (plan/plan.h), doubles to the bit. */
static gboolean rows_equal(const ParoPlanRow *a, const ParoPlanRow *b)
{
    const ParoPlanLayout *x = &a->layout, *y = &b->layout;
    return a->strategy == b->strategy && x->tp == y->tp && x->cp == y->cp && x->ep == y->ep &&
           x->pp == y->pp && x->schedule == y->schedule && x->virtual_stages == y->virtual_stages &&
           x->layered == y->layered && x->uneven == y->uneven &&
           x->sequence_parallel == y->sequence_parallel && x->recompute == y->recompute &&
           x->recompute_every == y->recompute_every && x->offload == y->offload &&
           a->group == b->group && a->micro_batch == b->micro_batch &&
           a->accumulation == b->accumulation && a->algorithm == b->algorithm &&
           same_bits(a->batch_tokens, b->batch_tokens) && same_bits(a->step_s, b->step_s) &&
           same_bits(a->compute_bound_s, b->compute_bound_s) &&
           same_bits(a->bubble_bound_s, b->bubble_bound_s) && same_bits(a->floor_s, b->floor_s) &&
           same_bits(a->steps, b->steps) && same_bits(a->tokens, b->tokens) &&
           same_bits(a->train_s, b->train_s) && same_bits(a->gpu_hours, b->gpu_hours) &&
           same_bits(a->peak_bytes, b->peak_bytes) && a->fits == b->fits && a->tight == b->tight &&
           a->bound == b->bound;
}

static void assert_same_rows(const GArray *want, const GArray *got, const char *what)
{
    ck_assert_msg(want->len == got->len, "%s: %u rows, the single search %u", what, got->len,
                  want->len);
    for (guint i = 0; i < want->len; i++)
        ck_assert_msg(
            rows_equal(&g_array_index(want, ParoPlanRow, i), &g_array_index(got, ParoPlanRow, i)),
            "%s: row %u differs", what, i + 1);
}

/* Rank @rank of @ranks, its part as the text a rank sends and read back. */
static void search_rank(const char *path, int rank, int ranks, ParoPlanPart *part)
{
    ParoPlanRequest rq = {.batch_tokens = 32768, .jobs = 2, .rank = rank, .ranks = ranks};
    g_autoptr(GError) error = NULL;
    g_auto(ParoPlanPart) own = {NULL, INFINITY};
    ck_assert_msg(paro_plan_search_part(path, &rq, &own, &error), "%s", error->message);
    g_autofree char *text = paro_plan_part_to_text(&own);
    ck_assert_msg(paro_plan_part_from_text(text, part, &error), "%s", error->message);
    ck_assert_uint_eq(part->rows->len, own.rows->len);
    ck_assert(same_bits(part->best, own.best));
}

START_TEST(split_search_equals_one_search)
{
    g_autofree char *path = paro_test_path(ORACLE);
    ParoPlanRequest rq = {.batch_tokens = 32768, .jobs = 2};
    g_autoptr(GError) error = NULL;
    g_autoptr(GArray) one = paro_plan_search(path, &rq, &error);
    ck_assert_msg(one != NULL, "%s", error ? error->message : "");
    ck_assert_uint_gt(one->len, 100);
    for (int ranks = 2; ranks <= 3; ranks++) {
        g_auto(ParoPlanPart) merged = {NULL, INFINITY};
        double rank0_best = 0;
        for (int r = 0; r < ranks; r++) {
            g_auto(ParoPlanPart) part = {NULL, INFINITY};
            search_rank(path, r, ranks, &part);
            if (r == 0)
                rank0_best = part.best;
            paro_plan_part_merge(&merged, &part);
        }
        g_autoptr(GArray) rows = paro_plan_finish(&merged);
        g_autofree char *what = g_strdup_printf("%d ranks", ranks);
        assert_same_rows(one, rows, what);
        ck_assert(merged.best == g_array_index(one, ParoPlanRow, 0).train_s);
        if (ranks == 2) {
            /* the case this test is for: rank 0 pruned with a worse best, and filtering
             * with it would print rows the single search leaves out */
            ck_assert(rank0_best > merged.best);
            ParoPlanPart wrong = {merged.rows, rank0_best};
            g_autoptr(GArray) more = paro_plan_finish(&wrong);
            ck_assert_uint_gt(more->len, one->len);
        }
    }
}
END_TEST

/* One row with every field set, numbers at their edges. */
static ParoPlanRow edge_row(void)
{
    ParoPlanRow r;
    memset(&r, 0, sizeof r);
    r.strategy = paro_strategy_get(paro_strategy_n_all() - 1);
    r.layout = (ParoPlanLayout){.tp = 8,
                                .cp = 2,
                                .ep = 4,
                                .pp = 3,
                                .schedule = PARO_PIPE_MODULAR,
                                .virtual_stages = 12,
                                .layered = TRUE,
                                .uneven = TRUE,
                                .sequence_parallel = TRUE,
                                .recompute = PARO_RECOMPUTE_FULL,
                                .recompute_every = 2,
                                .offload = 2};
    r.group = G_MAXINT64;
    r.micro_batch = -1;
    r.accumulation = 1024;
    r.algorithm = PARO_ALGO_HO_RING;
    r.batch_tokens = 0.1;
    r.step_s = -0.0;
    r.compute_bound_s = 4.9406564584124654e-324; /* the least subnormal */
    r.bubble_bound_s = G_MAXDOUBLE;
    r.floor_s = 1.0 / 3.0;
    r.steps = INFINITY;
    r.tokens = -INFINITY;
    r.train_s = 86400.000000000015;
    r.gpu_hours = 1e300;
    r.peak_bytes = 85899345920.0;
    r.fits = TRUE;
    r.tight = TRUE;
    r.bound = PARO_PLAN_BOUND_LAW;
    return r;
}

START_TEST(part_text_reads_back_bit_for_bit)
{
    g_auto(ParoPlanPart) part = {g_array_new(FALSE, FALSE, sizeof(ParoPlanRow)), 12345.678};
    ParoPlanRow r = edge_row();
    g_array_append_val(part.rows, r);
    r.strategy = paro_strategy_get(0);
    r.layout.schedule = PARO_PIPE_1F1B;
    r.fits = r.tight = FALSE;
    r.train_s = NAN;
    g_array_append_val(part.rows, r);
    g_autofree char *text = paro_plan_part_to_text(&part);
    g_auto(ParoPlanPart) back = {NULL, INFINITY};
    g_autoptr(GError) error = NULL;
    ck_assert_msg(paro_plan_part_from_text(text, &back, &error), "%s", error->message);
    ck_assert(same_bits(back.best, part.best));
    ck_assert_uint_eq(back.rows->len, 2);
    for (guint i = 0; i < 2; i++)
        ck_assert_msg(rows_equal(&g_array_index(part.rows, ParoPlanRow, i),
                                 &g_array_index(back.rows, ParoPlanRow, i)),
                      "row %u", i);
    /* a rank that found nothing fitting sends no rows and an infinite best */
    g_auto(ParoPlanPart) empty = {NULL, INFINITY}, empty_back = {NULL, 0};
    g_autofree char *none = paro_plan_part_to_text(&empty);
    ck_assert(paro_plan_part_from_text(none, &empty_back, NULL));
    ck_assert_uint_eq(empty_back.rows->len, 0);
    ck_assert(isinf(empty_back.best));
}
END_TEST

START_TEST(malformed_parts_are_refused_at_their_line)
{
    g_auto(ParoPlanPart) part = {g_array_new(FALSE, FALSE, sizeof(ParoPlanRow)), 1.0};
    ParoPlanRow r = edge_row();
    g_array_append_val(part.rows, r);
    g_autofree char *good = paro_plan_part_to_text(&part);
    g_auto(GStrv) lines = g_strsplit(good, "\n", -1);
    const char *row = lines[1];
    const char *after_strategy = strchr(row, ' ');
    g_autofree char *bad_strategy = g_strdup_printf("%s\n29%s\n", lines[0], after_strategy);
    g_autofree char *negative = g_strdup_printf("%s\n-1%s\n", lines[0], after_strategy);
    /* the 5th field after the strategy is the schedule */
    g_auto(GStrv) words = g_strsplit(row, " ", -1);
    g_free(words[5]);
    words[5] = g_strdup("9");
    g_autofree char *joined = g_strjoinv(" ", words);
    g_autofree char *bad_schedule = g_strdup_printf("%s\n%s\n", lines[0], joined);
    g_autofree char *short_row = g_strndup(good, strrchr(good, ' ') - good);
    g_autofree char *short_line = g_strconcat(short_row, "\n", NULL);
    g_autofree char *extra = g_strconcat(good, "0\n", NULL);
    g_autofree char *spaced = g_strdup_printf("%s\n%s \n", lines[0], row);
    const struct {
        const char *text;
        guint line;
    } bad[] = {
        {"", 1},
        {"best zz rows 0\n", 1},
        {"best 0 rows -1\n", 1},
        {"best 0 rows 0", 1},
        {"best 0 rows 1\n", 2},
        {bad_strategy, 2},
        {negative, 2},
        {bad_schedule, 2},
        {short_line, 2},
        {spaced, 2},
        {extra, 3},
    };
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_auto(ParoPlanPart) back = {NULL, INFINITY};
        g_autoptr(GError) error = NULL;
        ck_assert_msg(!paro_plan_part_from_text(bad[i].text, &back, &error), "case %u read", i);
        g_autofree char *want = g_strdup_printf("at its line %u", bad[i].line);
        ck_assert_msg(strstr(error->message, want) != NULL, "case %u: %s", i, error->message);
    }
}
END_TEST

static Suite *plan_ranks_suite(void)
{
    Suite *s = suite_create("plan_ranks");
    TCase *tc = tcase_create("plan_ranks");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, split_search_equals_one_search);
    tcase_add_test(tc, part_text_reads_back_bit_for_bit);
    tcase_add_test(tc, malformed_parts_are_refused_at_their_line);
    suite_add_tcase(s, tc);
    return s;
}

PARO_CHECK_MAIN(plan_ranks_suite)
