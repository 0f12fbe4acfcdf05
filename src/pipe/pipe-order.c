/* SPDX-License-Identifier: MIT */
/* The per-device programs of each pipeline schedule: the order in which device r issues
 * its forwards F(s, m) and backwards B(s, m) of module s and micro-batch m. The device
 * runs them strictly in this order (a framework's rank executes a fixed list, it does not
 * pick whatever is ready), which is also the start rule of lga.md section 5.2 and of
 * Fast-LLM's _setup_timeline: a task starts at max(its inputs' arrival, the end of the
 * previous task of its device). Device r holds modules r, r + P, r + 2P, ... (chunk c is
 * module c*P + r), so with one chunk per device module r is simply stage r.
 *
 * gpipe, modular (Huang et al. 2019; Lamy-Poirier 2021): every forward, then every
 * backward, modules in reverse for the backward. Depth-first accumulation orders a
 * device's tasks by micro-batch, then chunk; layered (breadth-first) by chunk, then
 * micro-batch, so each module's gradient is complete after one block of M backwards.
 * With one chunk per device both orders are F(r, 0..M-1), B(r, 0..M-1): GPipe.
 *
 * 1f1b (PipeDream-Flush, Narayanan et al. 2021): w = min(P-1-r, M) warm-up forwards, then
 * M-w pairs (forward w+i, backward i), then the last w backwards. Device r therefore holds
 * at most min(P-r, M) micro-batches' activations.
 *
 * interleaved (Narayanan et al. 2021, SC'21 section 2.2; Megatron-LM's
 * forward_backward_pipelining_with_interleaving): v*M virtual micro-steps; step k runs
 * chunk (k mod P*v) / P (backwards: v-1 minus that) on micro-batch
 * (k / (P*v)) * P + k mod P, so micro-batches go through the chunks in groups of P.
 * Warm-up 2(P-1-r) + (v-1)P forwards (all v*M when M = P), then 1F1B pairs, then the
 * cool-down backwards. M must be a multiple of P, as Megatron-LM required. PyTorch's
 * ScheduleInterleaved1F1B (torch/distributed/pipelining/schedules.py, get_rank_warmup_ops:
 * (v-1) x microbatches_per_round + 2(P-1-r), capped at v*M; torchtitan's, under the fsdp
 * profile: torch_warmup) has no all-forwards case: with M = P the last device runs its first
 * chunk's M forwards and then pairs, holding one micro-batch of its last chunk, where
 * Megatron-LM's holds all M. */
#include "pipe/pipe-private.h"

static void push(GArray *program, const ParoPipeSpec *spec, ParoPipeKind kind, gint64 chunk,
                 gint64 m, gint64 device)
{
    gint64 S = paro_pipe_n_modules(spec);
    gint64 id = paro_pipe_task_id(S, spec->micro, kind,
                                  paro_pipe_module_of(spec->devices, device, chunk), m);
    g_array_append_val(program, id);
}

static void all_forwards_then_backwards(GArray *program, const ParoPipeSpec *spec, gint64 r)
{
    gint64 v = spec->chunks, M = spec->micro;
    gboolean layered = spec->accumulation == PARO_PIPE_LAYERED;
    for (int k = 0; k < 2; k++) {
        ParoPipeKind kind = k == 0 ? PARO_PIPE_FORWARD : PARO_PIPE_BACKWARD;
        for (gint64 outer = 0; outer < (layered ? v : M); outer++)
            for (gint64 inner = 0; inner < (layered ? M : v); inner++) {
                gint64 c = layered ? outer : inner, m = layered ? inner : outer;
                push(program, spec, kind, kind == PARO_PIPE_FORWARD ? c : v - 1 - c, m, r);
            }
    }
}

static void one_f_one_b(GArray *program, const ParoPipeSpec *spec, gint64 r)
{
    gint64 M = spec->micro, warm = MIN(spec->devices - 1 - r, M);
    for (gint64 m = 0; m < warm; m++)
        push(program, spec, PARO_PIPE_FORWARD, 0, m, r);
    for (gint64 i = 0; i < M - warm; i++) {
        push(program, spec, PARO_PIPE_FORWARD, 0, warm + i, r);
        push(program, spec, PARO_PIPE_BACKWARD, 0, i, r);
    }
    for (gint64 m = M - warm; m < M; m++)
        push(program, spec, PARO_PIPE_BACKWARD, 0, m, r);
}

/* Megatron-LM's get_model_chunk_id and the micro-batch of virtual micro-step @k. */
static void virtual_step(const ParoPipeSpec *spec, gint64 k, gboolean forward, gint64 *chunk,
                         gint64 *m)
{
    gint64 P = spec->devices, v = spec->chunks, group = P * v;
    gint64 c = (k % group) / P;
    *chunk = forward ? c : v - 1 - c;
    *m = (k / group) * P + k % P;
}

static void interleaved(GArray *program, const ParoPipeSpec *spec, gint64 r)
{
    gint64 P = spec->devices, v = spec->chunks, total = v * spec->micro;
    gint64 warm =
        spec->micro == P && !spec->torch_warmup ? total : MIN(2 * (P - 1 - r) + (v - 1) * P, total);
    gint64 c, m;
    for (gint64 k = 0; k < warm; k++) {
        virtual_step(spec, k, TRUE, &c, &m);
        push(program, spec, PARO_PIPE_FORWARD, c, m, r);
    }
    for (gint64 i = 0; i < total - warm; i++) {
        virtual_step(spec, warm + i, TRUE, &c, &m);
        push(program, spec, PARO_PIPE_FORWARD, c, m, r);
        virtual_step(spec, i, FALSE, &c, &m);
        push(program, spec, PARO_PIPE_BACKWARD, c, m, r);
    }
    for (gint64 k = total - warm; k < total; k++) {
        virtual_step(spec, k, FALSE, &c, &m);
        push(program, spec, PARO_PIPE_BACKWARD, c, m, r);
    }
}

GArray *paro_pipe_program(const ParoPipeSpec *spec, gint64 device)
{
    g_return_val_if_fail(spec != NULL && device >= 0 && device < spec->devices, NULL);
    GArray *program =
        g_array_sized_new(FALSE, FALSE, sizeof(gint64), (guint)(2 * spec->chunks * spec->micro));
    switch (spec->schedule) {
    case PARO_PIPE_GPIPE:
    case PARO_PIPE_MODULAR:
        all_forwards_then_backwards(program, spec, device);
        break;
    case PARO_PIPE_1F1B:
        one_f_one_b(program, spec, device);
        break;
    case PARO_PIPE_INTERLEAVED:
        interleaved(program, spec, device);
        break;
    }
    g_assert(program->len == (guint)(2 * spec->chunks * spec->micro));
    return program;
}
