/* SPDX-License-Identifier: MIT */
/* Simulation of one global training step of a scenario under one strategy, for a
 * representative GPU (every GPU of a data-parallel group does the same): a task graph of
 * per-layer forward and backward compute, parameter gathers issued ahead of use,
 * gradient reduce-scatters in buckets, A micro-steps, then the gradient sync, the
 * optimizer and the parameter sync, on a compute stream and intra- and inter-group
 * communication streams; each collective's duration comes from simulating it on the
 * cluster's links (coll/simulate.c), and a memory ledger follows the same events. */
#pragma once

#include "coll/cache.h"
#include "mem/memory.h"
#include "scenario/derived.h"

G_BEGIN_DECLS

enum { PARO_STREAM_COMPUTE = 1, PARO_STREAM_INTRA = 2, PARO_STREAM_INTER = 4 };

typedef struct {
    const char *name;  /* "forward", "backward", "allgather", ... (static) */
    guint streams;     /* PARO_STREAM_* bits */
    gint micro, layer; /* -1 when not per micro-step or per layer */
    ParoTime start, end;
} ParoTraceTask;

typedef struct {
    const ParoStrategy *strategy;
    ParoTime step;
    double compute_s;      /* busy time of the compute stream */
    double comm_s;         /* busy time of communication, both streams, not overlapped */
    double intra_busy_s;   /* busy time of the intra-group stream (global ones included) */
    double inter_busy_s;   /* busy time of the inter-group stream (global ones included) */
    double exposed_comm_s; /* step - compute: what communication adds */
    double compress_s;     /* codec kernel time of the collectives (and, with pp, of the
                              pipeline sends, a device's share), inside their durations */
    double bytes_saved;    /* bytes this GPU does not send in the step thanks to compression */
    double time_saved_s;   /* step without compression - step; < 0: it costs more than it saves */
    double samples_per_s, tokens_per_s;
    double tflops_per_gpu; /* model FLOPs (no recomputation) per second */
    double mfu;            /* tflops_per_gpu / peak */
    double peak_bytes;
    ParoMemSample at_peak;
    gboolean fits;
    double guideline_s; /* the closed-form T beside it (filled by the run, run/run.c) */
    int rank;
    GArray *trace;  /* ParoTraceTask, or NULL */
    GArray *memory; /* ParoMemSample, or NULL */
} ParoStepResult;

void paro_step_result_clear(ParoStepResult *r);

/** paro_step_result_compare: rank order: fits first, then step time, peak memory, name. */
int paro_step_result_compare(gconstpointer a, gconstpointer b);

typedef struct {
    gboolean keep_trace; /* record tasks and the memory timeline in the result */
    gboolean compress;   /* apply the scenario's compression; FALSE: its uncompressed twin */
} ParoStepOptions;

#define PARO_STEP_OPTIONS_INIT                                                                     \
    {                                                                                              \
        FALSE, TRUE                                                                                \
    }

/**
 * paro_step_simulate:
 * Simulates @strategy's step on @d's scenario, timing collectives on @cache. @out's
 * guideline_s, time_saved_s and rank are left 0 (the run fills them).
 */
gboolean paro_step_simulate(const ParoScenarioDerived *d, const ParoStrategy *strategy,
                            ParoCollCache *cache, const ParoStepOptions *options,
                            ParoStepResult *out, GError **error);

G_END_DECLS
