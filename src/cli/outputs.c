/* SPDX-License-Identifier: MIT */
/* Output files of the commands: every -o, --trace, --csv goes through paro_file_write
 * (core/files.h), with the command's inputs, so that no command overwrites what it reads
 * or replaces a device node; and the opening of a scenario for the commands that write
 * such files. */
#include "cli/cli.h"

#include <stdio.h>
#include <string.h>

#include "core/files.h"
#include "run/run.h"
#include "scenario/scenario.h"
#include "scenario/workload.h"

static void add_unique(GPtrArray *list, const char *path)
{
    if (path == NULL || path[0] == '\0')
        return;
    for (guint i = 0; i < list->len; i++)
        if (strcmp(g_ptr_array_index(list, i), path) == 0)
            return;
    g_ptr_array_add(list, g_strdup(path));
}

GStrv paro_cli_scenario_inputs(const char *scenario_path, const char *const *sets,
                               const char *const *more)
{
    GPtrArray *list = g_ptr_array_new();
    add_unique(list, scenario_path);
    /* The files it references: loaded again, errors ignored (the command reports them). */
    g_autoptr(ParoScenario) s = paro_scenario_load(scenario_path, sets, NULL);
    if (s != NULL) {
        add_unique(list, s->model->source_path);
        add_unique(list, s->topology->source_path);
        add_unique(list, s->calibration.path);
    }
    for (int i = 0; sets && sets[i]; i++) {
        const char *eq = strchr(sets[i], '=');
        if (eq && (g_str_has_prefix(sets[i], "model=") || g_str_has_prefix(sets[i], "topology=") ||
                   g_str_has_prefix(sets[i], "calibration=")))
            add_unique(list, eq + 1);
    }
    for (int i = 0; more && more[i]; i++)
        add_unique(list, more[i]);
    g_ptr_array_add(list, NULL);
    return (GStrv)g_ptr_array_free(list, FALSE);
}

ParoRun *paro_cli_open_run(const char *command, const char *path, const char *const *sets,
                           const char *output, guint n_strategies, gboolean trace,
                           gboolean extrapolate, GStrv *out_inputs)
{
    *out_inputs = paro_cli_scenario_inputs(path, sets, NULL);
    if (!paro_cli_check_output(command, output, (const char *const *)*out_inputs))
        return NULL;
    g_autoptr(GError) error = NULL;
    ParoScenario *scenario = paro_scenario_load(path, sets, &error);
    if (scenario == NULL) {
        paro_cli_report_error(error, sets, NULL);
        return NULL;
    }
    g_autoptr(ParoRun) run = paro_run_new(scenario, NULL);
    if (!paro_workload_check(scenario, n_strategies, trace, extrapolate, &error)) {
        paro_cli_report_error(error, sets, NULL);
        return NULL;
    }
    return g_steal_pointer(&run);
}

gboolean paro_cli_check_output(const char *command, const char *path, const char *const *inputs)
{
    g_autoptr(GError) error = NULL;
    if (path == NULL || paro_file_check_output(path, inputs, &error))
        return TRUE;
    g_printerr("parosim %s: error: %s\n", command, error->message);
    return FALSE;
}

gboolean paro_cli_write_parts(const char *command, const char *path, const ParoFilePart *parts,
                              guint n_parts, const char *const *inputs)
{
    if (path == NULL) {
        gboolean ok = TRUE;
        for (guint i = 0; ok && i < n_parts; i++)
            ok = fwrite(parts[i].data, 1, parts[i].length, stdout) == parts[i].length;
        if (ok && fflush(stdout) == 0)
            return TRUE;
        g_printerr("parosim %s: error: cannot write the output\n", command);
        return FALSE;
    }
    g_autoptr(GError) error = NULL;
    if (paro_file_write_parts(path, parts, n_parts, inputs, &error))
        return TRUE;
    g_printerr("parosim %s: error: %s\n", command, error->message);
    return FALSE;
}

gboolean paro_cli_write_file(const char *command, const char *path, const GString *text,
                             const char *const *inputs)
{
    ParoFilePart part = {text->str, text->len};
    return paro_cli_write_parts(command, path, &part, 1, inputs);
}
