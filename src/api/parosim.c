/* SPDX-License-Identifier: MIT */
/* The public C API (parosim.h) over the run object (run/run.h) and the reports the CLI
 * prints (report/report.h), so the library's text is the CLI's, byte for byte. */
#include "api/parosim.h"

#include <string.h>

#include "report/report.h"
#include "run/run.h"
#include "scenario/workload.h"
#include "strategy/strategy.h"

struct ParosimScenario {
    ParoRun *run;
};

const char *parosim_version(void)
{
    return PARO_VERSION;
}

void parosim_free(void *pointer)
{
    g_free(pointer);
}

static void set_error(char **error, const char *message)
{
    if (error)
        *error = g_strdup(message);
}

static ParosimScenario *wrap(ParoScenario *scenario, GError *local, char **error)
{
    if (scenario == NULL) {
        set_error(error, local ? local->message : "the scenario could not be loaded");
        g_clear_error(&local);
        return NULL;
    }
    ParosimScenario *s = g_new0(ParosimScenario, 1);
    s->run = paro_run_new(scenario, NULL);
    return s;
}

ParosimScenario *parosim_scenario_load(const char *path, const char *const *overrides, char **error)
{
    if (path == NULL) {
        set_error(error, "no scenario path");
        return NULL;
    }
    GError *local = NULL;
    ParoScenario *scenario = paro_scenario_load(path, overrides, &local);
    return wrap(scenario, local, error);
}

ParosimScenario *parosim_scenario_load_yaml(const char *yaml, const char *base_dir,
                                            const char *label, const char *const *overrides,
                                            char **error)
{
    if (yaml == NULL) {
        set_error(error, "no YAML text");
        return NULL;
    }
    /* the label names the text in messages; references are found from base_dir alone */
    g_autofree char *name = g_strdup_printf("<%s>", label ? label : "yaml");
    GError *local = NULL;
    ParoScenario *scenario = paro_scenario_load_data(
        yaml, name, base_dir && *base_dir ? base_dir : ".", overrides, &local);
    return wrap(scenario, local, error);
}

void parosim_scenario_free(ParosimScenario *scenario)
{
    if (scenario == NULL)
        return;
    paro_run_free(scenario->run);
    g_free(scenario);
}

/* The strategies named as --strategies takes them (NULL or "all": every one). */
static GPtrArray *strategies_named(const char *text, char **error)
{
    g_autoptr(GError) local = NULL;
    GPtrArray *list = paro_strategy_list_parse(text, &local);
    if (list == NULL)
        set_error(error, local->message);
    return list;
}

/* The ranked results, refused beyond the CLI's work limits as `parosim run` refuses them. */
static GArray *simulate(ParosimScenario *scenario, const char *strategies, char **error)
{
    if (scenario == NULL) {
        set_error(error, "no scenario");
        return NULL;
    }
    g_autoptr(GPtrArray) chosen = strategies_named(strategies, error);
    if (chosen == NULL)
        return NULL;
    g_autoptr(GError) local = NULL;
    const ParoScenario *s = paro_run_get_scenario(scenario->run);
    if (!paro_workload_check(s, chosen->len, FALSE, TRUE, &local)) {
        set_error(error, local->message);
        return NULL;
    }
    ParoRunOptions options = PARO_RUN_OPTIONS_INIT;
    GArray *rows = paro_run_strategies(scenario->run, chosen, &options, &local);
    if (rows == NULL)
        set_error(error, local->message);
    return rows;
}

static int format_named(const char *name, char **error)
{
    for (int i = 0; paro_format_names[i]; i++)
        if (strcmp(paro_format_names[i], name ? name : "table") == 0)
            return i;
    set_error(error, "unknown format (known: table, json, csv)");
    return -1;
}

char *parosim_run(ParosimScenario *scenario, const char *strategies, const char *format,
                  char **error)
{
    int f = format_named(format, error);
    if (f < 0)
        return NULL;
    g_autoptr(GArray) rows = simulate(scenario, strategies, error);
    if (rows == NULL)
        return NULL;
    GString *out = g_string_new(NULL);
    paro_report_run(paro_run_get_derived(scenario->run), (const ParoStepResult *)rows->data,
                    rows->len, (ParoFormat)f, out);
    return g_string_free(out, FALSE);
}

int parosim_run_rows(ParosimScenario *scenario, const char *strategies, ParosimStepRow **rows,
                     size_t *n, char **error)
{
    if (rows == NULL || n == NULL) {
        set_error(error, "rows and n are needed");
        return -1;
    }
    g_autoptr(GArray) results = simulate(scenario, strategies, error);
    if (results == NULL)
        return -1;
    ParosimStepRow *out = g_new0(ParosimStepRow, results->len);
    for (guint i = 0; i < results->len; i++) {
        const ParoStepResult *r = &g_array_index(results, ParoStepResult, i);
        ParosimStepRow *o = &out[i];
        o->row_size = sizeof *o;
        g_strlcpy(o->strategy, r->strategy->name, sizeof o->strategy);
        o->rank = r->rank;
        o->fits = r->fits;
        o->step_s = paro_time_to_s(r->step);
        o->compute_s = r->compute_s;
        o->comm_s = r->comm_s;
        o->exposed_comm_s = r->exposed_comm_s;
        o->guideline_s = r->guideline_s;
        o->samples_per_s = r->samples_per_s;
        o->tokens_per_s = r->tokens_per_s;
        o->tflops_per_gpu = r->tflops_per_gpu;
        o->mfu = r->mfu;
        o->peak_bytes = r->peak_bytes;
        o->tight = r->tight;
        o->allocated_bytes = r->allocated_bytes;
        o->reserved_bytes = r->reserved_bytes;
    }
    *rows = out;
    *n = results->len;
    return 0;
}

char *parosim_strategies(ParosimScenario *scenario, const char *format, char **error)
{
    int f = format_named(format, error);
    if (f < 0)
        return NULL;
    if (scenario == NULL) {
        set_error(error, "no scenario");
        return NULL;
    }
    GString *out = g_string_new(NULL);
    paro_report_strategies(paro_run_get_guideline(scenario->run), (ParoFormat)f, out);
    return g_string_free(out, FALSE);
}
