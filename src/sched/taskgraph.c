/* SPDX-License-Identifier: MIT */
/* The task graph's scheduler (taskgraph.h).
 *
 * Start rule: a task starts when no dependency is pending and it heads each of its device's
 * stream queues it holds. Only the ending of a task can make another ready, so after each
 * end the scheduler looks at the heads of the ended task's device and of the devices of the
 * followers it released, lowest device first; stream-less followers start at once.
 *
 * Sharing: the running tasks that use resources are re-solved whenever one starts or ends.
 * Resources whose tasks' shares sum to at most 1 constrain nothing (the task runs at full
 * speed, so an uncontended graph is exact). On the others, progressive filling raises every
 * unfrozen task's speed together until a resource saturates (its tasks freeze) or the speed
 * reaches 1. A task whose speed changes has its remaining work (isolated picoseconds)
 * reduced by what it did at the old speed, and its end re-scheduled. */
#include "sched/taskgraph.h"

#include <math.h>

#include "core/engine.h"
#include "core/error.h"

#define MAX_USES 4
/* Shares summing to at most 1 + this on a resource are not a constraint: sums of shares
 * that are exactly 1 in theory must not slow anything by a rounding error. */
#define SHARE_SLACK 1e-12

/* A memory change at a task's start or end, or a resource it uses: one list per task, in
 * insertion order (changes at one instant apply in the order they were added). */
enum { ITEM_START, ITEM_END, ITEM_USE, ITEM_SMS };
typedef struct {
    guint next;   /* G_MAXUINT at the end */
    guint what;   /* (ITEM_* << 28) | the ParoMemCategory or the resource */
    double value; /* bytes, or the share */
} Item;

/* Kept small (64 bytes): a pipeline of a 100-layer model with thousands of micro-batches
 * has millions of tasks. */
typedef struct {
    ParoTime duration, start, end;
    gint micro, layer;
    guint first_edge; /* index into edges of the first follower; G_MAXUINT: none */
    gint waiting;     /* dependencies not yet ended */
    guint items[2];   /* first and last Item; G_MAXUINT: none */
    guint flow;       /* index into flows, for a task with uses */
    guint16 device;
    guint8 name; /* index into the graph's names */
    guint8 streams, kind, n_uses;
    guint8 started : 1, done : 1, shared : 1, has_flow : 1, shared_seen : 1;
} Task;

/* A running task with uses, or a compute task that started while collectives held SMs of its
 * device (graphs with paro_task_graph_take_sms only). */
typedef struct {
    double speed;     /* share of its isolated rate it runs at */
    double remaining; /* isolated picoseconds left at `since` */
    ParoTime since;
    ParoEventId event;
    guint64 order; /* when it started: the order in which components are solved */
} Flow;

typedef struct {
    guint to;   /* the follower */
    guint next; /* next edge of the same task, G_MAXUINT at the end */
} Edge;

typedef struct {
    GArray *queue[PARO_SCHED_STREAMS]; /* ParoTaskId, in order of addition */
    guint head[PARO_SCHED_STREAMS];
    ParoMemLedger *ledger;
    ParoTime kind_busy[2]; /* integer sums, so a periodic step adds the same each period */
    ParoTime stream_busy[PARO_SCHED_STREAMS];
    double sms_taken;  /* share of the SMs running collectives hold now */
    guint n_taking;    /* those collectives */
    GArray *computing; /* ParoTaskId: running compute tasks */
} Device;

typedef struct _Ending Ending;

struct _ParoTaskGraph {
    ParoEngine *engine;
    GArray *tasks; /* Task */
    GArray *edges; /* Edge */
    GArray *items; /* Item: memory changes and uses */
    GArray *flows; /* Flow, one per task with uses */
    Device *devices;
    guint n_devices, n_resources;
    guint left, n_shared;
    Ending *endings;
    GPtrArray *names;    /* the static names tasks were added with */
    double *level;       /* per resource: scratch for the solver */
    double *weight;      /* per resource: scratch */
    gboolean *marked;    /* per device: scratch for try_start */
    gboolean *touched;   /* per resource: scratch, the component being re-solved */
    GArray *component;   /* ParoTaskId: scratch, its running tasks in start order */
    GArray **users;      /* per resource: ParoTaskId, the running tasks that use it */
    guint64 n_activated; /* tasks with uses started so far */
    gboolean takes_sms;  /* some task takes SMs: compute tasks get flows */
};

struct _Ending {
    ParoTaskGraph *graph;
    ParoTaskId task;
};

static Task *task_at(const ParoTaskGraph *g, ParoTaskId id)
{
    return &g_array_index(g->tasks, Task, id);
}

ParoTaskGraph *paro_task_graph_new(guint devices, guint resources, gboolean keep_memory_timeline)
{
    g_return_val_if_fail(devices >= 1, NULL);
    ParoTaskGraph *g = g_new0(ParoTaskGraph, 1);
    g->engine = paro_engine_new();
    g->tasks = g_array_new(FALSE, FALSE, sizeof(Task));
    g->edges = g_array_new(FALSE, FALSE, sizeof(Edge));
    g->items = g_array_new(FALSE, FALSE, sizeof(Item));
    g->flows = g_array_new(FALSE, FALSE, sizeof(Flow));
    g->n_devices = devices;
    g->n_resources = resources;
    g->devices = g_new0(Device, devices);
    for (guint d = 0; d < devices; d++) {
        for (int q = 0; q < PARO_SCHED_STREAMS; q++)
            g->devices[d].queue[q] = g_array_new(FALSE, FALSE, sizeof(ParoTaskId));
        g->devices[d].ledger = paro_mem_ledger_new(keep_memory_timeline);
        g->devices[d].computing = g_array_new(FALSE, FALSE, sizeof(ParoTaskId));
    }
    g->names = g_ptr_array_new();
    g->level = g_new0(double, MAX(resources, 1));
    g->weight = g_new0(double, MAX(resources, 1));
    g->marked = g_new0(gboolean, devices);
    g->touched = g_new0(gboolean, MAX(resources, 1));
    g->component = g_array_new(FALSE, FALSE, sizeof(ParoTaskId));
    g->users = g_new0(GArray *, MAX(resources, 1));
    for (guint r = 0; r < resources; r++)
        g->users[r] = g_array_new(FALSE, FALSE, sizeof(ParoTaskId));
    return g;
}

void paro_task_graph_free(ParoTaskGraph *g)
{
    if (g == NULL)
        return;
    for (guint d = 0; d < g->n_devices; d++) {
        for (int q = 0; q < PARO_SCHED_STREAMS; q++)
            g_array_unref(g->devices[d].queue[q]);
        paro_mem_ledger_free(g->devices[d].ledger);
        g_array_unref(g->devices[d].computing);
    }
    g_free(g->devices);
    g_array_unref(g->tasks);
    g_array_unref(g->edges);
    g_array_unref(g->items);
    g_array_unref(g->flows);
    g_ptr_array_unref(g->names);
    g_free(g->endings);
    g_free(g->level);
    g_free(g->weight);
    g_free(g->marked);
    g_free(g->touched);
    g_array_unref(g->component);
    for (guint r = 0; r < g->n_resources; r++)
        g_array_unref(g->users[r]);
    g_free(g->users);
    paro_engine_free(g->engine);
    g_free(g);
}

static void reserve(GArray *a, guint more)
{
    guint len = a->len;
    g_array_set_size(a, len + more);
    g_array_set_size(a, len);
}

void paro_task_graph_reserve(ParoTaskGraph *g, guint tasks, guint edges)
{
    reserve(g->tasks, tasks);
    reserve(g->edges, edges);
}

ParoTaskId paro_task_graph_add(ParoTaskGraph *g, const char *name, ParoTaskKind kind, guint device,
                               guint streams, gint micro, gint layer, ParoTime duration)
{
    g_return_val_if_fail(device < g->n_devices && device <= G_MAXUINT16 &&
                             streams < (1u << PARO_SCHED_STREAMS) && duration >= 0,
                         PARO_TASK_NONE);
    Task t = {0};
    guint name_id = 0;
    while (name_id < g->names->len && g_ptr_array_index(g->names, name_id) != name)
        name_id++;
    if (name_id == g->names->len)
        g_ptr_array_add(g->names, (gpointer)name);
    g_return_val_if_fail(name_id <= G_MAXUINT8, PARO_TASK_NONE);
    t.name = (guint8)name_id;
    t.kind = (guint8)kind;
    t.device = (guint16)device;
    t.streams = (guint8)streams;
    t.micro = micro;
    t.layer = layer;
    t.duration = duration;
    t.first_edge = G_MAXUINT;
    t.items[0] = t.items[1] = G_MAXUINT;
    g_array_append_val(g->tasks, t);
    ParoTaskId id = g->tasks->len - 1;
    for (int q = 0; q < PARO_SCHED_STREAMS; q++)
        if (streams & (1u << q))
            g_array_append_val(g->devices[device].queue[q], id);
    return id;
}

void paro_task_graph_depend(ParoTaskGraph *g, ParoTaskId later, ParoTaskId first)
{
    if (first == PARO_TASK_NONE)
        return;
    Edge e = {later, task_at(g, first)->first_edge};
    g_array_append_val(g->edges, e);
    task_at(g, first)->first_edge = g->edges->len - 1;
    task_at(g, later)->waiting++;
}

static Item *item_at(const ParoTaskGraph *g, guint i)
{
    return &g_array_index(g->items, Item, i);
}

/* Appends an item to @t's list, keeping insertion order. */
static void append(ParoTaskGraph *g, Task *t, guint kind, guint what, double value)
{
    Item it = {G_MAXUINT, (kind << 28) | what, value};
    g_array_append_val(g->items, it);
    guint i = g->items->len - 1;
    if (t->items[0] == G_MAXUINT)
        t->items[0] = i;
    else
        item_at(g, t->items[1])->next = i;
    t->items[1] = i;
}

void paro_task_graph_use(ParoTaskGraph *g, ParoTaskId id, guint resource, double share)
{
    Task *t = task_at(g, id);
    g_return_if_fail(resource < g->n_resources && resource < (1u << 28) && t->n_uses < MAX_USES);
    if (!(share > 0))
        return; /* takes nothing: no constraint */
    append(g, t, ITEM_USE, resource, MIN(share, 1.0));
    if (t->n_uses++ == 0) {
        Flow f = {0};
        g_array_append_val(g->flows, f);
        t->flow = g->flows->len - 1;
        t->has_flow = TRUE;
    }
}

void paro_task_graph_take_sms(ParoTaskGraph *g, ParoTaskId id, double share)
{
    Task *t = task_at(g, id);
    g_return_if_fail(t->kind == PARO_TASK_COMM);
    if (!(share > 0))
        return;
    append(g, t, ITEM_SMS, 0, MIN(share, 1.0));
    g->takes_sms = TRUE;
}

void paro_task_graph_on_start(ParoTaskGraph *g, ParoTaskId id, ParoMemCategory c, double delta)
{
    append(g, task_at(g, id), ITEM_START, (guint)c, delta);
}

void paro_task_graph_on_end(ParoTaskGraph *g, ParoTaskId id, ParoMemCategory c, double delta)
{
    append(g, task_at(g, id), ITEM_END, (guint)c, delta);
}

ParoMemLedger *paro_task_graph_ledger(ParoTaskGraph *g, guint device)
{
    g_return_val_if_fail(device < g->n_devices, NULL);
    return g->devices[device].ledger;
}

/* ---- sharing ---- */

/* The uses of task @t: @it runs over its items, `res` is the resource of a use. */
static const Item *next_use(const ParoTaskGraph *g, guint i)
{
    for (; i != G_MAXUINT; i = item_at(g, i)->next)
        if (item_at(g, i)->what >> 28 == ITEM_USE)
            return item_at(g, i);
    return NULL;
}

#define FOR_USES(g, t, it)                                                                         \
    for (const Item *it = next_use(g, (t)->items[0]); it != NULL; it = next_use(g, it->next))

#define RES(it) ((it)->what & ((1u << 28) - 1))

static Flow *flow_of(const ParoTaskGraph *g, const Task *t)
{
    return &g_array_index(g->flows, Flow, t->flow);
}

static void reschedule(ParoTaskGraph *g, ParoTaskId id, double speed);

/* Progressive filling over @tasks (running, with uses, closed under sharing a resource);
 * see the file's comment. */
static void solve_tasks(ParoTaskGraph *g, const GArray *tasks)
{
    guint n = tasks->len;
    if (n == 0)
        return;
    double *load = g->level, *weight = g->weight;
    for (guint i = 0; i < n; i++) {
        const Task *t = task_at(g, g_array_index(tasks, ParoTaskId, i));
        FOR_USES(g, t, it)
        weight[RES(it)] = 0;
    }
    for (guint i = 0; i < n; i++) {
        const Task *t = task_at(g, g_array_index(tasks, ParoTaskId, i));
        FOR_USES(g, t, it)
        weight[RES(it)] += it->value;
    }
    gboolean contended = FALSE;
    for (guint i = 0; i < n && !contended; i++) {
        const Task *t = task_at(g, g_array_index(tasks, ParoTaskId, i));
        FOR_USES(g, t, it)
        contended = contended || weight[RES(it)] > 1 + SHARE_SLACK;
    }
    if (!contended) {
        for (guint i = 0; i < n; i++)
            reschedule(g, g_array_index(tasks, ParoTaskId, i), 1.0);
        return;
    }
    /* speeds[i] < 0: not frozen yet; the level rises for all unfrozen together */
    g_autofree double *speeds = g_new(double, n);
    for (guint i = 0; i < n; i++)
        speeds[i] = -1;
    double level = 0;
    for (guint frozen = 0; frozen < n;) {
        /* load: what frozen tasks take of each resource; weight: unfrozen shares */
        for (guint i = 0; i < n; i++) {
            const Task *t = task_at(g, g_array_index(tasks, ParoTaskId, i));
            FOR_USES(g, t, it)
            load[RES(it)] = weight[RES(it)] = 0;
        }
        for (guint i = 0; i < n; i++) {
            const Task *t = task_at(g, g_array_index(tasks, ParoTaskId, i));
            FOR_USES(g, t, it)
            {
                if (speeds[i] >= 0)
                    load[RES(it)] += it->value * speeds[i];
                else
                    weight[RES(it)] += it->value;
            }
        }
        double next = 1.0;
        for (guint i = 0; i < n; i++) {
            if (speeds[i] >= 0)
                continue;
            const Task *t = task_at(g, g_array_index(tasks, ParoTaskId, i));
            FOR_USES(g, t, it)
            next = MIN(next, (1.0 - load[RES(it)]) / weight[RES(it)]);
        }
        level = MAX(level, next);
        guint before = frozen;
        for (guint i = 0; i < n; i++) {
            if (speeds[i] >= 0)
                continue;
            const Task *t = task_at(g, g_array_index(tasks, ParoTaskId, i));
            gboolean saturated = level >= 1.0;
            FOR_USES(g, t, it)
            saturated = saturated || load[RES(it)] + weight[RES(it)] * level >= 1.0 - 1e-12;
            if (saturated) {
                speeds[i] = MIN(level, 1.0);
                frozen++;
            }
        }
        if (frozen == before) /* rounding: freeze the rest at this level */
            for (guint i = 0; i < n; i++)
                if (speeds[i] < 0)
                    speeds[i] = MIN(level, 1.0), frozen++;
    }
    for (guint i = 0; i < n; i++)
        reschedule(g, g_array_index(tasks, ParoTaskId, i), speeds[i]);
}

static int compare_activation(gconstpointer a, gconstpointer b, gpointer data)
{
    const ParoTaskGraph *g = data;
    guint64 x = flow_of(g, task_at(g, *(const ParoTaskId *)a))->order;
    guint64 y = flow_of(g, task_at(g, *(const ParoTaskId *)b))->order;
    return (x > y) - (x < y);
}

/* Adds the running users of @resource that are not in @comp yet, once per resource. */
static void visit(ParoTaskGraph *g, guint resource, GArray *comp)
{
    if (g->touched[resource])
        return;
    g->touched[resource] = TRUE;
    GArray *u = g->users[resource];
    for (guint k = 0; k < u->len; k++) {
        ParoTaskId id = g_array_index(u, ParoTaskId, k);
        if (!task_at(g, id)->shared_seen) {
            task_at(g, id)->shared_seen = TRUE;
            g_array_append_val(comp, id);
        }
    }
}

/* Max-min sharing decomposes over the connected components of the running tasks and the
 * resources they use: a start or an end changes the speeds of its own component only. So
 * only the tasks that share a resource with @seed (a task that started or ended), directly
 * or through others, are re-solved (found through each resource's users), in activation
 * order so that every sum runs as a solve of all running tasks would run it. */
static void solve(ParoTaskGraph *g, const Task *seed)
{
    GArray *comp = g->component;
    g_array_set_size(comp, 0);
    FOR_USES(g, seed, it)
    visit(g, RES(it), comp);
    for (guint c = 0; c < comp->len; c++) { /* breadth first: comp grows as it is read */
        const Task *t = task_at(g, g_array_index(comp, ParoTaskId, c));
        FOR_USES(g, t, it)
        visit(g, RES(it), comp);
    }
    FOR_USES(g, seed, it)
    g->touched[RES(it)] = FALSE;
    for (guint c = 0; c < comp->len; c++) {
        Task *t = task_at(g, g_array_index(comp, ParoTaskId, c));
        t->shared_seen = FALSE;
        FOR_USES(g, t, it)
        g->touched[RES(it)] = FALSE;
    }
    g_array_sort_with_data(comp, compare_activation, g);
    solve_tasks(g, comp);
}

static void end_task(ParoEngine *engine, gpointer data);

static void reschedule(ParoTaskGraph *g, ParoTaskId id, double speed)
{
    Task *t = task_at(g, id);
    Flow *f = flow_of(g, t);
    if (speed == f->speed)
        return;
    ParoTime now = paro_engine_now(g->engine);
    f->remaining = MAX(0.0, f->remaining - (double)(now - f->since) * f->speed);
    f->since = now;
    f->speed = speed;
    if (!t->shared) {
        t->shared = TRUE;
        g->n_shared++;
    }
    paro_engine_cancel(g->engine, f->event);
    double left = ceil(f->remaining / speed);
    ParoTime at = left >= (double)(PARO_TIME_MAX - now) ? PARO_TIME_MAX : now + (ParoTime)left;
    f->event = paro_engine_schedule(g->engine, at, 0, end_task, &g->endings[id]);
}

/* ---- SMs taken by collectives ---- */

/* A compute task's speed while collectives hold @dev's SMs: the kernels keep the SMs left,
 * at least MIN_COMPUTE_SPEED of them (NCCL never launches on every SM; a bound for sums of
 * shares that overlap in the model but not on the GPU). */
#define MIN_COMPUTE_SPEED 0.1

static double compute_speed(const Device *dev)
{
    return MAX(1.0 - dev->sms_taken, MIN_COMPUTE_SPEED);
}

static double sms_of(const ParoTaskGraph *g, const Task *t)
{
    if (!g->takes_sms || t->kind != PARO_TASK_COMM)
        return 0; /* the common case costs no walk over the task's items */
    double sum = 0;
    for (guint i = t->items[0]; i != G_MAXUINT; i = item_at(g, i)->next)
        if (item_at(g, i)->what >> 28 == ITEM_SMS)
            sum += item_at(g, i)->value;
    return sum;
}

static void slow_computing(ParoTaskGraph *g, const Device *dev)
{
    for (guint i = 0; i < dev->computing->len; i++)
        reschedule(g, g_array_index(dev->computing, ParoTaskId, i), compute_speed(dev));
}

/* ---- running ---- */

static gboolean heads_all(const ParoTaskGraph *g, ParoTaskId id)
{
    const Task *t = task_at(g, id);
    const Device *dev = &g->devices[t->device];
    for (int q = 0; q < PARO_SCHED_STREAMS; q++) {
        if (!(t->streams & (1u << q)))
            continue;
        if (dev->head[q] >= dev->queue[q]->len ||
            g_array_index(dev->queue[q], ParoTaskId, dev->head[q]) != id)
            return FALSE;
    }
    return TRUE;
}

/* The memory changes of @t's @kind (ITEM_START or ITEM_END), in order. */
static void apply(ParoTaskGraph *g, const Task *t, guint kind, ParoTime now)
{
    ParoMemLedger *ledger = g->devices[t->device].ledger;
    for (guint i = t->items[0]; i != G_MAXUINT; i = item_at(g, i)->next) {
        const Item *it = item_at(g, i);
        if (it->what >> 28 == kind)
            paro_mem_ledger_change(ledger, now, (ParoMemCategory)RES(it), it->value);
    }
}

static void start(ParoTaskGraph *g, ParoTaskId id)
{
    ParoTime now = paro_engine_now(g->engine);
    Task *t = task_at(g, id);
    Device *dev = &g->devices[t->device];
    t->started = TRUE;
    t->start = now;
    apply(g, t, ITEM_START, now);
    g->endings[id] = (Ending){g, id};
    ParoEventId event = paro_engine_schedule(g->engine, paro_time_add(now, t->duration), 0,
                                             end_task, &g->endings[id]);
    if (t->n_uses > 0) {
        *flow_of(g, t) = (Flow){1.0, (double)t->duration, now, event, g->n_activated++};
        FOR_USES(g, t, it)
        g_array_append_val(g->users[RES(it)], id);
        solve(g, t);
    } else if (t->kind == PARO_TASK_COMPUTE && g->takes_sms) {
        Flow f = {1.0, (double)t->duration, now, event};
        g_array_append_val(g->flows, f);
        t->flow = g->flows->len - 1;
        t->has_flow = TRUE;
        g_array_append_val(dev->computing, id);
        if (dev->sms_taken > 0)
            reschedule(g, id, compute_speed(dev));
    }
    double taking = sms_of(g, t);
    if (taking > 0) {
        dev->sms_taken += taking;
        dev->n_taking++;
        slow_computing(g, dev);
    }
}

static void try_start(ParoTaskGraph *g, guint device)
{
    Device *dev = &g->devices[device];
    for (int q = 0; q < PARO_SCHED_STREAMS; q++) {
        if (dev->head[q] >= dev->queue[q]->len)
            continue;
        ParoTaskId id = g_array_index(dev->queue[q], ParoTaskId, dev->head[q]);
        Task *t = task_at(g, id);
        if (t->started || t->waiting > 0 || !heads_all(g, id))
            continue;
        start(g, id);
    }
}

static void end_task(ParoEngine *engine, gpointer data)
{
    Ending *e = data;
    ParoTaskGraph *g = e->graph;
    Task *t = task_at(g, e->task);
    Device *dev = &g->devices[t->device];
    ParoTime now = paro_engine_now(engine);
    t->done = TRUE;
    t->end = now;
    /* its whole time on the device, sharing included */
    dev->kind_busy[t->kind] += now - t->start;
    for (int q = 0; q < PARO_SCHED_STREAMS; q++)
        if (t->streams & (1u << q))
            dev->stream_busy[q] += now - t->start;
    apply(g, t, ITEM_END, now);
    for (int q = 0; q < PARO_SCHED_STREAMS; q++)
        if (t->streams & (1u << q))
            dev->head[q]++;
    g->left--;
    if (t->n_uses > 0) {
        FOR_USES(g, t, it)
        {
            GArray *u = g->users[RES(it)];
            for (guint k = 0; k < u->len; k++)
                if (g_array_index(u, ParoTaskId, k) == e->task) {
                    g_array_remove_index(u, k);
                    break;
                }
        }
        solve(g, t);
    } else if (t->has_flow) {
        for (guint i = 0; i < dev->computing->len; i++)
            if (g_array_index(dev->computing, ParoTaskId, i) == e->task) {
                g_array_remove_index(dev->computing, i);
                break;
            }
    }
    double taking = sms_of(g, t);
    if (taking > 0) {
        dev->sms_taken = --dev->n_taking == 0 ? 0 : dev->sms_taken - taking;
        slow_computing(g, dev);
    }
    g->marked[t->device] = TRUE;
    for (guint k = t->first_edge; k != G_MAXUINT; k = g_array_index(g->edges, Edge, k).next) {
        ParoTaskId to = g_array_index(g->edges, Edge, k).to;
        Task *f = task_at(g, to);
        if (--f->waiting > 0)
            continue;
        if (f->streams == 0)
            start(g, to);
        else
            g->marked[f->device] = TRUE;
    }
    for (guint d = 0; d < g->n_devices; d++)
        if (g->marked[d]) {
            g->marked[d] = FALSE;
            try_start(g, d);
        }
}

gboolean paro_task_graph_run(ParoTaskGraph *g, GError **error)
{
    guint n = g->tasks->len;
    g->left = n;
    g->endings = g_new(Ending, MAX(n, 1));
    for (ParoTaskId id = 0; id < n; id++) {
        const Task *t = task_at(g, id);
        if (t->streams == 0 && t->waiting == 0)
            start(g, id);
    }
    for (guint d = 0; d < g->n_devices; d++)
        try_start(g, d);
    paro_engine_run(g->engine, PARO_TIME_MAX);
    if (paro_engine_overflowed(g->engine)) {
        paro_engine_set_overflow_error(error);
        return FALSE;
    }
    if (g->left != 0) {
        for (ParoTaskId id = 0; id < n; id++) {
            const Task *t = task_at(g, id);
            if (!t->started) {
                g_set_error(error, PARO_SIM_ERROR, PARO_SIM_ERROR_DEADLOCK,
                            "%u tasks never ran; the first is %s on device %u (micro-batch %d, "
                            "layer %d)",
                            g->left, (const char *)g_ptr_array_index(g->names, t->name), t->device,
                            t->micro, t->layer);
                return FALSE;
            }
        }
        g_set_error(error, PARO_SIM_ERROR, PARO_SIM_ERROR_DEADLOCK, "%u tasks never ended",
                    g->left);
        return FALSE;
    }
    return TRUE;
}

ParoTime paro_task_graph_makespan(const ParoTaskGraph *g)
{
    return paro_engine_now(g->engine);
}

guint paro_task_graph_n_tasks(const ParoTaskGraph *g)
{
    return g->tasks->len;
}

guint paro_task_graph_n_devices(const ParoTaskGraph *g)
{
    return g->n_devices;
}

ParoTaskInfo paro_task_graph_get(const ParoTaskGraph *g, ParoTaskId id)
{
    const Task *t = task_at(g, id);
    return (ParoTaskInfo){g_ptr_array_index(g->names, t->name),
                          (ParoTaskKind)t->kind,
                          t->device,
                          t->streams,
                          t->micro,
                          t->layer,
                          t->duration,
                          t->start,
                          t->end};
}

ParoTime paro_task_graph_kind_busy(const ParoTaskGraph *g, guint device, ParoTaskKind kind)
{
    return g->devices[device].kind_busy[kind];
}

ParoTime paro_task_graph_stream_busy(const ParoTaskGraph *g, guint device, guint stream_bit)
{
    for (int q = 0; q < PARO_SCHED_STREAMS; q++)
        if (stream_bit == (1u << q))
            return g->devices[device].stream_busy[q];
    return 0;
}

guint paro_task_graph_n_shared(const ParoTaskGraph *g)
{
    return g->n_shared;
}
