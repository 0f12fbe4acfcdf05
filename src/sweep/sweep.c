/* SPDX-License-Identifier: MIT */
/* Sweep axes, the cartesian product, and the worker threads. Each point loads its own
 * scenario (the fixed --set overrides, then one override per axis) and runs every chosen
 * strategy; all points share one collective cache (keyed by value, thread-safe), so each
 * distinct collective is simulated once per sweep. Results land in the point's slot, so the output
 * order never depends on the threads. */
#include "sweep/sweep.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/fault.h"
#include "core/units.h"
#include "scenario/workload.h"
#include "step/memo.h"

#define MAX_AXIS_VALUES 10000 /* a point per value is a simulation each */

void paro_sweep_axis_free(ParoSweepAxis *a)
{
    if (a == NULL)
        return;
    g_free(a->label);
    g_free(a->arg);
    g_free(a->path);
    g_ptr_array_unref(a->values);
    g_array_unref(a->value_columns);
    g_free(a);
}

static void add_value(ParoSweepAxis *a, char *value, int column)
{
    g_ptr_array_add(a->values, value);
    g_array_append_val(a->value_columns, column);
}

static char *format_number(double v, gboolean integral)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    if (integral)
        return g_strdup_printf("%.0f", v);
    return g_strdup(g_ascii_formatd(buf, sizeof buf, "%.10g", v));
}

/* "A..B*F", "A..B+S" or "A..B" starting at @text (column @column of the argument). */
static gboolean parse_range(ParoSweepAxis *a, const char *text, int column, GError **error)
{
    const char *dots = strstr(text, "..");
    g_autofree char *lo_text = g_strndup(text, dots - text);
    const char *rest = dots + 2;
    const char *op = strpbrk(rest, "*+");
    g_autofree char *hi_text = op ? g_strndup(rest, op - rest) : g_strdup(rest);
    double lo, hi, step = 1;
    char kind = op ? *op : '+';
    GError *local = NULL;
    if (!paro_units_parse_number(lo_text, FALSE, &lo, &local) ||
        !paro_units_parse_number(hi_text, FALSE, &hi, &local) ||
        (op && !paro_units_parse_number(op + 1, FALSE, &step, &local))) {
        paro_config_error_set(error, PARO_CONFIG_ERROR_SYNTAX, a->label, 1, column,
                              "bad range '%s' (%s); write A..B, A..B+STEP or A..B*FACTOR", text,
                              local->message);
        g_error_free(local);
        return FALSE;
    }
    gboolean ok = hi >= lo && (kind == '+' ? step > 0 : step > 1 && lo > 0);
    if (!ok) {
        paro_config_error_set(error, PARO_CONFIG_ERROR_RANGE, a->label, 1, column,
                              "empty or endless range '%s' (need A <= B, STEP > 0, FACTOR > 1 "
                              "and A > 0 for a factor)",
                              text);
        return FALSE;
    }
    /* Count before generating: a range of more values than an axis may have, or one whose
     * step is lost in its bounds' rounding (1e20..2e20+1), fails at once instead of
     * formatting a million values first. */
    double count = kind == '+' ? (hi - lo) / step : log(hi / lo) / log(step);
    if (!(count < (double)(MAX_AXIS_VALUES - a->values->len))) {
        paro_config_error_set(error, PARO_CONFIG_ERROR_RANGE, a->label, 1, column,
                              "range '%s' has more than %d values", text, MAX_AXIS_VALUES);
        return FALSE;
    }
    gboolean integral = lo == floor(lo) && step == floor(step);
    for (guint i = 0;; i++) {
        double v = kind == '+' ? lo + (double)i * step : lo * pow(step, (double)i);
        if (v > hi * (1 + 1e-12) + 1e-12)
            break;
        if (a->values->len >= MAX_AXIS_VALUES) {
            paro_config_error_set(error, PARO_CONFIG_ERROR_RANGE, a->label, 1, column,
                                  "range '%s' has more than %d values", text, MAX_AXIS_VALUES);
            return FALSE;
        }
        add_value(a, format_number(v, integral), column);
    }
    return TRUE;
}

ParoSweepAxis *paro_sweep_axis_parse(const char *arg, int index, GError **error)
{
    g_autoptr(ParoSweepAxis) a = g_new0(ParoSweepAxis, 1);
    a->label = g_strdup_printf("--vary[%d]", index);
    a->arg = g_strdup(arg);
    a->values = g_ptr_array_new_with_free_func(g_free);
    a->value_columns = g_array_new(FALSE, FALSE, sizeof(int));
    const char *eq = strchr(arg, '=');
    if (eq == NULL || eq == arg) {
        paro_config_error_set(
            error, PARO_CONFIG_ERROR_SYNTAX, a->label, 1, eq ? 1 : (int)strlen(arg) + 1,
            "expected PATH=V1,V2,... or PATH=A..B*F, e.g. topology.nodes=2..64*2");
        return NULL;
    }
    a->path = g_strndup(arg, eq - arg);
    const char *start = eq + 1;
    for (;;) {
        const char *comma = strchr(start, ',');
        g_autofree char *item = comma ? g_strndup(start, comma - start) : g_strdup(start);
        int column = (int)(start - arg) + 1;
        if (item[0] == '\0') {
            paro_config_error_set(error, PARO_CONFIG_ERROR_SYNTAX, a->label, 1, column,
                                  "empty value in '%s'", arg);
            return NULL;
        }
        if (strstr(item, "..") != NULL) {
            if (!parse_range(a, item, column, error))
                return NULL;
        } else {
            add_value(a, g_steal_pointer(&item), column);
        }
        if (comma == NULL)
            break;
        start = comma + 1;
    }
    return g_steal_pointer(&a);
}

guint64 paro_sweep_n_points(GPtrArray *axes)
{
    guint64 n = 1;
    for (guint i = 0; i < axes->len; i++) {
        const ParoSweepAxis *a = g_ptr_array_index(axes, i);
        if (a->zipped)
            continue;
        n *= a->values->len;
        if (n > 1000000000)
            return 0;
    }
    return n;
}

/* ---- running ---- */

typedef struct {
    const char *path;
    const char *const *sets;
    guint n_sets;
    GPtrArray *axes;
    GPtrArray *strategies;
    GPtrArray *points;
    GMutex lock;
    GError *error; /* first failure, by point order */
    guint64 error_point;
    guint64 done, total;
    ParoSweepProgress progress;
    gpointer progress_data;
    ParoCollCache *cache; /* one for all points and threads: keyed by value */
    ParoStepMemo *memo;   /* steps shared by points that differ only in their accumulation;
                           * NULL when no axis varies it */
    gboolean extrapolate;
    const volatile sig_atomic_t *cancel;
    ParoSweepRender render;
    gpointer render_data;
} Run;

static void point_free(ParoSweepPoint *p)
{
    if (p == NULL)
        return;
    g_ptr_array_unref(p->values);
    if (p->results)
        g_array_unref(p->results);
    paro_run_free(p->run);
    g_free(p->text);
    g_free(p);
}

/* An error in one of the axis overrides ("--set[k]", k > n_sets) is re-located in the
 * --vary argument the user wrote; others are kept as they are. */
static GError *relocate(const Run *run, const guint *choice, GError *e)
{
    const ParoConfigErrorPrivate *loc = paro_config_error_get_location(e);
    int k;
    if (loc == NULL || loc->file == NULL || sscanf(loc->file, "--set[%d]", &k) != 1 ||
        k <= (int)run->n_sets)
        return e;
    guint axis = (guint)k - run->n_sets - 1;
    const ParoSweepAxis *a = g_ptr_array_index(run->axes, axis);
    int path_len = (int)strlen(a->path);
    int column = loc->column;
    if (column > path_len + 1) /* inside the value */
        column = g_array_index(a->value_columns, int, choice[axis]) + (column - path_len - 2);
    const char *text = strstr(e->message, ": ");
    GError *out = NULL;
    paro_config_error_set(&out, e->code, a->label, 1, column, "%s", text ? text + 2 : e->message);
    g_error_free(e);
    return out;
}

/* Says which point @e comes from ("at training.accumulation=8, topology.nodes=4: "), after
 * the location of a located error, so that a message from a sweep names its point. */
static GError *at_point(const Run *run, const guint *choice, GError *e)
{
    g_autoptr(GString) where = g_string_new("at ");
    for (guint i = 0; i < run->axes->len; i++) {
        const ParoSweepAxis *a = g_ptr_array_index(run->axes, i);
        g_string_append_printf(where, "%s%s=%s", i ? ", " : "", a->path,
                               (const char *)g_ptr_array_index(a->values, choice[i]));
    }
    const ParoConfigErrorPrivate *loc = paro_config_error_get_location(e);
    if (loc == NULL || loc->file == NULL) {
        g_prefix_error(&e, "%s: ", where->str);
        return e;
    }
    g_autofree char *prefix = g_strdup_printf("%s:%d:%d: ", loc->file, loc->line, loc->column);
    const char *text =
        g_str_has_prefix(e->message, prefix) ? e->message + strlen(prefix) : e->message;
    GError *out = NULL;
    paro_config_error_set(&out, e->code, loc->file, loc->line, loc->column, "%s: %s", where->str,
                          text);
    g_error_free(e);
    return out;
}

/* A zipped axis takes the value index of the axis before it. */
static void zip_choices(GPtrArray *axes, guint *choice)
{
    for (guint i = 1; i < axes->len; i++)
        if (((const ParoSweepAxis *)g_ptr_array_index(axes, i))->zipped)
            choice[i] = choice[i - 1];
}

static void decompose(const Run *run, guint64 point, guint *choice)
{
    for (gint i = (gint)run->axes->len - 1; i >= 0; i--) {
        const ParoSweepAxis *a = g_ptr_array_index(run->axes, i);
        if (a->zipped)
            continue;
        choice[i] = (guint)(point % a->values->len);
        point /= a->values->len;
    }
    zip_choices(run->axes, choice);
}

static ParoScenario *load_point(const Run *run, const guint *choice, GError **error)
{
    guint n_axes = run->axes->len;
    g_autoptr(GPtrArray) overrides = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < run->n_sets; i++)
        g_ptr_array_add(overrides, g_strdup(run->sets[i]));
    for (guint i = 0; i < n_axes; i++) {
        const ParoSweepAxis *a = g_ptr_array_index(run->axes, i);
        g_ptr_array_add(overrides,
                        g_strdup_printf("%s=%s", a->path,
                                        (const char *)g_ptr_array_index(a->values, choice[i])));
    }
    g_ptr_array_add(overrides, NULL);
    GError *local = NULL;
    ParoScenario *s = paro_scenario_load(run->path, (const char *const *)overrides->pdata, &local);
    if (s == NULL) {
        /* an error in the --vary argument shows its value; one in a file names the point */
        local = relocate(run, choice, local);
        const ParoConfigErrorPrivate *loc = paro_config_error_get_location(local);
        if (loc == NULL || loc->file == NULL || !g_str_has_prefix(loc->file, "--vary["))
            local = at_point(run, choice, local);
        g_propagate_error(error, local);
        return NULL;
    }
    /* Every point is a run: refused, with its values, when it alone is beyond the limits. */
    if (!paro_workload_check(s, run->strategies->len, FALSE, run->extrapolate, &local)) {
        g_propagate_error(error, at_point(run, choice, relocate(run, choice, local)));
        paro_scenario_free(s);
        return NULL;
    }
    return s;
}

static void fail(Run *run, guint64 point, GError *e)
{
    g_mutex_lock(&run->lock);
    if (run->error == NULL || point < run->error_point) {
        g_clear_error(&run->error);
        run->error = e;
        run->error_point = point;
    } else {
        g_error_free(e);
    }
    g_mutex_unlock(&run->lock);
}

static gboolean is_accumulation(const ParoSweepAxis *a)
{
    return strcmp(a->path, "training.accumulation") == 0;
}

/* A point's name in the step memo: its values on every axis but the accumulation's. The
 * scenario file and the fixed overrides are the same for all points, so two points with
 * the same name differ at most in their accumulation. */
static char *memo_context(const Run *run, const guint *choice)
{
    GString *context = g_string_new(NULL);
    for (guint i = 0; i < run->axes->len; i++) {
        const ParoSweepAxis *a = g_ptr_array_index(run->axes, i);
        if (!is_accumulation(a))
            g_string_append_printf(context, "%s\x1e",
                                   (const char *)g_ptr_array_index(a->values, choice[i]));
    }
    return g_string_free(context, FALSE);
}

static void work(gpointer data, gpointer user_data)
{
    Run *run = user_data;
    guint64 point = GPOINTER_TO_SIZE(data) - 1;
    if (run->cancel && *run->cancel)
        return;
    guint choice[64];
    decompose(run, point, choice);
    GError *error = NULL;
    ParoSweepPoint *p = g_new0(ParoSweepPoint, 1);
    p->point = point;
    p->values = g_ptr_array_new();
    for (guint i = 0; i < run->axes->len; i++) {
        const ParoSweepAxis *a = g_ptr_array_index(run->axes, i);
        g_ptr_array_add(p->values, g_ptr_array_index(a->values, choice[i]));
    }
    ParoScenario *scenario = load_point(run, choice, &error);
    if (scenario == NULL) {
        fail(run, point, error);
        point_free(p);
        return;
    }
    p->run = paro_run_new(scenario, run->cache);
    ParoRunOptions options = PARO_RUN_OPTIONS_INIT;
    options.extrapolate = run->extrapolate;
    g_autofree char *context = run->memo ? memo_context(run, choice) : NULL;
    options.memo = run->memo;
    options.memo_context = context;
    p->results = paro_run_strategies(p->run, run->strategies, &options, &error);
    if (p->results == NULL) {
        fail(run, point, at_point(run, choice, error));
        point_free(p);
        return;
    }
    if (run->render) {
        p->text = run->render(p, run->render_data);
        g_clear_pointer(&p->results, g_array_unref);
        g_clear_pointer(&p->run, paro_run_free);
    }
    g_mutex_lock(&run->lock);
    g_ptr_array_index(run->points, point) = p;
    run->done++;
    if (run->progress)
        run->progress(run->done, run->total, run->progress_data);
    g_mutex_unlock(&run->lock);
    paro_fault_point("sweep-point");
}

GPtrArray *paro_sweep_run(const char *scenario_path, const char *const *sets, GPtrArray *axes,
                          GPtrArray *strategies, int jobs, ParoSweepProgress progress,
                          gpointer progress_data, GError **error)
{
    ParoSweepOptions options = {.jobs = jobs,
                                .rank = 0,
                                .n_ranks = 1,
                                .progress = progress,
                                .progress_data = progress_data};
    return paro_sweep_run_with(scenario_path, sets, axes, strategies, &options, NULL, error);
}

GPtrArray *paro_sweep_run_with(const char *scenario_path, const char *const *sets, GPtrArray *axes,
                               GPtrArray *strategies, const ParoSweepOptions *options,
                               guint64 *n_done, GError **error)
{
    guint64 total = paro_sweep_n_points(axes);
    guint64 n_ranks = MAX(options->n_ranks, 1);
    if (total == 0 || axes->len > 64) {
        g_set_error(error, PARO_CONFIG_ERROR, PARO_CONFIG_ERROR_RANGE,
                    "the sweep has no point, or more than 1e9, or more than 64 axes");
        return NULL;
    }
    Run run = {0};
    run.path = scenario_path;
    run.sets = sets;
    run.n_sets = sets ? g_strv_length((char **)sets) : 0;
    run.axes = axes;
    run.strategies = strategies;
    run.points = g_ptr_array_new_with_free_func((GDestroyNotify)point_free);
    g_ptr_array_set_size(run.points, (guint)total);
    /* this rank's share: points rank, rank + n_ranks, ... */
    run.total = total / n_ranks + (options->rank < total % n_ranks ? 1 : 0);
    run.progress = options->progress;
    run.progress_data = options->progress_data;
    run.cache = paro_coll_cache_new();
    run.extrapolate = !options->no_extrapolate;
    /* the memo shares the points of extrapolations: none to share without them */
    for (guint i = 0; i < axes->len && run.extrapolate; i++)
        if (is_accumulation(g_ptr_array_index(axes, i)) && run.memo == NULL)
            run.memo = paro_step_memo_new();
    run.cancel = options->cancel;
    run.render = options->render;
    run.render_data = options->render_data;
    g_mutex_init(&run.lock);

    /* Fail fast: every value of every axis, each with the others at their first value.
     * Every rank checks them all, so all ranks fail alike and none waits for another. */
    g_autofree guint *choice = g_new0(guint, axes->len);
    for (guint i = 0; i < axes->len; i++) {
        const ParoSweepAxis *a = g_ptr_array_index(axes, i);
        for (guint v = 0; v < a->values->len && !a->zipped; v++) {
            memset(choice, 0, sizeof(guint) * axes->len);
            choice[i] = v;
            zip_choices(axes, choice);
            ParoScenario *s = load_point(&run, choice, error);
            if (s == NULL) {
                g_ptr_array_unref(run.points);
                g_mutex_clear(&run.lock);
                paro_coll_cache_unref(run.cache);
                paro_step_memo_free(run.memo);
                return NULL;
            }
            paro_scenario_free(s);
        }
    }
    GThreadPool *pool = g_thread_pool_new(work, &run, MAX(options->jobs, 1), TRUE, NULL);
    for (guint64 i = options->rank; i < total; i += n_ranks)
        g_thread_pool_push(pool, GSIZE_TO_POINTER((gsize)(i + 1)), NULL);
    g_thread_pool_free(pool, FALSE, TRUE);
    g_mutex_clear(&run.lock);
    paro_coll_cache_unref(run.cache);
    paro_step_memo_free(run.memo);
    if (run.error) {
        g_propagate_error(error, run.error);
        g_ptr_array_unref(run.points);
        return NULL;
    }
    if (n_done)
        *n_done = run.done;
    return run.points;
}
