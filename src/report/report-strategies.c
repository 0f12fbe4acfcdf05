/* SPDX-License-Identifier: MIT */
/* The `parosim strategies` report in its three formats. */
#include "report/report.h"

#include "core/format.h"
#include "core/units.h"
#include "scenario/offload.h"

#include <math.h>
#include <string.h>

const char *const paro_format_names[] = {"table", "json", "csv", NULL};

void paro_report_json_strategy(GString *out, const ParoStrategy *strategy)
{
    g_string_append(out, "    {\"name\": ");
    paro_report_json_string(out, strategy->name);
    g_string_append(out, ", \"aliases\": [");
    for (int k = 0; strategy->aliases[k]; k++) {
        if (k)
            g_string_append(out, ", ");
        paro_report_json_string(out, strategy->aliases[k]);
    }
}

void paro_report_json_string(GString *out, const char *text)
{
    g_string_append_c(out, '"');
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (*p == '"' || *p == '\\')
            g_string_append_printf(out, "\\%c", *p);
        else if (*p < 0x20)
            g_string_append_printf(out, "\\u%04x", *p);
        else
            g_string_append_c(out, (char)*p);
    }
    g_string_append_c(out, '"');
}

void paro_report_number(GString *out, double value)
{
    if (!isfinite(value)) {
        g_string_append(out, "null");
        return;
    }
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    /* Whole numbers (byte counts) print without an exponent up to 2^53. */
    if (value == floor(value) && fabs(value) < 9007199254740992.0)
        g_string_append_printf(out, "%" G_GINT64_FORMAT, (gint64)value);
    else
        g_string_append(out, g_ascii_formatd(buf, sizeof buf, "%.10g", value));
}

char *paro_report_gib(double bytes)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    return g_strdup_printf("%s GiB", g_ascii_formatd(buf, sizeof buf, "%.4g", bytes / PARO_GIB));
}

static char *aliases_joined(const ParoStrategy *s, const char *sep)
{
    return g_strjoinv(sep, (char **)s->aliases);
}

/* A kernel the framework profile decides, and how it runs ("fused", "rotate_half"...). */
typedef struct {
    const char *kernel, *how;
} KernelChoice;

/* loss, optimizer, softmax, rmsnorm, swiglu, rotary, gathers */
#define FRAMEWORK_KERNELS_MAX 7

/* The kernels the profile decides for this model, in the order the framework line and the
 * JSON object give them; returns how many. */
static guint framework_kernels(const ParoScenario *s, const ParoComputeSetup *cs,
                               KernelChoice out[FRAMEWORK_KERNELS_MAX])
{
    const ParoModel *m = s->model;
    guint n = 0;
    out[n++] = (KernelChoice){"loss", cs->fused_loss ? "fused" : "fp32 unfused"};
    out[n++] = (KernelChoice){"optimizer",
                              paro_framework_fused_optimizer(&s->framework) ? "fused" : "unfused"};
    if (s->training.attention == PARO_ATTENTION_EAGER)
        out[n++] = (KernelChoice){"softmax", cs->fused_softmax ? "fused" : "unfused"};
    if (m->has_shape && m->norm == PARO_NORM_RMSNORM)
        out[n++] = (KernelChoice){"rmsnorm", cs->eager_norm ? "unfused" : "fused"};
    if (m->has_shape && m->mlp == PARO_MLP_GATED)
        out[n++] = (KernelChoice){"swiglu", cs->fused_swiglu ? "fused" : "unfused"};
    if (m->has_shape && m->rotary > 0)
        out[n++] = (KernelChoice){"rotary", paro_rope_names[cs->rope + 1]};
    if (paro_framework_gather_copy_bytes(&s->framework) > 0) /* FSDP2, decision 62 */
        out[n++] = (KernelChoice){"gathers", "copied out"};
    return n;
}

/* The profile's version as the scenario gave it ("0.10.0"), or NULL when it gives none. */
static char *framework_version(const ParoFramework *f)
{
    if (f->version == 0)
        return NULL;
    return g_strdup_printf("%" G_GINT64_FORMAT ".%" G_GINT64_FORMAT ".%" G_GINT64_FORMAT,
                           f->version / 1000000, f->version / 1000 % 1000, f->version % 1000);
}

/* The framework line: the profile and the kernels it decides for this model, so a reader
 * sees which code's costs the figures assume (docs/frameworks.md). */
static void append_framework(GString *out, const ParoScenario *s, const ParoComputeSetup *cs)
{
    KernelChoice k[FRAMEWORK_KERNELS_MAX];
    guint n = framework_kernels(s, cs, k);
    g_autofree char *version = framework_version(&s->framework);
    g_string_append_printf(out,
                           "# framework: %s%s%s  kernels:", paro_framework_names[s->framework.kind],
                           version ? " " : "", version ? version : "");
    for (guint i = 0; i < n; i++)
        g_string_append_printf(out, "%s %s %s", i ? "," : "", k[i].kernel, k[i].how);
    g_string_append_c(out, '\n');
}

void paro_report_framework_json(const ParoScenario *s, const ParoComputeSetup *cs, GString *out)
{
    KernelChoice k[FRAMEWORK_KERNELS_MAX];
    guint n = framework_kernels(s, cs, k);
    g_autofree char *version = framework_version(&s->framework);
    g_string_append(out, ",\n  \"framework\": {\"name\": ");
    paro_report_json_string(out, paro_framework_names[s->framework.kind]);
    g_string_append(out, ", \"version\": ");
    if (version)
        paro_report_json_string(out, version);
    else
        g_string_append(out, "null");
    g_string_append(out, ", \"kernels\": {");
    for (guint i = 0; i < n; i++) {
        g_string_append_printf(out, "%s\"%s\": ", i ? ", " : "", k[i].kernel);
        paro_report_json_string(out, k[i].how);
    }
    g_string_append(out, "}}");
}

/* The LoRA line: the adapters, and what their own kernels cost a layer (decision 52). */
static void append_lora(GString *out, const ParoScenario *s, const ParoComputeSetup *cs)
{
    static const char *const names[] = {"q", "k", "v", "o", "gate", "up", "down"};
    const ParoTrainable *lora = &s->training.trainable;
    g_string_append_printf(out, "# lora: rank %" G_GINT64_FORMAT " on", lora->lora_rank);
    const char *sep = " ";
    for (guint i = 0; i < G_N_ELEMENTS(names); i++)
        if (lora->lora_targets & (1u << i)) {
            g_string_append_printf(out, "%s%s", sep, names[i]);
            sep = ", ";
        }
    double f, b;
    paro_compute_lora_bytes(s->model, cs, &f, &b);
    double tokens = (double)s->training.micro_batch * (double)s->training.sequence;
    g_autofree char *cost = paro_units_format(
        tokens * (f + b) / paro_compute_setup_flat_pass_Bps(cs), PARO_QUANTITY_TIME);
    g_string_append_printf(out,
                           " (%s), dropout %g: their own kernels %s a layer and micro-batch, "
                           "forward and backward\n",
                           cs->packed_lora ? "packed adapters, NeMo's" : "one a projection, PEFT's",
                           lora->lora_dropout, cost);
}

void paro_report_strategies_header(const ParoScenarioDerived *g, GString *out)
{
    const ParoScenario *s = g->scenario;
    const ParoTopology *t = s->topology;
    const ParoTraining *tr = &s->training;
    const ParoCommModel *c = &g->comm;
    g_autofree char *intra_bw = paro_units_format(c->intra_Bps, PARO_QUANTITY_BANDWIDTH);
    g_autofree char *inter_bw = paro_units_format(c->inter_Bps, PARO_QUANTITY_BANDWIDTH);
    g_autofree char *intra_lat = paro_units_format(c->intra_lat_s, PARO_QUANTITY_TIME);
    g_autofree char *inter_lat = paro_units_format(c->inter_lat_s, PARO_QUANTITY_TIME);
    g_autofree char *memory = paro_report_gib(t->gpu.memory_bytes);
    /* the allocator's margin (decision 84), in GiB and as a share of the memory */
    double headroom_bytes = paro_scenario_memory_headroom_bytes(s);
    g_autofree char *headroom = paro_report_gib(headroom_bytes);
    char share[G_ASCII_DTOSTR_BUF_SIZE];
    g_ascii_formatd(share, sizeof share, "%.3g", 100.0 * headroom_bytes / t->gpu.memory_bytes);
    const ParoComputeSetup *cs = &g->compute;
    g_autofree char *rate =
        paro_units_format(paro_compute_matmul_rate(cs), PARO_QUANTITY_FLOP_RATE);
    /* names and paths come from the user: control characters escaped */
    g_autofree char *name = paro_format_escape(s->name), *path = paro_format_escape(s->path);
    g_autofree char *model = paro_format_escape(s->model->name);
    g_autofree char *topology = paro_format_escape(t->name), *gpu = paro_format_escape(t->gpu.name);
    g_string_append_printf(out, "# parosim %s strategies: closed-form guideline\n", PARO_VERSION);
    g_string_append_printf(out, "# scenario: %s (%s)\n", name, path);
    g_string_append_printf(out, "# model: %s  params: %.6g  trainable: %.6g\n", model,
                           g->sizes.params, g->sizes.trainable);
    /* every degree by its name: n, the PaRO paper's data-parallel ranks, is dp, not the
     * GPUs, once tp or pp > 1 (issue #42); context and expert parallelism where used */
    g_autoptr(GString) degrees = g_string_new(NULL);
    if (s->cp > 1)
        g_string_append_printf(degrees, "  cp %" G_GINT64_FORMAT " (%s)", s->cp,
                               paro_cp_algorithm_names[s->cp_algorithm]);
    g_string_append_printf(degrees, "  dp %" G_GINT64_FORMAT, s->dp);
    if (s->cp > 1)
        g_string_append_printf(degrees, " (dp x cp %" G_GINT64_FORMAT " share gradients)",
                               g->sizes.n);
    if (s->ep > 1)
        g_string_append_printf(
            degrees, "  ep %" G_GINT64_FORMAT " (experts' gradients over %" G_GINT64_FORMAT ")",
            s->ep, paro_scenario_expert_dp_ranks(s));
    g_string_append_printf(
        out,
        "# topology: %s  gpus: %" G_GINT64_FORMAT " (%" G_GINT64_FORMAT " %s x %" G_GINT64_FORMAT
        " %s, %s, headroom %s (%s%%))  tp %" G_GINT64_FORMAT "  pp %" G_GINT64_FORMAT "%s"
        "  group m: %" G_GINT64_FORMAT "  groups g: %" G_GINT64_FORMAT "\n",
        topology, paro_topology_n_gpus(t), t->nodes, t->nodes == 1 ? "node" : "nodes",
        t->gpus_per_node, gpu, memory, headroom, share, s->tp, s->pp, degrees->str, g->sizes.m,
        g->sizes.n / g->sizes.m);
    g_string_append_printf(out,
                           "# links: B' %s alpha' %s (intra)   B %s alpha %s (inter, per GPU)\n",
                           intra_bw, intra_lat, inter_bw, inter_lat);
    g_string_append_printf(
        out,
        "# training: micro_batch %" G_GINT64_FORMAT "  sequence %" G_GINT64_FORMAT
        "  accumulation A %" G_GINT64_FORMAT "  precision %s  K %g  recompute %s"
        "  attention %s  compute %s",
        tr->micro_batch, tr->sequence, tr->accumulation, paro_precision_names[tr->precision],
        tr->optimizer_bytes, paro_recompute_names[tr->recompute],
        paro_attention_names[tr->attention], rate);
    if (s->calibration.has_compute)
        g_string_append(out, " (calibrated)\n");
    else if (tr->efficiency > 0)
        g_string_append_printf(out, " (efficiency %g)\n", tr->efficiency);
    else if (cs->flat_flops > 0)
        g_string_append_printf(out, " (GEMM rate of this GPU unknown: %g of peak)\n",
                               PARO_UNKNOWN_GPU_EFFICIENCY);
    else
        g_string_append_printf(out,
                               " at best (GEMMs by shape: %g of peak, %" G_GINT64_FORMAT " SMs)\n",
                               cs->matmul_efficiency, cs->sms);
    append_framework(out, s, cs);
    if (tr->fp8) {
        g_autofree char *fp8 =
            paro_units_format(paro_compute_fp8_rate(cs), PARO_QUANTITY_FLOP_RATE);
        g_string_append_printf(out, "# fp8: the layers' linear products at %s at best%s\n", fp8,
                               tr->fp8_attention ? "; attention in fp8 (q, k, v and its output "
                                                   "kept in fp8; timed at the 16-bit rate)"
                                                 : "");
    }
    if (tr->trainable.kind == PARO_TRAINABLE_LORA)
        append_lora(out, s, cs);
    if (s->calibration.present)
        g_string_append_printf(out, "# calibration: %s (%s): %s%s%s measured\n",
                               s->calibration.device, s->calibration.path,
                               s->calibration.has_compute ? "compute rate and HBM bandwidth" : "",
                               s->calibration.has_compute &&
                                       s->calibration.intra.present + s->calibration.inter.present
                                   ? "; "
                                   : "",
                               s->calibration.intra.present || s->calibration.inter.present
                                   ? "network links (fabric, NICs, step overhead replaced)"
                                   : "");
    if (paro_compress_is_active(&s->compression)) {
        g_autofree char *what = paro_compress_describe(&s->compression);
        g_string_append_printf(out, "# compression: %s: %s\n",
                               s->compression.preset == PARO_COMPRESS_CUSTOM
                                   ? "explicit"
                                   : paro_compress_preset_names[s->compression.preset],
                               what);
    }
    /* offloading: the targets and the host figures, with the datasheet default they come
     * from when the topology gives none (decision 80) */
    g_autofree char *offloads = paro_offload_describe(s);
    if (offloads != NULL)
        g_string_append_printf(out, "# %s\n", offloads);
    g_string_append_printf(out, "# global collectives: %s", paro_algorithm_names[s->algorithm]);
    if (s->algorithm == PARO_ALGO_HO_RING)
        g_string_append_printf(out, " (%" G_GINT64_FORMAT " chunks)", s->chunks);
    g_string_append(out, "  step = max(compute, comm); serial = compute + comm\n");
}

static void table(const ParoGuideline *g, GString *out)
{
    paro_report_strategies_header(g->derived, out);
    /* issue #15: the two commands' memory figures differ, and say why */
    g_string_append(out, "# memory: the closed form's sum (all layers' activations, two gathered "
                         "layers, one layer's gradient); `run` reports the simulated step's "
                         "peak, which holds what is in flight at that moment\n");
    g_string_append(out, "#rank strategy          aliases            params   grads   optim  states"
                         "   activ   total  fits    intra    inter  compute     comm     step   "
                         "serial  marks\n");
    g_string_append(out, "#                                           (GiB)   (GiB)   (GiB)   (GiB)"
                         "   (GiB)   (GiB)           (GB)     (GB)      (s)      (s)      (s)"
                         "      (s)\n");
    for (guint i = 0; i < g->results->len; i++) {
        const ParoStrategyResult *r = &g_array_index(g->results, ParoStrategyResult, i);
        g_autofree char *aliases = aliases_joined(r->strategy, ",");
        g_string_append_printf(out, "%5d %-17s %-17s", r->rank, r->strategy->name,
                               aliases[0] ? aliases : "-");
        const double mem[] = {r->mem_params,       r->mem_grads,       r->mem_optimizer,
                              r->mem_model_states, r->mem_activations, r->mem_total};
        for (guint k = 0; k < G_N_ELEMENTS(mem); k++) {
            g_string_append_c(out, ' ');
            char buf[G_ASCII_DTOSTR_BUF_SIZE];
            g_string_append_printf(out, "%7s",
                                   paro_format_fixed(buf, sizeof buf, mem[k] / PARO_GIB, 2, 7));
        }
        /* "tight": it fits, within the allocator's headroom (decision 84); "host": the GPU's
         * memory holds it, the node's host memory not (offloading) */
        const char *fit = r->tight  ? "tight"
                          : r->fits ? "yes"
                          : r->mem_total > g->derived->scenario->topology->gpu.memory_bytes
                              ? "OOM"
                              : "host";
        g_string_append_printf(out, "  %-4s", fit);
        /* the next column gives back what "tight" takes beyond this one's 4 characters */
        int over = MAX((int)strlen(fit) - 4, 0);
        const double cols[] = {r->traffic_intra / 1e9,
                               r->traffic_inter / 1e9,
                               r->t_compute,
                               r->t_comm,
                               r->t_step,
                               r->t_serial};
        for (guint k = 0; k < G_N_ELEMENTS(cols); k++) {
            char buf[G_ASCII_DTOSTR_BUF_SIZE];
            int width = k == 0 ? 8 - over : 8;
            g_string_append_printf(out, " %*s", width,
                                   paro_format_fixed(buf, sizeof buf, cols[k], 3, width));
        }
        g_string_append_printf(out, "  %s%s\n", r->effective ? "" : "ineffective ",
                               r->dominated ? "dominated" : "");
    }
    const ParoStrategyResult *best = &g_array_index(g->results, ParoStrategyResult, 0);
    if (best->fits) /* tight first only when no row fits with margin (decision 84) */
        g_string_append_printf(out, "# best: %s  step %.4g s  %.4g GiB per GPU%s\n",
                               best->strategy->name, best->t_step, best->mem_total / PARO_GIB,
                               best->tight ? "  tight: none fits with the memory headroom" : "");
    else
        g_string_append(out, "# best: none fits in GPU memory\n");
    /* Trim "marks" trailing spaces for stable golden files. */
    GString *clean = g_string_new(NULL);
    for (char *line = out->str; *line;) {
        char *nl = strchr(line, '\n');
        gsize len = nl ? (gsize)(nl - line) : strlen(line);
        while (len > 0 && line[len - 1] == ' ')
            len--;
        g_string_append_len(clean, line, (gssize)len);
        g_string_append_c(clean, '\n');
        line = nl ? nl + 1 : line + strlen(line);
    }
    g_string_assign(out, clean->str);
    g_string_free(clean, TRUE);
}

void paro_report_json_degrees(const ParoScenarioDerived *g, GString *out)
{
    const ParoScenario *s = g->scenario;
    g_string_append_printf(out,
                           ",\n  \"gpus\": %" G_GINT64_FORMAT ",\n  \"tp\": %" G_GINT64_FORMAT
                           ",\n  \"pp\": %" G_GINT64_FORMAT ",\n  \"dp\": %" G_GINT64_FORMAT
                           ",\n  \"cp\": %" G_GINT64_FORMAT ",\n  \"ep\": %" G_GINT64_FORMAT,
                           paro_topology_n_gpus(s->topology), s->tp, s->pp, s->dp, s->cp, s->ep);
}

static void json_field(GString *out, const char *key, double value, gboolean last)
{
    g_string_append_printf(out, "\"%s\": ", key);
    paro_report_number(out, value);
    if (!last)
        g_string_append(out, ", ");
}

static void json(const ParoGuideline *guideline, GString *out)
{
    const ParoScenarioDerived *g = guideline->derived;
    const GArray *results = guideline->results;
    const ParoScenario *s = g->scenario;
    gboolean offload = paro_scenario_offloads(s);
    g_string_append(out, "{\n  \"parosim\": ");
    paro_report_json_string(out, PARO_VERSION);
    g_string_append_printf(out, ",\n  \"schema_version\": %d", PARO_SCHEMA_VERSION);
    g_string_append(out, ",\n  \"scenario\": ");
    paro_report_json_string(out, s->name);
    g_string_append(out, ",\n  \"model\": ");
    paro_report_json_string(out, s->model->name);
    g_string_append(out, ",\n  \"topology\": ");
    paro_report_json_string(out, s->topology->name);
    g_string_append_printf(out, ",\n  \"n\": %" G_GINT64_FORMAT ",\n  \"m\": %" G_GINT64_FORMAT,
                           g->sizes.n, g->sizes.m);
    paro_report_json_degrees(g, out);
    g_string_append(out, ",\n  \"params\": ");
    paro_report_number(out, g->sizes.params);
    g_string_append(out, ",\n  \"trainable_params\": ");
    paro_report_number(out, g->sizes.trainable);
    g_string_append_printf(out, ",\n  \"accumulation\": %" G_GINT64_FORMAT,
                           s->training.accumulation);
    g_string_append_printf(out, ",\n  \"algorithm\": \"%s\"", paro_algorithm_names[s->algorithm]);
    g_string_append(out, ",\n  \"links\": {");
    json_field(out, "intra_bandwidth", g->comm.intra_Bps, FALSE);
    json_field(out, "intra_latency", g->comm.intra_lat_s, FALSE);
    json_field(out, "inter_bandwidth", g->comm.inter_Bps, FALSE);
    json_field(out, "inter_latency", g->comm.inter_lat_s, TRUE);
    g_string_append(out, "}");
    paro_report_framework_json(s, &g->compute, out);
    g_string_append(out, ",\n  \"gpu_memory\": ");
    paro_report_number(out, s->topology->gpu.memory_bytes);
    g_string_append(out, ",\n  \"strategies\": [\n");
    for (guint i = 0; i < results->len; i++) {
        const ParoStrategyResult *r = &g_array_index(results, ParoStrategyResult, i);
        paro_report_json_strategy(out, r->strategy);
        g_string_append_printf(out, "], \"rank\": %d,\n     \"memory\": {", r->rank);
        json_field(out, "params", round(r->mem_params), FALSE);
        json_field(out, "grads", round(r->mem_grads), FALSE);
        json_field(out, "optimizer", round(r->mem_optimizer), FALSE);
        json_field(out, "model_states", round(r->mem_model_states), FALSE);
        json_field(out, "activations", round(r->mem_activations), FALSE);
        json_field(out, "buffers", round(r->mem_buffers), FALSE);
        json_field(out, "comm_buffers", round(r->mem_comm_buffers), FALSE);
        json_field(out, "workspace", round(r->mem_workspace), FALSE);
        json_field(out, "overhead", round(r->mem_overhead), FALSE);
        json_field(out, "total", round(r->mem_total), !offload);
        if (offload) /* host memory a node, only where something is offloaded */
            json_field(out, "host", round(r->mem_host), TRUE);
        g_string_append(out, "},\n     \"traffic\": {");
        json_field(out, "intra", round(r->traffic_intra), FALSE);
        json_field(out, "inter", round(r->traffic_inter), TRUE);
        g_string_append(out, "},\n     \"time\": {");
        json_field(out, "compute", r->t_compute, FALSE);
        json_field(out, "optimizer", r->t_optimizer, FALSE);
        json_field(out, "comm", r->t_comm, FALSE);
        json_field(out, "step", r->t_step, FALSE);
        json_field(out, "serial", r->t_serial, FALSE);
        json_field(out, "param", r->t_param, FALSE);
        json_field(out, "gradient", r->t_gradient, FALSE);
        json_field(out, "sync_grad", r->t_sync_grad, FALSE);
        json_field(out, "sync_param", r->t_sync_param, TRUE);
        g_string_append_printf(out, "},\n     \"fits\": %s, \"tight\": %s, ",
                               r->fits ? "true" : "false", r->tight ? "true" : "false");
        /* with offloading, which memory overflows: "gpu", "host", "both" or null */
        if (offload) {
            gboolean gpu = r->mem_total > s->topology->gpu.memory_bytes;
            g_string_append_printf(out, "\"overflow\": %s, ",
                                   gpu && !r->host_fits ? "\"both\""
                                   : gpu                ? "\"gpu\""
                                   : !r->host_fits      ? "\"host\""
                                                        : "null");
        }
        g_string_append_printf(out, "\"dominated\": %s, \"effective\": %s}%s\n",
                               r->dominated ? "true" : "false", r->effective ? "true" : "false",
                               i + 1 < results->len ? "," : "");
    }
    g_string_append(out, "  ]\n}\n");
}

static void csv(const ParoGuideline *g, GString *out)
{
    g_string_append(out, "rank,name,aliases,mem_params,mem_grads,mem_optimizer,mem_model_states,"
                         "mem_activations,mem_buffers,mem_comm_buffers,mem_workspace,mem_overhead,"
                         "mem_total,traffic_intra,"
                         "traffic_inter,time_compute,time_optimizer,time_comm,time_step,"
                         "time_serial,time_param,time_gradient,time_sync_grad,time_sync_param,"
                         "fits,dominated,effective,tight,schema_version\n");
    for (guint i = 0; i < g->results->len; i++) {
        const ParoStrategyResult *r = &g_array_index(g->results, ParoStrategyResult, i);
        g_autofree char *aliases = aliases_joined(r->strategy, ";");
        g_string_append_printf(out, "%d,%s,%s", r->rank, r->strategy->name, aliases);
        const double values[] = {round(r->mem_params),
                                 round(r->mem_grads),
                                 round(r->mem_optimizer),
                                 round(r->mem_model_states),
                                 round(r->mem_activations),
                                 round(r->mem_buffers),
                                 round(r->mem_comm_buffers),
                                 round(r->mem_workspace),
                                 round(r->mem_overhead),
                                 round(r->mem_total),
                                 round(r->traffic_intra),
                                 round(r->traffic_inter),
                                 r->t_compute,
                                 r->t_optimizer,
                                 r->t_comm,
                                 r->t_step,
                                 r->t_serial,
                                 r->t_param,
                                 r->t_gradient,
                                 r->t_sync_grad,
                                 r->t_sync_param};
        for (guint k = 0; k < G_N_ELEMENTS(values); k++) {
            g_string_append_c(out, ',');
            paro_report_number(out, values[k]);
        }
        g_string_append_printf(out, ",%s,%s,%s,%s,%d\n", r->fits ? "true" : "false",
                               r->dominated ? "true" : "false", r->effective ? "true" : "false",
                               r->tight ? "true" : "false", PARO_SCHEMA_VERSION);
    }
}

void paro_report_strategies(const ParoGuideline *g, ParoFormat format, GString *out)
{
    switch (format) {
    case PARO_FORMAT_TABLE:
        table(g, out);
        return;
    case PARO_FORMAT_JSON:
        json(g, out);
        return;
    case PARO_FORMAT_CSV:
        csv(g, out);
        return;
    }
}
