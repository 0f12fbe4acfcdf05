/* SPDX-License-Identifier: MIT */
/* `parosim strategies`: the closed-form guideline for every strategy of a scenario. */
#include "cli/cli.h"

#include "report/report.h"
#include "run/run.h"

static const char strategies_help[] =
    "Evaluates every data-parallel sharding strategy of a scenario in closed form:\n"
    "all 27 PaRO triples p-g-os (N = replicated, I = split in a group of m GPUs,\n"
    "G = split over all n GPUs; ddp = NNN, zero-1 = NNG, zero-2 = NGG, zero-3 = GGG,\n"
    "mics = III), plus zero++ and fsdp-hybrid-zero2. For each: model-state memory,\n"
    "activations, whether it fits, per-GPU intra-/inter-group traffic of one global\n"
    "step, compute and communication time, the step time max(compute, comm), and\n"
    "whether another strategy is at least as good in memory and time (dominated).\n"
    "Ranked by step time among those that fit.\n"
    "\n"
    "Examples:\n"
    "  parosim strategies scenarios/llama-7b_a100x8-100g_n32.yaml\n"
    "  parosim strategies scenarios/llama-7b_a100x8-100g_n32.yaml \\\n"
    "      --set training.accumulation=4 --set topology.nodes=16 --format json\n"
    "  parosim strategies SCENARIO.yaml --set model=models/llama-65b.yaml \\\n"
    "      --set training.trainable.fraction=1/16 --format csv";

int paro_cmd_strategies(int argc, char **argv)
{
    g_auto(GStrv) sets = NULL;
    g_autofree char *format_name = NULL;
    GOptionEntry entries[] = {
        {"set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &sets,
         "Override a scenario value by its dotted path (repeatable); model.* and topology.* "
         "reach into the referenced files",
         "KEY=VALUE"},
        {"format", 'f', 0, G_OPTION_ARG_STRING, &format_name, "table (default), json or csv",
         "FORMAT"},
        {NULL},
    };
    if (!paro_cli_parse_options("strategies", "SCENARIO.yaml", strategies_help, entries, &argc,
                                &argv))
        return PARO_EXIT_USAGE;
    g_autoptr(GError) error = NULL;
    if (argc != 2)
        return paro_cli_usage("strategies", "expected one SCENARIO.yaml");
    int format = paro_cli_parse_format(format_name ? format_name : "table");
    if (format < 0)
        return PARO_EXIT_USAGE;

    g_autoptr(ParoRun) run = paro_run_load(argv[1], (const char *const *)sets, NULL, &error);
    if (run == NULL) {
        paro_cli_report_error(error, (const char *const *)sets, NULL);
        return PARO_EXIT_ERROR;
    }
    g_autoptr(GString) out = g_string_new(NULL);
    paro_report_strategies(paro_run_get_guideline(run), (ParoFormat)format, out);
    return paro_cli_write(out) ? PARO_EXIT_OK : PARO_EXIT_ERROR;
}
