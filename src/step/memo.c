/* SPDX-License-Identifier: MIT */
#include "step/memo.h"

struct _ParoStepMemo {
    GMutex lock;
    GHashTable *results; /* "context\x1fstrategy\x1fmicro\x1fcompress" -> ParoStepResult */
};

ParoStepMemo *paro_step_memo_new(void)
{
    ParoStepMemo *memo = g_new0(ParoStepMemo, 1);
    g_mutex_init(&memo->lock);
    memo->results = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    return memo;
}

void paro_step_memo_free(ParoStepMemo *memo)
{
    if (memo == NULL)
        return;
    g_hash_table_unref(memo->results);
    g_mutex_clear(&memo->lock);
    g_free(memo);
}

/* The unit separator cannot occur in a strategy name or an override's text. */
static char *key_of(const char *context, const ParoStrategy *strategy,
                    const ParoStepOptions *options)
{
    return g_strdup_printf("%s\x1f%s\x1f%" G_GINT64_FORMAT "\x1f%d", context, strategy->name,
                           options->micro_steps, options->compress ? 1 : 0);
}

gboolean paro_step_memo_lookup(ParoStepMemo *memo, const char *context,
                               const ParoStrategy *strategy, const ParoStepOptions *options,
                               ParoStepResult *out)
{
    g_autofree char *key = key_of(context, strategy, options);
    g_mutex_lock(&memo->lock);
    const ParoStepResult *hit = g_hash_table_lookup(memo->results, key);
    if (hit != NULL) {
        *out = *hit;
        out->strategy = strategy;
    }
    g_mutex_unlock(&memo->lock);
    return hit != NULL;
}

void paro_step_memo_store(ParoStepMemo *memo, const char *context, const ParoStrategy *strategy,
                          const ParoStepOptions *options, const ParoStepResult *result)
{
    g_return_if_fail(result->trace == NULL && result->memory == NULL);
    char *key = key_of(context, strategy, options);
    ParoStepResult *copy = g_memdup2(result, sizeof *result);
    g_mutex_lock(&memo->lock);
    /* another thread may have stored the same result meanwhile: it is the same value */
    g_hash_table_replace(memo->results, key, copy);
    g_mutex_unlock(&memo->lock);
}

guint paro_step_memo_n_entries(ParoStepMemo *memo)
{
    g_mutex_lock(&memo->lock);
    guint n = g_hash_table_size(memo->results);
    g_mutex_unlock(&memo->lock);
    return n;
}
