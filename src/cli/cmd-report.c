/* SPDX-License-Identifier: MIT */
/* `parosim report SCENARIO -o report.html`: the main job as one self-contained HTML page,
 * the ranking, the strategy bars, the memory timeline and Gantt chart of the best strategy
 * and of each one --strategy names, and the resolved parameters (report/report-html.c).
 * The figures are the plot scripts' SVGs (gnuplot), rendered in a temporary folder. */
#include "cli/cli.h"

#include <glib/gstdio.h>
#include <string.h>

#include "plot/plot.h"
#include "report/report.h"
#include "run/run.h"
#include "scenario/workload.h"
#include "strategy/strategy.h"

/* What the GPU holds with the caching allocator's reserve under @s's traced step: reserved
 * plus what lies outside the allocator (decision 94). */
static double traced_reserve(const GArray *traces, const ParoStrategy *s)
{
    for (guint i = 0; i < traces->len; i++) {
        const ParoStepResult *r = &g_array_index(traces, ParoStepResult, i);
        if (r->strategy == s)
            return r->reserved_bytes + r->outside_bytes;
    }
    return 0;
}

static const char report_help[] =
    "Simulates every strategy of the scenario (as `parosim run`) and writes one HTML page\n"
    "that opens without a network: the verdict, the ranked table (hover a row for its exact\n"
    "figures), the throughput and memory bars of every strategy (hover a bar for its step\n"
    "and peak), the memory timeline and Gantt chart of the best strategy's step and of each\n"
    "strategy --strategy names, and every resolved parameter. The figures need gnuplot;\n"
    "without it the page has the table and the parameters, and a warning says why.\n"
    "\n"
    "Examples:\n"
    "  parosim report scenarios/llama-7b_a100x8-100g_n32.yaml -o report.html\n"
    "  parosim report llama-7b_a100x8-100g_n32 --strategy zero-3 --set topology.nodes=8 \\\n"
    "      -o report.html";

/* Renders one figure into @dir (.svg with hover texts, or .png) and appends its bytes, size
 * (0 for an SVG) and caption; a failure is a warning (the page goes on without it). */
static void figure(ParoPlotRequest rq, const char *dir, const char *file, const char *caption,
                   GPtrArray *figures, GArray *sizes, GPtrArray *captions)
{
    g_autofree char *output = g_build_filename(dir, file, NULL);
    rq.output = output;
    rq.hover = g_str_has_suffix(file, ".svg");
    g_autoptr(GError) error = NULL;
    char *bytes = NULL;
    gsize size = 0;
    if (!paro_plot_render(&rq, &error) || !g_file_get_contents(output, &bytes, &size, &error)) {
        g_printerr("parosim report: warning: no figure '%s': %s\n", caption, error->message);
        return;
    }
    gsize png = rq.hover ? 0 : size;
    g_ptr_array_add(figures, bytes);
    g_array_append_val(sizes, png);
    g_ptr_array_add(captions, g_strdup(caption));
}

/* The '#' lines above the run table's column header. */
static char *run_header(const ParoScenarioDerived *d, const ParoStepResult *rows, guint n)
{
    g_autoptr(GString) table = g_string_new(NULL);
    paro_report_run(d, rows, n, PARO_FORMAT_TABLE, table);
    g_auto(GStrv) lines = g_strsplit(table->str, "\n", -1);
    GString *header = g_string_new(NULL);
    for (int i = 0; lines[i] && g_str_has_prefix(lines[i], "# "); i++)
        g_string_append_printf(header, "%s\n", lines[i] + 2);
    return g_string_free(header, FALSE);
}

static void remove_folder(const char *dir)
{
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    for (const char *name; d && (name = g_dir_read_name(d));) {
        g_autofree char *path = g_build_filename(dir, name, NULL);
        g_unlink(path);
    }
    g_rmdir(dir);
}

int paro_cmd_report(int argc, char **argv)
{
    g_auto(GStrv) sets = NULL, named = NULL;
    g_autofree char *output = NULL, *scripts = NULL;
    GOptionEntry entries[] = {
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "The HTML page to write", "FILE"},
        {"set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &sets, "Override a scenario value (repeatable)",
         "KEY=VALUE"},
        {"strategy", 0, 0, G_OPTION_ARG_STRING_ARRAY, &named,
         "Also the timeline and Gantt chart of this strategy (repeatable)", "NAME"},
        {"scripts", 0, 0, G_OPTION_ARG_FILENAME, &scripts, "Folder of the gnuplot scripts", "DIR"},
        {NULL},
    };
    if (!paro_cli_parse_options("report", "SCENARIO.yaml -o FILE.html", report_help, entries, &argc,
                                &argv))
        return PARO_EXIT_USAGE;
    g_autoptr(GError) error = NULL;
    if (argc != 2 || output == NULL)
        return paro_cli_usage("report", "expected SCENARIO.yaml -o FILE.html");
    g_autoptr(GPtrArray) traced = g_ptr_array_new();
    for (int i = 0; named && named[i]; i++) {
        const ParoStrategy *s = paro_strategy_lookup(named[i]);
        if (s == NULL) {
            g_printerr("parosim report: unknown strategy '%s'\n", named[i]);
            return PARO_EXIT_USAGE;
        }
        g_ptr_array_add(traced, (gpointer)s);
    }
    g_autoptr(GPtrArray) all = paro_strategy_list_parse(NULL, NULL);
    g_auto(GStrv) inputs = NULL;
    g_autoptr(ParoRun) run = paro_cli_open_run("report", argv[1], (const char *const *)sets, output,
                                               all->len + traced->len + 1, TRUE, TRUE, &inputs);
    if (run == NULL)
        return PARO_EXIT_ERROR;
    const ParoScenario *scenario = paro_run_get_scenario(run);
    ParoRunOptions options = PARO_RUN_OPTIONS_INIT;
    g_autoptr(GArray) rows = paro_run_strategies(run, all, &options, &error);
    if (rows == NULL) {
        g_printerr("parosim report: error: %s\n", error->message);
        return PARO_EXIT_ERROR;
    }
    const ParoStepResult *ranked = (const ParoStepResult *)rows->data;
    const ParoStepResult *best = rows->len && ranked[0].fits ? &ranked[0] : NULL;
    if (best)
        g_ptr_array_insert(traced, 0, (gpointer)best->strategy);
    /* the traced strategies again, with their tasks and memory timelines */
    options.keep_trace = TRUE;
    g_autoptr(GArray) traces =
        traced->len ? paro_run_strategies(run, traced, &options, &error) : NULL;
    if (traced->len && traces == NULL) {
        g_printerr("parosim report: error: %s\n", error->message);
        return PARO_EXIT_ERROR;
    }
    g_autofree char *dir = g_dir_make_tmp("parosim-report-XXXXXX", &error);
    if (dir == NULL) {
        g_printerr("parosim report: error: %s\n", error->message);
        return PARO_EXIT_ERROR;
    }
    g_autofree char *csv_path = g_build_filename(dir, "run.csv", NULL);
    g_autofree char *trace_path = g_build_filename(dir, "trace.tsv", NULL);
    g_autoptr(GString) csv = g_string_new(NULL), trace = g_string_new(NULL);
    paro_report_run(paro_run_get_derived(run), ranked, rows->len, PARO_FORMAT_CSV, csv);
    if (traces)
        paro_report_trace((const ParoStepResult *)traces->data, traces->len, FALSE, trace);
    g_autoptr(GPtrArray) figures = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GPtrArray) captions = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GArray) sizes = g_array_new(FALSE, FALSE, sizeof(gsize));
    if (g_file_set_contents(csv_path, csv->str, (gssize)csv->len, &error) &&
        g_file_set_contents(trace_path, trace->str, (gssize)trace->len, &error)) {
        ParoPlotRequest rq = {
            .kind = PARO_PLOT_STRATEGIES, .input = csv_path, .scripts_dir = scripts};
        figure(rq, dir, "strategies.svg", "Throughput and peak memory of every strategy", figures,
               sizes, captions);
        for (guint i = 0; traces && i < traced->len; i++) {
            const ParoStrategy *s = g_ptr_array_index(traced, i);
            if (i > 0 && s == best->strategy)
                continue; /* named and best: shown once */
            ParoPlotRequest timeline = {.kind = PARO_PLOT_MEMORY_TIMELINE,
                                        .input = trace_path,
                                        .strategy = s->name,
                                        .capacity_bytes = scenario->topology->gpu.memory_bytes,
                                        .reserved_bytes = traced_reserve(traces, s),
                                        .scripts_dir = scripts};
            ParoPlotRequest gantt = {.kind = PARO_PLOT_GANTT,
                                     .input = trace_path,
                                     .strategy = s->name,
                                     .scripts_dir = scripts};
            g_autofree char *mem_file = g_strdup_printf("memory-%u.png", i);
            g_autofree char *gantt_file = g_strdup_printf("gantt-%u.png", i);
            const char *which = i == 0 && best ? "the best strategy, " : "";
            g_autofree char *mem_caption =
                g_strdup_printf("Memory over one step: %s%s", which, s->name);
            g_autofree char *gantt_caption =
                g_strdup_printf("Tasks of one step: %s%s", which, s->name);
            figure(timeline, dir, mem_file, mem_caption, figures, sizes, captions);
            figure(gantt, dir, gantt_file, gantt_caption, figures, sizes, captions);
        }
    } else {
        g_printerr("parosim report: warning: no figures: %s\n", error->message);
    }
    remove_folder(dir);
    g_autofree char *header = run_header(paro_run_get_derived(run), ranked, rows->len);
    g_autoptr(GString) parameters = g_string_new(NULL);
    paro_report_strategies_header(paro_run_get_derived(run), parameters);
    ParoHtmlReport page = {
        .title = scenario->name,
        .header = header,
        .parameters = parameters->str,
        .rows = ranked,
        .n_rows = rows->len,
        .best = best,
        .figures = (const char *const *)figures->pdata,
        .figure_sizes = (const gsize *)sizes->data,
        .captions = (const char *const *)captions->pdata,
        .n_figures = figures->len,
    };
    g_autoptr(GString) html = g_string_new(NULL);
    paro_report_html(&page, html);
    return paro_cli_write_file("report", output, html, (const char *const *)inputs)
               ? PARO_EXIT_OK
               : PARO_EXIT_ERROR;
}
