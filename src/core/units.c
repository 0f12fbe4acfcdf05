/* SPDX-License-Identifier: MIT */
/* The unit tables and the single parser behind every quantity in the input files.
 * Suffixes are case-sensitive because "Gb/s" (bits) and "GB/s" (bytes) differ by 8x. */
#include "core/units.h"

#include "core/error.h"

#include <math.h>
#include <string.h>

typedef struct {
    const char *suffix;
    double scale; /* multiplier to the SI base unit */
} ParoUnit;

static const ParoUnit byte_units[] = {
    {"B", 1.0},
    {"KB", 1e3},
    {"MB", 1e6},
    {"GB", 1e9},
    {"TB", 1e12},
    {"PB", 1e15},
    {"KiB", 1024.0},
    {"MiB", 1048576.0},
    {"GiB", 1073741824.0},
    {"TiB", 1099511627776.0},
    {"PiB", 1125899906842624.0},
};

static const ParoUnit bandwidth_units[] = {
    {"B/s", 1.0},         {"KB/s", 1e3},           {"MB/s", 1e6},
    {"GB/s", 1e9},        {"TB/s", 1e12},          {"KiB/s", 1024.0},
    {"MiB/s", 1048576.0}, {"GiB/s", 1073741824.0}, {"TiB/s", 1099511627776.0},
    {"bit/s", 1.0 / 8},   {"b/s", 1.0 / 8},        {"Kb/s", 1e3 / 8},
    {"Mb/s", 1e6 / 8},    {"Gb/s", 1e9 / 8},       {"Tb/s", 1e12 / 8},
    {"Kbps", 1e3 / 8},    {"Mbps", 1e6 / 8},       {"Gbps", 1e9 / 8},
    {"Tbps", 1e12 / 8},
};

static const ParoUnit time_units[] = {
    {"ps", 1e-12}, {"ns", 1e-9},  {"us", 1e-6},  {"ms", 1e-3},
    {"s", 1.0},    {"min", 60.0}, {"h", 3600.0},
};

static const ParoUnit flop_rate_units[] = {
    {"FLOP/s", 1.0},   {"KFLOP/s", 1e3},  {"MFLOP/s", 1e6},  {"GFLOP/s", 1e9},
    {"TFLOP/s", 1e12}, {"PFLOP/s", 1e15}, {"EFLOP/s", 1e18},
};

static const ParoUnit *units_for(ParoQuantity kind, gsize *out_n)
{
    switch (kind) {
    case PARO_QUANTITY_BYTES:
        *out_n = G_N_ELEMENTS(byte_units);
        return byte_units;
    case PARO_QUANTITY_BANDWIDTH:
        *out_n = G_N_ELEMENTS(bandwidth_units);
        return bandwidth_units;
    case PARO_QUANTITY_TIME:
        *out_n = G_N_ELEMENTS(time_units);
        return time_units;
    case PARO_QUANTITY_FLOP_RATE:
        *out_n = G_N_ELEMENTS(flop_rate_units);
        return flop_rate_units;
    }
    g_assert_not_reached();
}

const char *paro_units_quantity_name(ParoQuantity kind)
{
    static const char *const names[] = {"a size", "a bandwidth", "a time", "a compute rate"};
    g_return_val_if_fail(kind <= PARO_QUANTITY_FLOP_RATE, "?");
    return names[kind];
}

static char *accepted_list(ParoQuantity kind)
{
    gsize n;
    const ParoUnit *units = units_for(kind, &n);
    GString *s = g_string_new(NULL);
    for (gsize i = 0; i < n; i++)
        g_string_append_printf(s, "%s%s", i ? ", " : "", units[i].suffix);
    return g_string_free(s, FALSE);
}

/* Parses the leading number; returns the end pointer, or NULL when there is none. */
static const char *parse_leading_number(const char *text, double *out)
{
    char *end = NULL;
    const char *p = text;
    while (g_ascii_isspace(*p))
        p++;
    /* g_ascii_strtod also accepts hex and "inf"/"nan"; refuse hex, report the others as
     * non-finite below. */
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
        return NULL;
    if (p[0] == '-' || p[0] == '+')
        if (p[1] == '0' && (p[2] == 'x' || p[2] == 'X'))
            return NULL;
    *out = g_ascii_strtod(p, &end);
    if (end == p)
        return NULL;
    return end;
}

gboolean paro_units_parse_number(const char *text, gboolean allow_ratio, double *out_value,
                                 GError **error)
{
    double value;
    const char *end = parse_leading_number(text, &value);
    if (end == NULL)
        goto not_a_number;
    while (g_ascii_isspace(*end))
        end++;
    if (allow_ratio && *end == '/') {
        double denominator;
        const char *end2 = parse_leading_number(end + 1, &denominator);
        if (end2 == NULL)
            goto not_a_number;
        while (g_ascii_isspace(*end2))
            end2++;
        if (*end2 != '\0')
            goto not_a_number;
        if (denominator == 0 || !isfinite(denominator)) {
            g_set_error(error, PARO_CONFIG_ERROR, PARO_CONFIG_ERROR_RANGE,
                        "'%s' divides by zero or by a non-finite number", text);
            return FALSE;
        }
        value /= denominator;
        end = end2;
    }
    if (*end != '\0')
        goto not_a_number;
    if (!isfinite(value)) {
        g_set_error(error, PARO_CONFIG_ERROR, PARO_CONFIG_ERROR_RANGE,
                    "'%s' is not a finite number", text);
        return FALSE;
    }
    *out_value = value;
    return TRUE;

not_a_number:
    g_set_error(error, PARO_CONFIG_ERROR, PARO_CONFIG_ERROR_TYPE, "'%s' is not a number%s", text,
                allow_ratio ? " or a ratio such as 1/16" : "");
    return FALSE;
}

gboolean paro_units_parse(const char *text, ParoQuantity kind, double *out_value, GError **error)
{
    g_return_val_if_fail(text != NULL, FALSE);
    double value;
    const char *end = parse_leading_number(text, &value);
    if (end == NULL) {
        g_autofree char *list = accepted_list(kind);
        g_set_error(error, PARO_CONFIG_ERROR, PARO_CONFIG_ERROR_TYPE,
                    "'%s' is not %s: expected a number and a unit (%s)", text,
                    paro_units_quantity_name(kind), list);
        return FALSE;
    }
    if (!isfinite(value)) {
        g_set_error(error, PARO_CONFIG_ERROR, PARO_CONFIG_ERROR_RANGE,
                    "'%s' is not a finite quantity", text);
        return FALSE;
    }
    while (*end == ' ' || *end == '\t')
        end++;
    g_autofree char *suffix = g_strchomp(g_strdup(end));
    if (suffix[0] == '\0') {
        if (value == 0) {
            *out_value = 0;
            return TRUE;
        }
        g_autofree char *list = accepted_list(kind);
        g_set_error(error, PARO_CONFIG_ERROR, PARO_CONFIG_ERROR_UNIT,
                    "'%s' has no unit; %s needs one of: %s", text, paro_units_quantity_name(kind),
                    list);
        return FALSE;
    }
    gsize n;
    const ParoUnit *units = units_for(kind, &n);
    for (gsize i = 0; i < n; i++) {
        if (strcmp(units[i].suffix, suffix) == 0) {
            double scaled = value * units[i].scale;
            if (!isfinite(scaled)) {
                g_set_error(error, PARO_CONFIG_ERROR, PARO_CONFIG_ERROR_RANGE, "'%s' overflows",
                            text);
                return FALSE;
            }
            *out_value = scaled;
            return TRUE;
        }
    }
    g_autofree char *list = accepted_list(kind);
    g_set_error(error, PARO_CONFIG_ERROR, PARO_CONFIG_ERROR_UNIT,
                "unknown unit '%s' in '%s' for %s (accepted: %s)", suffix, text,
                paro_units_quantity_name(kind), list);
    return FALSE;
}

char *paro_units_format(double value, ParoQuantity kind)
{
    static const char *const prefixes[] = {"", "K", "M", "G", "T", "P", "E"};
    static const char *const base[] = {"B", "B/s", "s", "FLOP/s"};
    if (kind == PARO_QUANTITY_TIME) {
        static const struct {
            double scale;
            const char *name;
        } t[] = {{1, "s"}, {1e-3, "ms"}, {1e-6, "us"}, {1e-9, "ns"}, {1e-12, "ps"}};
        for (gsize i = 0; i < G_N_ELEMENTS(t); i++)
            if (fabs(value) >= t[i].scale || i + 1 == G_N_ELEMENTS(t)) {
                char buf[G_ASCII_DTOSTR_BUF_SIZE];
                g_ascii_formatd(buf, sizeof buf, "%.4g", value / t[i].scale);
                return g_strdup_printf("%s %s", buf, t[i].name);
            }
    }
    int exp3 = 0;
    double v = value;
    while (fabs(v) >= 1000 && exp3 < (int)G_N_ELEMENTS(prefixes) - 1) {
        v /= 1000;
        exp3++;
    }
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_ascii_formatd(buf, sizeof buf, "%.4g", v);
    return g_strdup_printf("%s %s%s", buf, prefixes[exp3], base[kind]);
}
