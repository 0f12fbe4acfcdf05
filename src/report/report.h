/* SPDX-License-Identifier: MIT */
/* Reports: a human table with '#' header lines (nccl-tests style, so gnuplot reads it),
 * JSON and CSV in SI base units. Everything is rendered into a GString first, so a
 * failing run prints nothing half-written; numbers use g_ascii_formatd, never the locale. */
#pragma once

#include <glib.h>

#include "scenario/guideline.h"

G_BEGIN_DECLS

typedef enum { PARO_FORMAT_TABLE, PARO_FORMAT_JSON, PARO_FORMAT_CSV } ParoFormat;
extern const char *const paro_format_names[]; /* "table", "json", "csv", NULL */

/** paro_report_strategies: appends the guideline report in @format to @out. */
void paro_report_strategies(const ParoGuideline *g, ParoFormat format, GString *out);

/** paro_report_json_string: appends @text as a JSON string literal. */
void paro_report_json_string(GString *out, const char *text);

/** paro_report_number: appends a double as the shortest round-tripping %.17g-style
 * text ("null" if not finite, which the simulation never produces). */
void paro_report_number(GString *out, double value);

G_END_DECLS
