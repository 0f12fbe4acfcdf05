/* SPDX-License-Identifier: MIT */
/* `parosim plot KIND INPUT -o FILE`: renders one of the standard plots with gnuplot from
 * a file parosim wrote. */
#include "cli/cli.h"

#include <stdio.h>
#include <string.h>

#include "core/spell.h"
#include "core/units.h"
#include "plot/plot.h"

/* A memory-timeline line's --@option @text as bytes into @out: NULL, or (transfer full)
 * what is wrong with it. */
static char *timeline_size(const char *option, const char *text, int kind, double *out)
{
    g_autoptr(GError) error = NULL;
    if (text == NULL)
        return NULL;
    if (!paro_units_parse(text, PARO_QUANTITY_BYTES, out, &error))
        return g_strdup(error->message);
    if (!(*out > 0))
        return g_strdup_printf("--%s must be a positive size, e.g. '80 GiB'", option);
    if (kind != PARO_PLOT_MEMORY_TIMELINE)
        return g_strdup_printf("--%s applies to memory-timeline only", option);
    return NULL;
}

static const char plot_help_head[] =
    "Renders a plot with gnuplot (PNG through pngcairo, or SVG, by the output's extension)\n"
    "from an output of parosim. The scripts live in plots/ and read those files directly\n"
    "(or the table --data keeps), so they can be restyled and rerun by hand; each script's\n"
    "header says how.\n"
    "\n"
    "Kinds, and their INPUT:\n";

static const char plot_help_tail[] =
    "\n"
    "Examples:\n"
    "  parosim run scenarios/llama-7b_a100x8-100g_n32.yaml --format csv > run.csv\n"
    "  parosim plot strategies run.csv -o strategies.png --title 'LLaMA-7B, 32 A100'\n"
    "  parosim sweep SCENARIO.yaml --vary topology.nodes=2..16*2 \\\n"
    "      --vary training.trainable.fraction=1,1/16,3/1000 -o sweep.csv\n"
    "  parosim plot best-map sweep.csv -o best.svg\n"
    "  parosim run SCENARIO.yaml --strategies NII --trace step.tsv\n"
    "  parosim plot gantt step.tsv -o gantt.png\n"
    "  for n in 1 2 4; do parosim plan SCENARIO.yaml --set topology.nodes=$n --top 0 \\\n"
    "      --format csv; done > plans.csv\n"
    "  parosim plot plan-scaling plans.csv -o plans.png --data plans.tsv\n"
    "\n"
    "scripts/gallery.sh renders the whole standard set (meson: ninja -C build plots).";

static gboolean parse_size(const char *text, int *width, int *height)
{
    return text == NULL || (sscanf(text, "%dx%d", width, height) == 2 && *width > 0 && *height > 0);
}

/* The metrics each kind's script knows (NULL: the kind takes no --metric). */
static const char *const *metrics_of(int kind)
{
    static const char *const collective[] = {"busbw", "time", NULL};
    static const char *const throughput[] = {"samples_per_s", "tokens_per_s", "tflops_per_gpu",
                                             NULL};
    if (kind == PARO_PLOT_COLLECTIVE_SCALING)
        return collective;
    if (kind == PARO_PLOT_THROUGHPUT_SCALING)
        return throughput;
    return NULL;
}

/* "unknown kind 'X'", with the nearest kind if X looks like a typo of one, and the list. */
static char *unknown_kind_message(const char *name)
{
    const char *names[PARO_PLOT_N_KINDS + 1] = {NULL}; /* NULL-terminated for g_strjoinv */
    for (int k = 0; k < PARO_PLOT_N_KINDS; k++)
        names[k] = paro_plot_kinds[k].name;
    const char *nearest = paro_spell_nearest(name, names, PARO_PLOT_N_KINDS);
    g_autofree char *list = g_strjoinv(", ", (char **)names);
    return nearest ? g_strdup_printf("unknown KIND '%s'; did you mean '%s'?", name, nearest)
                   : g_strdup_printf("unknown KIND '%s' (kinds: %s)", name, list);
}

int paro_cmd_plot(int argc, char **argv)
{
    g_autofree char *output = NULL, *title = NULL, *strategy = NULL, *strategies = NULL,
                    *x_axis = NULL, *y_axis = NULL, *metric = NULL, *capacity = NULL,
                    *reserved = NULL, *size = NULL, *data = NULL, *scripts = NULL;
    GOptionEntry entries[] = {
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "The plot: FILE.png or FILE.svg",
         "FILE"},
        {"title", 0, 0, G_OPTION_ARG_STRING, &title, "A title above the plot", "TEXT"},
        {"strategy", 0, 0, G_OPTION_ARG_STRING, &strategy,
         "memory-timeline, gantt: the strategy to draw (default: the trace's first)", "NAME"},
        {"strategies", 0, 0, G_OPTION_ARG_STRING, &strategies,
         "throughput-scaling, plan-scaling: names or aliases to draw (default: all in the input)",
         "LIST"},
        {"x", 0, 0, G_OPTION_ARG_STRING, &x_axis, "best-map: the varied path across", "PATH"},
        {"y", 0, 0, G_OPTION_ARG_STRING, &y_axis, "best-map: the varied path up", "PATH"},
        {"metric", 0, 0, G_OPTION_ARG_STRING, &metric,
         "throughput-scaling: samples_per_s, tokens_per_s or tflops_per_gpu; "
         "collective-scaling: busbw or time",
         "NAME"},
        {"capacity", 0, 0, G_OPTION_ARG_STRING, &capacity,
         "memory-timeline: draw the GPU memory line (e.g. '80 GiB')", "BYTES"},
        {"reserved", 0, 0, G_OPTION_ARG_STRING, &reserved,
         "memory-timeline: draw what the GPU holds with the allocator's reserve (run's JSON "
         "reserved + outside)",
         "BYTES"},
        {"size", 0, 0, G_OPTION_ARG_STRING, &size, "Pixels (default 1000x600)", "WxH"},
        {"data", 0, 0, G_OPTION_ARG_FILENAME, &data,
         "best-map, plan-scaling: also keep the derived table the script reads", "FILE"},
        {"scripts", 0, 0, G_OPTION_ARG_FILENAME, &scripts,
         "Folder of the gnuplot scripts (default: $PAROSIM_PLOTS_DIR, else the built-in)", "DIR"},
        {NULL},
    };
    g_autoptr(GString) help = g_string_new(plot_help_head);
    for (int k = 0; k < PARO_PLOT_N_KINDS; k++)
        g_string_append_printf(help, "  %-19s %s\n  %-19s   INPUT: %s\n", paro_plot_kinds[k].name,
                               paro_plot_kinds[k].summary, "", paro_plot_kinds[k].input);
    g_string_append(help, plot_help_tail);
    if (!paro_cli_parse_options("plot", "KIND INPUT -o FILE", help->str, entries, &argc, &argv))
        return PARO_EXIT_USAGE;
    g_autoptr(GError) error = NULL;
    int kind = argc == 3 ? paro_plot_kind_from_name(argv[1]) : -1;
    ParoPlotRequest rq = {.kind = (ParoPlotKind)kind,
                          .input = argc == 3 ? argv[2] : NULL,
                          .output = output,
                          .title = title,
                          .strategy = strategy,
                          .strategies = strategies,
                          .x_axis = x_axis,
                          .y_axis = y_axis,
                          .metric = metric,
                          .data_output = data,
                          .scripts_dir = scripts};
    const char *usage = NULL;
    g_autofree char *unknown_kind = NULL, *wrong_size = NULL;
    if (argc != 3 || output == NULL)
        usage = "expected KIND INPUT -o FILE";
    else if (kind < 0)
        usage = unknown_kind = unknown_kind_message(argv[1]);
    else if (!parse_size(size, &rq.width, &rq.height))
        usage = "--size must be WIDTHxHEIGHT in pixels, e.g. 1200x700";
    else if ((wrong_size = timeline_size("capacity", capacity, kind, &rq.capacity_bytes)) ||
             (wrong_size = timeline_size("reserved", reserved, kind, &rq.reserved_bytes)))
        usage = wrong_size;
    else if (metric && (metrics_of(kind) == NULL || !g_strv_contains(metrics_of(kind), metric)))
        usage = metrics_of(kind) ? (kind == PARO_PLOT_COLLECTIVE_SCALING
                                        ? "--metric must be busbw or time"
                                        : "--metric must be samples_per_s, tokens_per_s or "
                                          "tflops_per_gpu")
                                 : "--metric applies to collective-scaling and throughput-scaling";
    if (usage)
        return paro_cli_usage("plot", usage);
    /* SIGINT, SIGTERM, SIGHUP kill gnuplot and remove the temporary files: main.c's
     * handler, paro_cli_install_signal_cleanup */
    if (!paro_plot_render(&rq, &error)) {
        paro_cli_report_error(error, NULL, NULL);
        return PARO_EXIT_ERROR;
    }
    return PARO_EXIT_OK;
}
