/* SPDX-License-Identifier: MIT */
/* What compression buys a step: the same strategy simulated again without the scenario's
 * compression, on the same collective cache (it is keyed by the bytes on the wire, which is
 * all compression changes there), the difference reported as time saved. A second
 * simulation rather than a formula because the saving depends on what compression takes
 * off the critical path, which only the schedule knows: a collective hidden behind compute
 * saves nothing however much it shrinks. */
#include "step/step.h"

gboolean paro_step_add_time_saved(const ParoGuideline *g, ParoCollCache *cache, ParoStepResult *r,
                                  GError **error)
{
    r->time_saved_s = 0;
    if (!paro_compression_is_active(&g->scenario->compression))
        return TRUE;
    ParoScenario plain = *g->scenario; /* shallow: only the compression differs */
    paro_compression_preset(&plain.compression, PARO_COMPRESS_NONE);
    g_autoptr(ParoGuideline) gp = paro_guideline_evaluate(&plain);
    ParoStepResult base;
    if (!paro_step_simulate(gp, r->strategy, cache, FALSE, &base, error))
        return FALSE;
    r->time_saved_s = paro_time_to_s(base.step) - paro_time_to_s(r->step);
    paro_step_result_clear(&base);
    return TRUE;
}
