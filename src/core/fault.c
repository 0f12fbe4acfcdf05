/* SPDX-License-Identifier: MIT */
#include "core/fault.h"

static ParoFaultHook fault_hook;

void paro_fault_set_hook(ParoFaultHook hook)
{
    fault_hook = hook;
}

void paro_fault_point(const char *site)
{
    if (fault_hook != NULL)
        fault_hook(site);
}
