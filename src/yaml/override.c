/* SPDX-License-Identifier: MIT */
/* --set overrides on located trees. */
#include "yaml/override.h"

#include <string.h>

void paro_override_free(ParoOverride *o)
{
    if (o == NULL)
        return;
    g_free(o->label);
    g_free(o->text);
    g_strfreev(o->path);
    g_free(o->columns);
    g_free(o->value);
    g_free(o);
}

static gboolean is_key_char(char c)
{
    return g_ascii_isalnum(c) || c == '_' || c == '-';
}

ParoOverride *paro_override_parse(const char *text, int index, GError **error)
{
    g_autoptr(ParoOverride) o = g_new0(ParoOverride, 1);
    o->label = g_strdup_printf("--set[%d]", index);
    o->text = g_strdup(text);
    const char *eq = strchr(text, '=');
    if (eq == NULL) {
        paro_config_error_set(error, PARO_CONFIG_ERROR_SYNTAX, o->label, 1, (int)strlen(text) + 1,
                              "expected KEY=VALUE, e.g. "
                              "training.accumulation=8");
        return NULL;
    }
    GPtrArray *parts = g_ptr_array_new_with_free_func(g_free);
    GArray *columns = g_array_new(FALSE, FALSE, sizeof(int));
    const char *start = text;
    for (const char *p = text;; p++) {
        if (p == eq || *p == '.') {
            if (p == start) {
                paro_config_error_set(error, PARO_CONFIG_ERROR_SYNTAX, o->label, 1,
                                      (int)(p - text) + 1, "empty key in '%.*s'", (int)(eq - text),
                                      text);
                g_ptr_array_free(parts, TRUE);
                g_array_free(columns, TRUE);
                return NULL;
            }
            g_ptr_array_add(parts, g_strndup(start, p - start));
            int column = (int)(start - text) + 1;
            g_array_append_val(columns, column);
            if (p == eq)
                break;
            start = p + 1;
        } else if (!is_key_char(*p)) {
            paro_config_error_set(error, PARO_CONFIG_ERROR_SYNTAX, o->label, 1, (int)(p - text) + 1,
                                  "invalid character '%c' in key (keys are letters, digits, "
                                  "'_' and '-', joined by '.')",
                                  *p);
            g_ptr_array_free(parts, TRUE);
            g_array_free(columns, TRUE);
            return NULL;
        }
    }
    g_ptr_array_add(parts, NULL);
    o->path = (char **)g_ptr_array_free(parts, FALSE);
    o->columns = (int *)g_array_free(columns, FALSE);
    o->value = g_strdup(eq + 1);
    o->value_column = (int)(eq - text) + 2;
    if (o->value[0] == '\0') {
        paro_config_error_set(error, PARO_CONFIG_ERROR_SYNTAX, o->label, 1, o->value_column,
                              "empty value for '%.*s'", (int)(eq - text), text);
        return NULL;
    }
    return g_steal_pointer(&o);
}

/* The keys whose scalar value is a name standing for `{name: VALUE}` (the scenario's
 * framework profile); any other scalar is a value, and a key set below it is an error. */
static gboolean names_a_mapping(const char *key)
{
    return strcmp(key, "framework") == 0;
}

gboolean paro_override_apply(ParoNode *root, const ParoOverride *o, guint skip, GError **error)
{
    guint n = g_strv_length(o->path);
    g_return_val_if_fail(skip < n, FALSE);
    ParoNode *mapping = root;
    for (guint i = skip; i < n; i++) {
        const char *key = o->path[i];
        if (mapping->kind != PARO_NODE_MAPPING) {
            paro_config_error_set(error, PARO_CONFIG_ERROR_TYPE, o->label, 1, o->columns[i],
                                  "cannot set '%s': '%s' is %s, not a mapping (%s:%d:%d)", o->text,
                                  o->path[i - 1], paro_node_kind_name(mapping->kind),
                                  mapping->source, mapping->line, mapping->column);
            return FALSE;
        }
        ParoNode *child = paro_node_lookup(mapping, key);
        if (i + 1 == n) {
            /* A mapping with a name stands for that name (`framework: fsdp` is
             * `framework: {name: fsdp}`): setting it to a scalar sets its name and keeps the
             * rest. An inline document (a `kind`: a model, topology or calibration written
             * in place) is not a name: a scalar replaces it, as a reference to a file does. */
            gboolean document = child != NULL && child->kind == PARO_NODE_MAPPING &&
                                paro_node_lookup(child, "kind") != NULL;
            if (child != NULL && child->kind == PARO_NODE_MAPPING && !document &&
                paro_node_lookup(child, "name") != NULL) {
                mapping = child;
                key = "name";
                child = paro_node_lookup(mapping, key);
            }
            if (child != NULL && child->kind != PARO_NODE_SCALAR && !document) {
                paro_config_error_set(error, PARO_CONFIG_ERROR_TYPE, o->label, 1, o->columns[i],
                                      "cannot set '%s': it is %s (%s:%d:%d); set one of its keys",
                                      key, paro_node_kind_name(child->kind), child->source,
                                      child->line, child->column);
                return FALSE;
            }
            paro_node_set(mapping, paro_node_new_scalar(key, o->label, 1, o->columns[i]),
                          paro_node_new_scalar(o->value, o->label, 1, o->value_column));
            return TRUE;
        }
        if (child == NULL) {
            child = paro_node_new_mapping(o->label, 1, o->columns[i + 1]);
            paro_node_set(mapping, paro_node_new_scalar(key, o->label, 1, o->columns[i]), child);
        } else if (child->kind == PARO_NODE_SCALAR && names_a_mapping(key)) {
            /* and a name stands for the mapping with that name, so a key can be set in it
             * (`framework: megatron` with `--set framework.tp_overlap=true`) */
            ParoNode *named = paro_node_new_mapping(child->source, child->line, child->column);
            paro_node_set(
                named, paro_node_new_scalar("name", child->source, child->line, child->column),
                paro_node_new_scalar(child->scalar, child->source, child->line, child->column));
            paro_node_set(mapping, paro_node_new_scalar(key, o->label, 1, o->columns[i]), named);
            child = named;
        }
        mapping = child;
    }
    g_assert_not_reached();
}
