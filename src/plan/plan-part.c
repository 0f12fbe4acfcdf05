/* SPDX-License-Identifier: MIT */
/* A search split over processes (MPI, cli/mpi.c): each rank's part as text for the one
 * that gathers them, and the parts merged. Numbers travel as their IEEE-754 bits in
 * hexadecimal, so that the gathered rows are the simulated ones bit for bit and the
 * result, paro_plan_finish's, is a single process's to the byte. */
#include "plan/plan.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

void paro_plan_part_clear(ParoPlanPart *part)
{
    g_clear_pointer(&part->rows, g_array_unref);
    part->best = INFINITY;
}

void paro_plan_part_merge(ParoPlanPart *into, const ParoPlanPart *from)
{
    if (into->rows == NULL)
        into->rows = g_array_new(FALSE, FALSE, sizeof(ParoPlanRow));
    if (from->rows != NULL)
        g_array_append_vals(into->rows, from->rows->data, from->rows->len);
    into->best = MIN(into->best, from->best);
}

/* The fields of a row after its strategy, in the order of a line. An enum is stored as an
 * int (checked below), read back only within its names. */
typedef enum { FIELD_I64, FIELD_INT, FIELD_DOUBLE } FieldKind;

typedef struct {
    FieldKind kind;
    size_t offset;
    const char *const *names; /* FIELD_INT: the values allowed, NULL-terminated */
} Field;

static const char *const booleans[] = {"false", "true", NULL};
static const char *const offloads[] = {"none", "optimizer", "parameters", NULL};

G_STATIC_ASSERT(sizeof(ParoPipeSchedule) == sizeof(int));
G_STATIC_ASSERT(sizeof(ParoRecompute) == sizeof(int));
G_STATIC_ASSERT(sizeof(ParoAlgorithm) == sizeof(int));
G_STATIC_ASSERT(sizeof(ParoPlanBound) == sizeof(int));
G_STATIC_ASSERT(sizeof(gboolean) == sizeof(int));
G_STATIC_ASSERT(sizeof(double) == sizeof(guint64));

#define I64(f)                                                                                     \
    {                                                                                              \
        FIELD_I64, offsetof(ParoPlanRow, f), NULL                                                  \
    }
#define INT(f, names)                                                                              \
    {                                                                                              \
        FIELD_INT, offsetof(ParoPlanRow, f), names                                                 \
    }
#define DBL(f)                                                                                     \
    {                                                                                              \
        FIELD_DOUBLE, offsetof(ParoPlanRow, f), NULL                                               \
    }

static const Field fields[] = {
    I64(layout.tp),
    I64(layout.cp),
    I64(layout.ep),
    I64(layout.pp),
    INT(layout.schedule, paro_pipe_schedule_names),
    I64(layout.virtual_stages),
    INT(layout.layered, booleans),
    INT(layout.uneven, booleans),
    INT(layout.sequence_parallel, booleans),
    INT(layout.recompute, paro_recompute_names),
    I64(layout.recompute_every),
    INT(layout.offload, offloads),
    I64(group),
    I64(micro_batch),
    I64(accumulation),
    INT(algorithm, paro_algorithm_names),
    DBL(batch_tokens),
    DBL(step_s),
    DBL(compute_bound_s),
    DBL(bubble_bound_s),
    DBL(floor_s),
    DBL(steps),
    DBL(tokens),
    DBL(train_s),
    DBL(gpu_hours),
    DBL(peak_bytes),
    INT(fits, booleans),
    INT(tight, booleans),
    INT(bound, paro_plan_bound_names),
};

static guint64 bits_of(double x)
{
    guint64 u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static double double_of(guint64 u)
{
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

static guint strategy_index(const ParoStrategy *s)
{
    for (guint i = 0; i < paro_strategy_n_all(); i++)
        if (paro_strategy_get(i) == s)
            return i;
    g_assert_not_reached();
}

/* "best BITS rows N", then a line a row: its strategy's index and the fields. */
char *paro_plan_part_to_text(const ParoPlanPart *part)
{
    guint n = part->rows ? part->rows->len : 0;
    GString *out = g_string_sized_new(64 + (gsize)n * 400);
    g_string_append_printf(out, "best %" G_GINT64_MODIFIER "x rows %u\n", bits_of(part->best), n);
    for (guint i = 0; i < n; i++) {
        const ParoPlanRow *r = &g_array_index(part->rows, ParoPlanRow, i);
        const char *base = (const char *)r;
        g_string_append_printf(out, "%u", strategy_index(r->strategy));
        for (guint f = 0; f < G_N_ELEMENTS(fields); f++) {
            const void *p = base + fields[f].offset;
            if (fields[f].kind == FIELD_I64)
                g_string_append_printf(out, " %" G_GINT64_FORMAT, *(const gint64 *)p);
            else if (fields[f].kind == FIELD_INT)
                g_string_append_printf(out, " %d", *(const int *)p);
            else
                g_string_append_printf(out, " %" G_GINT64_MODIFIER "x",
                                       bits_of(*(const double *)p));
        }
        g_string_append_c(out, '\n');
    }
    return g_string_free(out, FALSE);
}

/* One number at *p, decimal or @hex, up to a space or the line's end (left at *p). */
static gboolean read_number(const char **p, gboolean hex, gint64 *value, guint64 *bits)
{
    const char *s = *p;
    char *end = NULL;
    if (!g_ascii_isxdigit(*s) && (hex || *s != '-'))
        return FALSE;
    if (hex)
        *bits = g_ascii_strtoull(s, &end, 16);
    else
        *value = g_ascii_strtoll(s, &end, 10);
    if (end == s || (*end != ' ' && *end != '\n'))
        return FALSE;
    *p = end;
    return TRUE;
}

/* The space before a field. */
static gboolean skip_space(const char **p)
{
    return **p == ' ' && (++*p, TRUE);
}

static gboolean malformed(GError **error, guint line)
{
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
                "a plan's part from another rank is malformed at its line %u", line);
    return FALSE;
}

gboolean paro_plan_part_from_text(const char *text, ParoPlanPart *part, GError **error)
{
    *part = (ParoPlanPart){g_array_new(FALSE, FALSE, sizeof(ParoPlanRow)), INFINITY};
    const char *p = text;
    gint64 n = 0, v = 0;
    guint64 u = 0, best = 0;
    if (!g_str_has_prefix(p, "best ") || !(p += 5, read_number(&p, TRUE, &v, &best)) ||
        !g_str_has_prefix(p, " rows ") || !(p += 6, read_number(&p, FALSE, &n, &u)) || n < 0 ||
        *p != '\n')
        return malformed(error, 1);
    p++;
    part->best = double_of(best);
    for (gint64 i = 0; i < n; i++) {
        guint line = (guint)MIN(i + 2, G_MAXUINT);
        ParoPlanRow r;
        memset(&r, 0, sizeof r);
        char *base = (char *)&r;
        if (!read_number(&p, FALSE, &v, &u) || v < 0 || v >= (gint64)paro_strategy_n_all())
            return malformed(error, line);
        r.strategy = paro_strategy_get((guint)v);
        for (guint f = 0; f < G_N_ELEMENTS(fields); f++) {
            void *q = base + fields[f].offset;
            gboolean hex = fields[f].kind == FIELD_DOUBLE;
            if (!skip_space(&p) || !read_number(&p, hex, &v, &u))
                return malformed(error, line);
            if (fields[f].kind == FIELD_I64)
                *(gint64 *)q = v;
            else if (fields[f].kind == FIELD_DOUBLE)
                *(double *)q = double_of(u);
            else if (v < 0 || v >= (gint64)g_strv_length((char **)fields[f].names))
                return malformed(error, line);
            else
                *(int *)q = (int)v;
        }
        if (*p != '\n')
            return malformed(error, line);
        p++;
        g_array_append_val(part->rows, r);
    }
    return *p == '\0' ? TRUE : malformed(error, (guint)MIN(n + 2, G_MAXUINT));
}
