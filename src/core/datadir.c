/* SPDX-License-Identifier: MIT */
/* The data folder (datadir.h). The binary's own path comes from /proc/self/exe (Linux, the
 * platform parosim is built for); elsewhere that candidate is skipped. */
#include "core/datadir.h"

#include <string.h>

#ifndef PARO_DATA_FROM_BINDIR
#define PARO_DATA_FROM_BINDIR "../share/parosim"
#endif
#ifndef PARO_SOURCE_DIR
#define PARO_SOURCE_DIR "."
#endif

static char *beside_binary(void)
{
    g_autofree char *exe = g_file_read_link("/proc/self/exe", NULL);
    if (exe == NULL)
        return NULL;
    g_autofree char *bindir = g_path_get_dirname(exe);
    return g_build_filename(bindir, PARO_DATA_FROM_BINDIR, NULL);
}

char *paro_data_dir(const char *probe)
{
    g_autofree char *installed = beside_binary();
    const char *candidates[] = {g_getenv("PAROSIM_DATA_DIR"), installed, PARO_SOURCE_DIR};
    for (guint i = 0; i < G_N_ELEMENTS(candidates); i++) {
        if (candidates[i] == NULL || *candidates[i] == '\0')
            continue;
        g_autofree char *path = g_build_filename(candidates[i], probe, NULL);
        if (g_file_test(path, G_FILE_TEST_IS_REGULAR))
            return g_strdup(candidates[i]);
    }
    return NULL;
}

char *paro_data_find(const char *folder, const char *name)
{
    if (strchr(name, '/') != NULL || g_file_test(name, G_FILE_TEST_EXISTS))
        return g_strdup(name);
    char *shipped = paro_data_find_shipped(folder, name);
    return shipped ? shipped : g_strdup(name);
}

char *paro_data_find_shipped(const char *folder, const char *name)
{
    if (strchr(name, '/') != NULL)
        return NULL;
    g_autofree char *yaml =
        g_str_has_suffix(name, ".yaml") ? g_strdup(name) : g_strconcat(name, ".yaml", NULL);
    const char *files[] = {name, yaml};
    for (guint i = 0; i < G_N_ELEMENTS(files); i++) {
        g_autofree char *probe = g_build_filename(folder, files[i], NULL);
        g_autofree char *dir = paro_data_dir(probe);
        if (dir)
            return g_build_filename(dir, probe, NULL);
    }
    return NULL;
}

char *paro_data_find_scenario(const char *name)
{
    return paro_data_find("scenarios", name);
}
