/* SPDX-License-Identifier: MIT */
/* The ledger. A negative balance is a bookkeeping error of the caller and asserts. */
#include "mem/memory.h"

const char *const paro_mem_category_names[] = {"params",   "grads",   "optimizer",    "activations",
                                               "gathered", "buckets", "comm_buffers", "workspace",
                                               "overhead", NULL};

struct _ParoMemLedger {
    ParoMemSample now;
    ParoMemSample peak;
    double peak_total;
    GArray *timeline; /* ParoMemSample, or NULL */
};

ParoMemLedger *paro_mem_ledger_new(gboolean keep_timeline)
{
    ParoMemLedger *l = g_new0(ParoMemLedger, 1);
    if (keep_timeline)
        l->timeline = g_array_new(FALSE, FALSE, sizeof(ParoMemSample));
    return l;
}

void paro_mem_ledger_free(ParoMemLedger *l)
{
    if (l == NULL)
        return;
    if (l->timeline)
        g_array_unref(l->timeline);
    g_free(l);
}

void paro_mem_ledger_change(ParoMemLedger *l, ParoTime time, ParoMemCategory category, double delta)
{
    g_return_if_fail(category < PARO_MEM_N_CATEGORIES && time >= l->now.time);
    l->now.time = time;
    l->now.bytes[category] += delta;
    /* Sums of floating-point sizes may leave a few bytes of dust when freed. */
    g_assert(l->now.bytes[category] > -1.0);
    if (l->now.bytes[category] < 0)
        l->now.bytes[category] = 0;
    double total = 0;
    for (int c = 0; c < PARO_MEM_N_CATEGORIES; c++)
        total += l->now.bytes[c];
    if (total > l->peak_total) {
        l->peak_total = total;
        l->peak = l->now;
    }
    if (l->timeline)
        g_array_append_val(l->timeline, l->now);
}

double paro_mem_ledger_peak(const ParoMemLedger *l, ParoMemSample *out_at_peak)
{
    if (out_at_peak)
        *out_at_peak = l->peak;
    return l->peak_total;
}

double paro_mem_ledger_current(const ParoMemLedger *l, ParoMemCategory category)
{
    return l->now.bytes[category];
}

const GArray *paro_mem_ledger_timeline(const ParoMemLedger *l)
{
    return l->timeline;
}
