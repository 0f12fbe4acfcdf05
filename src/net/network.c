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
 * ends (bytes = rate x time since then), and the next end is the top of a heap of finish
 * times, so an event costs the size of the component it touches, not of the network.
 * Time: a flow's end is ceil(remaining / rate) picoseconds after the solve that set its
 * rate. Solves are lazy: starting or ending flows only records where the network changed,
 * so flows that start together cost one solve. */
#include "net/network.h"

#include <math.h>
#include <string.h>

const char *const paro_net_fidelity_names[] = {"maxmin", "analytic", NULL};

#define POOLED 8 /* route lengths whose ended flows are kept for reuse */

/* A flow and its route in one allocation: links, then weights, then each link's slot in
 * that link's list of flows. */
typedef struct _Flow {
    guint *links;
    double *weights;
    guint *slots;
    guint n_links;
    guint64 seq;               /* start order (max-min: when it joined) */
    double remaining;          /* bytes, as of `updated` */
    ParoTime updated;          /* when remaining was last brought up to date */
    double rate;               /* bytes/s, one flow of the class */
    ParoTime finish;           /* predicted end at the current rate */
    guint heap_index;          /* position in the finish heap */
    guint64 visited;           /* component search stamp */
    guint64 component;         /* the component it was last solved in */
    struct _Flow *prev, *next; /* the active flows, in start order */
    gboolean frozen;
    ParoFlowDone done;
    gpointer user_data;
    ParoNetwork *net;
} Flow;

typedef struct {
    Flow **flows; /* in no particular order: only searched */
    guint len, cap;
} LinkUsers;

struct _ParoNetwork {
    ParoEngine *engine;
    ParoNetFidelity fidelity;
    guint n_links;
    double *capacity;
    double *carried;
    double *residual;   /* solver scratch */
    double *weight_sum; /* solver scratch */
    LinkUsers *users;   /* per link: the flows moving on it */
    guint64 *link_seen; /* component search stamp per link */
    guint64 stamp, next_seq, n_components;
    GPtrArray *heap;              /* Flow*, a binary heap on (finish, seq) */
    GArray *changed;              /* guint links whose flows changed since the last solve */
    GPtrArray *joined;            /* Flow* that joined since the last solve */
    GPtrArray *component, *queue; /* solver scratch */
    Flow *first, *last;           /* the active flows, in start order */
    guint n_active;
    /* analytic fidelity: the weights of the flows moving on each link, and the flows whose
     * latency ended at the current instant, timed together once they have all joined */
    double *analytic_load;
    GPtrArray *joining;
    Flow *pool[POOLED]; /* ended flows by route length, linked by `next` */
    double max_utilisation;
    guint64 n_solves, n_flow_solves;
    ParoModelHooks hooks;
};

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
    net->heap = g_ptr_array_new_with_free_func((GDestroyNotify)flow_free);
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
    g_free(net->residual);
    g_free(net->weight_sum);
    for (guint l = 0; l < net->n_links; l++)
        g_free(net->users[l].flows);
    g_free(net->users);
    g_free(net->link_seen);
    /* flows that joined but were never solved are in the heap too (they join it at once) */
    g_ptr_array_unref(net->heap);
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

static ParoTime duration_ps(double bytes, double rate)
{
    if (bytes <= 0)
        return 0;
    return paro_time_from_s(bytes / rate);
}

/* ---- the heap of finish times, ties in start order ---- */

static gboolean before(const Flow *a, const Flow *b)
{
    return a->finish != b->finish ? a->finish < b->finish : a->seq < b->seq;
}

static void heap_set(GPtrArray *heap, guint i, Flow *f)
{
    heap->pdata[i] = f;
    f->heap_index = i;
}

static void sift_up(GPtrArray *heap, guint i)
{
    Flow *f = heap->pdata[i];
    while (i > 0) {
        guint parent = (i - 1) / 2;
        if (!before(f, heap->pdata[parent]))
            break;
        heap_set(heap, i, heap->pdata[parent]);
        i = parent;
    }
    heap_set(heap, i, f);
}

static void sift_down(GPtrArray *heap, guint i)
{
    Flow *f = heap->pdata[i];
    for (;;) {
        guint child = 2 * i + 1;
        if (child >= heap->len)
            break;
        if (child + 1 < heap->len && before(heap->pdata[child + 1], heap->pdata[child]))
            child++;
        if (!before(heap->pdata[child], f))
            break;
        heap_set(heap, i, heap->pdata[child]);
        i = child;
    }
    heap_set(heap, i, f);
}

static void heap_update(GPtrArray *heap, Flow *f)
{
    sift_up(heap, f->heap_index);
    sift_down(heap, f->heap_index);
}

static void heap_push(GPtrArray *heap, Flow *f)
{
    g_ptr_array_add(heap, f);
    f->heap_index = heap->len - 1;
    sift_up(heap, f->heap_index);
}

static Flow *heap_pop(GPtrArray *heap)
{
    Flow *top = heap->pdata[0];
    Flow *last = heap->pdata[heap->len - 1];
    heap->pdata[heap->len - 1] = NULL;
    g_ptr_array_set_size(heap, heap->len - 1); /* NULL: the free function skips it */
    if (heap->len > 0) {
        heap_set(heap, 0, last);
        sift_down(heap, 0);
    }
    return top;
}

/* ---- flows on links ---- */

static void users_add(ParoNetwork *net, Flow *f)
{
    for (guint k = 0; k < f->n_links; k++) {
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
    for (guint k = 0; k < f->n_links; k++) {
        guint l = f->links[k];
        LinkUsers *u = &net->users[l];
        Flow *moved = u->flows[--u->len];
        if (moved != f) {
            guint slot = f->slots[k];
            u->flows[slot] = moved;
            for (guint j = 0; j < moved->n_links; j++)
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

/* ---- the solver ---- */

static gint by_seq(gconstpointer a, gconstpointer b)
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
        for (guint k = 0; k < f->n_links; k++)
            visit_link(net, f->links[k]);
    }
    g_ptr_array_set_size(net->queue, 0);
    /* in start order: sorted when small, else read off the list of active flows */
    GPtrArray *c = net->component;
    if (c->len <= 64 || 8 * c->len < net->n_active) {
        g_ptr_array_sort(c, by_seq);
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
        for (guint k = 0; k < f->n_links; k++)
            net->weight_sum[f->links[k]] = 0;
    }
    for (guint i = 0; i < flows->len; i++) {
        Flow *f = g_ptr_array_index(flows, i);
        if (!f->frozen)
            for (guint k = 0; k < f->n_links; k++)
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
        f->frozen = f->n_links == 0;
        if (f->frozen)
            f->rate = INFINITY; /* a local copy: no link limits it */
        else
            unfrozen++;
        for (guint k = 0; k < f->n_links; k++)
            net->residual[f->links[k]] = net->capacity[f->links[k]];
    }
    count_weights(net, flows);
    while (unfrozen > 0) {
        double s = INFINITY;
        for (guint i = 0; i < flows->len; i++) {
            Flow *f = g_ptr_array_index(flows, i);
            if (f->frozen)
                continue;
            for (guint k = 0; k < f->n_links; k++) {
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
            for (guint k = 0; k < f->n_links; k++)
                net->residual[f->links[k]] -= s * f->weights[k];
        }
        guint newly_frozen = 0;
        for (guint i = 0; i < flows->len; i++) {
            Flow *f = g_ptr_array_index(flows, i);
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
        count_weights(net, flows); /* weight sums count unfrozen flows only */
    }
}

/* Fills one component and sets its flows' predicted ends. */
static void solve_component(ParoNetwork *net, GPtrArray *flows, ParoTime now)
{
    net->n_solves++;
    net->n_flow_solves += flows->len;
    /* (the heap orders by finish and start, a total order: its shape changes nothing) */
    gboolean rebuild = 4 * flows->len > net->heap->len;
    for (guint i = 0; i < flows->len; i++)
        catch_up(net, g_ptr_array_index(flows, i), now);
    fill(net, flows);
    /* Utilisation check for the conservation tests, and each flow's predicted end. */
    for (guint i = 0; i < flows->len; i++) {
        Flow *f = g_ptr_array_index(flows, i);
        for (guint k = 0; k < f->n_links; k++) {
            guint l = f->links[k];
            double used = net->capacity[l] - net->residual[l];
            net->max_utilisation = fmax(net->max_utilisation, used / net->capacity[l]);
        }
        ParoTime d = isinf(f->rate) ? 0 : duration_ps(f->remaining, f->rate);
        f->finish = paro_time_add(now, d);
        if (f->finish == PARO_TIME_MAX)
            paro_engine_note_overflow(net->engine);
        if (!rebuild)
            heap_update(net->heap, f);
    }
    if (rebuild) /* Floyd's O(n): cheaper than a sift per flow of a big component */
        for (guint i = net->heap->len / 2; i-- > 0;)
            sift_down(net->heap, i);
}

/* Each component that a change since the last solve touched, solved on its own: a flow's
 * rate then depends on its component alone, whatever else changed at the same instant. */
static void solve(ParoNetwork *net, ParoTime now)
{
    net->stamp++;
    for (guint i = 0; i < net->joined->len; i++) {
        visit_flow(net, g_ptr_array_index(net->joined, i));
        grow_component(net);
        if (net->component->len > 0)
            solve_component(net, net->component, now);
    }
    for (guint i = 0; i < net->changed->len; i++) {
        visit_link(net, g_array_index(net->changed, guint, i));
        grow_component(net);
        if (net->component->len > 0)
            solve_component(net, net->component, now);
    }
    g_array_set_size(net->changed, 0);
    g_ptr_array_set_size(net->joined, 0);
}

static gboolean dirty(const ParoNetwork *net)
{
    return net->changed->len > 0 || net->joined->len > 0;
}

static ParoTime next_event(gpointer model, ParoTime now)
{
    ParoNetwork *net = model;
    if (dirty(net))
        solve(net, now);
    return net->heap->len > 0 ? ((Flow *)net->heap->pdata[0])->finish : PARO_TIME_MAX;
}

static void advance(gpointer model, ParoTime from, ParoTime to)
{
    ParoNetwork *net = model;
    if (dirty(net))
        solve(net, from);
    if (net->heap->len == 0 || ((Flow *)net->heap->pdata[0])->finish > to)
        return;
    g_autoptr(GPtrArray) finished = g_ptr_array_new();
    while (net->heap->len > 0 && ((Flow *)net->heap->pdata[0])->finish <= to) {
        Flow *f = heap_pop(net->heap);
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
        g_ptr_array_add(finished, f);
    }
    /* Completions in start order: callbacks may start new flows (which join the next
     * solve). */
    g_ptr_array_sort(finished, by_seq);
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
    ParoNetwork *net = f->net;
    f->seq = net->next_seq++;
    f->updated = paro_engine_now(engine);
    f->finish = PARO_TIME_MAX; /* until its first solve, which comes before any advance */
    users_add(net, f);
    heap_push(net->heap, f);
    g_ptr_array_add(net->joined, f);
    f->prev = net->last;
    if (net->last)
        net->last->next = f;
    else
        net->first = f;
    net->last = f;
    net->n_active++;
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
    Flow *f = flow_new(net, n_links);
    if (n_links > 0) {
        memcpy(f->links, links, sizeof(guint) * n_links);
        memcpy(f->weights, weights, sizeof(double) * n_links);
    }
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
