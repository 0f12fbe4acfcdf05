/* SPDX-License-Identifier: MIT */
/* Numbers in the fixed-width columns of parosim's tables: "%.Nf" while it fits the column,
 * scientific notation once it would not (issue #16 W7: a 1e300 B overhead printed a
 * 38-digit number, a plan's steps rows of 710 characters). Locale-independent, so the
 * goldens stay byte-identical wherever the numbers are ordinary. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/**
 * paro_format_fixed:
 * Writes @value into @buf (at least G_ASCII_DTOSTR_BUF_SIZE bytes) with @decimals digits
 * after the point when that takes at most max(@width, 15) characters, else as "%.Ne" with
 * as many significant digits as fit @width (at least 2). Returns @buf.
 */
char *paro_format_fixed(char *buf, gsize size, double value, int decimals, int width);

/**
 * paro_format_escape:
 * Returns: (transfer full) @text with its control characters written as \n, \t, \r or
 * \xNN, for names printed in a report's '#' lines: a scenario named with a newline or an
 * ESC was printed raw, breaking the header or the terminal (issue #16).
 */
char *paro_format_escape(const char *text);

G_END_DECLS
