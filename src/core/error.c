/* SPDX-License-Identifier: MIT */
/* Error domains and the located configuration error (GLib extended error). */
#include "core/error.h"

static void paro_config_error_private_init(ParoConfigErrorPrivate *priv)
{
    priv->file = NULL;
    priv->line = 0;
    priv->column = 0;
}

static void paro_config_error_private_copy(const ParoConfigErrorPrivate *src,
                                           ParoConfigErrorPrivate *dest)
{
    dest->file = g_strdup(src->file);
    dest->line = src->line;
    dest->column = src->column;
}

static void paro_config_error_private_clear(ParoConfigErrorPrivate *priv)
{
    g_clear_pointer(&priv->file, g_free);
}

G_DEFINE_EXTENDED_ERROR(ParoConfigError, paro_config_error)
G_DEFINE_QUARK(paro - sim - error - quark, paro_sim_error)
G_DEFINE_QUARK(paro - calib - error - quark, paro_calib_error)

static const char *const code_names[] = {
    "SYNTAX", "DUPLICATE_KEY", "UNKNOWN_KEY", "MISSING_KEY", "TYPE",
    "UNIT",   "RANGE",         "REFERENCE",   "CONSTRAINT",
};

void paro_config_error_set(GError **error, ParoConfigError code, const char *file, int line,
                           int column, const char *format, ...)
{
    if (error == NULL)
        return;
    va_list args;
    va_start(args, format);
    g_autofree char *message = g_strdup_vprintf(format, args);
    va_end(args);
    g_set_error(error, PARO_CONFIG_ERROR, code, "%s:%d:%d: %s", file ? file : "<data>", line,
                column, message);
    ParoConfigErrorPrivate *priv = paro_config_error_get_private(*error);
    priv->file = g_strdup(file ? file : "<data>");
    priv->line = line;
    priv->column = column;
}

const ParoConfigErrorPrivate *paro_config_error_get_location(const GError *error)
{
    if (error == NULL || error->domain != PARO_CONFIG_ERROR)
        return NULL;
    return paro_config_error_get_private(error);
}

const char *paro_config_error_code_name(int code)
{
    if (code < 0 || code >= (int)G_N_ELEMENTS(code_names))
        return "?";
    return code_names[code];
}

int paro_config_error_code_from_name(const char *name)
{
    for (guint i = 0; i < G_N_ELEMENTS(code_names); i++)
        if (g_strcmp0(code_names[i], name) == 0)
            return (int)i;
    return -1;
}
