/* SPDX-License-Identifier: MIT */
/* Shared inside step/ and with white-box tests: the 3D (tp x pp x dp) step of step-3d.c. */
#pragma once

#include "step/step.h"

G_BEGIN_DECLS

/** paro_coll_cache_comm_model: the alpha-beta figures of the cluster the cache simulates
 * on (the DP view when tp*pp > 1), for traffic accounting. */
ParoCommModel paro_coll_cache_comm_model(const ParoCollCache *cache);

/** paro_step3d_sizes: the DP sizes of one stage: n = dp, Psi and Psi' divided by tp*pp. */
ParoStateSizes paro_step3d_sizes(const ParoScenario *scenario);

/** paro_step3d_tp_layer_s: one layer's TP collective time for one micro-batch, forward or
 * backward (2 AllReduces, or 4 in backward with full recomputation); 0 when tp = 1. Adds
 * the codec time to @io_codec_s. */
double paro_step3d_tp_layer_s(const ParoScenario *scenario, gboolean backward, double *io_codec_s);

/** paro_step3d_simulate: paro_step_simulate for a scenario with tp or pp above 1. */
gboolean paro_step3d_simulate(const ParoGuideline *guideline, const ParoStrategy *strategy,
                              ParoCollCache *cache, gboolean keep_trace, ParoStepResult *out,
                              GError **error);

G_END_DECLS
