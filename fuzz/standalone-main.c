/* SPDX-License-Identifier: MIT */
/* A plain driver for the fuzz targets, so that their sources build with any C compiler
 * and replay a corpus without libFuzzer: each argument is a file, or a directory whose
 * files are run in name order. Used by the 'fuzz-regress' test suite. A crash, a failed
 * assertion or (under -Db_sanitize) a sanitizer report fails the run. */
#include <glib.h>
#include <stdint.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    gchar *data = NULL;
    gsize size = 0;
    GError *error = NULL;
    if (!g_file_get_contents(path, &data, &size, &error)) {
        fprintf(stderr, "%s\n", error->message);
        g_error_free(error);
        return 1;
    }
    /* A copy of exactly @size bytes, so that ASan catches reads past the input's end. */
    uint8_t *copy = g_memdup2(data, size);
    LLVMFuzzerTestOneInput(copy, size);
    g_free(copy);
    g_free(data);
    return 0;
}

int main(int argc, char **argv)
{
    int failed = 0, n = 0;
    for (int i = 1; i < argc; i++) {
        if (!g_file_test(argv[i], G_FILE_TEST_IS_DIR)) {
            failed |= run_file(argv[i]);
            n++;
            continue;
        }
        GDir *d = g_dir_open(argv[i], 0, NULL);
        GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
        const char *name;
        while (d && (name = g_dir_read_name(d)) != NULL)
            g_ptr_array_add(names, g_build_filename(argv[i], name, NULL));
        if (d)
            g_dir_close(d);
        g_ptr_array_sort(names, (GCompareFunc)g_strcmp0);
        for (guint j = 0; j < names->len; j++) {
            const char *path = g_ptr_array_index(names, j);
            if (g_file_test(path, G_FILE_TEST_IS_REGULAR)) {
                printf("# %s\n", path);
                fflush(stdout);
                failed |= run_file(path);
                n++;
            }
        }
        g_ptr_array_unref(names);
    }
    printf("%d input(s) run\n", n);
    return failed;
}
