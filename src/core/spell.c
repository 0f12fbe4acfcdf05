/* SPDX-License-Identifier: MIT */
/* "Did you mean" (spell.h): optimal string alignment distance, as git's and cargo's
 * suggestions use, over two rolling rows and the one before them. */
#include "core/spell.h"

#include <string.h>

guint paro_spell_distance(const char *a, const char *b)
{
    gsize m = strlen(a), n = strlen(b);
    g_autofree guint *rows = g_new0(guint, 3 * (n + 1));
    guint *before = rows, *prev = rows + n + 1, *cur = rows + 2 * (n + 1);
    for (gsize j = 0; j <= n; j++)
        prev[j] = (guint)j;
    for (gsize i = 1; i <= m; i++) {
        cur[0] = (guint)i;
        for (gsize j = 1; j <= n; j++) {
            guint cost = a[i - 1] == b[j - 1] ? 0 : 1;
            guint best = MIN(MIN(prev[j] + 1, cur[j - 1] + 1), prev[j - 1] + cost);
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                best = MIN(best, before[j - 2] + 1);
            cur[j] = best;
        }
        guint *t = before;
        before = prev;
        prev = cur;
        cur = t;
    }
    return prev[n];
}

const char *paro_spell_nearest(const char *word, const char *const *names, guint n)
{
    guint limit = CLAMP((guint)strlen(word) / 3, 1, 3), best = G_MAXUINT;
    const char *nearest = NULL;
    gboolean tie = FALSE;
    for (guint i = 0; i < n; i++) {
        guint d = paro_spell_distance(word, names[i]);
        if (d < best) {
            best = d;
            nearest = names[i];
            tie = FALSE;
        } else if (d == best) {
            tie = TRUE;
        }
    }
    return best <= limit && !tie ? nearest : NULL;
}
