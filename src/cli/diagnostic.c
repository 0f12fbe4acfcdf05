/* SPDX-License-Identifier: MIT */
/* Compiler-style diagnostics: the message, then the offending line and a caret. */
#include "cli/cli.h"

#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "report/report.h"

static char *source_line(const char *file, int line, const char *const *set_args)
{
    int index;
    if (sscanf(file, "--set[%d]", &index) == 1) {
        if (set_args == NULL || index < 1 || (guint)index > g_strv_length((char **)set_args))
            return NULL;
        return g_strdup(set_args[index - 1]);
    }
    g_autofree char *contents = NULL;
    if (!g_file_get_contents(file, &contents, NULL, NULL))
        return NULL;
    char *p = contents;
    for (int i = 1; i < line && p; i++) {
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    if (p == NULL)
        return NULL;
    char *end = strchr(p, '\n');
    return g_strndup(p, end ? (gsize)(end - p) : strlen(p));
}

void paro_cli_report_error(const GError *error, const char *const *set_args)
{
    g_printerr("parosim: error: %s\n", error->message);
    const ParoConfigErrorPrivate *loc = paro_config_error_get_location(error);
    if (loc == NULL || loc->file == NULL || loc->line <= 0 || loc->column <= 0)
        return;
    g_autofree char *text = source_line(loc->file, loc->line, set_args);
    if (text == NULL || strlen(text) > 400)
        return;
    g_printerr("%5d | %s\n      | ", loc->line, text);
    for (int i = 1; i < loc->column && text[i - 1]; i++)
        g_printerr("%c", text[i - 1] == '\t' ? '\t' : ' ');
    g_printerr("^\n");
}

gboolean paro_cli_write(const GString *text)
{
    if (fwrite(text->str, 1, text->len, stdout) != text->len || fflush(stdout) != 0) {
        g_printerr("parosim: error: cannot write the output\n");
        return FALSE;
    }
    return TRUE;
}

int paro_cli_parse_format(const char *name)
{
    for (int i = 0; paro_format_names[i]; i++)
        if (strcmp(paro_format_names[i], name) == 0)
            return i;
    g_printerr("parosim: unknown format '%s' (known: table, json, csv)\n", name);
    return -1;
}
