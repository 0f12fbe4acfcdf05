/* SPDX-License-Identifier: MIT */
/* Fuzz target: the arguments of `parosim collective`, one a line, run by paro_cmd_collective in a
 * private folder (fuzz-cli.h): a crash, a leak, undefined behaviour, a failed GLib
 * precondition or an exit code other than 0, 1 or 2 is a bug. */
#include "fuzz-cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_cli_init(0.01);
    fuzz_cli_run("collective", paro_cmd_collective, data, size);
    return 0;
}
