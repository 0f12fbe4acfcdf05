/* SPDX-License-Identifier: MIT */
/* Calibrating NCCL's model on a machine (issue #14, mechanism 7): two scales per class of
 * communicator, one node or several, that multiply the two terms NCCL's model gives a call
 * (coll/nccl.h, paro_nccl_terms): t = latency_scale x latency + transfer / bandwidth_scale.
 * Fitted on any collective's nccl-tests log of the machine, they carry to the others,
 * because the model already knows what differs between them (ring steps, bus factors,
 * algorithms, protocols): what it does not know is how fast this machine's links, NICs
 * and software run, which is the same for every collective. */
#pragma once

#include "calib/calib-log.h"
#include "topo/topology.h"

G_BEGIN_DECLS

typedef enum { PARO_NCCL_CLASS_ONE_NODE, PARO_NCCL_CLASS_NODES, PARO_NCCL_N_CLASSES } ParoNcclClass;
extern const char *const paro_nccl_class_names[]; /* "single_node", "multi_node", NULL */

typedef struct {
    gboolean present;
    double latency_scale;   /* NCCL's latency x this */
    double bandwidth_scale; /* NCCL's bandwidth (after the launch share) x this */
    gint64 points;          /* rows fitted */
    double median_error;    /* of the calibrated model on those rows */
    double max_error;
    char *source; /* "allreduce 16 ranks on 2 nodes" (the first table of the class) */
} ParoNcclScale;

/** paro_nccl_scale_clear: frees @s's source and zeroes it. */
void paro_nccl_scale_clear(ParoNcclScale *s);

/**
 * paro_calib_fit_nccl:
 * @logs: ParoCalibLog*; @topology: the machine's datasheet topology (its scales unused)
 * Fits the two scales of each class from every collective row of @logs with a size above 0
 * (NCCL's choice of algorithm, Ring where a log says it was forced): weighted least squares
 * of t = a L + g X (weights 1/t^2, so relative error), latency_scale = a, bandwidth_scale =
 * 1/g. A term that dominates no row (a log of large sizes only says nothing of latency)
 * keeps NCCL's figure (scale 1) and the other is fitted alone, as when the pair comes out
 * with a term at or below 0. A class without rows is left absent. Errors: PARO_CALIB_ERROR_DATA
 * when no log has a collective row.
 */
gboolean paro_calib_fit_nccl(GPtrArray *logs, const ParoTopology *topology,
                             ParoNcclScale out[PARO_NCCL_N_CLASSES], GError **error);

/** paro_calib_apply_nccl: puts @scales into @t's nccl.latency_scale / bandwidth_scale. */
void paro_calib_apply_nccl(const ParoNcclScale scales[PARO_NCCL_N_CLASSES], ParoTopology *t);

G_END_DECLS
