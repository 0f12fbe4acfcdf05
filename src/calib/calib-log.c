/* SPDX-License-Identifier: MIT */
/* Reading nccl-tests and paro-harness logs line by line. The '#' header lines set the
 * context of the table that follows (tool, device, versions, date, the collective, its
 * scope and ranks); data lines, those whose first field is a number, are rows of the
 * current table. nccl-tests has printed its collective tables with and without the redop
 * and root columns over the years, so a row is read from the right: the last eight
 * fields (or four, without the in-place half) are time, algbw, busbw and #wrong, and
 * what precedes them must be size, count, type and up to two more. */
#include "calib/calib-log.h"

#include <math.h>
#include <string.h>

#include "core/error.h"
#include "core/files.h"
#include "core/limits.h"

typedef enum { SECTION_NONE, SECTION_COLL, SECTION_GEMM, SECTION_MEM } Section;

typedef struct {
    const char *label;
    ParoCalibLog *log;
    Section section; /* harness subcommand; COLL once an nccl-tests header is seen */
    gboolean harness;
    int op;              /* of the table being described; -1 unknown */
    int op_hint;         /* last collective named by a command line */
    gboolean row_fields; /* the collective row being read is ambiguous (8 fields) */
    int scope;
    gint64 ranks_given;   /* "ranks per communicator" (harness) or nThread x nGpus */
    gint64 rank_lines;    /* "#  Rank N Group" lines (nccl-tests) */
    gint64 thread_gpus;   /* nThread x nGpus: the ranks of one process */
    GHashTable *hosts;    /* distinct hosts or node indices */
    gboolean banner;      /* the context came from "# Collective test starting" */
    ParoCollTable *table; /* receiving rows; NULL until the first row */
    char *nccl_version;
    gint64 corpus_ranks, corpus_nodes; /* "# corpus: ranks: N nodes: M" (corpus.h) */
} Parser;

typedef ParoLogField Field;

void paro_calib_log_free(ParoCalibLog *log)
{
    if (log == NULL)
        return;
    g_free(log->source);
    g_free(log->tool);
    g_free(log->device);
    g_free(log->versions);
    g_free(log->date);
    g_ptr_array_unref(log->colls);
    for (guint i = 0; i < log->gemm->len; i++)
        g_free(g_array_index(log->gemm, ParoGemmRow, i).name);
    g_array_unref(log->gemm);
    g_array_unref(log->mem);
    g_free(log);
}

static void table_free(gpointer p)
{
    ParoCollTable *t = p;
    g_array_unref(t->points);
    g_free(t);
}

int paro_calib_op_from_name(const char *name)
{
    /* all_reduce_perf_mpi, all_reduce_perf, all_reduce, AllReduce -> allreduce */
    g_autofree char *base = g_path_get_basename(name);
    g_autoptr(GString) s = g_string_new(NULL);
    for (const char *p = base; *p; p++)
        if (*p != '_' && *p != '-')
            g_string_append_c(s, g_ascii_tolower(*p));
    if (g_str_has_suffix(s->str, "perfmpi"))
        g_string_truncate(s, s->len - 7);
    else if (g_str_has_suffix(s->str, "perf"))
        g_string_truncate(s, s->len - 4);
    for (int i = 0; paro_coll_kind_names[i]; i++)
        if (strcmp(paro_coll_kind_names[i], s->str) == 0)
            return i;
    return -1;
}

GArray *paro_log_split_fields(const char *line)
{
    GArray *fields = g_array_new(FALSE, FALSE, sizeof(Field));
    const char *p = line;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == '\r')
            p++;
        if (*p == '\0')
            break;
        Field f = {p, (int)(p - line) + 1, 0};
        while (p[f.len] && p[f.len] != ' ' && p[f.len] != '\t' && p[f.len] != '\r')
            f.len++;
        p += f.len;
        g_array_append_val(fields, f);
    }
    return fields;
}

/* Numbers in logs are short: a field of a million digits is not a measurement. */
#define MAX_NUMBER_CHARS 64

gboolean paro_log_field_number(const ParoLogField *f, double *out)
{
    if (f->len > MAX_NUMBER_CHARS)
        return FALSE;
    g_autofree char *s = g_strndup(f->text, (gsize)f->len);
    char *end = NULL;
    double v = g_ascii_strtod(s, &end);
    if (end == s || *end != '\0' || !isfinite(v))
        return FALSE;
    *out = v;
    return TRUE;
}

/* A field that starts with a digit of any script, or a sign or point and then one. */
static gboolean looks_numeric(const Field *f)
{
    const char *s = f->text, *end = f->text + f->len;
    if (s < end && (*s == '-' || *s == '+' || *s == '.'))
        s++;
    if (s >= end)
        return FALSE;
    gunichar c = g_utf8_get_char_validated(s, end - s);
    return c != (gunichar)-1 && c != (gunichar)-2 && g_unichar_isdigit(c);
}

static gboolean need_number(Parser *p, int line, const Field *f, const char *what,
                            gboolean positive, double *out, GError **error)
{
    if (!paro_log_field_number(f, out)) {
        paro_config_error_set(error, PARO_CONFIG_ERROR_TYPE, p->label, line, f->column,
                              "%s '%.*s%s' is not a number%s", what, MIN(f->len, 40), f->text,
                              f->len > 40 ? "..." : "",
                              f->len > MAX_NUMBER_CHARS ? " (too long to be a measurement)" : "");
        return FALSE;
    }
    if (*out < 0 || (positive && *out == 0)) {
        paro_config_error_set(error, PARO_CONFIG_ERROR_RANGE, p->label, line, f->column,
                              "%s must be %s, got %.*s%s", what,
                              positive ? "positive" : "at least 0", f->len, f->text,
                              p->row_fields ? "; is the row cut short? (read as size count type "
                                              "[redop] [root] time algbw busbw #wrong)"
                                            : "");
        return FALSE;
    }
    return TRUE;
}

/* Limits hold measurements to the one table of bounds that scenarios are held to, so that
 * a time of 1e308 us or 1e-300 us is refused where it is written rather than printed as an
 * error of -inf% or of 38 digits. */
gboolean paro_log_field_within(const char *label, int line, const ParoLogField *f, const char *what,
                               const ParoLimit *limit, double scale, const char *unit,
                               gboolean zero_ok, double value, GError **error)
{
    if ((zero_ok && value == 0) || paro_limit_check(limit, value * scale))
        return TRUE;
    g_autofree char *written =
        unit ? g_strdup_printf("%.*s %s", MIN(f->len, 40), f->text, unit) : NULL;
    g_autofree char *text = paro_limit_describe(limit, what, value * scale, written);
    paro_config_error_set(error, PARO_CONFIG_ERROR_RANGE, label, line, f->column, "%s", text);
    return FALSE;
}

static gboolean need_within(Parser *p, int line, const Field *f, const char *what,
                            const ParoLimit *limit, double scale, const char *unit,
                            gboolean zero_ok, double value, GError **error)
{
    return paro_log_field_within(p->label, line, f, what, limit, scale, unit, zero_ok, value,
                                 error);
}

/* A time in microseconds, as every table of a log prints it. */
static gboolean need_time(Parser *p, int line, const Field *f, const char *what, double value,
                          GError **error)
{
    return need_within(p, line, f, what, &paro_limit_measured_time, 1e-6, "us", FALSE, value,
                       error);
}

/* A size in bytes: nccl-tests prints rows of 0 bytes where a count rounds to nothing. */
static gboolean need_size(Parser *p, int line, const Field *f, const char *what, double value,
                          GError **error)
{
    return need_within(p, line, f, what, &paro_limit_bytes, 1, "B", TRUE, value, error);
}

/* #wrong: "N/A" (in place without check), a count (0 = passed), or old versions' float
 * error; a nonzero count means the results were wrong and the row must not be used. */
static gboolean check_wrong(Parser *p, int line, const Field *f, GError **error)
{
    double v;
    if (f->len == 3 && strncmp(f->text, "N/A", 3) == 0)
        return TRUE;
    if (!paro_log_field_number(f, &v)) {
        paro_config_error_set(error, PARO_CONFIG_ERROR_TYPE, p->label, line, f->column,
                              "#wrong '%.*s' is neither a count nor N/A", f->len, f->text);
        return FALSE;
    }
    gboolean is_count =
        memchr(f->text, '.', (gsize)f->len) == NULL && memchr(f->text, 'e', (gsize)f->len) == NULL;
    if (is_count && v > 0) {
        paro_config_error_set(error, PARO_CONFIG_ERROR_RANGE, p->label, line, f->column,
                              "%.*s wrong results: a log that failed its check must not be used",
                              f->len, f->text);
        return FALSE;
    }
    return TRUE;
}

static gboolean coll_row(Parser *p, int line, GArray *fs, GError **error)
{
    int nf = (int)fs->len;
    gboolean in_place = nf >= 11;
    int lead = nf - (in_place ? 8 : 4);
    if (lead < 3 || lead > 5) {
        const Field *last = &g_array_index(fs, Field, nf - 1);
        paro_config_error_set(error, PARO_CONFIG_ERROR_SYNTAX, p->label, line, last->column,
                              "a collective row has 7 to 9 fields (out of place) or 11 to 13 "
                              "(both halves): size count type [redop] [root] time algbw busbw "
                              "#wrong ...; got %d",
                              nf);
        return FALSE;
    }
    if (p->table == NULL) {
        if (p->op < 0) {
            paro_config_error_set(error, PARO_CONFIG_ERROR_REFERENCE, p->label, line, 1,
                                  "no collective is named before this table (a '# Collective "
                                  "test starting:' line or a command running all_reduce_perf, "
                                  "all_gather_perf, reduce_scatter_perf, broadcast_perf, "
                                  "sendrecv_perf or alltoall_perf)");
            return FALSE;
        }
        ParoCollTable *t = g_new0(ParoCollTable, 1);
        t->op = (ParoCollKind)p->op;
        t->scope = (ParoScope)p->scope;
        /* The harness says how many ranks each communicator has; nccl-tests lists one
         * "Rank" line per rank (all processes), else one process drives nThread x nGpus. */
        t->ranks = p->ranks_given > 0  ? p->ranks_given
                   : p->rank_lines > 0 ? p->rank_lines
                                       : MAX(p->thread_gpus, 1);
        gint64 hosts = g_hash_table_size(p->hosts);
        t->nodes = t->scope == PARO_SCOPE_INTRA   ? 1
                   : t->scope == PARO_SCOPE_INTER ? t->ranks
                                                  : hosts;
        /* a corpus file's own counts win: sources print some of the Rank lines, or none */
        if (p->corpus_ranks > 0) {
            t->ranks = p->corpus_ranks;
            t->nodes = p->corpus_nodes;
        }
        t->points = g_array_new(FALSE, FALSE, sizeof(ParoCollPoint));
        t->line = line;
        g_ptr_array_add(p->log->colls, t);
        p->table = t;
    }
    const Field *f = (const Field *)fs->data;
    ParoCollPoint pt = {.inplace_us = NAN, .line = line};
    /* 8 fields read as "size count type redop time algbw busbw #wrong" (old nccl-tests);
     * a 9-field row cut before #wrong reads the same, its root -1 as the time */
    p->row_fields = nf == 8;
    double busbw;
    if (!need_number(p, line, &f[0], "size", FALSE, &pt.bytes, error) ||
        !need_number(p, line, &f[lead], "time", TRUE, &pt.time_us, error) ||
        !need_number(p, line, &f[lead + 2], "busbw", FALSE, &busbw, error) ||
        !check_wrong(p, line, &f[lead + 3], error))
        return FALSE;
    p->row_fields = FALSE;
    /* busbw is 0.00 where the time dwarfs the size (8 B in 20 us) */
    if (!need_size(p, line, &f[0], "size", pt.bytes, error) ||
        !need_time(p, line, &f[lead], "time", pt.time_us, error) ||
        !need_within(p, line, &f[lead + 2], "busbw", &paro_limit_bandwidth, 1e9, "GB/s", TRUE,
                     busbw, error))
        return FALSE;
    pt.busbw_GBps = busbw;
    if (in_place &&
        (!need_number(p, line, &f[lead + 4], "in-place time", TRUE, &pt.inplace_us, error) ||
         !need_time(p, line, &f[lead + 4], "in-place time", pt.inplace_us, error) ||
         !check_wrong(p, line, &f[lead + 7], error)))
        return FALSE;
    g_array_append_val(p->table->points, pt);
    return TRUE;
}

/* What the harness measures: a row naming anything else was silently never used. */
static const char *const gemm_dtypes[] = {"bf16", "fp16", "tf32", "fp32", "fp8", "fp8fast", NULL};
static const char *const mem_ops[] = {"adam", "copy", "memcpy", "h2d", "d2h", NULL};

static gboolean known_word(Parser *p, int line, const Field *f, const char *what,
                           const char *const *known, GError **error)
{
    for (int i = 0; known[i]; i++)
        if ((gsize)f->len == strlen(known[i]) && strncmp(f->text, known[i], (gsize)f->len) == 0)
            return TRUE;
    g_autofree char *list = g_strjoinv(", ", (char **)known);
    paro_config_error_set(error, PARO_CONFIG_ERROR_RANGE, p->label, line, f->column,
                          "unknown %s '%.*s' (known: %s)", what, MIN(f->len, 40), f->text, list);
    return FALSE;
}

static gboolean gemm_row(Parser *p, int line, GArray *fs, GError **error)
{
    const Field *f = (const Field *)fs->data;
    if (fs->len < 8) {
        paro_config_error_set(error, PARO_CONFIG_ERROR_SYNTAX, p->label, line, 1,
                              "a gemm row reads M N K dtype time(us) TFLOP/s layout name ...; "
                              "got %u fields",
                              fs->len);
        return FALSE;
    }
    double m, n, k;
    ParoGemmRow r = {.line = line};
    if (!need_number(p, line, &f[0], "M", TRUE, &m, error) ||
        !need_number(p, line, &f[1], "N", TRUE, &n, error) ||
        !need_number(p, line, &f[2], "K", TRUE, &k, error) ||
        !need_number(p, line, &f[4], "time", TRUE, &r.time_us, error) ||
        !need_time(p, line, &f[4], "time", r.time_us, error))
        return FALSE;
    for (guint i = 8; i < fs->len; i++)
        if (f[i].len == 12 && strncmp(f[i].text, "CHECK-FAILED", 12) == 0) {
            paro_config_error_set(error, PARO_CONFIG_ERROR_RANGE, p->label, line, f[i].column,
                                  "this GEMM failed its check and must not be used");
            return FALSE;
        }
    /* dimensions are counts: whole, and small enough for an exact gint64 (found by
     * fuzz_nccl_log: 1.3e30 converted to an integer was undefined behaviour) */
    const double dims[] = {m, n, k};
    for (guint i = 0; i < 3; i++)
        if (dims[i] != floor(dims[i]) || dims[i] > 9007199254740992.0) {
            paro_config_error_set(error, PARO_CONFIG_ERROR_RANGE, p->label, line, f[i].column,
                                  "a GEMM dimension must be a whole number below 2^53, got %.*s",
                                  (int)f[i].len, f[i].text);
            return FALSE;
        }
    r.m = (gint64)m, r.n = (gint64)n, r.k = (gint64)k;
    if (!known_word(p, line, &f[3], "GEMM dtype", gemm_dtypes, error))
        return FALSE;
    g_strlcpy(r.dtype, f[3].text, MIN(sizeof r.dtype, (gsize)f[3].len + 1));
    r.name = g_strndup(f[7].text, (gsize)f[7].len);
    g_array_append_val(p->log->gemm, r);
    return TRUE;
}

static gboolean mem_row(Parser *p, int line, GArray *fs, GError **error)
{
    const Field *f = (const Field *)fs->data;
    if (fs->len < 7) {
        paro_config_error_set(error, PARO_CONFIG_ERROR_SYNTAX, p->label, line, 1,
                              "an hbm/h2d row reads size op bytes time(us) bw nbuf #wrong ...; "
                              "got %u fields",
                              fs->len);
        return FALSE;
    }
    ParoMemRow r = {.line = line};
    if (!need_number(p, line, &f[0], "size", TRUE, &r.size, error) ||
        !need_number(p, line, &f[2], "bytes", TRUE, &r.bytes, error) ||
        !need_number(p, line, &f[3], "time", TRUE, &r.time_us, error) ||
        !check_wrong(p, line, &f[6], error) || !need_size(p, line, &f[0], "size", r.size, error) ||
        !need_size(p, line, &f[2], "bytes", r.bytes, error) ||
        !need_time(p, line, &f[3], "time", r.time_us, error))
        return FALSE;
    if (!known_word(p, line, &f[1], "memory op", mem_ops, error))
        return FALSE;
    g_strlcpy(r.op, f[1].text, MIN(sizeof r.op, (gsize)f[1].len + 1));
    g_array_append_val(p->log->mem, r);
    return TRUE;
}

/* A new table context: everything learnt about the previous one is forgotten. */
static void new_context(Parser *p, int op, gboolean banner)
{
    p->op = op;
    p->scope = PARO_SCOPE_GLOBAL;
    p->ranks_given = 0;
    p->rank_lines = 0;
    p->thread_gpus = 0;
    g_hash_table_remove_all(p->hosts);
    p->banner = banner;
    p->table = NULL;
}

/* The value after "key" in a header line, up to the next double space. */
static char *header_value(const char *line, const char *key)
{
    const char *at = strstr(line, key);
    if (at == NULL)
        return NULL;
    at += strlen(key);
    while (*at == ' ')
        at++;
    const char *end = strstr(at, "  ");
    return g_strstrip(end ? g_strndup(at, (gsize)(end - at)) : g_strdup(at));
}

/* A count in a header ("nGpus 8", "ranks per communicator: 16"): 0, meaning unknown, when
 * it is not a number from 1 to 2^24, so that a garbled header cannot overflow the products
 * made of it (found by fuzz_nccl_log: nThread 2^63 - 1 x nGpus 2). */
static gint64 header_count(const char *text)
{
    gint64 v = g_ascii_strtoll(text, NULL, 10);
    return v >= 1 && v <= (1 << 24) ? v : 0;
}

/* "# corpus: KEY: VALUE" lines of validation/nccl-corpus: what the source says that the
 * table does not (calib-log.h). */
static gboolean corpus_line(Parser *p, int line_no, const char *line, GError **error)
{
    const char *rest = line + strlen("# corpus:");
    while (*rest == ' ')
        rest++;
    if (g_str_has_prefix(rest, "ranks:")) {
        /* the counts size the predicted system: nodes and GPUs a node within the limits a
         * topology is held to (a node of 2^24 GPUs would be a graph of 2^48 links) */
        const char *ranks = strstr(rest, "ranks:") + strlen("ranks:");
        const char *nodes = strstr(rest, "nodes:");
        nodes = nodes ? nodes + strlen("nodes:") : NULL;
        while (*ranks == ' ')
            ranks++;
        while (nodes && *nodes == ' ')
            nodes++;
        gint64 r = g_ascii_strtoll(ranks, NULL, 10),
               n = nodes ? g_ascii_strtoll(nodes, NULL, 10) : 0;
        if (r < 1 || n < 1 || r % n != 0) {
            paro_config_error_set(error, PARO_CONFIG_ERROR_RANGE, p->label, line_no, 1,
                                  "'# corpus: ranks: N nodes: M' needs whole counts of 1 or "
                                  "more, N a multiple of M");
            return FALSE;
        }
        const ParoLimit *limit = &paro_limit_nodes;
        const char *at = nodes, *what = "nodes";
        double value = (double)n;
        if (paro_limit_check(limit, value)) {
            limit = &paro_limit_gpus_per_node;
            at = ranks, what = "ranks per node", value = (double)(r / n);
        }
        if (!paro_limit_check(limit, value)) {
            g_autofree char *text = paro_limit_describe(limit, what, value, NULL);
            paro_config_error_set(error, PARO_CONFIG_ERROR_RANGE, p->label, line_no,
                                  (int)(at - line) + 1, "%s", text);
            return FALSE;
        }
        p->corpus_ranks = r;
        p->corpus_nodes = n;
    } else if (g_str_has_prefix(rest, "op:")) {
        g_autofree char *name = header_value(rest, "op:");
        int op = paro_calib_op_from_name(name);
        if (op < 0) {
            paro_config_error_set(error, PARO_CONFIG_ERROR_REFERENCE, p->label, line_no, 1,
                                  "unknown collective '%s' in '# corpus: op:'", name);
            return FALSE;
        }
        p->op_hint = op;
        if (p->section == SECTION_NONE) { /* a table without nccl-tests' own header */
            p->section = SECTION_COLL;
            new_context(p, op, FALSE);
        }
    } else if (g_str_has_prefix(rest, "algorithm:")) {
        g_autofree char *a = header_value(rest, "algorithm:");
        p->log->ring_forced = g_str_has_prefix(a, "ring-forced");
    }
    return TRUE;
}

static gboolean header_line(Parser *p, int line_no, const char *line, GError **error)
{
    ParoCalibLog *log = p->log;
    g_autofree char *v = NULL;
    if (g_str_has_prefix(line, "# corpus:"))
        return corpus_line(p, line_no, line, error);
    if ((v = header_value(line, "# paro-harness"))) {
        g_autofree char *ver = g_strndup(v, strcspn(v, " "));
        g_autofree char *sub = header_value(line, "subcommand:");
        g_free(log->tool);
        log->tool = g_strdup_printf("paro-harness %s", ver);
        p->harness = TRUE;
        p->section = sub == NULL                                            ? SECTION_NONE
                     : strcmp(sub, "coll") == 0                             ? SECTION_COLL
                     : strcmp(sub, "gemm") == 0                             ? SECTION_GEMM
                     : (strcmp(sub, "hbm") == 0 || strcmp(sub, "h2d") == 0) ? SECTION_MEM
                                                                            : SECTION_NONE;
        new_context(p, -1, FALSE);
    } else if (g_str_has_prefix(line, "# date:") && log->date == NULL) {
        log->date = header_value(line, "# date:");
    } else if (g_str_has_prefix(line, "# device ") && log->device == NULL) {
        log->device = header_value(line, ": ");
    } else if (g_str_has_prefix(line, "# driver:") && log->versions == NULL) {
        log->versions = g_strstrip(g_strdup(line + 2));
    } else if ((v = header_value(line, "# nccl-tests version"))) {
        g_free(log->tool);
        log->tool = g_strdup_printf("nccl-tests %.*s", (int)strcspn(v, " "), v);
    } else if ((v = header_value(line, "# Collective test starting:"))) {
        g_autofree char *name = g_strndup(v, strcspn(v, " "));
        int op = paro_calib_op_from_name(name);
        if (op < 0) {
            paro_config_error_set(error, PARO_CONFIG_ERROR_REFERENCE, p->label, line_no,
                                  (int)(strstr(line, v) - line) + 1,
                                  "unknown collective '%s' (known: allreduce, allgather, "
                                  "reducescatter, broadcast, sendrecv, alltoall)",
                                  name);
            return FALSE;
        }
        new_context(p, op, TRUE);
        p->section = SECTION_COLL;
        g_autofree char *scope = header_value(line, "scope:");
        if (scope && strcmp(scope, "intra") == 0)
            p->scope = PARO_SCOPE_INTRA;
        else if (scope && strcmp(scope, "inter") == 0)
            p->scope = PARO_SCOPE_INTER;
        g_autofree char *ranks = header_value(line, "ranks per communicator:");
        if (ranks)
            p->ranks_given = header_count(ranks);
    } else if (g_str_has_prefix(line, "# nThread")) {
        if (!(p->banner && p->table == NULL))
            new_context(p, p->op_hint, FALSE);
        if (!p->harness && log->tool == NULL)
            log->tool = g_strdup("nccl-tests");
        p->section = SECTION_COLL;
        gint64 threads = 1, gpus = 1;
        g_autofree char *t = header_value(line, "nThread");
        g_autofree char *g = header_value(line, "nGpus");
        if (t)
            threads = header_count(t);
        if (g)
            gpus = header_count(g);
        p->thread_gpus = threads * gpus; /* each below 2^24: no overflow */
    } else if (g_str_has_prefix(line, "#  Rank") || g_str_has_prefix(line, "#   Rank")) {
        g_auto(GStrv) w = g_strsplit_set(line, " ", -1);
        const char *host = NULL, *node = NULL;
        for (int i = 0; w[i] && w[i + 1]; i++) {
            if (strcmp(w[i], "on") == 0 && host == NULL)
                for (int j = i + 1; w[j] && !host; j++)
                    host = *w[j] ? w[j] : NULL;
            if (strcmp(w[i], "node") == 0 && node == NULL)
                node = w[i + 1];
        }
        if (strstr(line, " Pid ") && host) {
            p->rank_lines++;
            if (!p->harness) /* the harness numbers its nodes instead */
                g_hash_table_add(p->hosts, g_strdup(host));
            const char *dev = strchr(line, ']');
            if (dev && log->device == NULL)
                log->device = g_strstrip(g_strdup(dev + 1));
        } else if (node && p->harness) {
            g_hash_table_add(p->hosts, g_strdup(node));
        }
    } else if (strstr(line, "Out of bounds values") && strstr(line, "FAILED")) {
        paro_config_error_set(error, PARO_CONFIG_ERROR_RANGE, p->label, line_no, 1,
                              "the run reports out-of-bounds values: a log that failed its check "
                              "must not be used");
        return FALSE;
    }
    return TRUE;
}

/* A command line naming an nccl-tests binary sets the collective of the next table. */
static void note_command(Parser *p, const char *line)
{
    g_auto(GStrv) words = g_strsplit_set(line, " \t", -1);
    for (int i = 0; words[i]; i++)
        if (strstr(words[i], "_perf")) {
            int op = paro_calib_op_from_name(words[i]);
            if (op >= 0)
                p->op_hint = op;
        }
    if (g_str_has_prefix(line, "NCCL version ") && p->nccl_version == NULL)
        p->nccl_version = g_strstrip(g_strdup(line + 13));
}

ParoCalibLog *paro_calib_log_parse(const char *text, const char *label, GError **error)
{
    g_return_val_if_fail(text != NULL && label != NULL, NULL);
    g_autoptr(ParoCalibLog) log = g_new0(ParoCalibLog, 1);
    log->source = g_strdup(label);
    log->colls = g_ptr_array_new_with_free_func(table_free);
    log->gemm = g_array_new(FALSE, FALSE, sizeof(ParoGemmRow));
    log->mem = g_array_new(FALSE, FALSE, sizeof(ParoMemRow));
    Parser p = {.label = label, .log = log, .op = -1, .op_hint = -1};
    p.hosts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    gboolean ok = TRUE;
    for (int i = 0; ok && lines[i]; i++) {
        const char *line = lines[i];
        if (line[0] == '#') {
            ok = header_line(&p, i + 1, line, error);
            continue;
        }
        g_autoptr(GArray) fs = paro_log_split_fields(line);
        double first;
        if (fs->len == 0 || !paro_log_field_number(&g_array_index(fs, Field, 0), &first)) {
            /* Inside a table, a row that starts like a number but is not one is a broken
             * measurement (non-ASCII digits, a million digits), not prose to skip. */
            if (fs->len > 0 && p.section != SECTION_NONE &&
                looks_numeric(&g_array_index(fs, Field, 0))) {
                const Field *f0 = &g_array_index(fs, Field, 0);
                paro_config_error_set(error, PARO_CONFIG_ERROR_TYPE, label, i + 1, f0->column,
                                      "a data row whose first field '%.*s%s' is not a number%s",
                                      MIN(f0->len, 40), f0->text, f0->len > 40 ? "..." : "",
                                      f0->len > MAX_NUMBER_CHARS ? " (too long to be a measurement)"
                                                                 : " (ASCII digits only)");
                ok = FALSE;
                break;
            }
            note_command(&p, line);
            continue;
        }
        switch (p.section) {
        case SECTION_COLL:
            ok = coll_row(&p, i + 1, fs, error);
            break;
        case SECTION_GEMM:
            ok = gemm_row(&p, i + 1, fs, error);
            break;
        case SECTION_MEM:
            ok = mem_row(&p, i + 1, fs, error);
            break;
        case SECTION_NONE:
            break; /* a number outside any table: not a measurement */
        }
    }
    g_hash_table_unref(p.hosts);
    if (log->versions == NULL && p.nccl_version)
        log->versions = g_strdup_printf("NCCL %s", p.nccl_version);
    g_free(p.nccl_version);
    if (!ok)
        return NULL;
    if (log->colls->len == 0 && log->gemm->len == 0 && log->mem->len == 0) {
        g_clear_pointer(&log->tool, g_free);
    }
    return g_steal_pointer(&log);
}

ParoCalibLog *paro_calib_log_load(const char *path, GError **error)
{
    g_autofree char *text = NULL;
    if (!paro_file_read(path, &paro_limit_table_bytes, &text, NULL, error))
        return NULL;
    return paro_calib_log_parse(text, path, error);
}
