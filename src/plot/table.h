/* SPDX-License-Identifier: MIT */
/* A delimited text table as parosim writes them: CSV with a header line (quoted fields
 * allowed) or the trace's TSV (no header, '#' comment lines). Read whole into memory,
 * with each row's line number kept for located errors. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
    char *path;
    GStrv header;    /* column names; NULL for a headerless table */
    GPtrArray *rows; /* GStrv of fields */
    GArray *lines;   /* int: the 1-based line of each row */
} ParoTable;

void paro_table_free(ParoTable *table);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ParoTable, paro_table_free)

/**
 * paro_table_read:
 * @separator: ',' (CSV: the first line is the header, fields may be "quoted") or '\t'
 *   (TSV: no header; lines starting with '#' are comments)
 * Errors: G_FILE_ERROR when unreadable; PARO_CONFIG_ERROR_SYNTAX at the line and column
 * of an unterminated quote or a row whose field count differs from the header's.
 */
ParoTable *paro_table_read(const char *path, char separator, GError **error);

/** paro_table_column: index of the column @name, or -1 (and a located error at the
 * header naming the missing column) when absent. */
int paro_table_column(const ParoTable *table, const char *name, GError **error);

/** paro_table_field: the field of row @row, column @column (borrowed). */
static inline const char *paro_table_field(const ParoTable *t, guint row, int column)
{
    return ((char **)g_ptr_array_index(t->rows, row))[column];
}

/** paro_table_number: the field as a number; FALSE and a located error when it is not one. */
gboolean paro_table_number(const ParoTable *t, guint row, int column, double *out, GError **error);

/** paro_table_offset: the 1-based character column where field @column of row @row
 * starts on its line (exact for unquoted fields), for located errors. */
int paro_table_offset(const ParoTable *t, guint row, int column);

G_END_DECLS
