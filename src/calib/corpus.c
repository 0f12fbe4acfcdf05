/* SPDX-License-Identifier: MIT */
/* The corpus index and its predictions (corpus.h). corpus.yaml entries carry provenance
 * for people (source, date, NCCL version, environment, notes); the reader takes the four
 * fields the prediction needs and leaves the rest to be read, not checked. */
#include "calib/corpus.h"

#include <math.h>
#include <string.h>

#include "coll/simulate.h"
#include "core/error.h"
#include "core/files.h"
#include "core/limits.h"
#include "yaml/loaders.h"
#include "yaml/schema.h"

const char *const paro_predict_model_names[] = {"nccl", "flow", NULL};

void paro_corpus_free(ParoCorpus *c)
{
    if (c == NULL)
        return;
    for (guint i = 0; c->entries && i < c->entries->len; i++) {
        ParoCorpusEntry *e = &g_array_index(c->entries, ParoCorpusEntry, i);
        g_free(e->file);
        g_free(e->klass);
        g_free(e->topology);
    }
    g_clear_pointer(&c->entries, g_array_unref);
    g_free(c->folder);
    g_free(c->root);
    g_free(c);
}

/* One part of a path onto the parts kept: "." and "" (a repeated separator) are nothing,
 * ".." takes back a named part, or stays at the root of an absolute path. */
static void push_part(GPtrArray *kept, const char *part, gboolean absolute)
{
    if (part[0] == '\0' || strcmp(part, ".") == 0)
        return;
    const char *last = kept->len ? g_ptr_array_index(kept, kept->len - 1) : NULL;
    if (strcmp(part, "..") == 0 && last && strcmp(last, "..") != 0)
        g_ptr_array_remove_index(kept, kept->len - 1);
    else if (!(strcmp(part, "..") == 0 && absolute))
        g_ptr_array_add(kept, (gpointer)part);
}

/* @path without "." parts, repeated or trailing separators, a ".." after a named part
 * folded away, then @up parent folders more, by its text alone: "validation/nccl-corpus/"
 * and "./validation//nccl-corpus" are "validation/nccl-corpus", their grandparent "."; the
 * grandparent of "nccl-corpus" is "..". (g_path_get_dirname of "DIR/" is DIR itself: the
 * topologies were looked for in validation/, not in the repository.) A relative path stays
 * relative, so that messages name the files as the user does. */
static char *lexical_path(const char *path, int up)
{
    gboolean absolute = g_path_is_absolute(path);
    g_auto(GStrv) parts = g_strsplit(path, G_DIR_SEPARATOR_S, -1);
    g_autoptr(GPtrArray) kept = g_ptr_array_new();
    for (int i = 0; parts[i]; i++)
        push_part(kept, parts[i], absolute);
    for (int i = 0; i < up; i++)
        push_part(kept, "..", absolute);
    g_ptr_array_add(kept, NULL);
    g_autofree char *joined = g_strjoinv(G_DIR_SEPARATOR_S, (char **)kept->pdata);
    if (absolute)
        return g_strconcat(G_DIR_SEPARATOR_S, joined, NULL);
    return joined[0] ? g_steal_pointer(&joined) : g_strdup(".");
}

static char *need(const ParoNode *entry, const char *key, GError **error)
{
    const ParoNode *v = paro_node_lookup(entry, key);
    if (v == NULL || v->kind != PARO_NODE_SCALAR || v->scalar[0] == '\0') {
        paro_node_error(error, entry, PARO_CONFIG_ERROR_MISSING_KEY,
                        "a corpus entry needs '%s' (file, class, topology)", key);
        return NULL;
    }
    return g_strdup(v->scalar);
}

ParoCorpus *paro_corpus_load(const char *folder, GError **error)
{
    g_autofree char *path = g_build_filename(folder, "corpus.yaml", NULL);
    g_autoptr(ParoNode) root = paro_yaml_load_file(path, error);
    if (root == NULL || !paro_schema_check_header(root, "nccl-corpus", error))
        return NULL;
    const ParoNode *logs = paro_node_lookup(root, "logs");
    if (logs == NULL || logs->kind != PARO_NODE_SEQUENCE) {
        paro_node_error(error, root, PARO_CONFIG_ERROR_MISSING_KEY, "'logs' must be a list");
        return NULL;
    }
    g_autoptr(ParoCorpus) c = g_new0(ParoCorpus, 1);
    c->folder = lexical_path(folder, 0);
    c->root = lexical_path(folder, 2);
    c->entries = g_array_new(FALSE, TRUE, sizeof(ParoCorpusEntry));
    for (guint i = 0; i < logs->values->len; i++) {
        const ParoNode *e = g_ptr_array_index(logs->values, i);
        if (e->kind != PARO_NODE_MAPPING) {
            paro_node_error(error, e, PARO_CONFIG_ERROR_TYPE, "a corpus entry is a mapping");
            return NULL;
        }
        ParoCorpusEntry entry = {0};
        g_array_append_val(c->entries, entry);
        ParoCorpusEntry *x = &g_array_index(c->entries, ParoCorpusEntry, c->entries->len - 1);
        if (!(x->file = need(e, "file", error)) || !(x->klass = need(e, "class", error)) ||
            !(x->topology = need(e, "topology", error)))
            return NULL;
        const ParoNode *a = paro_node_lookup(e, "algorithm");
        x->ring_forced = a && a->kind == PARO_NODE_SCALAR && g_str_has_prefix(a->scalar, "ring");
    }
    return g_steal_pointer(&c);
}

GArray *paro_calib_predict_log_flow(const ParoCalibLog *log, const ParoTopology *t, GError **error)
{
    g_autoptr(GArray) rows = g_array_new(FALSE, FALSE, sizeof(ParoPredictRow));
    for (guint i = 0; log->colls && i < log->colls->len; i++) {
        const ParoCollTable *table = g_ptr_array_index(log->colls, i);
        gint64 nodes = table->nodes > 0 ? table->nodes : 1;
        ParoTopology view = *t; /* the log's nodes; strings stay the topology's */
        view.nodes = nodes;
        view.gpus_per_node = MAX(1, table->ranks / nodes);
        view.nics.count = MAX(1, t->nics.count * view.gpus_per_node / t->gpus_per_node);
        g_autoptr(ParoGraph) g = paro_graph_new(&view, nodes, nodes > 1, error);
        if (g == NULL)
            return NULL;
        for (guint k = 0; k < table->points->len; k++) {
            const ParoCollPoint *pt = &g_array_index(table->points, ParoCollPoint, k);
            ParoPredictRow r = paro_predict_row_new(table, nodes, pt);
            ParoCollSpec spec;
            paro_coll_spec_init(&spec, &view, table->op, PARO_ALGO_RING, table->ranks,
                                view.gpus_per_node, pt->bytes);
            ParoCollResult res;
            if (pt->bytes > 0 && paro_coll_simulate(g, PARO_NET_MAXMIN, &spec, &res, NULL))
                r.predicted_us = paro_time_to_s(res.time) * 1e6;
            g_array_append_val(rows, r);
        }
    }
    return g_steal_pointer(&rows);
}

void paro_corpus_results_free(GArray *results)
{
    for (guint i = 0; results && i < results->len; i++)
        g_clear_pointer(&g_array_index(results, ParoCorpusResult, i).rows, g_array_unref);
    if (results)
        g_array_unref(results);
}

GArray *paro_corpus_predict(const ParoCorpus *c, ParoPredictModel model, GError **error)
{
    GArray *results = g_array_new(FALSE, TRUE, sizeof(ParoCorpusResult));
    for (guint i = 0; i < c->entries->len; i++) {
        const ParoCorpusEntry *e = &g_array_index(c->entries, ParoCorpusEntry, i);
        g_autofree char *log_path = g_build_filename(c->folder, e->file, NULL);
        g_autofree char *topo_path = g_build_filename(c->root, e->topology, NULL);
        g_autoptr(ParoCalibLog) log = paro_calib_log_load(log_path, error);
        if (log && !paro_calib_predict_check_log(log, error))
            g_clear_pointer(&log, paro_calib_log_free);
        g_autoptr(ParoTopology) t = log ? paro_topology_load(topo_path, error) : NULL;
        GArray *rows = NULL;
        if (t != NULL)
            rows =
                model == PARO_PREDICT_NCCL
                    ? paro_calib_predict_log(log, t, e->ring_forced ? 1u << PARO_NCCL_RING : 0, 0)
                    : paro_calib_predict_log_flow(log, t, error);
        if (rows == NULL) {
            paro_corpus_results_free(results);
            return NULL;
        }
        ParoCorpusResult r = {e, rows, {{0}}};
        paro_calib_band_errors(rows, r.bands);
        g_array_append_val(results, r);
    }
    return results;
}

GStrv paro_corpus_inputs(const ParoCorpus *c)
{
    GPtrArray *list = g_ptr_array_new();
    g_ptr_array_add(list, g_build_filename(c->folder, "corpus.yaml", NULL));
    for (guint i = 0; i < c->entries->len; i++) {
        const ParoCorpusEntry *e = &g_array_index(c->entries, ParoCorpusEntry, i);
        char *paths[] = {g_build_filename(c->folder, e->file, NULL),
                         g_build_filename(c->root, e->topology, NULL)};
        for (int k = 0; k < 2; k++) {
            gboolean seen = FALSE; /* the classes share their topologies */
            for (guint j = 0; j < list->len && !seen; j++)
                seen = strcmp(g_ptr_array_index(list, j), paths[k]) == 0;
            if (seen)
                g_free(paths[k]);
            else
                g_ptr_array_add(list, paths[k]);
        }
    }
    g_ptr_array_add(list, NULL);
    return (GStrv)g_ptr_array_free(list, FALSE);
}

static void record_clear(gpointer p)
{
    g_free(((ParoCorpusRecord *)p)->klass);
}

/* A recorded figure: a finite fraction within paro_limit_relative_error. A nan compared
 * with anything is false, so a recorded nan would never regress: refused here. */
static gboolean record_figure(const char *path, int line, int column, const char *text,
                              const char *what, double *out, GError **error)
{
    char *end = NULL;
    double v = g_ascii_strtod(text, &end);
    if (end == text || *end != '\0' || !isfinite(v)) {
        paro_config_error_set(error, PARO_CONFIG_ERROR_TYPE, path, line, column,
                              "the %s |error| must be a finite number (a fraction), got '%.40s'",
                              what, text);
        return FALSE;
    }
    if (!paro_limit_check(&paro_limit_relative_error, v)) {
        g_autofree char *m = paro_limit_describe(&paro_limit_relative_error, what, v, NULL);
        paro_config_error_set(error, PARO_CONFIG_ERROR_RANGE, path, line, column, "%s", m);
        return FALSE;
    }
    *out = v;
    return TRUE;
}

GArray *paro_corpus_record_load(const char *path, GError **error)
{
    g_autofree char *text = NULL;
    if (!paro_file_read(path, &paro_limit_table_bytes, &text, NULL, error))
        return NULL;
    g_autoptr(GArray) records = g_array_new(FALSE, TRUE, sizeof(ParoCorpusRecord));
    g_array_set_clear_func(records, record_clear);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (int i = 0; lines[i]; i++) {
        int line = i + 1;
        g_strchomp(lines[i]); /* a trailing '\r' or blank */
        if (lines[i][0] == '#' || lines[i][0] == '\0')
            continue;
        g_auto(GStrv) f = g_strsplit(lines[i], "\t", -1);
        int column[5] = {1, 0, 0, 0, 0}; /* where each field starts */
        guint n = g_strv_length(f);
        for (guint k = 1; k < MIN(n, 5u); k++)
            column[k] = column[k - 1] + (int)strlen(f[k - 1]) + 1;
        if (n != 4 || f[0][0] == '\0') {
            paro_config_error_set(
                error, PARO_CONFIG_ERROR_SYNTAX, path, line, n > 4 ? column[4] : 1,
                "expected class, band, median and worst |error|, four fields separated by tabs "
                "(as --record writes them); got %u field%s%s",
                n, n == 1 ? "" : "s", n == 4 ? ", the class empty" : "");
            return NULL;
        }
        ParoCorpusRecord r = {.band = -1, .line = line};
        for (int b = 0; b < PARO_N_BANDS; b++)
            if (strcmp(f[1], paro_size_band_names[b]) == 0)
                r.band = b;
        if (r.band < 0) {
            g_autofree char *known = g_strjoinv(", ", (char **)paro_size_band_names);
            paro_config_error_set(error, PARO_CONFIG_ERROR_REFERENCE, path, line, column[1],
                                  "unknown band '%.40s' (known: %s)", f[1], known);
            return NULL;
        }
        if (!record_figure(path, line, column[2], f[2], "median", &r.median, error) ||
            !record_figure(path, line, column[3], f[3], "worst", &r.worst, error))
            return NULL;
        for (guint k = 0; k < records->len; k++) {
            const ParoCorpusRecord *o = &g_array_index(records, ParoCorpusRecord, k);
            if (o->band == r.band && strcmp(o->klass, f[0]) == 0) {
                paro_config_error_set(error, PARO_CONFIG_ERROR_DUPLICATE_KEY, path, line, 1,
                                      "%s %s is recorded twice (also on line %d): which figure "
                                      "holds?",
                                      f[0], f[1], o->line);
                return NULL;
            }
        }
        r.klass = g_strdup(f[0]);
        g_array_append_val(records, r);
    }
    if (records->len == 0) {
        paro_config_error_set(error, PARO_CONFIG_ERROR_SYNTAX, path, 1, 1,
                              "no recorded figures (class, band, median and worst |error| a "
                              "line, as --record writes them): a record of nothing would pass "
                              "every check");
        return NULL;
    }
    return g_steal_pointer(&records);
}

void paro_corpus_class_errors(const GArray *results, const char *klass,
                              ParoBandError out[PARO_N_BANDS])
{
    g_autoptr(GArray) all = g_array_new(FALSE, FALSE, sizeof(ParoPredictRow));
    for (guint i = 0; i < results->len; i++) {
        const ParoCorpusResult *r = &g_array_index(results, ParoCorpusResult, i);
        if (strcmp(r->entry->klass, klass) == 0)
            g_array_append_vals(all, r->rows->data, r->rows->len);
    }
    paro_calib_band_errors(all, out);
}

/* ---- calibration transfer ---- */

/* The op of every table of @log, or -1 when they differ or there are none. */
static int log_op(const ParoCalibLog *log)
{
    int op = -1;
    for (guint i = 0; log->colls && i < log->colls->len; i++) {
        const ParoCollTable *t = g_ptr_array_index(log->colls, i);
        if (op >= 0 && op != (int)t->op)
            return -1;
        op = (int)t->op;
    }
    return op;
}

typedef struct {
    const ParoCorpusEntry *entry;
    ParoCalibLog *log;
    int op;
} Loaded;

static void loaded_clear(gpointer p)
{
    g_clear_pointer(&((Loaded *)p)->log, paro_calib_log_free);
}

static gboolean transfer_class(const char *root, GArray *loaded, const char *klass, GArray *out,
                               GError **error)
{
    g_autoptr(GPtrArray) fit_logs = g_ptr_array_new();
    const char *topology = NULL;
    for (guint i = 0; i < loaded->len; i++) {
        const Loaded *l = &g_array_index(loaded, Loaded, i);
        if (strcmp(l->entry->klass, klass) == 0 && l->op == PARO_COLL_ALLREDUCE) {
            g_ptr_array_add(fit_logs, l->log);
            topology = topology ? topology : l->entry->topology;
        }
    }
    if (fit_logs->len == 0)
        return TRUE;
    g_autofree char *topo_path = g_build_filename(root, topology, NULL);
    g_autoptr(ParoTopology) sheet = paro_topology_load(topo_path, error);
    if (sheet == NULL)
        return FALSE;
    ParoCorpusTransfer tr = {klass, -1, {{0}}, {{0}}, {{0}}};
    if (!paro_calib_fit_nccl(fit_logs, sheet, tr.scales, error))
        return FALSE;
    ParoTopology calibrated = *sheet;
    paro_calib_apply_nccl(tr.scales, &calibrated);
    for (int op = 0; paro_coll_kind_names[op]; op++) { /* every kind, alltoall too */
        if (op == PARO_COLL_ALLREDUCE)
            continue;
        g_autoptr(GArray) before = g_array_new(FALSE, FALSE, sizeof(ParoPredictRow));
        g_autoptr(GArray) after = g_array_new(FALSE, FALSE, sizeof(ParoPredictRow));
        for (guint i = 0; i < loaded->len; i++) {
            const Loaded *l = &g_array_index(loaded, Loaded, i);
            if (strcmp(l->entry->klass, klass) != 0 || l->op != op ||
                strcmp(l->entry->topology, topology) != 0)
                continue;
            guint algos = l->entry->ring_forced ? 1u << PARO_NCCL_RING : 0;
            g_autoptr(GArray) b = paro_calib_predict_log(l->log, sheet, algos, 0);
            g_autoptr(GArray) a = paro_calib_predict_log(l->log, &calibrated, algos, 0);
            g_array_append_vals(before, b->data, b->len);
            g_array_append_vals(after, a->data, a->len);
        }
        if (before->len == 0)
            continue;
        ParoCorpusTransfer row = tr;
        row.op = op;
        paro_calib_band_errors(before, row.before);
        paro_calib_band_errors(after, row.after);
        for (int k = 0; k < PARO_NCCL_N_CLASSES; k++)
            row.scales[k].source = g_strdup(tr.scales[k].source);
        g_array_append_val(out, row);
    }
    for (int k = 0; k < PARO_NCCL_N_CLASSES; k++)
        paro_nccl_scale_clear(&tr.scales[k]);
    return TRUE;
}

GArray *paro_corpus_transfer(const ParoCorpus *c, GError **error)
{
    g_autoptr(GArray) loaded = g_array_new(FALSE, TRUE, sizeof(Loaded));
    g_array_set_clear_func(loaded, loaded_clear);
    for (guint i = 0; i < c->entries->len; i++) {
        const ParoCorpusEntry *e = &g_array_index(c->entries, ParoCorpusEntry, i);
        g_autofree char *path = g_build_filename(c->folder, e->file, NULL);
        Loaded l = {e, paro_calib_log_load(path, error), -1};
        if (l.log == NULL || !paro_calib_predict_check_log(l.log, error)) {
            g_clear_pointer(&l.log, paro_calib_log_free);
            return NULL;
        }
        l.op = log_op(l.log);
        g_array_append_val(loaded, l);
    }
    GArray *out = g_array_new(FALSE, TRUE, sizeof(ParoCorpusTransfer));
    g_array_set_clear_func(out, paro_corpus_transfer_clear);
    for (guint i = 0; i < loaded->len; i++) {
        const char *klass = g_array_index(loaded, Loaded, i).entry->klass;
        gboolean seen = FALSE; /* each class once, in corpus order */
        for (guint k = 0; k < i && !seen; k++)
            seen = strcmp(g_array_index(loaded, Loaded, k).entry->klass, klass) == 0;
        if (!seen && !transfer_class(c->root, loaded, klass, out, error)) {
            g_array_unref(out);
            return NULL;
        }
    }
    return out;
}

void paro_corpus_transfer_clear(gpointer p)
{
    ParoCorpusTransfer *t = p;
    for (int k = 0; k < PARO_NCCL_N_CLASSES; k++)
        paro_nccl_scale_clear(&t->scales[k]);
}
