/* SPDX-License-Identifier: MIT */
/* Shared by the command-line fuzz targets (fuzz_cli_*.c): each input is a command's
 * arguments, one a line (at most 32), given to the command's own function (cli/cmd-*.c) as
 * `parosim COMMAND` would. The command runs in a private folder holding copies of the
 * fixture files under in/ (refreshed before every input, so that an input writing onto one
 * cannot change the next), and an argument naming a path outside it is dropped, so that
 * no input can write or read anywhere else; --help (which exits) and --jobs (threads) are
 * dropped too. stdout goes to /dev/null and GLib's messages to nowhere. The work limits
 * are scaled down (paro_limit_set_work_scale; for sweep, also its points: at most 100) so
 * that every input that passes the estimates runs well under run.sh's per-input limit
 * under the sanitizers. */
#pragma once

#include <fcntl.h>

#include "cli/cli.h"
#include "core/limits.h"
#include "fuzz-common.h"

#define FUZZ_CLI_MAX_ARGS 32

typedef struct {
    const char *name;   /* in/NAME */
    const char *source; /* in the repository; NULL: @text */
    const char *text;
    char *contents;
    gsize length;
} FuzzFixture;

/* A small scenario (2 layers, 2 nodes of 4 GPUs): plans and sweeps on it are fast. */
static const char fuzz_tiny_scenario[] =
    "kind: scenario\nschema: 1\nname: tiny\n"
    "model: {kind: model, schema: 1, name: tiny, architecture: {hidden: 256, layers: 2, "
    "heads: 4, ffn: 1024, vocab: 1000}}\n"
    "topology:\n  kind: topology\n  schema: 1\n  name: two\n  nodes: 2\n"
    "  gpu: {name: G, memory: 80 GiB, peak_flops: 312 TFLOP/s, hbm_bandwidth: 2 TB/s}\n"
    "  node:\n    gpus: 4\n    fabric: {kind: nvswitch, bandwidth: 300 GB/s, latency: 3 us}\n"
    "    nics: {count: 1, bandwidth: 100 Gb/s, latency: 8 us}\n"
    "training: {micro_batch: 2, sequence: 128, accumulation: 2}\n";

static FuzzFixture fuzz_fixtures[] = {
    {"s.yaml", NULL,
     "kind: scenario\nschema: 1\nmodel: llama-7b.yaml\ntopology: a100.yaml\n"
     "parallelism: {group: 8}\ntraining: {micro_batch: 4, sequence: 512, accumulation: 10}\n",
     NULL, 0},
    {"tiny.yaml", NULL, fuzz_tiny_scenario, NULL, 0},
    {"llama-7b.yaml", "models/llama-7b.yaml", NULL, NULL, 0},
    {"a100.yaml", "topologies/a100x8-100g.yaml", NULL, NULL, 0},
    {"h100.yaml", "topologies/dgx-h100x8.yaml", NULL, NULL, 0},
    {"calib.yaml", "validation/fits/h100-2026-11-23.yaml", NULL, NULL, 0},
};

static void fuzz_cli_silence(const gchar *text)
{
    (void)text;
}

/* Once: the private folder, the fixtures' contents, the output silenced. */
static void fuzz_cli_init(double work_scale)
{
    static gboolean done;
    if (done)
        return;
    done = TRUE;
    const char *tmp = fuzz_init();
    for (guint i = 0; i < G_N_ELEMENTS(fuzz_fixtures); i++) {
        FuzzFixture *f = &fuzz_fixtures[i];
        if (f->source) {
            char *path = g_build_filename(fuzz_source_root(), f->source, NULL);
            gboolean ok = g_file_get_contents(path, &f->contents, &f->length, NULL);
            g_assert(ok);
            g_free(path);
        } else {
            f->contents = g_strdup(f->text);
            f->length = strlen(f->text);
        }
    }
    int rc = chdir(tmp);
    g_assert(rc == 0);
    g_mkdir_with_parents("in", 0700);
    int null = open("/dev/null", O_WRONLY);
    g_assert(null >= 0);
    dup2(null, STDOUT_FILENO);
    close(null);
    g_set_print_handler(fuzz_cli_silence);
    g_set_printerr_handler(fuzz_cli_silence);
    paro_limit_set_work_scale(work_scale);
}

/* Whether an argument may pass: no path outside the folder, no --help, no --jobs. */
static gboolean fuzz_cli_allowed(const char *arg)
{
    if (strchr(arg, '/') != NULL && (!g_str_has_prefix(arg, "in/") || strstr(arg, "..")))
        return FALSE;
    if (g_str_has_prefix(arg, "--help") || g_str_has_prefix(arg, "--jobs"))
        return FALSE;
    /* short options may be grouped: -ch is -c -h */
    if (arg[0] == '-' && arg[1] != '-' && strpbrk(arg + 1, "h?j") != NULL)
        return FALSE;
    return TRUE;
}

/* Runs @command (a paro_cmd_*) on the input's lines. */
static void fuzz_cli_run(const char *name, int (*command)(int, char **), const uint8_t *data,
                         size_t size)
{
    /* the fixtures as they were, and nothing else in the folder */
    GDir *dir = g_dir_open(".", 0, NULL);
    const char *entry;
    while (dir && (entry = g_dir_read_name(dir)) != NULL)
        if (strcmp(entry, "in") != 0)
            fuzz_remove_tree(entry);
    if (dir)
        g_dir_close(dir);
    for (guint i = 0; i < G_N_ELEMENTS(fuzz_fixtures); i++) {
        char *path = g_build_filename("in", fuzz_fixtures[i].name, NULL);
        fuzz_remove_tree(path);
        fuzz_write(path, (const uint8_t *)fuzz_fixtures[i].contents, fuzz_fixtures[i].length);
        g_free(path);
    }
    char **lines = fuzz_lines(data, size, FUZZ_CLI_MAX_ARGS);
    GPtrArray *args = g_ptr_array_new();
    g_ptr_array_add(args, (gpointer)name);
    for (int i = 0; lines[i]; i++)
        if (fuzz_cli_allowed(lines[i]))
            g_ptr_array_add(args, lines[i]);
    int argc = (int)args->len;
    /* GOption rearranges argv: a copy of the pointers, the strings stay owned by @lines */
    g_ptr_array_add(args, NULL);
    char **argv = g_memdup2(args->pdata, sizeof(char *) * args->len);
    int code = command(argc, argv);
    g_assert(code == 0 || code == 1 || code == 2 || code == 130);
    g_free(argv);
    g_ptr_array_free(args, TRUE);
    g_strfreev(lines);
}
