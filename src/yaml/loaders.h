/* SPDX-License-Identifier: MIT */
/* Loaders from located YAML trees to the model and topology records. Each returns NULL
 * and a located PARO_CONFIG_ERROR on bad input; nothing partial escapes. */
#pragma once

#include "model/model.h"
#include "topo/topology.h"
#include "yaml/yaml.h"

G_BEGIN_DECLS

/**
 * paro_model_from_node:
 * Reads `kind: model` documents, or a HuggingFace config.json (recognised by having no
 * `kind` key and a `hidden_size` key). Returns: (transfer full) (nullable).
 */
ParoModel *paro_model_from_node(const ParoNode *root, GError **error);

/** paro_model_load: (transfer full) (nullable) reads a model file. */
ParoModel *paro_model_load(const char *path, GError **error);

/** paro_topology_from_node: (transfer full) (nullable) reads a `kind: topology` document. */
ParoTopology *paro_topology_from_node(const ParoNode *root, GError **error);

/** paro_topology_load: (transfer full) (nullable) reads a topology file. */
ParoTopology *paro_topology_load(const char *path, GError **error);

G_END_DECLS
