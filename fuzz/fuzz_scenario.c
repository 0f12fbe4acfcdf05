/* SPDX-License-Identifier: MIT */
/* Fuzz target: the input is a scenario file. It is written to TMP/scenarios/fuzz.yaml,
 * where TMP/models, TMP/topologies, TMP/validation (and TMP/ref: tests/data/ref) link to the repository's, so the
 * references the repository's scenarios make (../models/llama-7b.yaml,
 * ../validation/fits/...) resolve to fixed files while the scenario text is fuzzed. */
#include "fuzz-common.h"
#include "scenario/scenario.h"

static char *scenario_path;

static void setup(void)
{
    const char *tmp = fuzz_init();
    /* name in TMP, directory in the repository */
    static const char *const links[][2] = {
        {"models", "models"}, {"topologies", "topologies"}, {"validation", "validation"},
        {"ref", "tests/data/ref"}};
    for (guint i = 0; i < G_N_ELEMENTS(links); i++) {
        g_autofree char *target = g_build_filename(fuzz_source_root(), links[i][1], NULL);
        g_autofree char *link = g_build_filename(tmp, links[i][0], NULL);
        int rc = symlink(target, link);
        g_assert(rc == 0);
    }
    scenario_path = g_build_filename(tmp, "scenarios", "fuzz.yaml", NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (scenario_path == NULL)
        setup();
    fuzz_write(scenario_path, data, size);
    GError *error = NULL;
    ParoScenario *s = paro_scenario_load(scenario_path, NULL, &error);
    if (s != NULL) {
        (void)paro_scenario_n_gpus(s);
        paro_scenario_free(s);
    }
    g_clear_error(&error);
    return 0;
}
