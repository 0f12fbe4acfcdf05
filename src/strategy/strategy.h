/* SPDX-License-Identifier: MIT */
/* Data-parallel sharding strategies in PaRO's notation: a triple p-g-os, each state kept
 * whole (N), split inside a group of m GPUs (I) or split over all n GPUs (G). All 27
 * triples, plus the two entries that are not triples: ZeRO++ (hpZ) and FSDP's
 * hybrid-shard-zero2 as PyTorch runs it. The semantics (memory, and which collectives
 * run when) follow docs/strategies.md and are shared by every part of parosim. */
#pragma once

#include <glib.h>

#include "coll/collective.h"

G_BEGIN_DECLS

typedef enum { PARO_PART_N = 0, PARO_PART_I = 1, PARO_PART_G = 2 } ParoPartition;

typedef enum {
    PARO_STRATEGY_TRIPLE,
    PARO_STRATEGY_ZERO_PP,  /* GGG + a secondary intra-group copy of the parameters */
    PARO_STRATEGY_FSDP_HSZ, /* NII + an intra-group parameter AllGather every forward */
} ParoStrategyKind;

typedef struct {
    const char *name; /* "NIG", "zero++", "fsdp-hybrid-zero2" */
    ParoStrategyKind kind;
    ParoPartition p, g, os; /* for non-triples: the triple it builds on */
    const char *aliases[3]; /* NULL-terminated */
} ParoStrategy;

/* When a collective runs within a global step. */
typedef enum {
    PARO_PHASE_FORWARD,    /* parameter gathering, every micro-step */
    PARO_PHASE_BACKWARD,   /* parameter gathering, every micro-step */
    PARO_PHASE_GRADIENT,   /* gradient reduction, every micro-step */
    PARO_PHASE_SYNC_GRAD,  /* once per step, before the optimizer */
    PARO_PHASE_SYNC_PARAM, /* once per step, after the optimizer */
} ParoPhase;

extern const char *const paro_phase_names[];

typedef struct {
    ParoPhase phase;
    ParoCollKind op;
    ParoScope scope;
    double size_bytes; /* S: the whole array (nccl-tests convention) */
} ParoCollCall;

/* What the collectives and memory of a strategy depend on. */
typedef struct {
    gint64 n, m;        /* GPUs, group size */
    double params;      /* Psi */
    double trainable;   /* Psi' */
    double param_bytes; /* b_p */
    double grad_bytes;  /* b_g */
    double optim_bytes; /* K */
} ParoStateSizes;

typedef struct {
    double params, grads, optimizer; /* bytes per GPU, steady state */
} ParoStateMemory;

/** paro_strategy_n_all: 29 (27 triples, zero++, fsdp-hybrid-zero2). */
guint paro_strategy_n_all(void);

/** paro_strategy_get: (transfer none) the i-th entry; triples first, p-major N<I<G. */
const ParoStrategy *paro_strategy_get(guint i);

/** paro_strategy_lookup: (transfer none) (nullable) by name or alias, case-insensitive
 * for triples ("nig" finds NIG). */
const ParoStrategy *paro_strategy_lookup(const char *name);

/**
 * paro_strategy_list_parse:
 * @text: (nullable): comma-separated names as --strategies takes them; NULL or "all":
 *   every strategy
 * Returns: (transfer container) (nullable): the strategies (ParoStrategy pointers), each
 * once, in the order named; NULL and a G_OPTION_ERROR_BAD_VALUE for an unknown name or
 * none.
 */
GPtrArray *paro_strategy_list_parse(const char *text, GError **error);

/** paro_strategy_is_effective: the PaRO paper's rule: os at least as finely split as
 * p and g (N < I < G); keeps 14 of the 27 triples. Non-triples: their base triple's. */
gboolean paro_strategy_is_effective(const ParoStrategy *s);

/** paro_strategy_gathers: whether the strategy gathers each layer's parameters before using
 * them (parameters partitioned, or FSDP's hybrid ZeRO-2 shard). */
gboolean paro_strategy_gathers(const ParoStrategy *s);

/** paro_strategy_divisor: d(N) = 1, d(I) = m, d(G) = n. */
double paro_strategy_divisor(ParoPartition part, gint64 n, gint64 m);

/** paro_strategy_memory: model-state bytes per GPU:
 * b_p*Psi/d(p) + b_g*Psi'/d(g) + K*Psi'/d(os) (zero++: parameters b_p*Psi/n + b_p*Psi/m). */
ParoStateMemory paro_strategy_memory(const ParoStrategy *s, const ParoStateSizes *z);

/**
 * paro_strategy_collectives:
 * Appends to @calls (a GArray of ParoCollCall) the collectives of one global step: the
 * per-micro-step ones once (the caller multiplies by A) and the per-step syncs once.
 */
void paro_strategy_collectives(const ParoStrategy *s, const ParoStateSizes *z, GArray *calls);

/** paro_phase_is_per_micro_step: TRUE for FORWARD, BACKWARD, GRADIENT. */
gboolean paro_phase_is_per_micro_step(ParoPhase phase);

G_END_DECLS
