/* SPDX-License-Identifier: MIT */
/* Reports: a human table with '#' header lines (nccl-tests style, so gnuplot reads it),
 * JSON and CSV in SI base units. Everything is rendered into a GString first, so a
 * failing run prints nothing half-written; numbers use g_ascii_formatd, never the locale. */
#pragma once

#include <glib.h>

#include "coll/nccl.h"
#include "core/files.h"
#include "pipe/pipe.h"
#include "scenario/guideline.h"
#include "step/step.h"
#include "sweep/sweep.h"

G_BEGIN_DECLS

/* The version of the JSON and CSV outputs' structure (docs/formats.md, "Output schema"):
 * every JSON document carries it as "schema_version", every CSV row as its last column.
 * It changes when a field or column is removed, renamed or changes meaning or unit; adding
 * one at the end (CSV) or anywhere (JSON) does not. */
#define PARO_SCHEMA_VERSION 1

/* Memory in tables, headers, the HTML page and plots is in GiB (2^30 bytes), as GPU memory
 * capacity and PyTorch's allocator report it; traffic and bandwidths stay decimal (GB,
 * GB/s), as NCCL and nccl-tests report them, so that GB / (GB/s) is seconds. JSON and CSV
 * carry bytes. */
#define PARO_GIB 1073741824.0

typedef enum { PARO_FORMAT_TABLE, PARO_FORMAT_JSON, PARO_FORMAT_CSV } ParoFormat;
extern const char *const paro_format_names[]; /* "table", "json", "csv", NULL */

/** paro_report_strategies: appends the guideline report in @format to @out. */
void paro_report_strategies(const ParoGuideline *g, ParoFormat format, GString *out);

/** paro_report_strategies_header: the '#' lines giving every resolved parameter. */
void paro_report_strategies_header(const ParoScenarioDerived *d, GString *out);

/* The HTML report's parts (report-html.c). */
typedef struct {
    const char *title;          /* the scenario's name */
    const char *header;         /* the run table's '#' lines */
    const char *parameters;     /* the resolved parameters (paro_report_strategies_header) */
    const ParoStepResult *rows; /* ranked, as paro_report_run takes them */
    guint n_rows;
    const ParoStepResult *best;  /* nullable: none fits */
    const char *const *figures;  /* SVG documents, or PNG files' bytes (figure_sizes) */
    const gsize *figure_sizes;   /* 0 for an SVG document; else the PNG's bytes */
    const char *const *captions; /* one a figure */
    guint n_figures;
} ParoHtmlReport;

/** paro_report_html: one self-contained HTML page of @report (nothing loaded from the
 * network: the figures are data: URLs, the style inline). */
void paro_report_html(const ParoHtmlReport *report, GString *out);

/** paro_report_run: the training-step report of @n results in rank order. */
void paro_report_run(const ParoScenarioDerived *d, const ParoStepResult *rows, guint n,
                     ParoFormat format, GString *out);

/** paro_report_trace: tasks and memory of the results that kept a trace; TSV, or Chrome
 * trace JSON when @chrome. */
void paro_report_trace(const ParoStepResult *rows, guint n, gboolean chrome, GString *out);

/* One size of a collective: its time, and what the model says beside it. */
typedef struct {
    double size;
    ParoTime time;
    double intra_bytes, inter_bytes; /* flow model: bytes on intra- and inter-node links */
    ParoNcclAlgo algo;               /* NCCL's model: its choice */
    ParoNcclProto proto;
} ParoCollRow;

typedef struct {
    const ParoTopology *topology;
    const ParoCollSpec *spec;
    ParoCollModel model;
    ParoNetFidelity fidelity; /* flow model */
    gboolean explicit_mode;   /* flow model: every GPU simulated */
} ParoCollReport;

/** paro_report_collective: `parosim collective`'s table (nccl-tests' columns), JSON or CSV of
 * @rows (ParoCollRow). */
void paro_report_collective(const ParoCollReport *head, const GArray *rows, ParoFormat format,
                            GString *out);

/* `parosim pipeline`: what the user gave, shared by every row (per-device times, p2p), and
 * a row per schedule. */
typedef struct {
    gint64 devices, micro;
    ParoTime forward, backward; /* one device's share of the model, one micro-batch */
    ParoTime p2p_latency;
    double p2p_bytes, p2p_bandwidth_Bps;
    ParoTime p2p_time; /* latency + bytes / bandwidth */
} ParoPipeReport;

typedef struct {
    ParoPipeSpec spec;
    ParoPipeResult *result; /* NULL when skipped */
    char *skipped;          /* why, when skipped */
} ParoPipeRow;

/** paro_report_pipeline: @rows (ParoPipeRow) as a table (with per-device figures when there
 * is one row), CSV or JSON; a skipped row is a comment in the table, a message on stderr in
 * CSV and an entry of "skipped" in JSON. */
void paro_report_pipeline(const ParoPipeReport *in, const GArray *rows, ParoFormat format,
                          GString *out);

/** paro_report_pipeline_trace: every task of @rows' timelines, one TSV line each. */
void paro_report_pipeline_trace(const GArray *rows, GString *out);

/** paro_report_json_string: appends @text as a JSON string literal. */
void paro_report_json_string(GString *out, const char *text);

/** paro_report_framework_json: appends `,\n  "framework": {"name": ..., "version": ...,
 * "kernels": {...}}`: the framework profile, its version (null when the scenario gives
 * none), and how it runs the kernels it decides for this model (loss, optimizer, softmax,
 * rmsnorm, swiglu, rotary, gathers), the same as the reports' `# framework:` line. */
void paro_report_framework_json(const ParoScenario *s, const ParoComputeSetup *cs, GString *out);

/** paro_report_json_degrees: appends the `"gpus"`, `"tp"`, `"pp"`, `"dp"`, `"cp"` and `"ep"`
 * fields (after `"n"`, the PaRO paper's data-parallel ranks: dp x cp). */
void paro_report_json_degrees(const ParoScenarioDerived *g, GString *out);

/** paro_report_json_strategy: opens a strategy's JSON object with its name and aliases,
 * `    {"name": "...", "aliases": [...`, leaving the aliases list open for the caller to
 * close and continue. */
void paro_report_json_strategy(GString *out, const ParoStrategy *strategy);

/** paro_report_gib: @bytes as "80 GiB" (four significant digits). (transfer full) */
char *paro_report_gib(double bytes);

/** paro_report_number: appends a double as the shortest round-tripping %.17g-style
 * text ("null" if not finite, which the simulation never produces). */
void paro_report_number(GString *out, double value);

/* `parosim sweep` (report-sweep.c): @axes holds ParoSweepAxis, @texts the points' texts
 * (NULL for a point not run). */
void paro_report_sweep_head(const GPtrArray *axes, ParoFormat format, GString *out);
/** paro_report_sweep_point: CSV, the point's rows; JSON, its object without a separator. */
char *paro_report_sweep_point(const GPtrArray *axes, const ParoSweepPoint *p, ParoFormat format);
/** paro_report_sweep_parts: appends to @parts (ParoFilePart) the points' @texts and what
 * goes between and after them, pointing into @texts (which must outlive @parts): the
 * output after the head, never copied whole. */
void paro_report_sweep_parts(const GPtrArray *texts, ParoFormat format, GArray *parts);

G_END_DECLS
