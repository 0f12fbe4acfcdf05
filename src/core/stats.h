/* SPDX-License-Identifier: MIT */
/* Order statistics of a sample: the median and percentiles that the calibration fits, the
 * validation tables and the corpus check report. One definition, so that a median printed
 * by `validate` and one recorded by `validate --corpus --record` are the same statistic. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/**
 * paro_stats_sort:
 * Sorts @n doubles ascending, in place. The values must not be NaN (a NaN has no place in
 * an order: callers leave out what was not measured or not predicted).
 */
void paro_stats_sort(double *values, gsize n);

/**
 * paro_stats_percentile_sorted:
 * @sorted: @n values in ascending order (paro_stats_sort)
 * @p: the percentile, 0 to 100
 *
 * The @p-th percentile by linear interpolation between the closest ranks: with
 * h = (n - 1) p / 100, k = floor(h) and f = h - k (0-based ranks), x[k] when f = 0, else
 * (1 - f) x[k] + f x[k + 1]. This is definition 7 of Hyndman and Fan, "Sample quantiles
 * in statistical packages" (The American Statistician 50(4), 1996), the default of R's
 * quantile(), NumPy's percentile() and Excel's PERCENTILE.INC: 0 is the smallest value,
 * 100 the largest, 50 the median (the middle value, or the mean of the two middle ones).
 * Returns: NAN when @n is 0 or @p lies outside [0, 100].
 */
double paro_stats_percentile_sorted(const double *sorted, gsize n, double p);

/** paro_stats_percentile: paro_stats_sort, then paro_stats_percentile_sorted. */
double paro_stats_percentile(double *values, gsize n, double p);

/** paro_stats_median: the 50th percentile of @n values (sorted in place); NAN when @n is 0. */
double paro_stats_median(double *values, gsize n);

/** paro_stats_median_array: paro_stats_median of a GArray of doubles (sorted in place). */
double paro_stats_median_array(GArray *values);

G_END_DECLS
