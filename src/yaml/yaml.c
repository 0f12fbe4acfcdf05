/* SPDX-License-Identifier: MIT */
/* libyaml document -> ParoNode tree. libyaml marks are 0-based, ours 1-based. The tree is
 * bounded (depth and node count) so hostile inputs such as alias bombs fail cleanly. */
#include "yaml/yaml.h"

#include "core/files.h"

#include <string.h>
#include <yaml.h>

#define MAX_DEPTH 64
/* Real inputs have a few hundred nodes; the bound is what an alias bomb may expand to,
 * and what it may cost (about 0.1 s). */
#define MAX_NODES 100000

void paro_node_free(ParoNode *node)
{
    if (node == NULL)
        return;
    g_clear_pointer(&node->source, g_ref_string_release);
    g_free(node->scalar);
    g_free(node->ref_path);
    g_clear_pointer(&node->keys, g_ptr_array_unref);
    g_clear_pointer(&node->values, g_ptr_array_unref);
    g_free(node);
}

static ParoNode *node_new(ParoNodeKind kind, const char *source, int line, int column)
{
    ParoNode *node = g_new0(ParoNode, 1);
    node->kind = kind;
    /* Not interned: GLib 2.74 races between releasing the last reference to an
     * interned string and interning it again from another thread (sweeps). */
    node->source = g_ref_string_new(source ? source : "<data>");
    node->line = line;
    node->column = column;
    if (kind == PARO_NODE_MAPPING)
        node->keys = g_ptr_array_new_with_free_func((GDestroyNotify)paro_node_free);
    if (kind != PARO_NODE_SCALAR)
        node->values = g_ptr_array_new_with_free_func((GDestroyNotify)paro_node_free);
    return node;
}

ParoNode *paro_node_new_scalar(const char *text, const char *source, int line, int column)
{
    ParoNode *node = node_new(PARO_NODE_SCALAR, source, line, column);
    node->scalar = g_strdup(text);
    node->plain = TRUE;
    return node;
}

ParoNode *paro_node_new_mapping(const char *source, int line, int column)
{
    return node_new(PARO_NODE_MAPPING, source, line, column);
}

const char *paro_node_kind_name(ParoNodeKind kind)
{
    switch (kind) {
    case PARO_NODE_SCALAR:
        return "a scalar";
    case PARO_NODE_MAPPING:
        return "a mapping";
    case PARO_NODE_SEQUENCE:
        return "a sequence";
    }
    return "?";
}

gboolean paro_node_is_null(const ParoNode *node)
{
    if (node == NULL)
        return TRUE;
    if (node->kind != PARO_NODE_SCALAR || !node->plain)
        return FALSE;
    return node->scalar[0] == '\0' || strcmp(node->scalar, "~") == 0 ||
           strcmp(node->scalar, "null") == 0 || strcmp(node->scalar, "Null") == 0 ||
           strcmp(node->scalar, "NULL") == 0;
}

void paro_node_error(GError **error, const ParoNode *node, ParoConfigError code, const char *format,
                     ...)
{
    va_list args;
    va_start(args, format);
    g_autofree char *message = g_strdup_vprintf(format, args);
    va_end(args);
    paro_config_error_set(error, code, node->source, node->line, node->column, "%s", message);
}

void paro_node_relocate_error(GError **error, const ParoNode *node, GError *local)
{
    int code = local->domain == PARO_CONFIG_ERROR ? local->code : PARO_CONFIG_ERROR_TYPE;
    paro_node_error(error, node, code, "%s", local->message);
    g_error_free(local);
}

ParoNode *paro_node_lookup_key(const ParoNode *mapping, const char *key)
{
    g_return_val_if_fail(mapping != NULL && mapping->kind == PARO_NODE_MAPPING, NULL);
    for (guint i = 0; i < mapping->keys->len; i++) {
        ParoNode *k = g_ptr_array_index(mapping->keys, i);
        if (strcmp(k->scalar, key) == 0)
            return k;
    }
    return NULL;
}

ParoNode *paro_node_lookup(const ParoNode *mapping, const char *key)
{
    g_return_val_if_fail(mapping != NULL && mapping->kind == PARO_NODE_MAPPING, NULL);
    for (guint i = 0; i < mapping->keys->len; i++) {
        ParoNode *k = g_ptr_array_index(mapping->keys, i);
        if (strcmp(k->scalar, key) == 0)
            return g_ptr_array_index(mapping->values, i);
    }
    return NULL;
}

void paro_node_replace_value(ParoNode *mapping, guint i, ParoNode *value)
{
    g_return_if_fail(mapping->kind == PARO_NODE_MAPPING && i < mapping->values->len);
    paro_node_free(mapping->values->pdata[i]);
    mapping->values->pdata[i] = value;
}

void paro_node_set(ParoNode *mapping, ParoNode *key_node, ParoNode *value)
{
    g_return_if_fail(mapping->kind == PARO_NODE_MAPPING && key_node->kind == PARO_NODE_SCALAR);
    for (guint i = 0; i < mapping->keys->len; i++) {
        ParoNode *k = g_ptr_array_index(mapping->keys, i);
        if (strcmp(k->scalar, key_node->scalar) == 0) {
            paro_node_free(key_node);
            paro_node_replace_value(mapping, i, value);
            return;
        }
    }
    g_ptr_array_add(mapping->keys, key_node);
    g_ptr_array_add(mapping->values, value);
}

typedef struct {
    yaml_document_t *doc;
    const char *label;
    guint n_nodes;
} Builder;

static ParoNode *build(Builder *b, yaml_node_t *yn, int depth, GError **error)
{
    int line = (int)yn->start_mark.line + 1, column = (int)yn->start_mark.column + 1;
    if (depth > MAX_DEPTH || ++b->n_nodes > MAX_NODES) {
        paro_config_error_set(error, PARO_CONFIG_ERROR_RANGE, b->label, line, column,
                              "document too deep or too large (limits: depth %d, %d nodes)",
                              MAX_DEPTH, MAX_NODES);
        return NULL;
    }
    switch (yn->type) {
    case YAML_SCALAR_NODE: {
        ParoNode *node = node_new(PARO_NODE_SCALAR, b->label, line, column);
        node->scalar = g_strndup((const char *)yn->data.scalar.value, yn->data.scalar.length);
        node->plain = yn->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        if (strlen(node->scalar) != yn->data.scalar.length) {
            paro_node_error(error, node, PARO_CONFIG_ERROR_SYNTAX, "scalar contains a NUL byte");
            paro_node_free(node);
            return NULL;
        }
        return node;
    }
    case YAML_SEQUENCE_NODE: {
        g_autoptr(ParoNode) node = node_new(PARO_NODE_SEQUENCE, b->label, line, column);
        for (yaml_node_item_t *it = yn->data.sequence.items.start; it < yn->data.sequence.items.top;
             it++) {
            ParoNode *child = build(b, yaml_document_get_node(b->doc, *it), depth + 1, error);
            if (child == NULL)
                return NULL;
            g_ptr_array_add(node->values, child);
        }
        return g_steal_pointer(&node);
    }
    case YAML_MAPPING_NODE: {
        g_autoptr(ParoNode) node = node_new(PARO_NODE_MAPPING, b->label, line, column);
        /* Keys seen so far, for duplicates: a scan of the keys would be quadratic. */
        g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
        for (yaml_node_pair_t *pair = yn->data.mapping.pairs.start;
             pair < yn->data.mapping.pairs.top; pair++) {
            g_autoptr(ParoNode) key =
                build(b, yaml_document_get_node(b->doc, pair->key), depth + 1, error);
            if (key == NULL)
                return NULL;
            if (key->kind != PARO_NODE_SCALAR) {
                paro_node_error(error, key, PARO_CONFIG_ERROR_TYPE,
                                "a mapping key must be a scalar, not %s",
                                paro_node_kind_name(key->kind));
                return NULL;
            }
            const ParoNode *previous = g_hash_table_lookup(seen, key->scalar);
            if (previous != NULL) {
                paro_node_error(error, key, PARO_CONFIG_ERROR_DUPLICATE_KEY,
                                "duplicate key '%s' (first at %d:%d)", key->scalar, previous->line,
                                previous->column);
                return NULL;
            }
            ParoNode *value =
                build(b, yaml_document_get_node(b->doc, pair->value), depth + 1, error);
            if (value == NULL)
                return NULL;
            g_hash_table_insert(seen, key->scalar, key);
            g_ptr_array_add(node->keys, g_steal_pointer(&key));
            g_ptr_array_add(node->values, value);
        }
        return g_steal_pointer(&node);
    }
    case YAML_NO_NODE:
        break;
    }
    paro_config_error_set(error, PARO_CONFIG_ERROR_SYNTAX, b->label, line, column,
                          "unsupported YAML node");
    return NULL;
}

/* Refuses a first document nested deeper than build() accepts, from libyaml's events,
 * before the document is loaded: libyaml's scanner takes time quadratic in the nesting
 * of flow collections ("[[[[...": 16,000 levels take a second), which the event stream
 * lets us stop after MAX_DEPTH levels. Syntax errors are left to the load, which reports
 * them. The error is the one build() gives at the same node. */
static gboolean check_depth(const char *data, gsize length, const char *label, GError **error)
{
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        return TRUE;
    yaml_parser_set_input_string(&parser, (const unsigned char *)data, length);
    gboolean ok = TRUE, done = FALSE;
    int depth = 0;
    while (ok && !done) {
        yaml_event_t event;
        if (!yaml_parser_parse(&parser, &event))
            break;
        switch (event.type) {
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
            /* The root collection is at depth 0, so build() refuses the one at MAX_DEPTH + 1. */
            if (++depth > MAX_DEPTH + 1) {
                paro_config_error_set(error, PARO_CONFIG_ERROR_RANGE, label,
                                      (int)event.start_mark.line + 1,
                                      (int)event.start_mark.column + 1,
                                      "document too deep or too large (limits: depth %d, %d nodes)",
                                      MAX_DEPTH, MAX_NODES);
                ok = FALSE;
            }
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            depth--;
            break;
        case YAML_STREAM_END_EVENT: /* every document: a second one is read too, to refuse it */
            done = TRUE;
            break;
        default:
            break;
        }
        yaml_event_delete(&event);
    }
    yaml_parser_delete(&parser);
    return ok;
}

/* libyaml's reader errors (a NUL, a control character, bad UTF-8) carry a byte offset,
 * not a mark: the 1-based line and column (in characters) of that byte. */
static void locate_offset(const char *data, gsize length, gsize offset, int *line, int *column)
{
    *line = 1;
    *column = 1;
    for (gsize i = 0; i < offset && i < length; i++) {
        if (data[i] == '\n') {
            ++*line;
            *column = 1;
        } else if (((guchar)data[i] & 0xC0) != 0x80) {
            ++*column; /* continuation bytes of UTF-8 do not start a character */
        }
    }
}

/* TRUE when the stream ends after the first document; else the error: the second
 * document's syntax error, or its place. */
static gboolean no_second_document(yaml_parser_t *parser, const char *data, gsize length,
                                   const char *label, GError **error)
{
    yaml_document_t doc;
    if (!yaml_parser_load(parser, &doc)) {
        int line = (int)parser->problem_mark.line + 1,
            column = (int)parser->problem_mark.column + 1;
        if (parser->error == YAML_READER_ERROR)
            locate_offset(data, length, parser->problem_offset, &line, &column);
        paro_config_error_set(error, PARO_CONFIG_ERROR_SYNTAX, label, line, column,
                              "%s (in a second document: parosim reads one a file)",
                              parser->problem ? parser->problem : "invalid YAML");
        return FALSE;
    }
    yaml_node_t *top = yaml_document_get_root_node(&doc);
    gboolean ok = top == NULL;
    if (!ok)
        paro_config_error_set(error, PARO_CONFIG_ERROR_SYNTAX, label, (int)doc.start_mark.line + 1,
                              (int)doc.start_mark.column + 1,
                              "a second YAML document: parosim reads one document a file");
    yaml_document_delete(&doc);
    return ok;
}

ParoNode *paro_yaml_load_data(const char *data, gsize length, const char *label, GError **error)
{
    g_return_val_if_fail(data != NULL, NULL);
    if (label == NULL)
        label = "<data>";
    if (!check_depth(data, length, label, error))
        return NULL;
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser)) {
        paro_config_error_set(error, PARO_CONFIG_ERROR_SYNTAX, label, 0, 0,
                              "cannot initialise the YAML parser");
        return NULL;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)data, length);
    if (!yaml_parser_load(&parser, &doc)) {
        int line = (int)parser.problem_mark.line + 1, column = (int)parser.problem_mark.column + 1;
        if (parser.error == YAML_READER_ERROR)
            locate_offset(data, length, parser.problem_offset, &line, &column);
        if (parser.context != NULL)
            paro_config_error_set(error, PARO_CONFIG_ERROR_SYNTAX, label, line, column,
                                  "%s (%s at %d:%d)", parser.problem, parser.context,
                                  (int)parser.context_mark.line + 1,
                                  (int)parser.context_mark.column + 1);
        else
            paro_config_error_set(error, PARO_CONFIG_ERROR_SYNTAX, label, line, column, "%s",
                                  parser.problem ? parser.problem : "invalid YAML");
        yaml_parser_delete(&parser);
        return NULL;
    }
    ParoNode *root = NULL;
    yaml_node_t *top = yaml_document_get_root_node(&doc);
    if (top == NULL) {
        paro_config_error_set(error, PARO_CONFIG_ERROR_SYNTAX, label, 1, 1, "empty document");
    } else {
        Builder b = {&doc, label, 0};
        root = build(&b, top, 0, error);
    }
    yaml_document_delete(&doc);
    /* A second document (even a malformed one) was silently ignored (issue #16 W10). */
    if (root != NULL && !no_second_document(&parser, data, length, label, error))
        g_clear_pointer(&root, paro_node_free);
    yaml_parser_delete(&parser);
    return root;
}

ParoNode *paro_yaml_load_file(const char *path, GError **error)
{
    g_autofree char *contents = NULL;
    gsize length = 0;
    g_autoptr(GError) local = NULL;
    if (!paro_file_read(path, &paro_limit_input_bytes, &contents, &length, &local)) {
        g_set_error(error, PARO_CONFIG_ERROR, PARO_CONFIG_ERROR_REFERENCE, "%s", local->message);
        return NULL;
    }
    return paro_yaml_load_data(contents, length, path, error);
}
