/* SPDX-License-Identifier: MIT */
/* Step results remembered across scenarios that differ only in their accumulation. An
 * extrapolated step is read off simulations of 2, 3 and 4 micro-batches (step/extrapolate.h)
 * whatever its accumulation A; so a sweep over A simulated the same few steps again at
 * every value. The memo keeps each one under the caller's context (a name for "this
 * scenario, whatever its accumulation"), the strategy, the micro-batches simulated and the
 * compression switch; and since the points are then shared, a step with a memo is read off
 * them for every A past the last point. A sweep over 25 accumulations simulates 10
 * micro-batches a strategy instead of 200. A stored result is the one a fresh simulation
 * gives (a simulation reads A from nowhere but its micro-batch count); thread-safe, and
 * never iterated. */
#pragma once

#include "step/step.h"

G_BEGIN_DECLS

ParoStepMemo *paro_step_memo_new(void);
void paro_step_memo_free(ParoStepMemo *memo);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ParoStepMemo, paro_step_memo_free)

/**
 * paro_step_memo_lookup:
 * The result stored under (@context, @strategy's name, @options' micro-batches and
 * compression) into @out; FALSE when none is. A result with a trace is never stored.
 */
gboolean paro_step_memo_lookup(ParoStepMemo *memo, const char *context,
                               const ParoStrategy *strategy, const ParoStepOptions *options,
                               ParoStepResult *out);

/** paro_step_memo_store: a copy of @result (which has no trace) under the same key. */
void paro_step_memo_store(ParoStepMemo *memo, const char *context, const ParoStrategy *strategy,
                          const ParoStepOptions *options, const ParoStepResult *result);

/** paro_step_memo_n_entries: results held (for tests). */
guint paro_step_memo_n_entries(ParoStepMemo *memo);

G_END_DECLS
