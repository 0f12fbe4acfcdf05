/* SPDX-License-Identifier: MIT */
/* Fuzz target: the files a scenario references. The first byte picks the slot ('m'
 * model, 't' topology, 'c' calibration; any other byte modulo 3), the rest is that file.
 * It is written to a temporary file and swapped into the repository's calibrated scenario
 * (which references all three) with the `--set model=FILE` form, so the referenced tree
 * goes through splicing, the loaders and the scenario's cross-checks. */
#include "fuzz-common.h"
#include "scenario/scenario.h"

static const char *const slots[] = {"model", "topology", "calibration"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_init();
    if (size < 1)
        return 0;
    int slot = data[0] == 'm' ? 0 : data[0] == 't' ? 1 : data[0] == 'c' ? 2 : data[0] % 3;
    g_autofree char *file = fuzz_tmp_path("ref.yaml");
    fuzz_write(file, data + 1, size - 1);
    g_autofree char *scenario = g_build_filename(fuzz_source_root(), "scenarios",
                                                 "llama-7b_dgx-h100x8_n32-calibrated.yaml", NULL);
    g_autofree char *set = g_strdup_printf("%s=%s", slots[slot], file);
    const char *const overrides[] = {set, NULL};
    GError *error = NULL;
    ParoScenario *s = paro_scenario_load(scenario, overrides, &error);
    paro_scenario_free(s);
    g_clear_error(&error);
    return 0;
}
