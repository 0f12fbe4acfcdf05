/* SPDX-License-Identifier: MIT */
/* The ledger. A negative balance is a bookkeeping error of the caller and asserts. */
#include "mem/memory.h"

#include <string.h>

const char *const paro_mem_category_names[] = {
    "params",       "grads",     "optimizer", "activations",     "gathered", "buckets",
    "comm_buffers", "workspace", "overhead",  "optimizer_temps", NULL};
const char *const paro_mem_pool_names[] = {"compute", "gather", "reduce", "outside", NULL};

static const ParoMemPool default_pool[PARO_MEM_N_CATEGORIES] = {
    [PARO_MEM_GATHERED] = PARO_MEM_POOL_GATHER,
    [PARO_MEM_BUCKETS] = PARO_MEM_POOL_REDUCE,
    [PARO_MEM_COMM_BUFFERS] = PARO_MEM_POOL_OUTSIDE,
    [PARO_MEM_OVERHEAD] = PARO_MEM_POOL_OUTSIDE,
};

struct _ParoMemLedger {
    ParoMemSample now;
    ParoMemSample peak;
    double peak_total;
    ParoMemPool pool[PARO_MEM_N_CATEGORIES];
    double pool_peak[PARO_MEM_N_POOLS];
    double allocated_peak;
    GArray *timeline; /* ParoMemSample, or NULL */
};

ParoMemLedger *paro_mem_ledger_new(gboolean keep_timeline)
{
    ParoMemLedger *l = g_new0(ParoMemLedger, 1);
    memcpy(l->pool, default_pool, sizeof l->pool);
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

void paro_mem_ledger_set_pool(ParoMemLedger *l, ParoMemCategory category, ParoMemPool pool)
{
    g_return_if_fail(category < PARO_MEM_N_CATEGORIES && pool < PARO_MEM_N_POOLS);
    g_return_if_fail(l->now.bytes[category] == 0);
    l->pool[category] = pool;
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
    double total = 0, pool_now[PARO_MEM_N_POOLS] = {0};
    for (int c = 0; c < PARO_MEM_N_CATEGORIES; c++) {
        total += l->now.bytes[c];
        pool_now[l->pool[c]] += l->now.bytes[c];
    }
    for (int p = 0; p < PARO_MEM_N_POOLS; p++)
        l->pool_peak[p] = MAX(l->pool_peak[p], pool_now[p]);
    l->allocated_peak = MAX(l->allocated_peak, total - pool_now[PARO_MEM_POOL_OUTSIDE]);
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

double paro_mem_ledger_allocated_peak(const ParoMemLedger *l)
{
    return l->allocated_peak;
}

double paro_mem_ledger_reserved_peak(const ParoMemLedger *l)
{
    double reserved = 0;
    for (int p = 0; p < PARO_MEM_N_POOLS; p++)
        if (p != PARO_MEM_POOL_OUTSIDE)
            reserved += l->pool_peak[p];
    return reserved; /* at least the allocated peak: a sum of peaks is at least the peak of the sum
                      */
}

double paro_mem_ledger_pool_peak(const ParoMemLedger *l, ParoMemPool pool)
{
    g_return_val_if_fail(pool < PARO_MEM_N_POOLS, 0);
    return l->pool_peak[pool];
}

double paro_mem_ledger_current(const ParoMemLedger *l, ParoMemCategory category)
{
    return l->now.bytes[category];
}

const GArray *paro_mem_ledger_timeline(const ParoMemLedger *l)
{
    return l->timeline;
}
