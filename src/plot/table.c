/* SPDX-License-Identifier: MIT */
#include "plot/table.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/files.h"

void paro_table_free(ParoTable *t)
{
    if (t == NULL)
        return;
    g_free(t->path);
    g_strfreev(t->header);
    g_ptr_array_unref(t->rows);
    g_array_unref(t->lines);
    g_free(t);
}

/* Splits one record. CSV quoting as RFC 4180 ("a ""b""" -> a "b"); a quoted line break
 * is part of the field (paro_table_read joins the lines of a record). */
static GStrv split_line(const char *path, int line_no, const char *line, char separator,
                        GError **error)
{
    g_autoptr(GPtrArray) fields = g_ptr_array_new_with_free_func(g_free);
    const char *p = line;
    for (;;) {
        g_autoptr(GString) field = g_string_new(NULL);
        if (separator == ',' && *p == '"') {
            const char *open = p++;
            for (;;) {
                if (*p == '\0') {
                    paro_config_error_set(error, PARO_CONFIG_ERROR_SYNTAX, path, line_no,
                                          (int)(open - line) + 1, "unterminated quoted field");
                    return NULL;
                }
                if (*p == '"' && p[1] == '"') {
                    g_string_append_c(field, '"');
                    p += 2;
                } else if (*p == '"') {
                    p++;
                    break;
                } else {
                    g_string_append_c(field, *p++);
                }
            }
        }
        while (*p && *p != separator)
            g_string_append_c(field, *p++);
        g_ptr_array_add(fields, g_string_free(g_steal_pointer(&field), FALSE));
        if (*p == '\0')
            break;
        p++; /* the separator */
    }
    g_ptr_array_add(fields, NULL);
    return (GStrv)g_ptr_array_free(g_steal_pointer(&fields), FALSE);
}

ParoTable *paro_table_read(const char *path, char separator, GError **error)
{
    g_autofree char *text = NULL;
    gsize length = 0;
    if (!paro_file_read(path, &paro_limit_table_bytes, &text, &length, error))
        return NULL;
    /* The lines are C strings: a NUL would silently drop the rest of the file. */
    const char *nul = memchr(text, '\0', length);
    if (nul != NULL) {
        int line_no = 1;
        const char *line_start = text;
        for (const char *p = text; p < nul; p++)
            if (*p == '\n') {
                line_no++;
                line_start = p + 1;
            }
        paro_config_error_set(error, PARO_CONFIG_ERROR_SYNTAX, path, line_no,
                              (int)(nul - line_start) + 1, "NUL byte in a text table");
        return NULL;
    }
    g_autoptr(ParoTable) t = g_new0(ParoTable, 1);
    t->path = g_strdup(path);
    t->rows = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
    t->lines = g_array_new(FALSE, FALSE, sizeof(int));
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (int i = 0; lines[i]; i++) {
        int first = i;
        g_autoptr(GString) record = g_string_new(lines[i]);
        /* A quoted field may hold line breaks (sweep writes them, issue #16 W5): while the
         * quotes are unbalanced, the record goes on on the next line. */
        while (separator == ',' && lines[i + 1] != NULL) {
            guint quotes = 0;
            for (const char *q = record->str; *q; q++)
                quotes += *q == '"';
            if (quotes % 2 == 0)
                break;
            g_string_append_c(record, '\n');
            g_string_append(record, lines[++i]);
        }
        char *line = record->str;
        gsize len = record->len;
        if (len && line[len - 1] == '\r')
            line[len - 1] = '\0';
        if (line[0] == '\0' || (separator == '\t' && line[0] == '#'))
            continue;
        GStrv fields = split_line(path, first + 1, line, separator, error);
        if (fields == NULL)
            return NULL;
        if (separator == ',' && t->header == NULL) {
            t->header = fields;
            continue;
        }
        guint n = g_strv_length(fields);
        if (t->header && n != g_strv_length(t->header)) {
            paro_config_error_set(error, PARO_CONFIG_ERROR_SYNTAX, path, first + 1, 1,
                                  "%u fields where the header has %u", n, g_strv_length(t->header));
            g_strfreev(fields);
            return NULL;
        }
        g_ptr_array_add(t->rows, fields);
        int line_no = first + 1;
        g_array_append_val(t->lines, line_no);
    }
    if (separator == ',' && t->header == NULL) {
        paro_config_error_set(error, PARO_CONFIG_ERROR_SYNTAX, path, 1, 1,
                              "empty: expected a CSV header line");
        return NULL;
    }
    return g_steal_pointer(&t);
}

int paro_table_column(const ParoTable *t, const char *name, GError **error)
{
    for (int i = 0; t->header && t->header[i]; i++)
        if (strcmp(t->header[i], name) == 0)
            return i;
    paro_config_error_set(error, PARO_CONFIG_ERROR_MISSING_KEY, t->path, 1, 1,
                          "no column '%s' in the header", name);
    return -1;
}

gboolean paro_table_number(const ParoTable *t, guint row, int column, double *out, GError **error)
{
    const char *text = paro_table_field(t, row, column);
    char *end = NULL;
    *out = g_ascii_strtod(text, &end);
    if (end == text || *end != '\0') {
        paro_config_error_set(error, PARO_CONFIG_ERROR_TYPE, t->path,
                              g_array_index(t->lines, int, row), paro_table_offset(t, row, column),
                              "expected a number, got '%s'", text);
        return FALSE;
    }
    return TRUE;
}

int paro_table_offset(const ParoTable *t, guint row, int column)
{
    /* the lengths of the fields before it, plus separators (exact for unquoted fields,
     * which is what numbers and flags are) */
    int col = 1;
    for (int c = 0; c < column; c++)
        col += (int)strlen(paro_table_field(t, row, c)) + 1;
    return col;
}
