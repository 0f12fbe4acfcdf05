/* SPDX-License-Identifier: MIT */
/* Shared by the pipeline module's files and its white-box tests: task numbering and the
 * per-device programs (pipe-order.c) that the simulation (pipe.c) executes. */
#pragma once

#include "pipe/pipe.h"

G_BEGIN_DECLS

/* Task ids: forwards first, then backwards; module-major, micro-batch-minor. */
static inline gint64 paro_pipe_task_id(gint64 n_modules, gint64 micro, ParoPipeKind kind,
                                       gint64 module, gint64 m)
{
    return ((gint64)kind * n_modules + module) * micro + m;
}

/* Module of device @device's @chunk-th chunk: round-robin placement, module s on s % P. */
static inline gint64 paro_pipe_module_of(gint64 devices, gint64 device, gint64 chunk)
{
    return chunk * devices + device;
}

/**
 * paro_pipe_program:
 * Returns: (transfer full): the gint64 task ids device @device runs, in order; each of
 * its 2 * chunks * micro tasks exactly once. @spec must have passed paro_pipe_check.
 */
GArray *paro_pipe_program(const ParoPipeSpec *spec, gint64 device);

G_END_DECLS
