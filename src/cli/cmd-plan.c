/* SPDX-License-Identifier: MIT */
/* `parosim plan`: the fastest way to train a scenario's model on its cluster. */
#include "cli/cli.h"

#include <math.h>

#include <stdio.h>

#include "cli/mpi.h"
#include "core/format.h"
#include "core/limits.h"
#include "core/units.h"
#include "pipe/pipe.h"
#include "plan/plan.h"
#include "report/report.h"

static const char plan_help[] =
    "Searches the whole space of a scenario for the shortest time to train its model on its\n"
    "cluster: every strategy, tensor x context x expert x pipeline layout (tp inside a node,\n"
    "cp while a rank keeps 4,096 tokens, ep for mixtures of experts, pp with uneven stages,\n"
    "1F1B or interleaved), micro-batch, recomputation (none, selective, full on every second\n"
    "layer, full), sequence parallelism, offload, PaRO group size, collective algorithm and\n"
    "accumulation. Each row's time to train is its simulated step times the scaling law's\n"
    "steps at its batch B (Kaplan et al. 2020): S(B) = S_min (1 + B_crit / B), so that it\n"
    "trains on E_min (1 + B / B_crit) tokens; batches up to 4 B_crit are searched. --tokens\n"
    "fixes the token budget instead (steps = tokens / B) and --batch-tokens the batch (the\n"
    "accumulation nearest it). A memory lower bound drops what cannot fit before any\n"
    "simulation, and a compute lower bound against the best found stops the search: rows\n"
    "within 5% of the best are complete. 'fits' says tight when the peak leaves less than\n"
    "the allocator's headroom (training.memory_headroom); tight rows rank after the others.\n"
    "--lga adds layered gradient accumulation on modular pipelines (one layer a module;\n"
    "Lamy-Poirier 2021); --dp-only keeps to data parallelism. Prints the\n"
    "best rows: each strategy once per layout, in its best configuration, with how much\n"
    "longer than the first row it trains ('behind'); --all prints every configuration kept;\n"
    "--explain says under each row what bounds it. Under mpirun (an MPI build) the ranks\n"
    "split the configurations and rank 0 prints what one process prints.\n"
    "\n"
    "Examples:\n"
    "  parosim plan scenarios/llama-7b_a100x8-100g_n32.yaml\n"
    "  parosim plan scenarios/paro-llama-65b-full_n32.yaml --tokens 1.4e12 --set "
    "topology.nodes=64\n"
    "  parosim plan SCENARIO.yaml --batch-tokens 4e6 --top 20 --format csv\n"
    "  parosim plan scenarios/lamy-poirier-gpt3-175b_a100x8-800g.yaml --lga --explain";

/* "1f1b", "interleaved/4", or "modular/10+LGA": the schedule, modules per device, layered
 * accumulation; "-" without a pipeline */
static char *schedule_label(const ParoPlanLayout *l)
{
    if (l->pp == 1 && !l->layered)
        return g_strdup("-");
    if (l->layered)
        return g_strdup_printf("%s/%" G_GINT64_FORMAT "+LGA", paro_pipe_schedule_names[l->schedule],
                               l->virtual_stages);
    if (l->virtual_stages > 1)
        return g_strdup_printf("%s/%" G_GINT64_FORMAT, paro_pipe_schedule_names[l->schedule],
                               l->virtual_stages);
    return g_strdup_printf("%s%s", paro_pipe_schedule_names[l->schedule], l->uneven ? "*" : "");
}

/* "none", "sel", "full", "full/2" (every second layer), "op" */
static char *recompute_label(const ParoPlanLayout *l)
{
    static const char *const shortname[] = {"none", "sel", "full", "op"};
    if (l->recompute == PARO_RECOMPUTE_FULL && l->recompute_every > 1)
        return g_strdup_printf("full/%" G_GINT64_FORMAT, l->recompute_every);
    return g_strdup(shortname[l->recompute]);
}

static const char *const offload_labels[] = {"-", "opt", "opt+par"};

/* The best configuration of each strategy on each layout, fastest first: the rows the
 * search ranks behind it differ only in group size, micro-batch, accumulation or
 * algorithm (issue #17). --all prints every configuration. */
static GArray *best_per_layout(const GArray *rows)
{
    GArray *kept = g_array_new(FALSE, FALSE, sizeof(ParoPlanRow));
    for (guint i = 0; i < rows->len; i++) {
        const ParoPlanRow *r = &g_array_index(rows, ParoPlanRow, i);
        gboolean seen = FALSE;
        for (guint k = 0; k < kept->len && !seen; k++) {
            const ParoPlanRow *o = &g_array_index(kept, ParoPlanRow, k);
            seen = o->strategy == r->strategy && paro_plan_layout_equal(&o->layout, &r->layout);
        }
        if (!seen)
            g_array_append_vals(kept, r, 1);
    }
    return kept;
}

/* How much longer than the first row's training a row takes: 0 for the best. */
static double behind(const ParoPlanRow *rows, guint i)
{
    return rows[i].train_s / rows[0].train_s - 1.0;
}

static const char *fits_label(const ParoPlanRow *r)
{
    return !r->fits ? "OOM" : r->tight ? "tight" : "yes";
}

/* Under a row (--explain): what bounds it, the law's factors, its memory. */
static void explain(const ParoPlanRequest *rq, const ParoPlanRow *r, double memory, GString *out)
{
    double exposed = MAX(0, r->step_s - r->compute_bound_s - r->bubble_bound_s);
    const ParoTrainingBudget *b = &rq->budget;
    g_string_append_printf(
        out,
        "#       bound by %s: compute %.0f%%, pipeline bubble %.0f%%, exposed communication and "
        "contention %.0f%% of the step; batch %.3g x B_crit, %.3g x S_min steps (%s); peak "
        "%.2f of %.2f GiB\n",
        paro_plan_bound_names[r->bound], 100 * r->compute_bound_s / r->step_s,
        100 * r->bubble_bound_s / r->step_s, 100 * exposed / r->step_s,
        r->batch_tokens / b->critical_batch_tokens, r->steps / b->min_steps,
        rq->fixed_tokens ? "the token budget's" : "the law's", r->peak_bytes / PARO_GIB,
        memory / PARO_GIB);
    /* the row as a run: its overrides after the user's own */
    g_autoptr(GPtrArray) sets = paro_plan_row_overrides(rq, r);
    g_string_append(out, "#       run it: parosim run SCENARIO.yaml");
    for (guint i = 0; i + 1 < sets->len; i++)
        g_string_append_printf(out, " --set %s", (const char *)g_ptr_array_index(sets, i));
    g_string_append_printf(out, " --strategies %s\n", r->strategy->name);
}

static void table(const ParoPlanRequest *rq, const ParoPlanRow *rows, guint n, gboolean why,
                  double memory, GString *out)
{
    const ParoTrainingBudget *b = &rq->budget;
    g_string_append_printf(
        out,
        "# parosim %s plan: shortest time to train\n"
        "# scaling law (Kaplan et al. 2020) for %.4g non-embedding parameters: loss "
        "L(N) %.3f, target %.3f, B_crit %.4g tokens, S_min %.4g steps, E_min %.4g tokens\n",
        PARO_VERSION, rq->params, b->loss_converged, b->loss_target, b->critical_batch_tokens,
        b->min_steps, b->min_tokens);
    if (rq->fixed_tokens)
        g_string_append_printf(out,
                               "# mode: a fixed budget of %.4g tokens (--tokens): steps = "
                               "tokens / batch\n",
                               rq->tokens);
    else
        g_string_append(out, "# mode: the law at every batch B: steps S_min (1 + B_crit / B), "
                             "tokens E_min (1 + B / B_crit)\n");
    if (rq->fixed_batch)
        g_string_append_printf(out,
                               "# batch: the accumulation nearest %.4g tokens (--batch-tokens)\n",
                               rq->batch_tokens);
    else
        g_string_append_printf(out, "# batch: searched up to %.4g tokens (%.0f x B_crit)\n",
                               paro_plan_largest_batch(rq), PARO_PLAN_LAW_BATCH_CAP);
    g_string_append_printf(out,
                           "# gpus %" G_GINT64_FORMAT "  shapes bounded %" G_GINT64_FORMAT
                           "; every configuration within %.0f%% of the best simulated\n",
                           rq->gpus, rq->shapes, 100 * PARO_PLAN_WINDOW);
    g_string_append(out, "#rank strategy          tp  cp  ep  pp  schedule       sp  recompute "
                         "offload   m     b     A  algorithm    batch      step     steps  "
                         "train  behind   GPU-hours    peak  fits\n"
                         "#                                                                     "
                         "                                    (tokens)     (s)           "
                         "   (days)                      (GiB)\n");
    for (guint i = 0; i < n; i++) {
        const ParoPlanRow *r = &rows[i];
        g_autofree char *schedule = schedule_label(&r->layout);
        g_autofree char *recompute = recompute_label(&r->layout);
        /* fixed decimals while they fit the column, else scientific (issue #16 W7) */
        char step[G_ASCII_DTOSTR_BUF_SIZE], steps[G_ASCII_DTOSTR_BUF_SIZE],
            days[G_ASCII_DTOSTR_BUF_SIZE], peak[G_ASCII_DTOSTR_BUF_SIZE];
        g_string_append_printf(
            out,
            "%5u %-17s %2" G_GINT64_FORMAT " %3" G_GINT64_FORMAT " %3" G_GINT64_FORMAT
            " %3" G_GINT64_FORMAT "  %-14s %-3s %-9s %-7s %4" G_GINT64_FORMAT " %5" G_GINT64_FORMAT
            " %5" G_GINT64_FORMAT "  %-10s %9.3g %9s %9s %7s %+6.1f%% %11.4g %7s  %s\n",
            i + 1, r->strategy->name, r->layout.tp, r->layout.cp, r->layout.ep, r->layout.pp,
            schedule, r->layout.sequence_parallel ? "sp" : "-", recompute,
            offload_labels[r->layout.offload], r->group, r->micro_batch, r->accumulation,
            paro_algorithm_names[r->algorithm], r->batch_tokens,
            paro_format_fixed(step, sizeof step, r->step_s, 3, 9),
            paro_format_fixed(steps, sizeof steps, r->steps, 0, 9),
            paro_format_fixed(days, sizeof days, r->train_s / 86400.0, 2, 7),
            100.0 * behind(rows, i), r->gpu_hours,
            paro_format_fixed(peak, sizeof peak, r->peak_bytes / PARO_GIB, 2, 7), fits_label(r));
        if (why)
            explain(rq, r, memory, out);
    }
}

/* With a fixed token budget, rows whose steps fall short of the law's S(B) at their batch
 * stop before the law's loss (issue #16 W8: 131,072 nodes planned 270 steps at 125 x
 * B_crit without a word). (transfer full) NULL when none does. */
static char *budget_warning(const ParoPlanRequest *rq, const ParoPlanRow *rows, guint n)
{
    if (!rq->fixed_tokens)
        return NULL;
    guint short_of = 0;
    double worst = 1;
    for (guint i = 0; i < n; i++) {
        double law = paro_scaling_steps(&rq->budget, rows[i].batch_tokens);
        if (rows[i].steps < law) {
            short_of++;
            worst = MIN(worst, rows[i].steps / law);
        }
    }
    if (short_of == 0)
        return NULL;
    return g_strdup_printf(
        "warning: %u of the %u configurations printed stop short of the scaling law's loss: "
        "the budget of %.4g tokens gives as few as %.2g of the steps S_min (1 + B_crit / B) "
        "the law needs at their batch (leave out --tokens for the law's steps)",
        short_of, n, rq->tokens, worst);
}

static void csv(const ParoPlanRow *rows, guint n, gint64 gpus, GString *out)
{
    g_string_append(
        out, "rank,name,tp,pp,schedule,virtual,layered,group,micro_batch,accumulation,algorithm,"
             "batch_tokens,time_step,steps,time_train,behind,gpu_hours,mem_peak,fits,cp,ep,"
             "uneven,sequence_parallel,recompute,recompute_every,offload_optimizer,"
             "offload_parameters,tokens,time_compute_bound,time_bubble_bound,tight,bound,gpus,"
             "schema_version\n");
    for (guint i = 0; i < n; i++) {
        const ParoPlanRow *r = &rows[i];
        const ParoPlanLayout *l = &r->layout;
        g_string_append_printf(
            out,
            "%u,%s,%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%s,%" G_GINT64_FORMAT
            ",%s,%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%s",
            i + 1, r->strategy->name, l->tp, l->pp, paro_pipe_schedule_names[l->schedule],
            l->virtual_stages, l->layered ? "true" : "false", r->group, r->micro_batch,
            r->accumulation, paro_algorithm_names[r->algorithm]);
        const double v[] = {r->batch_tokens,     r->step_s,       r->steps,
                            r->train_s,          behind(rows, i), r->gpu_hours,
                            round(r->peak_bytes)};
        for (guint k = 0; k < G_N_ELEMENTS(v); k++) {
            g_string_append_c(out, ',');
            paro_report_number(out, v[k]);
        }
        g_string_append_printf(
            out,
            ",%s,%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%s,%s,%s,%" G_GINT64_FORMAT ",%s,%s",
            r->fits ? "true" : "false", l->cp, l->ep, l->uneven ? "true" : "false",
            l->sequence_parallel ? "true" : "false", paro_recompute_names[l->recompute],
            l->recompute_every, l->offload >= 1 ? "cpu" : "none", l->offload >= 2 ? "cpu" : "none");
        const double w[] = {r->tokens, r->compute_bound_s, r->bubble_bound_s};
        for (guint k = 0; k < G_N_ELEMENTS(w); k++) {
            g_string_append_c(out, ',');
            paro_report_number(out, w[k]);
        }
        g_string_append_printf(out, ",%s,%s,%" G_GINT64_FORMAT ",%d\n", r->tight ? "true" : "false",
                               paro_plan_bound_names[r->bound], gpus, PARO_SCHEMA_VERSION);
    }
}

/* The options after parsing. */
typedef struct {
    char **sets;
    const char *tokens_text, *batch_text, *format_name;
    int top, jobs;
    gboolean lga, dp_only, all, why;
} PlanOptions;

/* Rank 0's output: the rows of the whole search, as table or CSV. */
static int write_plan(const ParoPlanRequest *rq, const PlanOptions *o, int format,
                      const ParoPlanPart *part)
{
    g_autoptr(GArray) searched = paro_plan_finish(part);
    if (searched->len == 0) {
        g_printerr("parosim plan: no configuration of the %" G_GINT64_FORMAT
                   " shapes searched fits in %.2f GiB a GPU, even by its memory's lower bound "
                   "(more GPUs, or offload with --set of your own)\n",
                   rq->shapes, rq->memory_bytes / PARO_GIB);
        return PARO_EXIT_ERROR;
    }
    g_autoptr(GArray) rows = o->all ? g_array_ref(searched) : best_per_layout(searched);
    guint n = o->top == 0 ? rows->len : MIN((guint)o->top, rows->len);
    g_autoptr(GString) out = g_string_new(NULL);
    if (format == PARO_FORMAT_CSV)
        csv((const ParoPlanRow *)rows->data, n, rq->gpus, out);
    else
        table(rq, (const ParoPlanRow *)rows->data, n, o->why, rq->memory_bytes, out);
    g_autofree char *warning = budget_warning(rq, (const ParoPlanRow *)rows->data, n);
    if (warning != NULL) {
        g_printerr("parosim plan: %s\n", warning);
        if (format != PARO_FORMAT_CSV)
            g_string_append_printf(out, "# %s\n", warning);
    }
    return paro_cli_write(out) ? PARO_EXIT_OK : PARO_EXIT_ERROR;
}

/* On rank 0, every rank's part of the search merged (the others send theirs and get an
 * empty part); FALSE on a part that does not read back. */
static gboolean gather_parts(const ParoMpi *mpi, ParoPlanPart *part, GError **error)
{
    if (mpi->size == 1)
        return TRUE;
    g_autoptr(GPtrArray) texts = g_ptr_array_new_with_free_func(g_free);
    for (int r = 0; r < mpi->size; r++)
        g_ptr_array_add(texts, r == mpi->rank ? paro_plan_part_to_text(part) : NULL);
    if (!paro_mpi_gather_points(mpi, texts, error))
        return FALSE;
    if (mpi->rank != 0)
        return TRUE;
    for (int r = 1; r < mpi->size; r++) {
        g_auto(ParoPlanPart) other = {NULL, INFINITY};
        const char *text = g_ptr_array_index(texts, r);
        if (text == NULL || !paro_plan_part_from_text(text, &other, error)) {
            if (text == NULL)
                g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
                            "MPI rank %d sent no part of the plan", r);
            return FALSE;
        }
        paro_plan_part_merge(part, &other);
    }
    return TRUE;
}

/* The command on one rank (rank 0 of 1 without mpirun): each rank searches its share of
 * the configurations, rank 0 gathers the parts and writes what one process writes; an
 * error is reported by one rank, every rank returns the same exit code. */
static int plan(const ParoMpi *mpi, const PlanOptions *o, const char *path)
{
    g_autoptr(GError) error = NULL;
    gboolean quiet = mpi->rank != 0;
    int format = paro_cli_parse_format(o->format_name ? o->format_name : "table");
    ParoPlanRequest rq = {.sets = (const char *const *)o->sets,
                          .lga = o->lga,
                          .dp_only = o->dp_only,
                          .jobs = o->jobs,
                          .rank = mpi->rank,
                          .ranks = mpi->size};
    const char *usage = NULL;
    if (o->jobs > 0 && !paro_limit_check_option(&paro_limit_jobs, "--jobs", o->jobs, &error))
        usage = error->message;
    else if (path == NULL || o->top < 0 || o->jobs < 0 || format < 0 || format == PARO_FORMAT_JSON)
        usage = "expected SCENARIO.yaml, --top >= 0, --format table or csv";
    else if (o->lga && o->dp_only)
        usage = "--lga (modular pipelines) and --dp-only (tp = pp = 1) exclude each other";
    else if ((o->tokens_text &&
              (!paro_units_parse_number(o->tokens_text, FALSE, &rq.tokens, NULL) ||
               rq.tokens <= 0)) ||
             (o->batch_text &&
              (!paro_units_parse_number(o->batch_text, FALSE, &rq.batch_tokens, NULL) ||
               rq.batch_tokens <= 0)))
        usage = "--tokens and --batch-tokens take positive numbers, e.g. 1.4e12";
    else if ((o->tokens_text &&
              !paro_limit_check_option(&paro_limit_tokens, "--tokens", rq.tokens, &error)) ||
             (o->batch_text && !paro_limit_check_option(&paro_limit_tokens, "--batch-tokens",
                                                        rq.batch_tokens, &error)))
        usage = error->message;
    if (usage)
        return quiet ? PARO_EXIT_USAGE : paro_cli_usage("plan", usage);
    g_auto(ParoPlanPart) part = {NULL, INFINITY};
    gboolean searched_ok = paro_plan_search_part(path, &rq, &part, &error);
    /* bad input fails alike on every rank (each loads the scenario and bounds every
     * shape); one met in a configuration fails on the rank that simulates it */
    int failed = paro_mpi_first(mpi, !searched_ok);
    if (failed >= 0) {
        if (failed == mpi->rank)
            paro_cli_report_error(error, (const char *const *)o->sets, NULL);
        return PARO_EXIT_ERROR;
    }
    guint64 simulated = paro_mpi_sum(mpi, (guint64)rq.simulated);
    if (mpi->size > 1 && !quiet)
        g_printerr("parosim plan: %" G_GINT64_FORMAT
                   " configurations over %d MPI ranks, %" G_GUINT64_FORMAT " simulated\n",
                   rq.configurations, mpi->size, simulated);
    gboolean gathered = gather_parts(mpi, &part, &error);
    if (!paro_mpi_all_ok(mpi, gathered)) {
        if (!gathered)
            g_printerr("parosim plan: error: %s\n", error->message);
        return PARO_EXIT_ERROR;
    }
    int code = PARO_EXIT_OK;
    if (!quiet)
        code = write_plan(&rq, o, format, &part);
    /* every rank exits as rank 0 does */
    if (!paro_mpi_all_ok(mpi, quiet || code == PARO_EXIT_OK))
        return quiet ? PARO_EXIT_ERROR : code;
    return PARO_EXIT_OK;
}

int paro_cmd_plan(int argc, char **argv)
{
    g_auto(GStrv) sets = NULL;
    g_autofree char *tokens_text = NULL, *batch_text = NULL, *format_name = NULL;
    PlanOptions o = {.top = 10};
    GOptionEntry entries[] = {
        {"tokens", 0, 0, G_OPTION_ARG_STRING, &tokens_text,
         "Fixed token budget (default: the scaling law's steps at each row's batch)", "N"},
        {"batch-tokens", 0, 0, G_OPTION_ARG_STRING, &batch_text,
         "Fixed global batch in tokens (default: searched up to 4 B_crit)", "N"},
        {"set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &sets, "Override a scenario value (repeatable)",
         "KEY=VALUE"},
        {"lga", 0, 0, G_OPTION_ARG_NONE, &o.lga,
         "Also search layered gradient accumulation on modular pipelines", NULL},
        {"dp-only", 0, 0, G_OPTION_ARG_NONE, &o.dp_only,
         "Search data parallelism only (tp = cp = ep = pp = 1)", NULL},
        {"top", 'k', 0, G_OPTION_ARG_INT, &o.top, "Rows to print (default 10; 0: all)", "K"},
        {"all", 0, 0, G_OPTION_ARG_NONE, &o.all,
         "Every configuration searched (default: the best of each strategy and layout)", NULL},
        {"jobs", 'j', 0, G_OPTION_ARG_INT, &o.jobs,
         "Worker threads (default: the cores; under mpirun, of each rank); the table does not "
         "depend on it",
         "N"},
        {"explain", 0, 0, G_OPTION_ARG_NONE, &o.why,
         "Under each row, what bounds it (compute, bubble, exposed communication, memory, "
         "the law) and the law's factors",
         NULL},
        {"format", 'f', 0, G_OPTION_ARG_STRING, &format_name, "table (default) or csv", "FORMAT"},
        {NULL},
    };
    if (!paro_cli_parse_options("plan", "SCENARIO.yaml", plan_help, entries, &argc, &argv))
        return PARO_EXIT_USAGE;
    o.sets = sets;
    o.tokens_text = tokens_text;
    o.batch_text = batch_text;
    o.format_name = format_name;
    g_autoptr(GError) error = NULL;
    ParoMpi mpi;
    if (!paro_mpi_init(&mpi, &error)) {
        g_printerr("parosim plan: error: %s\n", error->message);
        return PARO_EXIT_ERROR;
    }
    int code = plan(&mpi, &o, argc == 2 ? argv[1] : NULL);
    paro_mpi_finalize(&mpi);
    return code;
}
