/* SPDX-License-Identifier: MIT */
/* The one generic walker behind every YAML mapping parosim reads. */
#include "yaml/schema.h"

#include <math.h>
#include <string.h>

#include "core/spell.h"

gboolean paro_schema_expect_kind(const ParoNode *node, ParoNodeKind kind, const char *what,
                                 GError **error)
{
    if (node->kind == kind)
        return TRUE;
    paro_node_error(error, node, PARO_CONFIG_ERROR_TYPE, "'%s' must be %s, not %s", what,
                    paro_node_kind_name(kind), paro_node_kind_name(node->kind));
    return FALSE;
}

gboolean paro_schema_parse_int(const ParoNode *node, const char *what, gint64 *out, GError **error)
{
    if (!paro_schema_expect_kind(node, PARO_NODE_SCALAR, what, error))
        return FALSE;
    GError *local = NULL;
    double value;
    if (!paro_units_parse_number(node->scalar, FALSE, &value, &local)) {
        paro_node_relocate_error(error, node, local);
        return FALSE;
    }
    if (value != floor(value)) {
        paro_node_error(error, node, PARO_CONFIG_ERROR_TYPE,
                        "'%s' must be a whole number, got '%s'", what, node->scalar);
        return FALSE;
    }
    /* 2^53: beyond it doubles skip integers, and no count in this domain gets there (a
     * range 1..1e300*2 said "must be a whole number, got '18014398509481984'"). */
    if (fabs(value) > 9007199254740992.0) {
        paro_node_error(error, node, PARO_CONFIG_ERROR_RANGE,
                        "'%s' is %.3g, beyond the counts parosim takes (2^53 at most, and each "
                        "count its own limit)",
                        what, value);
        return FALSE;
    }
    *out = (gint64)value;
    return TRUE;
}

static char *known_keys(const ParoField *fields, gsize n_fields)
{
    GString *s = g_string_new(NULL);
    for (gsize i = 0; i < n_fields; i++)
        g_string_append_printf(s, "%s%s", i ? ", " : "", fields[i].key);
    return g_string_free(s, FALSE);
}

static gboolean check_range(const ParoNode *node, const char *key, guint flags, double value,
                            GError **error)
{
    if ((flags & PARO_FIELD_POSITIVE) && !(value > 0)) {
        paro_node_error(error, node, PARO_CONFIG_ERROR_RANGE, "'%s' must be positive, got '%s'",
                        key, node->scalar);
        return FALSE;
    }
    if ((flags & PARO_FIELD_NONNEG) && !(value >= 0)) {
        paro_node_error(error, node, PARO_CONFIG_ERROR_RANGE, "'%s' must not be negative, got '%s'",
                        key, node->scalar);
        return FALSE;
    }
    if ((flags & PARO_FIELD_UNIT_RANGE) && !(value >= 0 && value <= 1)) {
        paro_node_error(error, node, PARO_CONFIG_ERROR_RANGE,
                        "'%s' must lie between 0 and 1, got '%s'", key, node->scalar);
        return FALSE;
    }
    return TRUE;
}

gboolean paro_schema_check_limit(const ParoLimit *limit, const ParoNode *node, const char *what,
                                 double value, GError **error)
{
    if (limit == NULL || paro_limit_check(limit, value))
        return TRUE;
    g_autofree char *text = paro_limit_describe(
        limit, what, value, node->kind == PARO_NODE_SCALAR ? node->scalar : NULL);
    paro_node_error(error, node, PARO_CONFIG_ERROR_RANGE, "%s", text);
    return FALSE;
}

static gboolean parse_field(const ParoField *f, const ParoNode *value, gpointer record,
                            gpointer user_data, GError **error)
{
    gpointer ptr = (guint8 *)record + f->offset;
    if (f->type == PARO_FIELD_CUSTOM)
        return f->parse(value, ptr, user_data, error);
    if (f->type == PARO_FIELD_HEADER)
        return TRUE;
    if (!paro_schema_expect_kind(value, PARO_NODE_SCALAR, f->key, error))
        return FALSE;
    const char *text = value->scalar;
    GError *local = NULL;
    switch (f->type) {
    case PARO_FIELD_STRING:
        if (text[0] == '\0') {
            paro_node_error(error, value, PARO_CONFIG_ERROR_RANGE, "'%s' must not be empty",
                            f->key);
            return FALSE;
        }
        g_free(*(char **)ptr);
        *(char **)ptr = g_strdup(text);
        return TRUE;
    case PARO_FIELD_INT: {
        gint64 v;
        if (!paro_schema_parse_int(value, f->key, &v, error))
            return FALSE;
        if (!check_range(value, f->key, f->flags, (double)v, error) ||
            !paro_schema_check_limit(f->limit, value, f->key, (double)v, error))
            return FALSE;
        *(gint64 *)ptr = v;
        return TRUE;
    }
    case PARO_FIELD_DOUBLE:
    case PARO_FIELD_RATIO:
    case PARO_FIELD_QUANTITY: {
        double v;
        gboolean ok = f->type == PARO_FIELD_QUANTITY
                          ? paro_units_parse(text, f->quantity, &v, &local)
                          : paro_units_parse_number(text, f->type == PARO_FIELD_RATIO, &v, &local);
        if (!ok) {
            paro_node_relocate_error(error, value, local);
            return FALSE;
        }
        if (!check_range(value, f->key, f->flags, v, error) ||
            !paro_schema_check_limit(f->limit, value, f->key, v, error))
            return FALSE;
        *(double *)ptr = v;
        return TRUE;
    }
    case PARO_FIELD_BOOL:
        /* YAML 1.1's yes/no/on/off are refused on purpose: "no" is a country code. */
        if (strcmp(text, "true") == 0)
            *(gboolean *)ptr = TRUE;
        else if (strcmp(text, "false") == 0)
            *(gboolean *)ptr = FALSE;
        else {
            paro_node_error(error, value, PARO_CONFIG_ERROR_TYPE,
                            "'%s' must be true or false, got '%s'", f->key, text);
            return FALSE;
        }
        return TRUE;
    case PARO_FIELD_ENUM:
        for (int i = 0; f->choices[i] != NULL; i++)
            if (strcmp(f->choices[i], text) == 0) {
                *(int *)ptr = i;
                return TRUE;
            }
        {
            g_autofree char *list = g_strjoinv(", ", (char **)f->choices);
            paro_node_error(error, value, PARO_CONFIG_ERROR_RANGE, "unknown %s '%s' (known: %s)",
                            f->key, text, list);
        }
        return FALSE;
    case PARO_FIELD_CUSTOM:
    case PARO_FIELD_HEADER:
        break;
    }
    g_assert_not_reached();
}

gboolean paro_schema_apply(const ParoNode *mapping, const char *what, const ParoField *fields,
                           gsize n_fields, gpointer record, gpointer user_data,
                           guint64 *out_present, GError **error)
{
    g_return_val_if_fail(n_fields <= 64, FALSE);
    if (!paro_schema_expect_kind(mapping, PARO_NODE_MAPPING, what, error))
        return FALSE;
    guint64 present = 0;
    for (guint k = 0; k < mapping->keys->len; k++) {
        const ParoNode *key = g_ptr_array_index(mapping->keys, k);
        const ParoNode *value = g_ptr_array_index(mapping->values, k);
        gsize i;
        for (i = 0; i < n_fields; i++)
            if (strcmp(fields[i].key, key->scalar) == 0)
                break;
        if (i == n_fields) {
            g_autofree char *list = known_keys(fields, n_fields);
            const char *names[64];
            for (gsize j = 0; j < n_fields; j++)
                names[j] = fields[j].key;
            const char *nearest = paro_spell_nearest(key->scalar, names, (guint)n_fields);
            g_autofree char *hint =
                nearest ? g_strdup_printf("; did you mean '%s'?", nearest) : g_strdup("");
            paro_node_error(error, key, PARO_CONFIG_ERROR_UNKNOWN_KEY,
                            "unknown key '%s' in '%s'%s (known: %s)", key->scalar, what, hint,
                            list);
            return FALSE;
        }
        if (!parse_field(&fields[i], value, record, user_data, error))
            return FALSE;
        present |= G_GUINT64_CONSTANT(1) << i;
    }
    for (gsize i = 0; i < n_fields; i++)
        if ((fields[i].flags & PARO_FIELD_REQUIRED) && !(present & (G_GUINT64_CONSTANT(1) << i))) {
            paro_node_error(error, mapping, PARO_CONFIG_ERROR_MISSING_KEY,
                            "missing key '%s' in '%s'", fields[i].key, what);
            return FALSE;
        }
    if (out_present)
        *out_present = present;
    return TRUE;
}

gboolean paro_schema_check_header(const ParoNode *root, const char *kind, GError **error)
{
    if (!paro_schema_expect_kind(root, PARO_NODE_MAPPING, "document", error))
        return FALSE;
    const ParoNode *k = paro_node_lookup(root, "kind");
    if (k == NULL) {
        paro_node_error(error, root, PARO_CONFIG_ERROR_MISSING_KEY,
                        "missing key 'kind' (expected 'kind: %s')", kind);
        return FALSE;
    }
    if (k->kind != PARO_NODE_SCALAR || strcmp(k->scalar, kind) != 0) {
        paro_node_error(error, k, PARO_CONFIG_ERROR_TYPE, "expected 'kind: %s', got '%s'", kind,
                        k->kind == PARO_NODE_SCALAR ? k->scalar : paro_node_kind_name(k->kind));
        return FALSE;
    }
    const ParoNode *s = paro_node_lookup(root, "schema");
    if (s == NULL) {
        paro_node_error(error, root, PARO_CONFIG_ERROR_MISSING_KEY, "missing key 'schema'");
        return FALSE;
    }
    gint64 version;
    if (!paro_schema_parse_int(s, "schema", &version, error))
        return FALSE;
    if (version != 1) {
        paro_node_error(error, s, PARO_CONFIG_ERROR_RANGE,
                        "unsupported schema %" G_GINT64_FORMAT " (this parosim reads schema 1)",
                        version);
        return FALSE;
    }
    return TRUE;
}
