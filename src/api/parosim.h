/* SPDX-License-Identifier: MIT */
/* libparosim: the C API of parosim (installed as parosim.h; pkg-config parosim).
 *
 * A small, stable surface over the simulator for programs and language bindings: load a
 * scenario (a file, a shipped scenario's name, or YAML text) with overrides as `--set`
 * takes them, then run the main job or the closed-form strategies and get either the
 * exact text the CLI prints (table, JSON or CSV) or one plain struct per strategy. Only
 * names starting with parosim_ are exported; no GLib type appears here. Errors come back
 * as NULL (or -1) with a message the caller frees with parosim_free; for bad input the
 * message starts with file:line:column. Nothing here exits the process or writes to
 * stdout or stderr.
 *
 * Threads: every function may be called from several threads at once, on different
 * scenarios or on one shared scenario. A loaded scenario never changes: parosim_run,
 * parosim_run_rows and parosim_strategies only read it (the collective timings they share
 * lock themselves), so threads sharing one get the same results as one thread would. Only
 * parosim_scenario_free must wait until no other call is using that scenario.
 *
 * Stability: this header's functions and the fields of ParosimStepRow keep their meaning
 * within a major version; fields are only ever appended (check row_size). */
#pragma once

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define PAROSIM_API __attribute__((visibility("default")))
#else
#define PAROSIM_API
#endif

typedef struct ParosimScenario ParosimScenario;

/* One strategy's simulated training step (the figures of `parosim run`). */
typedef struct {
    size_t row_size;        /* sizeof(ParosimStepRow) of the library that filled it */
    char strategy[32];      /* its name: a triple (NIG) or a named one (zero-3) */
    int rank;               /* 1 = fastest among those that fit with margin */
    int fits;               /* its peak memory fits the GPU */
    double step_s;          /* simulated step time */
    double compute_s;       /* the busiest stage's kernels */
    double comm_s;          /* its collectives and sends, summed */
    double exposed_comm_s;  /* step - compute */
    double guideline_s;     /* the closed form beside it */
    double samples_per_s;   /* the whole job's */
    double tokens_per_s;    /* the whole job's */
    double tflops_per_gpu;  /* model FLOPs per second per GPU */
    double mfu;             /* tflops_per_gpu / peak */
    double peak_bytes;      /* per GPU */
    int tight;              /* it fits, but within the memory headroom (training.memory_headroom):
                             * rows that fit with margin rank first */
    double allocated_bytes; /* PyTorch's allocator's tensors at their peak (decision 94) */
    double reserved_bytes;  /* what its caching allocator holds from the driver */
} ParosimStepRow;

/** parosim_version: "0.2.0" (static): the version of the library (meson.build). */
PAROSIM_API const char *parosim_version(void);

/** parosim_free: frees a string, a row array or an error message the library returned. */
PAROSIM_API void parosim_free(void *pointer);

/**
 * parosim_scenario_load:
 * @path: a scenario file, or the name of a shipped one (scenarios/NAME.yaml of the data
 *   folder, as `parosim run NAME` finds it)
 * @overrides: NULL-terminated "PATH=VALUE" strings as --set takes them, or NULL
 * @error: where a message goes on failure (may be NULL)
 * Returns: the scenario, or NULL.
 */
PAROSIM_API ParosimScenario *parosim_scenario_load(const char *path, const char *const *overrides,
                                                   char **error);

/**
 * parosim_scenario_load_yaml:
 * The same from YAML text; relative references (model:, topology:) are resolved against
 * @base_dir (NULL or "": the current directory), whatever @label says; @label (NULL:
 * "yaml") only names the text in error messages, as <@label> ("<runs/today>:7:3: ...").
 */
PAROSIM_API ParosimScenario *parosim_scenario_load_yaml(const char *yaml, const char *base_dir,
                                                        const char *label,
                                                        const char *const *overrides, char **error);

PAROSIM_API void parosim_scenario_free(ParosimScenario *scenario);

/**
 * parosim_run:
 * Simulates @strategies (comma-separated names as --strategies takes them; NULL or "all":
 * every strategy; "" names none and is an error, as `--strategies ""` is) and returns what
 * `parosim run --format FORMAT` prints, FORMAT being "table", "json" or "csv" (NULL:
 * "table"), byte for byte. Returns: a string to parosim_free, or NULL.
 */
PAROSIM_API char *parosim_run(ParosimScenario *scenario, const char *strategies, const char *format,
                              char **error);

/**
 * parosim_run_rows:
 * The same simulation as rows, ranked as the table is: *@rows receives an array of *@n
 * rows to parosim_free. Returns: 0, or -1 on error.
 */
PAROSIM_API int parosim_run_rows(ParosimScenario *scenario, const char *strategies,
                                 ParosimStepRow **rows, size_t *n, char **error);

/**
 * parosim_strategies:
 * What `parosim strategies --format FORMAT` prints: memory, traffic and the closed-form
 * step time of every strategy. Returns: a string to parosim_free, or NULL.
 */
PAROSIM_API char *parosim_strategies(ParosimScenario *scenario, const char *format, char **error);

#ifdef __cplusplus
}
#endif
