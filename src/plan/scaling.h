/* SPDX-License-Identifier: MIT */
/* The training budget of a model from the language-model scaling laws (Kaplan et al.
 * 2020), as Lamy-Poirier 2021 uses them to bound the useful batch: the loss a compute-
 * efficient run stops at, the critical batch size at that loss, and the steps and tokens
 * a run at the critical batch takes. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
    double n_c, alpha_n;    /* converged loss L(N) = (N_c / N)^alpha_N, N non-embedding */
    double s_c, alpha_s;    /* L(N, S_min) = L(N) + (S_c / S_min)^alpha_S */
    double b_star, alpha_b; /* B_crit(L) = B* / L^(1 / alpha_B), tokens */
} ParoScalingLaw;

/* Kaplan et al. 2020, Table 3 / eq. 1.4, 5.3 (N_c 6.5e13, alpha_N 0.077, S_c 2.1e3,
 * alpha_S 0.76, B* 2e8 tokens, alpha_B 0.21). */
extern const ParoScalingLaw paro_scaling_kaplan2020;

typedef struct {
    double loss_converged; /* L(N) */
    double loss_target; /* (1 + alpha_N / alpha_S) L(N): where compute-efficient training stops */
    double critical_batch_tokens; /* B_crit(L_target) */
    double min_steps;             /* S_min to reach the target loss */
    double min_tokens;            /* E_min = B_crit S_min: the fewest tokens, at a tiny batch */
    double steps;                 /* 2 S_min: the steps of a run at the critical batch */
    double tokens;                /* 2 B_crit S_min: its tokens */
} ParoTrainingBudget;

/** paro_scaling_critical_batch: B_crit(L) in tokens. */
double paro_scaling_critical_batch(const ParoScalingLaw *law, double loss);

/** paro_scaling_budget: the budget of a model of @params non-embedding parameters. */
void paro_scaling_budget(const ParoScalingLaw *law, double params, ParoTrainingBudget *out);

/**
 * paro_scaling_steps:
 * The steps a run at a global batch of @batch_tokens takes to the budget's loss: Kaplan et
 * al. 2020 eq. 5.1's trade-off (research/lga.md 3.1) (S / S_min - 1)(E / E_min - 1) = 1 with E = S
 * B and B_crit = E_min / S_min gives S(B) = S_min (1 + B_crit / B), and its tokens E(B) = S(B) B =
 * E_min (1 + B / B_crit).
 */
double paro_scaling_steps(const ParoTrainingBudget *budget, double batch_tokens);

G_END_DECLS
