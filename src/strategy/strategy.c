/* SPDX-License-Identifier: MIT */
/* The strategy table and the collectives of each strategy (docs/strategies.md).
 *
 * Per micro-step:  forward   p != N: AllGather(scope(p), b_p*Psi)
 *                  backward  p != N: the same again (parameters are freed after use)
 *                  gradients g = I: ReduceScatter(intra, b_g*Psi');
 *                            g = G: ReduceScatter(global, b_g*Psi'); g = N: none
 * Once per step, gradient sync from the g partition to the os partition (S = b_g*Psi'):
 *                  g\os  N                          I                       G
 *                  N     AR(global,S)               RS(intra,S)+AR(inter,S/m)  RS(global,S)
 *                  I     AR(inter,S/m)+AG(intra,S)  AR(inter,S/m)           RS(inter,S/m)
 *                  G     AG(global,S)               AG(inter,S/m)           none
 * then parameter sync from the os partition to the p partition (S = b_p*Psi'):
 *                  os\p  N               I              G
 *                  N     none            none           none
 *                  I     AG(intra,S)     none           none
 *                  G     AG(global,S)    AG(inter,S/m)  none
 * scope(I) = intra, scope(G) = global. ZeRO++: forward AG(global), backward AG(intra) from
 * the secondary copy. FSDP hybrid-shard-zero2: NII plus AG(intra, b_p*Psi) each forward. */
#include "strategy/strategy.h"

#include <string.h>

const char *const paro_phase_names[] = {"forward",   "backward",   "gradient",
                                        "sync_grad", "sync_param", NULL};

#define T(name, p, g, os, ...)                                                                     \
    {                                                                                              \
        name, PARO_STRATEGY_TRIPLE, PARO_PART_##p, PARO_PART_##g, PARO_PART_##os,                  \
        {                                                                                          \
            __VA_ARGS__                                                                            \
        }                                                                                          \
    }

static const ParoStrategy strategies[] = {
    T("NNN", N, N, N, "ddp", NULL),
    T("NNI", N, N, I, NULL),
    T("NNG", N, N, G, "zero-1", NULL),
    T("NIN", N, I, N, NULL),
    T("NII", N, I, I, NULL),
    T("NIG", N, I, G, NULL),
    T("NGN", N, G, N, NULL),
    T("NGI", N, G, I, NULL),
    T("NGG", N, G, G, "zero-2", NULL),
    T("INN", I, N, N, NULL),
    T("INI", I, N, I, NULL),
    T("ING", I, N, G, NULL),
    T("IIN", I, I, N, NULL),
    T("III", I, I, I, "mics", "fsdp-hybrid", NULL),
    T("IIG", I, I, G, NULL),
    T("IGN", I, G, N, NULL),
    T("IGI", I, G, I, NULL),
    T("IGG", I, G, G, NULL),
    T("GNN", G, N, N, NULL),
    T("GNI", G, N, I, NULL),
    T("GNG", G, N, G, NULL),
    T("GIN", G, I, N, NULL),
    T("GII", G, I, I, NULL),
    T("GIG", G, I, G, NULL),
    T("GGN", G, G, N, NULL),
    T("GGI", G, G, I, NULL),
    T("GGG", G, G, G, "zero-3", "fsdp-full", NULL),
    {"zero++", PARO_STRATEGY_ZERO_PP, PARO_PART_G, PARO_PART_G, PARO_PART_G, {"hpz", NULL}},
    {"fsdp-hybrid-zero2",
     PARO_STRATEGY_FSDP_HSZ,
     PARO_PART_N,
     PARO_PART_I,
     PARO_PART_I,
     {"fsdp-hsz", NULL}},
};

guint paro_strategy_n_all(void)
{
    return G_N_ELEMENTS(strategies);
}

const ParoStrategy *paro_strategy_get(guint i)
{
    g_return_val_if_fail(i < G_N_ELEMENTS(strategies), NULL);
    return &strategies[i];
}

const ParoStrategy *paro_strategy_lookup(const char *name)
{
    for (guint i = 0; i < G_N_ELEMENTS(strategies); i++) {
        const ParoStrategy *s = &strategies[i];
        if (g_ascii_strcasecmp(s->name, name) == 0)
            return s;
        for (int j = 0; s->aliases[j]; j++)
            if (g_ascii_strcasecmp(s->aliases[j], name) == 0)
                return s;
    }
    return NULL;
}

gboolean paro_strategy_is_effective(const ParoStrategy *s)
{
    return s->os >= s->p && s->os >= s->g;
}

gboolean paro_strategy_gathers(const ParoStrategy *s)
{
    return s->p != PARO_PART_N || s->kind == PARO_STRATEGY_FSDP_HSZ;
}

double paro_strategy_divisor(ParoPartition part, gint64 n, gint64 m)
{
    switch (part) {
    case PARO_PART_N:
        return 1;
    case PARO_PART_I:
        return (double)m;
    case PARO_PART_G:
        return (double)n;
    }
    g_return_val_if_reached(1);
}

ParoStateMemory paro_strategy_memory(const ParoStrategy *s, const ParoStateSizes *z)
{
    ParoStateMemory mem;
    mem.params = z->param_bytes * z->params / paro_strategy_divisor(s->p, z->n, z->m);
    if (s->kind == PARO_STRATEGY_ZERO_PP)
        mem.params += z->param_bytes * z->params / (double)z->m;
    mem.grads = z->grad_bytes * z->trainable / paro_strategy_divisor(s->g, z->n, z->m);
    mem.optimizer = z->optim_bytes * z->trainable / paro_strategy_divisor(s->os, z->n, z->m);
    return mem;
}

gboolean paro_phase_is_per_micro_step(ParoPhase phase)
{
    return phase == PARO_PHASE_FORWARD || phase == PARO_PHASE_BACKWARD ||
           phase == PARO_PHASE_GRADIENT;
}

static void add(GArray *calls, ParoPhase phase, ParoCollKind op, ParoScope scope, double size)
{
    ParoCollCall call = {phase, op, scope, size};
    g_array_append_val(calls, call);
}

static ParoScope scope_of(ParoPartition part)
{
    return part == PARO_PART_I ? PARO_SCOPE_INTRA : PARO_SCOPE_GLOBAL;
}

static void gradient_sync(ParoPartition g, ParoPartition os, double S, double m, GArray *calls)
{
    const ParoPhase ph = PARO_PHASE_SYNC_GRAD;
    switch (g * 3 + os) {
    case PARO_PART_N * 3 + PARO_PART_N:
        add(calls, ph, PARO_COLL_ALLREDUCE, PARO_SCOPE_GLOBAL, S);
        return;
    case PARO_PART_N * 3 + PARO_PART_I:
        add(calls, ph, PARO_COLL_REDUCESCATTER, PARO_SCOPE_INTRA, S);
        add(calls, ph, PARO_COLL_ALLREDUCE, PARO_SCOPE_INTER, S / m);
        return;
    case PARO_PART_N * 3 + PARO_PART_G:
        add(calls, ph, PARO_COLL_REDUCESCATTER, PARO_SCOPE_GLOBAL, S);
        return;
    case PARO_PART_I * 3 + PARO_PART_N:
        add(calls, ph, PARO_COLL_ALLREDUCE, PARO_SCOPE_INTER, S / m);
        add(calls, ph, PARO_COLL_ALLGATHER, PARO_SCOPE_INTRA, S);
        return;
    case PARO_PART_I * 3 + PARO_PART_I:
        add(calls, ph, PARO_COLL_ALLREDUCE, PARO_SCOPE_INTER, S / m);
        return;
    case PARO_PART_I * 3 + PARO_PART_G:
        add(calls, ph, PARO_COLL_REDUCESCATTER, PARO_SCOPE_INTER, S / m);
        return;
    case PARO_PART_G * 3 + PARO_PART_N:
        add(calls, ph, PARO_COLL_ALLGATHER, PARO_SCOPE_GLOBAL, S);
        return;
    case PARO_PART_G * 3 + PARO_PART_I:
        add(calls, ph, PARO_COLL_ALLGATHER, PARO_SCOPE_INTER, S / m);
        return;
    default: /* G -> G: the gradient is already where the optimizer needs it */
        return;
    }
}

static void parameter_sync(ParoPartition os, ParoPartition p, double S, double m, GArray *calls)
{
    const ParoPhase ph = PARO_PHASE_SYNC_PARAM;
    if (os == PARO_PART_I && p == PARO_PART_N)
        add(calls, ph, PARO_COLL_ALLGATHER, PARO_SCOPE_INTRA, S);
    else if (os == PARO_PART_G && p == PARO_PART_N)
        add(calls, ph, PARO_COLL_ALLGATHER, PARO_SCOPE_GLOBAL, S);
    else if (os == PARO_PART_G && p == PARO_PART_I)
        add(calls, ph, PARO_COLL_ALLGATHER, PARO_SCOPE_INTER, S / m);
    /* otherwise each GPU already updated the parameters it holds */
}

void paro_strategy_collectives(const ParoStrategy *s, const ParoStateSizes *z, GArray *calls)
{
    double param_size = z->param_bytes * z->params, grad_size = z->grad_bytes * z->trainable;
    double m = (double)z->m;
    switch (s->kind) {
    case PARO_STRATEGY_ZERO_PP:
        add(calls, PARO_PHASE_FORWARD, PARO_COLL_ALLGATHER, PARO_SCOPE_GLOBAL, param_size);
        add(calls, PARO_PHASE_BACKWARD, PARO_COLL_ALLGATHER, PARO_SCOPE_INTRA, param_size);
        break;
    case PARO_STRATEGY_FSDP_HSZ:
        add(calls, PARO_PHASE_FORWARD, PARO_COLL_ALLGATHER, PARO_SCOPE_INTRA, param_size);
        break;
    case PARO_STRATEGY_TRIPLE:
        if (s->p != PARO_PART_N) {
            add(calls, PARO_PHASE_FORWARD, PARO_COLL_ALLGATHER, scope_of(s->p), param_size);
            add(calls, PARO_PHASE_BACKWARD, PARO_COLL_ALLGATHER, scope_of(s->p), param_size);
        }
        break;
    }
    if (s->g != PARO_PART_N)
        add(calls, PARO_PHASE_GRADIENT, PARO_COLL_REDUCESCATTER, scope_of(s->g), grad_size);
    gradient_sync(s->g, s->os, grad_size, m, calls);
    parameter_sync(s->os, s->p, z->param_bytes * z->trainable, m, calls);
}

GPtrArray *paro_strategy_list_parse(const char *text, GError **error)
{
    GPtrArray *list = g_ptr_array_new();
    if (text == NULL || strcmp(text, "all") == 0) {
        for (guint i = 0; i < paro_strategy_n_all(); i++)
            g_ptr_array_add(list, (gpointer)paro_strategy_get(i));
        return list;
    }
    g_auto(GStrv) names = g_strsplit(text, ",", -1);
    for (int i = 0; names[i]; i++) {
        const ParoStrategy *s = paro_strategy_lookup(g_strstrip(names[i]));
        if (s == NULL) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "unknown strategy '%s' (a triple such as NIG, or ddp, zero-1, zero-2, "
                        "zero-3, fsdp-full, mics, fsdp-hybrid, fsdp-hybrid-zero2, zero++, or all)",
                        names[i]);
            g_ptr_array_free(list, TRUE);
            return NULL;
        }
        if (!g_ptr_array_find(list, s, NULL))
            g_ptr_array_add(list, (gpointer)s);
    }
    if (list->len == 0) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--strategies names no strategy (a triple such as NIG, an alias, or all)");
        g_ptr_array_free(list, TRUE);
        return NULL;
    }
    return list;
}
