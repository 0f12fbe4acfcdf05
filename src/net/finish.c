/* SPDX-License-Identifier: MIT */
/* The flows' predicted ends by instant: one bucket of flows per distinct finish time, the
 * buckets in a binary heap on that time and found by a hash table on it (looked up, never
 * iterated). Flows that start together at the same rate end together: an explicit tree
 * AllReduce on 131,072 GPUs starts 4.2 million flows that end at a few thousand instants.
 * One heap of every flow sifted each of them through ~20 levels, each comparison reading
 * another flow and each move writing one (a third of that tree's time, issue #18); here a
 * flow's new end costs a lookup and an append. Flows leave in (finish, start) order, as they
 * left that heap: a bucket keeps its flows in the order they came (most come in start
 * order) and is sorted by start, if need be, when its instant comes. */
#include "net/network-private.h"

#include <string.h>

struct _FinishBucket {
    ParoTime finish;
    GPtrArray *flows; /* Flow*, NULL where one left (so the others keep their order) */
    guint live;       /* flows in it */
    guint next;       /* the first place not yet taken */
    guint heap_index;
    guint64 last_seq; /* of the flow that came last */
    gboolean sorted;  /* flows in start order (most come in it: no sort then) */
};

/* Start order of (seq, flow) pairs: sorting them reads no flow. */
typedef struct {
    guint64 seq;
    Flow *flow;
} Started;

/* Sorts @n pairs by start, merging runs bottom-up between @a and @scratch (n entries each),
 * and returns the one that holds the result: a bucket is a few runs in start order, from
 * the components solved one after the other. */
static const Started *sort_by_start(Started *a, Started *scratch, guint n)
{
    for (guint width = 1; width < n; width *= 2) {
        for (guint lo = 0; lo < n; lo += 2 * width) {
            guint mid = MIN(lo + width, n), hi = MIN(lo + 2 * width, n), i = lo, j = mid, k = lo;
            if (mid == hi || a[mid - 1].seq < a[mid].seq) { /* in order already */
                memcpy(scratch + lo, a + lo, (hi - lo) * sizeof *a);
                continue;
            }
            while (i < mid && j < hi)
                scratch[k++] = a[i].seq < a[j].seq ? a[i++] : a[j++];
            while (i < mid)
                scratch[k++] = a[i++];
            while (j < hi)
                scratch[k++] = a[j++];
        }
        Started *t = a;
        a = scratch;
        scratch = t;
    }
    return a;
}

/* Rewrites @b's flows in start order without holes, from its next place. */
static void bucket_sort(FinishBucket *b)
{
    if (b->sorted) { /* in place */
        guint n = 0;
        for (guint i = b->next; i < b->flows->len; i++) {
            Flow *f = b->flows->pdata[i];
            if (f != NULL) {
                b->flows->pdata[n] = f;
                f->bucket_index = n++;
            }
        }
        g_ptr_array_set_size(b->flows, n);
        b->next = 0;
        return;
    }
    g_autofree Started *started = g_new(Started, 2 * (gsize)b->live);
    guint n = 0;
    for (guint i = b->next; i < b->flows->len; i++) {
        Flow *f = b->flows->pdata[i];
        if (f != NULL)
            started[n++] = (Started){f->seq, f};
    }
    const Started *sorted = sort_by_start(started, started + n, n);
    g_ptr_array_set_size(b->flows, n);
    for (guint i = 0; i < n; i++) {
        Flow *f = sorted[i].flow;
        b->flows->pdata[i] = f;
        f->bucket_index = i;
    }
    b->next = 0;
    b->sorted = TRUE;
}

static void heap_set(GPtrArray *heap, guint i, FinishBucket *b)
{
    heap->pdata[i] = b;
    b->heap_index = i;
}

static ParoTime at(GPtrArray *heap, guint i)
{
    return ((FinishBucket *)heap->pdata[i])->finish;
}

static void sift_up(GPtrArray *heap, guint i)
{
    FinishBucket *b = heap->pdata[i];
    while (i > 0 && b->finish < at(heap, (i - 1) / 2)) {
        heap_set(heap, i, heap->pdata[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    heap_set(heap, i, b);
}

static void sift_down(GPtrArray *heap, guint i)
{
    FinishBucket *b = heap->pdata[i];
    for (;;) {
        guint child = 2 * i + 1;
        if (child >= heap->len)
            break;
        if (child + 1 < heap->len && at(heap, child + 1) < at(heap, child))
            child++;
        if (at(heap, child) >= b->finish)
            break;
        heap_set(heap, i, heap->pdata[child]);
        i = child;
    }
    heap_set(heap, i, b);
}

static void bucket_free(FinishBucket *b)
{
    g_ptr_array_unref(b->flows);
    g_free(b);
}

void paro_net_finish_init(ParoNetwork *net)
{
    net->finish_heap = g_ptr_array_new(); /* the buckets are freed in paro_net_finish_clear */
    net->finish_buckets = g_hash_table_new(g_int64_hash, g_int64_equal);
    net->spare_buckets = g_ptr_array_new_with_free_func((GDestroyNotify)bucket_free);
}

void paro_net_finish_clear(ParoNetwork *net)
{
    g_hash_table_unref(net->finish_buckets);
    g_ptr_array_set_free_func(net->finish_heap, (GDestroyNotify)bucket_free);
    g_ptr_array_unref(net->finish_heap);
    g_ptr_array_unref(net->spare_buckets);
}

/* Drops the empty bucket @b: out of the heap and the table, kept for another instant. */
static void bucket_drop(ParoNetwork *net, FinishBucket *b)
{
    GPtrArray *heap = net->finish_heap;
    guint i = b->heap_index;
    FinishBucket *last = heap->pdata[heap->len - 1];
    g_ptr_array_set_size(heap, heap->len - 1); /* no free function: the spares keep it */
    if (last != b) {
        heap_set(heap, i, last);
        sift_up(heap, i);
        sift_down(heap, last->heap_index);
    }
    g_hash_table_remove(net->finish_buckets, &b->finish);
    g_ptr_array_add(net->spare_buckets, b);
    if (net->last_bucket == b)
        net->last_bucket = NULL;
}

static void finish_add(ParoNetwork *net, Flow *f)
{
    /* the flows of a component, or of a chain of them, mostly end together */
    FinishBucket *b = net->last_bucket != NULL && net->last_bucket->finish == f->finish
                          ? net->last_bucket
                          : g_hash_table_lookup(net->finish_buckets, &f->finish);
    if (b == NULL) {
        if (net->spare_buckets->len > 0) {
            b = g_ptr_array_steal_index_fast(net->spare_buckets, net->spare_buckets->len - 1);
        } else {
            b = g_new0(FinishBucket, 1);
            b->flows = g_ptr_array_new();
        }
        b->finish = f->finish;
        b->sorted = TRUE; /* empty */
        b->live = 0;
        b->next = 0;
        g_hash_table_insert(net->finish_buckets, &b->finish, b);
        g_ptr_array_add(net->finish_heap, b);
        b->heap_index = net->finish_heap->len - 1;
        sift_up(net->finish_heap, b->heap_index);
    }
    b->sorted = b->sorted && (b->live == 0 || f->seq > b->last_seq);
    b->last_seq = f->seq;
    net->last_bucket = b;
    f->bucket = b;
    f->bucket_index = b->flows->len;
    g_ptr_array_add(b->flows, f);
    b->live++;
}

/* Takes @f out of its bucket, leaving a hole; the holes go when they outnumber the flows. */
static void bucket_remove(ParoNetwork *net, Flow *f)
{
    FinishBucket *b = f->bucket;
    b->flows->pdata[f->bucket_index] = NULL;
    f->bucket = NULL;
    if (--b->live == 0) {
        g_ptr_array_set_size(b->flows, 0);
        b->next = 0;
        bucket_drop(net, b);
    } else if (b->flows->len - b->next > 2 * b->live + 16) {
        bucket_sort(b);
    }
}

void paro_net_finish_move(ParoNetwork *net, Flow *f)
{
    if (f->bucket != NULL && f->bucket->finish == f->finish)
        return;
    if (f->bucket != NULL)
        bucket_remove(net, f);
    finish_add(net, f);
}

ParoTime paro_net_next_finish(const ParoNetwork *net)
{
    return net->finish_heap->len > 0 ? at(net->finish_heap, 0) : PARO_TIME_MAX;
}

Flow *paro_net_finish_take(ParoNetwork *net, ParoTime to)
{
    if (paro_net_next_finish(net) > to)
        return NULL;
    FinishBucket *b = net->finish_heap->pdata[0];
    if (!b->sorted)
        bucket_sort(b);
    while (b->flows->pdata[b->next] == NULL)
        b->next++;
    Flow *f = b->flows->pdata[b->next++]; /* the earliest start */
    bucket_remove(net, f);
    return f;
}
