/* SPDX-License-Identifier: MIT */
/* `parosim plan`: the fastest way to train a scenario's model on its cluster. */
#include "cli/cli.h"

#include <math.h>

#include <stdio.h>

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
    "--lga adds layered gradient accumulation on modular pipelines (one layer a module, full\n"
    "recomputation; Lamy-Poirier 2021); --dp-only keeps to data parallelism. Prints the\n"
    "best rows: each strategy once per layout, in its best configuration, with how much\n"
    "longer than the first row it trains ('behind'); --all prints every configuration kept;\n"
    "--explain says under each row what bounds it.\n"
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

int paro_cmd_plan(int argc, char **argv)
{
    g_auto(GStrv) sets = NULL;
    g_autofree char *tokens_text = NULL, *batch_text = NULL, *format_name = NULL;
    int top = 10, jobs = 0;
    gboolean rq_lga = FALSE, rq_dp_only = FALSE, all = FALSE, why = FALSE;
    GOptionEntry entries[] = {
        {"tokens", 0, 0, G_OPTION_ARG_STRING, &tokens_text,
         "Fixed token budget (default: the scaling law's steps at each row's batch)", "N"},
        {"batch-tokens", 0, 0, G_OPTION_ARG_STRING, &batch_text,
         "Fixed global batch in tokens (default: searched up to 4 B_crit)", "N"},
        {"set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &sets, "Override a scenario value (repeatable)",
         "KEY=VALUE"},
        {"lga", 0, 0, G_OPTION_ARG_NONE, &rq_lga,
         "Also search layered gradient accumulation on modular pipelines", NULL},
        {"dp-only", 0, 0, G_OPTION_ARG_NONE, &rq_dp_only,
         "Search data parallelism only (tp = cp = ep = pp = 1)", NULL},
        {"top", 'k', 0, G_OPTION_ARG_INT, &top, "Rows to print (default 10; 0: all)", "K"},
        {"all", 0, 0, G_OPTION_ARG_NONE, &all,
         "Every configuration searched (default: the best of each strategy and layout)", NULL},
        {"jobs", 'j', 0, G_OPTION_ARG_INT, &jobs,
         "Worker threads (default: the cores); the table does not depend on it", "N"},
        {"explain", 0, 0, G_OPTION_ARG_NONE, &why,
         "Under each row, what bounds it (compute, bubble, exposed communication, memory, "
         "the law) and the law's factors",
         NULL},
        {"format", 'f', 0, G_OPTION_ARG_STRING, &format_name, "table (default) or csv", "FORMAT"},
        {NULL},
    };
    if (!paro_cli_parse_options("plan", "SCENARIO.yaml", plan_help, entries, &argc, &argv))
        return PARO_EXIT_USAGE;
    g_autoptr(GError) error = NULL;
    int format = paro_cli_parse_format(format_name ? format_name : "table");
    ParoPlanRequest rq = {
        .sets = (const char *const *)sets, .lga = rq_lga, .dp_only = rq_dp_only, .jobs = jobs};
    const char *usage = NULL;
    if (jobs > 0 && !paro_limit_check_option(&paro_limit_jobs, "--jobs", jobs, &error))
        return paro_cli_usage("plan", error->message);
    if (argc != 2 || top < 0 || jobs < 0 || format < 0 || format == PARO_FORMAT_JSON)
        usage = "expected SCENARIO.yaml, --top >= 0, --format table or csv";
    else if (rq_lga && rq_dp_only)
        usage = "--lga (modular pipelines) and --dp-only (tp = pp = 1) exclude each other";
    else if ((tokens_text &&
              (!paro_units_parse_number(tokens_text, FALSE, &rq.tokens, NULL) || rq.tokens <= 0)) ||
             (batch_text && (!paro_units_parse_number(batch_text, FALSE, &rq.batch_tokens, NULL) ||
                             rq.batch_tokens <= 0)))
        usage = "--tokens and --batch-tokens take positive numbers, e.g. 1.4e12";
    g_autoptr(GError) limit_error = NULL;
    if (usage == NULL &&
        ((tokens_text &&
          !paro_limit_check_option(&paro_limit_tokens, "--tokens", rq.tokens, &limit_error)) ||
         (batch_text && !paro_limit_check_option(&paro_limit_tokens, "--batch-tokens",
                                                 rq.batch_tokens, &limit_error))))
        usage = limit_error->message;
    if (usage)
        return paro_cli_usage("plan", usage);
    g_autoptr(GArray) searched = paro_plan_search(argv[1], &rq, &error);
    if (searched == NULL) {
        paro_cli_report_error(error, (const char *const *)sets, NULL);
        return PARO_EXIT_ERROR;
    }
    if (searched->len == 0) {
        g_printerr("parosim plan: no configuration of the %" G_GINT64_FORMAT
                   " shapes searched fits in %.2f GiB a GPU, even by its memory's lower bound "
                   "(more GPUs, or offload with --set of your own)\n",
                   rq.shapes, rq.memory_bytes / PARO_GIB);
        return PARO_EXIT_ERROR;
    }
    g_autoptr(GArray) rows = all ? g_array_ref(searched) : best_per_layout(searched);
    guint n = top == 0 ? rows->len : MIN((guint)top, rows->len);
    g_autoptr(GString) out = g_string_new(NULL);
    if (format == PARO_FORMAT_CSV)
        csv((const ParoPlanRow *)rows->data, n, rq.gpus, out);
    else
        table(&rq, (const ParoPlanRow *)rows->data, n, why, rq.memory_bytes, out);
    g_autofree char *warning = budget_warning(&rq, (const ParoPlanRow *)rows->data, n);
    if (warning != NULL) {
        g_printerr("parosim plan: %s\n", warning);
        if (format != PARO_FORMAT_CSV)
            g_string_append_printf(out, "# %s\n", warning);
    }
    return paro_cli_write(out) ? PARO_EXIT_OK : PARO_EXIT_ERROR;
}
