/* SPDX-License-Identifier: MIT */
/* `parosim collective`: simulate one collective over a size sweep and print the table
 * nccl-tests prints, so predictions and measurements line up column for column. */
#include "cli/cli.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "coll/budget.h"
#include "coll/simulate.h"
#include "core/error.h"
#include "core/format.h"
#include "core/limits.h"
#include "core/units.h"
#include "report/report.h"
#include "scenario/scenario.h"
#include "yaml/loaders.h"

static const char collective_help[] =
    "Simulates one collective on a cluster's links (flow-level max-min network) over a\n"
    "range of sizes and prints nccl-tests' table: size (B, the whole array), count and\n"
    "type (float), redop, root, time (us), algbw = size/time and busbw = algbw x the\n"
    "nccl-tests factor (AllReduce 2(n-1)/n, AllGather and ReduceScatter (n-1)/n,\n"
    "Broadcast 1), then the bytes carried by intra-node and inter-node links.\n"
    "\n"
    "Algorithms: ring (NCCL rings, C channels over the NIC rails), hierarchical (intra,\n"
    "then m parallel inter-group rings, then intra, in sequence), ho-ring (the same,\n"
    "cut into chunks that pipeline so intra and inter phases overlap), tree (NCCL's\n"
    "double binary tree across nodes, AllReduce only; always explicit).\n"
    "sendrecv: every GPU sends S to the next rank (busbw factor 1).\n"
    "\n"
    "Examples:\n"
    "  parosim collective --topology topologies/a100x8-200g.yaml --op allreduce \\\n"
    "      --algo ring --gpus 64 -b 1M -e 1G -f 4\n"
    "  parosim collective --topology topologies/dgx-h100x8.yaml --op allgather \\\n"
    "      --algo ho-ring --gpus 16384 -b 1G -e 1G --format json";

/* nccl-tests sizes: a whole number of bytes with an optional binary K, M, G or T suffix. */
static gboolean parse_size(const char *text, double *out)
{
    char *end = NULL;
    double v = g_ascii_strtod(text, &end);
    if (end == text || !isfinite(v) || v < 0 ||
        (text[0] == '0' && (text[1] == 'x' || text[1] == 'X')))
        return FALSE;
    double scale = 1;
    if (*end == 'K' || *end == 'k')
        scale = 1024.0, end++;
    else if (*end == 'M' || *end == 'm')
        scale = 1048576.0, end++;
    else if (*end == 'G' || *end == 'g')
        scale = 1073741824.0, end++;
    else if (*end == 'T' || *end == 't')
        scale = 1099511627776.0, end++;
    if (*end == 'B')
        end++;
    if (*end != '\0' || v * scale != floor(v * scale))
        return FALSE;
    *out = v * scale;
    return TRUE;
}

/* The sizes MIN, MIN*F, ... up to MAX, counted before any is simulated. */
static double count_sizes(double min_bytes, double max_bytes, double factor)
{
    if (min_bytes == max_bytes)
        return 1;
    return floor(log(max_bytes / min_bytes) / log(factor) * (1 + 1e-12)) + 1;
}

/* Names the input behind the factor of @w furthest above its usual value (64 GPUs
 * simulated, 8 channels, 8 chunks, 30 sizes), for the refusal. */
static const char *driver(const ParoCollWork *w, gboolean explicit_mode, double n_sizes, gint64 gpn)
{
    double factors[] = {(double)w->tracked / 64, (double)w->channels / 8, (double)w->chunks / 8,
                        n_sizes / 30};
    guint best = 0;
    for (guint i = 1; i < G_N_ELEMENTS(factors); i++)
        if (factors[i] > factors[best])
            best = i;
    static const char *const names[] = {"--gpus", "--channels or the topology's nccl.channels",
                                        "--chunks or the topology's nccl.chunks",
                                        "the sizes of -b, -e and -f"};
    if (best == 0 && explicit_mode)
        return "--gpus (with --explicit, trees and broadcasts every GPU is simulated)";
    if (best == 0 && w->tracked >= gpn)
        return "the GPUs per node (node.gpus: a node is simulated GPU by GPU)";
    return names[best];
}

static int lookup(const char *const *names, const char *name)
{
    for (int i = 0; names[i]; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return -1;
}

typedef struct {
    double size;
    ParoCollResult r;
} Row;

static void render(GString *out, int format, const ParoTopology *t, const ParoCollSpec *spec,
                   gboolean explicit_mode, int fidelity, GArray *rows)
{
    const char *op = paro_coll_kind_names[spec->op];
    const char *redop =
        spec->op == PARO_COLL_ALLREDUCE || spec->op == PARO_COLL_REDUCESCATTER ? "sum" : "none";
    int root = spec->op == PARO_COLL_BROADCAST ? 0 : -1;
    double factor = paro_coll_bus_factor(spec->op, spec->n);
    if (format == PARO_FORMAT_JSON) {
        g_string_append(out, "{\n  \"parosim\": ");
        paro_report_json_string(out, PARO_VERSION);
        g_string_append(out, ",\n  \"topology\": ");
        paro_report_json_string(out, t->name);
        g_string_append_printf(
            out,
            ",\n  \"op\": \"%s\",\n  \"algorithm\": \"%s\",\n  \"gpus\": %" G_GINT64_FORMAT
            ",\n  \"group\": %" G_GINT64_FORMAT ",\n  \"channels\": %" G_GINT64_FORMAT
            ",\n  \"chunks\": %" G_GINT64_FORMAT ",\n  \"mode\": \"%s\",\n  \"network\": \"%s\","
            "\n  \"results\": [\n",
            op, paro_algorithm_names[spec->algorithm], spec->n, spec->m, spec->channels,
            spec->chunks, explicit_mode ? "explicit" : "aggregated",
            paro_net_fidelity_names[fidelity]);
        for (guint i = 0; i < rows->len; i++) {
            const Row *row = &g_array_index(rows, Row, i);
            double s = paro_time_to_s(row->r.time);
            double algbw = s > 0 ? row->size / s : 0;
            g_string_append(out, "    {\"size\": ");
            paro_report_number(out, row->size);
            g_string_append(out, ", \"time\": ");
            paro_report_number(out, s);
            g_string_append(out, ", \"algbw\": ");
            paro_report_number(out, algbw);
            g_string_append(out, ", \"busbw\": ");
            paro_report_number(out, algbw * factor);
            g_string_append(out, ", \"intra_bytes\": ");
            paro_report_number(out, round(row->r.intra_bytes));
            g_string_append(out, ", \"inter_bytes\": ");
            paro_report_number(out, round(row->r.inter_bytes));
            g_string_append_printf(out, "}%s\n", i + 1 < rows->len ? "," : "");
        }
        g_string_append(out, "  ]\n}\n");
        return;
    }
    if (format == PARO_FORMAT_CSV) {
        g_string_append(out, "size,count,type,redop,root,time_us,algbw_GBps,busbw_GBps,"
                             "intra_bytes,inter_bytes\n");
    } else {
        g_string_append_printf(out, "# parosim %s collective: %s, algorithm %s\n", PARO_VERSION, op,
                               paro_algorithm_names[spec->algorithm]);
        g_autofree char *name = paro_format_escape(t->name);
        g_string_append_printf(out,
                               "# topology: %s  gpus: %" G_GINT64_FORMAT
                               "  gpus per node: %" G_GINT64_FORMAT "  group m: %" G_GINT64_FORMAT
                               "  channels: %" G_GINT64_FORMAT "  chunks: %" G_GINT64_FORMAT "\n",
                               name, spec->n, t->gpus_per_node, spec->m, spec->channels,
                               spec->chunks);
        g_string_append_printf(out, "# network: %s  mode: %s\n#\n",
                               paro_net_fidelity_names[fidelity],
                               explicit_mode ? "explicit" : "aggregated (symmetric)");
        g_string_append(out, "#                                                        out-of-place"
                             "                       link bytes\n");
        g_string_append(out, "#       size         count      type   redop    root     time   algbw"
                             "   busbw #wrong        intra        inter\n");
        g_string_append(out, "#        (B)    (elements)                               (us)  (GB/s)"
                             "  (GB/s)                 (B)          (B)\n");
    }
    double busbw_sum = 0;
    for (guint i = 0; i < rows->len; i++) {
        const Row *row = &g_array_index(rows, Row, i);
        double s = paro_time_to_s(row->r.time);
        double algbw = s > 0 ? row->size / s / 1e9 : 0;
        busbw_sum += algbw * factor;
        char t_us[G_ASCII_DTOSTR_BUF_SIZE], a[G_ASCII_DTOSTR_BUF_SIZE], b[G_ASCII_DTOSTR_BUF_SIZE];
        paro_format_fixed(t_us, sizeof t_us, s * 1e6, 2, format == PARO_FORMAT_CSV ? 64 : 7);
        paro_format_fixed(a, sizeof a, algbw, 2, format == PARO_FORMAT_CSV ? 64 : 6);
        paro_format_fixed(b, sizeof b, algbw * factor, 2, format == PARO_FORMAT_CSV ? 64 : 6);
        gint64 count = (gint64)(row->size / 4);
        if (format == PARO_FORMAT_CSV)
            g_string_append_printf(
                out, "%.0f,%" G_GINT64_FORMAT ",float,%s,%d,%s,%s,%s,%.0f,%.0f\n", row->size, count,
                redop, root, t_us, a, b, row->r.intra_bytes, row->r.inter_bytes);
        else {
            char sz[G_ASCII_DTOSTR_BUF_SIZE], in[G_ASCII_DTOSTR_BUF_SIZE],
                ex[G_ASCII_DTOSTR_BUF_SIZE];
            g_string_append_printf(out,
                                   "%12s  %12" G_GINT64_FORMAT "  %8s  %6s  %6d  %7s  %6s  %6s"
                                   "    N/A  %11s  %11s\n",
                                   paro_format_fixed(sz, sizeof sz, row->size, 0, 12), count,
                                   "float", redop, root, t_us, a, b,
                                   paro_format_fixed(in, sizeof in, row->r.intra_bytes, 0, 11),
                                   paro_format_fixed(ex, sizeof ex, row->r.inter_bytes, 0, 11));
        }
    }
    if (format == PARO_FORMAT_TABLE) {
        char avg[G_ASCII_DTOSTR_BUF_SIZE];
        g_ascii_formatd(avg, sizeof avg, "%.2f", rows->len ? busbw_sum / rows->len : 0);
        g_string_append_printf(
            out, "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : %s\n#\n", avg);
    }
}

int paro_cmd_collective(int argc, char **argv)
{
    g_autofree char *topology_path = NULL, *op_name = NULL, *algo_name = NULL;
    g_autofree char *calibration_path = NULL;
    g_autofree char *min_text = NULL, *max_text = NULL, *format_name = NULL, *net_name = NULL;
    gint64 gpus = -1, group = -1, channels = -1, chunks = -1; /* -1: not given */
    double factor = 2;
    gboolean explicit_mode = FALSE;
    GOptionEntry entries[] = {
        {"topology", 't', 0, G_OPTION_ARG_FILENAME, &topology_path, "Cluster description",
         "T.yaml"},
        {"op", 'o', 0, G_OPTION_ARG_STRING, &op_name,
         "allreduce, allgather, reducescatter, broadcast or sendrecv", "OP"},
        {"algo", 'a', 0, G_OPTION_ARG_STRING, &algo_name,
         "ring (default), hierarchical, ho-ring or tree (allreduce)", "ALGO"},
        {"gpus", 'n', 0, G_OPTION_ARG_INT64, &gpus,
         "GPUs taking part (default: the whole topology)", "N"},
        {"group", 'm', 0, G_OPTION_ARG_INT64, &group, "Group size m (default: GPUs per node)", "M"},
        {"channels", 'c', 0, G_OPTION_ARG_INT64, &channels,
         "Rings per phase (default: the topology's nccl.channels, else NICs per node)", "C"},
        {"chunks", 0, 0, G_OPTION_ARG_INT64, &chunks,
         "ho-ring chunks; pieces of a tree or broadcast (default: the topology's nccl.chunks)",
         "P"},
        {"minbytes", 'b', 0, G_OPTION_ARG_STRING, &min_text, "Smallest size (default 8)", "MIN"},
        {"maxbytes", 'e', 0, G_OPTION_ARG_STRING, &max_text, "Largest size (default 1G)", "MAX"},
        {"stepfactor", 'f', 0, G_OPTION_ARG_DOUBLE, &factor, "Size multiplier (default 2)", "F"},
        {"explicit", 0, 0, G_OPTION_ARG_NONE, &explicit_mode,
         "Instantiate every GPU and flow instead of folding symmetric ones", NULL},
        {"network", 0, 0, G_OPTION_ARG_STRING, &net_name,
         "maxmin (default, contention) or analytic (latency + size/bandwidth)", "MODEL"},
        {"calibration", 0, 0, G_OPTION_ARG_FILENAME, &calibration_path,
         "Calibration file whose network section replaces the fabric and NIC bandwidth and "
         "latency and the per-step overhead (as in a scenario)",
         "FILE"},
        {"format", 0, 0, G_OPTION_ARG_STRING, &format_name, "table (default), json or csv",
         "FORMAT"},
        {NULL},
    };
    g_autoptr(GOptionContext) ctx = g_option_context_new("");
    g_option_context_set_summary(ctx, collective_help);
    g_option_context_add_main_entries(ctx, entries, NULL);
    g_autoptr(GError) error = NULL;
    if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
        g_printerr("parosim collective: %s\nTry 'parosim collective --help'.\n", error->message);
        return PARO_EXIT_USAGE;
    }
    int op = op_name ? lookup(paro_coll_kind_names, op_name) : -1;
    int algo = lookup(paro_algorithm_names, algo_name ? algo_name : "ring");
    int fidelity = lookup(paro_net_fidelity_names, net_name ? net_name : "maxmin");
    int format = paro_cli_parse_format(format_name ? format_name : "table");
    double min_bytes = 8, max_bytes = 1073741824.0;
    const char *usage = NULL;
    if (argc != 1)
        usage = "unexpected argument";
    else if (topology_path == NULL)
        usage = "--topology is required";
    else if (op < 0)
        usage = "--op must be allreduce, allgather, reducescatter, broadcast or sendrecv";
    else if (algo < 0)
        usage = "--algo must be ring, hierarchical, ho-ring or tree";
    else if (fidelity < 0)
        usage = "--network must be maxmin or analytic";
    else if (format < 0)
        usage = "bad --format";
    else if ((min_text && !parse_size(min_text, &min_bytes)) ||
             (max_text && !parse_size(max_text, &max_bytes)) || min_bytes > max_bytes)
        usage = "bad -b/-e: whole byte counts like 8, 1536, 64K, 1M, 1G, 1T, with MIN <= MAX";
    else if (!(factor > 1) || !isfinite(factor))
        usage = "-f must be a finite number greater than 1";
    else if (min_bytes == 0 && max_bytes > 0)
        usage = "-b must be positive when -e is larger: the sizes grow by the factor -f";
    else if (gpus == 0 || group == 0 || channels == 0 || chunks == 0 || gpus < -1 || group < -1 ||
             channels < -1 || chunks < -1)
        usage = "--gpus, --group, --channels and --chunks must be at least 1";
    g_autoptr(GError) limit_error = NULL;
    if (usage == NULL &&
        (!paro_limit_check_option(&paro_limit_bytes, "-e", max_bytes, &limit_error) ||
         !paro_limit_check_option(&paro_limit_coll_sizes, "the sizes of -b, -e and -f",
                                  count_sizes(min_bytes, max_bytes, factor), &limit_error) ||
         (gpus > 0 &&
          !paro_limit_check_option(&paro_limit_gpus, "--gpus", (double)gpus, &limit_error)) ||
         (group > 0 &&
          !paro_limit_check_option(&paro_limit_gpus, "--group", (double)group, &limit_error)) ||
         (channels > 0 && !paro_limit_check_option(&paro_limit_channels, "--channels",
                                                   (double)channels, &limit_error)) ||
         (chunks > 0 &&
          !paro_limit_check_option(&paro_limit_chunks, "--chunks", (double)chunks, &limit_error))))
        usage = limit_error->message;
    if (usage != NULL) {
        g_printerr("parosim collective: %s\nTry 'parosim collective --help'.\n", usage);
        return PARO_EXIT_USAGE;
    }
    g_autoptr(ParoTopology) topology = paro_topology_load(topology_path, &error);
    if (topology == NULL) {
        paro_cli_report_error(error, NULL, NULL);
        return PARO_EXIT_ERROR;
    }
    if (calibration_path) {
        ParoCalibration cal = {0};
        if (!paro_calib_load(calibration_path, &cal, &error)) {
            paro_cli_report_error(error, NULL, NULL);
            return PARO_EXIT_ERROR;
        }
        paro_calib_apply_network(&cal, topology);
        paro_calib_clear(&cal);
    }
    gint64 gpn = topology->gpus_per_node;
    ParoCollSpec spec;
    paro_coll_spec_init(&spec, topology, (ParoCollKind)op, (ParoAlgorithm)algo,
                        gpus > 0 ? gpus : paro_topology_n_gpus(topology),
                        group > 0 ? group : MIN(gpn, gpus > 0 ? gpus : gpn), 0);
    if (channels > 0)
        spec.channels = channels;
    if (chunks > 0)
        spec.chunks = chunks;
    gint64 nodes = (spec.n + gpn - 1) / gpn;
    if (paro_coll_spec_has_root(&spec, gpn))
        explicit_mode = TRUE;
    g_autoptr(ParoGraph) graph =
        paro_graph_new(topology, nodes, !explicit_mode && nodes > 1, &error);
    if (graph == NULL) {
        g_printerr("parosim collective: %s\n", error->message);
        return PARO_EXIT_ERROR;
    }
    /* What the simulations will cost, before the first: refused at once when beyond the
     * work limit (issue #16 H1, H3: a node of 1,024 GPUs or 16,384 explicit GPUs ran for
     * minutes without a word). */
    ParoCollWork work = paro_coll_estimate(graph, &spec);
    double n_sizes = count_sizes(min_bytes, max_bytes, factor);
    if (work.seconds * n_sizes > paro_limit_work_budget_s()) {
        g_autofree char *what = paro_coll_work_describe(&work);
        g_printerr("parosim collective: error: simulating this collective would take about "
                   "%.0f s (%s, for %.0f size%s), beyond the limit of %.0f s; lower %s\n",
                   work.seconds * n_sizes, what, n_sizes, n_sizes == 1 ? "" : "s",
                   paro_limit_work_budget_s(), driver(&work, explicit_mode, n_sizes, gpn));
        return PARO_EXIT_ERROR;
    }
    g_autoptr(GArray) rows = g_array_new(FALSE, FALSE, sizeof(Row));
    for (double size = min_bytes; size <= max_bytes * (1 + 1e-12); size *= factor) {
        Row row = {floor(size / 4) * 4, {0}};
        spec.size_bytes = row.size;
        if (!paro_coll_simulate(graph, (ParoNetFidelity)fidelity, &spec, &row.r, &error)) {
            g_printerr("parosim collective: %s\n", error->message);
            return PARO_EXIT_ERROR;
        }
        g_array_append_val(rows, row);
        if (min_bytes == max_bytes)
            break;
    }
    g_autoptr(GString) out = g_string_new(NULL);
    render(out, format, topology, &spec, explicit_mode, fidelity, rows);
    return paro_cli_write(out) ? PARO_EXIT_OK : PARO_EXIT_ERROR;
}
