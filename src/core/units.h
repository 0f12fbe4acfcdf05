/* SPDX-License-Identifier: MIT */
/* Quantities with units, parsed by one table-driven function ("400 Gb/s", "80 GiB",
 * "2 us", "312 TFLOP/s") into SI base units (bytes, bytes/s, seconds, FLOP/s), the only
 * units used inside parosim. A non-zero value without a unit is an error: a bare "400"
 * for a bandwidth is ambiguous between bits and bytes. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
    PARO_QUANTITY_BYTES,     /* B, KB, MB, GB, TB, KiB, MiB, GiB, TiB */
    PARO_QUANTITY_BANDWIDTH, /* B/s, KB/s ... TB/s, KiB/s ... GiB/s, bit/s, Kb/s ... Tb/s */
    PARO_QUANTITY_TIME,      /* ps, ns, us, ms, s */
    PARO_QUANTITY_FLOP_RATE, /* FLOP/s, GFLOP/s, TFLOP/s, PFLOP/s */
} ParoQuantity;

/**
 * paro_units_parse:
 * @text: e.g. "400 Gb/s"; space between number and unit optional
 * @out_value: (out): the value in SI base units
 *
 * Fails with PARO_CONFIG_ERROR_UNIT (no or unknown unit; the message lists the accepted
 * ones), PARO_CONFIG_ERROR_TYPE (not a number) or PARO_CONFIG_ERROR_RANGE (not finite).
 * The error carries no location: callers attach it.
 */
gboolean paro_units_parse(const char *text, ParoQuantity kind, double *out_value, GError **error);

/**
 * paro_units_parse_number:
 * A plain number (locale-independent, whole string consumed, finite). "a/b" is accepted
 * as a fraction when @allow_ratio, since trainable shares are written as 1/16 or 3/1000.
 */
gboolean paro_units_parse_number(const char *text, gboolean allow_ratio, double *out_value,
                                 GError **error);

/** paro_units_quantity_name: "bytes", "bandwidth", ... for messages. */
const char *paro_units_quantity_name(ParoQuantity kind);

/** paro_units_format: a human string with a fitting SI prefix, e.g. "12.5 GB/s"
 * (transfer full). Decimal prefixes, %.4g: stable across locales. */
char *paro_units_format(double value, ParoQuantity kind);

G_END_DECLS
