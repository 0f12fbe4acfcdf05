/* SPDX-License-Identifier: MIT */
#include "cli/mpi.h"

#include <string.h>

#ifdef PARO_HAVE_MPI
#include <mpi.h>

/* mpirun (Open MPI, or a PMI launcher such as MPICH's or Slurm's) leaves these behind. */
static gboolean launched_by_mpirun(void)
{
    return g_getenv("OMPI_COMM_WORLD_SIZE") || g_getenv("PMI_SIZE") || g_getenv("PMIX_RANK");
}

gboolean paro_mpi_init(ParoMpi *mpi, GError **error)
{
    *mpi = (ParoMpi){0, 1, FALSE};
    if (!launched_by_mpirun())
        return TRUE;
    int provided = 0;
    /* worker threads never call MPI; only the main thread does */
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        g_set_error(error, G_SPAWN_ERROR, G_SPAWN_ERROR_FAILED, "MPI_Init_thread failed");
        return FALSE;
    }
    mpi->active = TRUE;
    MPI_Comm_rank(MPI_COMM_WORLD, &mpi->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mpi->size);
    return TRUE;
}

gboolean paro_mpi_all_ok(const ParoMpi *mpi, gboolean ok)
{
    if (!mpi->active)
        return ok;
    int mine = ok ? 1 : 0, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all == 1;
}

int paro_mpi_first(const ParoMpi *mpi, gboolean mine)
{
    if (!mpi->active)
        return mine ? 0 : -1;
    int rank = mine ? mpi->rank : mpi->size, first = mpi->size;
    MPI_Allreduce(&rank, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return first < mpi->size ? first : -1;
}

guint64 paro_mpi_sum(const ParoMpi *mpi, guint64 value)
{
    if (!mpi->active)
        return value;
    unsigned long long mine = value, sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return (guint64)sum;
}

/* Large buffers go in pieces: MPI counts are ints. */
#define PIECE (1 << 30)

static void send_bytes(const char *data, guint64 n, int to)
{
    for (guint64 off = 0; off < n; off += PIECE)
        MPI_Send(data + off, (int)MIN((guint64)PIECE, n - off), MPI_CHAR, to, 2, MPI_COMM_WORLD);
}

static void recv_bytes(char *data, guint64 n, int from)
{
    for (guint64 off = 0; off < n; off += PIECE)
        MPI_Recv(data + off, (int)MIN((guint64)PIECE, n - off), MPI_CHAR, from, 2, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
}

gboolean paro_mpi_gather_points(const ParoMpi *mpi, GPtrArray *texts, GError **error)
{
    (void)error;
    if (!mpi->active || mpi->size == 1)
        return TRUE;
    guint n = texts->len;
    if (mpi->rank != 0) {
        /* the length of every slot (0 for NULL: a rendered point is never empty), then the
         * concatenated texts */
        g_autofree unsigned long long *lengths = g_new0(unsigned long long, n);
        g_autoptr(GString) all = g_string_new(NULL);
        for (guint i = 0; i < n; i++) {
            const char *t = g_ptr_array_index(texts, i);
            lengths[i] = t ? strlen(t) : 0;
            if (t)
                g_string_append(all, t);
        }
        MPI_Send(lengths, (int)n, MPI_UNSIGNED_LONG_LONG, 0, 1, MPI_COMM_WORLD);
        send_bytes(all->str, all->len, 0);
        return TRUE;
    }
    g_autofree unsigned long long *lengths = g_new0(unsigned long long, n);
    for (int r = 1; r < mpi->size; r++) {
        MPI_Recv(lengths, (int)n, MPI_UNSIGNED_LONG_LONG, r, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        guint64 total = 0;
        for (guint i = 0; i < n; i++)
            total += lengths[i];
        g_autofree char *all = g_malloc(total + 1);
        recv_bytes(all, total, r);
        guint64 off = 0;
        for (guint i = 0; i < n; i++) {
            if (lengths[i] == 0)
                continue;
            g_free(g_ptr_array_index(texts, i));
            g_ptr_array_index(texts, i) = g_strndup(all + off, lengths[i]);
            off += lengths[i];
        }
    }
    return TRUE;
}

void paro_mpi_finalize(const ParoMpi *mpi)
{
    if (mpi->active)
        MPI_Finalize();
}

#else /* no MPI in this build: one process */

gboolean paro_mpi_init(ParoMpi *mpi, GError **error)
{
    (void)error;
    *mpi = (ParoMpi){0, 1, FALSE};
    return TRUE;
}

gboolean paro_mpi_all_ok(const ParoMpi *mpi, gboolean ok)
{
    (void)mpi;
    return ok;
}

int paro_mpi_first(const ParoMpi *mpi, gboolean mine)
{
    (void)mpi;
    return mine ? 0 : -1;
}

guint64 paro_mpi_sum(const ParoMpi *mpi, guint64 value)
{
    (void)mpi;
    return value;
}

gboolean paro_mpi_gather_points(const ParoMpi *mpi, GPtrArray *texts, GError **error)
{
    (void)mpi, (void)texts, (void)error;
    return TRUE;
}

void paro_mpi_finalize(const ParoMpi *mpi)
{
    (void)mpi;
}

#endif
