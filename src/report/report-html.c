/* SPDX-License-Identifier: MIT */
/* The HTML report (report.h, paro_report_html): one self-contained page, no network
 * needed to open it. Its parts come from the other reports and the plot scripts: the run's
 * '#' lines, a table of the ranked results (each row's exact figures on hover), the
 * figures as SVG documents inside <object> elements (data: URLs, so each one's mousing
 * script runs in its own document) or as PNG images (the timelines and Gantt charts,
 * whose SVGs of thousands of tasks exceed what browsers open from a data: URL, 2 MB),
 * and the resolved parameters of `strategies`. */
#include "report/report.h"

#include <string.h>

/* Text as HTML: GLib's markup escaping (&, <, >, ' and "). */
static void escaped(GString *out, const char *text)
{
    g_autofree char *safe = g_markup_escape_text(text, -1);
    g_string_append(out, safe);
}

static const char style[] =
    "body{font-family:'DejaVu Sans',Arial,sans-serif;margin:2em auto;max-width:1100px;"
    "color:#222}\n"
    "h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em}\n"
    "table{border-collapse:collapse;font-size:0.9em}\n"
    "th,td{padding:0.25em 0.6em;text-align:right;border-bottom:1px solid #ddd}\n"
    "th:nth-child(2),td:nth-child(2),th:nth-child(3),td:nth-child(3){text-align:left}\n"
    "tr.oom td{color:#999}tr.best td{font-weight:bold}tr.tight td{color:#a55a00}\n"
    "tbody tr:hover td{background:#eef4fb}\n"
    "pre{background:#f6f6f6;padding:0.8em;font-size:0.8em;overflow-x:auto}\n"
    "object,img{width:100%;max-width:1000px}\n";

static void results_table(GString *out, const ParoStepResult *rows, guint n)
{
    g_string_append(out, "<table id=\"ranking\">\n<thead><tr><th>rank</th><th>strategy</th>"
                         "<th>aliases</th><th>step (s)</th><th>compute (s)</th>"
                         "<th>exposed comm (s)</th><th>samples/s</th><th>TFLOP/s per GPU</th>"
                         "<th>MFU</th><th>peak (GiB)</th><th>fits</th></tr></thead>\n<tbody>\n");
    for (guint i = 0; i < n; i++) {
        const ParoStepResult *r = &rows[i];
        g_autofree char *aliases = g_strjoinv(", ", (char **)r->strategy->aliases);
        double step = paro_time_to_s(r->step);
        g_autofree char *hover = g_strdup_printf(
            "%s: step %.6f s = compute %.6f s + exposed communication %.6f s; communication "
            "%.6f s in all; closed form %.6f s; peak %.0f bytes",
            r->strategy->name, step, r->compute_s, r->exposed_comm_s, r->comm_s, r->guideline_s,
            r->peak_bytes);
        g_string_append_printf(out, "<tr class=\"%s\" title=\"",
                               !r->fits       ? "oom"
                               : r->rank == 1 ? "best"
                               : r->tight     ? "tight"
                                              : "fits");
        escaped(out, hover);
        g_string_append(out, "\"><td>");
        if (r->fits)
            g_string_append_printf(out, "%d", r->rank);
        g_string_append(out, "</td><td>");
        escaped(out, r->strategy->name);
        g_string_append(out, "</td><td>");
        escaped(out, aliases);
        g_string_append_printf(out,
                               "</td><td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%.1f</td>"
                               "<td>%.1f</td><td>%.3f</td><td>%.2f</td><td>%s</td></tr>\n",
                               step, r->compute_s, r->exposed_comm_s, r->samples_per_s,
                               r->tflops_per_gpu, r->mfu, r->peak_bytes / PARO_GIB,
                               r->tight  ? "tight"
                               : r->fits ? "yes"
                                         : "OOM");
    }
    g_string_append(out, "</tbody>\n</table>\n");
}

void paro_report_html(const ParoHtmlReport *in, GString *out)
{
    g_string_append(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                         "<title>parosim: ");
    escaped(out, in->title);
    g_string_append_printf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>", style);
    escaped(out, in->title);
    g_string_append(out, "</h1>\n");
    if (in->best)
        g_string_append_printf(out,
                               "<p id=\"verdict\">Fastest strategy that fits%s: <b>%s</b>, "
                               "%.3f s a step, %.1f GiB per GPU at its peak%s.</p>\n",
                               in->best->tight ? "" : " with the memory headroom free",
                               in->best->strategy->name, paro_time_to_s(in->best->step),
                               in->best->peak_bytes / PARO_GIB,
                               /* first only when none fits with margin (decision 84) */
                               in->best->tight ? ", tight: no strategy leaves the memory "
                                                 "headroom free"
                                               : "");
    else
        g_string_append(out, "<p id=\"verdict\">No strategy fits in the GPU's memory.</p>\n");
    g_string_append(out, "<pre>");
    escaped(out, in->header);
    g_string_append(out, "</pre>\n<h2>Ranking</h2>\n<p>Every strategy's simulated training "
                         "step; hover over a row for its exact figures.</p>\n");
    results_table(out, in->rows, in->n_rows);
    for (guint i = 0; i < in->n_figures; i++) {
        g_string_append(out, "<h2>");
        escaped(out, in->captions[i]);
        gsize png = in->figure_sizes ? in->figure_sizes[i] : 0;
        g_autofree char *data =
            g_base64_encode((const guchar *)in->figures[i], png ? png : strlen(in->figures[i]));
        if (png) /* an image: no script, and no size limit on its data: URL */
            g_string_append_printf(out, "</h2>\n<img alt=\"\" src=\"data:image/png;base64,%s\">\n",
                                   data);
        else
            g_string_append_printf(out,
                                   "</h2>\n<object type=\"image/svg+xml\" "
                                   "data=\"data:image/svg+xml;base64,%s\"></object>\n",
                                   data);
    }
    g_string_append(out, "<h2>Parameters</h2>\n<p>Everything the simulation used, resolved "
                         "(as <code>parosim strategies</code> prints it).</p>\n<pre>");
    escaped(out, in->parameters);
    g_string_append_printf(out, "</pre>\n<p><small>parosim %s</small></p>\n</body>\n</html>\n",
                           PARO_VERSION);
}
