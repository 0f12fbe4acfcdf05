/* SPDX-License-Identifier: MIT */
/* What the plot scripts cannot compute themselves: a sweep's winner per cell and its
 * margin, and the names a script should draw a line for. */
#include "plot/plot.h"

#include <math.h>
#include <string.h>

#include "core/error.h"
#include "plot/table.h"

/* Index of @value in @seen, appended when new. */
static guint intern(GPtrArray *seen, const char *value)
{
    for (guint i = 0; i < seen->len; i++)
        if (strcmp(g_ptr_array_index(seen, i), value) == 0)
            return i;
    g_ptr_array_add(seen, g_strdup(value));
    return seen->len - 1;
}

static char *join_spaced(GPtrArray *names)
{
    g_autoptr(GString) s = g_string_new(NULL);
    for (guint i = 0; i < names->len; i++)
        g_string_append_printf(s, "%s%s", i ? " " : "", (char *)g_ptr_array_index(names, i));
    return g_string_free(g_steal_pointer(&s), FALSE);
}

char *paro_plot_distinct(const char *csv, const char *column, GError **error)
{
    g_autoptr(ParoTable) t = paro_table_read(csv, ',', error);
    if (t == NULL)
        return NULL;
    int c = paro_table_column(t, column, error);
    if (c < 0)
        return NULL;
    g_autoptr(GPtrArray) seen = g_ptr_array_new_with_free_func(g_free);
    for (guint r = 0; r < t->rows->len; r++)
        intern(seen, paro_table_field(t, r, c));
    return join_spaced(seen);
}

/* The varied axes of a sweep CSV are the columns between "point" and "rank". */
static int axis_column(const ParoTable *t, const char *wanted, int nth, GError **error)
{
    int first = 1, rank = paro_table_column(t, "rank", error);
    if (rank < 0)
        return -1;
    if (t->header[0] == NULL || strcmp(t->header[0], "point") != 0) {
        paro_config_error_set(error, PARO_CONFIG_ERROR_MISSING_KEY, t->path, 1, 1,
                              "not a sweep: the first column should be 'point'");
        return -1;
    }
    if (wanted) {
        for (int c = first; c < rank; c++)
            if (strcmp(t->header[c], wanted) == 0)
                return c;
        paro_config_error_set(error, PARO_CONFIG_ERROR_MISSING_KEY, t->path, 1, 1,
                              "'%s' is not a varied axis of this sweep", wanted);
        return -1;
    }
    if (rank - first != 2) {
        paro_config_error_set(error, PARO_CONFIG_ERROR_CONSTRAINT, t->path, 1, 1,
                              "the sweep varies %d axes: name the map's two with --x and --y",
                              rank - first);
        return -1;
    }
    return first + nth;
}

gboolean paro_plot_best_map(const char *sweep_csv, const char *x_axis, const char *y_axis,
                            GString *tsv, char **winners, char **x_name, char **y_name,
                            GError **error)
{
    g_autoptr(ParoTable) t = paro_table_read(sweep_csv, ',', error);
    if (t == NULL)
        return FALSE;
    int cx = axis_column(t, x_axis, 0, error);
    int cy = cx < 0 ? -1 : axis_column(t, y_axis, 1, error);
    if (cx >= 0 && cx == cy) {
        /* said "a third axis varies too" (issue #16) */
        paro_config_error_set(error, PARO_CONFIG_ERROR_CONSTRAINT, t->path, 1, 1,
                              "--x and --y name the same axis '%s': a map needs two", x_axis);
        return FALSE;
    }
    int cpoint = 0, cname = -1, cfits = -1, ctime = -1;
    if (cy < 0 || (cname = paro_table_column(t, "name", error)) < 0 ||
        (cfits = paro_table_column(t, "fits", error)) < 0 ||
        (ctime = paro_table_column(t, "time_step", error)) < 0)
        return FALSE;
    /* tight rows (decision 84) win only where none fits with margin, as run ranks them;
     * a sweep written before the column has none */
    int ctight = paro_table_column(t, "tight", NULL);

    g_autoptr(GPtrArray) xs = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GPtrArray) ys = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GHashTable) cells = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_string_append(tsv, "# x_index\ty_index\twinner_index\tmargin\tx_value\ty_value\twinner\n");
    /* Rows come per point in rank order: fitting strategies first (with margin, then tight),
     * fastest first. */
    for (guint r = 0; r < t->rows->len;) {
        const char *point = paro_table_field(t, r, cpoint);
        guint end = r;
        while (end < t->rows->len && strcmp(paro_table_field(t, end, cpoint), point) == 0)
            end++;
        double best = NAN, second = NAN;
        const char *winner = "OOM";
        int winner_tight = 2; /* none yet; the margin is to the runner-up of the same kind */
        for (guint k = r; k < end; k++) {
            if (strcmp(paro_table_field(t, k, cfits), "true") != 0)
                continue;
            int tight = ctight >= 0 && strcmp(paro_table_field(t, k, ctight), "true") == 0;
            if (tight > winner_tight)
                continue;
            if (tight < winner_tight) {
                winner_tight = tight;
                best = second = NAN;
            }
            double time;
            if (!paro_table_number(t, k, ctime, &time, error))
                return FALSE;
            if (isnan(best) || time < best) {
                second = best;
                best = time;
                winner = paro_table_field(t, k, cname);
            } else if (isnan(second) || time < second) {
                second = time;
            }
        }
        const char *x = paro_table_field(t, r, cx), *y = paro_table_field(t, r, cy);
        guint xi = intern(xs, x), yi = intern(ys, y);
        char *key = g_strdup_printf("%u,%u", xi, yi);
        if (g_hash_table_contains(cells, key)) {
            paro_config_error_set(error, PARO_CONFIG_ERROR_CONSTRAINT, t->path,
                                  g_array_index(t->lines, int, r), 1,
                                  "point %s repeats the cell (%s, %s): a third axis varies too; "
                                  "fix it with --set",
                                  point, x, y);
            g_free(key);
            return FALSE;
        }
        g_hash_table_add(cells, key);
        int wi = strcmp(winner, "OOM") == 0 ? -1 : (int)intern(names, winner);
        char margin[G_ASCII_DTOSTR_BUF_SIZE] = "NaN";
        if (!isnan(second))
            g_ascii_formatd(margin, sizeof margin, "%.6f", second / best - 1.0);
        /* one TSV line a cell, whatever the values hold (a sweep value may hold a line
         * break or a tab: CSV quotes it, gnuplot's TSV cannot) */
        g_autofree char *xl = g_strdup(x), *yl = g_strdup(y);
        g_strdelimit(xl, "\t\r\n", ' ');
        g_strdelimit(yl, "\t\r\n", ' ');
        g_string_append_printf(tsv, "%u\t%u\t%d\t%s\t%s\t%s\t%s\n", xi, yi, wi, margin, xl, yl,
                               winner);
        r = end;
    }
    if (names->len == 0)
        g_ptr_array_add(names, g_strdup("none"));
    *winners = join_spaced(names);
    *x_name = g_strdup(t->header[cx]);
    *y_name = g_strdup(t->header[cy]);
    return TRUE;
}
