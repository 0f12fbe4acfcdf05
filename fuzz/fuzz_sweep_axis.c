/* SPDX-License-Identifier: MIT */
/* Fuzz target: `--vary` axes. Each input line is one argument for paro_sweep_axis_parse;
 * the axes parsed go to paro_sweep_n_points (the product and its overflow guard). */
#include "fuzz-common.h"
#include "sweep/sweep.h"

#define MAX_AXES 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_init();
    char **lines = fuzz_lines(data, size, MAX_AXES);
    GPtrArray *axes = g_ptr_array_new_with_free_func((GDestroyNotify)paro_sweep_axis_free);
    for (int i = 0; lines[i]; i++) {
        GError *error = NULL;
        ParoSweepAxis *a = paro_sweep_axis_parse(lines[i], i + 1, &error);
        if (a != NULL)
            g_ptr_array_add(axes, a);
        g_clear_error(&error);
    }
    (void)paro_sweep_n_points(axes);
    g_ptr_array_unref(axes);
    g_strfreev(lines);
    return 0;
}
