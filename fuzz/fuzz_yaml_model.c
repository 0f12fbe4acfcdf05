/* SPDX-License-Identifier: MIT */
/* Fuzz target: the model loader, on `kind: model` YAML and on HuggingFace config.json
 * (recognised by content, so one target covers both), through the located YAML tree.
 * Errors are expected; crashes, leaks, undefined behaviour and hangs are bugs. */
#include "fuzz-common.h"
#include "yaml/loaders.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_init();
    GError *error = NULL;
    ParoNode *root = paro_yaml_load_data((const char *)data, size, "model.yaml", &error);
    if (root != NULL) {
        ParoModel *model = paro_model_from_node(root, &error);
        if (model != NULL) {
            /* The derived figures a scenario uses next. */
            (void)paro_model_base_params(model);
            paro_model_free(model);
        }
        paro_node_free(root);
    }
    g_clear_error(&error);
    return 0;
}
