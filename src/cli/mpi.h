/* SPDX-License-Identifier: MIT */
/* Commands over several processes with MPI: under mpirun each rank of a sweep runs its
 * share of the points (point % size == rank), each rank of a plan its share of the
 * configurations (plan/plan.h, ParoPlanRequest.rank), and rank 0 gathers the ranks' texts
 * and writes the one output, identical to a single process's. Without an MPI build, or when
 * not started by mpirun, these are no-ops for a single rank. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
    int rank, size;
    gboolean active; /* MPI_Init was called */
} ParoMpi;

/** paro_mpi_init: initialises MPI when built with it and launched by mpirun (its
 * environment says so); else rank 0 of 1. */
gboolean paro_mpi_init(ParoMpi *mpi, GError **error);

/** paro_mpi_all_ok: TRUE when @ok on every rank. */
gboolean paro_mpi_all_ok(const ParoMpi *mpi, gboolean ok);

/** paro_mpi_first: the lowest rank where @mine is TRUE, or -1 where it is on none (the
 * one rank that reports what failed). */
int paro_mpi_first(const ParoMpi *mpi, gboolean mine);

/** paro_mpi_sum: the sum of @value over the ranks. */
guint64 paro_mpi_sum(const ParoMpi *mpi, guint64 value);

/**
 * paro_mpi_gather_points:
 * @texts: char* per point, NULL where this rank did not run the point
 * On rank 0, fills the other ranks' points (a point stays NULL if no rank ran it).
 */
gboolean paro_mpi_gather_points(const ParoMpi *mpi, GPtrArray *texts, GError **error);

void paro_mpi_finalize(const ParoMpi *mpi);

G_END_DECLS
