/* SPDX-License-Identifier: MIT */
/* Measurement logs: nccl-tests output (all_reduce_perf, all_gather_perf, ...) and
 * paro-harness logs (validation/harness: coll, gemm, hbm and h2d tables), read into one
 * record per file. Files of the measurement corpus (validation/nccl-corpus) add "# corpus:"
 * lines for what the source printed elsewhere: "ranks: N nodes: M" (these counts win over
 * the Rank lines, of which sources often print a few), "op: NAME" (a table without
 * nccl-tests' header), "algorithm: ring-forced" (NCCL_ALGO=Ring). Only lines whose first field is a
 * number are data (NCCL and MPI print their own lines into such logs); a data line that cannot be
 * read is a located PARO_CONFIG_ERROR "file:line:column: ...", like an error in any other input
 * file. */
#pragma once

#include <glib.h>

#include "coll/collective.h"
#include "core/limits.h"

G_BEGIN_DECLS

/* One whitespace-separated field of a log line, for errors located at its column (the
 * nccl-tests and harness logs here, layer logs in layer-check.c). */
typedef struct {
    const char *text; /* into the line, not NUL-terminated */
    int column;       /* 1-based */
    int len;
} ParoLogField;

/** paro_log_split_fields: (transfer full) the fields of @line, a GArray of ParoLogField. */
GArray *paro_log_split_fields(const char *line);

/**
 * paro_log_field_number:
 * TRUE, with @out, when the whole field is a finite number (locale-independent) of at most
 * 64 characters: a field of a million digits is not a measurement.
 */
gboolean paro_log_field_number(const ParoLogField *f, double *out);

/**
 * paro_log_field_within:
 * TRUE when @value, the number of field @f, times @scale (to the limit's unit) lies within
 * @limit, or is 0 and @zero_ok; else a located RANGE error at @label:@line and the field's
 * column naming @what, with the field as written followed by @unit (NULL for a count:
 * the value alone).
 */
gboolean paro_log_field_within(const char *label, int line, const ParoLogField *f, const char *what,
                               const ParoLimit *limit, double scale, const char *unit,
                               gboolean zero_ok, double value, GError **error);

typedef struct {
    double bytes;      /* S: nccl-tests' size column, the whole array */
    double time_us;    /* out of place */
    double busbw_GBps; /* out of place, as printed */
    double inplace_us; /* in place; NAN when absent */
    int line;          /* 1-based, in the source file */
} ParoCollPoint;

typedef struct {
    ParoCollKind op;
    ParoScope scope; /* GLOBAL for nccl-tests and the harness's 'world' */
    gint64 ranks;    /* ranks of the communicator timed */
    gint64 nodes;    /* distinct hosts/nodes among them; 0 when the log does not say */
    GArray *points;  /* ParoCollPoint, in file order */
    int line;        /* where the table's header starts */
} ParoCollTable;

typedef struct {
    gint64 m, n, k;
    char dtype[8];  /* bf16, fp16, tf32, ... */
    double time_us; /* median */
    char *name;     /* harness label: llama7b.qkv.fwd */
    int line;
} ParoGemmRow;

typedef struct {
    char op[16];    /* memcpy, copy, adam (hbm); h2d, d2h (host links) */
    double size;    /* the size column */
    double bytes;   /* bytes moved (read + written) */
    double time_us; /* median */
    int line;
} ParoMemRow;

typedef struct {
    char *source;         /* the path as given */
    char *tool;           /* "paro-harness 0.1.0", "nccl-tests", or NULL when no table was found */
    char *device;         /* GPU name, when a header names it */
    char *versions;       /* the harness's driver/runtime/library line, or NCCL's version line */
    char *date;           /* the harness's "# date:" value (UTC); NULL in nccl-tests logs */
    gboolean ring_forced; /* "# corpus: algorithm: ring-forced": NCCL_ALGO=Ring */
    GPtrArray *colls;     /* ParoCollTable* */
    GArray *gemm;         /* ParoGemmRow */
    GArray *mem;          /* ParoMemRow */
} ParoCalibLog;

void paro_calib_log_free(ParoCalibLog *log);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ParoCalibLog, paro_calib_log_free)

/**
 * paro_calib_log_parse:
 * @text: the log's contents; @label: its name in messages (the path)
 * Returns: (transfer full) (nullable): the record; a file with no table is not an error
 * (tool stays NULL). Errors: PARO_CONFIG_ERROR_SYNTAX (a data line with the wrong number
 * of fields, a row outside any table), _TYPE (a field that is not a number), _RANGE (a
 * negative or non-finite time or size, a failed check: nonzero #wrong; a time, size or
 * busbw outside its named limit, paro_limit_measured_time, _bytes, _bandwidth; a corpus
 * line's nodes or GPUs a node outside paro_limit_nodes, _gpus_per_node), _REFERENCE (an
 * unknown collective name), each located at the offending field.
 */
ParoCalibLog *paro_calib_log_parse(const char *text, const char *label, GError **error);

/** paro_calib_log_load: reads @path and parses it; G_FILE_ERROR when it cannot be read. */
ParoCalibLog *paro_calib_log_load(const char *path, GError **error);

/** paro_calib_op_from_name: "allreduce", "all_reduce", "all_reduce_perf", "AllReduce" ->
 * the kind; -1 when unknown. */
int paro_calib_op_from_name(const char *name);

G_END_DECLS
