/* SPDX-License-Identifier: MIT */
/* What the plot scripts cannot compute themselves: a sweep's winner per cell and its
 * margin, each strategy's best plan per cluster size, and the names a script should draw
 * a line for. */
#include "plot/plot.h"

#include <math.h>
#include <string.h>

#include "core/error.h"
#include "plot/table.h"
#include "strategy/strategy.h"

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

/* ---- plan-scaling: each strategy's best plan at each GPU count ---- */

typedef struct {
    double gpus, time; /* the GPU count; the best row's time to train, seconds */
    guint row;         /* that row */
} PlanCell;

/* "true" or "false", else a located error at the field. */
static gboolean table_flag(const ParoTable *t, guint row, int column, gboolean *out, GError **error)
{
    const char *text = paro_table_field(t, row, column);
    *out = strcmp(text, "true") == 0;
    if (*out || strcmp(text, "false") == 0)
        return TRUE;
    paro_config_error_set(error, PARO_CONFIG_ERROR_TYPE, t->path, g_array_index(t->lines, int, row),
                          paro_table_offset(t, row, column), "expected true or false, got '%s'",
                          text);
    return FALSE;
}

/* A number, finite and at least @least (strictly above it when @strict); @what says what
 * it should be. */
static gboolean table_bounded(const ParoTable *t, guint row, int column, double least,
                              gboolean strict, gboolean whole, const char *what, double *out,
                              GError **error)
{
    if (!paro_table_number(t, row, column, out, error))
        return FALSE;
    double v = *out;
    if (isfinite(v) && (strict ? v > least : v >= least) && (!whole || v == floor(v)))
        return TRUE;
    paro_config_error_set(error, PARO_CONFIG_ERROR_RANGE, t->path,
                          g_array_index(t->lines, int, row), paro_table_offset(t, row, column),
                          "expected %s, got '%s'", what, paro_table_field(t, row, column));
    return FALSE;
}

/* The cell of @cells at @gpus, appended when new. */
static PlanCell *plan_cell(GArray *cells, double gpus)
{
    for (guint i = 0; i < cells->len; i++)
        if (g_array_index(cells, PlanCell, i).gpus == gpus)
            return &g_array_index(cells, PlanCell, i);
    PlanCell fresh = {.gpus = gpus, .time = INFINITY, .row = G_MAXUINT};
    g_array_append_val(cells, fresh);
    return &g_array_index(cells, PlanCell, cells->len - 1);
}

static gint by_gpus(gconstpointer a, gconstpointer b)
{
    double x = ((const PlanCell *)a)->gpus, y = ((const PlanCell *)b)->gpus;
    return (x > y) - (x < y);
}

/* A line of the table: gpus, strategy index, name, days, GPU-hours, whether the point is
 * the strategy's own best (within plan's window of the best at its GPU count), the row's
 * layout ("tp2 pp4 1f1b b1 A16": cp, ep, pp and the virtual stages only where not 1). */
static void plan_line(GString *tsv, const ParoTable *t, const PlanCell *cell, int index,
                      const int *c, double gpu_hours, double best_time)
{
    enum { NAME, TP, CP, EP, PP, SCHEDULE, VIRTUAL, MICRO, ACCUMULATION };
#define F(k) paro_table_field(t, cell->row, c[k])
    g_autoptr(GString) layout = g_string_new(NULL);
    g_string_append_printf(layout, "tp%s", F(TP));
    if (strcmp(F(CP), "1") != 0)
        g_string_append_printf(layout, " cp%s", F(CP));
    if (strcmp(F(EP), "1") != 0)
        g_string_append_printf(layout, " ep%s", F(EP));
    if (strcmp(F(PP), "1") != 0) {
        g_string_append_printf(layout, " pp%s %s", F(PP), F(SCHEDULE));
        if (strcmp(F(VIRTUAL), "1") != 0)
            g_string_append_printf(layout, " v%s", F(VIRTUAL));
    }
    g_string_append_printf(layout, " b%s A%s", F(MICRO), F(ACCUMULATION));
    g_autofree char *name = g_strdup(F(NAME));
#undef F
    /* one TSV line a point, whatever the fields hold */
    g_strdelimit(layout->str, "\t\r\n", ' ');
    g_strdelimit(name, "\t\r\n", ' ');
    char days[G_ASCII_DTOSTR_BUF_SIZE], hours[G_ASCII_DTOSTR_BUF_SIZE];
    g_ascii_formatd(days, sizeof days, "%.6g", cell->time / 86400.0);
    g_ascii_formatd(hours, sizeof hours, "%.6g", gpu_hours);
    /* plan keeps every row whose lower bound is within its window of the best: a row of
     * the strategy faster than this one would have a bound below it, and been kept */
    gboolean exact = cell->time <= (1.0 + PARO_PLOT_PLAN_WINDOW) * best_time;
    g_string_append_printf(tsv, "%.0f\t%d\t%s\t%s\t%s\t%d\t%s\n", cell->gpus, index, name, days,
                           hours, exact, layout->str);
}

gboolean paro_plot_plan_scaling(const char *plan_csv, const char *strategies, GString *tsv,
                                char **names, GError **error)
{
    g_autoptr(ParoTable) t = paro_table_read(plan_csv, ',', error);
    if (t == NULL)
        return FALSE;
    /* the columns read, in plan_line's order after the first */
    static const char *const wanted[] = {
        "name",        "tp",           "cp",   "ep",   "pp",    "schedule",   "virtual",
        "micro_batch", "accumulation", "gpus", "fits", "tight", "time_train", "gpu_hours"};
    enum { GPUS = 9, FITS, TIGHT, TIME, HOURS };
    int c[G_N_ELEMENTS(wanted)];
    if (paro_table_column(t, "time_train", NULL) < 0) { /* a run's or a sweep's CSV */
        paro_config_error_set(error, PARO_CONFIG_ERROR_MISSING_KEY, t->path, 1, 1,
                              "no column 'time_train' in the header: not a plan "
                              "(parosim plan --format csv)");
        return FALSE;
    }
    for (guint k = 0; k < G_N_ELEMENTS(wanted); k++)
        if ((c[k] = paro_table_column(t, wanted[k], error)) < 0)
            return FALSE;
    guint n_header = g_strv_length(t->header);

    g_autoptr(GPtrArray) seen = g_ptr_array_new_with_free_func(g_free); /* strategies that fit */
    g_autoptr(GPtrArray) cells = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
    g_autoptr(GArray) best = g_array_new(FALSE, FALSE, sizeof(PlanCell));
    g_autoptr(GArray) hours = g_array_new(FALSE, FALSE, sizeof(double)); /* per row */
    guint data_rows = 0;
    for (guint r = 0; r < t->rows->len; r++) {
        double nan = NAN;
        g_array_append_val(hours, nan);
        /* plans concatenated: each brings its header, skipped when it is the first's */
        if (strcmp(paro_table_field(t, r, 0), t->header[0]) == 0) {
            guint k = 0;
            while (k < n_header && strcmp(paro_table_field(t, r, k), t->header[k]) == 0)
                k++;
            if (k == n_header)
                continue;
            paro_config_error_set(error, PARO_CONFIG_ERROR_CONSTRAINT, t->path,
                                  g_array_index(t->lines, int, r), paro_table_offset(t, r, k),
                                  "a header unlike the first (line 1) from column '%s': "
                                  "concatenate plans written by the same parosim",
                                  t->header[k]);
            return FALSE;
        }
        data_rows++;
        double gpus, time;
        gboolean fits, tight;
        if (!table_bounded(t, r, c[GPUS], 1, FALSE, TRUE, "a GPU count (a whole number from 1)",
                           &gpus, error) ||
            !table_flag(t, r, c[FITS], &fits, error) || !table_flag(t, r, c[TIGHT], &tight, error))
            return FALSE;
        if (!fits || tight) /* drawn: what fits with the allocator's headroom (decision 84) */
            continue;
        if (!table_bounded(t, r, c[TIME], 0, TRUE, FALSE, "a time to train in seconds above 0",
                           &time, error) ||
            !table_bounded(t, r, c[HOURS], 0, FALSE, FALSE, "GPU-hours from 0",
                           &g_array_index(hours, double, r), error))
            return FALSE;
        const char *name = paro_table_field(t, r, c[0]);
        if (name[0] == '\0' || strpbrk(name, " \t\r\n'\"") != NULL) {
            /* the script takes the names as gnuplot words; plan writes none of these */
            paro_config_error_set(error, PARO_CONFIG_ERROR_TYPE, t->path,
                                  g_array_index(t->lines, int, r), paro_table_offset(t, r, c[0]),
                                  "expected a strategy name (no spaces or quotes), got '%s'", name);
            return FALSE;
        }
        guint s = intern(seen, name);
        if (s == cells->len)
            g_ptr_array_add(cells, g_array_new(FALSE, FALSE, sizeof(PlanCell)));
        /* the least time; the first row on a tie (a plan lists its rows in rank order) */
        PlanCell *mine = plan_cell(g_ptr_array_index(cells, s), gpus);
        if (time < mine->time) {
            mine->time = time;
            mine->row = r;
        }
        PlanCell *all = plan_cell(best, gpus);
        if (time < all->time) {
            all->time = time;
            all->row = r;
        }
    }
    if (data_rows == 0) {
        paro_config_error_set(error, PARO_CONFIG_ERROR_CONSTRAINT, plan_csv, 2, 1, "no data rows");
        return FALSE;
    }
    if (seen->len == 0) {
        paro_config_error_set(error, PARO_CONFIG_ERROR_CONSTRAINT, plan_csv, 2, 1,
                              "no row fits with the memory headroom (fits true, tight false): "
                              "nothing to draw");
        return FALSE;
    }

    /* the strategies drawn: those named (by name or alias), or every one that fits */
    g_autoptr(GArray) drawn = g_array_new(FALSE, FALSE, sizeof(guint));
    if (strategies) {
        g_auto(GStrv) list = g_strsplit(strategies, ",", -1);
        for (int i = 0; list[i]; i++) {
            const char *wanted_name = g_strstrip(list[i]);
            const ParoStrategy *known = paro_strategy_lookup(wanted_name);
            if (known) /* plan names strategies by their canonical names */
                wanted_name = known->name;
            guint s = 0;
            while (s < seen->len && strcmp(g_ptr_array_index(seen, s), wanted_name) != 0)
                s++;
            if (s == seen->len) {
                paro_config_error_set(error, PARO_CONFIG_ERROR_CONSTRAINT, plan_csv, 1, 1,
                                      "no row of strategy '%s' fits with the memory headroom "
                                      "in this plan",
                                      list[i]);
                return FALSE;
            }
            gboolean twice = FALSE;
            for (guint k = 0; k < drawn->len; k++)
                twice |= g_array_index(drawn, guint, k) == s;
            if (!twice)
                g_array_append_val(drawn, s);
        }
    } else {
        for (guint s = 0; s < seen->len; s++)
            g_array_append_val(drawn, s);
    }

    g_autoptr(GPtrArray) drawn_names = g_ptr_array_new();
    g_string_append(tsv, "# gpus\tstrategy_index\tstrategy\tdays\tgpu_hours\texact\tlayout\n");
    g_array_sort(best, by_gpus);
    for (guint k = 0; k < drawn->len; k++) {
        guint s = g_array_index(drawn, guint, k);
        GArray *mine = g_ptr_array_index(cells, s);
        g_array_sort(mine, by_gpus);
        if (k > 0)
            g_string_append(tsv, "\n\n"); /* gnuplot's next index */
        for (guint i = 0; i < mine->len; i++) {
            const PlanCell *cell = &g_array_index(mine, PlanCell, i);
            plan_line(tsv, t, cell, (int)k, c, g_array_index(hours, double, cell->row),
                      plan_cell(best, cell->gpus)->time);
        }
        g_ptr_array_add(drawn_names, g_ptr_array_index(seen, s));
    }
    g_string_append(tsv, "\n\n");
    for (guint i = 0; i < best->len; i++) {
        const PlanCell *cell = &g_array_index(best, PlanCell, i);
        const char *name = paro_table_field(t, cell->row, c[0]);
        int index = -1;
        for (guint k = 0; k < drawn->len; k++)
            if (strcmp(g_ptr_array_index(drawn_names, k), name) == 0)
                index = (int)k;
        plan_line(tsv, t, cell, index, c, g_array_index(hours, double, cell->row), cell->time);
    }
    *names = join_spaced(drawn_names);
    return TRUE;
}
