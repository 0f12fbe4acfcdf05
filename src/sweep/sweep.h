/* SPDX-License-Identifier: MIT */
/* What-if sweeps: axes of values for scenario paths (`--vary PATH=V1,V2` or ranges
 * `A..B*F`, `A..B+S`), their cartesian product (first axis slowest), and the parallel run
 * of `parosim run` at every point, with results kept in point order so a parallel sweep
 * prints the same bytes as a serial one. */
#pragma once

#include "run/run.h"

G_BEGIN_DECLS

typedef struct {
    char *label;           /* "--vary[1]" */
    char *arg;             /* the whole argument */
    char *path;            /* dotted path */
    GPtrArray *values;     /* char*, as written */
    GArray *value_columns; /* int: 1-based column of each value in @arg */
    gboolean zipped;       /* `--zip`: varied together with the axis before it, value for
                            * value (same count), not crossed with it */
} ParoSweepAxis;

void paro_sweep_axis_free(ParoSweepAxis *axis);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ParoSweepAxis, paro_sweep_axis_free)

/**
 * paro_sweep_axis_parse:
 * @arg: "training.accumulation=1,2,4", "topology.nodes=2..64*2", "training.efficiency=0.3..0.6+0.1"
 * Errors: PARO_CONFIG_ERROR_SYNTAX or _RANGE located in @arg (label "--vary[i]").
 */
ParoSweepAxis *paro_sweep_axis_parse(const char *arg, int index, GError **error);

/** paro_sweep_n_points: the product of the lengths of the axes not zipped to the one before
 * (0 if it overflows 1e9). */
guint64 paro_sweep_n_points(GPtrArray *axes);

typedef struct {
    guint64 point;
    GPtrArray *values; /* char*: this point's value of each axis (borrowed) */
    GArray *results;   /* ParoStepResult, in rank order; NULL once rendered */
    ParoRun *run;      /* the point's scenario and what was derived from it; NULL once
                        * rendered */
    char *text;        /* what ParoSweepOptions.render made of it, or NULL */
} ParoSweepPoint;

/* Renders a finished point (in its worker thread): (transfer full) its text. */
typedef char *(*ParoSweepRender)(const ParoSweepPoint *point, gpointer user_data);

typedef void (*ParoSweepProgress)(guint64 done, guint64 total, gpointer user_data);

#include <signal.h>

typedef struct {
    int jobs;              /* worker threads (>= 1) */
    guint64 rank, n_ranks; /* run only the points with point % n_ranks == rank (one MPI
                            * rank's share); 0 and 1 for all of them */
    const volatile sig_atomic_t *cancel; /* nullable: once non-zero, no further point starts
                                          * (points already running finish) */
    ParoSweepProgress progress;
    gpointer progress_data;
    gboolean no_extrapolate; /* simulate every micro-batch (ParoRunOptions.extrapolate) */
    ParoSweepRender render;  /* nullable: each point is rendered by its worker as it
                              * finishes, then only its text is kept: a sweep's memory is
                              * its output's, and the rendering runs on every core */
    gpointer render_data;
} ParoSweepOptions;

/**
 * paro_sweep_run:
 * @sets: fixed overrides (nullable); @axes: ParoSweepAxis*; @strategies: ParoStrategy*
 * @jobs: worker threads (>= 1)
 * Returns: (transfer full) (nullable) GPtrArray of ParoSweepPoint*, in point order. Every
 * point's scenario is checked before any is simulated, so a bad value fails at once with
 * its location in the --vary argument.
 */
GPtrArray *paro_sweep_run(const char *scenario_path, const char *const *sets, GPtrArray *axes,
                          GPtrArray *strategies, int jobs, ParoSweepProgress progress,
                          gpointer progress_data, GError **error);

/**
 * paro_sweep_run_with: paro_sweep_run with a share of the points and cancellation. The
 * array holds every point's slot; those not run (another rank's, or not started before
 * @options->cancel was set) are NULL. @n_done: (out) (optional) the points run.
 */
GPtrArray *paro_sweep_run_with(const char *scenario_path, const char *const *sets, GPtrArray *axes,
                               GPtrArray *strategies, const ParoSweepOptions *options,
                               guint64 *n_done, GError **error);

G_END_DECLS
