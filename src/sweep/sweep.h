/* SPDX-License-Identifier: MIT */
/* What-if sweeps: axes of values for scenario paths (`--vary PATH=V1,V2` or ranges
 * `A..B*F`, `A..B+S`), their cartesian product (first axis slowest), and the parallel run
 * of `parosim run` at every point, with results kept in point order so a parallel sweep
 * prints the same bytes as a serial one. */
#pragma once

#include "step/step.h"

G_BEGIN_DECLS

typedef struct {
    char *label;    /* "--vary[1]" */
    char *arg;      /* the whole argument */
    char *path;     /* dotted path */
    GPtrArray *values;   /* char*, as written */
    GArray *value_columns; /* int: 1-based column of each value in @arg */
} ParoSweepAxis;

void paro_sweep_axis_free(ParoSweepAxis *axis);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ParoSweepAxis, paro_sweep_axis_free)

/**
 * paro_sweep_axis_parse:
 * @arg: "training.accumulation=1,2,4", "topology.nodes=2..64*2", "training.efficiency=0.3..0.6+0.1"
 * Errors: PARO_CONFIG_ERROR_SYNTAX or _RANGE located in @arg (label "--vary[i]").
 */
ParoSweepAxis *paro_sweep_axis_parse(const char *arg, int index, GError **error);

/** paro_sweep_n_points: the product of the axes' lengths (0 if it overflows 1e9). */
guint64 paro_sweep_n_points(GPtrArray *axes);

typedef struct {
    guint64 point;
    GPtrArray *values;     /* char*: this point's value of each axis (borrowed) */
    GArray *results;       /* ParoStepResult, in rank order */
    ParoGuideline *guideline;
    ParoScenario *scenario;
} ParoSweepPoint;

typedef void (*ParoSweepProgress)(guint64 done, guint64 total, gpointer user_data);

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

G_END_DECLS
