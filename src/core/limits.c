/* SPDX-License-Identifier: MIT */
/* The named limits and why each has its value. A limit is generous (ten to a hundred times
 * the largest real value) where exceeding it can only be a mistake or an attack, and as
 * tight as the machine needs where the value sizes memory or time. */
#include "core/limits.h"

#include <math.h>
#include <string.h>

#include "core/error.h"

#define COUNT(n, lo, hi, w)                                                                        \
    {                                                                                              \
        n, lo, hi, "", w                                                                           \
    }

const ParoLimit paro_limit_layers =
    COUNT("layers", 1, 4096,
          "the deepest published transformers have about 130 layers, and the step simulates "
          "every layer of every micro-step");
const ParoLimit paro_limit_model_dim =
    COUNT("a model dimension", 1, 16777216,
          "2^24 is about 60 times the widest published dimension (a 256,000-token vocabulary)");
const ParoLimit paro_limit_parameters =
    COUNT("parameters", 1, 1e15,
          "from one parameter to 100 times the 10-trillion-parameter models the extreme tests "
          "cover");
const ParoLimit paro_limit_accumulation =
    COUNT("accumulation", 1, 1048576,
          "a critical batch of 1e8 tokens on one GPU at 2,048-token sequences needs 5e4 "
          "micro-steps, and a step that is not periodic (pipelines, layered accumulation) "
          "simulates every one");
const ParoLimit paro_limit_micro_batch =
    COUNT("micro_batch", 1, 1048576, "2^20 sequences a micro-step is beyond any GPU's memory");
const ParoLimit paro_limit_sequence =
    COUNT("sequence", 1, 16777216, "2^24 tokens is beyond the longest context windows (1e7)");
const ParoLimit paro_limit_prefetch =
    COUNT("prefetch", 0, 4096, "prefetching deeper than the deepest model changes nothing");
const ParoLimit paro_limit_virtual =
    COUNT("virtual", 1, 4096, "a model chunk holds at least one layer");
const ParoLimit paro_limit_lora_rank =
    COUNT("rank", 1, 16777216, "a LoRA rank is below the model's width");
const ParoLimit paro_limit_moe_factor =
    COUNT("load factor", 0, 65536, "an expert takes at most every token: experts x its share");
const ParoLimit paro_limit_nodes =
    COUNT("nodes", 1, 16777216,
          "2^24 nodes is a hundred times the largest clusters, and a collective's ring has "
          "a step per GPU");
const ParoLimit paro_limit_gpus_per_node =
    COUNT("gpus", 1, 4096,
          "nodes have 4 to 72 GPUs (an NVL72 rack), and the links of a node are instantiated "
          "per GPU");
const ParoLimit paro_limit_gpus =
    COUNT("GPUs", 1, 68719476736.0,
          "2^36 is the most GPUs a cluster of at most 2^24 nodes of 4,096 GPUs holds");
const ParoLimit paro_limit_nics =
    COUNT("NICs per node", 1, 64,
          "the densest nodes have 8 to 18 NICs, and every NIC is a pair of links in every "
          "node the network model instantiates");
const ParoLimit paro_limit_channels =
    COUNT("channels", 1, 64,
          "NCCL runs at most 32 or 64 channels (MAXCHANNELS), and every channel is a ring "
          "whose every GPU is simulated");
const ParoLimit paro_limit_sms =
    COUNT("streaming multiprocessors", 1, 1024,
          "the largest GPUs have under 200; a GEMM wave is one tile per SM");

const ParoLimit paro_limit_chunks =
    COUNT("chunks", 1, 1024,
          "pipelined collectives use 4 to 64 pieces, and every chunk is a task with state per "
          "GPU and channel");
const ParoLimit paro_limit_bytes = {"a size", 0, 1152921504606846976.0 /* 2^60 */, "B",
                                    "an exbibyte is ten million times a GPU's memory"};
const ParoLimit paro_limit_bandwidth = {
    "a bandwidth", 1, 1e18, "B/s",
    "from a byte a second to an exabyte a second, far beyond any link or memory"};
const ParoLimit paro_limit_flop_rate = {
    "a compute rate", 1e6, 1e21, "FLOP/s",
    "from a megaflop a second (a 1990 workstation) to a zettaflop (a thousand times the "
    "fastest GPU)"};
const ParoLimit paro_limit_coll_sizes =
    COUNT("sizes", 1, 1000,
          "nccl-tests sweeps 8 B to 8 GB in about 30 sizes, and each size is a simulation");
const ParoLimit paro_limit_latency = {
    "a latency", 0, 1.0, "s",
    "real latencies are microseconds, and summed over a step's ring steps larger ones "
    "overflow the picosecond clock (107 days)"};
const ParoLimit paro_limit_duration = {
    "a duration", 0, 86400.0, "s",
    "one device's share of a micro-batch takes milliseconds to seconds, and a step of many "
    "must stay inside the picosecond clock (107 days)"};
const ParoLimit paro_limit_measured_time = {
    "a measured time", 1e-9, 3600.0, "s",
    "nccl-tests and the harnesses print microseconds, and the shortest GPU operation (a kernel "
    "launch) takes about a microsecond, the longest (16 GiB over a slow network) seconds; "
    "errors relative to such a time stay finite and printable"};
const ParoLimit paro_limit_probability = {"a probability", 0, 1.0, "",
                                          "a dropout rate is a probability"};
const ParoLimit paro_limit_relative_error = {
    "a relative error", 0, 1e6, "",
    "an error is a fraction of the measured time; a prediction a million times off is no "
    "model to hold to a record, and the bound keeps the percentages printable"};
const ParoLimit paro_limit_sweep_points =
    COUNT("points", 1, 100000,
          "the 10,000-point benchmark takes about a minute on two cores, and every point's "
          "results are held until the output is written");
const ParoLimit paro_limit_jobs =
    COUNT("jobs", 1, 256,
          "each worker thread holds a stack and a simulation; more threads than cores only "
          "costs memory");
const ParoLimit paro_limit_tokens =
    COUNT("tokens", 1, 1e18,
          "the largest training runs see about 2e13 tokens; 1e18 keeps days and steps "
          "printable");
const ParoLimit paro_limit_input_bytes = {
    "a file", 0, 16777216.0, "B",
    "models, topologies, scenarios, calibrations and HuggingFace configs are a few KB, and "
    "the YAML tree is held in memory"};
const ParoLimit paro_limit_table_bytes = {
    "a table", 0, 268435456.0, "B",
    "a 10,000-point sweep of 29 strategies is about 100 MB, and the table is held in memory"};
const ParoLimit paro_limit_trace_bytes = {
    "a trace", 0, 268435456.0, "B",
    "the trace is held in memory, about twice its size in records and text, before it is "
    "written"};
const ParoLimit paro_limit_memory = {
    "the memory", 0, 1073741824.0, "B",
    "a simulation's own state; with the inputs, outputs and the process around it the "
    "command stays within 2 GB"};
const ParoLimit paro_limit_links =
    COUNT("links", 0, 16777216,
          "the link graph holds each link's capacity and load; NVLink nodes have GPUs "
          "squared links each");
const ParoLimit paro_limit_plan_seconds = {
    "the search", 0, 120.0, "s",
    "a plan is a search of a hundred configurations or more; the README's largest (GPT-3 175B "
    "on 32,768 GPUs with --lga) take about 30 s"};
const ParoLimit paro_limit_work_seconds = {
    "the work", 0, 10.0, "s",
    "a command refuses at once what it cannot finish in about 10 s, rather than hang"};

gboolean paro_limit_check(const ParoLimit *limit, double value)
{
    return value >= limit->min && value <= limit->max;
}

char *paro_format_count(double value)
{
    if (!(fabs(value) < 1e15) || value != floor(value))
        return g_strdup_printf("%.3g", value);
    g_autofree char *digits = g_strdup_printf("%.0f", fabs(value));
    GString *s = g_string_new(value < 0 ? "-" : "");
    gsize n = strlen(digits);
    for (gsize i = 0; i < n; i++) {
        if (i > 0 && (n - i) % 3 == 0)
            g_string_append_c(s, ',');
        g_string_append_c(s, digits[i]);
    }
    return g_string_free(s, FALSE);
}

/* A bound or a value in the limit's unit: counts with separators, quantities in %g. */
static char *format_value(const ParoLimit *limit, double value)
{
    if (limit->unit[0] == '\0')
        return paro_format_count(value);
    return g_strdup_printf("%.6g %s", value, limit->unit);
}

char *paro_limit_describe(const ParoLimit *limit, const char *what, double value,
                          const char *written)
{
    g_autofree char *v = format_value(limit, value);
    if (written != NULL && limit->unit[0] != '\0') {
        char *both = g_strdup_printf("%s (%s)", written, v);
        g_free(v);
        v = both;
    }
    gboolean low = !(value >= limit->min);
    g_autofree char *bound = format_value(limit, low ? limit->min : limit->max);
    return g_strdup_printf("'%s' is %s, %s the limit of %s: %s", what ? what : limit->name, v,
                           low ? "below" : "above", bound, limit->why);
}

gboolean paro_limit_check_option(const ParoLimit *limit, const char *option, double value,
                                 GError **error)
{
    if (paro_limit_check(limit, value))
        return TRUE;
    g_autofree char *text = paro_limit_describe(limit, option, value, NULL);
    g_set_error(error, PARO_CONFIG_ERROR, PARO_CONFIG_ERROR_RANGE, "%s", text);
    return FALSE;
}

static double work_scale = 1.0;

void paro_limit_set_work_scale(double scale)
{
    work_scale = scale;
}

double paro_limit_work_budget_s(void)
{
    return paro_limit_work_seconds.max * work_scale;
}

double paro_limit_plan_budget_s(void)
{
    return paro_limit_plan_seconds.max * work_scale;
}

double paro_limit_sweep_points_max(void)
{
    return MAX(1.0, floor(paro_limit_sweep_points.max * work_scale));
}
