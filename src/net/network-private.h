/* SPDX-License-Identifier: MIT */
/* The network's state, shared by its three files: network.c (the object, flows starting and
 * ending, the engine's hooks, the analytic fidelity), maxmin.c (the incremental max-min
 * solver) and finish.c (the flows' predicted ends by instant). Not for other modules. */
#pragma once

#include "net/network.h"

G_BEGIN_DECLS

typedef struct _FinishBucket FinishBucket;

#define POOLED 8 /* route lengths whose ended flows are kept for reuse */

/* A flow and its route in one allocation: links, then weights, then each link's slot in
 * that link's list of flows. */
typedef struct _Flow {
    guint *links;
    double *weights;
    guint *slots;
    guint n_links;
    guint n_bound;             /* the first links, those that can limit it (max-min) */
    guint64 seq;               /* start order (max-min: when it joined) */
    double remaining;          /* bytes, as of `updated` */
    ParoTime updated;          /* when remaining was last brought up to date */
    double rate;               /* bytes/s, one flow of the class */
    ParoTime finish;           /* predicted end at the current rate */
    FinishBucket *bucket;      /* the flows ending at `finish` (finish.c); NULL until solved */
    guint bucket_index;        /* its place in the bucket */
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
    guint8 *never_limits; /* per link, or NULL: see paro_network_set_never_limiting */
    double *residual;     /* solver scratch */
    double *weight_sum;   /* solver scratch */
    LinkUsers *users;     /* per link: the flows moving on it */
    guint64 *link_seen;   /* component search stamp per link */
    guint64 stamp, next_seq, n_components;
    GPtrArray *finish_heap;       /* FinishBucket*, a binary heap on finish (finish.c) */
    GHashTable *finish_buckets;   /* &finish -> its FinishBucket */
    GPtrArray *spare_buckets;     /* emptied buckets, for reuse */
    FinishBucket *last_bucket;    /* the one a flow last went into (or NULL) */
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

/* finish.c */
void paro_net_finish_init(ParoNetwork *net);
void paro_net_finish_clear(ParoNetwork *net);
/* paro_net_finish_move: @f to the bucket of its new `finish` (its first, after its first
 * solve: a flow that joined waits for that solve outside the calendar) */
void paro_net_finish_move(ParoNetwork *net, Flow *f);
/* paro_net_finish_take: the flow first in (finish, seq) order if it ends by @to, out of the
 * calendar; NULL when none ends by then */
Flow *paro_net_finish_take(ParoNetwork *net, ParoTime to);

/* maxmin.c */
/* paro_net_activate: a flow joins: on its links, to be solved (then into the calendar) */
void paro_net_activate(ParoNetwork *net, Flow *f);
/* paro_net_next_finish: the earliest predicted end, PARO_TIME_MAX with no flow */
ParoTime paro_net_next_finish(const ParoNetwork *net);
/* paro_net_retire_finished: a flow ending by @to, its bytes carried and its links marked
 * for the next solve; NULL when none ends by then */
Flow *paro_net_retire_finished(ParoNetwork *net, ParoTime to);
gint paro_net_by_seq(gconstpointer a, gconstpointer b);
/* paro_net_dirty: flows started or ended since the last solve */
gboolean paro_net_dirty(const ParoNetwork *net);
/* paro_net_solve: each component that a change touched, re-solved at @now */
void paro_net_solve(ParoNetwork *net, ParoTime now);

G_END_DECLS
