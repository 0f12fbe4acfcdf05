/* SPDX-License-Identifier: MIT */
/* Order statistics (stats.h): a sort and Hyndman and Fan's definition 7 of a percentile.
 * The interpolation is written (1 - f) x[k] + f x[k + 1] rather than x[k] + f (x[k + 1] -
 * x[k]): at f = 1/2 it is then exactly (x[k] + x[k + 1]) / 2, halving being exact in
 * binary floating point, so that the median is the same double the five copies of it that
 * this replaced computed, and their printed tables stay byte for byte the same. */
#include "core/stats.h"

#include <math.h>
#include <stdlib.h>

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void paro_stats_sort(double *values, gsize n)
{
    if (n > 1)
        qsort(values, n, sizeof *values, compare_doubles);
}

double paro_stats_percentile_sorted(const double *sorted, gsize n, double p)
{
    if (n == 0 || !(p >= 0 && p <= 100))
        return NAN;
    double h = (double)(n - 1) * (p / 100);
    gsize k = (gsize)floor(h);
    double f = h - (double)k;
    /* f = 0 returns the value itself: 0 x inf would make an infinite neighbour NaN */
    if (f == 0 || k + 1 >= n)
        return sorted[k];
    return (1 - f) * sorted[k] + f * sorted[k + 1];
}

double paro_stats_percentile(double *values, gsize n, double p)
{
    paro_stats_sort(values, n);
    return paro_stats_percentile_sorted(values, n, p);
}

double paro_stats_median(double *values, gsize n)
{
    return paro_stats_percentile(values, n, 50);
}

double paro_stats_median_array(GArray *values)
{
    g_return_val_if_fail(values != NULL && g_array_get_element_size(values) == sizeof(double), NAN);
    return paro_stats_median((double *)values->data, values->len);
}
