/* SPDX-License-Identifier: MIT */
/* `parosim plan`: the shortest time to train a model on a cluster. The search covers every
 * strategy, layout (tp x cp x ep x pp, uneven stages, 1F1B or interleaved, and with --lga
 * layered accumulation on modular pipelines, Lamy-Poirier 2021), micro-batch,
 * recomputation, sequence parallelism, offload, PaRO group size, collective algorithm and
 * accumulation. Each row's time to train is its step times the scaling law's steps at its
 * batch, S_min (1 + B_crit / B) (Kaplan et al. 2020), or a fixed token budget's. Bounds
 * that cannot lose the optimum prune it (plan-space.c): a memory lower bound before any
 * simulation, a compute lower bound against the best time found. */
#pragma once

#include "pipe/pipe.h"
#include "plan/scaling.h"
#include "run/run.h"

G_BEGIN_DECLS

/* One point of the space plan searches, apart from the group size, the collective
 * algorithm and the accumulation: the layout of the parallel degrees, the pipeline's
 * schedule, and what users tune for memory (recomputation, sequence parallelism,
 * offload). */
typedef struct {
    gint64 tp, cp, ep, pp;
    ParoPipeSchedule schedule; /* 1f1b unless interleaved or layered */
    gint64 virtual_stages;     /* modules per device (modular: one layer each) */
    gboolean layered;          /* layered gradient accumulation (its recomputation searched) */
    gboolean uneven;           /* pp does not divide the layers: parallelism.stage_layers */
    gboolean sequence_parallel;
    ParoRecompute recompute;
    gint64 recompute_every; /* full recomputation of every k-th layer (1: all) */
    int offload;            /* 0 none, 1 the optimizer on the CPU, 2 and the parameters */
} ParoPlanLayout;

/* What bounds a row's time to train (--explain). */
typedef enum {
    PARO_PLAN_BOUND_COMPUTE, /* its kernels: the step is within 10% of its compute */
    PARO_PLAN_BOUND_EXPOSED, /* communication the compute does not hide */
    PARO_PLAN_BOUND_BUBBLE,  /* the pipeline's idle fill and drain */
    PARO_PLAN_BOUND_MEMORY,  /* out of memory, or tight (no margin for the allocator) */
    PARO_PLAN_BOUND_LAW,     /* a batch beyond twice the critical one: steps wasted on it */
} ParoPlanBound;

extern const char *const paro_plan_bound_names[];

typedef struct {
    const ParoStrategy *strategy;
    ParoPlanLayout layout;
    gint64 group;            /* m */
    gint64 micro_batch;      /* b, sequences */
    gint64 accumulation;     /* A */
    ParoAlgorithm algorithm; /* of global collectives */
    double batch_tokens;     /* dp b A s */
    double step_s;           /* simulated */
    double compute_bound_s;  /* the step's kernels alone: a lower bound of step_s */
    double bubble_bound_s;   /* the least fill and drain of its pipeline (0 without) */
    double floor_s;          /* its step without data-parallel collectives (a bound too) */
    double steps;            /* the law's S(B), or the token budget / batch */
    double tokens;           /* steps x batch */
    double train_s;          /* steps x step_s */
    double gpu_hours;        /* n x train_s / 3600 */
    double peak_bytes;
    gboolean fits;  /* in the GPU's memory (and the host's) */
    gboolean tight; /* fits, but within the allocator's headroom (training.memory_headroom) */
    ParoPlanBound bound;
} ParoPlanRow;

typedef struct {
    double tokens;       /* token budget; 0: the scaling law's steps S(B) for each row */
    double batch_tokens; /* target global batch; 0: searched (law mode), else nearest to it */
    gboolean dp_only;    /* search tp = pp = cp = ep = 1 only */
    gboolean lga;        /* also layered accumulation with modular pipelines (one layer a module) */
    const char *const *sets; /* fixed overrides (nullable) */
    int jobs;                /* worker threads; 0: one a core */
    int rank, ranks; /* this process's share of the search (MPI): every ranks-th configuration
                      * in the order of the bounds, from the rank-th; 0 and 1 alone */
    ParoTrainingBudget budget; /* (out) the scaling law's figures for the model */
    gint64 gpus;               /* (out) all GPUs of the cluster */
    double memory_bytes;       /* (out) one GPU's memory */
    gint64 layers;             /* (out) the model's */
    double params;             /* (out) non-embedding parameters used for the law */
    gint64 shapes, simulated;  /* (out) layouts bounded, configurations simulated */
    gint64 configurations;     /* (out) of the whole search, every rank's */
    gboolean fixed_tokens;     /* (out) tokens given: steps = tokens / batch, not the law's */
    gboolean fixed_batch;      /* (out) batch_tokens given: the accumulation nearest it only */
} ParoPlanRequest;

/**
 * paro_plan_search:
 * Returns: (transfer full) GArray of ParoPlanRow, fastest training first among those that
 * fit (then the rest); NULL and a located error for bad input.
 */
GArray *paro_plan_search(const char *scenario_path, ParoPlanRequest *request, GError **error);

/* What one process of a search split over ranks found: the rows it simulated within the
 * window of its own best, and that best (the shortest time to train among its rows that
 * fit with their margin; INFINITY when none does). */
typedef struct {
    GArray *rows; /* ParoPlanRow, in no particular order */
    double best;
} ParoPlanPart;

void paro_plan_part_clear(ParoPlanPart *part);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(ParoPlanPart, paro_plan_part_clear)

/**
 * paro_plan_search_part:
 * The share of @request's search that its rank and ranks give (all of it for rank 0 of 1),
 * pruned with this share's own best: @part's rows hold every row of the whole search's
 * result that falls in the share. @request's out fields are set as paro_plan_search sets
 * them. FALSE and a located error for bad input.
 */
gboolean paro_plan_search_part(const char *scenario_path, ParoPlanRequest *request,
                               ParoPlanPart *part, GError **error);

/** paro_plan_part_merge: appends @from's rows to @into's; @into's best becomes the least. */
void paro_plan_part_merge(ParoPlanPart *into, const ParoPlanPart *from);

/**
 * paro_plan_finish:
 * The result of a search from its parts merged (or one whole part): the rows within
 * PARO_PLAN_WINDOW of @part's best, sorted as paro_plan_search returns them, each copy
 * (a strategy indifferent to the group size or the algorithm) once. (transfer full)
 */
GArray *paro_plan_finish(const ParoPlanPart *part);

/**
 * paro_plan_part_to_text:
 * @part as text that paro_plan_part_from_text reads back bit for bit (numbers in hexadecimal
 * floating point, a strategy by its index in paro_strategy_get's order), for a process of
 * the same build. (transfer full)
 */
char *paro_plan_part_to_text(const ParoPlanPart *part);

/** paro_plan_part_from_text: @text of paro_plan_part_to_text into @part (a new array of
 * rows, to clear with paro_plan_part_clear); FALSE and a G_FILE_ERROR_FAILED error that
 * names the line where the text is malformed. */
gboolean paro_plan_part_from_text(const char *text, ParoPlanPart *part, GError **error);

/**
 * paro_plan_check_work:
 * Refuses, located at the input that drives it, a search of @request on @base whose
 * estimated work exceeds paro_limit_work_seconds, or whose target batch needs an
 * accumulation beyond its limit (plan-budget.c). @request's gpus, tokens and batch_tokens
 * must be set.
 */
gboolean paro_plan_check_work(const ParoScenario *base, const ParoPlanRequest *request,
                              GError **error);

/* The relative error the planner accepts when it extrapolates a step that converges to its
 * steady state geometrically instead of reaching it (plan.c, paro_extrapolate_five): looser
 * than a run's 1e-9, since a plan ranks hundreds of configurations and the pipelines'
 * slopes reach 1e-9 only some 50 periods on. */
#define PARO_PLAN_GEOMETRIC_TOLERANCE 1e-6

/* Rows whose time to train may be within this fraction of the best are all simulated; a
 * slower configuration is simulated only where the order of the bounds reaches it, and
 * its rows are left out, so the rows printed do not depend on the threads. */
#define PARO_PLAN_WINDOW 0.05

/* In the law's mode the search tries batches up to this many critical batches: beyond,
 * the law's steps fall by 1/5 or less while the step grows with the batch, so a larger
 * batch wins only where a step's fixed cost exceeds 16 times the compute of a critical
 * batch (S(B) step(B) with step = c B + o is least at B = sqrt(o B_crit / c)). */
#define PARO_PLAN_LAW_BATCH_CAP 4.0

/** paro_plan_largest_batch: the largest global batch searched: twice a fixed target, or
 * the law's cap (PARO_PLAN_LAW_BATCH_CAP critical batches). */
double paro_plan_largest_batch(const ParoPlanRequest *rq);

/** paro_plan_layout_equal: the same layout, field by field. */
gboolean paro_plan_layout_equal(const ParoPlanLayout *a, const ParoPlanLayout *b);

/**
 * paro_plan_row_overrides:
 * The --set overrides (after @request's own) that make @row's configuration a scenario
 * `run` simulates: (transfer full) a NULL-terminated GPtrArray of strings.
 */
GPtrArray *paro_plan_row_overrides(const ParoPlanRequest *request, const ParoPlanRow *row);

/** paro_plan_accumulation: the A >= 1 whose batch n b A s is nearest @batch_tokens. */
gint64 paro_plan_accumulation(double batch_tokens, gint64 gpus, gint64 micro_batch,
                              gint64 sequence);

G_END_DECLS
