/* SPDX-License-Identifier: MIT */
/* A step of many micro-batches from simulations of a few. Once a step's schedule is in its
 * steady state every period of micro-batches (one without pipeline, P with P stages) adds
 * the same time, traffic and memory, so step(A) is read off a line through two periods;
 * when the slopes instead converge geometrically (SM contention in a pipeline), five points
 * give the ratio and the step is summed to A. The run, sweep and plan use it; a full
 * simulation stays the reference (tests/test_extrapolate.c, `run --no-extrapolate`). */
#pragma once

#include "step/step.h"

G_BEGIN_DECLS

/* The relative error an extrapolated step may have against the full simulation: what
 * `run` and `sweep` accept, checked against full simulations by tests/test_extrapolate.c. */
#define PARO_EXTRAPOLATE_TOLERANCE 1e-9

/** paro_extrapolate_is_linear: three points one period apart on a line, the second
 * difference within @tolerance of the last point (exactly, for @tolerance 0). */
gboolean paro_extrapolate_is_linear(double y0, double y1, double y2, double tolerance);

/**
 * paro_extrapolate_geometric:
 * @y: a step's time (or peak) at five accumulations spaced by one period, y[4] the last;
 * @periods: how many periods beyond y[4] to extrapolate (>= 0, may be fractional).
 * When the slopes d_k = y[k] - y[k-1] approach their limit geometrically, each change
 * d_{k+1} - d_k a constant ratio 0 < r < 0.95 of the previous one (two estimates of r
 * agreeing), sets *@out to y[4] plus the sum of the next @periods slopes,
 * n d4 + e3 (r / (1 - r)) (n - r (1 - r^n) / (1 - r)), with r from the last three slopes,
 * and *@error to how much that sum moves with the other estimate of r; returns FALSE when
 * the slopes do not converge so.
 */
gboolean paro_extrapolate_geometric(const double y[5], double periods, double *out, double *error);

/**
 * paro_extrapolate_five:
 * Five points one period apart (@y as above): when the last three are on a line (to 1e-9
 * of the last point), y[4] + @periods (y[4] - y[3]); converging geometrically,
 * paro_extrapolate_geometric's sum if its error estimate is within @tolerance of it.
 * FALSE when neither.
 */
gboolean paro_extrapolate_five(const double y[5], double periods, double tolerance, double *out);

/**
 * paro_step_simulate_extrapolated:
 * paro_step_simulate of @options->micro_steps micro-batches (0: the scenario's A) read off
 * simulations of fewer: from B (3 without pipeline, 3P with P stages; A - B a whole number
 * of periods), the points B - P, B and B + P; on a line (every figure to
 * PARO_EXTRAPOLATE_TOLERANCE), extended by (A - B - P)/P periods, which is exact when the
 * schedule is periodic, since every time is an integer; otherwise two more points and a
 * geometric sum within PARO_EXTRAPOLATE_TOLERANCE; otherwise the full simulation. Also
 * whole: A up to 3B (no gain; with @options' memo, whose points other accumulations share,
 * A up to B + P), a trace, and layered accumulation, whose peak memory is not a line in A. The
 * result's figures are those of A micro-batches; its busiest and fullest stages and periodic_from
 * those of the last point simulated.
 */
gboolean paro_step_simulate_extrapolated(const ParoScenarioDerived *d, const ParoStrategy *strategy,
                                         ParoCollCache *cache, const ParoStepOptions *options,
                                         ParoStepResult *out, GError **error);

G_END_DECLS
