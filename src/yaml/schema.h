/* SPDX-License-Identifier: MIT */
/* Schema as data: each YAML mapping is described by a static table of ParoField records
 * (key, type, flags, offset into a C struct), walked by one function, in the manner of
 * libcyaml. That gives one wording for every unknown, missing or ill-typed key, one
 * place for ranges, and tables that `--explain` style help can print. */
#pragma once

#include <glib.h>

#include "core/limits.h"
#include "core/units.h"
#include "yaml/yaml.h"

G_BEGIN_DECLS

typedef enum {
    PARO_FIELD_STRING,   /* char *  (g_strdup'd; the record owns it) */
    PARO_FIELD_INT,      /* gint64: an integer count, "6.7e9" accepted when integral */
    PARO_FIELD_DOUBLE,   /* double: a plain number */
    PARO_FIELD_RATIO,    /* double: a plain number or "a/b" */
    PARO_FIELD_BOOL,     /* gboolean: true or false only */
    PARO_FIELD_ENUM,     /* an enum field (int-sized: the tables assert it): index into choices */
    PARO_FIELD_QUANTITY, /* double: a number with a unit of the field's quantity */
    PARO_FIELD_CUSTOM,   /* parse() does the work */
    PARO_FIELD_HEADER,   /* kind/schema: checked by paro_schema_check_header, not stored */
} ParoFieldType;

enum {
    PARO_FIELD_REQUIRED = 1 << 0,
    PARO_FIELD_POSITIVE = 1 << 1,   /* > 0 */
    PARO_FIELD_NONNEG = 1 << 2,     /* >= 0 */
    PARO_FIELD_UNIT_RANGE = 1 << 3, /* within [0, 1] */
};

typedef gboolean (*ParoFieldParser)(const ParoNode *node, gpointer field_ptr, gpointer user_data,
                                    GError **error);

typedef struct {
    const char *key;
    ParoFieldType type;
    guint flags;
    gsize offset;
    ParoQuantity quantity;      /* PARO_FIELD_QUANTITY */
    const char *const *choices; /* PARO_FIELD_ENUM: NULL-terminated */
    ParoFieldParser parse;      /* PARO_FIELD_CUSTOM */
    const char *doc;            /* one line, for help output */
    const ParoLimit *limit;     /* INT, DOUBLE, QUANTITY: nullable; the value's bounds */
} ParoField;

/**
 * paro_schema_apply:
 * @mapping: the node to read; must be a mapping (PARO_CONFIG_ERROR_TYPE otherwise)
 * @what: the mapping's name in messages ("training")
 * @record: the struct the offsets point into; fields absent from @mapping keep the values
 *   the caller put there (the defaults)
 * @out_present: (out) (optional): bit i set when fields[i] was given
 *
 * Errors: UNKNOWN_KEY (lists the known keys), MISSING_KEY (at the mapping), TYPE, UNIT,
 * RANGE (also a value outside the field's limit), each located at the offending node.
 */
gboolean paro_schema_apply(const ParoNode *mapping, const char *what, const ParoField *fields,
                           gsize n_fields, gpointer record, gpointer user_data,
                           guint64 *out_present, GError **error);

/** paro_schema_expect_kind: TYPE error unless @node is of @kind. */
gboolean paro_schema_expect_kind(const ParoNode *node, ParoNodeKind kind, const char *what,
                                 GError **error);

/** paro_schema_parse_int: an integral count from a scalar node (located errors). */
gboolean paro_schema_parse_int(const ParoNode *node, const char *what, gint64 *out, GError **error);

/** paro_schema_check_limit: RANGE error located at @node unless @value (read from @node,
 * named @what) lies within @limit. */
gboolean paro_schema_check_limit(const ParoLimit *limit, const ParoNode *node, const char *what,
                                 double value, GError **error);

/** paro_schema_check_header: checks `kind: @kind` and `schema: 1` at the top of @root. */
gboolean paro_schema_check_header(const ParoNode *root, const char *kind, GError **error);

G_END_DECLS
