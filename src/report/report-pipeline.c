/* SPDX-License-Identifier: MIT */
/* The `parosim pipeline` report: one row per schedule (makespan, ideal, bubble and its
 * closed form, activations in flight, p2p traffic), per device for a single schedule, as
 * a table, CSV or JSON; and the timeline as TSV (--trace). */
#include "report/report.h"

#include <math.h>

#include "core/units.h"

static char *fmt(const char *format, double value)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    return g_strdup(g_ascii_formatd(buf, sizeof buf, format, value));
}

/* A time for the header: "0" rather than "0 ps". (transfer full) */
static char *time_text(ParoTime t)
{
    return t == 0 ? g_strdup("0") : paro_units_format(paro_time_to_s(t), PARO_QUANTITY_TIME);
}

static gint64 max_in_flight(const ParoPipeResult *r)
{
    gint64 most = 0;
    for (guint d = 0; d < r->peak_in_flight->len; d++)
        most = MAX(most, g_array_index(r->peak_in_flight, gint64, d));
    return most;
}

static void render_json(GString *out, const ParoPipeReport *in, const GArray *rows)
{
    g_string_append(out, "{\n  \"parosim\": ");
    paro_report_json_string(out, PARO_VERSION);
    g_string_append_printf(out, ",\n  \"schema_version\": %d", PARO_SCHEMA_VERSION);
    g_string_append_printf(out,
                           ",\n  \"devices\": %" G_GINT64_FORMAT
                           ",\n  \"micro_batches\": %" G_GINT64_FORMAT ",\n  \"forward\": ",
                           in->devices, in->micro);
    paro_report_number(out, paro_time_to_s(in->forward));
    g_string_append(out, ",\n  \"backward\": ");
    paro_report_number(out, paro_time_to_s(in->backward));
    g_string_append(out, ",\n  \"p2p\": {\"latency\": ");
    paro_report_number(out, paro_time_to_s(in->p2p_latency));
    g_string_append(out, ", \"bytes\": ");
    paro_report_number(out, in->p2p_bytes);
    g_string_append(out, ", \"bandwidth\": ");
    paro_report_number(out, in->p2p_bandwidth_Bps);
    g_string_append(out, "},\n  \"schedules\": [");
    gboolean first = TRUE;
    for (guint i = 0; i < rows->len; i++) {
        const ParoPipeRow *row = &g_array_index(rows, ParoPipeRow, i);
        const ParoPipeResult *r = row->result;
        if (r == NULL)
            continue;
        const ParoPipeSpec *s = &row->spec;
        g_string_append_printf(out,
                               "%s\n    {\"schedule\": \"%s\", \"accumulation\": \"%s\", "
                               "\"virtual\": %" G_GINT64_FORMAT ", \"modules\": %" G_GINT64_FORMAT,
                               first ? "" : ",", paro_pipe_schedule_names[s->schedule],
                               paro_pipe_accumulation_names[s->accumulation], s->chunks,
                               paro_pipe_n_modules(s));
        first = FALSE;
        const struct {
            const char *key;
            double value;
        } fields[] = {
            {"makespan", paro_time_to_s(r->makespan)},
            {"ideal", paro_time_to_s(r->ideal)},
            {"bubble", r->bubble},
            {"bubble_formula", paro_pipe_bubble_formula(s)},
            {"p2p_time", paro_time_to_s(r->p2p_time)},
            {"p2p_messages", (double)r->p2p_messages},
            {"p2p_bytes", r->p2p_bytes},
        };
        for (guint k = 0; k < G_N_ELEMENTS(fields); k++) {
            g_string_append_printf(out, ", \"%s\": ", fields[k].key);
            if (isnan(fields[k].value))
                g_string_append(out, "null");
            else
                paro_report_number(out, fields[k].value);
        }
        g_string_append(out, ",\n     \"per_device\": [");
        for (guint d = 0; d < r->busy->len; d++) {
            g_string_append_printf(out, "%s{\"device\": %u, \"busy\": ", d ? ", " : "", d);
            paro_report_number(out, paro_time_to_s(g_array_index(r->busy, ParoTime, d)));
            g_string_append_printf(out, ", \"peak_in_flight\": %" G_GINT64_FORMAT "}",
                                   g_array_index(r->peak_in_flight, gint64, d));
        }
        g_string_append(out, "]}");
    }
    g_string_append(out, "\n  ],\n  \"skipped\": [");
    first = TRUE;
    for (guint i = 0; i < rows->len; i++) {
        const ParoPipeRow *row = &g_array_index(rows, ParoPipeRow, i);
        if (row->result != NULL)
            continue;
        g_string_append_printf(out, "%s\n    {\"schedule\": \"%s\", \"reason\": ", first ? "" : ",",
                               paro_pipe_schedule_names[row->spec.schedule]);
        paro_report_json_string(out, row->skipped);
        g_string_append(out, "}");
        first = FALSE;
    }
    g_string_append(out, first ? "]\n}\n" : "\n  ]\n}\n");
}

void paro_report_pipeline(const ParoPipeReport *in, const GArray *rows, ParoFormat format,
                          GString *out)
{
    if (format == PARO_FORMAT_JSON) {
        render_json(out, in, rows);
        return;
    }
    if (format == PARO_FORMAT_CSV) {
        g_string_append(out,
                        "schedule,accumulation,devices,virtual,modules,micro_batches,forward_s,"
                        "backward_s,makespan_s,ideal_s,bubble,bubble_formula,peak_in_flight,"
                        "activations,"
                        "p2p_messages,p2p_bytes,p2p_time_s,schema_version\n");
    } else {
        g_autofree char *fw = time_text(in->forward), *bk = time_text(in->backward);
        g_autofree char *p2p = time_text(in->p2p_time), *lat = time_text(in->p2p_latency);
        g_autofree char *bytes = paro_units_format(in->p2p_bytes, PARO_QUANTITY_BYTES);
        g_autofree char *bw = in->p2p_bandwidth_Bps > 0 ? paro_units_format(in->p2p_bandwidth_Bps,
                                                                            PARO_QUANTITY_BANDWIDTH)
                                                        : g_strdup("no bandwidth given");
        g_string_append_printf(out,
                               "# parosim %s pipeline: P = %" G_GINT64_FORMAT
                               " devices, M = %" G_GINT64_FORMAT " micro-batches\n",
                               PARO_VERSION, in->devices, in->micro);
        g_string_append_printf(out,
                               "# per device (1/P of the model) and micro-batch: forward %s, "
                               "backward %s\n",
                               fw, bk);
        g_string_append_printf(out, "# p2p per message: %s (latency %s; %s at %s)\n", p2p, lat,
                               bytes, bw);
        g_string_append(out,
                        "# bubble = makespan / ideal - 1, ideal = the busiest device's compute "
                        "time; formula: the closed form for equal modules, no p2p\n");
        g_string_append(out,
                        "# in-flight: most (module, micro-batch) activations on a device; "
                        "activations: the same / v, in micro-batches of a device's share\n#\n");
        g_string_append(out,
                        "#    schedule  accumulation   v    S  makespan     ideal  bubble  formula"
                        "  in-flight  activations  p2p msgs     p2p bytes\n");
        g_string_append(out,
                        "#                                        (s)       (s)     (%)      (%)"
                        "      (max)        (max)                     (B)\n");
    }
    for (guint i = 0; i < rows->len; i++) {
        const ParoPipeRow *row = &g_array_index(rows, ParoPipeRow, i);
        const ParoPipeSpec *s = &row->spec;
        const char *name = paro_pipe_schedule_names[s->schedule];
        if (row->result == NULL) {
            if (format == PARO_FORMAT_TABLE)
                g_string_append_printf(out, "# %s skipped: %s\n", name, row->skipped);
            else /* CSV has no comments; the row is missing, so say why */
                g_printerr("parosim pipeline: %s skipped: %s\n", name, row->skipped);
            continue;
        }
        const ParoPipeResult *r = row->result;
        double fm = paro_pipe_bubble_formula(s);
        g_autofree char *f = fmt("%.6g", paro_time_to_s(in->forward));
        g_autofree char *b = fmt("%.6g", paro_time_to_s(in->backward));
        g_autofree char *mk = fmt("%.6g", paro_time_to_s(r->makespan));
        g_autofree char *id = fmt("%.6g", paro_time_to_s(r->ideal));
        g_autofree char *t = fmt("%.6g", paro_time_to_s(r->p2p_time));
        g_autofree char *act = fmt("%.4g", (double)max_in_flight(r) / (double)s->chunks);
        if (format == PARO_FORMAT_CSV) {
            g_autofree char *bu = fmt("%.9g", r->bubble);
            g_autofree char *fo = isnan(fm) ? g_strdup("") : fmt("%.9g", fm);
            g_string_append_printf(
                out,
                "%s,%s,%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
                ",%" G_GINT64_FORMAT ",%s,%s,%s,%s,%s,%s,%" G_GINT64_FORMAT ",%s,%" G_GINT64_FORMAT
                ",%.0f,%s,%d\n",
                name, paro_pipe_accumulation_names[s->accumulation], s->devices, s->chunks,
                paro_pipe_n_modules(s), s->micro, f, b, mk, id, bu, fo, max_in_flight(r), act,
                r->p2p_messages, r->p2p_bytes, t, PARO_SCHEMA_VERSION);
            continue;
        }
        g_autofree char *bu = fmt("%.2f", 100 * r->bubble);
        g_autofree char *fo = isnan(fm) ? g_strdup("-") : fmt("%.2f", 100 * fm);
        g_string_append_printf(
            out,
            "%13s  %12s  %2" G_GINT64_FORMAT "  %3" G_GINT64_FORMAT
            "  %8s  %8s  %6s  %7s  %9" G_GINT64_FORMAT "  %11s  %8" G_GINT64_FORMAT "  %12.0f\n",
            name, paro_pipe_accumulation_names[s->accumulation], s->chunks, paro_pipe_n_modules(s),
            mk, id, bu, fo, max_in_flight(r), act, r->p2p_messages, r->p2p_bytes);
    }
    /* Per device only for one schedule: --compare stays one row per schedule. */
    if (format != PARO_FORMAT_TABLE || rows->len != 1)
        return;
    for (guint i = 0; i < rows->len; i++) {
        const ParoPipeRow *row = &g_array_index(rows, ParoPipeRow, i);
        if (row->result == NULL)
            continue;
        const ParoPipeResult *r = row->result;
        g_string_append_printf(out,
                               "#\n# %s per device:\n#  device      busy      idle  in-flight\n"
                               "#              (s)       (s)\n",
                               paro_pipe_schedule_names[row->spec.schedule]);
        for (guint d = 0; d < r->busy->len; d++) {
            ParoTime busy = g_array_index(r->busy, ParoTime, d);
            g_autofree char *bs = fmt("%.6g", paro_time_to_s(busy));
            g_autofree char *is = fmt("%.6g", paro_time_to_s(r->makespan - busy));
            g_string_append_printf(out, "%9u  %8s  %8s  %9" G_GINT64_FORMAT "\n", d, bs, is,
                                   g_array_index(r->peak_in_flight, gint64, d));
        }
    }
}

void paro_report_pipeline_trace(const GArray *rows, GString *out)
{
    g_string_append(out, "# schedule\tdevice\tmodule\tmicro\tkind\tstart_s\tend_s\n");
    for (guint i = 0; i < rows->len; i++) {
        const ParoPipeRow *row = &g_array_index(rows, ParoPipeRow, i);
        if (row->result == NULL)
            continue;
        GArray *tl = row->result->timeline;
        for (guint k = 0; k < tl->len; k++) {
            const ParoPipeTask *t = &g_array_index(tl, ParoPipeTask, k);
            g_string_append_printf(
                out, "%s\t%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT "\t%s\t",
                paro_pipe_schedule_names[row->spec.schedule], t->device, t->module, t->micro,
                t->kind == PARO_PIPE_FORWARD ? "forward" : "backward");
            paro_report_number(out, paro_time_to_s(t->start));
            g_string_append_c(out, '\t');
            paro_report_number(out, paro_time_to_s(t->end));
            g_string_append_c(out, '\n');
        }
    }
}
