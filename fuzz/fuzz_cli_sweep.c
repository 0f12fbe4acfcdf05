/* SPDX-License-Identifier: MIT */
/* Fuzz target: the arguments of `parosim sweep`, one a line, run by paro_cmd_sweep in a
 * private folder (fuzz-cli.h): a crash, a leak, undefined behaviour, a failed GLib
 * precondition or an exit code other than 0, 1 or 2 is a bug. */
#include "fuzz-cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_cli_init(0.001);
    fuzz_cli_run("sweep", paro_cmd_sweep, data, size);
    return 0;
}
