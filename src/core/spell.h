/* SPDX-License-Identifier: MIT */
/* The nearest of a few known names to a mistyped one, for "did you mean" hints. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/**
 * paro_spell_distance:
 * Optimal string alignment distance between @a and @b (insertions, deletions,
 * substitutions and swaps of two neighbours each cost 1), in bytes.
 */
guint paro_spell_distance(const char *a, const char *b);

/**
 * paro_spell_nearest:
 * @word: what was written
 * @names: (array length=n): the known names
 * Returns: (transfer none) (nullable): the known name nearest to @word, if it is within a
 * third of @word's length (at least 1, at most 3 edits) and nearer than any other; else
 * NULL; two names equally near suggest neither.
 */
const char *paro_spell_nearest(const char *word, const char *const *names, guint n);

G_END_DECLS
