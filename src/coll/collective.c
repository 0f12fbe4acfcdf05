/* SPDX-License-Identifier: MIT */
/* Names and the nccl-tests definitions of collective sizes and bus bandwidth. */
#include "coll/collective.h"

const char *const paro_coll_kind_names[] = {
    "allreduce", "allgather", "reducescatter", "broadcast", "sendrecv", "alltoall", NULL};
const char *const paro_scope_names[] = {"global", "intra", "inter", NULL};
const char *const paro_algorithm_names[] = {"ring", "hierarchical", "ho-ring",  "tree",
                                            "auto", "nvls",         "nvlstree", NULL};
const char *const paro_coll_model_names[] = {"nccl", "flow", NULL};

double paro_coll_bus_factor(ParoCollKind kind, gint64 nranks)
{
    g_return_val_if_fail(nranks >= 1, 0);
    double n = (double)nranks;
    switch (kind) {
    case PARO_COLL_ALLREDUCE:
        return 2.0 * (n - 1) / n;
    case PARO_COLL_ALLGATHER:
    case PARO_COLL_REDUCESCATTER:
    case PARO_COLL_ALLTOALL:
        return (n - 1) / n;
    case PARO_COLL_BROADCAST:
    case PARO_COLL_SENDRECV:
        return 1.0;
    }
    g_return_val_if_reached(0);
}

double paro_coll_bytes_sent(ParoCollKind kind, gint64 k, double size_bytes)
{
    g_return_val_if_fail(k >= 1, 0);
    if (k == 1)
        return 0;
    double kd = (double)k;
    switch (kind) {
    case PARO_COLL_ALLREDUCE:
        return 2.0 * (kd - 1) / kd * size_bytes;
    case PARO_COLL_ALLGATHER:
    case PARO_COLL_REDUCESCATTER:
    case PARO_COLL_BROADCAST:
    case PARO_COLL_ALLTOALL:
        return (kd - 1) / kd * size_bytes;
    case PARO_COLL_SENDRECV:
        return size_bytes;
    }
    g_return_val_if_reached(0);
}

void paro_coll_scope_shape(ParoScope scope, gint64 n, gint64 m, gint64 gpn, gint64 *out_k,
                           gint64 *out_per_node)
{
    switch (scope) {
    case PARO_SCOPE_INTRA:
        *out_k = m;
        *out_per_node = MIN(m, gpn);
        return;
    case PARO_SCOPE_INTER:
        *out_k = n / m;
        *out_per_node = m <= gpn ? MIN(gpn / m, *out_k) : 1;
        return;
    case PARO_SCOPE_GLOBAL:
        *out_k = n;
        *out_per_node = MIN(n, gpn);
        return;
    }
    g_assert_not_reached();
}
