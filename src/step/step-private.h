/* SPDX-License-Identifier: MIT */
/* Shared inside step/ and with white-box tests: the 3D (tp x pp x dp) step of step-3d.c. */
#pragma once

#include "step/step.h"

G_BEGIN_DECLS

/** paro_step_dp_cluster: the cluster the DP collectives run on: the scenario's, or with
 * tp*pp > 1 its DP view (step-coll.c). Shallow: strings stay the scenario's. */
void paro_step_dp_cluster(const ParoScenario *s, ParoTopology *out);

/** paro_step_dp_comm_model: the alpha-beta figures of paro_step_dp_cluster, for traffic
 * accounting. */
ParoCommModel paro_step_dp_comm_model(const ParoScenario *s);

/** paro_step_dp_coll_time: the simulated time of one uncompressed DP collective. */
gboolean paro_step_dp_coll_time(const ParoScenario *s, ParoCollCache *cache, ParoCollKind op,
                                ParoScope scope, double size_bytes, ParoTime *out, GError **error);

/** paro_step3d_stage_share: the share of the model's parameters on pipeline stage 0 of
 * @pp: 1/pp of the transformer layers and final norm plus the whole input embedding
 * (positions included); the head (untied) is the last stage's, not counted. 1/pp for a
 * model given by its parameter count only. */
double paro_step3d_stage_share(const ParoModel *model, gint64 pp);

/** paro_step3d_module_s: a module's time for one micro-batch from its layers' @compute and
 * their DP collectives @comm, in steady state: k max(c, d) = max(compute, comm) over k
 * uniform layers with @overlap, compute + comm without. */
double paro_step3d_module_s(double compute, double comm, gboolean overlap);

/** paro_step3d_dp_fill_s: what the overlapped DP stream adds once a step, min(c, d) of one
 * layer (the first gather, or the last reduce-scatter); 0 without overlap. */
double paro_step3d_dp_fill_s(double compute, double comm, gint64 layers, gboolean overlap);

/** paro_step3d_sizes: the DP sizes of stage 0 on one TP rank: n = dp, Psi and Psi' times
 * paro_step3d_stage_share / tp. */
ParoStateSizes paro_step3d_sizes(const ParoScenario *scenario);

typedef struct {
    double time_s;      /* on the layer's critical path, codec included */
    double codec_s;     /* compression kernels' busy time */
    double saved_bytes; /* bytes one GPU does not send thanks to compression */
} ParoStep3dComm;

/** paro_step3d_tp_layer: one layer's TP collectives for one micro-batch, forward or
 * backward (2 AllReduces, or 4 in backward with full recomputation; AllGather +
 * ReduceScatter pairs with sequence parallelism); zero when tp = 1. */
ParoStep3dComm paro_step3d_tp_layer(const ParoScenario *scenario, gboolean backward);

/** paro_step3d_simulate: paro_step_simulate for a scenario with tp or pp above 1. */
gboolean paro_step3d_simulate(const ParoScenarioDerived *d, const ParoStrategy *strategy,
                              ParoCollCache *cache, const ParoStepOptions *options,
                              ParoStepResult *out, GError **error);

G_END_DECLS
