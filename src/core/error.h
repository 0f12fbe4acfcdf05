/* SPDX-License-Identifier: MIT */
/* Error domains of parosim. PARO_CONFIG_ERROR is a GLib extended error that carries the
 * 1-based file:line:column of the offending input, so tests can assert the location and
 * the CLI can draw a caret under it; its message always starts with "file:line:col: ". */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

GQuark paro_config_error_quark(void);
#define PARO_CONFIG_ERROR (paro_config_error_quark())

/* Append only: the numeric values are part of the test corpus. */
typedef enum {
    PARO_CONFIG_ERROR_SYNTAX,
    PARO_CONFIG_ERROR_DUPLICATE_KEY,
    PARO_CONFIG_ERROR_UNKNOWN_KEY,
    PARO_CONFIG_ERROR_MISSING_KEY,
    PARO_CONFIG_ERROR_TYPE,
    PARO_CONFIG_ERROR_UNIT,
    PARO_CONFIG_ERROR_RANGE,
    PARO_CONFIG_ERROR_REFERENCE,
    PARO_CONFIG_ERROR_CONSTRAINT,
} ParoConfigError;

typedef struct {
    char *file; /* label of the input: a path, "<data>", or "--set N" */
    int line;   /* 1-based; 0 when unknown */
    int column; /* 1-based; 0 when unknown */
} ParoConfigErrorPrivate;

GQuark paro_sim_error_quark(void);
#define PARO_SIM_ERROR (paro_sim_error_quark())
typedef enum {
    PARO_SIM_ERROR_DEADLOCK,
    PARO_SIM_ERROR_INFEASIBLE,
} ParoSimError;

GQuark paro_calib_error_quark(void);
#define PARO_CALIB_ERROR (paro_calib_error_quark())
typedef enum {
    PARO_CALIB_ERROR_FIT,
    PARO_CALIB_ERROR_DATA,
} ParoCalibError;

/**
 * paro_config_error_set:
 * @error: (out) (optional): the error to set
 * @file: label of the input; @line, @column: 1-based location
 *
 * Sets a located PARO_CONFIG_ERROR whose message reads "file:line:col: <message>".
 */
void paro_config_error_set(GError **error, ParoConfigError code, const char *file, int line,
                           int column, const char *format, ...) G_GNUC_PRINTF(6, 7);

/**
 * paro_config_error_get_location:
 * Returns: (transfer none) (nullable): the location of a PARO_CONFIG_ERROR, or NULL when
 * @error belongs to another domain.
 */
const ParoConfigErrorPrivate *paro_config_error_get_location(const GError *error);

/** paro_config_error_code_name: "UNKNOWN_KEY" for PARO_CONFIG_ERROR_UNKNOWN_KEY, ... */
const char *paro_config_error_code_name(int code);

/** paro_config_error_code_from_name: inverse of the above; -1 when @name is unknown. */
int paro_config_error_code_from_name(const char *name);

G_END_DECLS
