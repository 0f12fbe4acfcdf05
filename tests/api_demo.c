/* SPDX-License-Identifier: MIT */
/* A program written only against the public API (parosim.h), as a library user would:
 * `api_demo SCENARIO STRATEGIES json|rows|yaml`. json prints what parosim_run returns;
 * rows prints one CSV line per ParosimStepRow (rank, name, fits, step, compute, comm,
 * exposed, peak); yaml loads SCENARIO's text through parosim_scenario_load_yaml and prints
 * the JSON. Used by tests/api.sh (against the CLI) and tests/install.sh (compiled against
 * the installed library through pkg-config). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <parosim.h>

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = calloc(1, (size_t)size + 1);
    if (text && fread(text, 1, (size_t)size, f) != (size_t)size) {
        free(text);
        text = NULL;
    }
    fclose(f);
    return text;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: api_demo SCENARIO STRATEGIES json|rows|yaml\n");
        return 2;
    }
    char *error = NULL;
    ParosimScenario *s = NULL;
    if (strcmp(argv[3], "yaml") == 0) {
        char *text = slurp(argv[1]);
        char *dir = strdup(argv[1]);
        char *slash = strrchr(dir, '/');
        if (slash)
            *slash = '\0';
        s = text ? parosim_scenario_load_yaml(text, slash ? dir : ".", "scenario", NULL, &error)
                 : NULL;
        free(text);
        free(dir);
    } else {
        s = parosim_scenario_load(argv[1], NULL, &error);
    }
    if (s == NULL) {
        fprintf(stderr, "api_demo: %s\n", error ? error : "no scenario");
        parosim_free(error);
        return 1;
    }
    int status = 0;
    if (strcmp(argv[3], "rows") == 0) {
        ParosimStepRow *rows = NULL;
        size_t n = 0;
        if (parosim_run_rows(s, argv[2], &rows, &n, &error) != 0) {
            fprintf(stderr, "api_demo: %s\n", error);
            status = 1;
        }
        for (size_t i = 0; i < n; i++)
            printf("%d,%s,%s,%.9g,%.9g,%.9g,%.9g,%.0f\n", rows[i].rank, rows[i].strategy,
                   rows[i].fits ? "true" : "false", rows[i].step_s, rows[i].compute_s,
                   rows[i].comm_s, rows[i].exposed_comm_s, rows[i].peak_bytes);
        parosim_free(rows);
    } else {
        char *json = parosim_run(s, argv[2], "json", &error);
        if (json == NULL) {
            fprintf(stderr, "api_demo: %s\n", error);
            status = 1;
        } else {
            fputs(json, stdout);
        }
        parosim_free(json);
    }
    parosim_free(error);
    parosim_scenario_free(s);
    return status;
}
