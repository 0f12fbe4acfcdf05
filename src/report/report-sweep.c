/* SPDX-License-Identifier: MIT */
/* The `parosim sweep` output: CSV rows (the point, the varied values, then every column of
 * `parosim run`) or one JSON object. A head, one text per point and a tail are rendered
 * apart, so that MPI ranks render their points and rank 0 joins them in point order. */
#include "report/report.h"

#include <string.h>

#include "run/run.h"

/* One CSV field as RFC 4180 has it: quoted when it holds a comma, a quote or a line
 * break, with its quotes doubled (issue #16 W5). */
static void csv_field(GString *out, const char *v)
{
    if (strpbrk(v, ",\"\r\n") == NULL) {
        g_string_append(out, v);
        return;
    }
    g_string_append_c(out, '"');
    for (const char *p = v; *p; p++) {
        if (*p == '"')
            g_string_append_c(out, '"');
        g_string_append_c(out, *p);
    }
    g_string_append_c(out, '"');
}

/* The output is a head, one text per point (in point order), and a tail; points are
 * rendered separately so that MPI ranks can render theirs and rank 0 join them. */
void paro_report_sweep_head(const GPtrArray *axes, ParoFormat format, GString *out)
{
    if (format == PARO_FORMAT_JSON) {
        g_string_append(out, "{\n  \"parosim\": ");
        paro_report_json_string(out, PARO_VERSION);
        g_string_append_printf(out, ",\n  \"schema_version\": %d,\n  \"axes\": [",
                               PARO_SCHEMA_VERSION);
        for (guint a = 0; a < axes->len; a++) {
            g_string_append(out, a ? ", " : "");
            paro_report_json_string(out, ((ParoSweepAxis *)g_ptr_array_index(axes, a))->path);
        }
        g_string_append(out, "],\n  \"points\": [\n");
        return;
    }
    g_string_append(out, "point");
    for (guint a = 0; a < axes->len; a++) {
        g_string_append_c(out, ',');
        csv_field(out, ((ParoSweepAxis *)g_ptr_array_index(axes, a))->path);
    }
    g_autoptr(GString) run_head = g_string_new(NULL);
    paro_report_run(NULL, NULL, 0, PARO_FORMAT_CSV, run_head);
    g_string_append_printf(out, ",%s", run_head->str);
}

/* CSV: the point's rows; JSON: its object, without the separator. */
char *paro_report_sweep_point(const GPtrArray *axes, const ParoSweepPoint *p, ParoFormat format)
{
    g_autoptr(GString) out = g_string_new(NULL);
    g_autoptr(GString) run = g_string_new(NULL);
    paro_report_run(paro_run_get_derived(p->run), (const ParoStepResult *)p->results->data,
                    p->results->len, format, run);
    if (format == PARO_FORMAT_JSON) {
        g_string_append(out, "  {\"values\": {");
        for (guint a = 0; a < p->values->len; a++) {
            g_string_append(out, a ? ", " : "");
            paro_report_json_string(out, ((ParoSweepAxis *)g_ptr_array_index(axes, a))->path);
            g_string_append(out, ": ");
            paro_report_json_string(out, g_ptr_array_index(p->values, a));
        }
        g_string_append(out, "},\n   \"run\": ");
        g_strchomp(run->str);
        g_string_append_printf(out, "%s}", run->str);
        return g_string_free(g_steal_pointer(&out), FALSE);
    }
    g_auto(GStrv) lines = g_strsplit(run->str, "\n", -1);
    for (int l = 1; lines[l] && lines[l][0]; l++) { /* line 0 is the header */
        g_string_append_printf(out, "%" G_GUINT64_FORMAT, p->point);
        for (guint a = 0; a < p->values->len; a++) {
            g_string_append_c(out, ',');
            csv_field(out, g_ptr_array_index(p->values, a));
        }
        g_string_append_printf(out, ",%s\n", lines[l]);
    }
    return g_string_free(g_steal_pointer(&out), FALSE);
}

/* Joins the texts of the points that were run (NULL slots are skipped). */
static void add_part(GArray *parts, const char *text)
{
    ParoFilePart part = {text, strlen(text)};
    g_array_append_val(parts, part);
}

void paro_report_sweep_parts(const GPtrArray *texts, ParoFormat format, GArray *parts)
{
    gboolean first = TRUE;
    for (guint i = 0; i < texts->len; i++) {
        const char *t = g_ptr_array_index(texts, i);
        if (t == NULL)
            continue;
        if (format == PARO_FORMAT_JSON && !first)
            add_part(parts, ",\n");
        add_part(parts, t);
        first = FALSE;
    }
    if (format == PARO_FORMAT_JSON)
        add_part(parts, first ? "  ]\n}\n" : "\n  ]\n}\n");
}
