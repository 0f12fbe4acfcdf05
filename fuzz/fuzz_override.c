/* SPDX-License-Identifier: MIT */
/* Fuzz target: `--set` overrides. Each input line is one argument: it is parsed, applied
 * to the tree of the default scenario file (scenarios/llama-7b_a100x8-100g_n32.yaml), and
 * then all lines are given to paro_scenario_load on that scenario, as `parosim run --set`
 * does (references, splicing, validation). */
#include "fuzz-common.h"
#include "scenario/scenario.h"
#include "yaml/override.h"

#define MAX_SETS 16

static char *scenario_path, *scenario_text;
static gsize scenario_len;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_init();
    if (scenario_path == NULL) {
        scenario_path = g_build_filename(fuzz_source_root(), "scenarios",
                                         "llama-7b_a100x8-100g_n32.yaml", NULL);
        gboolean ok = g_file_get_contents(scenario_path, &scenario_text, &scenario_len, NULL);
        g_assert(ok);
    }
    char **lines = fuzz_lines(data, size, MAX_SETS);
    GError *error = NULL;
    ParoNode *root = paro_yaml_load_data(scenario_text, scenario_len, scenario_path, &error);
    g_assert(root != NULL);
    for (int i = 0; lines[i]; i++) {
        ParoOverride *o = paro_override_parse(lines[i], i + 1, &error);
        if (o != NULL) {
            paro_override_apply(root, o, 0, &error);
            paro_override_free(o);
        }
        g_clear_error(&error);
    }
    paro_node_free(root);
    ParoScenario *s = paro_scenario_load(scenario_path, (const char *const *)lines, &error);
    paro_scenario_free(s);
    g_clear_error(&error);
    g_strfreev(lines);
    return 0;
}
