/* SPDX-License-Identifier: MIT */
/* Shared helpers of the fuzz targets: one-time set-up (criticals and warnings fatal, as in
 * the test suites; GSL's aborting handler off), the repository root the targets read fixed
 * files from, and a per-process temporary directory for inputs that the API reads by path.
 * Header-only so that each target stays one .c file that builds with or without libFuzzer
 * (standalone-main.c). */
#pragma once

#include <glib.h>
#include <glib/gstdio.h>
#include <gsl/gsl_errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PARO_FUZZ_SOURCE_ROOT
#define PARO_FUZZ_SOURCE_ROOT "."
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The repository: $PARO_SOURCE_ROOT, else the source root meson compiled in. */
static inline const char *fuzz_source_root(void)
{
    const char *root = g_getenv("PARO_SOURCE_ROOT");
    return root && *root ? root : PARO_FUZZ_SOURCE_ROOT;
}

static char *fuzz_tmp_dir;

static void fuzz_remove_tree(const char *path)
{
    if (g_file_test(path, G_FILE_TEST_IS_DIR) && !g_file_test(path, G_FILE_TEST_IS_SYMLINK)) {
        GDir *d = g_dir_open(path, 0, NULL);
        const char *name;
        while (d && (name = g_dir_read_name(d)) != NULL) {
            char *child = g_build_filename(path, name, NULL);
            fuzz_remove_tree(child);
            g_free(child);
        }
        if (d)
            g_dir_close(d);
    }
    g_remove(path);
}

static void fuzz_cleanup(void)
{
    if (fuzz_tmp_dir)
        fuzz_remove_tree(fuzz_tmp_dir);
    g_clear_pointer(&fuzz_tmp_dir, g_free);
}

/* Once per process. Returns the temporary directory (kept until exit). */
static inline const char *fuzz_init(void)
{
    if (fuzz_tmp_dir == NULL) {
        /* A g_critical is a broken precondition inside the library: a bug, so a crash. */
        g_log_set_always_fatal(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
        gsl_set_error_handler_off();
        fuzz_tmp_dir = g_dir_make_tmp("parosim-fuzz-XXXXXX", NULL);
        g_assert(fuzz_tmp_dir != NULL);
        atexit(fuzz_cleanup);
    }
    return fuzz_tmp_dir;
}

/* (transfer full) path @name under the temporary directory. */
static inline char *fuzz_tmp_path(const char *name)
{
    return g_build_filename(fuzz_init(), name, NULL);
}

/* Writes @data to @path (directories made as needed). */
static inline void fuzz_write(const char *path, const uint8_t *data, size_t size)
{
    char *dir = g_path_get_dirname(path);
    g_mkdir_with_parents(dir, 0700);
    g_free(dir);
    gboolean ok = g_file_set_contents(path, (const char *)data, (gssize)size, NULL);
    g_assert(ok);
}

/* The path a scenario input is written to, TMP/scenarios/fuzz.yaml, where TMP/models,
 * TMP/topologies, TMP/validation (and TMP/ref: tests/data/ref) link to the repository's,
 * so the references the repository's scenarios make (../models/llama-7b.yaml,
 * ../validation/fits/...) resolve to fixed files while the scenario text is fuzzed. */
static inline const char *fuzz_scenario_path(void)
{
    static char *path;
    if (path != NULL)
        return path;
    const char *tmp = fuzz_init();
    /* name in TMP, directory in the repository */
    static const char *const links[][2] = {{"models", "models"},
                                           {"topologies", "topologies"},
                                           {"validation", "validation"},
                                           {"ref", "tests/data/ref"}};
    for (guint i = 0; i < G_N_ELEMENTS(links); i++) {
        char *target = g_build_filename(fuzz_source_root(), links[i][1], NULL);
        char *link = g_build_filename(tmp, links[i][0], NULL);
        int rc = symlink(target, link);
        g_assert(rc == 0);
        g_free(target);
        g_free(link);
    }
    path = g_build_filename(tmp, "scenarios", "fuzz.yaml", NULL);
    return path;
}

/* (transfer full) the input as a NUL-terminated string (cut at an embedded NUL). */
static inline char *fuzz_string(const uint8_t *data, size_t size)
{
    return g_strndup((const char *)data, size);
}

/* (transfer full) the input split into at most @max lines (the last keeps the rest). */
static inline char **fuzz_lines(const uint8_t *data, size_t size, int max)
{
    char *text = g_strndup((const char *)data, size);
    char **lines = g_strsplit(text, "\n", max);
    g_free(text);
    return lines;
}
