/* SPDX-License-Identifier: MIT */
/* Oracles for the pipeline schedules (pipe/): GPipe and 1F1B against (M+P-1)(t_f+t_b),
 * interleaved against Megatron's (P-1)/(vM), the modular breadth-first loop against the
 * lga.md validation case B-V6, the activations each device holds, the p2p cost and count,
 * the programs themselves, and interleaved modules of unequal times by hand. Times are
 * plain picoseconds: the schedules are exact in integers, so makespans are compared
 * exactly. */
#include <glib.h>

#include "check-main.h"
#include "core/error.h"
#include "pipe/pipe-private.h"

/* Uniform modules: every module takes @f forward and @b backward. */
typedef struct {
    ParoPipeSpec spec;
    ParoTime *f, *b;
} Case;

static Case make(ParoPipeSchedule schedule, gint64 P, gint64 v, gint64 M, ParoTime f, ParoTime b)
{
    Case c = {{0}, NULL, NULL};
    gint64 S = P * v;
    c.f = g_new(ParoTime, S);
    c.b = g_new(ParoTime, S);
    for (gint64 s = 0; s < S; s++)
        c.f[s] = f, c.b[s] = b;
    c.spec = (ParoPipeSpec){
        .schedule = schedule,
        .accumulation = schedule == PARO_PIPE_MODULAR ? PARO_PIPE_LAYERED : PARO_PIPE_DEPTH_FIRST,
        .devices = P,
        .chunks = v,
        .micro = M,
        .forward = c.f,
        .backward = c.b,
    };
    return c;
}

static void drop(Case *c)
{
    g_free(c->f);
    g_free(c->b);
}

static ParoPipeResult *run(const Case *c)
{
    g_autoptr(GError) error = NULL;
    ParoPipeResult *r = paro_pipe_simulate(&c->spec, &error);
    ck_assert_msg(r != NULL, "%s", error ? error->message : "");
    return r;
}

static gint64 peak(const ParoPipeResult *r, gint64 d)
{
    return g_array_index(r->peak_in_flight, gint64, d);
}

START_TEST(pipe_gpipe_and_1f1b_closed_form)
{
    /* System: P devices, one module each, M micro-batches, t_f = 3, t_b = 5, no p2p time.
     * Expectation (Huang et al. 2019, GPipe; Narayanan et al. 2021, PipeDream-Flush):
     * makespan = (M + P - 1)(t_f + t_b): micro-batch 0 needs P forwards and P backwards
     * to cross the pipeline, and each device adds M - 1 more of each behind it; ideal =
     * M(t_f + t_b); bubble = (P - 1)/M. 1F1B reorders the work without shortening this
     * critical path. Tolerance on the bubble: 1e-12 (a ratio of exact integers). */
    const gint64 Ps[] = {1, 2, 4, 8}, Ms[] = {1, 2, 4, 8, 13};
    for (int k = 0; k < 2; k++)
        for (guint i = 0; i < G_N_ELEMENTS(Ps); i++)
            for (guint j = 0; j < G_N_ELEMENTS(Ms); j++) {
                gint64 P = Ps[i], M = Ms[j];
                Case c = make(k ? PARO_PIPE_1F1B : PARO_PIPE_GPIPE, P, 1, M, 3, 5);
                g_autoptr(ParoPipeResult) r = run(&c);
                ck_assert_int_eq(r->makespan, (M + P - 1) * 8);
                ck_assert_int_eq(r->ideal, M * 8);
                ck_assert_double_eq_tol(r->bubble, (double)(P - 1) / (double)M, 1e-12);
                drop(&c);
            }
}
END_TEST

START_TEST(pipe_in_flight_1f1b_vs_gpipe)
{
    /* Expectation: 1F1B's device r runs min(P-1-r, M) warm-up forwards, then one more
     * forward before its first backward, and afterwards alternates: it never holds more
     * than min(P - r, M) activations; P on the first device when M >= P (Narayanan et al.
     * 2021). GPipe runs all M forwards first: M on every device. */
    const gint64 P = 4, Ms[] = {2, 4, 8};
    for (guint j = 0; j < G_N_ELEMENTS(Ms); j++) {
        gint64 M = Ms[j];
        Case a = make(PARO_PIPE_1F1B, P, 1, M, 1, 2), g = make(PARO_PIPE_GPIPE, P, 1, M, 1, 2);
        g_autoptr(ParoPipeResult) ra = run(&a);
        g_autoptr(ParoPipeResult) rg = run(&g);
        for (gint64 d = 0; d < P; d++) {
            ck_assert_int_eq(peak(ra, d), MIN(P - d, M));
            ck_assert_int_eq(peak(rg, d), M);
        }
        drop(&a);
        drop(&g);
    }
}
END_TEST

START_TEST(pipe_interleaved_bubble)
{
    /* System: P = 4, a device's stage takes t_f = 12, t_b = 24 per micro-batch, cut into v
     * chunks of 12/v and 24/v; M a multiple of P.
     * Expectation (Narayanan et al. 2021, SC'21 section 2.2): the fill and drain shrink to
     * (P - 1)(t_f + t_b)/v, so makespan = M(t_f + t_b) + (P - 1)(t_f + t_b)/v and bubble =
     * (P - 1)/(v M). In flight on device r: its warm-up 2(P-1-r) + (v-1)P forwards (all
     * vM when M = P) plus the one before its first backward, at most vM. */
    const gint64 P = 4, vs[] = {2, 3, 4}, Ms[] = {4, 8, 12, 16};
    for (guint i = 0; i < G_N_ELEMENTS(vs); i++)
        for (guint j = 0; j < G_N_ELEMENTS(Ms); j++) {
            gint64 v = vs[i], M = Ms[j];
            Case c = make(PARO_PIPE_INTERLEAVED, P, v, M, 12 / v, 24 / v);
            g_autoptr(ParoPipeResult) r = run(&c);
            ck_assert_int_eq(r->makespan, M * 36 + (P - 1) * 36 / v);
            ck_assert_double_eq_tol(r->bubble, (double)(P - 1) / (double)(v * M), 1e-12);
            for (gint64 d = 0; d < P; d++) {
                gint64 want = M == P ? v * M : MIN(2 * (P - 1 - d) + (v - 1) * P + 1, v * M);
                ck_assert_int_eq(peak(r, d), want);
            }
            drop(&c);
        }
}
END_TEST

START_TEST(pipe_modular_bv6)
{
    /* System (lga.md B-V6 and the table of section 5.2): modules dealt round-robin, S =
     * L*P, layered (breadth-first) order, t_f = 1, t_b = 2, no p2p time.
     * Expectation, derived here. M >= P: suppose no device waits after the fill, so device
     * r runs the forward of its chunk c, micro-batch m over [(cM + m + r) t_f, +t_f]. Its
     * input comes from device r-1's chunk c (r > 0), which ends at (cM + m + r) t_f, just
     * in time; or, for r = 0 and c > 0, from device P-1's chunk c-1, which ends at
     * ((c-1)M + m + P) t_f <= (cM + m) t_f exactly when P <= M. So the forwards end at
     * T_F = (L M + P - 1) t_f on device P-1, which then starts the backward sweep, the
     * mirror image (every device has finished its forwards by T_F): makespan =
     * (L M + P - 1)(t_f + t_b). M < P: each loop waits for micro-batch 0 to come round; the
     * chain of its S forwards ends at S t_f, the M - 1 behind it follow, and the backward
     * mirrors it: (S + M - 1)(t_f + t_b).
     * B-V6: P = 8, L = 8, M = 8: 71 x 3 = 213, ideal S M 3 / P = 192, 10.9 %; M = 4:
     * 67 x 3 = 201, ideal 96, 109 %. Both match lga.md, whose list scheduler has the
     * same start rule (max(inputs, end of the device's previous task)), as do the other
     * rows of its section 5.2 table below. */
    const struct {
        gint64 P, L, M, makespan, ideal;
    } rows[] = {
        {4, 1, 4, 21, 12},   {4, 4, 4, 57, 48},     {4, 4, 8, 105, 96}, {8, 4, 8, 117, 96},
        {8, 8, 8, 213, 192}, {16, 8, 16, 429, 384}, {8, 8, 4, 201, 96},
    };
    for (guint i = 0; i < G_N_ELEMENTS(rows); i++) {
        Case c = make(PARO_PIPE_MODULAR, rows[i].P, rows[i].L, rows[i].M, 1, 2);
        g_autoptr(ParoPipeResult) r = run(&c);
        ck_assert_int_eq(r->makespan, rows[i].makespan);
        ck_assert_int_eq(r->ideal, rows[i].ideal);
        /* Layered: every device holds all L*M activations at the turn (lga.md 4.4). */
        ck_assert_int_eq(peak(r, 0), rows[i].L * rows[i].M);
        drop(&c);
    }
    Case c = make(PARO_PIPE_MODULAR, 8, 8, 8, 1, 2);
    g_autoptr(ParoPipeResult) r = run(&c);
    ck_assert_double_eq_tol(r->bubble, 21.0 / 192.0, 1e-12);
    drop(&c);
}
END_TEST

START_TEST(pipe_gpipe_p2p_adds_two_fills)
{
    /* System: GPipe, uniform t_f = 3, t_b = 5, each hop between devices takes c = 7.
     * Expectation, derived: F(r, m) starts at max(end F(r-1, m) + c, end F(r, m-1)); by
     * induction both are t_f (m + r) + r c, so F(r, m) ends at t_f (m + r + 1) + r c and
     * the forwards end at T_F = t_f (M + P - 1) + (P - 1) c. The backward wave is the
     * mirror image starting at T_F on device P-1 (which never sends to itself): B(r, m)
     * ends at T_F + t_b (m + P - r) + (P - 1 - r) c. Device 0's last backward ends at
     * (M + P - 1)(t_f + t_b) + 2 (P - 1) c: p2p adds 2 (P - 1) c, for any M. */
    const gint64 Ps[] = {1, 2, 4, 8}, Ms[] = {1, 3, 8};
    for (guint i = 0; i < G_N_ELEMENTS(Ps); i++)
        for (guint j = 0; j < G_N_ELEMENTS(Ms); j++) {
            gint64 P = Ps[i], M = Ms[j];
            Case c = make(PARO_PIPE_GPIPE, P, 1, M, 3, 5);
            c.spec.p2p_latency = 7;
            g_autoptr(ParoPipeResult) r = run(&c);
            ck_assert_int_eq(r->makespan, (M + P - 1) * 8 + 2 * (P - 1) * 7);
            drop(&c);
        }
}
END_TEST

START_TEST(pipe_1f1b_p2p_round_trips)
{
    /* System: 1F1B, P = 2, M = 3, t_f = 1, t_b = 2, c = 10 per hop.
     * Expectation, traced by hand: device 0 runs F0 F1 B0 F2 B1 B2, device 1 F0 B0 F1 B1
     * F2 B2. D0: F0 [0,1], F1 [1,2]. D1: F0 [11,12], B0 [12,14], F1 [14,15], B1 [15,17].
     * D0: B0 (gradient at 24) [24,26], F2 [26,27], B1 (gradient at 27) [27,29]. D1: F2
     * (at 37) [37,38], B2 [38,40]. D0: B2 (at 50) [50,52]. Makespan 52 = 12 + 4c: 1F1B's
     * fixed order puts a round trip between B0 and F2 on device 0, which GPipe (12 + 2c
     * = 32) does not have. */
    Case c = make(PARO_PIPE_1F1B, 2, 1, 3, 1, 2);
    c.spec.p2p_latency = 10;
    c.spec.timeline = TRUE;
    g_autoptr(ParoPipeResult) r = run(&c);
    ck_assert_int_eq(r->makespan, 52);
    const ParoPipeTask *t = &g_array_index(r->timeline, ParoPipeTask, 3); /* D0's F2 */
    ck_assert(t->device == 0 && t->kind == PARO_PIPE_FORWARD && t->micro == 2);
    ck_assert_int_eq(t->start, 26);
    drop(&c);
}
END_TEST

START_TEST(pipe_modular_p2p_when_m_at_most_p)
{
    /* System: layered modular, P = 8, L = 8 (S = 64), t_f = 1, t_b = 2, c = 3 per hop,
     * M = 4 and M = 8.
     * Expectation, derived: with M <= P a device finishes a chunk's M forwards (M t_f)
     * before micro-batch 0 comes back round the loop (P t_f + P c), so micro-batch 0's chain
     * is critical: S forwards and S - 1 hops, S t_f + (S - 1) c, and the M - 1 micro-batches
     * behind it end (M - 1) t_f later without waiting: T_F = (S + M - 1) t_f + (S - 1) c.
     * The last device starts the backward sweep then, its mirror image: makespan =
     * (S + M - 1)(t_f + t_b) + 2 (S - 1) c = 201 + 378 = 579 (M = 4), 213 + 378 = 591 (M = 8).
     * (With M > P the slack of M - P tasks per loop hides part of the latency.) */
    const gint64 Ms[] = {4, 8}, want[] = {579, 591};
    for (guint i = 0; i < G_N_ELEMENTS(Ms); i++) {
        Case c = make(PARO_PIPE_MODULAR, 8, 8, Ms[i], 1, 2);
        c.spec.p2p_latency = 3;
        g_autoptr(ParoPipeResult) r = run(&c);
        ck_assert_int_eq(r->makespan, want[i]);
        drop(&c);
    }
}
END_TEST

START_TEST(pipe_p2p_messages_per_placement)
{
    /* Expectation: each of the S - 1 module boundaries carries one activation forward and
     * one gradient backward per micro-batch: 2 M (S - 1) transfers. Placement s -> s % P
     * (gpipe and 1f1b: S = P, one module each; interleaved and modular: S = vP) puts
     * modules s and s + 1 on different devices whenever P > 1, so all of them are network
     * messages; with P = 1 none is. Bytes = messages x bytes per message. One message
     * takes latency + bytes / bandwidth: 1 us + 1 MB / (100 GB/s) = 11 us. */
    const struct {
        ParoPipeSchedule schedule;
        gint64 P, v, M;
    } rows[] = {
        {PARO_PIPE_GPIPE, 4, 1, 8},       {PARO_PIPE_1F1B, 8, 1, 3},
        {PARO_PIPE_INTERLEAVED, 4, 3, 8}, {PARO_PIPE_MODULAR, 4, 4, 5},
        {PARO_PIPE_MODULAR, 1, 6, 5},     {PARO_PIPE_GPIPE, 1, 1, 5},
    };
    for (guint i = 0; i < G_N_ELEMENTS(rows); i++) {
        Case c = make(rows[i].schedule, rows[i].P, rows[i].v, rows[i].M, 2, 4);
        c.spec.p2p_latency = 1000000;
        c.spec.p2p_bytes = 1e6;
        c.spec.p2p_bandwidth_Bps = 100e9;
        g_autoptr(ParoPipeResult) r = run(&c);
        gint64 S = rows[i].P * rows[i].v;
        gint64 want = rows[i].P > 1 ? 2 * rows[i].M * (S - 1) : 0;
        ck_assert_int_eq(r->p2p_messages, want);
        ck_assert_double_eq_tol(r->p2p_bytes, (double)want * 1e6, 0.5);
        ck_assert_int_eq(r->p2p_time, 11000000);
        drop(&c);
    }
}
END_TEST

START_TEST(pipe_uneven_stages_bottleneck)
{
    /* System: GPipe, P = 4, stage times f = {1, 2, 4, 1}, b = {2, 4, 8, 2}, M = 5.
     * Expectation: the forwards are a flow shop of M identical jobs, whose last job leaves
     * the last machine at sum f + (M - 1) max f (the critical path spends its M - 1 extra
     * jobs on the slowest machine); the backwards likewise from there: makespan =
     * 8 + 4 x 4 + 16 + 4 x 8 = 72. Ideal = the busiest device, M (4 + 8) = 60; bubble 0.2. */
    const ParoTime f[] = {1, 2, 4, 1}, b[] = {2, 4, 8, 2};
    ParoPipeSpec spec = {.schedule = PARO_PIPE_GPIPE,
                         .devices = 4,
                         .chunks = 1,
                         .micro = 5,
                         .forward = f,
                         .backward = b};
    g_autoptr(ParoPipeResult) r = paro_pipe_simulate(&spec, NULL);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->makespan, 72);
    ck_assert_int_eq(r->ideal, 60);
    ck_assert_int_eq(g_array_index(r->busy, ParoTime, 0), 15);
    ck_assert_double_eq_tol(r->bubble, 0.2, 1e-12);
}
END_TEST

START_TEST(pipe_interleaved_uneven_modules)
{
    /* System: interleaved, P = 2, v = 2, M = 2, modules of 1, 2, 2, 1 layers at one unit a
     * layer forward and two backward: f = {1, 2, 2, 1}, b = {2, 4, 4, 2}; module s on
     * device s mod 2 (device 0: modules 0 and 2, device 1: modules 1 and 3); no p2p time.
     * Expectation, by hand: with M = P every forward comes first (Megatron's warm-up is all
     * vM steps), in the order F(c0, m0) F(c0, m1) F(c1, m0) F(c1, m1), then the backwards
     * B(c1, m0) B(c1, m1) B(c0, m0) B(c0, m1). Device 0: F(0,0) 0-1, F(0,1) 1-2; device 1:
     * F(1,0) 1-3, F(1,1) 3-5; device 0: F(2,0) 3-5, F(2,1) 5-7; device 1: F(3,0) 5-6,
     * F(3,1) 7-8, B(3,0) 8-10, B(3,1) 10-12; device 0: B(2,0) 10-14, B(2,1) 14-18; device
     * 1: B(1,0) 14-18, B(1,1) 18-22; device 0: B(0,0) 18-20, B(0,1) 22-24. Makespan 24;
     * each device busy 2 (1 + 2 + 2 + 4) = 18 = the ideal; bubble 24/18 - 1 = 1/3; each
     * device holds its 4 (module, micro-batch) activations at once after its forwards. */
    const ParoTime f[] = {1, 2, 2, 1}, b[] = {2, 4, 4, 2};
    ParoPipeSpec spec = {.schedule = PARO_PIPE_INTERLEAVED,
                         .devices = 2,
                         .chunks = 2,
                         .micro = 2,
                         .forward = f,
                         .backward = b,
                         .timeline = TRUE};
    g_autoptr(ParoPipeResult) r = paro_pipe_simulate(&spec, NULL);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->makespan, 24);
    ck_assert_int_eq(g_array_index(r->busy, ParoTime, 0), 18);
    ck_assert_int_eq(g_array_index(r->busy, ParoTime, 1), 18);
    ck_assert_int_eq(r->ideal, 18);
    ck_assert_double_eq_tol(r->bubble, 1.0 / 3.0, 1e-12);
    ck_assert_int_eq(peak(r, 0), 4);
    ck_assert_int_eq(peak(r, 1), 4);
    /* device 1's last forward and device 0's last backward, as derived */
    const ParoPipeTask *t = &g_array_index(r->timeline, ParoPipeTask, 8 + 3);
    ck_assert(t->device == 1 && t->module == 3 && t->micro == 1 && t->kind == PARO_PIPE_FORWARD);
    ck_assert_int_eq(t->start, 7);
    ck_assert_int_eq(t->end, 8);
    t = &g_array_index(r->timeline, ParoPipeTask, 7);
    ck_assert(t->device == 0 && t->module == 0 && t->micro == 1 && t->kind == PARO_PIPE_BACKWARD);
    ck_assert_int_eq(t->start, 22);
}
END_TEST

START_TEST(pipe_programs_cover_every_task)
{
    /* Every device's program holds each of its 2vM tasks exactly once, all on modules it
     * owns (s % P == device), forwards of a module in micro-batch order. */
    const struct {
        ParoPipeSchedule schedule;
        ParoPipeAccumulation acc;
        gint64 P, v, M;
    } rows[] = {
        {PARO_PIPE_GPIPE, PARO_PIPE_DEPTH_FIRST, 5, 1, 7},
        {PARO_PIPE_1F1B, PARO_PIPE_DEPTH_FIRST, 5, 1, 3},
        {PARO_PIPE_INTERLEAVED, PARO_PIPE_DEPTH_FIRST, 4, 3, 8},
        {PARO_PIPE_INTERLEAVED, PARO_PIPE_DEPTH_FIRST, 4, 2, 4},
        {PARO_PIPE_MODULAR, PARO_PIPE_LAYERED, 3, 4, 5},
        {PARO_PIPE_MODULAR, PARO_PIPE_DEPTH_FIRST, 3, 4, 5},
    };
    for (guint i = 0; i < G_N_ELEMENTS(rows); i++) {
        Case c = make(rows[i].schedule, rows[i].P, rows[i].v, rows[i].M, 1, 1);
        c.spec.accumulation = rows[i].acc;
        gint64 S = rows[i].P * rows[i].v, M = rows[i].M;
        g_autofree int *seen = g_new0(int, 2 * S * M);
        for (gint64 d = 0; d < rows[i].P; d++) {
            g_autoptr(GArray) program = paro_pipe_program(&c.spec, d);
            ck_assert_int_eq(program->len, 2 * rows[i].v * M);
            g_autofree gint64 *next_micro = g_new0(gint64, S);
            for (guint k = 0; k < program->len; k++) {
                gint64 id = g_array_index(program, gint64, k), module = (id / M) % S;
                ck_assert_int_eq(module % rows[i].P, d);
                seen[id]++;
                if (id < S * M) {
                    ck_assert_int_eq(id % M, next_micro[module]);
                    next_micro[module]++;
                }
            }
        }
        for (gint64 id = 0; id < 2 * S * M; id++)
            ck_assert_int_eq(seen[id], 1);
        drop(&c);
    }
}
END_TEST

START_TEST(pipe_timeline_respects_dependencies)
{
    /* Every task starts after its inputs (plus c across devices) and after the previous
     * task of its device; the timeline is the same bytes on a second run. */
    Case c = make(PARO_PIPE_INTERLEAVED, 4, 2, 8, 3, 7);
    c.spec.p2p_latency = 2;
    c.spec.timeline = TRUE;
    g_autoptr(ParoPipeResult) r = run(&c);
    g_autoptr(ParoPipeResult) again = run(&c);
    gint64 S = 8, M = 8;
    ck_assert_int_eq(r->timeline->len, 2 * S * M);
    for (guint k = 0; k < r->timeline->len; k++) { /* field by field: the struct has padding */
        const ParoPipeTask *x = &g_array_index(r->timeline, ParoPipeTask, k);
        const ParoPipeTask *y = &g_array_index(again->timeline, ParoPipeTask, k);
        ck_assert(x->device == y->device && x->module == y->module && x->micro == y->micro &&
                  x->kind == y->kind && x->start == y->start && x->end == y->end);
    }
    g_autofree ParoTime *end = g_new0(ParoTime, 2 * S * M);
    for (guint k = 0; k < r->timeline->len; k++) {
        const ParoPipeTask *t = &g_array_index(r->timeline, ParoPipeTask, k);
        end[paro_pipe_task_id(S, M, t->kind, t->module, t->micro)] = t->end;
    }
    for (guint k = 0; k < r->timeline->len; k++) {
        const ParoPipeTask *t = &g_array_index(r->timeline, ParoPipeTask, k);
        if (k > 0 && g_array_index(r->timeline, ParoPipeTask, k - 1).device == t->device)
            ck_assert_int_ge(t->start, g_array_index(r->timeline, ParoPipeTask, k - 1).end);
        ck_assert_int_eq(t->end - t->start, t->kind == PARO_PIPE_FORWARD ? 3 : 7);
        if (t->kind == PARO_PIPE_FORWARD && t->module > 0)
            ck_assert_int_ge(
                t->start,
                end[paro_pipe_task_id(S, M, PARO_PIPE_FORWARD, t->module - 1, t->micro)] + 2);
        if (t->kind == PARO_PIPE_BACKWARD) {
            ck_assert_int_ge(t->start,
                             end[paro_pipe_task_id(S, M, PARO_PIPE_FORWARD, t->module, t->micro)]);
            if (t->module + 1 < S)
                ck_assert_int_ge(
                    t->start,
                    end[paro_pipe_task_id(S, M, PARO_PIPE_BACKWARD, t->module + 1, t->micro)] + 2);
        }
    }
    drop(&c);
}
END_TEST

START_TEST(pipe_split_sums_per_device)
{
    /* 10 ps in 3 chunks: 4 + 3 + 3, the remainder on each device's first chunks. */
    g_autofree ParoTime *t = paro_pipe_split(10, 2, 3);
    const ParoTime want[] = {4, 4, 3, 3, 3, 3}; /* modules 0..5; device = s % 2 */
    for (int s = 0; s < 6; s++)
        ck_assert_int_eq(t[s], want[s]);
}
END_TEST

START_TEST(pipe_bad_specs_are_errors)
{
    /* Each inconsistent spec gives its error code and no result. */
    const struct {
        ParoPipeSchedule schedule;
        ParoPipeAccumulation acc;
        gint64 P, v, M;
        int code;
    } rows[] = {
        {PARO_PIPE_GPIPE, PARO_PIPE_DEPTH_FIRST, 4, 2, 4, PARO_CONFIG_ERROR_CONSTRAINT},
        {PARO_PIPE_1F1B, PARO_PIPE_DEPTH_FIRST, 4, 2, 4, PARO_CONFIG_ERROR_CONSTRAINT},
        {PARO_PIPE_INTERLEAVED, PARO_PIPE_DEPTH_FIRST, 4, 2, 6, PARO_CONFIG_ERROR_CONSTRAINT},
        {PARO_PIPE_1F1B, PARO_PIPE_LAYERED, 4, 1, 4, PARO_CONFIG_ERROR_CONSTRAINT},
        {PARO_PIPE_INTERLEAVED, PARO_PIPE_LAYERED, 4, 2, 4, PARO_CONFIG_ERROR_CONSTRAINT},
        {PARO_PIPE_MODULAR, PARO_PIPE_LAYERED, 4, 2, 0, PARO_CONFIG_ERROR_RANGE},
        {PARO_PIPE_MODULAR, PARO_PIPE_LAYERED, 0, 2, 4, PARO_CONFIG_ERROR_RANGE},
        {PARO_PIPE_MODULAR, PARO_PIPE_LAYERED, 4096, 4096, 4096, PARO_CONFIG_ERROR_RANGE},
    };
    ParoTime one = 1;
    for (guint i = 0; i < G_N_ELEMENTS(rows); i++) {
        /* Durations are only read after the counts pass, so one value serves. */
        ParoPipeSpec spec = {.schedule = rows[i].schedule,
                             .accumulation = rows[i].acc,
                             .devices = rows[i].P,
                             .chunks = rows[i].v,
                             .micro = rows[i].M,
                             .forward = &one,
                             .backward = &one};
        g_autoptr(GError) error = NULL;
        ck_assert_ptr_null(paro_pipe_simulate(&spec, &error));
        ck_assert_msg(g_error_matches(error, PARO_CONFIG_ERROR, rows[i].code), "row %u: %s", i,
                      error ? error->message : "no error");
    }
    Case c = make(PARO_PIPE_GPIPE, 2, 1, 2, 1, 1);
    c.b[1] = -1;
    g_autoptr(GError) error = NULL;
    ck_assert_ptr_null(paro_pipe_simulate(&c.spec, &error));
    ck_assert(g_error_matches(error, PARO_CONFIG_ERROR, PARO_CONFIG_ERROR_RANGE));
    drop(&c);
}
END_TEST

static Suite *pipe_suite(void)
{
    Suite *s = suite_create("pipe");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, pipe_gpipe_and_1f1b_closed_form);
    tcase_add_test(tc, pipe_in_flight_1f1b_vs_gpipe);
    tcase_add_test(tc, pipe_interleaved_uneven_modules);
    tcase_add_test(tc, pipe_interleaved_bubble);
    tcase_add_test(tc, pipe_modular_bv6);
    tcase_add_test(tc, pipe_gpipe_p2p_adds_two_fills);
    tcase_add_test(tc, pipe_1f1b_p2p_round_trips);
    tcase_add_test(tc, pipe_modular_p2p_when_m_at_most_p);
    tcase_add_test(tc, pipe_p2p_messages_per_placement);
    tcase_add_test(tc, pipe_uneven_stages_bottleneck);
    tcase_add_test(tc, pipe_programs_cover_every_task);
    tcase_add_test(tc, pipe_timeline_respects_dependencies);
    tcase_add_test(tc, pipe_split_sums_per_device);
    tcase_add_test(tc, pipe_bad_specs_are_errors);
    suite_add_tcase(s, tc);
    return s;
}

PARO_CHECK_MAIN(pipe_suite)
