/* SPDX-License-Identifier: MIT */
/* The corpus index and its predictions (corpus.h). corpus.yaml entries carry provenance
 * for people (source, date, NCCL version, environment, notes); the reader takes the four
 * fields the prediction needs and leaves the rest to be read, not checked. */
#include "calib/corpus.h"

#include <math.h>
#include <string.h>

#include "coll/simulate.h"
#include "core/error.h"
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
    g_free(c);
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
    c->folder = g_strdup(folder);
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
    g_autofree char *root = g_path_get_dirname(c->folder); /* validation/ */
    g_autofree char *repo = g_path_get_dirname(root);
    for (guint i = 0; i < c->entries->len; i++) {
        const ParoCorpusEntry *e = &g_array_index(c->entries, ParoCorpusEntry, i);
        g_autofree char *log_path = g_build_filename(c->folder, e->file, NULL);
        g_autofree char *topo_path = g_build_filename(repo, e->topology, NULL);
        g_autoptr(ParoCalibLog) log = paro_calib_log_load(log_path, error);
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

static gboolean transfer_class(const char *repo, GArray *loaded, const char *klass, GArray *out,
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
    g_autofree char *topo_path = g_build_filename(repo, topology, NULL);
    g_autoptr(ParoTopology) sheet = paro_topology_load(topo_path, error);
    if (sheet == NULL)
        return FALSE;
    ParoCorpusTransfer tr = {klass, -1, {{0}}, {{0}}, {{0}}};
    if (!paro_calib_fit_nccl(fit_logs, sheet, tr.scales, error))
        return FALSE;
    ParoTopology calibrated = *sheet;
    paro_calib_apply_nccl(tr.scales, &calibrated);
    for (int op = 0; op <= PARO_COLL_SENDRECV; op++) {
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
    g_autofree char *root = g_path_get_dirname(c->folder);
    g_autofree char *repo = g_path_get_dirname(root);
    g_autoptr(GArray) loaded = g_array_new(FALSE, TRUE, sizeof(Loaded));
    g_array_set_clear_func(loaded, loaded_clear);
    for (guint i = 0; i < c->entries->len; i++) {
        const ParoCorpusEntry *e = &g_array_index(c->entries, ParoCorpusEntry, i);
        g_autofree char *path = g_build_filename(c->folder, e->file, NULL);
        Loaded l = {e, paro_calib_log_load(path, error), -1};
        if (l.log == NULL)
            return NULL;
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
        if (!seen && !transfer_class(repo, loaded, klass, out, error)) {
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
