/* SPDX-License-Identifier: MIT */
/* parosim: entry point and command dispatch. */
#include <gsl/gsl_errno.h>
#include <locale.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "core/files.h"
#include "core/limits.h"
#include "core/spell.h"
#include "plot/plot.h"

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} Command;

static const Command commands[] = {
    {"run", paro_cmd_run,
     "simulate one training step for every strategy; rank by step time (the main job)"},
    {"sweep", paro_cmd_sweep,
     "run the main job over a cartesian product of varied values, in parallel"},
    {"strategies", paro_cmd_strategies,
     "memory, traffic and closed-form step time of every sharding strategy, ranked"},
    {"plan", paro_cmd_plan,
     "the shortest time to train: configurations and strategies at the critical batch"},
    {"report", paro_cmd_report,
     "the main job as one self-contained HTML page: ranking, figures, parameters"},
    {"plot", paro_cmd_plot,
     "render a strategy-selection plot (gnuplot) from a run, sweep, trace or collective output"},
    {"collective", paro_cmd_collective,
     "time one collective by NCCL's cost model or on the cluster's links; nccl-tests table"},
    {"pipeline", paro_cmd_pipeline,
     "pipeline schedules (gpipe, 1f1b, interleaved, modular): makespan, bubble, activations"},
    {"calibrate", paro_cmd_calibrate,
     "fit nccl-tests and paro-harness logs into a calibration file"},
    {"validate", paro_cmd_validate,
     "predict measurements (a calibration's, or nccl-tests logs from a topology); errors"},
};

static void usage(FILE *to)
{
    fprintf(to, "Usage: parosim COMMAND [OPTIONS] ...\n"
                "\n"
                "Simulates the memory and communication cost of data-parallel LLM training for\n"
                "every PaRO strategy (27 partition triples of parameters, gradients and optimizer\n"
                "states) and every ZeRO stage, DDP, MiCS, FSDP and ZeRO++, on a cluster described\n"
                "in YAML.\n"
                "\n"
                "Commands:\n");
    for (guint i = 0; i < G_N_ELEMENTS(commands); i++)
        fprintf(to, "  %-12s %s\n", commands[i].name, commands[i].summary);
    fprintf(to, "\n"
                "Example:\n"
                "  parosim run scenarios/llama-7b_a100x8-100g_n32.yaml\n"
                "  parosim strategies scenarios/llama-7b_a100x8-100g_n32.yaml\n"
                "\n"
                "'parosim COMMAND --help' explains a command. Inputs: models/, topologies/,\n"
                "scenarios/ (docs/formats.md); docs/cli/ has a page a command.\n"
                "\n"
                "What would take more than about 10 s to simulate (120 s to plan) is refused at\n"
                "once with its estimate; PAROSIM_WORK_SCALE=F multiplies those limits by F.\n");
}

/* PAROSIM_WORK_SCALE=F: the work limits (a simulation's 10 s, a plan's 120 s, a sweep's
 * points) times F, for who means to wait (or, below 1, to refuse sooner). */
static gboolean apply_work_scale(void)
{
    const char *text = g_getenv("PAROSIM_WORK_SCALE");
    if (text == NULL)
        return TRUE;
    char *end = NULL;
    double scale = g_ascii_strtod(text, &end);
    if (end == text || *end != '\0' || !(scale > 0 && scale <= 1e6)) {
        fprintf(stderr,
                "parosim: PAROSIM_WORK_SCALE='%s' is not a number in (0, 1e6]: it multiplies "
                "the work limits (10 s a simulation, 120 s a plan)\n",
                text);
        return FALSE;
    }
    paro_limit_set_work_scale(scale);
    return TRUE;
}

/* Whatever a command is doing when a signal lands, it leaves no temporary file or
 * gnuplot behind; then it dies of the signal, as without a handler. */
static void on_signal(int signo)
{
    paro_plot_abort();
    paro_file_abort_pending();
    signal(signo, SIG_DFL);
    raise(signo);
}

void paro_cli_install_signal_cleanup(void)
{
    struct sigaction action = {.sa_handler = on_signal};
    sigemptyset(&action.sa_mask);
    const int signals[] = {SIGINT, SIGTERM, SIGHUP};
    for (guint i = 0; i < G_N_ELEMENTS(signals); i++) {
        struct sigaction before;
        /* a signal ignored by whoever started us (nohup, a background job) stays ignored */
        if (sigaction(signals[i], NULL, &before) == 0 && before.sa_handler != SIG_IGN)
            sigaction(signals[i], &action, NULL);
    }
}

int main(int argc, char **argv)
{
    gsl_set_error_handler_off();
    /* A simulation's task and edge arrays grow to megabytes by doubling. Above glibc's
     * mmap threshold each growth maps fresh pages and each free unmaps them: a fifth of a
     * sweep's time went to the kernel's page faults. Served from the heap and kept there,
     * they are reused by the next simulation (issue #18). */
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
    /* The user's locale for messages and character sets, but numbers always in C form,
     * so outputs are byte-identical everywhere. */
    setlocale(LC_ALL, "");
    setlocale(LC_NUMERIC, "C");
    if (!apply_work_scale())
        return PARO_EXIT_USAGE;
#ifdef PARO_FAULT_INJECTION
    if (!paro_cli_arm_faults())
        return PARO_EXIT_USAGE;
#endif
    paro_cli_install_signal_cleanup();
    if (argc < 2) {
        usage(stderr);
        return PARO_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return PARO_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
#ifdef PARO_HAVE_MPI
        printf("parosim %s (mpi)\n", PARO_VERSION);
#else
        printf("parosim %s\n", PARO_VERSION);
#endif
        return PARO_EXIT_OK;
    }
    for (guint i = 0; i < G_N_ELEMENTS(commands); i++)
        if (strcmp(argv[1], commands[i].name) == 0) {
            g_autofree char *prgname = g_strdup_printf("parosim %s", commands[i].name);
            g_set_prgname(prgname); /* copies */
            return commands[i].run(argc - 1, argv + 1);
        }
    const char *names[G_N_ELEMENTS(commands)];
    for (guint i = 0; i < G_N_ELEMENTS(commands); i++)
        names[i] = commands[i].name;
    const char *nearest = paro_spell_nearest(argv[1], names, G_N_ELEMENTS(names));
    if (nearest) { /* a typo: the suggestion, not the whole usage */
        fprintf(stderr, "parosim: unknown command '%s'; did you mean '%s'?\n", argv[1], nearest);
        fprintf(stderr, "Try 'parosim --help'.\n");
        return PARO_EXIT_USAGE;
    }
    fprintf(stderr, "parosim: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return PARO_EXIT_USAGE;
}
