/* SPDX-License-Identifier: MIT */
/* `parosim sweep`: run the main job over the cartesian product of varied values, in
 * parallel, one row per (point, strategy). */
#include "cli/cli.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/mpi.h"
#include "core/error.h"
#include "core/files.h"
#include "core/limits.h"
#include "report/report.h"
#include "sweep/sweep.h"

static const char sweep_help[] =
    "Runs `parosim run` at every point of the cartesian product of the varied values\n"
    "(the first --vary changes slowest), on all cores, and prints one row per point and\n"
    "strategy: the varied values, then every result of `parosim run`. A progress bar goes\n"
    "to stderr when it is a terminal. Values: a list V1,V2,... (units allowed: 100 Gb/s),\n"
    "a range A..B (step 1), A..B+STEP, or A..B*FACTOR.\n"
    "\n"
    "Examples:\n"
    "  parosim sweep scenarios/llama-7b_a100x8-100g_n32.yaml --vary topology.nodes=2..16*2 \\\n"
    "      --vary training.trainable.fraction=1,1/16 --strategies zero-2,zero-3,IIG,NIG\n"
    "  parosim sweep SCENARIO.yaml --vary 'topology.node.nics.bandwidth=100 Gb/s,400 Gb/s' \\\n"
    "      --vary parallelism.group=2,4,8 --format json -o sweep.json";

typedef struct {
    gint64 start_us;
    gboolean tty;
} Progress;

static void show_progress(guint64 done, guint64 total, gpointer data)
{
    Progress *p = data;
    if (!p->tty)
        return;
    double elapsed = (double)(g_get_monotonic_time() - p->start_us) / 1e6;
    double rate = elapsed > 0 ? (double)done / elapsed : 0;
    double eta = rate > 0 ? (double)(total - done) / rate : 0;
    int width = 30, filled = (int)((double)width * (double)done / (double)total);
    fprintf(stderr,
            "\r[%.*s%*s] %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT " points  %.0f/s  ETA %.0f s ",
            filled, "##############################", width - filled, "", done, total, rate, eta);
    if (done == total)
        fputc('\n', stderr);
}

/* What a worker renders a finished point with. */
typedef struct {
    const GPtrArray *axes;
    ParoFormat format;
} Rendering;

static char *render_point(const ParoSweepPoint *point, gpointer data)
{
    const Rendering *r = data;
    char *text = paro_report_sweep_point(r->axes, point, r->format);
    /* trimmed to its length: a GString's doubling slack, kept for every point until the
     * end, was up to as much again as the output */
    return g_realloc(text, strlen(text) + 1);
}

/* SIGINT or SIGTERM during a sweep: no new point starts; what is done is written. SIGTERM
 * too, since mpirun answers Ctrl-C by sending it to every rank (and SIGKILL a second later,
 * Open MPI's odls_base_sigkill_timeout): each rank then stops, and rank 0 writes the
 * points done, as a single process does (issue #16). The handler stays until the output
 * is in place, so a signal that lands while it is written or renamed is one more
 * interruption, never a half-written file (issue #42). A second signal kills at once,
 * removing the temporary file: the output stays as it was before the sweep. */
static volatile sig_atomic_t interrupted;

static void on_signal(int signo)
{
    if (interrupted) {
        paro_file_abort_pending();
        signal(signo, SIG_DFL);
        raise(signo);
        return;
    }
    interrupted = signo;
}

/* --vary and --zip in the order written ("v" or "z", then the argument): a zip goes with
 * the axis before it, so their order matters and one option array each would lose it. */
static GPtrArray *axis_args;

static gboolean on_axis(const char *name, const char *value, gpointer data, GError **error)
{
    gboolean zip = strcmp(name, "--zip") == 0 || strcmp(name, "-z") == 0;
    g_ptr_array_add(axis_args, g_strconcat(zip ? "z" : "v", value, NULL));
    return TRUE;
}

int paro_cmd_sweep(int argc, char **argv)
{
    g_auto(GStrv) sets = NULL;
    g_autoptr(GPtrArray) args = g_ptr_array_new_with_free_func(g_free);
    axis_args = args;
    g_autofree char *format_name = NULL, *strategies_text = NULL, *output = NULL;
    int jobs = 0;
    gboolean no_extrapolate = FALSE;
    GOptionEntry entries[] = {
        {"vary", 'v', 0, G_OPTION_ARG_CALLBACK, (gpointer)on_axis,
         "A varied path and its values (repeatable): PATH=V1,V2 or PATH=A..B*F", "PATH=VALUES"},
        {"zip", 'z', 0, G_OPTION_ARG_CALLBACK, (gpointer)on_axis,
         "Varied together with the --vary or --zip before it, value for value (as many "
         "values): --vary topology.nodes=4,8,16 --zip training.accumulation=16,8,4 keeps "
         "the global batch",
         "PATH=VALUES"},
        {"set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &sets, "A fixed override (repeatable)",
         "KEY=VALUE"},
        {"strategies", 0, 0, G_OPTION_ARG_STRING, &strategies_text,
         "all (default) or a comma-separated list", "LIST"},
        {"jobs", 'j', 0, G_OPTION_ARG_INT, &jobs, "Worker threads (default: the cores)", "N"},
        {"format", 'f', 0, G_OPTION_ARG_STRING, &format_name, "csv (default) or json", "FORMAT"},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
         "Write to FILE (through a temporary file and a rename) instead of stdout", "FILE"},
        {"no-extrapolate", 0, 0, G_OPTION_ARG_NONE, &no_extrapolate,
         "Simulate every micro-batch of each step instead of reading a long accumulation off "
         "a few periods of its steady state (within 1e-9; a check)",
         NULL},
        {NULL},
    };
    if (!paro_cli_parse_options("sweep", "SCENARIO.yaml", sweep_help, entries, &argc, &argv))
        return PARO_EXIT_USAGE;
    g_autoptr(GError) error = NULL;
    int format = paro_cli_parse_format(format_name ? format_name : "csv");
    /* the arguments as --vary[i] and --zip[i] labels name them in messages */
    g_autoptr(GPtrArray) vary_texts = g_ptr_array_new();
    for (guint i = 0; i < args->len; i++)
        g_ptr_array_add(vary_texts, (char *)g_ptr_array_index(args, i) + 1);
    g_ptr_array_add(vary_texts, NULL);
    const char *const *varies = (const char *const *)vary_texts->pdata;
    if (argc != 2 || args->len == 0 || format == PARO_FORMAT_TABLE || format < 0 || jobs < 0)
        return paro_cli_usage("sweep",
                              "expected SCENARIO.yaml, at least one --vary, --format csv or json");
    /* C8: --jobs 100000 aborted creating thread stacks */
    if (jobs > 0 && !paro_limit_check_option(&paro_limit_jobs, "--jobs", jobs, &error))
        return paro_cli_usage("sweep", error->message);
    g_autoptr(GPtrArray) strategies = paro_cli_parse_strategies(strategies_text, "sweep");
    if (strategies == NULL)
        return PARO_EXIT_USAGE;
    g_autoptr(GPtrArray) axes =
        g_ptr_array_new_with_free_func((GDestroyNotify)paro_sweep_axis_free);
    for (int i = 0; varies[i]; i++) {
        ParoSweepAxis *a = paro_sweep_axis_parse(varies[i], i + 1, &error);
        if (a == NULL) {
            paro_cli_report_error(error, NULL, (const char *const *)varies);
            return PARO_EXIT_ERROR;
        }
        a->zipped = ((const char *)g_ptr_array_index(args, i))[0] == 'z';
        if (a->zipped) {
            g_free(a->label);
            a->label = g_strdup_printf("--zip[%d]", i + 1);
        }
        const ParoSweepAxis *before = axes->len ? g_ptr_array_index(axes, axes->len - 1) : NULL;
        if (a->zipped && (before == NULL || before->values->len != a->values->len)) {
            if (before == NULL)
                paro_config_error_set(&error, PARO_CONFIG_ERROR_CONSTRAINT, a->label, 1, 1,
                                      "--zip goes with a --vary before it");
            else
                paro_config_error_set(&error, PARO_CONFIG_ERROR_CONSTRAINT, a->label, 1, 1,
                                      "'%s' has %u values, zipped to %s's %u: give as many",
                                      a->path, a->values->len, before->label, before->values->len);
            paro_sweep_axis_free(a);
            paro_cli_report_error(error, NULL, (const char *const *)varies);
            return PARO_EXIT_ERROR;
        }
        /* W6: the later axis silently won, and the JSON had the key twice */
        for (guint k = 0; k < axes->len; k++) {
            const ParoSweepAxis *b = g_ptr_array_index(axes, k);
            if (strcmp(a->path, b->path) == 0) {
                paro_config_error_set(&error, PARO_CONFIG_ERROR_CONSTRAINT, a->label, 1, 1,
                                      "'%s' is varied twice (also by %s): give its values in one "
                                      "--vary",
                                      a->path, b->label);
                paro_sweep_axis_free(a);
                paro_cli_report_error(error, NULL, (const char *const *)varies);
                return PARO_EXIT_ERROR;
            }
        }
        g_ptr_array_add(axes, a);
    }
    /* C6: 10,000 x 10,000 points were accepted and ran out of memory; the product is
     * counted first (paro_sweep_n_points says 0 beyond 1e9) */
    guint64 n_points = paro_sweep_n_points(axes);
    double product = 1;
    g_autoptr(GString) factors = g_string_new(NULL);
    for (guint a = 0; a < axes->len; a++) {
        const ParoSweepAxis *axis = g_ptr_array_index(axes, a);
        if (axis->zipped)
            continue;
        guint len = axis->values->len;
        product *= (double)len;
        g_autofree char *count = paro_format_count(len);
        g_string_append_printf(factors, "%s%s", a ? " x " : "", count);
    }
    if (n_points == 0 || product > paro_limit_sweep_points_max()) {
        g_autofree char *total = paro_format_count(product);
        g_autofree char *max = paro_format_count(paro_limit_sweep_points_max());
        const ParoSweepAxis *last = g_ptr_array_index(axes, axes->len - 1);
        paro_config_error_set(&error, PARO_CONFIG_ERROR_RANGE, last->label, 1, 1,
                              "the sweep has %s points (%s), above the limit of %s: %s", total,
                              factors->str, max, paro_limit_sweep_points.why);
        paro_cli_report_error(error, NULL, (const char *const *)varies);
        return PARO_EXIT_ERROR;
    }
    g_autoptr(GPtrArray) files = g_ptr_array_new();
    for (guint a = 0; a < axes->len; a++) {
        const ParoSweepAxis *axis = g_ptr_array_index(axes, a);
        if (strcmp(axis->path, "model") == 0 || strcmp(axis->path, "topology") == 0 ||
            strcmp(axis->path, "calibration") == 0)
            for (guint v = 0; v < axis->values->len; v++)
                g_ptr_array_add(files, g_ptr_array_index(axis->values, v));
    }
    g_ptr_array_add(files, NULL);
    g_auto(GStrv) inputs = paro_cli_scenario_inputs(argv[1], (const char *const *)sets,
                                                    (const char *const *)files->pdata);
    if (!paro_cli_check_output("sweep", output, (const char *const *)inputs))
        return PARO_EXIT_ERROR;
    ParoMpi mpi;
    if (!paro_mpi_init(&mpi, &error)) {
        g_printerr("parosim sweep: error: %s\n", error->message);
        return PARO_EXIT_ERROR;
    }
    Progress progress = {g_get_monotonic_time(), mpi.rank == 0 && isatty(STDERR_FILENO)};
    if (mpi.size > 1 && mpi.rank == 0)
        g_printerr("parosim sweep: %" G_GUINT64_FORMAT " points over %d MPI ranks\n",
                   paro_sweep_n_points(axes), mpi.size);
    struct sigaction action = {.sa_handler = on_signal}, previous, previous_term;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &previous);
    sigaction(SIGTERM, &action, &previous_term);
    Rendering rendering = {axes, (ParoFormat)format};
    ParoSweepOptions options = {.jobs = jobs ? jobs : (int)g_get_num_processors(),
                                .rank = (guint64)mpi.rank,
                                .n_ranks = (guint64)mpi.size,
                                .no_extrapolate = no_extrapolate,
                                .cancel = &interrupted,
                                .progress = show_progress,
                                .progress_data = &progress,
                                .render = render_point,
                                .render_data = &rendering};
    guint64 n_done = 0;
    g_autoptr(GPtrArray) points = paro_sweep_run_with(argv[1], (const char *const *)sets, axes,
                                                      strategies, &options, &n_done, &error);
    /* every rank fails alike on bad input (each checks every value); a simulation error on
     * one rank makes all of them stop here */
    if (!paro_mpi_all_ok(&mpi, points != NULL)) {
        if (points == NULL && (mpi.rank == 0 || error->domain != PARO_CONFIG_ERROR))
            paro_cli_report_error(error, (const char *const *)sets, (const char *const *)varies);
        paro_mpi_finalize(&mpi);
        return PARO_EXIT_ERROR;
    }
    g_autoptr(GPtrArray) texts = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < points->len; i++) {
        ParoSweepPoint *p = g_ptr_array_index(points, i);
        g_ptr_array_add(texts, p ? g_steal_pointer(&p->text) : NULL);
    }
    n_done = paro_mpi_sum(&mpi, n_done);
    gboolean gathered = paro_mpi_gather_points(&mpi, texts, &error);
    paro_mpi_finalize(&mpi);
    if (!gathered) {
        g_printerr("parosim sweep: error: %s\n", error->message);
        return PARO_EXIT_ERROR;
    }
    if (mpi.rank != 0)
        return PARO_EXIT_OK;
    /* The head, then the points' texts as they are: the output is never held twice. */
    g_autoptr(GString) head = g_string_new(NULL);
    paro_report_sweep_head(axes, format, head);
    g_autoptr(GArray) parts =
        g_array_sized_new(FALSE, FALSE, sizeof(ParoFilePart), 2 * texts->len + 2);
    ParoFilePart first = {head->str, head->len};
    g_array_append_val(parts, first);
    paro_report_sweep_parts(texts, format, parts);
    gboolean written = paro_cli_write_parts("sweep", output, (const ParoFilePart *)parts->data,
                                            parts->len, (const char *const *)inputs);
    sigaction(SIGINT, &previous, NULL);
    sigaction(SIGTERM, &previous_term, NULL);
    if (interrupted) {
        g_printerr("parosim sweep: interrupted: %" G_GUINT64_FORMAT " of %u points done%s%s\n",
                   n_done, points->len, written && output ? ", written to " : "",
                   written && output ? output : "");
        return 128 + (int)interrupted;
    }
    return written ? PARO_EXIT_OK : PARO_EXIT_ERROR;
}
