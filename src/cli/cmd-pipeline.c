/* SPDX-License-Identifier: MIT */
/* `parosim pipeline`: one pipeline-parallel schedule (or all of them, --compare) on the
 * engine, with the makespan, the bubble and the activations each device holds, so the
 * schedules can be compared on the same model and micro-batches. */
#include "cli/cli.h"

#include <math.h>
#include <string.h>

#include "core/limits.h"
#include "core/units.h"
#include "pipe/pipe.h"
#include "report/report.h"

static const char pipeline_help[] =
    "Simulates the pipeline-parallel part of a training step: P devices, a model cut into\n"
    "S modules (module s on device s mod P), M micro-batches. Each device runs its\n"
    "schedule's program one task at a time; a task starts when it is next in the program\n"
    "and its input (the previous module's activation, or the next module's gradient) has\n"
    "arrived, P2P later when it comes from another device.\n"
    "\n"
    "Schedules:\n"
    "  gpipe        all M forwards, then all M backwards (S = P)\n"
    "  1f1b         PipeDream-Flush: P-1-r warm-up forwards on device r, then one forward,\n"
    "               one backward, then the cool-down backwards (S = P); holds min(P-r, M)\n"
    "               activations instead of GPipe's M\n"
    "  interleaved  Megatron-LM's interleaved 1F1B with v chunks per device (S = vP);\n"
    "               M must be a multiple of P\n"
    "  modular      v modules per device dealt round-robin (S = vP), with layered\n"
    "               (breadth-first) accumulation: all micro-batches through a module\n"
    "               before the next; Fast-LLM's breadth-first looping schedule\n"
    "\n"
    "--forward and --backward are one device's share of the model (1/P of it) for one\n"
    "micro-batch; interleaved and modular cut it into v equal modules, so every schedule\n"
    "does the same work. bubble = makespan / ideal - 1, where ideal is the busiest\n"
    "device's compute time. 'formula' is the closed-form bubble for equal modules and no\n"
    "p2p time: (P-1)/M for gpipe and 1f1b, (P-1)/(vM) interleaved, (P-1)/(vM) modular\n"
    "when M >= P (else (vP+M-1)/(vM) - 1). in-flight: the most (module, micro-batch)\n"
    "activations a device holds (forward done, backward not yet).\n"
    "\n"
    "Examples:\n"
    "  parosim pipeline --stages 4 --micro 8 --schedule 1f1b --forward '10 ms'\n"
    "  parosim pipeline --stages 8 --micro 8 --virtual 8 --forward 8ms --compare\n"
    "  parosim pipeline --stages 8 --micro 16 --schedule interleaved --virtual 2 \\\n"
    "      --p2p '20 us' --p2p-bytes '32 MiB' --p2p-bandwidth '50 GB/s' --trace t.tsv";

static void row_clear(gpointer data)
{
    ParoPipeRow *row = data;
    g_clear_pointer(&row->result, paro_pipe_result_free);
    g_clear_pointer(&row->skipped, g_free);
}

static int lookup(const char *const *names, const char *name)
{
    for (int i = 0; names[i]; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return -1;
}

/* A time option: units required ("1 ms"), as everywhere in parosim, within @limit (a
 * task's duration or a message's latency). */
static gboolean parse_time(const char *text, const char *option, const ParoLimit *limit,
                           ParoTime *out, GError **error)
{
    double s = 0;
    if (!paro_units_parse(text, PARO_QUANTITY_TIME, &s, error)) {
        g_prefix_error(error, "%s: ", option);
        return FALSE;
    }
    if (s < 0) {
        g_set_error(error, PARO_CONFIG_ERROR, PARO_CONFIG_ERROR_RANGE, "%s: negative time", option);
        return FALSE;
    }
    if (!paro_limit_check_option(limit, option, s, error))
        return FALSE;
    *out = paro_time_from_s(s);
    return TRUE;
}

static gboolean parse_quantity(const char *text, ParoQuantity kind, const char *option, double *out,
                               GError **error)
{
    if (text == NULL)
        return TRUE;
    if (!paro_units_parse(text, kind, out, error)) {
        g_prefix_error(error, "%s: ", option);
        return FALSE;
    }
    if (*out < 0) {
        g_set_error(error, PARO_CONFIG_ERROR, PARO_CONFIG_ERROR_RANGE, "%s: negative value",
                    option);
        return FALSE;
    }
    const ParoLimit *limit =
        kind == PARO_QUANTITY_BYTES ? &paro_limit_bytes : &paro_limit_bandwidth;
    return paro_limit_check_option(limit, option, *out, error);
}

int paro_cmd_pipeline(int argc, char **argv)
{
    g_autofree char *schedule_name = NULL, *accumulation_name = NULL, *format_name = NULL;
    g_autofree char *forward_text = NULL, *backward_text = NULL, *p2p_text = NULL;
    g_autofree char *bytes_text = NULL, *bandwidth_text = NULL, *trace_path = NULL;
    gint64 devices = 0, micro = 0, virtual_stages = -1; /* -1: not given */
    gboolean compare = FALSE;
    GOptionEntry entries[] = {
        {"stages", 'p', 0, G_OPTION_ARG_INT64, &devices, "Pipeline devices P (required)", "P"},
        {"micro", 'm', 0, G_OPTION_ARG_INT64, &micro, "Micro-batches M per step (required)", "M"},
        {"schedule", 's', 0, G_OPTION_ARG_STRING, &schedule_name,
         "gpipe, 1f1b (default), interleaved or modular", "NAME"},
        {"virtual", 'v', 0, G_OPTION_ARG_INT64, &virtual_stages,
         "Modules per device for interleaved and modular (default 2)", "V"},
        {"forward", 'f', 0, G_OPTION_ARG_STRING, &forward_text,
         "Forward time of one device's share of the model for one micro-batch (default 1 ms)", "T"},
        {"backward", 'b', 0, G_OPTION_ARG_STRING, &backward_text,
         "Backward time, likewise (default twice the forward)", "T"},
        {"p2p", 0, 0, G_OPTION_ARG_STRING, &p2p_text,
         "Latency of one activation or gradient message between devices (default 0)", "T"},
        {"p2p-bytes", 0, 0, G_OPTION_ARG_STRING, &bytes_text,
         "Bytes of one message, counted and sent at --p2p-bandwidth (default 0)", "SIZE"},
        {"p2p-bandwidth", 0, 0, G_OPTION_ARG_STRING, &bandwidth_text,
         "Bandwidth of a device-to-device link (default: the bytes take no time)", "BW"},
        {"accumulation", 'a', 0, G_OPTION_ARG_STRING, &accumulation_name,
         "depth-first or layered: the order of a device's modules and micro-batches in gpipe "
         "and modular (default: layered for modular, else depth-first)",
         "ORDER"},
        {"compare", 'c', 0, G_OPTION_ARG_NONE, &compare,
         "One row per schedule for the same inputs (gpipe and 1f1b with one module per device)",
         NULL},
        {"format", 0, 0, G_OPTION_ARG_STRING, &format_name, "table (default), json or csv",
         "FORMAT"},
        {"trace", 't', 0, G_OPTION_ARG_FILENAME, &trace_path,
         "Write every task (schedule, device, module, micro, kind, start, end) as TSV", "FILE"},
        {NULL},
    };
    if (!paro_cli_parse_options("pipeline", "", pipeline_help, entries, &argc, &argv))
        return PARO_EXIT_USAGE;
    g_autoptr(GError) error = NULL;
    int schedule = lookup(paro_pipe_schedule_names, schedule_name ? schedule_name : "1f1b");
    int accumulation =
        accumulation_name ? lookup(paro_pipe_accumulation_names, accumulation_name) : -2;
    int format = paro_cli_parse_format(format_name ? format_name : "table");
    if (argc != 1)
        return paro_cli_usage("pipeline", "unexpected argument");
    if (devices < 1 || micro < 1)
        return paro_cli_usage("pipeline",
                              "--stages and --micro are required and must be at least 1");
    if (schedule < 0)
        return paro_cli_usage("pipeline", "--schedule must be gpipe, 1f1b, interleaved or modular");
    if (accumulation == -1)
        return paro_cli_usage("pipeline", "--accumulation must be depth-first or layered");
    if (format < 0)
        return paro_cli_usage("pipeline", "bad --format");
    if (virtual_stages == 0 || virtual_stages < -1)
        return paro_cli_usage("pipeline", "--virtual must be at least 1");
    /* counts within their limits: a stage holds at least a layer, a micro-batch count is
     * an accumulation (issue #16: the fuzzed command line) */
    if (!paro_limit_check_option(&paro_limit_layers, "--stages", (double)devices, &error) ||
        !paro_limit_check_option(&paro_limit_accumulation, "--micro", (double)micro, &error) ||
        (virtual_stages > 0 && !paro_limit_check_option(&paro_limit_virtual, "--virtual",
                                                        (double)virtual_stages, &error)))
        return paro_cli_usage("pipeline", error->message);
    if (trace_path && g_str_has_suffix(trace_path, ".json"))
        return paro_cli_usage("pipeline",
                              "--trace writes TSV (one line a task); name it .tsv (Chrome JSON "
                              "traces are parosim run's)");
    ParoPipeReport in = {devices, micro, paro_time_from_s(1e-3), 0, 0, 0, 0, 0};
    if ((forward_text &&
         !parse_time(forward_text, "--forward", &paro_limit_duration, &in.forward, &error)) ||
        (backward_text &&
         !parse_time(backward_text, "--backward", &paro_limit_duration, &in.backward, &error)) ||
        (p2p_text &&
         !parse_time(p2p_text, "--p2p", &paro_limit_latency, &in.p2p_latency, &error)) ||
        !parse_quantity(bytes_text, PARO_QUANTITY_BYTES, "--p2p-bytes", &in.p2p_bytes, &error) ||
        !parse_quantity(bandwidth_text, PARO_QUANTITY_BANDWIDTH, "--p2p-bandwidth",
                        &in.p2p_bandwidth_Bps, &error))
        return paro_cli_usage("pipeline", error->message);
    if (backward_text == NULL)
        in.backward = paro_time_add(in.forward, in.forward);
    in.p2p_time = in.p2p_latency;
    if (in.p2p_bandwidth_Bps > 0)
        in.p2p_time =
            paro_time_add(in.p2p_time, paro_time_from_s(in.p2p_bytes / in.p2p_bandwidth_Bps));
    if (bandwidth_text && !(in.p2p_bandwidth_Bps > 0))
        return paro_cli_usage("pipeline",
                              "--p2p-bandwidth must be positive (leave it out for messages that "
                              "take no time beyond --p2p)");
    gint64 v = virtual_stages > 0 ? virtual_stages : 2;
    /* The tasks of every schedule simulated, counted before any is (2 S M each), at the
     * rates of scenario/workload.c: about 0.25 us and 60 B a task. */
    double tasks = 0;
    for (int k = compare ? 0 : schedule; k <= (compare ? PARO_PIPE_MODULAR : schedule); k++)
        tasks += 2.0 * (double)devices * (double)micro *
                 (k == PARO_PIPE_GPIPE || k == PARO_PIPE_1F1B ? 1.0 : (double)v);
    if (tasks * 0.25e-6 > paro_limit_work_budget_s() || tasks * 60 > paro_limit_memory.max) {
        g_autofree char *count = paro_format_count(tasks);
        g_printerr("parosim pipeline: error: %s tasks (2 x stages x modules a stage x "
                   "micro-batches, each schedule) would take about %.0f s and %.2g GB to "
                   "simulate, beyond the limits of %.0f s and %.2g GB; lower --stages, "
                   "--micro or --virtual\n",
                   count, tasks * 0.25e-6, tasks * 60 / 1e9, paro_limit_work_budget_s(),
                   paro_limit_memory.max / 1e9);
        return PARO_EXIT_ERROR;
    }
    if (!compare && virtual_stages > 1 &&
        (schedule == PARO_PIPE_GPIPE || schedule == PARO_PIPE_1F1B))
        return paro_cli_usage("pipeline",
                              "--virtual applies to interleaved and modular; gpipe and 1f1b place "
                              "one module per device");
    g_autoptr(GArray) rows = g_array_new(FALSE, TRUE, sizeof(ParoPipeRow));
    g_array_set_clear_func(rows, row_clear);
    g_autoptr(GPtrArray) times = g_ptr_array_new_with_free_func(g_free);
    for (int k = compare ? 0 : schedule; k <= (compare ? PARO_PIPE_MODULAR : schedule); k++) {
        gboolean one_module = k == PARO_PIPE_GPIPE || k == PARO_PIPE_1F1B;
        ParoPipeRow row = {{0}, NULL, NULL};
        row.spec = (ParoPipeSpec){
            .schedule = (ParoPipeSchedule)k,
            .accumulation = k == PARO_PIPE_MODULAR ? PARO_PIPE_LAYERED : PARO_PIPE_DEPTH_FIRST,
            .devices = devices,
            .chunks = one_module ? 1 : v,
            .micro = micro,
            .p2p_latency = in.p2p_latency,
            .p2p_bytes = in.p2p_bytes,
            .p2p_bandwidth_Bps = in.p2p_bandwidth_Bps,
            .timeline = trace_path != NULL,
        };
        /* Under --compare the order only changes gpipe and modular: 1f1b and interleaved
         * are depth-first by construction. */
        if (accumulation >= 0 && (!compare || k == PARO_PIPE_GPIPE || k == PARO_PIPE_MODULAR))
            row.spec.accumulation = (ParoPipeAccumulation)accumulation;
        /* Checked before the per-module arrays are made: paro_pipe_check reads them. */
        if (devices > PARO_PIPE_MAX_TASKS / 2 / row.spec.chunks / micro) {
            g_printerr("parosim: error: 2 x S x M tasks exceed %" G_GINT64_FORMAT "\n",
                       PARO_PIPE_MAX_TASKS);
            return PARO_EXIT_ERROR;
        }
        ParoTime *f = paro_pipe_split(in.forward, devices, row.spec.chunks);
        ParoTime *b = paro_pipe_split(in.backward, devices, row.spec.chunks);
        g_ptr_array_add(times, f);
        g_ptr_array_add(times, b);
        row.spec.forward = f, row.spec.backward = b;
        g_autoptr(GError) row_error = NULL;
        row.result = paro_pipe_simulate(&row.spec, &row_error);
        if (row.result == NULL) {
            if (!compare ||
                !g_error_matches(row_error, PARO_CONFIG_ERROR, PARO_CONFIG_ERROR_CONSTRAINT)) {
                paro_cli_report_error(row_error, NULL, NULL);
                return PARO_EXIT_ERROR;
            }
            row.skipped = g_strdup(row_error->message);
        }
        g_array_append_val(rows, row);
    }
    if (trace_path != NULL) {
        g_autoptr(GString) trace = g_string_new(NULL);
        paro_report_pipeline_trace(rows, trace);
        if (!paro_cli_write_file("pipeline", trace_path, trace, NULL))
            return PARO_EXIT_ERROR;
    }
    g_autoptr(GString) out = g_string_new(NULL);
    paro_report_pipeline(&in, rows, (ParoFormat)format, out);
    return paro_cli_write(out) ? PARO_EXIT_OK : PARO_EXIT_ERROR;
}
