/* SPDX-License-Identifier: MIT */
/* `parosim calibrate LOG... [-o FILE]`: fit measurement logs into a calibration file. */
#include "cli/cli.h"

#include <stdio.h>

#include "calib/calib-fit.h"
#include "scenario/scenario.h"
#include "yaml/loaders.h"

static const char calibrate_help[] =
    "Reads nccl-tests logs and paro-harness logs (coll, gemm, hbm tables) and fits:\n"
    "  collectives  t(S) = latency + S * busfactor(op, ranks) / bus_bandwidth for each\n"
    "               (op, scope, ranks), weighted least squares (weights 1/t^2), with a\n"
    "               piecewise model when the residuals depend on size; 1-rank groups are\n"
    "               reported as not fitted;\n"
    "  network      intra/inter bus bandwidth and per-step latency for the simulator;\n"
    "  compute      matmul_rate = total FLOPs / total time of the GEMM rows of --dtype,\n"
    "               hbm_bandwidth = median of the adam rows of 256 MiB and more;\n"
    "  nccl         with --topology: NCCL's model on that datasheet topology, its latency\n"
    "               and bandwidth scaled to the collective rows (t = a x latency +\n"
    "               transfer / b, one pair for one node and one across nodes). The\n"
    "               default collective model then uses them; an AllReduce log calibrates\n"
    "               AllGather and ReduceScatter too.\n"
    "Files without a table (a log folder's _system.txt, _status.txt) are listed and skipped.\n"
    "The result is a `kind: calibration` YAML that a scenario's `calibration:` key and\n"
    "`parosim collective --calibration` read; written to FILE through a temporary file and\n"
    "a rename, or to stdout.\n"
    "\n"
    "Examples:\n"
    "  parosim calibrate validation/data/h100/2026-11-23_{gemm-llama7b,hbm,coll-*}.txt \\\n"
    "      --device H100-SXM5-80GB -o validation/fits/h100-2026-11-23.yaml\n"
    "  parosim calibrate --topology topologies/dgx-h100x8.yaml \\\n"
    "      validation/nccl-corpus/hgx-h100/h100-1n8-allreduce-nccl2.29.2.txt";

int paro_cmd_calibrate(int argc, char **argv)
{
    g_autofree char *output = NULL, *dtype = NULL, *device = NULL, *topology_path = NULL;
    GOptionEntry entries[] = {
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "Write the calibration to FILE", "FILE"},
        {"dtype", 0, 0, G_OPTION_ARG_STRING, &dtype, "GEMM dtype of the matmul rate (default bf16)",
         "DTYPE"},
        {"device", 0, 0, G_OPTION_ARG_STRING, &device,
         "Name written as 'device' (default: the GPU the logs name)", "NAME"},
        {"topology", 0, 0, G_OPTION_ARG_FILENAME, &topology_path,
         "Fit NCCL's model's scales on this datasheet topology (the nccl section)", "FILE"},
        {NULL},
    };
    if (!paro_cli_parse_options("calibrate", "LOG...", calibrate_help, entries, &argc, &argv))
        return PARO_EXIT_USAGE;
    if (argc < 2)
        return paro_cli_usage("calibrate", "no log given");
    g_autoptr(GError) error = NULL;
    if (dtype && !g_strv_contains(paro_calib_dtype_names, dtype)) {
        g_autofree char *list = g_strjoinv(", ", (char **)paro_calib_dtype_names);
        g_autofree char *message = g_strdup_printf("unknown --dtype '%s' (known: %s)", dtype, list);
        return paro_cli_usage("calibrate", message);
    }
    const char *const *inputs = (const char *const *)argv + 1;
    if (!paro_cli_check_output("calibrate", output, inputs))
        return PARO_EXIT_ERROR;
    g_autoptr(GPtrArray) logs = g_ptr_array_new_with_free_func((GDestroyNotify)paro_calib_log_free);
    for (int i = 1; i < argc; i++) {
        ParoCalibLog *log = paro_calib_log_load(argv[i], &error);
        if (log == NULL) {
            paro_cli_report_error(error, NULL, NULL);
            return PARO_EXIT_ERROR;
        }
        g_ptr_array_add(logs, log);
    }
    g_autoptr(ParoCalibFit) fit = paro_calib_fit_logs(logs, dtype ? dtype : "bf16", &error);
    if (fit == NULL) {
        paro_cli_report_error(error, NULL, NULL);
        return PARO_EXIT_ERROR;
    }
    if (topology_path) {
        g_autoptr(ParoTopology) t = paro_topology_load(topology_path, &error);
        if (t == NULL || !paro_calib_fit_nccl(logs, t, fit->nccl, &error)) {
            paro_cli_report_error(error, NULL, NULL);
            return PARO_EXIT_ERROR;
        }
        fit->nccl_topology = g_strdup(topology_path);
    }
    if (device) {
        g_free(fit->device);
        fit->device = g_strdup(device);
    }
    g_autofree char *yaml = paro_calib_fit_to_yaml(fit);
    g_autoptr(GString) out = g_string_new(yaml);
    if (output == NULL)
        return paro_cli_write(out) ? PARO_EXIT_OK : PARO_EXIT_ERROR;
    return paro_cli_write_file("calibrate", output, out, inputs) ? PARO_EXIT_OK : PARO_EXIT_ERROR;
}
