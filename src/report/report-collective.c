/* SPDX-License-Identifier: MIT */
/* The `parosim collective` report: nccl-tests' table (size, count, type, redop, root,
 * time, algbw, busbw, #wrong), so that predictions and measurements line up column for
 * column, then what the model adds: NCCL's choice of algorithm and protocol, or with the
 * flow model the bytes its transfers put on intra- and inter-node links; as JSON and CSV
 * too. */
#include "report/report.h"

#include <math.h>

#include "core/format.h"

static gboolean flow(const ParoCollReport *h)
{
    return h->model == PARO_COLL_MODEL_FLOW;
}

/* Channels and chunks shape rings, trees and chains; an all-to-all's flows go at once. */
static gboolean rings(const ParoCollSpec *spec)
{
    return spec->op != PARO_COLL_ALLTOALL;
}

static void json(const ParoCollReport *h, const GArray *rows, double factor, GString *out)
{
    const ParoCollSpec *spec = h->spec;
    g_string_append(out, "{\n  \"parosim\": ");
    paro_report_json_string(out, PARO_VERSION);
    g_string_append_printf(out, ",\n  \"schema_version\": %d", PARO_SCHEMA_VERSION);
    g_string_append(out, ",\n  \"topology\": ");
    paro_report_json_string(out, h->topology->name);
    g_string_append_printf(
        out,
        ",\n  \"op\": \"%s\",\n  \"algorithm\": \"%s\",\n  \"gpus\": %" G_GINT64_FORMAT
        ",\n  \"group\": %" G_GINT64_FORMAT,
        paro_coll_kind_names[spec->op], paro_algorithm_names[spec->algorithm], spec->n, spec->m);
    if (flow(h) && rings(spec))
        g_string_append_printf(out, ",\n  \"channels\": %" G_GINT64_FORMAT, spec->channels);
    if ((flow(h) || spec->algorithm == PARO_ALGO_HO_RING) && rings(spec))
        g_string_append_printf(out, ",\n  \"chunks\": %" G_GINT64_FORMAT, spec->chunks);
    g_string_append_printf(out, ",\n  \"model\": \"%s\"", paro_coll_model_names[h->model]);
    if (flow(h))
        g_string_append_printf(out, ",\n  \"mode\": \"%s\",\n  \"network\": \"%s\"",
                               h->explicit_mode ? "explicit" : "aggregated",
                               paro_net_fidelity_names[h->fidelity]);
    g_string_append(out, ",\n  \"results\": [\n");
    for (guint i = 0; i < rows->len; i++) {
        const ParoCollRow *row = &g_array_index(rows, ParoCollRow, i);
        double s = paro_time_to_s(row->time);
        double algbw = s > 0 ? row->size / s : 0;
        g_string_append(out, "    {\"size\": ");
        paro_report_number(out, row->size);
        g_string_append(out, ", \"time\": ");
        paro_report_number(out, s);
        g_string_append(out, ", \"algbw\": ");
        paro_report_number(out, algbw);
        g_string_append(out, ", \"busbw\": ");
        paro_report_number(out, algbw * factor);
        if (flow(h)) {
            g_string_append(out, ", \"intra_bytes\": ");
            paro_report_number(out, round(row->intra_bytes));
            g_string_append(out, ", \"inter_bytes\": ");
            paro_report_number(out, round(row->inter_bytes));
        } else {
            g_string_append_printf(out, ", \"nccl_algorithm\": \"%s\", \"protocol\": \"%s\"",
                                   paro_nccl_algo_names[row->algo],
                                   paro_nccl_proto_names[row->proto]);
        }
        g_string_append_printf(out, "}%s\n", i + 1 < rows->len ? "," : "");
    }
    g_string_append(out, "  ]\n}\n");
}

static void head(const ParoCollReport *h, GString *out)
{
    const ParoCollSpec *spec = h->spec;
    const ParoTopology *t = h->topology;
    g_string_append_printf(out, "# parosim %s collective: %s, algorithm %s\n", PARO_VERSION,
                           paro_coll_kind_names[spec->op], paro_algorithm_names[spec->algorithm]);
    g_autofree char *name = paro_format_escape(t->name);
    /* NCCL's model finds its own channels (coll/nccl.c); chunks pipeline the ho-ring only. */
    g_string_append_printf(out,
                           "# topology: %s  gpus: %" G_GINT64_FORMAT
                           "  gpus per node: %" G_GINT64_FORMAT "  group m: %" G_GINT64_FORMAT,
                           name, spec->n, t->gpus_per_node, spec->m);
    if (flow(h) && rings(spec))
        g_string_append_printf(out, "  channels: %" G_GINT64_FORMAT, spec->channels);
    if ((flow(h) || spec->algorithm == PARO_ALGO_HO_RING) && rings(spec))
        g_string_append_printf(out, "  chunks: %" G_GINT64_FORMAT, spec->chunks);
    g_string_append_c(out, '\n');
    if (flow(h)) {
        g_string_append_printf(out, "# model: flow  network: %s  mode: %s\n#\n",
                               paro_net_fidelity_names[h->fidelity],
                               h->explicit_mode ? "explicit" : "aggregated (symmetric)");
        g_string_append(out, "#                                                        out-of-place"
                             "                       link bytes\n");
        g_string_append(out, "#       size         count      type   redop    root     time   algbw"
                             "   busbw #wrong        intra        inter\n");
        g_string_append(out, "#        (B)    (elements)                               (us)  (GB/s)"
                             "  (GB/s)                 (B)          (B)\n");
    } else {
        g_string_append(out, "# model: nccl (NCCL's cost model and choice, coll/nccl.c)\n#\n");
        g_string_append(out, "#                                                        out-of-place"
                             "                          nccl\n");
        g_string_append(out, "#       size         count      type   redop    root     time   algbw"
                             "   busbw #wrong  algorithm  protocol\n");
        g_string_append(out, "#        (B)    (elements)                               (us)  (GB/s)"
                             "  (GB/s)\n");
    }
}

void paro_report_collective(const ParoCollReport *h, const GArray *rows, ParoFormat format,
                            GString *out)
{
    const ParoCollSpec *spec = h->spec;
    const char *redop =
        spec->op == PARO_COLL_ALLREDUCE || spec->op == PARO_COLL_REDUCESCATTER ? "sum" : "none";
    int root = spec->op == PARO_COLL_BROADCAST ? 0 : -1;
    double factor = paro_coll_bus_factor(spec->op, spec->n);
    if (format == PARO_FORMAT_JSON) {
        json(h, rows, factor, out);
        return;
    }
    if (format == PARO_FORMAT_CSV)
        g_string_append(out, flow(h) ? "size,count,type,redop,root,time_us,algbw_GBps,busbw_GBps,"
                                       "intra_bytes,inter_bytes,schema_version\n"
                                     : "size,count,type,redop,root,time_us,algbw_GBps,busbw_GBps,"
                                       "nccl_algorithm,protocol,schema_version\n");
    else
        head(h, out);
    double busbw_sum = 0;
    gboolean csv = format == PARO_FORMAT_CSV;
    for (guint i = 0; i < rows->len; i++) {
        const ParoCollRow *row = &g_array_index(rows, ParoCollRow, i);
        double s = paro_time_to_s(row->time);
        double algbw = s > 0 ? row->size / s / 1e9 : 0;
        busbw_sum += algbw * factor;
        char t_us[G_ASCII_DTOSTR_BUF_SIZE], a[G_ASCII_DTOSTR_BUF_SIZE], b[G_ASCII_DTOSTR_BUF_SIZE];
        paro_format_fixed(t_us, sizeof t_us, s * 1e6, 2, csv ? 64 : 7);
        paro_format_fixed(a, sizeof a, algbw, 2, csv ? 64 : 6);
        paro_format_fixed(b, sizeof b, algbw * factor, 2, csv ? 64 : 6);
        gint64 count = (gint64)(row->size / 4);
        const char *algo = paro_nccl_algo_names[row->algo];
        const char *proto = paro_nccl_proto_names[row->proto];
        if (csv && flow(h)) {
            g_string_append_printf(out,
                                   "%.0f,%" G_GINT64_FORMAT ",float,%s,%d,%s,%s,%s,%.0f,%.0f,%d\n",
                                   row->size, count, redop, root, t_us, a, b, row->intra_bytes,
                                   row->inter_bytes, PARO_SCHEMA_VERSION);
        } else if (csv) {
            g_string_append_printf(out, "%.0f,%" G_GINT64_FORMAT ",float,%s,%d,%s,%s,%s,%s,%s,%d\n",
                                   row->size, count, redop, root, t_us, a, b, algo, proto,
                                   PARO_SCHEMA_VERSION);
        } else {
            char sz[G_ASCII_DTOSTR_BUF_SIZE], in[G_ASCII_DTOSTR_BUF_SIZE],
                ex[G_ASCII_DTOSTR_BUF_SIZE];
            g_string_append_printf(out,
                                   "%12s  %12" G_GINT64_FORMAT "  %8s  %6s  %6d  %7s  %6s  %6s"
                                   "    N/A",
                                   paro_format_fixed(sz, sizeof sz, row->size, 0, 12), count,
                                   "float", redop, root, t_us, a, b);
            if (flow(h))
                g_string_append_printf(out, "  %11s  %11s\n",
                                       paro_format_fixed(in, sizeof in, row->intra_bytes, 0, 11),
                                       paro_format_fixed(ex, sizeof ex, row->inter_bytes, 0, 11));
            else
                g_string_append_printf(out, "  %9s  %8s\n", algo, proto);
        }
    }
    if (format == PARO_FORMAT_TABLE) {
        char avg[G_ASCII_DTOSTR_BUF_SIZE];
        g_ascii_formatd(avg, sizeof avg, "%.2f", rows->len ? busbw_sum / rows->len : 0);
        g_string_append_printf(
            out, "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : %s\n#\n", avg);
    }
}
