/* SPDX-License-Identifier: MIT */
/* Max-min fair sharing by progressive filling (Bertsekas and Gallager, Data Networks,
 * section 6.5.2), with weights:
 *   all flows start unfrozen at rate 0; repeat: for each link l crossed by unfrozen flows,
 *   share_l = residual_l / sum of the weights of its unfrozen flows; s = min share_l;
 *   every unfrozen flow gains s, every link loses s * (its unfrozen weight); flows on
 *   links left with no residual freeze. Each iteration saturates at least one link, so it
 *   ends after at most min(links, flows) rounds.
 * Time: a flow's end is ceil(remaining / rate) picoseconds after the solve that set its
 * rate; progress between events is rate * dt. Solves are lazy: starting or ending flows
 * only marks the model dirty, so flows that start together cost one solve. */
#include "net/network.h"

#include <math.h>

const char *const paro_net_fidelity_names[] = {"maxmin", "analytic", NULL};

typedef struct {
    guint *links;
    double *weights;
    guint n_links;
    double remaining; /* bytes */
    double rate;      /* bytes/s, one flow of the class */
    ParoTime finish;  /* predicted end at the current rates */
    gboolean frozen;
    ParoFlowDone done;
    gpointer user_data;
    ParoNetwork *net;
} Flow;

struct _ParoNetwork {
    ParoEngine *engine;
    ParoNetFidelity fidelity;
    guint n_links;
    double *capacity;
    double *carried;
    double *residual;   /* solver scratch */
    double *weight_sum; /* solver scratch */
    GPtrArray *active;  /* Flow*, in start order */
    /* analytic fidelity: the weights of the flows moving on each link, and the flows whose
     * latency ended at the current instant, timed together once they have all joined */
    double *analytic_load;
    GPtrArray *joining;
    gboolean dirty;
    double max_utilisation;
    guint64 n_solves;
    ParoModelHooks hooks;
};

static void flow_free(Flow *f)
{
    if (f == NULL)
        return;
    g_free(f->links);
    g_free(f->weights);
    g_free(f);
}

static ParoTime next_event(gpointer model, ParoTime now);
static void advance(gpointer model, ParoTime from, ParoTime to);

ParoNetwork *paro_network_new(ParoEngine *engine, ParoNetFidelity fidelity,
                              const double *capacities, guint n_links)
{
    ParoNetwork *net = g_new0(ParoNetwork, 1);
    net->engine = engine;
    net->fidelity = fidelity;
    net->n_links = n_links;
    net->capacity = g_memdup2(capacities, sizeof(double) * n_links);
    net->carried = g_new0(double, n_links);
    net->residual = g_new0(double, n_links);
    net->weight_sum = g_new0(double, n_links);
    net->active = g_ptr_array_new_with_free_func((GDestroyNotify)flow_free);
    net->analytic_load = g_new0(double, n_links);
    net->joining = g_ptr_array_new_with_free_func((GDestroyNotify)flow_free);
    net->hooks.next_event = next_event;
    net->hooks.advance = advance;
    for (guint i = 0; i < n_links; i++)
        g_return_val_if_fail(capacities[i] > 0 && isfinite(capacities[i]), net);
    paro_engine_add_model(engine, &net->hooks, net);
    return net;
}

void paro_network_free(ParoNetwork *net)
{
    if (net == NULL)
        return;
    g_free(net->capacity);
    g_free(net->carried);
    g_free(net->residual);
    g_free(net->weight_sum);
    g_ptr_array_unref(net->active);
    g_free(net->analytic_load);
    g_ptr_array_unref(net->joining);
    g_free(net);
}

ParoEngine *paro_network_get_engine(const ParoNetwork *net)
{
    return net->engine;
}

double paro_network_carried(const ParoNetwork *net, guint link)
{
    g_return_val_if_fail(link < net->n_links, 0);
    return net->carried[link];
}

double paro_network_max_utilisation(const ParoNetwork *net)
{
    return net->max_utilisation;
}

guint64 paro_network_n_solves(const ParoNetwork *net)
{
    return net->n_solves;
}

static ParoTime duration_ps(double bytes, double rate)
{
    if (bytes <= 0)
        return 0;
    return paro_time_from_s(bytes / rate);
}

/* Sums, per link, the weights of the unfrozen flows crossing it. */
static void count_weights(ParoNetwork *net)
{
    GPtrArray *active = net->active;
    for (guint i = 0; i < active->len; i++) {
        Flow *f = g_ptr_array_index(active, i);
        for (guint k = 0; k < f->n_links; k++)
            net->weight_sum[f->links[k]] = 0;
    }
    for (guint i = 0; i < active->len; i++) {
        Flow *f = g_ptr_array_index(active, i);
        if (!f->frozen)
            for (guint k = 0; k < f->n_links; k++)
                net->weight_sum[f->links[k]] += f->weights[k];
    }
}

static void solve(ParoNetwork *net, ParoTime now)
{
    GPtrArray *active = net->active;
    net->n_solves++;
    for (guint i = 0; i < active->len; i++) {
        Flow *f = g_ptr_array_index(active, i);
        f->rate = 0;
        f->frozen = FALSE;
        for (guint k = 0; k < f->n_links; k++)
            net->residual[f->links[k]] = net->capacity[f->links[k]];
    }
    guint unfrozen = 0;
    for (guint i = 0; i < active->len; i++) {
        Flow *f = g_ptr_array_index(active, i);
        if (f->n_links == 0) {
            f->frozen = TRUE; /* a local copy: no link limits it */
            f->rate = INFINITY;
        } else {
            unfrozen++;
        }
    }
    count_weights(net);
    while (unfrozen > 0) {
        double s = INFINITY;
        for (guint i = 0; i < active->len; i++) {
            Flow *f = g_ptr_array_index(active, i);
            if (f->frozen)
                continue;
            for (guint k = 0; k < f->n_links; k++) {
                guint l = f->links[k];
                s = fmin(s, net->residual[l] / net->weight_sum[l]);
            }
        }
        g_assert(isfinite(s) && s >= 0);
        for (guint i = 0; i < active->len; i++) {
            Flow *f = g_ptr_array_index(active, i);
            if (!f->frozen)
                f->rate += s;
        }
        /* Residuals drop by s per unit of unfrozen weight; a link is saturated when its
         * residual is within rounding of zero. */
        for (guint i = 0; i < active->len; i++) {
            Flow *f = g_ptr_array_index(active, i);
            if (f->frozen)
                continue;
            for (guint k = 0; k < f->n_links; k++)
                net->residual[f->links[k]] -= s * f->weights[k];
        }
        guint newly_frozen = 0;
        for (guint i = 0; i < active->len; i++) {
            Flow *f = g_ptr_array_index(active, i);
            if (f->frozen)
                continue;
            for (guint k = 0; k < f->n_links; k++) {
                guint l = f->links[k];
                if (net->residual[l] <= 1e-9 * net->capacity[l]) {
                    f->frozen = TRUE;
                    break;
                }
            }
            if (f->frozen) {
                newly_frozen++;
                unfrozen--;
            }
        }
        g_assert(newly_frozen > 0);
        count_weights(net); /* weight sums count unfrozen flows only */
    }
    /* Utilisation check for the conservation tests, and each flow's predicted end. */
    for (guint i = 0; i < active->len; i++) {
        Flow *f = g_ptr_array_index(active, i);
        for (guint k = 0; k < f->n_links; k++) {
            guint l = f->links[k];
            double used = net->capacity[l] - net->residual[l];
            net->max_utilisation = fmax(net->max_utilisation, used / net->capacity[l]);
        }
        ParoTime d = isinf(f->rate) ? 0 : duration_ps(f->remaining, f->rate);
        f->finish = paro_time_add(now, d);
        if (f->finish == PARO_TIME_MAX)
            paro_engine_note_overflow(net->engine);
    }
    net->dirty = FALSE;
}

static ParoTime next_event(gpointer model, ParoTime now)
{
    ParoNetwork *net = model;
    if (net->active->len == 0)
        return PARO_TIME_MAX;
    if (net->dirty)
        solve(net, now);
    ParoTime t = PARO_TIME_MAX;
    for (guint i = 0; i < net->active->len; i++) {
        Flow *f = g_ptr_array_index(net->active, i);
        t = MIN(t, f->finish);
    }
    return t;
}

static void advance(gpointer model, ParoTime from, ParoTime to)
{
    ParoNetwork *net = model;
    if (net->active->len == 0)
        return;
    if (net->dirty)
        solve(net, from);
    double dt = paro_time_to_s(to - from);
    g_autoptr(GPtrArray) finished = g_ptr_array_new();
    GPtrArray *still = g_ptr_array_new_with_free_func((GDestroyNotify)flow_free);
    for (guint i = 0; i < net->active->len; i++) {
        Flow *f = g_ptr_array_index(net->active, i);
        double moved = f->finish <= to ? f->remaining : fmin(f->remaining, f->rate * dt);
        for (guint k = 0; k < f->n_links; k++)
            net->carried[f->links[k]] += moved * f->weights[k];
        f->remaining -= moved;
        if (f->finish <= to)
            g_ptr_array_add(finished, f);
        else
            g_ptr_array_add(still, f);
        net->active->pdata[i] = NULL;
    }
    g_ptr_array_unref(net->active);
    net->active = still;
    if (finished->len > 0)
        net->dirty = TRUE;
    /* Completions in start order: callbacks may start new flows (which mark dirty). */
    for (guint i = 0; i < finished->len; i++) {
        Flow *f = g_ptr_array_index(finished, i);
        if (f->done)
            f->done(net, f->user_data);
        flow_free(f);
    }
}

static void join(ParoEngine *engine, gpointer data)
{
    Flow *f = data;
    g_ptr_array_add(f->net->active, f);
    f->net->dirty = TRUE;
}

static void analytic_done(ParoEngine *engine, gpointer data)
{
    Flow *f = data;
    for (guint k = 0; k < f->n_links; k++) {
        f->net->carried[f->links[k]] += f->remaining * f->weights[k];
        f->net->analytic_load[f->links[k]] -= f->weights[k];
    }
    if (f->done)
        f->done(f->net, f->user_data);
    flow_free(f);
}

/* The flows that joined at this instant, after every other event of it: each moves at the
 * rate of its slowest link shared by weight with the flows on it now (those joining and
 * those still moving), and keeps that rate to its end. So m rings that enter a NIC
 * together share it (issue #14: each had the whole NIC), while no rate is ever re-solved. */
static void analytic_flush(ParoEngine *engine, gpointer data)
{
    ParoNetwork *net = data;
    g_autoptr(GPtrArray) joining = net->joining;
    net->joining = g_ptr_array_new_with_free_func((GDestroyNotify)flow_free);
    for (guint i = 0; i < joining->len; i++) {
        const Flow *f = g_ptr_array_index(joining, i);
        for (guint k = 0; k < f->n_links; k++)
            net->analytic_load[f->links[k]] += f->weights[k];
    }
    ParoTime now = paro_engine_now(engine);
    for (guint i = 0; i < joining->len; i++) {
        Flow *f = g_ptr_array_index(joining, i);
        double slowest = INFINITY;
        for (guint k = 0; k < f->n_links; k++)
            slowest = fmin(slowest, net->capacity[f->links[k]] / net->analytic_load[f->links[k]]);
        /* saturating: a time past the clock's range is flagged by the engine, not wrapped
         * into the past (issue #16 W2: "CRITICAL assertion 'time >= e->now' failed") */
        ParoTime d = f->n_links ? duration_ps(f->remaining, slowest) : 0;
        joining->pdata[i] = NULL;
        paro_engine_schedule(engine, paro_time_add(now, d), 0, analytic_done, f);
    }
}

static void analytic_join(ParoEngine *engine, gpointer data)
{
    Flow *f = data;
    ParoNetwork *net = f->net;
    if (net->joining->len == 0)
        paro_engine_schedule(engine, paro_engine_now(engine), G_MININT, analytic_flush, net);
    g_ptr_array_add(net->joining, f);
}

void paro_network_start(ParoNetwork *net, const guint *links, const double *weights, guint n_links,
                        double bytes, ParoTime latency, ParoFlowDone done, gpointer user_data)
{
    Flow *f = g_new0(Flow, 1);
    f->links = g_memdup2(links, sizeof(guint) * n_links);
    f->weights = g_memdup2(weights, sizeof(double) * n_links);
    f->n_links = n_links;
    f->remaining = bytes;
    f->done = done;
    f->user_data = user_data;
    f->net = net;
    for (guint k = 0; k < n_links; k++)
        g_return_if_fail(links[k] < net->n_links && weights[k] > 0);
    ParoTime now = paro_engine_now(net->engine);
    if (net->fidelity == PARO_NET_ANALYTIC) {
        paro_engine_schedule(net->engine, paro_time_add(now, latency), 0, analytic_join, f);
        return;
    }
    if (latency > 0)
        paro_engine_schedule(net->engine, paro_time_add(now, latency), 0, join, f);
    else
        join(net->engine, f);
}
