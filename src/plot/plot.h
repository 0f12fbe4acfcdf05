/* SPDX-License-Identifier: MIT */
/* Plots: each kind is a gnuplot script under plots/ that reads one of parosim's outputs
 * (run, sweep or plan CSV, trace TSV, collective CSV, validate CSV). This module checks the
 * input, derives what a script cannot compute itself (the best-strategy map's winners,
 * each strategy's best plan per cluster size, the names to draw), and runs gnuplot into a temporary
 * file renamed over the output only when gnuplot succeeded, so a failed plot leaves nothing
 * half-written. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
    PARO_PLOT_STRATEGIES,
    PARO_PLOT_BEST_MAP,
    PARO_PLOT_COLLECTIVE_SCALING,
    PARO_PLOT_THROUGHPUT_SCALING,
    PARO_PLOT_PLAN_SCALING,
    PARO_PLOT_MEMORY_TIMELINE,
    PARO_PLOT_GANTT,
    PARO_PLOT_VALIDATE,
    PARO_PLOT_N_KINDS
} ParoPlotKind;

typedef struct {
    const char *name;   /* "best-map" */
    const char *script; /* "best-map.gp" */
    const char *input;  /* what INPUT must be */
    const char *summary;
} ParoPlotKindInfo;

extern const ParoPlotKindInfo paro_plot_kinds[PARO_PLOT_N_KINDS];

/** paro_plot_kind_from_name: the kind called @name, or -1. */
int paro_plot_kind_from_name(const char *name);

typedef struct {
    ParoPlotKind kind;
    const char *input;
    const char *output;          /* .png (pngcairo) or .svg */
    const char *title;           /* nullable */
    const char *strategy;        /* memory-timeline, gantt: nullable = the first in the trace */
    const char *strategies;      /* throughput-scaling, plan-scaling: comma list, nullable =
                                  * all in the input */
    const char *x_axis, *y_axis; /* best-map: varied paths, nullable = the sweep's two */
    const char *metric;          /* nullable: the script's default */
    double capacity_bytes;       /* memory-timeline: GPU memory line; 0 = none */
    double reserved_bytes;       /* memory-timeline: what the GPU holds with the caching
                                  * allocator's reserve (decision 94); 0 = none */
    int width, height;           /* pixels; 0 = the script's default */
    const char *data_output;     /* nullable: also keep the derived data file here */
    const char *scripts_dir;     /* nullable: see paro_plot_scripts_dir() */
    gboolean hover;              /* .svg: gnuplot's mousing script inline, and the scripts'
                                  * hover texts (the HTML report) */
} ParoPlotRequest;

/**
 * paro_plot_scripts_dir:
 * @explicit: (nullable): a folder given by the user
 * Returns: (transfer full): @explicit, else $PAROSIM_PLOTS_DIR, else the source tree's
 * plots/ (a build run in place), else the installed copy; NULL and G_FILE_ERROR_NOENT
 * when none holds the scripts.
 */
char *paro_plot_scripts_dir(const char *explicit, GError **error);

/**
 * paro_plot_prepare:
 * Checks the input against the kind and appends gnuplot variable assignments
 * ("name='value'") to @vars; derived data goes to @data_path when the kind needs it.
 * Errors: located PARO_CONFIG_ERROR for a malformed input or a missing column.
 */
gboolean paro_plot_prepare(const ParoPlotRequest *request, const char *data_path, GPtrArray *vars,
                           GError **error);

/**
 * paro_plot_render: prepare, then run gnuplot (found in PATH, or $PAROSIM_GNUPLOT).
 * Errors: G_SPAWN_ERROR_NOENT when gnuplot is missing; G_FILE_ERROR_INVAL for an output
 * not ending in .png or .svg; G_SPAWN_ERROR with gnuplot's
 * messages when it fails.
 */
gboolean paro_plot_render(const ParoPlotRequest *request, GError **error);

/**
 * paro_plot_abort:
 * Undoes the render in progress, if any: kills gnuplot and removes the temporary folder
 * and its files. Async-signal-safe: the CLI calls it from its SIGINT/SIGTERM handler before
 * dying of the signal, so that an interrupted plot leaves nothing behind.
 */
void paro_plot_abort(void);

/* Derivations, exposed for tests. */

/** paro_plot_best_map: writes the best-map TSV (x_index y_index winner_index margin
 * x_value y_value winner) of a sweep CSV; sets @winners (space-separated, index order)
 * and the axis names. */
gboolean paro_plot_best_map(const char *sweep_csv, const char *x_axis, const char *y_axis,
                            GString *tsv, char **winners, char **x_name, char **y_name,
                            GError **error);

/* plan's window (PARO_PLAN_WINDOW in plan/plan.h, which the plot module does not include;
 * tests/test_plot.c checks they agree): plan keeps every configuration whose lower bound is
 * within it of the best. */
#define PARO_PLOT_PLAN_WINDOW 0.05

/**
 * paro_plot_plan_scaling:
 * @plan_csv: the CSV of `parosim plan --format csv`, or several concatenated (each with
 *   its header: a line equal to the first header is skipped)
 * @strategies: (nullable): names or aliases to draw, comma-separated; NULL = every
 *   strategy with a row that fits with the memory headroom, in order of first appearance
 * @tsv: receives the plan-scaling table: "# gpus strategy_index strategy days gpu_hours
 *   exact layout", one block (two blank lines apart) per drawn strategy, its best row (the
 *   least time_train among those that fit and are not tight; the first on a tie) at each
 *   GPU count in increasing order, then a last block of the best row at each GPU count
 *   over every strategy (strategy_index -1 when that strategy is not drawn). exact is 1
 *   when the row is within PARO_PLOT_PLAN_WINDOW of the best at its GPU count, where plan
 *   keeps every row that could beat it: the strategy's own best; 0 when it is only an
 *   upper bound of it (plan stopped searching that strategy's slower configurations)
 * @names: (out): the drawn strategies, space-separated, in block order
 * Errors: located PARO_CONFIG_ERROR: a missing column (MISSING_KEY), a bad number or flag
 * (TYPE), a header unlike the first, a named strategy with no such row, nothing that fits
 * (CONSTRAINT).
 */
gboolean paro_plot_plan_scaling(const char *plan_csv, const char *strategies, GString *tsv,
                                char **names, GError **error);

/** paro_plot_distinct: the distinct values of column @column of a CSV, in order of first
 * appearance, space-separated. */
char *paro_plot_distinct(const char *csv, const char *column, GError **error);

G_END_DECLS
