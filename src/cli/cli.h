/* SPDX-License-Identifier: MIT */
/* The parosim command line: one function per command, and the diagnostics printer. Only
 * this module prints to stderr or decides exit codes (0 ok, 1 input or simulation
 * error, 2 usage error). */
#pragma once

#include <glib.h>

#include "core/files.h"

G_BEGIN_DECLS

#define PARO_EXIT_OK 0
#define PARO_EXIT_ERROR 1
#define PARO_EXIT_USAGE 2

/** paro_cli_report_error: prints @error; for a located config error also the source line
 * and a caret under the column. @set_args are the --set arguments, for "--set[i]" labels. */
void paro_cli_report_error(const GError *error, const char *const *set_args,
                           const char *const *vary_args);

/** paro_cli_escape: @text as valid UTF-8 with control characters shown as '?', one
 * character for one (transfer full); for source lines under a caret. */
char *paro_cli_escape(const char *text);

/** paro_cli_parse_strategies: "all" or a comma-separated list of names and aliases;
 * NULL (and a usage message naming @command) for an unknown one. (transfer container) */
GPtrArray *paro_cli_parse_strategies(const char *text, const char *command);

/**
 * paro_cli_parse_options:
 * Parses @argv against @entries for `parosim @command` (its usage line names
 * @parameters, its --help shows @summary); on a bad option prints "parosim COMMAND:
 * MESSAGE" and the --help hint and returns FALSE (the caller exits PARO_EXIT_USAGE).
 */
gboolean paro_cli_parse_options(const char *command, const char *parameters, const char *summary,
                                const GOptionEntry *entries, int *argc, char ***argv);

/** paro_cli_usage: prints "parosim @command: @message" and the --help hint to stderr;
 * returns PARO_EXIT_USAGE for the command to return. */
int paro_cli_usage(const char *command, const char *message);

/** paro_cli_write: writes @text to stdout in one piece; FALSE (and a message) on failure. */
gboolean paro_cli_write(const GString *text);

/** paro_cli_scenario_inputs: the files a command on @scenario_path with @sets reads (the
 * scenario, its model, topology and calibration, files named by --set), plus @more
 * (nullable); for paro_cli_write_file. (transfer full) */
GStrv paro_cli_scenario_inputs(const char *scenario_path, const char *const *sets,
                               const char *const *more);

typedef struct _ParoRun ParoRun;

/**
 * paro_cli_open_run:
 * For `parosim @command SCENARIO` writing @output (nullable): sets *@out_inputs to the
 * files it reads (paro_cli_scenario_inputs), checks @output against them, loads the
 * scenario with @sets and refuses what @n_strategies simulations (@trace, @extrapolate)
 * would cost beyond the limits (paro_workload_check).
 * Returns: (transfer full) the run, or NULL with the error printed.
 */
ParoRun *paro_cli_open_run(const char *command, const char *path, const char *const *sets,
                           const char *output, guint n_strategies, gboolean trace,
                           gboolean extrapolate, GStrv *out_inputs);

/** paro_cli_check_output: what writing @path (nullable: TRUE) would refuse (it is one of
 * @inputs, a directory...), checked before the work; FALSE and a message otherwise. */
gboolean paro_cli_check_output(const char *command, const char *path, const char *const *inputs);

/** paro_cli_write_file: @text to @path with paro_file_write (temporary file and rename, or
 * directly to a device or FIFO); FALSE and a message "parosim COMMAND: error: ..." on
 * failure. */
gboolean paro_cli_write_file(const char *command, const char *path, const GString *text,
                             const char *const *inputs);

/** paro_cli_write_parts: the concatenation of @n_parts ParoFilePart to @path as
 * paro_cli_write_file does, or to stdout when @path is NULL, without joining them. */
gboolean paro_cli_write_parts(const char *command, const char *path, const ParoFilePart *parts,
                              guint n_parts, const char *const *inputs);

/** paro_cli_parse_format: "table" -> 0 ...; -1 and a message when unknown. */
int paro_cli_parse_format(const char *name);

/** paro_cli_install_signal_cleanup: SIGINT, SIGTERM and SIGHUP remove the output being
 * written (its temporary file) and a running plot's gnuplot and files, then kill as
 * before: no command leaves a `.NAME.XXXXXX` behind (main.c). */
void paro_cli_install_signal_cleanup(void);

/** paro_cli_arm_faults: reads PAROSIM_FAULT in the tests' parosim-faults (cli/faults.c);
 * FALSE, with a message, when it is malformed. */
gboolean paro_cli_arm_faults(void);

int paro_cmd_strategies(int argc, char **argv);
int paro_cmd_collective(int argc, char **argv);
int paro_cmd_pipeline(int argc, char **argv);
int paro_cmd_run(int argc, char **argv);
int paro_cmd_sweep(int argc, char **argv);
int paro_cmd_plot(int argc, char **argv);
int paro_cmd_plan(int argc, char **argv);
int paro_cmd_calibrate(int argc, char **argv);
int paro_cmd_validate(int argc, char **argv);
int paro_cmd_validate_predict(int argc, char **argv); /* --predict, --corpus (cmd-predict.c) */
int paro_cmd_report(int argc, char **argv);
int paro_cmd_validate_layers(int argc, char **argv); /* --layers (cmd-layers.c) */

G_END_DECLS
