/* SPDX-License-Identifier: MIT */
/* Ring phases timed by their recurrence instead of events (issue #18: an explicit ring of
 * 16,384 GPUs spent 8 s popping 33 million events).
 *
 * Groups: connections that share a link, directly or through others. When every group
 * moves in lockstep (all its connections begin their send j at one instant, with the same
 * bytes, and share each common link with equal weights), a send meets no flow but its
 * group's, the max-min solve of the group is the same at every step, and a connection has
 * one send leaving at a time. The events of simulate.c then reduce to, for connection X
 * and its send j (bytes b_j, hop latency L_j, both from paro_ring_send):
 *   begin_j   = max(left_{j-1}(X),         its previous send has left
 *                   arrival_{j-1}(pred X), it has received step j-1 (j >= 1)
 *                   arrival_{j-8}(X))      one of its 8 slots is free (j >= 8)
 *   left_j    = begin_j + ceil(b_j / rate_X)   (picoseconds, as the solver rounds)
 *   arrival_j = left_j + L_j
 * where rate_X is its group's progressive filling: min over the group's links of capacity
 * / the group's weight on it, reached in one round (every connection crosses a link it
 * saturates; else the fill takes rounds and the events decide). A connection alone on its
 * route (one channel) is a group of one at its slowest link. It holds while each
 * connection's sends arrive in the order they left: a macro-step that carries one ring
 * step more than the next also pays one latency more, so when its bytes take less than a
 * latency the next can overtake it, and "received j steps" is no longer "send j-1
 * arrived". Lockstep and order are checked on the way; where either fails, a fill takes
 * rounds, or a time leaves the clock's range, nothing has been changed and the events
 * decide. A phase (a stage of a chunk) is timed so when it starts, in the events' time,
 * and its end becomes one event: phases in sequence (a ring, hierarchical's three) are
 * timed one after the other, and where ho-ring's chunks overlap phases of different
 * stages, a stage whose links no other stage uses (the inter-node AllReduce between two
 * intra-node phases) is timed so while the others run as events beside it, alone on
 * their links as it is on its own. Link bytes are added per link in time order onto what
 * the link carried before, equal amounts at one instant, so times, link bytes and
 * utilisation are the events' to the bit (tests/test_collective.c). */
#include "coll/simulate-private.h"

#include <math.h>
#include <string.h>

/* One stage's connections (the same in each chunk): whom each receives from, its group
 * and its rate. */
struct _RingPlan {
    Task *task;       /* the stage's first chunk: its routes stand for every chunk's */
    gint64 *pred;     /* per pair */
    gint64 *group;    /* per pair: its group's first pair */
    double *rate;     /* per pair: its share of the group's fill */
    double *residual; /* per link: capacity left while its group moves (NAN: unused) */
};

static void plan_free(RingPlan *p)
{
    if (p == NULL)
        return;
    g_free(p->pred);
    g_free(p->group);
    g_free(p->rate);
    g_free(p->residual);
    g_free(p);
}

static gint64 root_of(gint64 *parent, gint64 i)
{
    while (parent[i] != i)
        i = parent[i] = parent[parent[i]];
    return i;
}

static const guint *route_links(const Sim *s, const Route *r)
{
    return r->n_links ? &g_array_index(s->links, guint, r->first) : NULL;
}

static const double *route_weights(const Sim *s, const Route *r)
{
    return r->n_links ? &g_array_index(s->weights, double, r->first) : NULL;
}

/* The groups of @p's connections and their fill; FALSE when the recurrence does not apply
 * (a broadcast chain, a route crossing a link twice, a common link with unequal weights or
 * under the analytic fidelity, a receiver fed by two, a fill of more than one round; and
 * where @proven, a group not shown to move in lockstep: its connections receive from two groups
 * or over hops of unequal latency, or send over such hops). */
static gboolean plan(Sim *s, Task *t, RingPlan *p, gboolean proven)
{
    *p = (RingPlan){t};
    if (t->op == PARO_COLL_BROADCAST || t->k <= 1) /* (events_only: no plan is asked) */
        return FALSE;
    gint64 pairs = s->tracked * s->channels;
    guint n_links = paro_graph_n_links(s->graph);
    const double *capacity = paro_graph_capacities(s->graph);
    p->pred = g_new(gint64, pairs);
    p->group = g_new(gint64, pairs);
    p->rate = g_new(double, pairs);
    p->residual = g_new(double, n_links);
    g_autofree gint64 *first_user = g_new(gint64, n_links);
    g_autofree gint64 *last_seen = g_new(gint64, n_links);
    g_autofree double *weight_sum = g_new0(double, n_links);
    g_autofree gint64 *users = g_new0(gint64, n_links);
    memset(first_user, 0xff, sizeof(gint64) * n_links); /* -1: none */
    memset(last_seen, 0xff, sizeof(gint64) * n_links);
    memset(p->pred, 0xff, sizeof(gint64) * pairs);
    for (gint64 i = 0; i < pairs; i++) {
        p->group[i] = i;
        const Route *r = paro_ring_route(s, t, i / s->channels, i % s->channels, i);
        const guint *links = route_links(s, r);
        const double *weights = route_weights(s, r);
        for (guint k = 0; k < r->n_links; k++) {
            guint l = links[k];
            if (last_seen[l] == i)
                return FALSE;
            last_seen[l] = i;
            if (first_user[l] == -1) {
                first_user[l] = i;
            } else if (s->fidelity != PARO_NET_MAXMIN) {
                return FALSE; /* the analytic rate is each flow's own slowest link: alone */
            } else {
                const Route *fr = &t->route[first_user[l]];
                for (guint f = 0; f < fr->n_links; f++)
                    if (route_links(s, fr)[f] == l && route_weights(s, fr)[f] != weights[k])
                        return FALSE;
                p->group[root_of(p->group, i)] = root_of(p->group, first_user[l]);
            }
            weight_sum[l] += weights[k];
            users[l]++;
        }
        gint64 receiver = paro_ring_fold(s, r->dst) * s->channels + i % s->channels;
        if (p->pred[receiver] != -1)
            return FALSE;
        p->pred[receiver] = i;
    }
    /* the fill's first round: one share per group, the smallest over its links */
    g_autofree double *share = g_new(double, pairs);
    for (gint64 i = 0; i < pairs; i++) {
        if (p->pred[i] == -1)
            return FALSE;
        share[i] = INFINITY; /* no link: a local copy, done at once */
    }
    for (gint64 i = 0; i < pairs; i++) {
        gint64 g = p->group[i] = root_of(p->group, i);
        const Route *r = &t->route[i];
        for (guint k = 0; k < r->n_links; k++) {
            guint l = route_links(s, r)[k];
            share[g] = fmin(share[g], capacity[l] / weight_sum[l]);
        }
    }
    /* lockstep by induction: a group whose connections receive from one group over hops
     * of one latency, and send over hops of one latency, begins each send together (more
     * groups move in lockstep, by symmetry: recur checks it as it goes) */
    g_autofree gint64 *first = g_new(gint64, pairs);
    memset(first, 0xff, sizeof(gint64) * pairs);
    for (gint64 i = 0; proven && i < pairs; i++) {
        gint64 *f = &first[p->group[i]];
        if (*f == -1) {
            *f = i;
            continue;
        }
        gint64 a = p->pred[i], b = p->pred[*f];
        if (p->group[a] != p->group[b] || t->route[a].latency != t->route[b].latency ||
            t->route[i].latency != t->route[*f].latency)
            return FALSE;
    }
    for (guint l = 0; l < n_links; l++)
        p->residual[l] = NAN;
    for (gint64 i = 0; i < pairs; i++) {
        const Route *r = &t->route[i];
        p->rate[i] = share[p->group[i]];
        gboolean frozen = r->n_links == 0;
        for (guint k = 0; k < r->n_links; k++) {
            guint l = route_links(s, r)[k];
            if (isnan(p->residual[l])) { /* every user takes the share, as the fill does */
                p->residual[l] = capacity[l];
                for (gint64 u = 0; u < users[l]; u++)
                    p->residual[l] -= p->rate[i] * route_weights(s, r)[k];
            }
            frozen = frozen || p->residual[l] <= 1e-9 * capacity[l];
        }
        if (!frozen)
            return FALSE;
    }
    return TRUE;
}

/* Each stage's plan where its phases may be timed by the recurrence: a stage whose phases
 * can run beside another stage's (ho-ring's chunks) only when no link of its is that
 * stage's too. */
void paro_ring_recurrence_prepare(Sim *s, gboolean proven)
{
    guint n_stages = s->stages->len, n_links = paro_graph_n_links(s->graph);
    s->plans = g_new0(RingPlan *, n_stages);
    if (s->spec->events_only)
        return;
    g_autofree guint8 *stages_on = g_new0(guint8, n_links); /* bit per stage using a link */
    gint64 pairs = s->tracked * s->channels;
    for (guint st = 0; s->n_chunks > 1 && st < n_stages; st++) {
        Task *t = &s->tasks[st]; /* chunk 0 */
        for (gint64 i = 0; t->k > 1 && i < pairs; i++) {
            const Route *r = paro_ring_route(s, t, i / s->channels, i % s->channels, i);
            for (guint k = 0; k < r->n_links; k++)
                stages_on[route_links(s, r)[k]] |= (guint8)(1u << st);
        }
    }
    for (guint st = 0; st < n_stages; st++) {
        gboolean alone = TRUE;
        for (guint l = 0; s->n_chunks > 1 && alone && l < n_links; l++)
            alone = (stages_on[l] & (1u << st)) == 0 || stages_on[l] == (1u << st);
        RingPlan *p = g_new0(RingPlan, 1);
        if (alone && plan(s, &s->tasks[st], p, proven))
            s->plans[st] = p;
        else
            plan_free(p);
    }
}

void paro_ring_recurrence_clear(Sim *s)
{
    for (guint st = 0; s->plans != NULL && st < s->stages->len; st++)
        plan_free(s->plans[st]);
    g_clear_pointer(&s->plans, g_free);
}

double paro_ring_recurred_share(const Sim *s)
{
    double recurred = 0, all = 0;
    for (gint64 i = 0; i < s->n_tasks; i++) {
        double sends = (double)(s->tracked * s->channels * s->tasks[i].macro_steps);
        all += sends;
        recurred += s->plans[s->tasks[i].stage] != NULL ? sends : 0;
    }
    return all > 0 ? recurred / all : 0;
}

/* Times @t (a chunk of @p's stage) from @start; FALSE when a group leaves lockstep, a send
 * is overtaken or a time leaves the clock's range. @carried holds each link's bytes so far
 * and gets the phase's added in time order. */
static gboolean recur(Sim *s, const RingPlan *p, Task *t, ParoTime start, ParoTime *end,
                      double *carried, double *sent)
{
    gint64 pairs = s->tracked * s->channels;
    /* the last SLOTS arrivals of each connection, by send number; its last send's end */
    g_autofree ParoTime *arrival = g_new0(ParoTime, pairs * SLOTS);
    g_autofree ParoTime *left = g_new(ParoTime, pairs);
    /* per group: when its send of step group_step began (set by its first connection) */
    g_autofree ParoTime *group_begin = g_new(ParoTime, pairs);
    g_autofree gint64 *group_step = g_new(gint64, pairs);
    for (gint64 i = 0; i < pairs; i++) {
        left[i] = start;
        group_step[i] = -1;
    }
    ParoTime last = start;
    /* a send's duration depends on its bytes and rate alone, alike across a step's sends:
     * computed once for each change (it was a quarter of the time) */
    double d_bytes = -1, d_rate = -1;
    ParoTime d = 0;
    for (gint64 j = 0; j < t->macro_steps; j++) {
        for (gint64 i = 0; i < pairs; i++) {
            const Route *r = &p->task->route[i];
            double bytes;
            ParoTime latency;
            paro_ring_send(s, t, r, j, &bytes, &latency);
            ParoTime begin = left[i];
            if (j >= 1)
                begin = MAX(begin, arrival[p->pred[i] * SLOTS + (j - 1) % SLOTS]);
            if (j >= SLOTS)
                begin = MAX(begin, arrival[i * SLOTS + j % SLOTS]);
            gint64 g = p->group[i];
            if (group_step[g] == j && group_begin[g] != begin)
                return FALSE; /* out of lockstep: its group's fill would change mid-send */
            group_step[g] = j;
            group_begin[g] = begin;
            if (bytes != d_bytes || p->rate[i] != d_rate) {
                d_bytes = bytes;
                d_rate = p->rate[i];
                d = isinf(d_rate) ? 0 : paro_net_duration_ps(bytes, d_rate);
            }
            ParoTime gone = paro_time_add(begin, d), at = paro_time_add(gone, latency);
            if (at == PARO_TIME_MAX || (j >= 1 && at < arrival[i * SLOTS + (j - 1) % SLOTS]))
                return FALSE; /* out of the clock's range, or overtaking */
            left[i] = gone;
            arrival[i * SLOTS + j % SLOTS] = at;
            last = MAX(last, at);
            *sent += bytes;
            for (guint k = 0; k < r->n_links; k++)
                carried[route_links(s, r)[k]] += bytes * route_weights(s, r)[k];
        }
    }
    *end = last;
    return TRUE;
}

gboolean paro_ring_recur_task(Sim *s, Task *t, ParoTime start, ParoTime *end)
{
    const RingPlan *p = s->plans[t->stage];
    if (p == NULL)
        return FALSE;
    guint n_links = paro_graph_n_links(s->graph);
    /* link bytes and the payload go to the network only once all is known good */
    g_autofree double *carried = g_new(double, n_links);
    for (guint l = 0; l < n_links; l++)
        carried[l] = isnan(p->residual[l]) ? 0 : paro_network_carried(s->net, l);
    double sent = 0;
    if (!recur(s, p, t, start, end, carried, &sent))
        return FALSE;
    for (guint l = 0; l < n_links; l++)
        if (!isnan(p->residual[l]))
            paro_network_record(s->net, l, carried[l], p->residual[l]);
    s->sent += sent;
    s->received += sent;
    return TRUE;
}
