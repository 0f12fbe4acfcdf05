/* SPDX-License-Identifier: MIT */
/* Fuzz target: the measurement-log reader of `parosim calibrate` (nccl-tests and
 * paro-harness logs, src/calib/calib-log.c), then the fitting and the calibration YAML it
 * writes, as `parosim calibrate` runs them on a log that parsed. */
#include "calib/calib-fit.h"
#include "calib/calib-log.h"
#include "fuzz-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_init();
    /* the parser takes C text: stop at a NUL, as reading a file of text would */
    g_autofree char *text = g_strndup((const char *)data, size);
    GError *error = NULL;
    ParoCalibLog *log = paro_calib_log_parse(text, "fuzz.log", &error);
    g_clear_error(&error);
    if (log == NULL)
        return 0;
    GPtrArray *logs = g_ptr_array_new_with_free_func((GDestroyNotify)paro_calib_log_free);
    g_ptr_array_add(logs, log);
    ParoCalibFit *fit = paro_calib_fit_logs(logs, "bf16", &error);
    g_clear_error(&error);
    if (fit != NULL) {
        g_free(paro_calib_fit_to_yaml(fit));
        paro_calib_fit_free(fit);
    }
    g_ptr_array_unref(logs);
    return 0;
}
