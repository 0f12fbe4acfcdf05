/* SPDX-License-Identifier: MIT */
/* The `parosim run` report (table, JSON, CSV) and the step trace (TSV, or Chrome trace
 * JSON, which Perfetto opens). */
#include "report/report.h"

#include <math.h>
#include <string.h>

#include "core/format.h"
#include "core/units.h"
#include "net/network.h"

static const char *stream_name(guint streams)
{
    if (streams & PARO_STREAM_COMPUTE)
        return "compute";
    if (streams & PARO_STREAM_P2P)
        return "p2p";
    if (streams & PARO_STREAM_H2D)
        return "h2d";
    if (streams & PARO_STREAM_D2H)
        return "d2h";
    if ((streams & PARO_STREAM_INTRA) && (streams & PARO_STREAM_INTER))
        return "global";
    return streams & PARO_STREAM_INTRA ? "intra" : "inter";
}

static void fixed(GString *out, const char *format, double value, int width)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    int decimals = format[1] == '.' ? format[2] - '0' : 6; /* "%.3f" */
    g_string_append_printf(out, " %*s", width,
                           paro_format_fixed(buf, sizeof buf, value, decimals, width));
}

static void table(const ParoScenarioDerived *g, const ParoStepResult *rows, guint n, GString *out)
{
    GString *head = g_string_new(NULL);
    paro_report_strategies_header(g, head);
    /* The guideline header names itself; this report is the simulation's. */
    char *first_nl = strchr(head->str, '\n');
    g_string_append_printf(out, "# parosim %s run: simulated training step%s", PARO_VERSION,
                           first_nl ? first_nl : "\n");
    g_string_free(head, TRUE);
    const ParoTraining *tr = &g->scenario->training;
    g_string_append_printf(
        out, "# step: overlap %s  prefetch %" G_GINT64_FORMAT "  bucket %.4g MB  network %s\n",
        tr->overlap ? "on" : "off", tr->prefetch, tr->bucket_bytes / 1e6,
        paro_net_fidelity_names[g->scenario->network]);
    /* as written: one count a stage, or one a module (pp x virtual of them) */
    const GArray *stages = g->scenario->stage_layers;
    const char *label = stages != NULL && (gint64)stages->len != g->scenario->pp
                            ? "# module layers: "
                            : "# stage layers: ";
    for (guint i = 0; stages != NULL && i < stages->len; i++)
        g_string_append_printf(out, "%s%" G_GINT64_FORMAT "%s", i ? ", " : label,
                               g_array_index(stages, gint64, i), i + 1 < stages->len ? "" : "\n");
    /* The compression columns come only with compression, so plain reports keep their
     * layout. */
    gboolean compressed = paro_compress_is_active(&g->scenario->compression);
    /* the host column comes only with offloading, as the compression ones do */
    gboolean offload = paro_scenario_offloads(g->scenario);
    g_string_append(out, "#rank strategy          aliases               step  guideline    compute"
                         "    exposed   samples/s    tokens/s  TFLOP/s    MFU     peak  fits");
    g_string_append(out, offload ? "     host" : "");
    g_string_append(out, compressed ? "  compress     saved     saved\n" : "\n");
    g_string_append(out, "#                                              (s)        (s)        (s)"
                         "        (s)                           (/GPU)           (GiB)");
    g_string_append(out, offload ? "      (GiB/node)" : "");
    g_string_append(out, compressed ? "             (s)       (s)      (GB)\n" : "\n");
    for (guint i = 0; i < n; i++) {
        const ParoStepResult *r = &rows[i];
        g_autofree char *aliases = g_strjoinv(",", (char **)r->strategy->aliases);
        g_string_append_printf(out, "%5d %-17s %-17s", r->rank, r->strategy->name,
                               aliases[0] ? aliases : "-");
        fixed(out, "%.3f", paro_time_to_s(r->step), 9);
        fixed(out, "%.3f", r->guideline_s, 10);
        fixed(out, "%.3f", r->compute_s, 10);
        fixed(out, "%.3f", r->exposed_comm_s, 10);
        fixed(out, "%.1f", r->samples_per_s, 11);
        fixed(out, "%.0f", r->tokens_per_s, 11);
        fixed(out, "%.1f", r->tflops_per_gpu, 8);
        fixed(out, "%.3f", r->mfu, 6);
        fixed(out, "%.2f", r->peak_bytes / PARO_GIB, 8);
        /* "tight": it fits, within the allocator's headroom (decision 84); "host": the GPU
         * holds it, the node's host memory not. The next column gives back what "tight"
         * takes beyond the column, so every other row keeps its layout. */
        gboolean gpu = r->peak_bytes > g->scenario->topology->gpu.memory_bytes;
        const char *fit = r->tight ? "tight" : r->fits ? "yes" : (gpu || !offload ? "OOM" : "host");
        g_string_append_printf(out, offload ? "  %-4s" : "  %s", fit);
        int over = (int)strlen(fit) - (offload ? 4 : 3);
        if (offload) {
            fixed(out, "%.1f", r->host_bytes / PARO_GIB, 8 - MAX(over, 0));
            over = 0;
        }
        if (compressed) {
            fixed(out, "%.3f", r->compress_s, 9 - MAX(over, 0));
            fixed(out, "%.3f", r->time_saved_s, 9);
            fixed(out, "%.2f", r->bytes_saved / 1e9, 9);
        }
        g_string_append_c(out, '\n');
    }
    if (n > 0 && rows[0].fits) {
        char step[G_ASCII_DTOSTR_BUF_SIZE], mem[G_ASCII_DTOSTR_BUF_SIZE];
        g_string_append_printf(
            out, "# best: %s  step %s s  peak %s GiB per GPU%s\n", rows[0].strategy->name,
            g_ascii_formatd(step, sizeof step, "%.4g", paro_time_to_s(rows[0].step)),
            g_ascii_formatd(mem, sizeof mem, "%.4g", rows[0].peak_bytes / PARO_GIB),
            /* ranked first only when no row fits with margin (decision 84) */
            rows[0].tight ? "  tight: none fits with the memory headroom" : "");
        /* the caching allocator's view of the best row (decision 94) */
        g_string_append(out, "# memory: ");
        if (rows[0].stages > 1) /* the stage that must fit: its peak is the highest */
            g_string_append_printf(out, "stage %u of %u, ", rows[0].fullest, rows[0].stages);
        g_string_append_printf(out,
                               "allocated %.2f GiB, reserved %.2f GiB, NCCL buffers and "
                               "overhead %.2f GiB\n",
                               rows[0].allocated_bytes / PARO_GIB,
                               rows[0].reserved_bytes / PARO_GIB, rows[0].outside_bytes / PARO_GIB);
    } else {
        g_string_append_printf(out, "# best: none fits in GPU memory%s\n",
                               offload ? " and host memory" : "");
    }
}

static void num_field(GString *out, const char *key, double value, gboolean last)
{
    g_string_append_printf(out, "\"%s\": ", key);
    paro_report_number(out, value);
    if (!last)
        g_string_append(out, ", ");
}

static void json(const ParoScenarioDerived *g, const ParoStepResult *rows, guint n, GString *out)
{
    const ParoScenario *s = g->scenario;
    g_string_append(out, "{\n  \"parosim\": ");
    paro_report_json_string(out, PARO_VERSION);
    g_string_append_printf(out, ",\n  \"schema_version\": %d", PARO_SCHEMA_VERSION);
    g_string_append(out, ",\n  \"scenario\": ");
    paro_report_json_string(out, s->name);
    g_string_append_printf(out, ",\n  \"n\": %" G_GINT64_FORMAT ",\n  \"m\": %" G_GINT64_FORMAT,
                           g->sizes.n, g->sizes.m);
    paro_report_json_degrees(g, out);
    g_string_append(out, ",\n  \"params\": ");
    paro_report_number(out, g->sizes.params);
    g_string_append(out, ",\n  \"trainable_params\": ");
    paro_report_number(out, g->sizes.trainable);
    paro_report_framework_json(s, &g->compute, out);
    g_string_append(out, ",\n  \"gpu_memory\": ");
    paro_report_number(out, s->topology->gpu.memory_bytes);
    /* Compression fields appear only with compression, so plain reports keep their bytes. */
    gboolean compressed = paro_compress_is_active(&s->compression);
    gboolean offload = paro_scenario_offloads(s);
    if (offload) {
        g_string_append(out, ",\n  \"host_memory\": ");
        paro_report_number(out, s->topology->host.memory_bytes);
    }
    if (compressed) {
        g_autofree char *what = paro_compress_describe(&s->compression);
        g_string_append(out, ",\n  \"compression\": {\"preset\": ");
        paro_report_json_string(out, s->compression.preset == PARO_COMPRESS_CUSTOM
                                         ? "explicit"
                                         : paro_compress_preset_names[s->compression.preset]);
        g_string_append(out, ", \"kinds\": ");
        paro_report_json_string(out, what);
        g_string_append(out, "}");
    }
    g_string_append(out, ",\n  \"strategies\": [\n");
    for (guint i = 0; i < n; i++) {
        const ParoStepResult *r = &rows[i];
        paro_report_json_strategy(out, r->strategy);
        g_string_append_printf(out, "], \"rank\": %d, \"fits\": %s, \"tight\": %s,", r->rank,
                               r->fits ? "true" : "false", r->tight ? "true" : "false");
        /* with offloading, which memory overflows: "gpu", "host", "both" or null */
        if (offload) {
            gboolean gpu = r->peak_bytes > s->topology->gpu.memory_bytes;
            const char *over = gpu && !r->host_fits ? "\"both\""
                               : gpu                ? "\"gpu\""
                               : !r->host_fits      ? "\"host\""
                                                    : "null";
            g_string_append_printf(out, " \"overflow\": %s,", over);
        }
        g_string_append(out, "\n     \"time\": {");
        num_field(out, "step", paro_time_to_s(r->step), FALSE);
        num_field(out, "guideline", r->guideline_s, FALSE);
        num_field(out, "compute", r->compute_s, FALSE);
        num_field(out, "comm", r->comm_s, FALSE);
        num_field(out, "exposed_comm", r->exposed_comm_s, !compressed);
        if (compressed) {
            num_field(out, "compress", r->compress_s, FALSE);
            num_field(out, "saved", r->time_saved_s, TRUE);
        }
        g_string_append(out, "},\n     \"throughput\": {");
        num_field(out, "samples_per_s", r->samples_per_s, FALSE);
        num_field(out, "tokens_per_s", r->tokens_per_s, FALSE);
        num_field(out, "tflops_per_gpu", r->tflops_per_gpu, FALSE);
        num_field(out, "mfu", r->mfu, TRUE);
        if (compressed) {
            g_string_append(out, "},\n     \"compression\": {");
            num_field(out, "bytes_saved", r->bytes_saved, TRUE);
        }
        g_string_append(out, "},\n     \"memory\": {");
        num_field(out, "peak", round(r->peak_bytes), FALSE);
        /* the caching allocator's figures (decision 94): max_memory_allocated and
         * max_memory_reserved's steady state; peak = allocated + outside */
        num_field(out, "allocated", round(r->allocated_bytes), FALSE);
        num_field(out, "reserved", round(r->reserved_bytes), FALSE);
        num_field(out, "outside", round(r->outside_bytes), FALSE);
        num_field(out, "stage", r->fullest, FALSE); /* the pipeline stage whose peak this is */
        for (int c = 0; c < PARO_MEM_N_CATEGORIES; c++)
            num_field(out, paro_mem_category_names[c], round(r->at_peak.bytes[c]),
                      c + 1 == PARO_MEM_N_CATEGORIES && !offload);
        if (offload) /* host memory a node, bytes: the offloaded state and pinned buffers */
            num_field(out, "host", round(r->host_bytes), TRUE);
        g_string_append_printf(out, "}}%s\n", i + 1 < n ? "," : "");
    }
    g_string_append(out, "  ]\n}\n");
}

/* One row per strategy; gpus and mem_capacity repeat the cluster's figures on every row so
 * that a row of a sweep (or a plot script) needs nothing else to place it. */
static void csv(const ParoScenarioDerived *g, const ParoStepResult *rows, guint n, GString *out)
{
    g_string_append(out,
                    "rank,name,aliases,fits,time_step,time_guideline,time_compute,time_comm,"
                    "time_exposed_comm,samples_per_s,tokens_per_s,tflops_per_gpu,mfu,mem_peak");
    for (int c = 0; c < PARO_MEM_N_CATEGORIES; c++)
        g_string_append_printf(out, ",mem_%s", paro_mem_category_names[c]);
    /* Appended last (and always, so every row of a sweep has the same columns). */
    g_string_append(out, ",gpus,mem_capacity,time_compress,bytes_saved,time_saved,tight,"
                         "mem_allocated,mem_reserved,schema_version\n");
    for (guint i = 0; i < n; i++) {
        const ParoStepResult *r = &rows[i];
        g_autofree char *aliases = g_strjoinv(";", (char **)r->strategy->aliases);
        g_string_append_printf(out, "%d,%s,%s,%s", r->rank, r->strategy->name, aliases,
                               r->fits ? "true" : "false");
        const double v[] = {paro_time_to_s(r->step),
                            r->guideline_s,
                            r->compute_s,
                            r->comm_s,
                            r->exposed_comm_s,
                            r->samples_per_s,
                            r->tokens_per_s,
                            r->tflops_per_gpu,
                            r->mfu,
                            round(r->peak_bytes)};
        for (guint k = 0; k < G_N_ELEMENTS(v); k++) {
            g_string_append_c(out, ',');
            paro_report_number(out, v[k]);
        }
        for (int c = 0; c < PARO_MEM_N_CATEGORIES; c++) {
            g_string_append_c(out, ',');
            paro_report_number(out, round(r->at_peak.bytes[c]));
        }
        const ParoTopology *t = g->scenario->topology;
        g_string_append_printf(out, ",%" G_GINT64_FORMAT ",", paro_topology_n_gpus(t));
        paro_report_number(out, t->gpu.memory_bytes);
        g_string_append_c(out, ',');
        paro_report_number(out, r->compress_s);
        g_string_append_c(out, ',');
        paro_report_number(out, r->bytes_saved);
        g_string_append_c(out, ',');
        paro_report_number(out, r->time_saved_s);
        g_string_append_printf(out, ",%s,", r->tight ? "true" : "false");
        paro_report_number(out, round(r->allocated_bytes));
        g_string_append_c(out, ',');
        paro_report_number(out, round(r->reserved_bytes));
        g_string_append_printf(out, ",%d\n", PARO_SCHEMA_VERSION);
    }
}

void paro_report_run(const ParoScenarioDerived *g, const ParoStepResult *rows, guint n,
                     ParoFormat format, GString *out)
{
    switch (format) {
    case PARO_FORMAT_TABLE:
        table(g, rows, n, out);
        return;
    case PARO_FORMAT_JSON:
        json(g, rows, n, out);
        return;
    case PARO_FORMAT_CSV:
        csv(g, rows, n, out);
        return;
    }
}

/* The thread of a task in the Chrome trace: its stage's streams in a fixed order, numbered
 * from 1 (Perfetto reads numeric pid and tid directly; names come as metadata events). */
static guint chrome_tid(const ParoTraceTask *t)
{
    static const char *const kinds[] = {"compute", "p2p", "global", "intra", "inter", "h2d", "d2h"};
    const char *name = stream_name(t->streams);
    guint kind = 0;
    while (kind + 1 < G_N_ELEMENTS(kinds) && strcmp(kinds[kind], name) != 0)
        kind++;
    return 1 + t->device * G_N_ELEMENTS(kinds) + kind;
}

/* Chrome trace JSON: one process per strategy (pid = its rank in the output, from 1), one
 * thread per stage and stream, named by metadata events before their first task; memory as
 * a counter track of the process. */
static void chrome_trace(const ParoStepResult *rows, guint n, GString *out)
{
    g_string_append(out, "{\"traceEvents\": [\n");
    const char *sep = "";
    for (guint i = 0; i < n; i++) {
        const ParoStepResult *r = &rows[i];
        if (r->trace == NULL)
            continue;
        guint pid = i + 1;
        g_string_append_printf(out,
                               "%s{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %u, "
                               "\"args\": {\"name\": \"%s\"}}",
                               sep, pid, r->strategy->name);
        sep = ",\n";
        g_autoptr(GArray) named = g_array_new(FALSE, FALSE, sizeof(guint));
        for (guint k = 0; k < r->trace->len; k++) {
            const ParoTraceTask *t = &g_array_index(r->trace, ParoTraceTask, k);
            guint tid = chrome_tid(t);
            gboolean seen = FALSE;
            for (guint j = 0; j < named->len && !seen; j++)
                seen = g_array_index(named, guint, j) == tid;
            if (!seen) {
                g_array_append_val(named, tid);
                /* with a pipeline, a stage's streams are its own threads */
                g_autofree char *stage =
                    r->stages > 1 ? g_strdup_printf("stage %u ", t->device) : g_strdup("");
                g_string_append_printf(out,
                                       ",\n{\"name\": \"thread_name\", \"ph\": \"M\", "
                                       "\"pid\": %u, \"tid\": %u, \"args\": {\"name\": "
                                       "\"%s%s\"}}",
                                       pid, tid, stage, stream_name(t->streams));
            }
            char a[G_ASCII_DTOSTR_BUF_SIZE], b[G_ASCII_DTOSTR_BUF_SIZE];
            g_string_append_printf(
                out,
                ",\n{\"name\": \"%s\", \"ph\": \"X\", \"pid\": %u, \"tid\": %u, "
                "\"ts\": %s, \"dur\": %s, \"args\": {\"micro\": %d, \"layer\": %d}}",
                t->name, pid, tid,
                g_ascii_formatd(a, sizeof a, "%.6f", paro_time_to_s(t->start) * 1e6),
                g_ascii_formatd(b, sizeof b, "%.6f", paro_time_to_s(t->end - t->start) * 1e6),
                t->micro, t->layer);
        }
        for (guint k = 0; r->memory && k < r->memory->len; k++) {
            const ParoMemSample *m = &g_array_index(r->memory, ParoMemSample, k);
            char a[G_ASCII_DTOSTR_BUF_SIZE];
            g_string_append_printf(
                out,
                ",\n{\"name\": \"memory\", \"ph\": \"C\", \"pid\": %u, \"ts\": %s, "
                "\"args\": {",
                pid, g_ascii_formatd(a, sizeof a, "%.6f", paro_time_to_s(m->time) * 1e6));
            for (int c = 0; c < PARO_MEM_N_CATEGORIES; c++)
                g_string_append_printf(out, "%s\"%s\": %.0f", c ? ", " : "",
                                       paro_mem_category_names[c], m->bytes[c]);
            g_string_append(out, "}}");
        }
    }
    g_string_append(out, "\n]}\n");
}

void paro_report_trace(const ParoStepResult *rows, guint n, gboolean chrome, GString *out)
{
    if (chrome) {
        chrome_trace(rows, n, out);
        return;
    }
    g_string_append(out, "# parosim trace: tasks (seconds) and memory (bytes) per strategy\n"
                         "# task\tstrategy\tstream\tname\tmicro\tlayer\tstart\tend\tstage\n"
                         "# memory\tstrategy\ttime\tparams\tgrads\toptimizer\tactivations"
                         "\tgathered\tbuckets\tcomm_buffers\tworkspace\toverhead"
                         "\toptimizer_temps\ttotal\n");
    for (guint i = 0; i < n; i++) {
        const ParoStepResult *r = &rows[i];
        if (r->trace == NULL)
            continue;
        for (guint k = 0; k < r->trace->len; k++) {
            const ParoTraceTask *t = &g_array_index(r->trace, ParoTraceTask, k);
            char a[G_ASCII_DTOSTR_BUF_SIZE], b[G_ASCII_DTOSTR_BUF_SIZE];
            g_string_append_printf(out, "task\t%s\t%s\t%s\t%d\t%d\t%s\t", r->strategy->name,
                                   stream_name(t->streams), t->name, t->micro, t->layer,
                                   g_ascii_formatd(a, sizeof a, "%.9f", paro_time_to_s(t->start)));
            g_string_append_printf(out, "%s\t%u\n",
                                   g_ascii_formatd(b, sizeof b, "%.9f", paro_time_to_s(t->end)),
                                   t->device);
        }
        for (guint k = 0; r->memory && k < r->memory->len; k++) {
            const ParoMemSample *m = &g_array_index(r->memory, ParoMemSample, k);
            double total = 0;
            char a[G_ASCII_DTOSTR_BUF_SIZE];
            g_string_append_printf(out, "memory\t%s\t%s", r->strategy->name,
                                   g_ascii_formatd(a, sizeof a, "%.9f", paro_time_to_s(m->time)));
            for (int c = 0; c < PARO_MEM_N_CATEGORIES; c++) {
                g_string_append_printf(out, "\t%.0f", m->bytes[c]);
                total += m->bytes[c];
            }
            g_string_append_printf(out, "\t%.0f\n", total);
        }
    }
}
