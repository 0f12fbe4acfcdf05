/* SPDX-License-Identifier: MIT */
/* The shortest-training-time planner (plan/): the scaling-law budget against a worked
 * derivation, the accumulation rounding, and the planner's rows against their own
 * definitions and against a direct simulation of the same configuration. */
#include <glib.h>
#include <math.h>

#include "check-main.h"
#include "fixtures.h"
#include "plan/plan.h"

START_TEST(scaling_law_budget)
{
    /* Expected values: ../shared/research/lga.md section 6, a derivation of ours from
     * Kaplan et al. 2020's constants (N_c 6.5e13, alpha_N 0.077, S_c 2.1e3, alpha_S 0.76,
     * B* 2e8, alpha_B 0.21), printed there to 3-4 digits:
     *   20e9:  L(N) 1.864, L* 2.053, B_crit 6.5e6 tokens, 2 S_min 37.7k steps, D 2.5e11
     *   175e9: L(N) 1.577, L* 1.737, B_crit 1.44e7 tokens, 2 S_min 46.9k steps, D 6.8e11
     * and the formula alone: B_crit(2.0) = 2e8 / 2^4.762 = 7.37e6, B_crit(1.5) = 2.90e7. */
    static const struct {
        double psi, loss, target;
        double batch, batch_unit, batch_tol; /* critical batch in batch_unit tokens */
        double ksteps, tokens_1e11, tokens_tol;
    } want[] = {
        {20e9, 1.864, 2.053, 6.5, 1e6, 0.05, 37.7, 2.5, 0.05},
        {175e9, 1.577, 1.737, 1.44, 1e7, 0.01, 46.9, 6.8, 0.1},
    };
    for (guint i = 0; i < G_N_ELEMENTS(want); i++) {
        ParoTrainingBudget b;
        paro_scaling_budget(&paro_scaling_kaplan2020, want[i].psi, &b);
        ck_assert_double_eq_tol(b.loss_converged, want[i].loss, 0.0015);
        ck_assert_double_eq_tol(b.loss_target, want[i].target, 0.0015);
        ck_assert_double_eq_tol(b.critical_batch_tokens / want[i].batch_unit, want[i].batch,
                                want[i].batch_tol);
        ck_assert_double_eq_tol(b.steps / 1e3, want[i].ksteps, 0.15);
        ck_assert_double_eq_tol(b.tokens / 1e11, want[i].tokens_1e11, want[i].tokens_tol);
    }
    ck_assert_double_eq_tol(paro_scaling_critical_batch(&paro_scaling_kaplan2020, 2.0) / 1e6, 7.37,
                            0.01);
    ck_assert_double_eq_tol(paro_scaling_critical_batch(&paro_scaling_kaplan2020, 1.5) / 1e7, 2.90,
                            0.01);
}
END_TEST

START_TEST(accumulation_rounds_to_the_nearest_batch)
{
    /* 32 GPUs x b 4 x s 512 = 65,536 tokens a micro-step: 4.3e6 / 65,536 = 65.6 -> 66;
     * a target below one micro-step still takes one. */
    ck_assert_int_eq(paro_plan_accumulation(4.3e6, 32, 4, 512), 66);
    ck_assert_int_eq(paro_plan_accumulation(1000, 32, 4, 512), 1);
    ck_assert_int_eq(paro_plan_accumulation(65536 * 2.4, 32, 4, 512), 2);
}
END_TEST

START_TEST(plan_does_not_depend_on_its_threads)
{
    /* The configurations run on a thread pool, each into its own rows, gathered in the
     * order of the search: one thread and three give the same rows, byte for byte. */
    g_autofree char *path = paro_test_path("scenarios/llama-7b_a100x8-100g_n32.yaml");
    const char *small[] = {"topology.nodes=2", NULL};
    GArray *rows[2] = {NULL, NULL};
    const int jobs[2] = {1, 3};
    for (int k = 0; k < 2; k++) {
        ParoPlanRequest rq = {
            .tokens = 1e10, .batch_tokens = 2e6, .lga = TRUE, .sets = small, .jobs = jobs[k]};
        g_autoptr(GError) error = NULL;
        rows[k] = paro_plan_search(path, &rq, &error);
        ck_assert_msg(rows[k] != NULL, "%s", error ? error->message : "");
    }
    ck_assert_uint_gt(rows[0]->len, 10);
    ck_assert_uint_eq(rows[0]->len, rows[1]->len);
    for (guint i = 0; i < rows[0]->len; i++) {
        const ParoPlanRow *a = &g_array_index(rows[0], ParoPlanRow, i),
                          *b = &g_array_index(rows[1], ParoPlanRow, i);
        ck_assert_msg(a->strategy == b->strategy && a->step_s == b->step_s &&
                          a->peak_bytes == b->peak_bytes && a->group == b->group &&
                          a->micro_batch == b->micro_batch && a->layout.pp == b->layout.pp &&
                          a->algorithm == b->algorithm,
                      "row %u differs", i);
    }
    g_array_unref(rows[0]);
    g_array_unref(rows[1]);
}
END_TEST

START_TEST(plan_rows_follow_their_definitions)
{
    /* On the default scenario cut to 2 nodes, with a 1e10-token budget and a 2M-token batch: the
     * fitting rows come first, fastest first; steps = ceil(tokens / batch); train = steps x step;
     * the batch is the nearest multiple of a micro-step to the target; and the best row's
     * step equals a direct simulation of its configuration. */
    g_autofree char *path = paro_test_path("scenarios/llama-7b_a100x8-100g_n32.yaml");
    const char *small[] = {"topology.nodes=2", NULL}; /* 16 GPUs: fewer layouts, same rules */
    ParoPlanRequest rq = {.tokens = 1e10, .batch_tokens = 2e6, .lga = TRUE, .sets = small};
    g_autoptr(GError) error = NULL;
    g_autoptr(GArray) rows = paro_plan_search(path, &rq, &error);
    ck_assert_msg(rows != NULL, "%s", error ? error->message : "");
    ck_assert_int_eq(rq.gpus, 16);
    ck_assert(rows->len > 10);
    int last_class = 0;
    for (guint i = 0; i < rows->len; i++) {
        const ParoPlanRow *r = &g_array_index(rows, ParoPlanRow, i);
        /* those that fit with the allocator's margin, then tight ones, then the rest */
        int class = r->fits ? (r->tight ? 1 : 0) : 2;
        ck_assert_msg(class >= last_class, "row %u ranks before a row of a better class", i);
        if (i > 0 && class == last_class)
            ck_assert(g_array_index(rows, ParoPlanRow, i - 1).train_s <= r->train_s);
        last_class = class;
        ck_assert_double_eq(r->steps, ceil(1e10 / r->batch_tokens));
        ck_assert_double_eq_tol(r->train_s, r->steps * r->step_s, 1e-9 * r->train_s);
        double dp = 16.0 / (double)(r->layout.tp * r->layout.cp * r->layout.pp);
        double micro = dp * (double)r->micro_batch * 512;
        ck_assert(r->batch_tokens == micro * (double)r->accumulation);
        ck_assert(fabs(r->batch_tokens - 2e6) <= micro / 2 + 1 || r->accumulation == 1);
        /* stages fill whole nodes: pp 4 would put two on a node (plan-space.c) */
        ck_assert_int_le(r->layout.pp, 2);
    }
    ck_assert_int_gt(rq.shapes, 100);
    /* the best row's step equals a direct simulation of its configuration */
    const ParoPlanRow *best = &g_array_index(rows, ParoPlanRow, 0);
    g_autoptr(GPtrArray) sets = paro_plan_row_overrides(&rq, best);
    g_autoptr(ParoScenario) s = paro_scenario_load(path, (const char *const *)sets->pdata, &error);
    ck_assert_msg(s != NULL, "%s", error ? error->message : "");
    g_autoptr(ParoScenarioDerived) g_derived = paro_scenario_derive(s);
    g_autoptr(ParoGuideline) g = paro_guideline_evaluate(g_derived);
    g_autoptr(ParoCollCache) cache = paro_coll_cache_new();
    ParoStepResult r;
    ck_assert(paro_step_simulate(g->derived, best->strategy, cache, &(ParoStepOptions){FALSE, TRUE},
                                 &r, NULL));
    /* the planner extrapolates beyond a few periods (plan-simulate.c): equal within its
     * tolerance, and the same peak memory to the byte but for rounding */
    ck_assert_double_eq_tol(paro_time_to_s(r.step), best->step_s,
                            PARO_PLAN_GEOMETRIC_TOLERANCE * best->step_s);
    ck_assert_double_eq_tol(r.peak_bytes, best->peak_bytes, 1e-9 * best->peak_bytes);
    paro_step_result_clear(&r);
}
END_TEST

START_TEST(extrapolated_steps_equal_full_simulation)
{
    /* The planner's shortcut (plan.c): step(A) = step(3) + (A - 3)(step(4) - step(3)).
     * Against full simulations of A = 7 and 25 for every strategy, with ring and ho-ring,
     * on the default scenario and on LLaMA-65B with recomputation: within 1e-9 relative
     * (the picosecond rounding of each micro-step), and the same peak memory. */
    g_autofree char *path = paro_test_path("scenarios/llama-7b_a100x8-100g_n32.yaml");
    g_autofree char *path65 = paro_test_path("scenarios/paro-llama-65b-full_n32.yaml");
    const char *paths[] = {path, path65};
    const char *algos[] = {"collectives.algorithm=ring", "collectives.algorithm=ho-ring"};
    for (guint p = 0; p < 2; p++)
        for (guint a = 0; a < 2; a++) {
            double step[4][29], peak[4][29];
            const int accumulations[] = {3, 4, 7, 25};
            for (int k = 0; k < 4; k++) {
                g_autofree char *acc =
                    g_strdup_printf("training.accumulation=%d", accumulations[k]);
                const char *sets[] = {acc, algos[a], NULL};
                g_autoptr(ParoScenario) s = paro_scenario_load(paths[p], sets, NULL);
                ck_assert(s != NULL);
                g_autoptr(ParoScenarioDerived) g_derived = paro_scenario_derive(s);
                g_autoptr(ParoGuideline) g = paro_guideline_evaluate(g_derived);
                g_autoptr(ParoCollCache) cache = paro_coll_cache_new();
                ck_assert_uint_eq(paro_strategy_n_all(), 29);
                for (guint i = 0; i < 29; i++) {
                    ParoStepResult r;
                    ck_assert(paro_step_simulate(g->derived, paro_strategy_get(i), cache,
                                                 &(ParoStepOptions){FALSE, TRUE}, &r, NULL));
                    step[k][i] = paro_time_to_s(r.step);
                    peak[k][i] = r.peak_bytes;
                    paro_step_result_clear(&r);
                }
            }
            for (int k = 2; k < 4; k++)
                for (guint i = 0; i < 29; i++) {
                    double want = step[0][i] + (accumulations[k] - 3) * (step[1][i] - step[0][i]);
                    ck_assert_msg(fabs(step[k][i] - want) <= 1e-9 * want,
                                  "%s %s A=%d: %.12g vs %.12g", paths[p],
                                  paro_strategy_get(i)->name, accumulations[k], step[k][i], want);
                    ck_assert_msg(peak[k][i] == peak[1][i], "%s A=%d: peak differs",
                                  paro_strategy_get(i)->name, accumulations[k]);
                }
        }
}
END_TEST

/* Steps and peaks of @strategies for the default scenario with @layout and accumulation @A;
 * returns the largest periodic_from. */
static gint64 simulate_layout(const char *const *layout, gint64 A, ParoCollCache *cache,
                              const char *const *strategies, guint n, double *step, double *peak)
{
    g_autofree char *path = paro_test_path("scenarios/llama-7b_a100x8-100g_n32.yaml");
    g_autofree char *acc = g_strdup_printf("training.accumulation=%" G_GINT64_FORMAT, A);
    const char *sets[12];
    int k = 0;
    sets[k++] = "training.efficiency=0.5";      /* flat compute unless the layout says 0 */
    sets[k++] = "training.sm_contention=false"; /* unless the layout says true */
    for (; k < 10 && layout[k - 2]; k++)
        sets[k] = layout[k - 2];
    sets[k++] = acc;
    sets[k] = NULL;
    g_autoptr(GError) error = NULL;
    g_autoptr(ParoRun) run = paro_run_load(path, sets, cache, &error);
    ck_assert_msg(run != NULL, "%s", error ? error->message : "");
    ParoRunOptions options = {FALSE, FALSE, FALSE};
    gint64 from = 0;
    for (guint i = 0; i < n; i++) {
        ParoStepResult r;
        ck_assert_msg(
            paro_run_strategy(run, paro_strategy_lookup(strategies[i]), &options, &r, &error), "%s",
            error ? error->message : "");
        step[i] = paro_time_to_s(r.step);
        peak[i] = r.peak_bytes;
        from = MAX(from, r.periodic_from);
        paro_step_result_clear(&r);
    }
    return from;
}

static gboolean layered(const char *const layout[])
{
    for (guint i = 0; i < 9 && layout[i] != NULL; i++)
        if (g_str_equal(layout[i], "training.pipeline.accumulation=layered"))
            return TRUE;
    return FALSE;
}

START_TEST(extrapolated_pipelines_equal_full_simulation)
{
    /* The planner's shortcut for pipelines and layered accumulation (plan.c): with P
     * stages, once every period of P micro-batches adds the same time and memory (from the
     * step's periodic_from estimate B, at least 3P, checked on three points B - P, B, B + P
     * and doubled until they agree),
     *   step(A) = step(B) + (A - B)/P (step(B) - step(B - P)), likewise the peak.
     * Against full simulations at A = B + 2P and B + 5P on the default scenario (2 or 4
     * nodes), for 1F1B, interleaved, layered modular (LGA) and layered accumulation without
     * pipeline (P = 1, B = 4), tp 1 and 2, for strategies that gather, reduce-scatter, or
     * neither: within 1e-9 relative. The pipelines are periodic from B = 3P; layered
     * accumulation without pipeline only once the compute of a module's micro-batches hides
     * its fixed collectives, which takes larger A (the estimate and the check). Layered
     * accumulation's peak is the highest of several lines in A (GPipe-like, its last module
     * keeps every micro-batch's loss memory, decision 50: case 3's peak leaves its first
     * line at A = 11), so as the planner, a fourth point at 4B must lie on the line. */
    static const struct {
        const char *layout[9];
        gint64 P;
        gboolean periodic_at_3p; /* depth-first: no estimate beyond 3P (4 for P = 1) */
        double tolerance;        /* relative, extrapolated against simulated */
    } cases[] = {
        {{"topology.nodes=2", "parallelism.tp=1", "parallelism.pp=2", "parallelism.dp=8", NULL},
         2,
         TRUE,
         1e-9},
        {{"topology.nodes=4", "parallelism.tp=2", "parallelism.pp=2", "parallelism.dp=8", NULL},
         2,
         TRUE,
         1e-9},
        {{"topology.nodes=4", "parallelism.tp=1", "parallelism.pp=4", "parallelism.dp=8",
          "training.pipeline.schedule=interleaved", "training.pipeline.virtual=2", NULL},
         4,
         TRUE,
         1e-9},
        {{"topology.nodes=2", "parallelism.tp=1", "parallelism.pp=2", "parallelism.dp=8",
          "training.pipeline.schedule=modular", "training.pipeline.virtual=16",
          "training.pipeline.accumulation=layered", "training.recompute=full"},
         2,
         FALSE,
         1e-9},
        {{"topology.nodes=2", "parallelism.tp=2", "parallelism.pp=1", "parallelism.dp=8",
          "training.pipeline.schedule=modular", "training.pipeline.virtual=32",
          "training.pipeline.accumulation=layered", "training.recompute=full"},
         1,
         FALSE,
         1e-9},
        /* Cases 0-4 time GEMMs at a flat 0.5 x peak (simulate_layout's flat_compute), where
         * the steps are periodic to 1e-9. With GEMMs timed by shape (issue #15) compute is
         * faster, the last stage's chunk (with the output head) relatively longer, and the
         * interleaved steady state only quasi-periodic: a period of P micro-batches adds
         * 0.36265 s or up to 0.3756 s (zero-1, A = 12..116), so three points can agree to
         * 1e-9 and a later period still differ. The planner's extrapolation is then within
         * 1% (the doubt is recorded in plan.c), checked here. Cases 0-4 also leave out the
         * SMs collectives take from compute (training.sm_contention): with it, a compute
         * task's time depends on which collectives it meets, and the slopes of successive
         * periods never agree to 1e-9 here (the planner then simulates the step whole:
         * exact, slower; plan.c). */
        {{"topology.nodes=4", "parallelism.tp=1", "parallelism.pp=4", "parallelism.dp=8",
          "training.pipeline.schedule=interleaved", "training.pipeline.virtual=2",
          "training.efficiency=0", NULL},
         4,
         FALSE,
         1e-2},
    };
    const char *const strategies[] = {"zero-1", "zero-3", "NII", "fsdp-hybrid-zero2", "zero++"};
    enum { N = G_N_ELEMENTS(strategies) };
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
        gint64 P = cases[c].P, B = P > 1 ? 3 * P : 4;
        g_autoptr(ParoCollCache) cache = paro_coll_cache_new();
        double step[3][N], peak[3][N];
        gint64 from = simulate_layout(cases[c].layout, B, cache, strategies, N, step[0], peak[0]);
        if (cases[c].periodic_at_3p) /* not layered: the schedule's own estimate */
            ck_assert_int_eq(from, B);
        B = MAX(B, (from + P - 1) / P * P);
        gboolean linear = FALSE;
        for (int tries = 0; tries < 8 && !linear; tries++, B *= 2) {
            for (int k = 0; k < 3; k++)
                simulate_layout(cases[c].layout, B + (k - 1) * P, cache, strategies, N, step[k],
                                peak[k]);
            linear = TRUE;
            for (guint i = 0; i < N; i++)
                linear = linear &&
                         fabs((step[2][i] - step[1][i]) - (step[1][i] - step[0][i])) <=
                             1e-9 * step[2][i] &&
                         fabs((peak[2][i] - peak[1][i]) - (peak[1][i] - peak[0][i])) <=
                             1e-9 * peak[2][i];
            if (linear && layered(cases[c].layout)) { /* the planner's fourth point, 4B */
                double far[N], far_peak[N], ahead = (double)(3 * B) / (double)P;
                simulate_layout(cases[c].layout, 4 * B, cache, strategies, N, far, far_peak);
                for (guint i = 0; i < N; i++)
                    linear = linear &&
                             fabs(far[i] - (step[1][i] + ahead * (step[1][i] - step[0][i]))) <=
                                 1e-9 * far[i] &&
                             fabs(far_peak[i] - (peak[1][i] + ahead * (peak[1][i] - peak[0][i]))) <=
                                 1e-9 * far_peak[i];
            }
            if (!linear)
                ck_assert_msg(!cases[c].periodic_at_3p,
                              "case %u not periodic at B = %" G_GINT64_FORMAT, c, B);
        }
        ck_assert_msg(linear, "case %u never periodic", c);
        B /= 2; /* the loop doubled once more on its way out */
        const gint64 later[] = {B + 2 * P, B + 5 * P};
        for (guint k = 0; k < G_N_ELEMENTS(later); k++) {
            double full[N], full_peak[N];
            simulate_layout(cases[c].layout, later[k], cache, strategies, N, full, full_peak);
            for (guint i = 0; i < N; i++) {
                double periods = (double)(later[k] - B) / (double)P;
                double want = step[1][i] + periods * (step[1][i] - step[0][i]);
                double want_peak = peak[1][i] + periods * (peak[1][i] - peak[0][i]);
                ck_assert_msg(fabs(full[i] - want) <= cases[c].tolerance * want,
                              "case %u %s A=%" G_GINT64_FORMAT ": step %.12g, extrapolated %.12g",
                              c, strategies[i], later[k], full[i], want);
                ck_assert_msg(fabs(full_peak[i] - want_peak) <= cases[c].tolerance * want_peak,
                              "case %u %s A=%" G_GINT64_FORMAT ": peak %.12g, extrapolated %.12g",
                              c, strategies[i], later[k], full_peak[i], want_peak);
            }
        }
    }
}
END_TEST

START_TEST(geometric_extrapolation_sums_a_converging_series)
{
    /* y_k = 10 + 2k + 3 (1/2)^k: slopes 2 - 3 (1/2)^k, converging on 2 with ratio 1/2.
     * Derived by hand: n periods past y_4 the sum is y_{4+n} itself, and both estimates
     * of the ratio are 1/2, so the error estimate is 0 (to rounding). */
    double y[5];
    for (int k = 0; k < 5; k++)
        y[k] = 10 + 2.0 * k + 3.0 * pow(0.5, k);
    const double n[] = {0, 1, 7, 40.5};
    for (guint i = 0; i < G_N_ELEMENTS(n); i++) {
        double out = 0, err = 1;
        ck_assert(paro_extrapolate_geometric(y, n[i], &out, &err));
        double want = 10 + 2.0 * (4 + n[i]) + 3.0 * pow(0.5, 4 + n[i]);
        /* Tolerance: 1e-12 relative, a handful of double operations. */
        ck_assert_double_eq_tol(out, want, 1e-12 * want);
        ck_assert_double_le(err, 1e-12 * want);
    }
    /* A line is not a converging series (no ratio), nor is an oscillation (ratio -1), nor
     * a divergence (ratio 2). */
    double line[5] = {1, 2, 3, 4, 5}, wave[5] = {0, 1, 1, 2, 2}, grow[5] = {0, 1, 3, 7, 15};
    double out, err;
    ck_assert(!paro_extrapolate_geometric(line, 3, &out, &err));
    ck_assert(!paro_extrapolate_geometric(wave, 3, &out, &err));
    ck_assert(!paro_extrapolate_geometric(grow, 3, &out, &err));
}
END_TEST

START_TEST(converging_pipelines_extrapolate_within_tolerance)
{
    /* With the SMs collectives take from compute (training.sm_contention) and GEMMs timed by
     * shape, a pipeline's slopes converge geometrically (plan.c). The planner's rule:
     * five points B - P .. B + 3P (B = 3P, doubled until they converge), each strategy's
     * step and peak summed to A by paro_extrapolate_five (on a line, or as a converging
     * geometric series). Against
     * full simulations 10 and 40 periods on: within PARO_PLAN_GEOMETRIC_TOLERANCE (1e-6)
     * relative, plus the rounding of a few picoseconds. Megatron's fused softmax and no
     * rotary kernels (decision 61) keep the layouts' compute where their slopes are still
     * converging at B = 3P. */
    static const char *const layouts[][9] = {
        {"topology.nodes=2", "parallelism.tp=1", "parallelism.pp=2", "parallelism.dp=8",
         "training.sm_contention=true", "training.efficiency=0", "framework.fused_softmax=true",
         "model.architecture.rotary=0", NULL},
        {"topology.nodes=4", "parallelism.tp=2", "parallelism.pp=2", "parallelism.dp=8",
         "training.sm_contention=true", "training.efficiency=0", "framework.fused_softmax=true",
         "model.architecture.rotary=0", NULL},
    };
    const char *const strategies[] = {"zero-1", "zero-3", "NII", "NIG", "fsdp-hybrid-zero2"};
    enum { N = G_N_ELEMENTS(strategies) };
    for (guint c = 0; c < G_N_ELEMENTS(layouts); c++) {
        const gint64 P = 2;
        g_autoptr(ParoCollCache) cache = paro_coll_cache_new();
        double step[5][N], peak[5][N], want_step[2][N], want_peak[2][N];
        gint64 B = 3 * P, later[2];
        gboolean done = FALSE;
        int converging = 0;
        for (int tries = 0; tries < 6 && !done; tries++, B *= 2) {
            converging = 0;
            for (int k = 0; k < 5; k++)
                simulate_layout(layouts[c], B + (k - 1) * P, cache, strategies, N, step[k],
                                peak[k]);
            done = TRUE;
            later[0] = B + 13 * P;
            later[1] = B + 43 * P;
            for (guint i = 0; i < N && done; i++)
                for (int j = 0; j < 2 && done; j++) {
                    double ys[5], yp[5];
                    for (int k = 0; k < 5; k++) {
                        ys[k] = step[k][i];
                        yp[k] = peak[k][i];
                    }
                    double periods = (double)(later[j] - (B + 3 * P)) / (double)P;
                    done = paro_extrapolate_five(ys, periods, PARO_PLAN_GEOMETRIC_TOLERANCE,
                                                 &want_step[j][i]) &&
                           paro_extrapolate_five(yp, periods, PARO_PLAN_GEOMETRIC_TOLERANCE,
                                                 &want_peak[j][i]);
                    converging +=
                        done && !(fabs((ys[4] - ys[3]) - (ys[1] - ys[0])) <= 1e-9 * ys[4]);
                }
        }
        ck_assert_msg(done, "layout %u never converged", c);
        /* the case this rule is for: some strategy's slopes were still converging */
        ck_assert_msg(converging > 0, "layout %u: every strategy was already periodic", c);
        for (int j = 0; j < 2; j++) {
            double full[N], full_peak[N];
            simulate_layout(layouts[c], later[j], cache, strategies, N, full, full_peak);
            for (guint i = 0; i < N; i++) {
                double tol = PARO_PLAN_GEOMETRIC_TOLERANCE * full[i] + 1e-11;
                ck_assert_msg(fabs(full[i] - want_step[j][i]) <= tol,
                              "layout %u %s A=%" G_GINT64_FORMAT ": step %.12g, summed %.12g", c,
                              strategies[i], later[j], full[i], want_step[j][i]);
                ck_assert_msg(fabs(full_peak[i] - want_peak[j][i]) <=
                                  PARO_PLAN_GEOMETRIC_TOLERANCE * full_peak[i],
                              "layout %u %s A=%" G_GINT64_FORMAT ": peak %.12g, summed %.12g", c,
                              strategies[i], later[j], full_peak[i], want_peak[j][i]);
            }
        }
    }
}
END_TEST

static Suite *plan_suite(void)
{
    Suite *s = suite_create("plan");
    TCase *tc = tcase_create("plan");
    tcase_set_timeout(tc, 450);
    tcase_add_test(tc, scaling_law_budget);
    tcase_add_test(tc, accumulation_rounds_to_the_nearest_batch);
    tcase_add_test(tc, plan_rows_follow_their_definitions);
    tcase_add_test(tc, plan_does_not_depend_on_its_threads);
    tcase_add_test(tc, extrapolated_steps_equal_full_simulation);
    tcase_add_test(tc, extrapolated_pipelines_equal_full_simulation);
    tcase_add_test(tc, geometric_extrapolation_sums_a_converging_series);
    tcase_add_test(tc, converging_pipelines_extrapolate_within_tolerance);
    suite_add_tcase(s, tc);
    return s;
}

PARO_CHECK_MAIN(plan_suite)
