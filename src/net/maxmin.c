/* SPDX-License-Identifier: MIT */
/* Max-min fair sharing by progressive filling (Bertsekas and Gallager, Data Networks,
 * section 6.5.2), with weights:
 *   all flows start unfrozen at rate 0; repeat: for each link l crossed by unfrozen flows,
 *   share_l = residual_l / sum of the weights of its unfrozen flows; s = min share_l;
 *   every unfrozen flow gains s, every link loses s * (its unfrozen weight); flows on
 *   links left with no residual freeze. Each iteration saturates at least one link, so it
 *   ends after at most min(links, flows) rounds.
 * Incremental (issue #18; SimGrid's lmm solver likewise re-solves only the constraints a
 * change touched): the max-min allocation of flows that share no link, directly or
 * through other flows, is independent, so a start or an end re-solves only the connected
 * component of flows and links it touches, its flows in start order. Each link lists the
 * flows on it; a flow's progress is brought up to date only when its rate changes or it
 * ends (bytes = rate x time since then), and the next end is the earliest instant of the
 * finish calendar (finish.c), so an event costs the size of the component it touches, not of the
 * network. Time: a flow's end is ceil(remaining / rate) picoseconds after the solve that set its
 * rate. Solves are lazy: starting or ending flows only records where the network changed,
 * so flows that start together cost one solve. */
#include "net/network-private.h"

#include <math.h>

ParoTime paro_net_duration_ps(double bytes, double rate)
{
    if (bytes <= 0)
        return 0;
    return paro_time_from_s(bytes / rate);
}

/* ---- flows on links ---- */

static void users_add(ParoNetwork *net, Flow *f)
{
    for (guint k = 0; k < f->n_bound; k++) {
        LinkUsers *u = &net->users[f->links[k]];
        if (u->len == u->cap) {
            u->cap = u->cap ? 2 * u->cap : 4;
            u->flows = g_renew(Flow *, u->flows, u->cap);
        }
        f->slots[k] = u->len;
        u->flows[u->len++] = f;
    }
}

/* Removes @f from its links' lists (the last one takes its slot) and records the links. */
static void users_remove(ParoNetwork *net, Flow *f)
{
    for (guint k = 0; k < f->n_bound; k++) {
        guint l = f->links[k];
        LinkUsers *u = &net->users[l];
        Flow *moved = u->flows[--u->len];
        if (moved != f) {
            guint slot = f->slots[k];
            u->flows[slot] = moved;
            for (guint j = 0; j < moved->n_bound; j++)
                if (moved->links[j] == l) {
                    moved->slots[j] = slot;
                    break;
                }
        }
        g_array_append_val(net->changed, l);
    }
}

/* Brings @f's remaining bytes and its links' carried bytes up to @now at its rate. */
static void catch_up(ParoNetwork *net, Flow *f, ParoTime now)
{
    if (now == f->updated)
        return;
    double moved = f->finish <= now
                       ? f->remaining
                       : fmin(f->remaining, f->rate * paro_time_to_s(now - f->updated));
    for (guint k = 0; k < f->n_links; k++)
        net->carried[f->links[k]] += moved * f->weights[k];
    f->remaining -= moved;
    f->updated = now;
}

/* ---- flows joining and leaving ---- */

void paro_net_activate(ParoNetwork *net, Flow *f)
{
    users_add(net, f); /* into the finish calendar at its first solve, which comes first */
    g_ptr_array_add(net->joined, f);
    f->prev = net->last;
    if (net->last)
        net->last->next = f;
    else
        net->first = f;
    net->last = f;
    net->n_active++;
}

Flow *paro_net_retire_finished(ParoNetwork *net, ParoTime to)
{
    Flow *f = paro_net_finish_take(net, to);
    if (f == NULL)
        return NULL;
    catch_up(net, f, to);
    users_remove(net, f);
    if (f->prev)
        f->prev->next = f->next;
    else
        net->first = f->next;
    if (f->next)
        f->next->prev = f->prev;
    else
        net->last = f->prev;
    net->n_active--;
    return f;
}

/* ---- the solver ---- */

gint paro_net_by_seq(gconstpointer a, gconstpointer b)
{
    const Flow *fa = *(Flow *const *)a, *fb = *(Flow *const *)b;
    return fa->seq < fb->seq ? -1 : fa->seq > fb->seq;
}

static void visit_flow(ParoNetwork *net, Flow *f);

static void visit_link(ParoNetwork *net, guint l)
{
    if (net->link_seen[l] == net->stamp)
        return;
    net->link_seen[l] = net->stamp;
    LinkUsers *u = &net->users[l];
    for (guint i = 0; i < u->len; i++)
        visit_flow(net, u->flows[i]);
}

static void visit_flow(ParoNetwork *net, Flow *f)
{
    if (f->visited != net->stamp) {
        f->visited = net->stamp;
        g_ptr_array_add(net->queue, f);
    }
}

/* The connected component of flows that @queue's flows (already visited) reach through
 * their links, into net->component in start order. */
static void grow_component(ParoNetwork *net)
{
    g_ptr_array_set_size(net->component, 0);
    net->n_components++;
    for (guint q = 0; q < net->queue->len; q++) {
        Flow *f = g_ptr_array_index(net->queue, q);
        f->component = net->n_components;
        g_ptr_array_add(net->component, f);
        for (guint k = 0; k < f->n_bound; k++)
            visit_link(net, f->links[k]);
    }
    g_ptr_array_set_size(net->queue, 0);
    /* in start order: sorted when small, else read off the list of active flows */
    GPtrArray *c = net->component;
    if (c->len <= 16) { /* most components: a few flows, in nearly the order found */
        for (guint i = 1; i < c->len; i++) {
            Flow *f = c->pdata[i];
            guint j = i;
            for (; j > 0 && ((Flow *)c->pdata[j - 1])->seq > f->seq; j--)
                c->pdata[j] = c->pdata[j - 1];
            c->pdata[j] = f;
        }
        return;
    }
    if (c->len <= 64 || 8 * c->len < net->n_active) {
        g_ptr_array_sort(c, paro_net_by_seq);
        return;
    }
    guint n = 0;
    for (Flow *f = net->first; f != NULL; f = f->next)
        if (f->component == net->n_components)
            c->pdata[n++] = f;
    g_assert(n == c->len);
}

/* Sums, per link, the weights of the unfrozen flows of @flows crossing it. */
static void count_weights(ParoNetwork *net, GPtrArray *flows)
{
    for (guint i = 0; i < flows->len; i++) {
        Flow *f = g_ptr_array_index(flows, i);
        for (guint k = 0; k < f->n_bound; k++)
            net->weight_sum[f->links[k]] = 0;
    }
    for (guint i = 0; i < flows->len; i++) {
        Flow *f = g_ptr_array_index(flows, i);
        if (!f->frozen)
            for (guint k = 0; k < f->n_bound; k++)
                net->weight_sum[f->links[k]] += f->weights[k];
    }
}

/* Progressive filling of @flows, which share links with no other flow. */
static void fill(ParoNetwork *net, GPtrArray *flows)
{
    guint unfrozen = 0;
    for (guint i = 0; i < flows->len; i++) {
        Flow *f = g_ptr_array_index(flows, i);
        f->rate = 0;
        f->frozen = f->n_bound == 0;
        if (f->frozen)
            f->rate = INFINITY; /* a local copy: no link limits it */
        else
            unfrozen++;
        for (guint k = 0; k < f->n_bound; k++)
            net->residual[f->links[k]] = net->capacity[f->links[k]];
    }
    count_weights(net, flows);
    while (unfrozen > 0) {
        double s = INFINITY;
        for (guint i = 0; i < flows->len; i++) {
            Flow *f = g_ptr_array_index(flows, i);
            if (f->frozen)
                continue;
            for (guint k = 0; k < f->n_bound; k++) {
                guint l = f->links[k];
                s = fmin(s, net->residual[l] / net->weight_sum[l]);
            }
        }
        g_assert(isfinite(s) && s >= 0);
        /* Every unfrozen flow gains s; residuals drop by s per unit of unfrozen weight; a
         * link is saturated when its residual is within rounding of zero. */
        for (guint i = 0; i < flows->len; i++) {
            Flow *f = g_ptr_array_index(flows, i);
            if (f->frozen)
                continue;
            f->rate += s;
            for (guint k = 0; k < f->n_bound; k++)
                net->residual[f->links[k]] -= s * f->weights[k];
        }
        guint newly_frozen = 0;
        for (guint i = 0; i < flows->len; i++) {
            Flow *f = g_ptr_array_index(flows, i);
            if (f->frozen)
                continue;
            for (guint k = 0; k < f->n_bound; k++) {
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
        count_weights(net, flows); /* weight sums count unfrozen flows only */
    }
}

/* @f's end at its new rate, from @now (its bytes brought up to date), into the calendar. */
static void predict_end(ParoNetwork *net, Flow *f, ParoTime now)
{
    ParoTime d = isinf(f->rate) ? 0 : paro_net_duration_ps(f->remaining, f->rate);
    f->finish = paro_time_add(now, d);
    if (f->finish == PARO_TIME_MAX)
        paro_engine_note_overflow(net->engine);
    paro_net_finish_move(net, f);
}

/* Fills one component and sets its flows' predicted ends. */
static void solve_component(ParoNetwork *net, GPtrArray *flows, ParoTime now)
{
    net->n_solves++;
    net->n_flow_solves += flows->len;
    for (guint i = 0; i < flows->len; i++)
        catch_up(net, g_ptr_array_index(flows, i), now);
    fill(net, flows);
    /* Utilisation check for the conservation tests, and each flow's predicted end. */
    for (guint i = 0; i < flows->len; i++) {
        Flow *f = g_ptr_array_index(flows, i);
        for (guint k = 0; k < f->n_bound; k++) {
            guint l = f->links[k];
            double used = net->capacity[l] - net->residual[l];
            net->max_utilisation = fmax(net->max_utilisation, used / net->capacity[l]);
        }
        predict_end(net, f, now);
    }
}

/* A flow alone on its links, not yet solved at this stamp, solved as solve_component
 * would solve the component of it alone, to the same bits (a fill of one flow: it gains
 * the least of capacity / weight in one round and freezes), without a search: most
 * components of an explicit tree are one flow. FALSE, and nothing done, otherwise. */
static gboolean solve_alone(ParoNetwork *net, Flow *f, ParoTime now)
{
    if (f->visited == net->stamp)
        return FALSE;
    for (guint k = 0; k < f->n_bound; k++)
        if (net->users[f->links[k]].len != 1)
            return FALSE;
    f->visited = net->stamp;
    f->component = ++net->n_components;
    net->n_solves++;
    net->n_flow_solves++;
    catch_up(net, f, now);
    double s = INFINITY;
    for (guint k = 0; k < f->n_bound; k++)
        s = fmin(s, net->capacity[f->links[k]] / f->weights[k]);
    f->rate = f->n_bound == 0 ? INFINITY : 0 + s;
    for (guint k = 0; k < f->n_bound; k++) {
        guint l = f->links[k];
        double residual = net->capacity[l] - s * f->weights[k];
        net->max_utilisation =
            fmax(net->max_utilisation, (net->capacity[l] - residual) / net->capacity[l]);
    }
    predict_end(net, f, now);
    return TRUE;
}

/* Each component that a change since the last solve touched, solved on its own: a flow's
 * rate then depends on its component alone, whatever else changed at the same instant. */
void paro_net_solve(ParoNetwork *net, ParoTime now)
{
    net->stamp++;
    for (guint i = 0; i < net->joined->len; i++) {
        Flow *f = g_ptr_array_index(net->joined, i);
        if (solve_alone(net, f, now))
            continue;
        visit_flow(net, f);
        grow_component(net);
        if (net->component->len > 0)
            solve_component(net, net->component, now);
    }
    for (guint i = 0; i < net->changed->len; i++) {
        guint l = g_array_index(net->changed, guint, i);
        if (net->users[l].len == 1 && solve_alone(net, net->users[l].flows[0], now))
            continue;
        visit_link(net, l);
        grow_component(net);
        if (net->component->len > 0)
            solve_component(net, net->component, now);
    }
    g_array_set_size(net->changed, 0);
    g_ptr_array_set_size(net->joined, 0);
}

gboolean paro_net_dirty(const ParoNetwork *net)
{
    return net->changed->len > 0 || net->joined->len > 0;
}
