/* SPDX-License-Identifier: MIT */
/* The public API's inputs (parosim.h, issue #42): an empty strategy list is refused with
 * the CLI's message for `--strategies ""`, and the label of YAML text only names it in
 * messages: references resolve against base_dir whatever the label says (slashes, "..",
 * an absolute path). */
#include <glib.h>
#include <parosim.h>
#include <string.h>

#include "check-main.h"

#define NO_STRATEGY "--strategies names no strategy (a triple such as NIG, an alias, or all)"

static const char *const scenario_file = "scenarios/llama-7b_a100x8-100g_n32.yaml";

static ParosimScenario *load_file(void)
{
    g_autofree char *path = paro_test_path(scenario_file);
    char *error = NULL;
    ParosimScenario *s = parosim_scenario_load(path, NULL, &error);
    ck_assert_msg(s != NULL, "%s", error);
    return s;
}

START_TEST(empty_strategies_refused)
{
    ParosimScenario *s = load_file();
    char *error = NULL;
    ck_assert_ptr_null(parosim_run(s, "", "json", &error));
    ck_assert_str_eq(error, NO_STRATEGY);
    parosim_free(error);
    error = NULL;
    ParosimStepRow *rows = NULL;
    size_t n = 0;
    ck_assert_int_eq(parosim_run_rows(s, "", &rows, &n, &error), -1);
    ck_assert_str_eq(error, NO_STRATEGY);
    ck_assert_ptr_null(rows);
    parosim_free(error);
    parosim_scenario_free(s);
}
END_TEST

static const char *const labels[] = {
    "runs/today", "runs/../today", "..", "/etc/passwd", "../../..", "a/", ""};

/* The shipped scenario's text under each label, from its own folder: the run the file
 * gives, byte for byte. */
START_TEST(label_does_not_move_references)
{
    g_autofree char *path = paro_test_path(scenario_file);
    g_autofree char *dir = g_path_get_dirname(path);
    g_autofree char *text = NULL;
    ck_assert(g_file_get_contents(path, &text, NULL, NULL));
    ParosimScenario *file = load_file();
    char *error = NULL;
    char *want = parosim_run(file, "zero-3,NII", "json", &error);
    ck_assert_msg(want != NULL, "%s", error);
    parosim_scenario_free(file);

    const char *label = labels[_i];
    ParosimScenario *s = parosim_scenario_load_yaml(text, dir, label, NULL, &error);
    ck_assert_msg(s != NULL, "label '%s': %s", label, error);
    char *got = parosim_run(s, "zero-3,NII", "json", &error);
    ck_assert_msg(got != NULL, "label '%s': %s", label, error);
    ck_assert_str_eq(got, want);
    parosim_free(got);
    parosim_free(want);
    parosim_scenario_free(s);
}
END_TEST

/* A mistake in the text is located at <label>, the label as written. */
START_TEST(label_names_the_text)
{
    const char *text = "kind: scenario\nschema: 1\nname: x\nmodel: ../models/llama-7b.yaml\n"
                       "topology: ../topologies/a100x8-100g.yaml\ntraining:\n  accumulaton: 3\n";
    g_autofree char *dir = paro_test_path("scenarios");
    char *error = NULL;
    ck_assert_ptr_null(parosim_scenario_load_yaml(text, dir, "runs/../today", NULL, &error));
    const char *want = "<runs/../today>:7:3: unknown key 'accumulaton'";
    ck_assert_msg(g_str_has_prefix(error, want), "%s", error);
    parosim_free(error);
}
END_TEST

static Suite *api_inputs_suite(void)
{
    Suite *s = suite_create("api-inputs");
    TCase *tc = tcase_create("inputs");
    tcase_add_test(tc, empty_strategies_refused);
    tcase_add_loop_test(tc, label_does_not_move_references, 0, G_N_ELEMENTS(labels));
    tcase_add_test(tc, label_names_the_text);
    suite_add_tcase(s, tc);
    return s;
}

PARO_CHECK_MAIN(api_inputs_suite)
