/* SPDX-License-Identifier: MIT */
#include "plan/scaling.h"

#include <math.h>

const ParoScalingLaw paro_scaling_kaplan2020 = {
    .n_c = 6.5e13,
    .alpha_n = 0.077,
    .s_c = 2.1e3,
    .alpha_s = 0.76,
    .b_star = 2e8,
    .alpha_b = 0.21,
};

double paro_scaling_critical_batch(const ParoScalingLaw *law, double loss)
{
    return law->b_star / pow(loss, 1.0 / law->alpha_b);
}

void paro_scaling_budget(const ParoScalingLaw *law, double params, ParoTrainingBudget *out)
{
    out->loss_converged = pow(law->n_c / params, law->alpha_n);
    /* Kaplan App. B.2: compute-efficient training stops (1 + alpha_N/alpha_S) above L(N) */
    out->loss_target = (1.0 + law->alpha_n / law->alpha_s) * out->loss_converged;
    out->critical_batch_tokens = paro_scaling_critical_batch(law, out->loss_target);
    /* L_target - L(N) = (S_c / S_min)^alpha_S */
    out->min_steps = law->s_c / pow(out->loss_target - out->loss_converged, 1.0 / law->alpha_s);
    /* at B = B_crit, (S/S_min - 1)(E/E_min - 1) = 1 gives S = 2 S_min and E = 2 E_min */
    out->min_tokens = out->critical_batch_tokens * out->min_steps;
    out->steps = 2.0 * out->min_steps;
    out->tokens = out->critical_batch_tokens * out->steps;
}

double paro_scaling_steps(const ParoTrainingBudget *budget, double batch_tokens)
{
    return budget->min_steps * (1.0 + budget->critical_batch_tokens / batch_tokens);
}
