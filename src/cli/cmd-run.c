/* SPDX-License-Identifier: MIT */
/* `parosim run`: the main job. Simulates one global training step of the scenario for
 * every strategy asked for and ranks them by simulated step time among those that fit. */
#include "cli/cli.h"

#include <string.h>

#include "report/report.h"
#include "run/run.h"
#include "scenario/workload.h"

static const char run_help[] =
    "Simulates one global training step of a scenario for each strategy: per-layer\n"
    "forward and backward compute, parameter AllGathers prefetched ahead of use,\n"
    "gradient ReduceScatters in buckets, A micro-steps, then gradient sync, optimizer\n"
    "and parameter sync, on a compute stream and intra-/inter-group communication\n"
    "streams, each collective simulated on the cluster's links; a memory ledger follows\n"
    "the same events. Prints, ranked by step time among the strategies that fit: step\n"
    "time, the closed-form guideline beside it, compute, exposed communication,\n"
    "samples/s, tokens/s, TFLOP/s per GPU, MFU, and peak memory. With tp or pp above 1\n"
    "(parallelism:), the step is the pipeline's makespan on the chosen schedule plus the\n"
    "data-parallel phase. With compression (compression:), three more columns: codec\n"
    "time, the time saved (the step simulated again without compression, minus this\n"
    "one; negative when compressing costs more than it saves) and the bytes saved.\n"
    "\n"
    "Examples:\n"
    "  parosim run scenarios/llama-7b_a100x8-100g_n32.yaml\n"
    "  parosim run scenarios/llama-7b_a100x8-100g_n32.yaml --strategies zero-3,IIG,NIG \\\n"
    "      --set collectives.algorithm=ho-ring --trace step.json\n"
    "  parosim run SCENARIO.yaml --set training.overlap=false --format csv\n"
    "  parosim run scenarios/neox-20b_lassen-v100x4_3d.yaml --strategies zero-1,zero-3 \\\n"
    "      --set compression.preset=naive --set compression.activations=none";

int paro_cmd_run(int argc, char **argv)
{
    g_auto(GStrv) sets = NULL;
    g_autofree char *format_name = NULL, *strategies_text = NULL, *trace_path = NULL;
    gboolean no_extrapolate = FALSE;
    GOptionEntry entries[] = {
        {"strategies", 0, 0, G_OPTION_ARG_STRING, &strategies_text,
         "all (default) or a comma-separated list: NIG,zero-3,mics", "LIST"},
        {"set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &sets,
         "Override a scenario value by its dotted path (repeatable)", "KEY=VALUE"},
        {"format", 'f', 0, G_OPTION_ARG_STRING, &format_name, "table (default), json or csv",
         "FORMAT"},
        {"trace", 't', 0, G_OPTION_ARG_FILENAME, &trace_path,
         "Write the timeline (tasks on streams, memory over time): TSV, or Chrome trace JSON "
         "when FILE ends in .json (open it in Perfetto)",
         "FILE"},
        {"no-extrapolate", 0, 0, G_OPTION_ARG_NONE, &no_extrapolate,
         "Simulate every micro-batch instead of reading a long accumulation off a few periods "
         "of the step's steady state (exact for a periodic step, else within 1e-9; a check)",
         NULL},
        {NULL},
    };
    if (!paro_cli_parse_options("run", "SCENARIO.yaml", run_help, entries, &argc, &argv))
        return PARO_EXIT_USAGE;
    g_autoptr(GError) error = NULL;
    if (argc != 2)
        return paro_cli_usage("run", "expected one SCENARIO.yaml");
    int format = paro_cli_parse_format(format_name ? format_name : "table");
    if (format < 0)
        return PARO_EXIT_USAGE;
    g_autoptr(GPtrArray) chosen = paro_cli_parse_strategies(strategies_text, "run");
    if (chosen == NULL)
        return PARO_EXIT_USAGE;

    g_auto(GStrv) inputs = NULL;
    /* What the simulations will cost is refused at once when beyond the limits. */
    g_autoptr(ParoRun) run =
        paro_cli_open_run("run", argv[1], (const char *const *)sets, trace_path, chosen->len,
                          trace_path != NULL, !no_extrapolate, &inputs);
    if (run == NULL)
        return PARO_EXIT_ERROR;
    ParoRunOptions options = PARO_RUN_OPTIONS_INIT;
    options.keep_trace = trace_path != NULL;
    options.extrapolate = !no_extrapolate;
    g_autoptr(GArray) rows = paro_run_strategies(run, chosen, &options, &error);
    if (rows == NULL) {
        g_printerr("parosim run: error: %s\n", error->message);
        return PARO_EXIT_ERROR;
    }
    if (trace_path != NULL) {
        g_autoptr(GString) trace = g_string_new(NULL);
        paro_report_trace((const ParoStepResult *)rows->data, rows->len,
                          g_str_has_suffix(trace_path, ".json"), trace);
        if (!paro_cli_write_file("run", trace_path, trace, (const char *const *)inputs))
            return PARO_EXIT_ERROR;
    }
    g_autoptr(GString) out = g_string_new(NULL);
    paro_report_run(paro_run_get_derived(run), (const ParoStepResult *)rows->data, rows->len,
                    (ParoFormat)format, out);
    return paro_cli_write(out) ? PARO_EXIT_OK : PARO_EXIT_ERROR;
}
