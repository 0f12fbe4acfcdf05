/* SPDX-License-Identifier: MIT */
/* Shared inside scenario/: the checks a loaded scenario's values must pass together
 * (scenario-check.c), run by the loader (scenario.c) before the scenario is returned. */
#pragma once

#include "scenario/scenario.h"

G_BEGIN_DECLS

/**
 * paro_scenario_check:
 * The scenario's values together, each refusal located at the key that decides it: the
 * layout (tp x cp x pp x dp = GPUs, where TP, CP, DP and EP ranks sit, the pipeline's
 * shape), the PaRO group, LoRA, fp8, offload and the trainable count; fills the degrees
 * left to their defaults (dp, group, etp).
 */
gboolean paro_scenario_check(ParoScenario *s, const ParoNode *root, GError **error);

G_END_DECLS
