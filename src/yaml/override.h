/* SPDX-License-Identifier: MIT */
/* Command-line overrides: `--set dotted.path=value` replaces (or adds) one scalar in a
 * located tree. The new nodes are located in the argument itself, labelled "--set[i]"
 * with 1-based columns, so a bad key or value is reported exactly like one in a file. */
#pragma once

#include "yaml/yaml.h"

G_BEGIN_DECLS

typedef struct {
    char *label;      /* "--set[1]" */
    char *text;       /* the whole argument */
    char **path;      /* components of the dotted path */
    int *columns;     /* 1-based column of each component */
    char *value;      /* the new scalar */
    int value_column; /* 1-based */
} ParoOverride;

void paro_override_free(ParoOverride *o);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ParoOverride, paro_override_free)

/**
 * paro_override_parse:
 * @text: "training.accumulation=8"
 * @index: 1-based position among the --set arguments, for the label
 * Returns: (transfer full) (nullable). Errors: PARO_CONFIG_ERROR_SYNTAX (no '=', empty
 * component or value), located in the argument.
 */
ParoOverride *paro_override_parse(const char *text, int index, GError **error);

/**
 * paro_override_apply:
 * @root: the mapping the path starts from
 * @skip: how many leading components to skip (the path is applied below them)
 * Errors: PARO_CONFIG_ERROR_TYPE when the path runs through a scalar or ends on a mapping.
 */
gboolean paro_override_apply(ParoNode *root, const ParoOverride *o, guint skip, GError **error);

G_END_DECLS
