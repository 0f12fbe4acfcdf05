/* SPDX-License-Identifier: MIT */
#include "plot/plot.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "core/datadir.h"
#include "core/error.h"
#include "core/files.h"
#include "plot/table.h"
#include "strategy/strategy.h"

const ParoPlotKindInfo paro_plot_kinds[PARO_PLOT_N_KINDS] = {
    [PARO_PLOT_STRATEGIES] =
        {"strategies", "strategies.gp", "CSV of `parosim run --format csv`",
         "throughput bars per strategy, peak memory on the right axis, OOM crossed"},
    [PARO_PLOT_BEST_MAP] = {"best-map", "best-map.gp", "CSV of `parosim sweep` over two axes",
                            "heat map of the winning strategy per cell, with its margin"},
    [PARO_PLOT_COLLECTIVE_SCALING] =
        {"collective-scaling", "collective-scaling.gp",
         "CSV: algorithm, then `parosim collective --gpus LIST --format csv`",
         "bus bandwidth (or time) vs GPUs, a line per algorithm"},
    [PARO_PLOT_THROUGHPUT_SCALING] = {"throughput-scaling", "throughput-scaling.gp",
                                      "CSV of `parosim sweep` over the GPU count",
                                      "throughput vs GPUs, a line per strategy"},
    [PARO_PLOT_PLAN_SCALING] =
        {"plan-scaling", "plan-scaling.gp",
         "CSV of `parosim plan --format csv`, several cluster sizes concatenated",
         "time and GPU-hours to train vs GPUs, each strategy's best plan, the best marked"},
    [PARO_PLOT_MEMORY_TIMELINE] = {"memory-timeline", "memory-timeline.gp",
                                   "TSV of `parosim run --trace FILE.tsv`",
                                   "memory over one step, stacked by category"},
    [PARO_PLOT_GANTT] = {"gantt", "gantt.gp", "TSV of `parosim run --trace FILE.tsv`",
                         "tasks on the compute and communication streams over one step"},
    [PARO_PLOT_VALIDATE] = {"validate", "validate.gp", "CSV of `parosim validate --csv`",
                            "measured vs predicted times, log-log, with the y = x line"},
};

int paro_plot_kind_from_name(const char *name)
{
    for (int k = 0; k < PARO_PLOT_N_KINDS; k++)
        if (strcmp(paro_plot_kinds[k].name, name) == 0)
            return k;
    return -1;
}

char *paro_plot_scripts_dir(const char *explicit, GError **error)
{
    const char *named = explicit ? explicit : g_getenv("PAROSIM_PLOTS_DIR");
    if (named) { /* the user named this folder: say so rather than look elsewhere */
        g_autofree char *probe = g_build_filename(named, "common.gp", NULL);
        if (g_file_test(probe, G_FILE_TEST_IS_REGULAR))
            return g_strdup(named);
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT, "no plot scripts (common.gp) in %s",
                    named);
        return NULL;
    }
    g_autofree char *data = paro_data_dir("plots/common.gp");
    if (data)
        return g_build_filename(data, "plots", NULL);
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
                "no plot scripts (plots/common.gp) in $PAROSIM_DATA_DIR, beside the binary "
                "or in the source tree; set PAROSIM_PLOTS_DIR");
    return NULL;
}

/* name='value' for gnuplot -e: a quote inside a single-quoted gnuplot string is doubled. */
static void add_string(GPtrArray *vars, const char *name, const char *value)
{
    g_auto(GStrv) parts = g_strsplit(value, "'", -1);
    g_autofree char *escaped = g_strjoinv("''", parts);
    g_ptr_array_add(vars, g_strdup_printf("%s='%s'", name, escaped));
}

/* Fails early, with the header's location, when the input lacks a column the script reads. */
static gboolean require_columns(const char *csv, const char *const *columns, GError **error)
{
    g_autoptr(ParoTable) t = paro_table_read(csv, ',', error);
    if (t == NULL)
        return FALSE;
    for (int i = 0; columns[i]; i++)
        if (paro_table_column(t, columns[i], error) < 0)
            return FALSE;
    if (t->rows->len == 0) {
        paro_config_error_set(error, PARO_CONFIG_ERROR_CONSTRAINT, csv, 2, 1, "no data rows");
        return FALSE;
    }
    return TRUE;
}

/* The trace's first strategy, or a check that @wanted (a name or an alias) is in it. */
static char *trace_strategy(const char *tsv, const char *wanted, GError **error)
{
    const ParoStrategy *known = wanted ? paro_strategy_lookup(wanted) : NULL;
    if (known)
        wanted = known->name; /* the trace names strategies by their canonical names */
    g_autoptr(ParoTable) t = paro_table_read(tsv, '\t', error);
    if (t == NULL)
        return NULL;
    for (guint r = 0; r < t->rows->len; r++) {
        char **f = g_ptr_array_index(t->rows, r);
        if (g_strv_length(f) < 3 || (strcmp(f[0], "task") != 0 && strcmp(f[0], "memory") != 0)) {
            paro_config_error_set(error, PARO_CONFIG_ERROR_SYNTAX, tsv,
                                  g_array_index(t->lines, int, r), 1,
                                  "not a parosim trace line (task or memory)");
            return NULL;
        }
        if (wanted == NULL || strcmp(f[1], wanted) == 0)
            return g_strdup(f[1]);
    }
    paro_config_error_set(error, PARO_CONFIG_ERROR_CONSTRAINT, tsv, 1, 1,
                          wanted ? "no strategy '%s' in this trace" : "an empty trace%s",
                          wanted ? wanted : "");
    return NULL;
}

gboolean paro_plot_prepare(const ParoPlotRequest *rq, const char *data_path, GPtrArray *vars,
                           GError **error)
{
    add_string(vars, "input", rq->input);
    if (rq->metric)
        add_string(vars, "metric", rq->metric);
    switch (rq->kind) {
    case PARO_PLOT_STRATEGIES: {
        const char *cols[] = {"name",     "aliases",      "fits", "samples_per_s",
                              "mem_peak", "mem_capacity", NULL};
        return require_columns(rq->input, cols, error);
    }
    case PARO_PLOT_BEST_MAP: {
        g_autoptr(GString) tsv = g_string_new(NULL);
        g_autofree char *winners = NULL, *x = NULL, *y = NULL;
        if (!paro_plot_best_map(rq->input, rq->x_axis, rq->y_axis, tsv, &winners, &x, &y, error) ||
            !paro_file_write(data_path, tsv->str, tsv->len, NULL, error))
            return FALSE;
        g_ptr_array_remove_index(vars, 0); /* the script reads the derived table */
        add_string(vars, "input", data_path);
        add_string(vars, "winners", winners);
        add_string(vars, "xlabel", x);
        add_string(vars, "ylabel", y);
        return TRUE;
    }
    case PARO_PLOT_COLLECTIVE_SCALING: {
        const char *cols[] = {"algorithm", "gpus", "time_us", "busbw_GBps", NULL};
        g_autofree char *algorithms = NULL;
        if (!require_columns(rq->input, cols, error) ||
            !(algorithms = paro_plot_distinct(rq->input, "algorithm", error)))
            return FALSE;
        add_string(vars, "algorithms", algorithms);
        return TRUE;
    }
    case PARO_PLOT_THROUGHPUT_SCALING: {
        const char *cols[] = {"point", "name", "aliases", "fits", "gpus", "samples_per_s", NULL};
        g_autofree char *names = NULL;
        if (!require_columns(rq->input, cols, error))
            return FALSE;
        if (rq->strategies) {
            g_auto(GStrv) list = g_strsplit(rq->strategies, ",", -1);
            names = g_strjoinv(" ", list);
        } else if (!(names = paro_plot_distinct(rq->input, "name", error))) {
            return FALSE;
        }
        add_string(vars, "strategies", names);
        return TRUE;
    }
    case PARO_PLOT_PLAN_SCALING: {
        g_autoptr(GString) tsv = g_string_new(NULL);
        g_autofree char *names = NULL;
        if (!paro_plot_plan_scaling(rq->input, rq->strategies, tsv, &names, error) ||
            !paro_file_write(data_path, tsv->str, tsv->len, NULL, error))
            return FALSE;
        g_ptr_array_remove_index(vars, 0); /* the script reads the derived table */
        add_string(vars, "input", data_path);
        add_string(vars, "strategies", names);
        /* the key says "NNG (zero-1)": each name's first alias, '-' when it has none */
        g_auto(GStrv) list = g_strsplit(names, " ", -1);
        for (int i = 0; list[i]; i++) {
            const ParoStrategy *known = paro_strategy_lookup(list[i]);
            const char *alias = known && known->aliases[0] ? known->aliases[0] : "-";
            g_free(list[i]);
            list[i] = g_strdup(alias);
        }
        g_autofree char *aliases = g_strjoinv(" ", list);
        add_string(vars, "aliases", aliases);
        return TRUE;
    }
    case PARO_PLOT_MEMORY_TIMELINE:
    case PARO_PLOT_GANTT: {
        g_autofree char *strategy = trace_strategy(rq->input, rq->strategy, error);
        if (strategy == NULL)
            return FALSE;
        add_string(vars, "strategy", strategy);
        if (rq->capacity_bytes > 0)
            g_ptr_array_add(vars, g_strdup_printf("capacity=%.0f", rq->capacity_bytes));
        if (rq->reserved_bytes > 0)
            g_ptr_array_add(vars, g_strdup_printf("reserved=%.0f", rq->reserved_bytes));
        return TRUE;
    }
    case PARO_PLOT_VALIDATE: {
        const char *cols[] = {"measured_us", "predicted_us", NULL};
        return require_columns(rq->input, cols, error);
    }
    case PARO_PLOT_N_KINDS:
        break;
    }
    g_return_val_if_reached(FALSE);
}

static gboolean check_extension(const char *output, GError **error)
{
    if (g_str_has_suffix(output, ".png") || g_str_has_suffix(output, ".svg"))
        return TRUE;
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: the output must end in .png or .svg",
                output);
    return FALSE;
}

/* The render in progress, for paro_plot_abort (called from a signal handler): only
 * async-signal-safe state, written before gnuplot starts. */
static struct {
    volatile sig_atomic_t child; /* gnuplot's pid while it runs, else 0 */
    volatile sig_atomic_t armed; /* the paths below are complete */
    char tmpdir[4096], data[4096], image[4096];
} running;

void paro_plot_abort(void)
{
    if (running.child > 0)
        kill((pid_t)running.child, SIGKILL);
    if (!running.armed)
        return;
    unlink(running.image);
    unlink(running.data);
    rmdir(running.tmpdir);
}

static void copy_path(char *to, const char *from)
{
    g_strlcpy(to, from, sizeof running.tmpdir);
}

/* gnuplot dies with parosim, whatever kills parosim (Linux; elsewhere the signal handler's
 * kill has to do). */
static void child_setup(gpointer data)
{
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
}

/* Runs gnuplot, collecting its stderr; FALSE with an error when it cannot start. */
static gboolean run_gnuplot(const char *const *argv, int *out_status, GString *err, GError **error)
{
    GPid pid = 0;
    int err_fd = -1;
    if (!g_spawn_async_with_pipes(NULL, (char **)argv, NULL,
                                  G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL,
                                  child_setup, NULL, &pid, NULL, NULL, &err_fd, error))
        return FALSE;
    running.child = pid;
    char buf[4096];
    for (;;) {
        ssize_t n = read(err_fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        if (err->len < 65536)
            g_string_append_len(err, buf, n);
    }
    close(err_fd);
    while (waitpid(pid, out_status, 0) < 0 && errno == EINTR)
        ;
    running.child = 0;
    g_spawn_close_pid(pid);
    return TRUE;
}

gboolean paro_plot_render(const ParoPlotRequest *rq, GError **error)
{
    if (!check_extension(rq->output, error))
        return FALSE;
    g_autofree char *gnuplot = g_strdup(g_getenv("PAROSIM_GNUPLOT"));
    if (gnuplot == NULL && (gnuplot = g_find_program_in_path("gnuplot")) == NULL) {
        g_set_error(error, G_SPAWN_ERROR, G_SPAWN_ERROR_NOENT,
                    "gnuplot is not installed (Debian: apt-get install gnuplot-nox)");
        return FALSE;
    }
    g_autofree char *dir = paro_plot_scripts_dir(rq->scripts_dir, error);
    if (dir == NULL)
        return FALSE;
    g_autofree char *script = g_build_filename(dir, paro_plot_kinds[rq->kind].script, NULL);
    const char *inputs[] = {rq->input, NULL};
    if (!paro_file_check_output(rq->output, inputs, error) ||
        (rq->data_output && !paro_file_check_output(rq->data_output, inputs, error)))
        return FALSE;

    /* gnuplot writes into a private folder; the image and the data are then written where
     * they belong with paro_file_write (a rename, or directly onto a device). */
    g_autofree char *tmpdir = g_dir_make_tmp("parosim-plot-XXXXXX", error);
    if (tmpdir == NULL)
        return FALSE;
    g_autofree char *data = g_build_filename(tmpdir, "data.tsv", NULL);
    g_autofree char *image = g_build_filename(
        tmpdir, g_str_has_suffix(rq->output, ".svg") ? "plot.svg" : "plot.png", NULL);
    copy_path(running.tmpdir, tmpdir);
    copy_path(running.data, data);
    copy_path(running.image, image);
    running.armed = 1;
    g_autoptr(GPtrArray) vars = g_ptr_array_new_with_free_func(g_free);
    gboolean ok = paro_plot_prepare(rq, data, vars, error);
    if (ok) {
        add_string(vars, "output", image);
        if (rq->title)
            add_string(vars, "title", rq->title);
        if (rq->hover)
            g_ptr_array_add(vars, g_strdup("hover=1"));
        if (rq->width > 0 && rq->height > 0) {
            g_ptr_array_add(vars, g_strdup_printf("width=%d", rq->width));
            g_ptr_array_add(vars, g_strdup_printf("height=%d", rq->height));
        }
        g_ptr_array_add(vars, NULL);
        g_autofree char *assignments = g_strjoinv("; ", (char **)vars->pdata);
        const char *argv[] = {gnuplot, "-e", assignments, script, NULL};
        g_autoptr(GString) err = g_string_new(NULL);
        int status = 0;
        ok = run_gnuplot(argv, &status, err, error);
        GStatBuf st;
        if (ok && (!g_spawn_check_wait_status(status, NULL) || g_stat(image, &st) != 0 ||
                   st.st_size == 0)) {
            g_set_error(error, G_SPAWN_ERROR, G_SPAWN_ERROR_FAILED, "gnuplot %s failed:\n%s",
                        script, err->len ? err->str : "(no message, and no output written)\n");
            ok = FALSE;
        }
        g_autofree char *bytes = NULL, *table = NULL;
        gsize n_bytes = 0, n_table = 0;
        ok = ok && paro_file_read(image, &paro_limit_table_bytes, &bytes, &n_bytes, error) &&
             paro_file_write(rq->output, bytes, n_bytes, inputs, error);
        if (ok && rq->data_output)
            ok = paro_file_read(data, &paro_limit_table_bytes, &table, &n_table, error) &&
                 paro_file_write(rq->data_output, table, n_table, inputs, error);
    }
    running.armed = 0;
    g_unlink(image);
    g_unlink(data);
    g_rmdir(tmpdir);
    return ok;
}
