/* SPDX-License-Identifier: MIT */
/* The network object: flows start (after their latency) and end, pooled by route length;
 * the engine's hooks ask the solver (maxmin.c) for the next end and fire completions in
 * start order. The analytic fidelity times each flow once, at the rate of its slowest link
 * shared by weight with the flows on it when it begins. */
#include "net/network-private.h"

#include <math.h>
#include <string.h>

const char *const paro_net_fidelity_names[] = {"maxmin", "analytic", NULL};

static void flow_free(Flow *f)
{
    g_free(f);
}

static void flow_release(ParoNetwork *net, Flow *f)
{
    if (f->n_links >= POOLED) {
        g_free(f);
        return;
    }
    f->next = net->pool[f->n_links];
    net->pool[f->n_links] = f;
}

/* Ended flows wait in a free list per route length for the next start: a collective
 * starts millions of flows of a few lengths. */
static Flow *flow_new(ParoNetwork *net, guint n_links)
{
    gsize size = sizeof(Flow) + n_links * (sizeof(double) + 2 * sizeof(guint));
    Flow *f;
    if (n_links < POOLED && net->pool[n_links] != NULL) {
        f = net->pool[n_links];
        net->pool[n_links] = f->next;
        memset(f, 0, size);
    } else {
        f = g_malloc0(size);
    }
    f->weights = (double *)(f + 1); /* doubles first: aligned after the struct */
    f->links = (guint *)(f->weights + n_links);
    f->slots = f->links + n_links;
    f->n_links = n_links;
    return f;
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
    net->users = g_new0(LinkUsers, n_links);
    net->link_seen = g_new0(guint64, n_links);
    paro_net_finish_init(net);
    net->changed = g_array_new(FALSE, FALSE, sizeof(guint));
    net->joined = g_ptr_array_new();
    net->component = g_ptr_array_new();
    net->queue = g_ptr_array_new();
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
    g_free(net->never_limits);
    g_free(net->residual);
    g_free(net->weight_sum);
    for (guint l = 0; l < net->n_links; l++)
        g_free(net->users[l].flows);
    g_free(net->users);
    g_free(net->link_seen);
    /* the flows still moving (those that joined but were never solved too) */
    for (Flow *f = net->first, *next; f != NULL; f = next) {
        next = f->next;
        g_free(f);
    }
    paro_net_finish_clear(net);
    g_array_unref(net->changed);
    g_ptr_array_unref(net->joined);
    g_ptr_array_unref(net->component);
    g_ptr_array_unref(net->queue);
    g_free(net->analytic_load);
    g_ptr_array_unref(net->joining);
    for (guint n = 0; n < POOLED; n++)
        while (net->pool[n] != NULL) {
            Flow *f = net->pool[n];
            net->pool[n] = f->next;
            g_free(f);
        }
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

void paro_network_record(ParoNetwork *net, guint link, double carried, double residual)
{
    g_return_if_fail(link < net->n_links);
    net->carried[link] = carried;
    if (net->fidelity == PARO_NET_MAXMIN) /* as solve_component after a fill */
        net->max_utilisation =
            fmax(net->max_utilisation, (net->capacity[link] - residual) / net->capacity[link]);
}

double paro_network_max_utilisation(const ParoNetwork *net)
{
    return net->max_utilisation;
}

guint64 paro_network_n_solves(const ParoNetwork *net)
{
    return net->n_solves;
}

guint64 paro_network_n_flow_solves(const ParoNetwork *net)
{
    return net->n_flow_solves;
}

static ParoTime next_event(gpointer model, ParoTime now)
{
    ParoNetwork *net = model;
    if (paro_net_dirty(net))
        paro_net_solve(net, now);
    return paro_net_next_finish(net);
}

static void advance(gpointer model, ParoTime from, ParoTime to)
{
    ParoNetwork *net = model;
    if (paro_net_dirty(net))
        paro_net_solve(net, from);
    if (paro_net_next_finish(net) > to)
        return;
    g_autoptr(GPtrArray) finished = g_ptr_array_new();
    for (Flow *f; (f = paro_net_retire_finished(net, to)) != NULL;)
        g_ptr_array_add(finished, f);
    /* Completions in start order: callbacks may start new flows (which join the next
     * solve). They come in (finish, start) order, and all end at `to` (the engine stops at
     * every end): sorted already, unless ends of two instants were retired together. */
    for (guint i = 1; i < finished->len; i++)
        if (((Flow *)finished->pdata[i - 1])->seq > ((Flow *)finished->pdata[i])->seq) {
            g_ptr_array_sort(finished, paro_net_by_seq);
            break;
        }
    for (guint i = 0; i < finished->len; i++) {
        Flow *f = g_ptr_array_index(finished, i);
        if (f->done)
            f->done(net, f->user_data);
        flow_release(net, f);
    }
}

static void join(ParoEngine *engine, gpointer data)
{
    Flow *f = data;
    f->seq = f->net->next_seq++;
    f->updated = paro_engine_now(engine);
    f->finish = PARO_TIME_MAX; /* until its first solve, which comes before any advance */
    paro_net_activate(f->net, f);
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
    flow_release(f->net, f);
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
        ParoTime d = f->n_links ? paro_net_duration_ps(f->remaining, slowest) : 0;
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

void paro_network_set_never_limiting(ParoNetwork *net, guint link)
{
    g_return_if_fail(link < net->n_links && net->next_seq == 0);
    if (net->fidelity != PARO_NET_MAXMIN)
        return; /* the analytic rate takes the slowest link, not a max-min allocation */
    if (net->never_limits == NULL)
        net->never_limits = g_new0(guint8, net->n_links);
    net->never_limits[link] = 1;
}

void paro_network_start(ParoNetwork *net, const guint *links, const double *weights, guint n_links,
                        double bytes, ParoTime latency, ParoFlowDone done, gpointer user_data)
{
    for (guint k = 0; k < n_links; k++)
        g_return_if_fail(links[k] < net->n_links && weights[k] > 0);
    Flow *f = flow_new(net, n_links);
    /* The links that can limit the flow first, the others after them in route order: the
     * solver reads the first n_bound, the bytes are counted on all. */
    for (guint k = 0; k < n_links; k++)
        if (net->never_limits == NULL || !net->never_limits[links[k]]) {
            f->links[f->n_bound] = links[k];
            f->weights[f->n_bound++] = weights[k];
        }
    for (guint k = 0, at = f->n_bound; k < n_links; k++)
        if (net->never_limits != NULL && net->never_limits[links[k]]) {
            f->links[at] = links[k];
            f->weights[at++] = weights[k];
        }
    f->remaining = bytes;
    f->done = done;
    f->user_data = user_data;
    f->net = net;
    ParoTime now = paro_engine_now(net->engine);
    if (net->fidelity == PARO_NET_ANALYTIC) {
        paro_engine_schedule_batched(net->engine, paro_time_add(now, latency), 0, analytic_join, f);
        return;
    }
    if (latency > 0)
        paro_engine_schedule_batched(net->engine, paro_time_add(now, latency), 0, join, f);
    else
        join(net->engine, f);
}
