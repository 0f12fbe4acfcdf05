/* SPDX-License-Identifier: MIT */
/* What compression buys a step: the same strategy simulated again without the scenario's
 * compression, on the same collective cache (it is keyed by the bytes on the wire, which is
 * all compression changes there), the difference reported as time saved. A second
 * simulation rather than a formula because the saving depends on what compression takes
 * off the critical path, which only the schedule knows: a collective hidden behind compute
 * saves nothing however much it shrinks. The uncompressed guideline is evaluated once per
 * scenario (paro_step_baseline_new) and serves every strategy. */
#include "step/step.h"

struct _ParoStepBaseline {
    ParoScenario plain;       /* shallow copy of the scenario, compression off */
    ParoGuideline *guideline; /* of plain; NULL when the scenario compresses nothing */
};

ParoStepBaseline *paro_step_baseline_new(const ParoGuideline *g)
{
    ParoStepBaseline *b = g_new0(ParoStepBaseline, 1);
    if (!paro_compression_is_active(&g->scenario->compression))
        return b;
    b->plain = *g->scenario; /* the strings and model stay the scenario's */
    paro_compression_preset(&b->plain.compression, PARO_COMPRESS_NONE);
    b->guideline = paro_guideline_evaluate(&b->plain);
    return b;
}

void paro_step_baseline_free(ParoStepBaseline *b)
{
    if (b == NULL)
        return;
    g_clear_pointer(&b->guideline, paro_guideline_free);
    g_free(b);
}

gboolean paro_step_add_time_saved(const ParoStepBaseline *b, ParoCollCache *cache,
                                  ParoStepResult *r, GError **error)
{
    r->time_saved_s = 0;
    if (b->guideline == NULL)
        return TRUE;
    ParoStepResult base;
    if (!paro_step_simulate(b->guideline, r->strategy, cache, FALSE, &base, error))
        return FALSE;
    r->time_saved_s = paro_time_to_s(base.step) - paro_time_to_s(r->step);
    paro_step_result_clear(&base);
    return TRUE;
}
