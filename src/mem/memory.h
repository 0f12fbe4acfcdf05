/* SPDX-License-Identifier: MIT */
/* Per-GPU memory ledger: allocations and frees by category, in event order, keeping the
 * peak and the breakdown at the peak, and optionally the whole timeline; and the caching
 * allocator's view of the same events (decision 94): what PyTorch's allocator hands out at
 * most (allocated) and what it holds from the driver (reserved), per stream pool. */
#pragma once

#include <glib.h>

#include "core/time.h"

G_BEGIN_DECLS

typedef enum {
    PARO_MEM_PARAMS,
    PARO_MEM_GRADS,
    PARO_MEM_OPTIMIZER,
    PARO_MEM_ACTIVATIONS,
    PARO_MEM_GATHERED,        /* parameters gathered for a layer's compute */
    PARO_MEM_BUCKETS,         /* full gradients waiting for their reduce-scatter */
    PARO_MEM_COMM_BUFFERS,    /* NCCL's per-channel connection buffers */
    PARO_MEM_WORKSPACE,       /* cuBLAS workspace; with fp8, the weights' fp8 copies */
    PARO_MEM_OVERHEAD,        /* CUDA context: the scenario's memory_overhead */
    PARO_MEM_OPTIMIZER_TEMPS, /* the optimizer step's temporaries (PyTorch's foreach AdamW) */
    PARO_MEM_N_CATEGORIES,
} ParoMemCategory;

extern const char *const paro_mem_category_names[]; /* "params", ... */

/* Where a category's bytes come from. PyTorch's caching allocator keeps its free blocks
 * cached per stream (c10/cuda/CUDACachingAllocator.cpp: a block is looked up by
 * (stream, size) in BlockPool, and a freed block goes back to its own stream's pool), so
 * memory freed by one stream's tensors serves none of another stream's: each pool holds,
 * from the driver, the most it ever needed. NCCL's buffers and the CUDA context are the
 * driver's, outside the allocator. */
typedef enum {
    PARO_MEM_POOL_COMPUTE, /* the compute stream's tensors */
    PARO_MEM_POOL_GATHER,  /* the all-gather stream's: gathered parameters (FSDP, ZeRO-3) */
    PARO_MEM_POOL_REDUCE,  /* the reduce-scatter stream's: gradient buckets, FSDP's sharded
                            * gradients */
    PARO_MEM_POOL_OUTSIDE, /* not the allocator's: NCCL's buffers, the CUDA context */
    PARO_MEM_N_POOLS,
} ParoMemPool;

extern const char *const paro_mem_pool_names[]; /* "compute", "gather", "reduce", "outside" */

typedef struct {
    ParoTime time;
    double bytes[PARO_MEM_N_CATEGORIES];
} ParoMemSample;

typedef struct _ParoMemLedger ParoMemLedger;

ParoMemLedger *paro_mem_ledger_new(gboolean keep_timeline);
void paro_mem_ledger_free(ParoMemLedger *ledger);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ParoMemLedger, paro_mem_ledger_free)

/** paro_mem_ledger_set_pool: @category's bytes come from @pool from now on (before any
 * change to it). By default gathered parameters come from the gather pool, buckets from
 * the reduce pool, NCCL's buffers and the overhead from outside, all else from compute. */
void paro_mem_ledger_set_pool(ParoMemLedger *ledger, ParoMemCategory category, ParoMemPool pool);

/** paro_mem_ledger_change: adds @delta bytes (negative frees) to @category at @time
 * (times never decrease). */
void paro_mem_ledger_change(ParoMemLedger *ledger, ParoTime time, ParoMemCategory category,
                            double delta);

/** paro_mem_ledger_peak: the largest total, and (out) the categories at that moment. */
double paro_mem_ledger_peak(const ParoMemLedger *ledger, ParoMemSample *out_at_peak);

/** paro_mem_ledger_allocated_peak: the most the allocator's pools held in tensors at once
 * (torch.cuda.max_memory_allocated: every category but the outside ones). */
double paro_mem_ledger_allocated_peak(const ParoMemLedger *ledger);

/** paro_mem_ledger_reserved_peak: what the caching allocator holds from the driver once
 * every pool has met its own peak (torch.cuda.max_memory_reserved in a steady state, no
 * block released): the sum of the pools' peaks, at least the allocated peak. */
double paro_mem_ledger_reserved_peak(const ParoMemLedger *ledger);

/** paro_mem_ledger_pool_peak: the most @pool ever held. */
double paro_mem_ledger_pool_peak(const ParoMemLedger *ledger, ParoMemPool pool);

/** paro_mem_ledger_current: bytes held now in @category. */
double paro_mem_ledger_current(const ParoMemLedger *ledger, ParoMemCategory category);

/** paro_mem_ledger_timeline: (transfer none) ParoMemSample after every change, or NULL. */
const GArray *paro_mem_ledger_timeline(const ParoMemLedger *ledger);

G_END_DECLS
