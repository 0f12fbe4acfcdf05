/* SPDX-License-Identifier: MIT */
/* Fuzz target: the topology loader (`kind: topology`) through the located YAML tree. */
#include "fuzz-common.h"
#include "yaml/loaders.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_init();
    GError *error = NULL;
    ParoNode *root = paro_yaml_load_data((const char *)data, size, "topology.yaml", &error);
    if (root != NULL) {
        ParoTopology *topology = paro_topology_from_node(root, &error);
        if (topology != NULL) {
            (void)paro_topology_n_gpus(topology);
            (void)paro_topology_inter_Bps(topology);
            (void)paro_topology_inter_latency_s(topology);
            paro_topology_free(topology);
        }
        paro_node_free(root);
    }
    g_clear_error(&error);
    return 0;
}
