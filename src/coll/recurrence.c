/* SPDX-License-Identifier: MIT */
/* A ring phase whose connections share no link, timed by its recurrence instead of events
 * (issue #18: an explicit ring of 16,384 GPUs spent 8 s popping 33 million events).
 *
 * When no link of the graph carries two of the phase's connections (one channel, or
 * channels on disjoint rails and ports), a connection's sends never meet another flow:
 * max-min gives each the whole of its route, min over its links of capacity / weight, and
 * a connection has one send leaving at a time. The events of simulate.c then reduce to,
 * for connection X and its send j (bytes b_j, hop latency L_j, both from paro_ring_send):
 *   begin_j   = max(left_{j-1}(X),         its previous send has left
 *                   arrival_{j-1}(pred X), it has received step j-1 (j >= 1)
 *                   arrival_{j-8}(X))      one of its 8 slots is free (j >= 8)
 *   left_j    = begin_j + ceil(b_j / rate_X)   (picoseconds, as the solver rounds)
 *   arrival_j = left_j + L_j
 * which holds while each connection's sends arrive in the order they left: a macro-step
 * that carries one ring step more than the next also pays one latency more, so when its
 * bytes take less than a latency the next can overtake it and "received j steps" is no
 * longer "send j-1 arrived". That is checked on the way; where it fails, or a link is
 * shared, or a time leaves the clock's range, nothing has been changed and the events
 * decide. The phase ends at the last arrival, the engine's last event. Link bytes are
 * added per link in send order, the order the solver retires them in, so times, link
 * bytes and utilisation are the events' to the bit (tests/test_collective.c). */
#include "coll/simulate-private.h"

#include <math.h>
#include <string.h>

/* The connection's rate alone on its route; FALSE when a link is another's (or its own
 * twice). */
static gboolean claim_route(const Sim *s, const Route *r, gint64 pair, gint64 *owner, double *rate)
{
    const double *capacity = paro_graph_capacities(s->graph);
    const guint *links = r->n_links ? &g_array_index(s->links, guint, r->first) : NULL;
    const double *weights = r->n_links ? &g_array_index(s->weights, double, r->first) : NULL;
    *rate = INFINITY; /* no link: a local copy, done at once */
    for (guint k = 0; k < r->n_links; k++) {
        if (owner[links[k]] != -1)
            return FALSE;
        owner[links[k]] = pair;
        *rate = fmin(*rate, capacity[links[k]] / weights[k]);
    }
    return TRUE;
}

/* Each connection's predecessor (whose sends it receives) and rate alone on its route;
 * FALSE when the recurrence does not apply: a broadcast chain, events asked for, a link
 * carrying two connections, a receiver fed by two. */
static gboolean plan(Sim *s, Task *t, gint64 *pred, double *rate)
{
    if (s->spec->events_only || t->op == PARO_COLL_BROADCAST || t->k <= 1)
        return FALSE;
    gint64 pairs = s->tracked * s->channels;
    guint n_links = paro_graph_n_links(s->graph);
    g_autofree gint64 *owner = g_new(gint64, n_links);
    memset(owner, 0xff, sizeof(gint64) * n_links); /* -1: no connection */
    memset(pred, 0xff, sizeof(gint64) * pairs);
    for (gint64 i = 0; i < pairs; i++) {
        gint64 member = i / s->channels, channel = i % s->channels;
        const Route *r = paro_ring_route(s, t, member, channel, i);
        if (!claim_route(s, r, i, owner, &rate[i]))
            return FALSE;
        gint64 receiver = paro_ring_fold(s, r->dst) * s->channels + channel;
        if (pred[receiver] != -1)
            return FALSE;
        pred[receiver] = i;
    }
    for (gint64 i = 0; i < pairs; i++)
        if (pred[i] == -1)
            return FALSE;
    return TRUE;
}

gboolean paro_ring_recurrence_applies(Sim *s, Task *t)
{
    gint64 pairs = s->tracked * s->channels;
    g_autofree gint64 *pred = g_new(gint64, pairs);
    g_autofree double *rate = g_new(double, pairs);
    return plan(s, t, pred, rate);
}

gboolean paro_ring_recurrence(Sim *s, Task *t, ParoTime *end)
{
    gint64 pairs = s->tracked * s->channels, steps = t->macro_steps;
    guint n_links = paro_graph_n_links(s->graph);
    g_autofree gint64 *pred = g_new(gint64, pairs);
    g_autofree double *rate = g_new(double, pairs);
    if (!plan(s, t, pred, rate))
        return FALSE;

    /* the last SLOTS arrivals of each connection, by send number; its last send's end */
    g_autofree ParoTime *arrival = g_new0(ParoTime, pairs * SLOTS);
    g_autofree ParoTime *left = g_new0(ParoTime, pairs);
    /* a send's bytes and its carried bytes go to the network only once all is known good */
    g_autofree double *carried = g_new0(double, n_links);
    ParoTime last = 0;
    double sent = 0;
    for (gint64 j = 0; j < steps; j++) {
        for (gint64 i = 0; i < pairs; i++) {
            const Route *r = &t->route[i];
            double bytes;
            ParoTime latency;
            paro_ring_send(s, t, r, j, &bytes, &latency);
            ParoTime begin = left[i];
            if (j >= 1)
                begin = MAX(begin, arrival[pred[i] * SLOTS + (j - 1) % SLOTS]);
            if (j >= SLOTS)
                begin = MAX(begin, arrival[i * SLOTS + j % SLOTS]);
            ParoTime d = isinf(rate[i]) ? 0 : paro_net_duration_ps(bytes, rate[i]);
            ParoTime gone = paro_time_add(begin, d), at = paro_time_add(gone, latency);
            if (at == PARO_TIME_MAX || (j >= 1 && at < arrival[i * SLOTS + (j - 1) % SLOTS]))
                return FALSE; /* out of the clock's range, or overtaking: the events decide */
            left[i] = gone;
            arrival[i * SLOTS + j % SLOTS] = at;
            last = MAX(last, at);
            sent += bytes;
            for (guint k = 0; k < r->n_links; k++)
                carried[g_array_index(s->links, guint, r->first + k)] +=
                    bytes * g_array_index(s->weights, double, r->first + k);
        }
    }
    g_autoptr(GArray) route_carried = g_array_new(FALSE, FALSE, sizeof(double));
    for (gint64 i = 0; i < pairs; i++) {
        const Route *r = &t->route[i];
        const guint *links = r->n_links ? &g_array_index(s->links, guint, r->first) : NULL;
        g_array_set_size(route_carried, r->n_links);
        for (guint k = 0; k < r->n_links; k++)
            g_array_index(route_carried, double, k) = carried[links[k]];
        paro_network_record(s->net, links,
                            r->n_links ? &g_array_index(s->weights, double, r->first) : NULL,
                            r->n_links, (const double *)route_carried->data, rate[i]);
    }
    s->sent += sent;
    s->received += sent;
    *end = last;
    return TRUE;
}
