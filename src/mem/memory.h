/* SPDX-License-Identifier: MIT */
/* Per-GPU memory ledger: allocations and frees by category, in event order, keeping the
 * peak and the breakdown at the peak, and optionally the whole timeline. */
#pragma once

#include <glib.h>

#include "core/time.h"

G_BEGIN_DECLS

typedef enum {
    PARO_MEM_PARAMS,
    PARO_MEM_GRADS,
    PARO_MEM_OPTIMIZER,
    PARO_MEM_ACTIVATIONS,
    PARO_MEM_GATHERED,     /* parameters gathered for a layer's compute */
    PARO_MEM_BUCKETS,      /* full gradients waiting for their reduce-scatter */
    PARO_MEM_COMM_BUFFERS, /* NCCL's per-channel connection buffers */
    PARO_MEM_WORKSPACE,    /* cuBLAS workspace; with fp8, the weights' fp8 copies */
    PARO_MEM_OVERHEAD,     /* CUDA context, allocator: the scenario's memory_overhead */
    PARO_MEM_N_CATEGORIES,
} ParoMemCategory;

extern const char *const paro_mem_category_names[]; /* "params", ... */

typedef struct {
    ParoTime time;
    double bytes[PARO_MEM_N_CATEGORIES];
} ParoMemSample;

typedef struct _ParoMemLedger ParoMemLedger;

ParoMemLedger *paro_mem_ledger_new(gboolean keep_timeline);
void paro_mem_ledger_free(ParoMemLedger *ledger);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ParoMemLedger, paro_mem_ledger_free)

/** paro_mem_ledger_change: adds @delta bytes (negative frees) to @category at @time
 * (times never decrease). */
void paro_mem_ledger_change(ParoMemLedger *ledger, ParoTime time, ParoMemCategory category,
                            double delta);

/** paro_mem_ledger_peak: the largest total, and (out) the categories at that moment. */
double paro_mem_ledger_peak(const ParoMemLedger *ledger, ParoMemSample *out_at_peak);

/** paro_mem_ledger_current: bytes held now in @category. */
double paro_mem_ledger_current(const ParoMemLedger *ledger, ParoMemCategory category);

/** paro_mem_ledger_timeline: (transfer none) ParoMemSample after every change, or NULL. */
const GArray *paro_mem_ledger_timeline(const ParoMemLedger *ledger);

G_END_DECLS
