/* SPDX-License-Identifier: MIT */
/* Named moments where a test may inject a fault. The library calls paro_fault_point at
 * moments whose handling cannot be reached by timing without guessing (a signal between
 * a sweep's last point and its output's rename); the CLI built for the tests
 * (tests/parosim-faults, PARO_FAULT_INJECTION) installs a hook that raises a signal there,
 * and the shipped parosim installs none, so these calls cost a load and a branch. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Called with the moment's name: "sweep-point" (a sweep's point is done), "write-open"
 * (an output's temporary file was created, nothing written), "write-temp" (written and
 * closed, not yet renamed), "write-done" (renamed onto the output, or written through a
 * device). */
typedef void (*ParoFaultHook)(const char *site);

/** paro_fault_set_hook: installs @hook (NULL: none) for this process. */
void paro_fault_set_hook(ParoFaultHook hook);

/** paro_fault_point: calls the hook, if one is installed, with @site. */
void paro_fault_point(const char *site);

G_END_DECLS
