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
#include "sweep/sweep.h"
#include "yaml/loaders.h"
#include "yaml/override.h"
#include "yaml/yaml.h"

static const char collective_help[] =
    "Times one collective on a cluster over a range of sizes and prints nccl-tests' table:\n"
    "size (B, the whole array), count and type (float), redop, root, time (us), algbw =\n"
    "size/time and busbw = algbw x the nccl-tests factor (AllReduce 2(n-1)/n, AllGather,\n"
    "ReduceScatter and AlltoAll (n-1)/n, Broadcast 1).\n"
    "\n"
    "Models (--model): nccl (default), NCCL's own cost model from the topology's figures:\n"
    "the channels its topology search finds, the latency and bandwidth of each algorithm\n"
    "and protocol (LL, LL128, Simple), and the choice its tuner makes, printed per size;\n"
    "flow, the collective's transfers simulated on the cluster's links (flow-level\n"
    "max-min network), with the bytes carried by intra- and inter-node links.\n"
    "\n"
    "Algorithms: auto (default: NCCL's choice; ring with the flow model), ring, tree\n"
    "(AllReduce), nvls (NVLink SHARP, one Hopper NVSwitch node), nvlstree (NVLS inside\n"
    "nodes, trees between), and PaRO's hierarchical (intra, then m parallel inter-group\n"
    "rings, then intra, in sequence) and ho-ring (the same cut into chunks that\n"
    "pipeline). --proto forces NCCL's protocol (NCCL_PROTO). sendrecv (the flow model\n"
    "only): every GPU sends S to the next rank (busbw factor 1). alltoall: every GPU sends\n"
    "S/n of its S to each other GPU at once, as NCCL's grouped send/receive (no algorithm\n"
    "to choose, printed p2p; LL up to 16 KiB a peer, else Simple); the flow model starts\n"
    "all those flows together on the links.\n"
    "\n"
    "Examples:\n"
    "  parosim collective --topology topologies/dgx-h100x8.yaml --op allreduce\n"
    "  parosim collective --topology topologies/a100x8-200g.yaml --op allreduce \\\n"
    "      --algo ring --gpus 64 -b 1M -e 1G -f 4\n"
    "  parosim collective --topology topologies/dgx-h100x8.yaml --op allgather \\\n"
    "      --model flow --algo ho-ring --gpus 16384 -b 1G -e 1G --format json\n"
    "  parosim collective --topology topologies/dgx-h100x8.yaml --op alltoall \\\n"
    "      --gpus 64 -b 1M -e 1G";

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

/* Appends one GPU count's report: as it is for a single count; with several, CSV rows gain
 * a leading gpus column (the header once), JSON objects form an array, tables follow each
 * other (each names its GPUs in its '#' lines). */
static void append_count(GString *out, const GString *one, gint64 gpus, gboolean several,
                         ParoFormat format, guint index)
{
    if (!several) {
        g_string_append_len(out, one->str, (gssize)one->len);
        return;
    }
    if (format == PARO_FORMAT_JSON) {
        g_string_append(out, index == 0 ? "[\n" : ",\n");
        g_string_append_len(out, one->str, (gssize)one->len);
        while (out->len && out->str[out->len - 1] == '\n')
            g_string_truncate(out, out->len - 1);
        return;
    }
    if (format == PARO_FORMAT_TABLE) {
        if (index > 0)
            g_string_append_c(out, '\n');
        g_string_append_len(out, one->str, (gssize)one->len);
        return;
    }
    g_auto(GStrv) lines = g_strsplit(one->str, "\n", -1);
    for (int i = 0; lines[i] && *lines[i]; i++) {
        if (i == 0 && index == 0)
            g_string_append_printf(out, "gpus,%s\n", lines[i]);
        else if (i > 0)
            g_string_append_printf(out, "%" G_GINT64_FORMAT ",%s\n", gpus, lines[i]);
    }
}

/* --gpus N, or a list or range as --vary takes them (16,32,64 or 16..128*2), as counts;
 * NULL: one count, -1 (the whole topology). Returns: NULL and a message in @usage. */
static GArray *gpu_counts(const char *text, char **usage)
{
    GArray *counts = g_array_new(FALSE, FALSE, sizeof(gint64));
    if (text == NULL) {
        gint64 all = -1;
        g_array_append_val(counts, all);
        return counts;
    }
    g_autofree char *arg = g_strconcat("gpus=", text, NULL);
    g_autoptr(GError) error = NULL;
    g_autoptr(ParoSweepAxis) axis = paro_sweep_axis_parse(arg, 1, &error);
    for (guint i = 0; axis && i < axis->values->len; i++) {
        const char *v = g_ptr_array_index(axis->values, i);
        char *end;
        gint64 n = g_ascii_strtoll(v, &end, 10);
        if (*end || n < 1) {
            *usage = g_strdup_printf("--gpus must be at least 1: a whole number, a list or a "
                                     "range (16,32,64 or 16..128*2), not '%s'",
                                     v);
            g_array_free(counts, TRUE);
            return NULL;
        }
        g_array_append_val(counts, n);
    }
    if (axis == NULL) {
        *usage = g_strdup_printf("--gpus: %s", error->message);
        g_array_free(counts, TRUE);
        return NULL;
    }
    return counts;
}

/* The topology file with --set overrides applied to it (paths as in the file: nodes,
 * node.nics.bandwidth...), located as `--set[N]` in errors. */
static ParoTopology *load_topology(const char *path, char **sets, GError **error)
{
    g_autoptr(ParoNode) root = paro_yaml_load_file(path, error);
    if (root == NULL)
        return NULL;
    for (int i = 0; sets && sets[i]; i++) {
        g_autoptr(ParoOverride) o = paro_override_parse(sets[i], i + 1, error);
        if (o == NULL || !paro_override_apply(root, o, 0, error))
            return NULL;
    }
    return paro_topology_from_node(root, error);
}

/* The choices of one `collective` call, shared by every GPU count of --gpus. */
typedef struct {
    int op, algo, model, proto, fidelity, format;
    double min_bytes, max_bytes, factor;
    gint64 group, channels, chunks;
    gboolean explicit_mode, events_only;
} CollChoice;

/* Times the collective over the sizes on @gpus GPUs (-1: the whole topology) and appends its
 * report to @out. Returns: an exit status. */
static int one_count(ParoTopology *topology, const CollChoice *c, gint64 gpus, GString *out)
{
    g_autoptr(GError) error = NULL;
    gint64 gpn = topology->gpus_per_node;
    ParoCollSpec spec;
    paro_coll_spec_init(&spec, topology, (ParoCollKind)c->op, (ParoAlgorithm)c->algo,
                        gpus > 0 ? gpus : paro_topology_n_gpus(topology),
                        c->group > 0 ? c->group : MIN(gpn, gpus > 0 ? gpus : gpn), 0);
    if (c->channels > 0)
        spec.channels = c->channels;
    if (c->chunks > 0)
        spec.chunks = c->chunks;
    spec.events_only = c->events_only;
    ParoCollReport head = {topology, &spec, (ParoCollModel)c->model, (ParoNetFidelity)c->fidelity,
                           FALSE};
    g_autoptr(GArray) rows = g_array_new(FALSE, TRUE, sizeof(ParoCollRow));
    if (c->model == PARO_COLL_MODEL_NCCL) {
        guint protos = c->proto >= 0 ? 1u << c->proto : 0;
        for (double size = c->min_bytes; size <= c->max_bytes * (1 + 1e-12); size *= c->factor) {
            ParoCollRow row = {floor(size / 4) * 4, 0, NAN, NAN, PARO_NCCL_RING, PARO_NCCL_SIMPLE};
            spec.size_bytes = row.size;
            double s;
            if (!paro_nccl_collective_s(topology, &spec, protos, &s, &row.algo, &row.proto,
                                        &error)) {
                g_printerr("parosim collective: %s\n", error->message);
                return PARO_EXIT_ERROR;
            }
            row.time = paro_time_from_s(s);
            g_array_append_val(rows, row);
            if (c->min_bytes == c->max_bytes)
                break;
        }
        paro_report_collective(&head, rows, (ParoFormat)c->format, out);
        return PARO_EXIT_OK;
    }
    if (spec.algorithm == PARO_ALGO_AUTO && spec.op != PARO_COLL_ALLTOALL)
        spec.algorithm = PARO_ALGO_RING; /* the flow model runs NCCL's rings */
    gint64 nodes = (spec.n + gpn - 1) / gpn;
    gboolean explicit_mode = c->explicit_mode || paro_coll_spec_has_root(&spec, gpn);
    head.explicit_mode = explicit_mode;
    g_autoptr(ParoGraph) graph =
        paro_graph_new(topology, nodes, !explicit_mode && nodes > 1, &error);
    if (graph == NULL) {
        g_printerr("parosim collective: %s\n", error->message);
        return PARO_EXIT_ERROR;
    }
    /* What the simulations will cost, before the first: refused at once when beyond the
     * work limit (issue #16 H1, H3: a node of 1,024 GPUs or 16,384 explicit GPUs ran for
     * minutes without a word). */
    ParoCollWork work = paro_coll_estimate(graph, (ParoNetFidelity)c->fidelity, &spec);
    double n_sizes = count_sizes(c->min_bytes, c->max_bytes, c->factor);
    if (work.seconds * n_sizes > paro_limit_work_budget_s()) {
        g_autofree char *what = paro_coll_work_describe(&work);
        g_printerr("parosim collective: error: simulating this collective would take about "
                   "%.0f s (%s, for %.0f size%s), beyond the limit of %.3g s; lower %s\n",
                   work.seconds * n_sizes, what, n_sizes, n_sizes == 1 ? "" : "s",
                   paro_limit_work_budget_s(), driver(&work, explicit_mode, n_sizes, gpn));
        return PARO_EXIT_ERROR;
    }
    for (double size = c->min_bytes; size <= c->max_bytes * (1 + 1e-12); size *= c->factor) {
        ParoCollRow row = {floor(size / 4) * 4, 0, 0, 0, PARO_NCCL_RING, PARO_NCCL_SIMPLE};
        spec.size_bytes = row.size;
        ParoCollResult r;
        if (!paro_coll_simulate(graph, (ParoNetFidelity)c->fidelity, &spec, &r, &error)) {
            g_printerr("parosim collective: %s\n", error->message);
            return PARO_EXIT_ERROR;
        }
        row.time = r.time;
        row.intra_bytes = r.intra_bytes;
        row.inter_bytes = r.inter_bytes;
        g_array_append_val(rows, row);
        if (c->min_bytes == c->max_bytes)
            break;
    }
    paro_report_collective(&head, rows, (ParoFormat)c->format, out);
    return PARO_EXIT_OK;
}

int paro_cmd_collective(int argc, char **argv)
{
    g_autofree char *topology_path = NULL, *op_name = NULL, *algo_name = NULL;
    g_autofree char *calibration_path = NULL;
    g_autofree char *min_text = NULL, *max_text = NULL, *format_name = NULL, *net_name = NULL;
    g_autofree char *model_name = NULL, *proto_name = NULL;
    gint64 group = -1, channels = -1, chunks = -1; /* -1: not given */
    g_autofree char *gpus_text = NULL;
    g_auto(GStrv) sets = NULL;
    double factor = 2;
    gboolean explicit_mode = FALSE, events_only = FALSE;
    GOptionEntry entries[] = {
        {"topology", 't', 0, G_OPTION_ARG_FILENAME, &topology_path, "Cluster description",
         "T.yaml"},
        {"op", 'o', 0, G_OPTION_ARG_STRING, &op_name,
         "allreduce, allgather, reducescatter, broadcast, sendrecv or alltoall", "OP"},
        {"algo", 'a', 0, G_OPTION_ARG_STRING, &algo_name,
         "auto (default), ring, tree, nvls, nvlstree, hierarchical or ho-ring", "ALGO"},
        {"model", 0, 0, G_OPTION_ARG_STRING, &model_name, "nccl (default) or flow", "MODEL"},
        {"proto", 0, 0, G_OPTION_ARG_STRING, &proto_name,
         "NCCL's protocol: auto (default), LL, LL128 or Simple", "PROTO"},
        {"gpus", 'n', 0, G_OPTION_ARG_STRING, &gpus_text,
         "GPUs taking part (default: the whole topology); a list or range (16,32,64 or "
         "16..128*2) prints one table, with a gpus column in CSV",
         "N"},
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
        {"events", 0, 0, G_OPTION_ARG_NONE, &events_only,
         "Simulate every send as events, also where a ring shares no link and its recurrence "
         "gives the same times, both of a tree's halves where one mirrors the other, and "
         "every link in the max-min solve (to check them; much slower)",
         NULL},
        {"network", 0, 0, G_OPTION_ARG_STRING, &net_name,
         "the flow model's links: maxmin (default, contention) or analytic (latency + "
         "size/bandwidth)",
         "NET"},
        {"calibration", 0, 0, G_OPTION_ARG_FILENAME, &calibration_path,
         "Calibration file whose network section replaces the fabric and NIC bandwidth and "
         "latency and the per-step overhead (as in a scenario)",
         "FILE"},
        {"format", 0, 0, G_OPTION_ARG_STRING, &format_name, "table (default), json or csv",
         "FORMAT"},
        {"set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &sets,
         "Override a topology value (repeatable), as in the topology file: "
         "--set node.nics.bandwidth='200 Gb/s'",
         "KEY=VALUE"},
        {NULL},
    };
    if (!paro_cli_parse_options("collective", "", collective_help, entries, &argc, &argv))
        return PARO_EXIT_USAGE;
    g_autoptr(GError) error = NULL;
    int op = op_name ? lookup(paro_coll_kind_names, op_name) : -1;
    int algo = lookup(paro_algorithm_names, algo_name ? algo_name : "auto");
    int model = lookup(paro_coll_model_names, model_name ? model_name : "nccl");
    int proto = proto_name && g_ascii_strcasecmp(proto_name, "auto") != 0 ? -2 : -1;
    for (int i = 0; proto == -2 && paro_nccl_proto_names[i]; i++)
        if (g_ascii_strcasecmp(proto_name, paro_nccl_proto_names[i]) == 0)
            proto = i;
    int fidelity = lookup(paro_net_fidelity_names, net_name ? net_name : "maxmin");
    int format = paro_cli_parse_format(format_name ? format_name : "table");
    double min_bytes = 8, max_bytes = 1073741824.0;
    const char *usage = NULL;
    if (argc != 1)
        usage = "unexpected argument";
    else if (topology_path == NULL)
        usage = "--topology is required";
    else if (op < 0)
        usage = "--op must be allreduce, allgather, reducescatter, broadcast, sendrecv or alltoall";
    else if (algo < 0)
        usage = "--algo must be auto, ring, tree, nvls, nvlstree, hierarchical or ho-ring";
    else if (model < 0)
        usage = "--model must be nccl or flow";
    else if (proto == -2)
        usage = "--proto must be auto, LL, LL128 or Simple";
    else if (model == PARO_COLL_MODEL_FLOW &&
             (algo == PARO_ALGO_NVLS || algo == PARO_ALGO_NVLS_TREE))
        usage = "the flow model has no NVLS (in-switch reduction): use --model nccl";
    else if (model == PARO_COLL_MODEL_NCCL && op == PARO_COLL_SENDRECV)
        usage = "NCCL's cost model has no send/receive: use --model flow";
    else if (op == PARO_COLL_ALLTOALL && algo != PARO_ALGO_AUTO)
        usage = "alltoall has no algorithm to choose (NCCL runs it as grouped send/receive "
                "to every peer at once): leave --algo out or give auto";
    else if (op == PARO_COLL_ALLTOALL && proto >= 0)
        usage = "alltoall's protocol is NCCL's send/receive rule (LL up to 16 KiB a peer, "
                "else Simple), not --proto";
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
    else if (group == 0 || channels == 0 || chunks == 0 || group < -1 || channels < -1 ||
             chunks < -1)
        usage = "--group, --channels and --chunks must be at least 1";
    g_autofree char *gpus_usage = NULL;
    g_autoptr(GArray) counts = usage ? NULL : gpu_counts(gpus_text, &gpus_usage);
    if (usage == NULL && counts == NULL)
        usage = gpus_usage;
    g_autoptr(GError) limit_error = NULL;
    for (guint i = 0; usage == NULL && i < counts->len; i++) {
        gint64 n = g_array_index(counts, gint64, i);
        if (n > 0 && !paro_limit_check_option(&paro_limit_gpus, "--gpus", (double)n, &limit_error))
            usage = limit_error->message;
    }
    if (usage == NULL && counts->len > 1000)
        usage = "--gpus names more than 1,000 counts";
    if (usage == NULL &&
        (!paro_limit_check_option(&paro_limit_bytes, "-e", max_bytes, &limit_error) ||
         !paro_limit_check_option(&paro_limit_coll_sizes, "the sizes of -b, -e and -f",
                                  count_sizes(min_bytes, max_bytes, factor), &limit_error) ||
         (group > 0 &&
          !paro_limit_check_option(&paro_limit_gpus, "--group", (double)group, &limit_error)) ||
         (channels > 0 && !paro_limit_check_option(&paro_limit_channels, "--channels",
                                                   (double)channels, &limit_error)) ||
         (chunks > 0 &&
          !paro_limit_check_option(&paro_limit_chunks, "--chunks", (double)chunks, &limit_error))))
        usage = limit_error->message;
    if (usage != NULL)
        return paro_cli_usage("collective", usage);
    g_autoptr(ParoTopology) topology = load_topology(topology_path, sets, &error);
    if (topology == NULL) {
        paro_cli_report_error(error, (const char *const *)sets, NULL);
        return PARO_EXIT_ERROR;
    }
    if (calibration_path) {
        ParoCalibration cal = {0};
        if (!paro_calib_load(calibration_path, &cal, &error)) {
            paro_cli_report_error(error, NULL, NULL);
            return PARO_EXIT_ERROR;
        }
        paro_calib_apply(&cal, (ParoCollModel)model, topology);
        paro_calib_clear(&cal);
    }
    CollChoice choice = {op,        algo,   model, proto,    fidelity, format,        min_bytes,
                         max_bytes, factor, group, channels, chunks,   explicit_mode, events_only};
    g_autoptr(GString) out = g_string_new(NULL);
    for (guint i = 0; i < counts->len; i++) {
        gint64 n = g_array_index(counts, gint64, i);
        g_autoptr(GString) one = g_string_new(NULL);
        int status = one_count(topology, &choice, n, one);
        if (status != PARO_EXIT_OK)
            return status;
        append_count(out, one, n, counts->len > 1, (ParoFormat)format, i);
    }
    if (counts->len > 1 && format == PARO_FORMAT_JSON)
        g_string_append(out, "\n]\n");
    return paro_cli_write(out) ? PARO_EXIT_OK : PARO_EXIT_ERROR;
}
