/* SPDX-License-Identifier: MIT */
/* Fuzz target: the input is a scenario file, loaded from fuzz_scenario_path() so that its
 * references to the repository's models, topologies and fits resolve. */
#include "fuzz-common.h"
#include "scenario/scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_scenario_path();
    fuzz_write(path, data, size);
    GError *error = NULL;
    ParoScenario *s = paro_scenario_load(path, NULL, &error);
    if (s != NULL) {
        (void)paro_scenario_dp_ranks(s);
        paro_scenario_free(s);
    }
    g_clear_error(&error);
    return 0;
}
