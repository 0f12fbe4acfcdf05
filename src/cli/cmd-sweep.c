/* SPDX-License-Identifier: MIT */
/* `parosim sweep`: run the main job over the cartesian product of varied values, in
 * parallel, one row per (point, strategy). */
#include "cli/cli.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "report/report.h"
#include "sweep/sweep.h"

static const char sweep_help[] =
    "Runs `parosim run` at every point of the cartesian product of the varied values\n"
    "(the first --vary changes slowest), on all cores, and prints one row per point and\n"
    "strategy: the varied values, then every result of `parosim run`. A progress bar goes\n"
    "to stderr when it is a terminal. Values: a list V1,V2,... (units allowed: 100 Gb/s),\n"
    "a range A..B (step 1), A..B+STEP, or A..B*FACTOR.\n"
    "\n"
    "Examples:\n"
    "  parosim sweep scenarios/llama-7b_a100x8-100g_n32.yaml --vary topology.nodes=2..16*2 \\\n"
    "      --vary training.trainable.fraction=1,1/16 --strategies zero-2,zero-3,IIG,NIG\n"
    "  parosim sweep SCENARIO.yaml --vary 'topology.node.nics.bandwidth=100 Gb/s,400 Gb/s' \\\n"
    "      --vary parallelism.group=2,4,8 --format json -o sweep.json";

typedef struct {
    gint64 start_us;
    gboolean tty;
} Progress;

static void show_progress(guint64 done, guint64 total, gpointer data)
{
    Progress *p = data;
    if (!p->tty)
        return;
    double elapsed = (double)(g_get_monotonic_time() - p->start_us) / 1e6;
    double rate = elapsed > 0 ? (double)done / elapsed : 0;
    double eta = rate > 0 ? (double)(total - done) / rate : 0;
    int width = 30, filled = (int)((double)width * (double)done / (double)total);
    fprintf(stderr, "\r[%.*s%*s] %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT " points  %.0f/s  ETA %.0f s ",
            filled, "##############################", width - filled, "", done, total, rate, eta);
    if (done == total)
        fputc('\n', stderr);
}

static void csv(GPtrArray *axes, GPtrArray *points, GString *out)
{
    g_string_append(out, "point");
    for (guint a = 0; a < axes->len; a++)
        g_string_append_printf(out, ",%s", ((ParoSweepAxis *)g_ptr_array_index(axes, a))->path);
    g_autoptr(GString) head = g_string_new(NULL);
    paro_report_run(NULL, NULL, 0, PARO_FORMAT_CSV, head);
    g_string_append_printf(out, ",%s", head->str);
    for (guint i = 0; i < points->len; i++) {
        const ParoSweepPoint *p = g_ptr_array_index(points, i);
        g_autoptr(GString) rows = g_string_new(NULL);
        paro_report_run(p->guideline, (const ParoStepResult *)p->results->data, p->results->len,
                        PARO_FORMAT_CSV, rows);
        g_auto(GStrv) lines = g_strsplit(rows->str, "\n", -1);
        for (int l = 1; lines[l] && lines[l][0]; l++) { /* line 0 is the header */
            g_string_append_printf(out, "%u", i);
            for (guint a = 0; a < p->values->len; a++) {
                const char *v = g_ptr_array_index(p->values, a);
                gboolean quote = strpbrk(v, ",\"") != NULL;
                g_string_append_printf(out, quote ? ",\"%s\"" : ",%s", v);
            }
            g_string_append_printf(out, ",%s\n", lines[l]);
        }
    }
}

static void json(GPtrArray *axes, GPtrArray *points, GString *out)
{
    g_string_append(out, "{\n  \"axes\": [");
    for (guint a = 0; a < axes->len; a++) {
        const ParoSweepAxis *ax = g_ptr_array_index(axes, a);
        g_string_append(out, a ? ", " : "");
        paro_report_json_string(out, ax->path);
    }
    g_string_append(out, "],\n  \"points\": [\n");
    for (guint i = 0; i < points->len; i++) {
        const ParoSweepPoint *p = g_ptr_array_index(points, i);
        g_string_append(out, "  {\"values\": {");
        for (guint a = 0; a < p->values->len; a++) {
            g_string_append(out, a ? ", " : "");
            paro_report_json_string(out, ((ParoSweepAxis *)g_ptr_array_index(axes, a))->path);
            g_string_append(out, ": ");
            paro_report_json_string(out, g_ptr_array_index(p->values, a));
        }
        g_string_append(out, "},\n   \"run\": ");
        g_autoptr(GString) one = g_string_new(NULL);
        paro_report_run(p->guideline, (const ParoStepResult *)p->results->data, p->results->len,
                        PARO_FORMAT_JSON, one);
        g_strchomp(one->str);
        g_string_append(out, one->str);
        g_string_append_printf(out, "}%s\n", i + 1 < points->len ? "," : "");
    }
    g_string_append(out, "  ]\n}\n");
}

int paro_cmd_sweep(int argc, char **argv)
{
    g_auto(GStrv) sets = NULL, varies = NULL;
    g_autofree char *format_name = NULL, *strategies_text = NULL, *output = NULL;
    int jobs = 0;
    GOptionEntry entries[] = {
        {"vary", 'v', 0, G_OPTION_ARG_STRING_ARRAY, &varies,
         "A varied path and its values (repeatable): PATH=V1,V2 or PATH=A..B*F", "PATH=VALUES"},
        {"set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &sets, "A fixed override (repeatable)",
         "KEY=VALUE"},
        {"strategies", 0, 0, G_OPTION_ARG_STRING, &strategies_text,
         "all (default) or a comma-separated list", "LIST"},
        {"jobs", 'j', 0, G_OPTION_ARG_INT, &jobs, "Worker threads (default: the cores)", "N"},
        {"format", 'f', 0, G_OPTION_ARG_STRING, &format_name, "csv (default) or json", "FORMAT"},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
         "Write to FILE (through a temporary file and a rename) instead of stdout", "FILE"},
        {NULL},
    };
    g_autoptr(GOptionContext) ctx = g_option_context_new("SCENARIO.yaml");
    g_option_context_set_summary(ctx, sweep_help);
    g_option_context_add_main_entries(ctx, entries, NULL);
    g_autoptr(GError) error = NULL;
    if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
        g_printerr("parosim sweep: %s\nTry 'parosim sweep --help'.\n", error->message);
        return PARO_EXIT_USAGE;
    }
    int format = paro_cli_parse_format(format_name ? format_name : "csv");
    if (argc != 2 || varies == NULL || format == PARO_FORMAT_TABLE || format < 0 || jobs < 0) {
        g_printerr("parosim sweep: expected SCENARIO.yaml, at least one --vary, --format csv or "
                   "json\nTry 'parosim sweep --help'.\n");
        return PARO_EXIT_USAGE;
    }
    g_autoptr(GPtrArray) strategies = paro_cli_parse_strategies(strategies_text, "sweep");
    if (strategies == NULL)
        return PARO_EXIT_USAGE;
    g_autoptr(GPtrArray) axes = g_ptr_array_new_with_free_func((GDestroyNotify)paro_sweep_axis_free);
    for (int i = 0; varies[i]; i++) {
        ParoSweepAxis *a = paro_sweep_axis_parse(varies[i], i + 1, &error);
        if (a == NULL) {
            paro_cli_report_error(error, NULL, (const char *const *)varies);
            return PARO_EXIT_ERROR;
        }
        g_ptr_array_add(axes, a);
    }
    Progress progress = {g_get_monotonic_time(), isatty(STDERR_FILENO)};
    g_autoptr(GPtrArray) points =
        paro_sweep_run(argv[1], (const char *const *)sets, axes, strategies,
                       jobs ? jobs : (int)g_get_num_processors(), show_progress, &progress, &error);
    if (points == NULL) {
        paro_cli_report_error(error, (const char *const *)sets, (const char *const *)varies);
        return PARO_EXIT_ERROR;
    }
    g_autoptr(GString) out = g_string_new(NULL);
    if (format == PARO_FORMAT_CSV)
        csv(axes, points, out);
    else
        json(axes, points, out);
    if (output) {
        if (!g_file_set_contents(output, out->str, (gssize)out->len, &error)) {
            g_printerr("parosim sweep: error: %s\n", error->message);
            return PARO_EXIT_ERROR;
        }
        return PARO_EXIT_OK;
    }
    return paro_cli_write(out) ? PARO_EXIT_OK : PARO_EXIT_ERROR;
}
