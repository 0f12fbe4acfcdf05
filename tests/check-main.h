/* SPDX-License-Identifier: MIT */
/* The main() of every Check test binary: TAP on stdout and nothing else, so meson counts
 * each Check test (CK_NORMAL output would break meson's TAP parser). */
#pragma once

#include <check.h>
#include <gsl/gsl_errno.h>
#include <stdlib.h>

#define PARO_CHECK_MAIN(suite_fn)                                                                  \
    int main(void)                                                                                 \
    {                                                                                              \
        gsl_set_error_handler_off();                                                               \
        SRunner *sr = srunner_create(suite_fn());                                                  \
        srunner_set_tap(sr, "-");                                                                  \
        srunner_run_all(sr, CK_SILENT);                                                            \
        int failed = srunner_ntests_failed(sr);                                                    \
        srunner_free(sr);                                                                          \
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;                                          \
    }

/* Path of a file under the source tree (PARO_SOURCE_ROOT is set by meson). */
static inline char *paro_test_path(const char *relative)
{
    const char *root = g_getenv("PARO_SOURCE_ROOT");
    return g_build_filename(root ? root : ".", relative, NULL);
}
