/* SPDX-License-Identifier: MIT */
/* Simulation of one global training step of a scenario under one strategy, for every layout
 * (tp x pp x dp, any pipeline schedule and accumulation order; data parallelism alone is
 * tp = pp = 1): a task graph (sched/taskgraph.h) with, for each pipeline stage's
 * representative GPU, per-layer forward and backward compute, the layer's tensor-parallel
 * collectives, parameter gathers issued ahead of use, gradient reduce-scatters in buckets,
 * point-to-point sends between stages, then the gradient sync, the optimizer and the
 * parameter sync. Each collective's time comes from simulating it alone on the cluster's
 * links (coll/cache.c); tasks running at the same time share their GPU's NVLink and NIC
 * ports; a memory ledger per stage follows the same events. */
#pragma once

#include "coll/cache.h"
#include "mem/memory.h"
#include "scenario/derived.h"

G_BEGIN_DECLS

/* A stage GPU's streams: kernels and TP collectives; DP collectives inside a group and
 * between groups; pipeline sends (one NCCL stream: they go in order); copies to and from
 * host memory over PCIe, one stream a direction (offloading, decision 82). */
enum {
    PARO_STREAM_COMPUTE = 1,
    PARO_STREAM_INTRA = 2,
    PARO_STREAM_INTER = 4,
    PARO_STREAM_P2P = 8,
    PARO_STREAM_H2D = 16,
    PARO_STREAM_D2H = 32,
};

typedef struct {
    const char *name;  /* "forward", "backward", "allgather", ... (static) */
    guint device;      /* pipeline stage (0 without pipeline parallelism) */
    guint streams;     /* PARO_STREAM_* bits; 0 for point-to-point sends */
    gint micro, layer; /* -1 when not per micro-step or per layer */
    ParoTime start, end;
} ParoTraceTask;

/* Time and traffic figures are those of the busiest stage (the most compute, which bounds
 * the step; the first such); memory figures those of the stage whose peak is highest. */
typedef struct {
    const ParoStrategy *strategy;
    ParoTime step;
    guint stages;           /* pipeline stages simulated (pp) */
    gint64 periodic_from;   /* micro-batches from which every period of pp more adds the same
                             * time and memory (an estimate from the schedule: 4 without
                             * pipeline, 3 pp with one, later with layered accumulation, until
                             * compute hides a module's once-a-step collectives) */
    gint64 simulated_micro; /* micro-batches simulated in all: A, or the fewer an
                             * extrapolation read A off (step/extrapolate.h) */
    guint busiest, fullest; /* the stages the time and the memory figures are taken on */
    ParoTime compute, comm, intra_busy, inter_busy; /* the four figures below, as integers:
                                                     * exact under extrapolation */
    double compute_s;      /* the busiest stage's kernels (layers, optimizer) */
    double comm_s;         /* its collectives and sends, each from start to end, summed */
    double intra_busy_s;   /* busy time of its intra-group stream (global ones included) */
    double inter_busy_s;   /* busy time of its inter-group stream (global ones included) */
    double exposed_comm_s; /* step - compute: what communication adds */
    double compress_s;     /* codec kernel time of its collectives and of the pipeline sends
                              it makes, inside their durations */
    double bytes_saved;    /* bytes it does not send in the step thanks to compression */
    double time_saved_s;   /* step without compression - step; < 0: it costs more than it saves */
    double samples_per_s, tokens_per_s;
    double tflops_per_gpu;  /* model FLOPs (no recomputation) per second */
    double mfu;             /* tflops_per_gpu / peak */
    double peak_bytes;      /* the most the GPU held at once: allocated + outside */
    double allocated_bytes; /* the caching allocator's tensors at their peak (decision 94) */
    double reserved_bytes;  /* what the allocator holds from the driver: its pools' peaks */
    double outside_bytes;   /* NCCL's buffers and the overhead, outside the allocator */
    ParoMemSample at_peak;
    double host_bytes;  /* host memory per node with offloading (the fullest stage's GPUs') */
    gboolean host_fits; /* host_bytes within the node's host memory */
    gboolean fits;      /* peak_bytes in GPU memory and host_bytes in host memory */
    gboolean tight;     /* fits, but peak_bytes within the allocator's headroom
                         * (paro_scenario_is_tight); fits && !tight: fits with margin */
    double guideline_s; /* the closed-form T beside it (filled by the run, run/run.c) */
    int rank;
    GArray *trace;  /* ParoTraceTask, or NULL */
    GArray *memory; /* ParoMemSample, or NULL */
} ParoStepResult;

void paro_step_result_clear(ParoStepResult *r);

/** paro_step_result_compare: rank order: fits with margin first, then tight, then out of
 * memory (decision 84); within each, step time, peak memory, name. */
int paro_step_result_compare(gconstpointer a, gconstpointer b);

typedef struct _ParoStepMemo ParoStepMemo; /* step/memo.h */

typedef struct {
    gboolean keep_trace;      /* record tasks and the memory timeline in the result */
    gboolean compress;        /* apply the scenario's compression; FALSE: its uncompressed twin */
    gint64 micro_steps;       /* micro-batches to simulate; 0: the scenario's accumulation */
    ParoStepMemo *memo;       /* (nullable) results of the same scenario at other accumulations */
    const char *memo_context; /* the scenario's name in @memo: equal only for scenarios that
                               * differ at most in training.accumulation */
    gboolean without_data_parallel; /* no data-parallel collectives: what every strategy's step
                                     * holds besides them (the planner's bound, plan-space.c) */
} ParoStepOptions;

#define PARO_STEP_OPTIONS_INIT                                                                     \
    {                                                                                              \
        FALSE, TRUE, 0                                                                             \
    }

/**
 * paro_step_result_finish:
 * Fills @r's figures that follow from its integer times, its peak and @micro_steps
 * micro-batches: compute_s, comm_s, intra_busy_s, inter_busy_s, exposed_comm_s, the
 * rates, MFU, fits and tight. The step calls it; so does an extrapolation that set those.
 */
void paro_step_result_finish(const ParoScenarioDerived *d, gint64 micro_steps, ParoStepResult *r);

/**
 * paro_step_simulate:
 * Simulates @strategy's step on @d's scenario, timing collectives on @cache. @out's
 * guideline_s, time_saved_s and rank are left 0 (the run fills them).
 */
gboolean paro_step_simulate(const ParoScenarioDerived *d, const ParoStrategy *strategy,
                            ParoCollCache *cache, const ParoStepOptions *options,
                            ParoStepResult *out, GError **error);

G_END_DECLS
