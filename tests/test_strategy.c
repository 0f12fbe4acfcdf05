/* SPDX-License-Identifier: MIT */
/* Oracles for strategy semantics: memory of model states (the ZeRO paper's figure and
 * the PaRO formula), and the per-GPU intra/inter traffic of all 27 triples against a
 * derivation written out triple by triple below, independent of strategy.c's tables. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "check-main.h"
#include "coll/analytic.h"
#include "strategy/strategy.h"

START_TEST(strategy_zero_paper_figure)
{
    /* System: the ZeRO paper (Rajbhandari et al. 2020, Figure 1): Psi = 7.5B, N_d = 64,
     * mixed-precision Adam (2 + 2 + K=12 bytes per parameter).
     * Expectation: 120 GB (baseline DDP), 31.4 GB (P_os), 16.6 GB (P_os+g), 1.9 GB
     * (P_os+g+p), GB = 1e9. Tolerance 0.05 GB: the figure prints one decimal. */
    ParoStateSizes z = {64, 8, 7.5e9, 7.5e9, 2, 2, 12};
    const char *names[] = {"ddp", "zero-1", "zero-2", "zero-3"};
    const double want_gb[] = {120.0, 31.4, 16.6, 1.9};
    for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
        const ParoStrategy *s = paro_strategy_lookup(names[i]);
        ck_assert_ptr_nonnull(s);
        ParoStateMemory m = paro_strategy_memory(s, &z);
        double gb = (m.params + m.grads + m.optimizer) / 1e9;
        ck_assert_msg(fabs(gb - want_gb[i]) <= 0.05, "%s: %.3f GB, want %.1f", names[i], gb,
                      want_gb[i]);
    }
}
END_TEST

START_TEST(strategy_effective_rule_keeps_fourteen)
{
    /* PaRO (Wu et al.): "we can eliminate 13 out of the 27 possible combinations". */
    const char *kept = "NNN NNI NNG NII NIG NGG INI ING III IIG IGG GNG GIG GGG";
    int n_triples = 0, n_effective = 0;
    for (guint i = 0; i < paro_strategy_n_all(); i++) {
        const ParoStrategy *s = paro_strategy_get(i);
        if (s->kind != PARO_STRATEGY_TRIPLE)
            continue;
        n_triples++;
        gboolean effective = paro_strategy_is_effective(s);
        n_effective += effective;
        ck_assert_msg(effective == (strstr(kept, s->name) != NULL), "%s", s->name);
    }
    ck_assert_int_eq(n_triples, 27);
    ck_assert_int_eq(n_effective, 14);
}
END_TEST

START_TEST(strategy_aliases)
{
    ck_assert_str_eq(paro_strategy_lookup("ddp")->name, "NNN");
    ck_assert_str_eq(paro_strategy_lookup("zero-1")->name, "NNG");
    ck_assert_str_eq(paro_strategy_lookup("zero-2")->name, "NGG");
    ck_assert_str_eq(paro_strategy_lookup("zero-3")->name, "GGG");
    ck_assert_str_eq(paro_strategy_lookup("fsdp-full")->name, "GGG");
    ck_assert_str_eq(paro_strategy_lookup("mics")->name, "III");
    ck_assert_str_eq(paro_strategy_lookup("fsdp-hybrid")->name, "III");
    ck_assert_str_eq(paro_strategy_lookup("fsdp-hybrid-zero2")->name, "fsdp-hybrid-zero2");
    ck_assert_str_eq(paro_strategy_lookup("nig")->name, "NIG");
    ck_assert_ptr_null(paro_strategy_lookup("zero-4"));
}
END_TEST

/* ---- hand derivation of the traffic of each triple ---- */

typedef struct {
    gint64 n, m;
    double psi, psi_t, A;
} Case;

/* Case 1: the PaRO paper's cluster shape with partial training and accumulation.
 * Case 2: 2 groups of 4, full training, no accumulation. */
static const Case cases[] = {
    {32, 8, 7e9, 7e9 / 16, 10},
    {8, 4, 1e9, 1e9, 1},
};

/* Bytes one GPU sends in AllGather/ReduceScatter (ag) or AllReduce (ar) over k GPUs. */
static double ag(double k, double S)
{
    return (k - 1) / k * S;
}
static double ar(double k, double S)
{
    return 2 * (k - 1) / k * S;
}

/* Expected (intra, inter) bytes per GPU per global step, written per triple.
 * P = 2*Psi (bf16 parameters), G = 2*Psi' (gradients), U = 2*Psi' (updated parameters).
 * Per micro-step: p = I gathers intra twice, p = G gathers globally twice (intra ag(m,P) +
 * inter ag(g,P/m) each); g = I reduce-scatters intra, g = G globally. Then the (g, os)
 * gradient sync and the (os, p) parameter sync of docs/strategies.md. */
static void expected(const char *name, const Case *c, double *intra, double *inter)
{
    double m = (double)c->m, g = (double)(c->n / c->m), A = c->A;
    double P = 2 * c->psi, G = 2 * c->psi_t, U = 2 * c->psi_t;
    double pI = A * 2 * ag(m, P);                              /* p = I gathering */
    double pGa = A * 2 * ag(m, P), pGe = A * 2 * ag(g, P / m); /* p = G gathering */
    double gI = A * ag(m, G);                                  /* g = I reduce-scatter */
    double gGa = A * ag(m, G), gGe = A * ag(g, G / m);         /* g = G reduce-scatter */
    struct {
        const char *name;
        double intra, inter;
    } rows[] = {
        /* p = N */
        {"NNN", 2 * ag(m, G), ar(g, G / m)},
        {"NNI", ag(m, G) + ag(m, U), ar(g, G / m)},
        {"NNG", ag(m, G) + ag(m, U), ag(g, G / m) + ag(g, U / m)},
        {"NIN", gI + ag(m, G), ar(g, G / m)},
        {"NII", gI + ag(m, U), ar(g, G / m)},
        {"NIG", gI + ag(m, U), ag(g, G / m) + ag(g, U / m)},
        {"NGN", gGa + ag(m, G), gGe + ag(g, G / m)},
        {"NGI", gGa + ag(m, U), gGe + ag(g, G / m)},
        {"NGG", gGa + ag(m, U), gGe + ag(g, U / m)},
        /* p = I */
        {"INN", pI + 2 * ag(m, G), ar(g, G / m)},
        {"INI", pI + ag(m, G), ar(g, G / m)},
        {"ING", pI + ag(m, G), ag(g, G / m) + ag(g, U / m)},
        {"IIN", pI + gI + ag(m, G), ar(g, G / m)},
        {"III", pI + gI, ar(g, G / m)},
        {"IIG", pI + gI, ag(g, G / m) + ag(g, U / m)},
        {"IGN", pI + gGa + ag(m, G), gGe + ag(g, G / m)},
        {"IGI", pI + gGa, gGe + ag(g, G / m)},
        {"IGG", pI + gGa, gGe + ag(g, U / m)},
        /* p = G */
        {"GNN", pGa + 2 * ag(m, G), pGe + ar(g, G / m)},
        {"GNI", pGa + ag(m, G), pGe + ar(g, G / m)},
        {"GNG", pGa + ag(m, G), pGe + ag(g, G / m)},
        {"GIN", pGa + gI + ag(m, G), pGe + ar(g, G / m)},
        {"GII", pGa + gI, pGe + ar(g, G / m)},
        {"GIG", pGa + gI, pGe + ag(g, G / m)},
        {"GGN", pGa + gGa + ag(m, G), pGe + gGe + ag(g, G / m)},
        {"GGI", pGa + gGa, pGe + gGe + ag(g, G / m)},
        {"GGG", pGa + gGa, pGe + gGe},
    };
    for (guint i = 0; i < G_N_ELEMENTS(rows); i++)
        if (strcmp(rows[i].name, name) == 0) {
            *intra = rows[i].intra;
            *inter = rows[i].inter;
            return;
        }
    ck_abort_msg("no hand derivation for %s", name);
}

static void measured(const ParoStrategy *s, const Case *c, double *intra, double *inter)
{
    ParoStateSizes z = {c->n, c->m, c->psi, c->psi_t, 2, 2, 12};
    ParoCommModel cm = {.n = c->n,
                        .m = c->m,
                        .gpus_per_node = c->m,
                        .intra_Bps = 1,
                        .inter_Bps = 1,
                        .algorithm = PARO_ALGO_RING,
                        .chunks = 1};
    g_autoptr(GArray) calls = g_array_new(FALSE, FALSE, sizeof(ParoCollCall));
    paro_strategy_collectives(s, &z, calls);
    *intra = *inter = 0;
    for (guint i = 0; i < calls->len; i++) {
        const ParoCollCall *call = &g_array_index(calls, ParoCollCall, i);
        double times = paro_phase_is_per_micro_step(call->phase) ? c->A : 1;
        double a, e;
        paro_coll_traffic(&cm, call->op, call->scope, call->size_bytes, &a, &e);
        *intra += times * a;
        *inter += times * e;
    }
}

START_TEST(strategy_traffic_of_all_triples)
{
    for (guint ci = 0; ci < G_N_ELEMENTS(cases); ci++) {
        const Case *c = &cases[ci];
        for (guint i = 0; i < paro_strategy_n_all(); i++) {
            const ParoStrategy *s = paro_strategy_get(i);
            if (s->kind != PARO_STRATEGY_TRIPLE)
                continue;
            double want_a, want_e, got_a, got_e;
            expected(s->name, c, &want_a, &want_e);
            measured(s, c, &got_a, &got_e);
            /* Tolerance: 1e-12 relative; sums of a few terms of ~1e10 bytes. */
            ck_assert_msg(fabs(got_a - want_a) <= 1e-12 * want_a + 1e-3,
                          "case %u %s intra %.17g want %.17g", ci, s->name, got_a, want_a);
            ck_assert_msg(fabs(got_e - want_e) <= 1e-12 * want_e + 1e-3,
                          "case %u %s inter %.17g want %.17g", ci, s->name, got_e, want_e);
        }
    }
}
END_TEST

START_TEST(strategy_memory_of_all_triples)
{
    /* Expectation: b_p*Psi/d(p) + b_g*Psi'/d(g) + K*Psi'/d(os) per GPU, d = 1, m, n, for
     * each letter; PaRO's memory table for 7B, n = 32, m = 8 (paro.md section 2.2:
     * NIG 18.4 GB, IIG 6.1, GIG 4.8, ING 2.8 with Psi' = Psi/16). */
    for (guint ci = 0; ci < G_N_ELEMENTS(cases); ci++) {
        const Case *c = &cases[ci];
        ParoStateSizes z = {c->n, c->m, c->psi, c->psi_t, 2, 2, 12};
        const double d[] = {1, (double)c->m, (double)c->n};
        for (guint i = 0; i < paro_strategy_n_all(); i++) {
            const ParoStrategy *s = paro_strategy_get(i);
            if (s->kind != PARO_STRATEGY_TRIPLE)
                continue;
            ParoStateMemory mem = paro_strategy_memory(s, &z);
            ck_assert_double_eq_tol(mem.params, 2 * c->psi / d[s->p], 1e-3);
            ck_assert_double_eq_tol(mem.grads, 2 * c->psi_t / d[s->g], 1e-3);
            ck_assert_double_eq_tol(mem.optimizer, 12 * c->psi_t / d[s->os], 1e-3);
        }
    }
    const Case *c = &cases[0];
    ParoStateSizes z = {c->n, c->m, c->psi, c->psi_t, 2, 2, 12};
    ParoStateSizes full = {32, 8, 7e9, 7e9, 2, 2, 12};
    ParoStateMemory nig = paro_strategy_memory(paro_strategy_lookup("NIG"), &full);
    ParoStateMemory iig = paro_strategy_memory(paro_strategy_lookup("IIG"), &full);
    ParoStateMemory ing = paro_strategy_memory(paro_strategy_lookup("ING"), &z);
    /* Tolerance 0.05 GB: the table prints one decimal. */
    ck_assert_double_eq_tol((nig.params + nig.grads + nig.optimizer) / 1e9, 18.4, 0.05);
    ck_assert_double_eq_tol((iig.params + iig.grads + iig.optimizer) / 1e9, 6.1, 0.05);
    ck_assert_double_eq_tol((ing.params + ing.grads + ing.optimizer) / 1e9, 2.8, 0.05);
}
END_TEST

START_TEST(strategy_zero_pp_and_fsdp_hsz)
{
    /* ZeRO++ (hpZ): parameters b_p*Psi/n + b_p*Psi/m; forward AG global, backward AG
     * intra, gradients RS global. FSDP hybrid-shard-zero2: NII's traffic plus one
     * AllGather(intra, b_p*Psi) per micro-step. */
    const Case *c = &cases[1];
    ParoStateSizes z = {c->n, c->m, c->psi, c->psi_t, 2, 2, 12};
    ParoStateMemory zpp = paro_strategy_memory(paro_strategy_lookup("zero++"), &z);
    ck_assert_double_eq(zpp.params, 2 * c->psi / 8 + 2 * c->psi / 4);
    double a, e, na, ne;
    measured(paro_strategy_lookup("zero++"), c, &a, &e);
    double m = 4, g = 2, P = 2 * c->psi, G = 2 * c->psi_t;
    ck_assert_double_eq_tol(a, ag(m, P) + ag(m, P) + ag(m, G), 1e-3);
    ck_assert_double_eq_tol(e, ag(g, P / m) + ag(g, G / m), 1e-3);
    measured(paro_strategy_lookup("fsdp-hybrid-zero2"), c, &a, &e);
    measured(paro_strategy_lookup("NII"), c, &na, &ne);
    ck_assert_double_eq_tol(a, na + ag(m, P), 1e-3);
    ck_assert_double_eq_tol(e, ne, 1e-3);
}
END_TEST

static Suite *strategy_suite(void)
{
    Suite *s = suite_create("strategy");
    TCase *tc = tcase_create("semantics");
    tcase_add_test(tc, strategy_zero_paper_figure);
    tcase_add_test(tc, strategy_effective_rule_keeps_fourteen);
    tcase_add_test(tc, strategy_aliases);
    tcase_add_test(tc, strategy_traffic_of_all_triples);
    tcase_add_test(tc, strategy_memory_of_all_triples);
    tcase_add_test(tc, strategy_zero_pp_and_fsdp_hsz);
    suite_add_tcase(s, tc);
    return s;
}

PARO_CHECK_MAIN(strategy_suite)
