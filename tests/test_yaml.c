/* SPDX-License-Identifier: MIT */
/* The located YAML layer: locations are 1-based, duplicates are refused, and the
 * bad-input corpus (tests/data/bad) fails with the code and location each file states
 * on its first line ("# expect: CODE LINE:COLUMN [FILE]"); tests/data/good must load. */
#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "check-main.h"
#include "scenario/scenario.h"
#include "yaml/loaders.h"
#include "yaml/yaml.h"

START_TEST(yaml_locations_are_one_based)
{
    const char *text = "kind: model\nparallelism:\n  tp: 8\n";
    g_autoptr(ParoNode) root = paro_yaml_load_data(text, strlen(text), "x.yaml", NULL);
    ck_assert_ptr_nonnull(root);
    const ParoNode *par = paro_node_lookup(root, "parallelism");
    const ParoNode *key = paro_node_lookup_key(par, "tp");
    const ParoNode *value = paro_node_lookup(par, "tp");
    ck_assert_int_eq(key->line, 3);
    ck_assert_int_eq(key->column, 3);
    ck_assert_int_eq(value->column, 7);
    ck_assert_str_eq(value->source, "x.yaml");
}
END_TEST

START_TEST(yaml_duplicate_key)
{
    const char *text = "a: 1\nb:\n  c: 2\n  c: 3\n";
    g_autoptr(GError) error = NULL;
    g_autoptr(ParoNode) root = paro_yaml_load_data(text, strlen(text), NULL, &error);
    ck_assert_ptr_null(root);
    ck_assert(g_error_matches(error, PARO_CONFIG_ERROR, PARO_CONFIG_ERROR_DUPLICATE_KEY));
    const ParoConfigErrorPrivate *loc = paro_config_error_get_location(error);
    ck_assert_int_eq(loc->line, 4);
    ck_assert_int_eq(loc->column, 3);
    ck_assert_str_eq(error->message, "<data>:4:3: duplicate key 'c' (first at 3:3)");
}
END_TEST

START_TEST(yaml_syntax_error_message)
{
    const char *text = "a: [1, 2\nb: 3\n";
    g_autoptr(GError) error = NULL;
    g_autoptr(ParoNode) root = paro_yaml_load_data(text, strlen(text), "bad.yaml", &error);
    ck_assert_ptr_null(root);
    ck_assert(g_error_matches(error, PARO_CONFIG_ERROR, PARO_CONFIG_ERROR_SYNTAX));
    ck_assert_msg(g_str_has_prefix(error->message, "bad.yaml:2:2: did not find expected ','"), "%s",
                  error->message);
}
END_TEST

START_TEST(yaml_alias_bomb_is_bounded)
{
    /* A billion-laughs document expands past the node limit and fails cleanly. */
    GString *s = g_string_new("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for (int i = 1; i < 9; i++) {
        g_string_append_printf(s, "a%d: &a%d [", i, i);
        for (int j = 0; j < 10; j++)
            g_string_append_printf(s, "%s*a%d", j ? ", " : "", i - 1);
        g_string_append(s, "]\n");
    }
    g_autoptr(GError) error = NULL;
    g_autoptr(ParoNode) root = paro_yaml_load_data(s->str, s->len, NULL, &error);
    g_string_free(s, TRUE);
    ck_assert_ptr_null(root);
    ck_assert(g_error_matches(error, PARO_CONFIG_ERROR, PARO_CONFIG_ERROR_RANGE));
}
END_TEST

/* ---- the corpus ---- */

static GPtrArray *list_dir(const char *sub)
{
    g_autofree char *dir = paro_test_path(sub);
    /* Runs while the suite is built, outside any test: Check's asserts are not usable. */
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    if (d == NULL)
        g_error("cannot open %s (is PARO_SOURCE_ROOT set?)", dir);
    GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
    const char *name;
    while ((name = g_dir_read_name(d)) != NULL)
        if (g_str_has_suffix(name, ".yaml") || g_str_has_suffix(name, ".json"))
            g_ptr_array_add(files, g_build_filename(dir, name, NULL));
    /* Directory order is unspecified; the test order must not be. */
    g_ptr_array_sort(files, (GCompareFunc)g_strcmp0);
    return files;
}

static GPtrArray *bad_files, *good_files;

/* Loads @path with the loader its name says: model-*, topology-*, else a scenario. */
static gboolean load_any(const char *path, GError **error)
{
    g_autofree char *base = g_path_get_basename(path);
    if (g_str_has_prefix(base, "model-")) {
        g_autoptr(ParoModel) m = paro_model_load(path, error);
        return m != NULL;
    }
    if (g_str_has_prefix(base, "topology-")) {
        g_autoptr(ParoTopology) t = paro_topology_load(path, error);
        return t != NULL;
    }
    g_autoptr(ParoScenario) s = paro_scenario_load(path, NULL, error);
    return s != NULL;
}

START_TEST(yaml_bad_corpus)
{
    const char *path = g_ptr_array_index(bad_files, _i);
    g_autofree char *contents = NULL;
    ck_assert(g_file_get_contents(path, &contents, NULL, NULL));
    char code_name[32] = "", file[256] = "";
    int line = 0, column = 0;
    const char *expect = strstr(contents, "# expect: ");
    ck_assert_msg(expect != NULL, "%s has no '# expect:' line", path);
    g_autofree char *expect_line = g_strndup(expect, strcspn(expect, "\n"));
    int fields = sscanf(expect_line, "# expect: %31s %d:%d %255s", code_name, &line, &column, file);
    ck_assert_msg(fields >= 3, "%s: malformed '# expect:' line", path);
    int code = paro_config_error_code_from_name(code_name);
    ck_assert_msg(code >= 0, "%s: unknown code %s", path, code_name);

    g_autoptr(GError) error = NULL;
    ck_assert_msg(!load_any(path, &error), "%s loaded but should fail", path);
    ck_assert_msg(g_error_matches(error, PARO_CONFIG_ERROR, code), "%s: want %s, got %s: %s", path,
                  code_name,
                  error->domain == PARO_CONFIG_ERROR ? paro_config_error_code_name(error->code)
                                                     : "another domain",
                  error->message);
    const ParoConfigErrorPrivate *loc = paro_config_error_get_location(error);
    ck_assert_msg(loc->line == line && loc->column == column, "%s: want %d:%d, got %d:%d (%s)",
                  path, line, column, loc->line, loc->column, error->message);
    g_autofree char *got_base = g_path_get_basename(loc->file);
    g_autofree char *want_base = g_path_get_basename(fields == 4 ? file : path);
    ck_assert_msg(g_str_equal(got_base, want_base), "%s: error in %s, want %s", path, loc->file,
                  want_base);
    /* The message is clickable: it starts with the location. */
    g_autofree char *prefix = g_strdup_printf("%s:%d:%d: ", loc->file, line, column);
    ck_assert_msg(g_str_has_prefix(error->message, prefix), "%s", error->message);
}
END_TEST

START_TEST(yaml_good_corpus)
{
    const char *path = g_ptr_array_index(good_files, _i);
    g_autoptr(GError) error = NULL;
    ck_assert_msg(load_any(path, &error), "%s: %s", path, error ? error->message : "");
}
END_TEST

START_TEST(yaml_corpus_is_large_enough)
{
    ck_assert_int_ge(bad_files->len, 25);
}
END_TEST

static Suite *yaml_suite(void)
{
    bad_files = list_dir("tests/data/bad");
    good_files = list_dir("tests/data/good");
    Suite *s = suite_create("yaml");
    TCase *tc = tcase_create("tree");
    tcase_add_test(tc, yaml_locations_are_one_based);
    tcase_add_test(tc, yaml_duplicate_key);
    tcase_add_test(tc, yaml_syntax_error_message);
    tcase_add_test(tc, yaml_alias_bomb_is_bounded);
    suite_add_tcase(s, tc);
    TCase *corpus = tcase_create("corpus");
    tcase_add_test(corpus, yaml_corpus_is_large_enough);
    tcase_add_loop_test(corpus, yaml_bad_corpus, 0, (int)bad_files->len);
    tcase_add_loop_test(corpus, yaml_good_corpus, 0, (int)good_files->len);
    suite_add_tcase(s, corpus);
    return s;
}

PARO_CHECK_MAIN(yaml_suite)
