/* SPDX-License-Identifier: MIT */
/* Calibration files (`kind: calibration`): measured compute figures, the network figures
 * derived from collective fits, and the fits themselves, read with the schema tables.
 *
 * How the network section replaces topology figures (paro_calib_apply_network):
 * nccl-tests' bus bandwidth of a ring is the rate at which each rank's ring link moves
 * data (the bus factor converts the array size into bytes per link), which is what the
 * topology calls a GPU's one-direction bandwidth. So fabric.bandwidth = intra bus
 * bandwidth, and nics.bandwidth = inter bus bandwidth x GPUs per node / NICs per node,
 * which makes paro_topology_inter_Bps (a GPU's NIC share) equal the measured one (the
 * topology's oversubscription still applies on top across leaves, as the measurement
 * is taken inside one leaf). A simulated ring step costs route latency + step_overhead;
 * the measured per-step latencies already include the links', so fabric.latency = 0,
 * step_overhead = intra step latency and nics.latency = inter step latency -
 * step_overhead - network.latency (floored at 0): an intra step then costs the intra
 * step latency, an inter step (inside one leaf) the inter one. */
#include "calib/calib-file.h"

#include <string.h>

#include "yaml/schema.h"

/* PARO_FIELD_ENUM fields are written as ints. */
G_STATIC_ASSERT(sizeof(ParoCollKind) == sizeof(int));
G_STATIC_ASSERT(sizeof(ParoScope) == sizeof(int));

const char *const paro_calib_dtype_names[] = {"bf16", "fp16", "tf32", NULL};
const char *const paro_calib_scope_names[] = {"world", "intra", "inter", NULL};

void paro_calib_clear(ParoCalibration *c)
{
    g_free(c->device);
    g_free(c->path);
    for (int i = 0; i < PARO_NCCL_N_CLASSES; i++)
        paro_nccl_scale_clear(&c->nccl[i]);
    if (c->collectives) {
        for (guint i = 0; i < c->collectives->len; i++)
            g_free(g_array_index(c->collectives, ParoCalibCollective, i).reason);
        g_array_unref(c->collectives);
    }
    memset(c, 0, sizeof *c);
}

static const ParoField compute_fields[] = {
    {"matmul_rate", PARO_FIELD_QUANTITY, PARO_FIELD_REQUIRED | PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(ParoCalibration, matmul_flops), PARO_QUANTITY_FLOP_RATE, NULL, NULL,
     "achieved dense 16-bit GEMM rate on the model's layer shapes", &paro_limit_flop_rate},
    {"matmul_dtype", PARO_FIELD_ENUM, 0, G_STRUCT_OFFSET(ParoCalibration, matmul_dtype), 0,
     paro_calib_dtype_names, NULL, "dtype of the GEMMs behind matmul_rate (default bf16)"},
    {"hbm_bandwidth", PARO_FIELD_QUANTITY, PARO_FIELD_REQUIRED | PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(ParoCalibration, hbm_Bps), PARO_QUANTITY_BANDWIDTH, NULL, NULL,
     "achieved HBM bandwidth (bytes read + written) of an optimizer-like kernel",
     &paro_limit_bandwidth},
};

static gboolean parse_compute(const ParoNode *node, gpointer ptr, gpointer record, GError **error)
{
    ParoCalibration *c = record;
    c->has_compute = TRUE;
    return paro_schema_apply(node, "compute", compute_fields, G_N_ELEMENTS(compute_fields), c, NULL,
                             NULL, error);
}

static const ParoField link_fields[] = {
    {"bus_bandwidth", PARO_FIELD_QUANTITY, PARO_FIELD_REQUIRED | PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(ParoCalibLink, bus_Bps), PARO_QUANTITY_BANDWIDTH, NULL, NULL,
     "per GPU, one direction (inter: the GPU's share of its node's NICs)", &paro_limit_bandwidth},
    {"step_latency", PARO_FIELD_QUANTITY, PARO_FIELD_REQUIRED | PARO_FIELD_NONNEG,
     G_STRUCT_OFFSET(ParoCalibLink, step_s), PARO_QUANTITY_TIME, NULL, NULL,
     "latency of one ring step: fitted latency / ring steps", &paro_limit_latency},
    {"source", PARO_FIELD_HEADER, 0, 0, 0, NULL, NULL, "the collective fit it comes from"},
};

static gboolean parse_link(const ParoNode *node, gpointer ptr, gpointer record, GError **error)
{
    ParoCalibLink *l = ptr;
    l->present = TRUE;
    return paro_schema_apply(node, "network link", link_fields, G_N_ELEMENTS(link_fields), l, NULL,
                             NULL, error);
}

static const ParoField network_fields[] = {
    {"intra", PARO_FIELD_CUSTOM, 0, G_STRUCT_OFFSET(ParoCalibration, intra), 0, NULL, parse_link,
     "inside a node: replaces fabric bandwidth and the per-step overhead"},
    {"inter", PARO_FIELD_CUSTOM, 0, G_STRUCT_OFFSET(ParoCalibration, inter), 0, NULL, parse_link,
     "between nodes: replaces the NIC bandwidth and latency"},
};

static gboolean parse_network(const ParoNode *node, gpointer ptr, gpointer record, GError **error)
{
    return paro_schema_apply(node, "network", network_fields, G_N_ELEMENTS(network_fields), record,
                             NULL, NULL, error);
}

static const ParoField nccl_scale_fields[] = {
    {"latency_scale", PARO_FIELD_DOUBLE, PARO_FIELD_REQUIRED | PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(ParoNcclScale, latency_scale), 0, NULL, NULL, "NCCL's latency x this"},
    {"bandwidth_scale", PARO_FIELD_DOUBLE, PARO_FIELD_REQUIRED | PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(ParoNcclScale, bandwidth_scale), 0, NULL, NULL, "its bandwidth x this"},
    {"points", PARO_FIELD_INT, PARO_FIELD_NONNEG, G_STRUCT_OFFSET(ParoNcclScale, points), 0, NULL,
     NULL, "rows fitted"},
    {"fit", PARO_FIELD_HEADER, 0, 0, 0, NULL, NULL, "median_error, max_error"},
    {"source", PARO_FIELD_STRING, 0, G_STRUCT_OFFSET(ParoNcclScale, source), 0, NULL, NULL,
     "the first table fitted"},
};

static gboolean parse_nccl_scale(const ParoNode *node, gpointer ptr, gpointer record,
                                 GError **error)
{
    ParoNcclScale *sc = ptr;
    sc->present = TRUE;
    return paro_schema_apply(node, "nccl scale", nccl_scale_fields, G_N_ELEMENTS(nccl_scale_fields),
                             sc, NULL, NULL, error);
}

static const ParoField nccl_fields[] = {
    {"single_node", PARO_FIELD_CUSTOM, 0, G_STRUCT_OFFSET(ParoCalibration, nccl[0]), 0, NULL,
     parse_nccl_scale, "communicators on one node"},
    {"multi_node", PARO_FIELD_CUSTOM, 0, G_STRUCT_OFFSET(ParoCalibration, nccl[1]), 0, NULL,
     parse_nccl_scale, "communicators across nodes"},
};

static gboolean parse_nccl(const ParoNode *node, gpointer ptr, gpointer record, GError **error)
{
    return paro_schema_apply(node, "nccl", nccl_fields, G_N_ELEMENTS(nccl_fields), record, NULL,
                             NULL, error);
}

static const ParoField line_fields[] = {
    {"latency", PARO_FIELD_QUANTITY, PARO_FIELD_REQUIRED | PARO_FIELD_NONNEG,
     G_STRUCT_OFFSET(ParoCalibLine, latency_s), PARO_QUANTITY_TIME, NULL, NULL, "time at size 0",
     &paro_limit_latency},
    {"bus_bandwidth", PARO_FIELD_QUANTITY, PARO_FIELD_REQUIRED | PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(ParoCalibLine, bus_Bps), PARO_QUANTITY_BANDWIDTH, NULL, NULL,
     "B_bus in t = latency + S * busfactor / B_bus", &paro_limit_bandwidth},
};

static gboolean parse_line(const ParoNode *node, gpointer ptr, gpointer record, GError **error)
{
    return paro_schema_apply(node, "segment", line_fields, G_N_ELEMENTS(line_fields), ptr, NULL,
                             NULL, error);
}

static const ParoField quality_fields[] = {
    {"r2", PARO_FIELD_DOUBLE, 0, G_STRUCT_OFFSET(ParoCalibCollective, r2), 0, NULL, NULL,
     "weighted coefficient of determination"},
    {"median_error", PARO_FIELD_DOUBLE, PARO_FIELD_NONNEG,
     G_STRUCT_OFFSET(ParoCalibCollective, median_error), 0, NULL, NULL, "median relative error"},
    {"max_error", PARO_FIELD_DOUBLE, PARO_FIELD_NONNEG,
     G_STRUCT_OFFSET(ParoCalibCollective, max_error), 0, NULL, NULL, "worst relative error"},
};

static gboolean parse_quality(const ParoNode *node, gpointer ptr, gpointer record, GError **error)
{
    /* The piecewise block's own quality is documentation: read into a scratch record. */
    ParoCalibCollective scratch = {0};
    return paro_schema_apply(node, "fit", quality_fields, G_N_ELEMENTS(quality_fields),
                             ptr ? ptr : &scratch, NULL, NULL, error);
}

static const ParoField piecewise_fields[] = {
    {"break", PARO_FIELD_QUANTITY, PARO_FIELD_REQUIRED | PARO_FIELD_NONNEG,
     G_STRUCT_OFFSET(ParoCalibCollective, break_bytes), PARO_QUANTITY_BYTES, NULL, NULL,
     "largest size of the lower segment"},
    {"f_test_p", PARO_FIELD_HEADER, 0, 0, 0, NULL, NULL, "p-value of the F-test"},
    {"below", PARO_FIELD_CUSTOM, PARO_FIELD_REQUIRED, G_STRUCT_OFFSET(ParoCalibCollective, below),
     0, NULL, parse_line, "segment for sizes up to break"},
    {"above", PARO_FIELD_CUSTOM, PARO_FIELD_REQUIRED, G_STRUCT_OFFSET(ParoCalibCollective, above),
     0, NULL, parse_line, "segment for larger sizes"},
    {"fit", PARO_FIELD_HEADER, 0, 0, 0, NULL, NULL, "quality of the two segments together"},
};

static gboolean parse_piecewise(const ParoNode *node, gpointer ptr, gpointer record, GError **error)
{
    ParoCalibCollective *cc = record;
    cc->piecewise = TRUE;
    return paro_schema_apply(node, "piecewise", piecewise_fields, G_N_ELEMENTS(piecewise_fields),
                             cc, NULL, NULL, error);
}

static const ParoField collective_fields[] = {
    {"op", PARO_FIELD_ENUM, PARO_FIELD_REQUIRED, G_STRUCT_OFFSET(ParoCalibCollective, op), 0,
     paro_coll_kind_names, NULL,
     "allreduce, allgather, reducescatter, broadcast, sendrecv, alltoall"},
    {"scope", PARO_FIELD_ENUM, PARO_FIELD_REQUIRED, G_STRUCT_OFFSET(ParoCalibCollective, scope), 0,
     paro_calib_scope_names, NULL, "world, intra or inter"},
    {"ranks", PARO_FIELD_INT, PARO_FIELD_REQUIRED | PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(ParoCalibCollective, ranks), 0, NULL, NULL, "ranks per communicator"},
    {"nodes", PARO_FIELD_INT, PARO_FIELD_NONNEG, G_STRUCT_OFFSET(ParoCalibCollective, nodes), 0,
     NULL, NULL, "nodes they span (0: unknown)"},
    {"points", PARO_FIELD_INT, PARO_FIELD_NONNEG, G_STRUCT_OFFSET(ParoCalibCollective, points), 0,
     NULL, NULL, "measured sizes"},
    {"fitted", PARO_FIELD_BOOL, 0, G_STRUCT_OFFSET(ParoCalibCollective, fitted), 0, NULL, NULL,
     "false for a group that could not be fitted"},
    {"reason", PARO_FIELD_STRING, 0, G_STRUCT_OFFSET(ParoCalibCollective, reason), 0, NULL, NULL,
     "why it was not fitted"},
    {"latency", PARO_FIELD_QUANTITY, PARO_FIELD_NONNEG,
     G_STRUCT_OFFSET(ParoCalibCollective, fit.latency_s), PARO_QUANTITY_TIME, NULL, NULL, "alpha"},
    {"bus_bandwidth", PARO_FIELD_QUANTITY, PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(ParoCalibCollective, fit.bus_Bps), PARO_QUANTITY_BANDWIDTH, NULL, NULL,
     "B_bus"},
    {"fit", PARO_FIELD_CUSTOM, 0, 0, 0, NULL, parse_quality, "r2, median_error, max_error"},
    {"piecewise", PARO_FIELD_CUSTOM, 0, 0, 0, NULL, parse_piecewise, "size-dependent model"},
};

static gboolean parse_collectives(const ParoNode *node, gpointer ptr, gpointer record,
                                  GError **error)
{
    ParoCalibration *c = record;
    if (!paro_schema_expect_kind(node, PARO_NODE_SEQUENCE, "collectives", error))
        return FALSE;
    for (guint i = 0; i < node->values->len; i++) {
        const ParoNode *item = g_ptr_array_index(node->values, i);
        ParoCalibCollective cc = {.fitted = TRUE};
        guint64 present = 0;
        gboolean ok = paro_schema_apply(item, "collective", collective_fields,
                                        G_N_ELEMENTS(collective_fields), &cc, &cc, &present, error);
        /* fields 7 and 8 are latency and bus_bandwidth */
        if (ok && cc.fitted && (present & (3u << 7)) != (3u << 7)) {
            paro_node_error(error, item, PARO_CONFIG_ERROR_MISSING_KEY,
                            "a fitted collective needs 'latency' and 'bus_bandwidth'");
            ok = FALSE;
        }
        if (!ok) {
            g_free(cc.reason);
            return FALSE;
        }
        /* scope: world is ParoScope GLOBAL (0), intra and inter keep their values */
        g_array_append_val(c->collectives, cc);
    }
    return TRUE;
}

static const ParoField calibration_fields[] = {
    {"kind", PARO_FIELD_HEADER, 0, 0, 0, NULL, NULL, "calibration"},
    {"schema", PARO_FIELD_HEADER, 0, 0, 0, NULL, NULL, "1"},
    {"device", PARO_FIELD_STRING, PARO_FIELD_REQUIRED, G_STRUCT_OFFSET(ParoCalibration, device), 0,
     NULL, NULL, "the GPU measured"},
    {"description", PARO_FIELD_HEADER, 0, 0, 0, NULL, NULL, "free text: date, versions, logs"},
    {"compute", PARO_FIELD_CUSTOM, 0, 0, 0, NULL, parse_compute, "measured compute figures"},
    {"network", PARO_FIELD_CUSTOM, 0, 0, 0, NULL, parse_network,
     "link figures derived from collective fits"},
    {"nccl", PARO_FIELD_CUSTOM, 0, 0, 0, NULL, parse_nccl,
     "scales of NCCL's model (parosim calibrate --topology)"},
    {"collectives", PARO_FIELD_CUSTOM, 0, 0, 0, NULL, parse_collectives,
     "alpha-beta fit per (op, scope, ranks)"},
};

gboolean paro_calib_from_node(const ParoNode *node, ParoCalibration *c, GError **error)
{
    paro_calib_clear(c);
    c->collectives = g_array_new(FALSE, FALSE, sizeof(ParoCalibCollective));
    if (!paro_schema_check_header(node, "calibration", error) ||
        !paro_schema_apply(node, "calibration", calibration_fields,
                           G_N_ELEMENTS(calibration_fields), c, c, NULL, error)) {
        paro_calib_clear(c);
        return FALSE;
    }
    c->present = TRUE;
    c->path = g_strdup(node->source);
    return TRUE;
}

gboolean paro_calib_load(const char *path, ParoCalibration *c, GError **error)
{
    g_autoptr(ParoNode) root = paro_yaml_load_file(path, error);
    return root != NULL && paro_calib_from_node(root, c, error);
}

gboolean paro_calib_apply_network(const ParoCalibration *c, ParoTopology *t)
{
    if (!c->present || (!c->intra.present && !c->inter.present))
        return FALSE;
    if (c->intra.present) {
        t->fabric.bandwidth_Bps = c->intra.bus_Bps;
        t->fabric.latency_s = 0;
        t->nccl.step_overhead_s = c->intra.step_s;
    }
    if (c->inter.present) {
        t->nics.bandwidth_Bps =
            c->inter.bus_Bps * (double)t->gpus_per_node / (double)MAX(t->nics.count, 1);
        t->nics.latency_s =
            MAX(0.0, c->inter.step_s - t->nccl.step_overhead_s - t->network.latency_s);
    }
    return TRUE;
}

void paro_calib_apply(const ParoCalibration *c, ParoCollModel model, ParoTopology *t)
{
    if (!c->present)
        return;
    if (model == PARO_COLL_MODEL_NCCL)
        paro_calib_apply_nccl(c->nccl, t);
    else
        paro_calib_apply_network(c, t);
}
