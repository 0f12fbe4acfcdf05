/* SPDX-License-Identifier: MIT */
/* Compiler-style diagnostics: the message, then the offending line and a caret. */
#include "cli/cli.h"

#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/files.h"
#include "report/report.h"
#include "strategy/strategy.h"

static char *source_line(const char *file, int line, const char *const *set_args,
                         const char *const *vary_args)
{
    int index;
    const char *const *args = NULL;
    if (sscanf(file, "--set[%d]", &index) == 1)
        args = set_args;
    else if (sscanf(file, "--vary[%d]", &index) == 1 || sscanf(file, "--zip[%d]", &index) == 1)
        args = vary_args; /* --vary and --zip arguments share one numbering, in order */
    if (g_str_has_prefix(file, "--")) {
        if (args == NULL || index < 1 || (guint)index > g_strv_length((char **)args))
            return NULL;
        return g_strdup(args[index - 1]);
    }
    g_autofree char *contents = NULL;
    if (!paro_file_read(file, &paro_limit_input_bytes, &contents, NULL, NULL))
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

char *paro_cli_escape(const char *text)
{
    /* One character for one: the caret below stays under the column it points at. */
    char *valid = g_utf8_make_valid(text, -1);
    for (char *p = valid; *p; p++)
        if (((guchar)*p < 0x20 && *p != '\t') || *p == 0x7f)
            *p = '?';
    return valid;
}

void paro_cli_report_error(const GError *error, const char *const *set_args,
                           const char *const *vary_args)
{
    g_printerr("parosim: error: %s\n", error->message);
    const ParoConfigErrorPrivate *loc = paro_config_error_get_location(error);
    if (loc == NULL || loc->file == NULL || loc->line <= 0 || loc->column <= 0)
        return;
    g_autofree char *raw = source_line(loc->file, loc->line, set_args, vary_args);
    if (raw == NULL || strlen(raw) > 400)
        return;
    g_autofree char *text = paro_cli_escape(raw);
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

GPtrArray *paro_cli_parse_strategies(const char *text, const char *command)
{
    g_autoptr(GError) error = NULL;
    GPtrArray *list = paro_strategy_list_parse(text, &error);
    if (list == NULL)
        g_printerr("parosim %s: %s\n", command, error->message);
    return list;
}

int paro_cli_parse_format(const char *name)
{
    for (int i = 0; paro_format_names[i]; i++)
        if (strcmp(paro_format_names[i], name) == 0)
            return i;
    g_printerr("parosim: unknown format '%s' (known: table, json, csv)\n", name);
    return -1;
}

int paro_cli_usage(const char *command, const char *message)
{
    g_printerr("parosim %s: %s\nTry 'parosim %s --help'.\n", command, message, command);
    return PARO_EXIT_USAGE;
}

gboolean paro_cli_parse_options(const char *command, const char *parameters, const char *summary,
                                const GOptionEntry *entries, int *argc, char ***argv)
{
    g_autoptr(GOptionContext) ctx = g_option_context_new(parameters);
    g_option_context_set_summary(ctx, summary);
    g_option_context_add_main_entries(ctx, entries, NULL);
    g_autoptr(GError) error = NULL;
    if (g_option_context_parse(ctx, argc, argv, &error))
        return TRUE;
    paro_cli_usage(command, error->message);
    return FALSE;
}
