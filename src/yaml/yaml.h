/* SPDX-License-Identifier: MIT */
/* A small located tree built from libyaml's document API. Every node keeps the label of
 * the file it came from and its 1-based line and column, so a tree that mixes nodes of
 * several files (a scenario with its model and topology spliced in, plus --set
 * overrides) still reports each error where the offending text was written. Duplicate
 * keys, which libyaml accepts, are rejected here. */
#pragma once

#include <glib.h>

#include "core/error.h"

G_BEGIN_DECLS

typedef enum {
    PARO_NODE_SCALAR,
    PARO_NODE_MAPPING,
    PARO_NODE_SEQUENCE,
} ParoNodeKind;

typedef struct _ParoNode ParoNode;
struct _ParoNode {
    ParoNodeKind kind;
    char *source;      /* GRefString: file label shared by the nodes of one input */
    int line;          /* 1-based */
    int column;        /* 1-based */
    char *scalar;      /* SCALAR: the text */
    gboolean plain;    /* SCALAR: written without quotes (so "null"/"~" mean nothing) */
    GPtrArray *keys;   /* MAPPING: ParoNode scalars, in file order */
    GPtrArray *values; /* MAPPING: values; SEQUENCE: items */
    char *ref_path;    /* set on a mapping spliced in from another file: that file's path */
};

/** paro_node_free: frees @node and its children. */
void paro_node_free(ParoNode *node);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ParoNode, paro_node_free)

/**
 * paro_yaml_load_file:
 * @path: file to read; also the label in error messages
 * Returns: (transfer full) (nullable): the root of the first document. Errors:
 * PARO_CONFIG_ERROR_SYNTAX (libyaml's message, located), _DUPLICATE_KEY, _TYPE (a
 * non-scalar key), _REFERENCE (the file cannot be read).
 */
ParoNode *paro_yaml_load_file(const char *path, GError **error);

/** paro_yaml_load_data: as above from memory; @label names it in messages ("<data>"). */
ParoNode *paro_yaml_load_data(const char *data, gsize length, const char *label, GError **error);

/** paro_node_new_scalar: (transfer full) a scalar located at @source:@line:@column. */
ParoNode *paro_node_new_scalar(const char *text, const char *source, int line, int column);

/** paro_node_new_mapping: (transfer full) an empty mapping. */
ParoNode *paro_node_new_mapping(const char *source, int line, int column);

/** paro_node_lookup: (transfer none) (nullable) the value of @key in a mapping. */
ParoNode *paro_node_lookup(const ParoNode *mapping, const char *key);

/** paro_node_lookup_key: (transfer none) (nullable) the key node itself, for locations. */
ParoNode *paro_node_lookup_key(const ParoNode *mapping, const char *key);

/** paro_node_set: puts @value under @key (replacing and freeing an old value); takes
 * ownership of @key_node and @value. */
void paro_node_set(ParoNode *mapping, ParoNode *key_node, ParoNode *value);

/** paro_node_replace_value: replaces the value at index @i of a mapping (frees the old). */
void paro_node_replace_value(ParoNode *mapping, guint i, ParoNode *value);

/** paro_node_kind_name: "a scalar", "a mapping", "a sequence". */
const char *paro_node_kind_name(ParoNodeKind kind);

/** paro_node_is_null: TRUE for an empty or plain null/~ scalar. */
gboolean paro_node_is_null(const ParoNode *node);

/** paro_node_error: sets a PARO_CONFIG_ERROR located at @node. */
void paro_node_error(GError **error, const ParoNode *node, ParoConfigError code, const char *format,
                     ...) G_GNUC_PRINTF(4, 5);

/** paro_node_relocate_error: turns an unlocated PARO_CONFIG_ERROR from a value parser
 * (units, numbers) into one located at @node, keeping its code and text. Consumes @local. */
void paro_node_relocate_error(GError **error, const ParoNode *node, GError *local);

G_END_DECLS
