/* SPDX-License-Identifier: MIT */
/* The bounds of parosim's inputs, in one place. Every count that sizes an allocation or a
 * loop, every time that enters the picosecond clock and every file read or written is
 * checked against one of these named limits where it enters (a YAML field, a command-line
 * option), before anything is allocated, so that a hostile value is a located error and
 * never a crash, a hang or a silently wrong answer. Each limit says why it has its value
 * (limits.c); the README's Robustness section lists them. The work a simulation will take
 * is bounded separately, from estimates (scenario/workload.h, coll/budget.h). YAML fields
 * name their limit in their ParoField (yaml/schema.h), which locates the error. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* A bound on one kind of input value: @min <= value <= @max (doubles hold every count,
 * since counts are below 2^53). */
typedef struct {
    const char *name; /* "layers": what the message calls the value */
    double min, max;
    const char *unit; /* "" for counts, else the unit the bounds are printed in ("s") */
    const char *why;  /* one clause: why this value */
} ParoLimit;

/* Counts of the model and the training step. */
extern const ParoLimit paro_limit_layers;       /* transformer layers */
extern const ParoLimit paro_limit_model_dim;    /* hidden, ffn, vocab, heads, head_dim... */
extern const ParoLimit paro_limit_parameters;   /* a model's parameter count */
extern const ParoLimit paro_limit_accumulation; /* micro-steps per global step */
extern const ParoLimit paro_limit_micro_batch;  /* sequences per micro-step */
extern const ParoLimit paro_limit_sequence;     /* tokens per sequence */
extern const ParoLimit paro_limit_prefetch;     /* layers gathered ahead */
extern const ParoLimit paro_limit_virtual;      /* model chunks per pipeline stage */
extern const ParoLimit paro_limit_lora_rank;
extern const ParoLimit paro_limit_moe_factor; /* an expert's load over its even share */

/* The cluster and its collectives. */
extern const ParoLimit paro_limit_nodes;
extern const ParoLimit paro_limit_gpus_per_node;
extern const ParoLimit paro_limit_gpus;       /* a count of GPUs: a group, a degree */
extern const ParoLimit paro_limit_nics;       /* NICs per node */
extern const ParoLimit paro_limit_channels;   /* rings per ring phase */
extern const ParoLimit paro_limit_sms;        /* streaming multiprocessors of a GPU */
extern const ParoLimit paro_limit_chunks;     /* ho-ring chunks, tree and broadcast pieces */
extern const ParoLimit paro_limit_bytes;      /* any size: memory, overhead, bucket, message */
extern const ParoLimit paro_limit_coll_sizes; /* sizes of one `collective` sweep */
extern const ParoLimit paro_limit_bandwidth;  /* any bandwidth: links, HBM, codecs */
extern const ParoLimit paro_limit_flop_rate;  /* peak or measured FLOP/s */

/* Times that enter the picosecond clock (about 106 days of range). */
extern const ParoLimit paro_limit_latency;  /* per hop, per step, per message */
extern const ParoLimit paro_limit_duration; /* a task: a forward, a backward */

/* Measurements read from logs and the figures recorded from them. */
extern const ParoLimit paro_limit_measured_time;  /* a time a log reports (nccl-tests, harness) */
extern const ParoLimit paro_limit_probability;    /* a dropout rate */
extern const ParoLimit paro_limit_relative_error; /* |predicted - measured| / measured */

/* The command line and files. */
extern const ParoLimit paro_limit_sweep_points;
extern const ParoLimit paro_limit_jobs;
extern const ParoLimit paro_limit_tokens;      /* plan: token budget and batch */
extern const ParoLimit paro_limit_input_bytes; /* a YAML or JSON file */
extern const ParoLimit paro_limit_table_bytes; /* a CSV/TSV table or a measurement log */
extern const ParoLimit paro_limit_trace_bytes; /* a --trace file, estimated before the run */

/* The memory of one simulation, and the links of the network graph it builds. */
extern const ParoLimit paro_limit_memory;
extern const ParoLimit paro_limit_links;

/* The work one command may start: what takes about 10 s on a 2-core machine of 2026. */
extern const ParoLimit paro_limit_work_seconds;
extern const ParoLimit paro_limit_plan_seconds; /* a plan's whole search */

/** paro_limit_check: TRUE when @value lies within @limit. */
gboolean paro_limit_check(const ParoLimit *limit, double value);

/**
 * paro_limit_describe:
 * Returns: (transfer full) the message for @value outside @limit, without a location:
 * "'layers' is 2,147,483,648, above the limit of 4,096: <why>". @what names the input (a
 * key, an option); NULL uses the limit's name. @written (nullable) is the value as the user
 * wrote it ("3000 h"), shown beside the value in the limit's unit.
 */
char *paro_limit_describe(const ParoLimit *limit, const char *what, double value,
                          const char *written);

/**
 * paro_limit_check_option:
 * Checks the value of a command-line option; otherwise sets a PARO_CONFIG_ERROR_RANGE whose
 * message starts with @option ("--channels: ...") and returns FALSE.
 */
gboolean paro_limit_check_option(const ParoLimit *limit, const char *option, double value,
                                 GError **error);

/**
 * paro_limit_set_work_scale:
 * Multiplies paro_limit_work_seconds by @scale for this process (1 by default): the fuzz
 * targets use a small scale so that no input runs longer than their per-input timeout.
 */
void paro_limit_set_work_scale(double scale);

/** paro_limit_work_budget_s: paro_limit_work_seconds.max times the work scale. */
double paro_limit_work_budget_s(void);

/** paro_limit_plan_budget_s: paro_limit_plan_seconds.max times the work scale. */
double paro_limit_plan_budget_s(void);

/** paro_limit_sweep_points_max: paro_limit_sweep_points.max times the work scale (at least
 * one point): a sweep's points are its work, each a run. */
double paro_limit_sweep_points_max(void);

/** paro_format_count: "1,048,576" for counts below 1e15, else "%.3g" (transfer full). */
char *paro_format_count(double value);

G_END_DECLS
