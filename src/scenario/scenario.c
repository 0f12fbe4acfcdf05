/* SPDX-License-Identifier: MIT */
/* Scenario loading: read the scenario tree, apply --set overrides that swap the model or
 * topology file, splice the referenced files' trees in (paths relative to the file that
 * names them), apply the other overrides, then walk the combined tree with the schema
 * tables. Working on one combined, located tree is what lets `--set topology.nodes=16`
 * and an error inside the topology file be reported like any other. */
#include "scenario/scenario.h"

#include <string.h>

#include "core/datadir.h"
#include "core/files.h"
#include "net/network.h"
#include "pipe/pipe.h"
#include "scenario/scenario-private.h"
#include "scenario/workload.h"
#include "yaml/loaders.h"
#include "yaml/override.h"
#include "yaml/schema.h"

const char *const paro_precision_names[] = {"bf16", "fp16", "fp32", NULL};
const char *const paro_offload_names[] = {"none", "cpu", "nvme", NULL};
const char *const paro_offload_activation_names[] = {"none", "cpu", NULL};

gboolean paro_scenario_offloads(const ParoScenario *s)
{
    const ParoOffload *o = &s->training.offload;
    return o->optimizer != PARO_OFFLOAD_NONE || o->parameters != PARO_OFFLOAD_NONE ||
           o->activations != PARO_OFFLOAD_NONE;
}

double paro_scenario_memory_headroom_bytes(const ParoScenario *s)
{
    const ParoHeadroom *h = &s->training.memory_headroom;
    return h->bytes ? h->value : h->value * s->topology->gpu.memory_bytes;
}

double paro_scenario_memory_overhead(const ParoScenario *s)
{
    return s->training.memory_overhead >= 0 ? s->training.memory_overhead : PARO_CUDA_CONTEXT_BYTES;
}

gboolean paro_scenario_is_tight(const ParoScenario *s, double peak_bytes)
{
    double memory = s->topology->gpu.memory_bytes;
    return peak_bytes <= memory && peak_bytes > memory - paro_scenario_memory_headroom_bytes(s);
}

double paro_precision_bytes(ParoPrecision p)
{
    return p == PARO_PRECISION_FP32 ? 4.0 : 2.0;
}

void paro_scenario_free(ParoScenario *s)
{
    if (s == NULL)
        return;
    g_free(s->path);
    g_free(s->name);
    g_free(s->description);
    g_clear_pointer(&s->stage_layers, g_array_unref);
    paro_calib_clear(&s->calibration);
    paro_model_free(s->model);
    paro_topology_free(s->topology);
    for (int i = 0; i < PARO_SITE_N; i++)
        g_free(s->sites[i].file);
    g_free(s);
}

const char *const paro_cp_algorithm_names[] = {"ring", "allgather", "alltoall", NULL};

gint64 paro_scenario_dp_ranks(const ParoScenario *s)
{
    return s->dp * s->cp;
}

gint64 paro_scenario_expert_dp_ranks(const ParoScenario *s)
{
    return s->tp * s->dp * s->cp / (s->ep * s->etp);
}

double paro_scenario_tokens_per_rank(const ParoScenario *s)
{
    return (double)s->training.micro_batch * (double)s->training.sequence / (double)s->cp;
}

gint64 paro_scenario_dp_per_node(const ParoScenario *s)
{
    return MIN(s->topology->gpus_per_node / s->tp, paro_scenario_dp_ranks(s));
}

gint64 paro_scenario_module_span(const ParoScenario *s, gint64 n_layers, gint64 module,
                                 gint64 *first)
{
    gint64 v = s->training.pipeline_virtual;
    if (s->stage_layers == NULL) {
        gint64 per = n_layers / (s->pp * v);
        *first = module * per;
        return per;
    }
    /* one count a module, or one a stage split equally over its v modules (module k on
     * stage k mod pp) */
    gboolean per_stage = (gint64)s->stage_layers->len == s->pp && v > 1;
    gint64 count = 0;
    *first = 0;
    for (gint64 k = 0; k <= module; k++) {
        *first += count;
        count = per_stage ? g_array_index(s->stage_layers, gint64, k % s->pp) / v
                          : g_array_index(s->stage_layers, gint64, k);
    }
    return count;
}

gboolean paro_scenario_is_dp_only(const ParoScenario *s)
{
    return s->tp == 1 && s->pp == 1 && s->cp == 1 && s->ep == 1 &&
           s->training.accumulation_order != PARO_PIPE_LAYERED && s->training.pipeline_virtual == 1;
}

/* ---- trainable: {fraction | count | lora: {rank, targets, dropout}} ---- */

static const char *const lora_target_names[] = {"q", "k", "v", "o", "gate", "up", "down", NULL};

static gboolean parse_lora_targets(const ParoNode *node, gpointer ptr, gpointer user_data,
                                   GError **error)
{
    guint *targets = ptr;
    if (!paro_schema_expect_kind(node, PARO_NODE_SEQUENCE, "targets", error))
        return FALSE;
    *targets = 0;
    for (guint i = 0; i < node->values->len; i++) {
        const ParoNode *item = g_ptr_array_index(node->values, i);
        if (!paro_schema_expect_kind(item, PARO_NODE_SCALAR, "a LoRA target", error))
            return FALSE;
        int found = -1;
        for (int j = 0; lora_target_names[j]; j++)
            if (strcmp(lora_target_names[j], item->scalar) == 0)
                found = j;
        if (found < 0) {
            g_autofree char *list = g_strjoinv(", ", (char **)lora_target_names);
            paro_node_error(error, item, PARO_CONFIG_ERROR_RANGE,
                            "unknown LoRA target '%s' (known: %s)", item->scalar, list);
            return FALSE;
        }
        *targets |= 1u << found;
    }
    if (*targets == 0) {
        paro_node_error(error, node, PARO_CONFIG_ERROR_RANGE, "LoRA needs at least one target");
        return FALSE;
    }
    return TRUE;
}

static const ParoField lora_fields[] = {
    {"rank", PARO_FIELD_INT, PARO_FIELD_REQUIRED | PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(ParoTrainable, lora_rank), 0, NULL, NULL, "adapter rank r",
     &paro_limit_lora_rank},
    {"targets", PARO_FIELD_CUSTOM, PARO_FIELD_REQUIRED,
     G_STRUCT_OFFSET(ParoTrainable, lora_targets), 0, NULL, parse_lora_targets,
     "modules with adapters: q, k, v, o, gate, up, down"},
    {"dropout", PARO_FIELD_DOUBLE, PARO_FIELD_UNIT_RANGE,
     G_STRUCT_OFFSET(ParoTrainable, lora_dropout), 0, NULL, NULL,
     "dropout on the adapters' inputs (default 0; MLPerf's Llama-2-70B LoRA: 0.1)"},
};

static gboolean parse_lora(const ParoNode *node, gpointer ptr, gpointer record, GError **error)
{
    return paro_schema_apply(node, "lora", lora_fields, G_N_ELEMENTS(lora_fields), record, NULL,
                             NULL, error);
}

static const ParoField trainable_fields[] = {
    {"fraction", PARO_FIELD_RATIO, PARO_FIELD_POSITIVE | PARO_FIELD_UNIT_RANGE,
     G_STRUCT_OFFSET(ParoTrainable, fraction), 0, NULL, NULL, "Psi'/Psi, e.g. 1/16"},
    {"count", PARO_FIELD_DOUBLE, PARO_FIELD_POSITIVE, G_STRUCT_OFFSET(ParoTrainable, count), 0,
     NULL, NULL, "Psi', trainable parameters", &paro_limit_parameters},
    {"lora", PARO_FIELD_CUSTOM, 0, 0, 0, NULL, parse_lora, "LoRA adapters on a frozen base"},
};

static gboolean parse_trainable(const ParoNode *node, gpointer ptr, gpointer user_data,
                                GError **error)
{
    ParoTrainable *t = ptr;
    guint64 present = 0;
    if (!paro_schema_apply(node, "trainable", trainable_fields, G_N_ELEMENTS(trainable_fields), t,
                           t, &present, error))
        return FALSE;
    int given = (present & 1) + ((present >> 1) & 1) + ((present >> 2) & 1);
    if (given != 1) {
        paro_node_error(error, node, PARO_CONFIG_ERROR_CONSTRAINT,
                        "'trainable' takes exactly one of fraction, count, lora (got %d)", given);
        return FALSE;
    }
    t->kind = (present & 1)   ? PARO_TRAINABLE_FRACTION
              : (present & 2) ? PARO_TRAINABLE_COUNT
                              : PARO_TRAINABLE_LORA;
    return TRUE;
}

/* ---- training, parallelism, collectives ---- */

/* PARO_FIELD_ENUM fields are written as ints. */
G_STATIC_ASSERT(sizeof(ParoPipeSchedule) == sizeof(int));
G_STATIC_ASSERT(sizeof(ParoPipeAccumulation) == sizeof(int));
G_STATIC_ASSERT(sizeof(ParoPrecision) == sizeof(int));
G_STATIC_ASSERT(sizeof(ParoAttention) == sizeof(int));
G_STATIC_ASSERT(sizeof(ParoRecompute) == sizeof(int));
G_STATIC_ASSERT(sizeof(ParoAlgorithm) == sizeof(int));
G_STATIC_ASSERT(sizeof(ParoNetFidelity) == sizeof(int));
G_STATIC_ASSERT(sizeof(ParoCollModel) == sizeof(int));
G_STATIC_ASSERT(sizeof(ParoCpAlgorithm) == sizeof(int));

static const ParoField moe_fields[] = {
    {"imbalance", PARO_FIELD_DOUBLE, PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(ParoTraining, moe_imbalance), 0, NULL, NULL,
     "the hottest expert's tokens over the mean (default 1: balanced); the all-to-all and the "
     "experts' products wait for it",
     &paro_limit_moe_factor},
    {"capacity_factor", PARO_FIELD_DOUBLE, PARO_FIELD_NONNEG,
     G_STRUCT_OFFSET(ParoTraining, moe_capacity), 0, NULL, NULL,
     "tokens an expert takes at most, in units of its even share (0, the default: dropless); "
     "caps the imbalance",
     &paro_limit_moe_factor},
};

static gboolean parse_moe(const ParoNode *node, gpointer ptr, gpointer record, GError **error)
{
    return paro_schema_apply(node, "moe", moe_fields, G_N_ELEMENTS(moe_fields), ptr, NULL, NULL,
                             error);
}

G_STATIC_ASSERT(sizeof(ParoOffloadTarget) == sizeof(int));

/* training.offload (decisions 80-82): DeepSpeed's offload_optimizer and offload_param
 * devices, and its activation_checkpointing.cpu_checkpointing. */
static const ParoField offload_fields[] = {
    {"optimizer", PARO_FIELD_ENUM, 0, G_STRUCT_OFFSET(ParoOffload, optimizer), 0,
     paro_offload_names, NULL,
     "none (default), cpu (ZeRO-Offload: fp32 master, moments and gradients in host memory, "
     "the step on the CPU) or nvme (ZeRO-Infinity: master and moments on NVMe)"},
    {"parameters", PARO_FIELD_ENUM, 0, G_STRUCT_OFFSET(ParoOffload, parameters), 0,
     paro_offload_names, NULL,
     "none (default), cpu or nvme: the 16-bit parameter shards of a strategy that shards "
     "them, fetched to the GPU before each gather (ZeRO-3 offload_param, FSDP CPUOffload)"},
    {"activations", PARO_FIELD_ENUM, 0, G_STRUCT_OFFSET(ParoOffload, activations), 0,
     paro_offload_activation_names, NULL,
     "none (default) or cpu: the checkpointed layer inputs of full recomputation copied to "
     "host memory after the forward and back before the backward (DeepSpeed's "
     "cpu_checkpointing)"},
};

static gboolean parse_offload(const ParoNode *node, gpointer ptr, gpointer record, GError **error)
{
    return paro_schema_apply(node, "offload", offload_fields, G_N_ELEMENTS(offload_fields), ptr,
                             NULL, NULL, error);
}

/* training.memory_headroom: a plain number is a share of the GPU's memory (0.05), a number
 * with a unit a size (4 GiB), as a quantity's unit is what tells bytes from a count
 * everywhere else; the size is held below the GPU's memory in scenario-check.c, where the
 * topology is known (decision 85). */
static gboolean parse_memory_headroom(const ParoNode *node, gpointer ptr, gpointer record,
                                      GError **error)
{
    ParoHeadroom *h = ptr;
    if (!paro_schema_expect_kind(node, PARO_NODE_SCALAR, "memory_headroom", error))
        return FALSE;
    double v;
    if (paro_units_parse_number(node->scalar, FALSE, &v, NULL)) {
        if (!(v >= 0 && v <= PARO_HEADROOM_MAX_SHARE)) {
            paro_node_error(error, node, PARO_CONFIG_ERROR_RANGE,
                            "'memory_headroom' %s is a share of the GPU's memory, which must lie "
                            "between 0 and %g (a size takes a unit: 4 GiB)",
                            node->scalar, PARO_HEADROOM_MAX_SHARE);
            return FALSE;
        }
        *h = (ParoHeadroom){v, FALSE};
        return TRUE;
    }
    GError *local = NULL;
    if (!paro_units_parse(node->scalar, PARO_QUANTITY_BYTES, &v, &local)) {
        g_prefix_error(&local, "'memory_headroom' takes a share of the GPU's memory (0.05) or a "
                               "size (4 GiB): ");
        paro_node_relocate_error(error, node, local);
        return FALSE;
    }
    if (!(v >= 0)) {
        paro_node_error(error, node, PARO_CONFIG_ERROR_RANGE,
                        "'memory_headroom' must not be negative, got '%s'", node->scalar);
        return FALSE;
    }
    if (!paro_schema_check_limit(&paro_limit_bytes, node, "memory_headroom", v, error))
        return FALSE;
    *h = (ParoHeadroom){v, TRUE};
    return TRUE;
}

static const ParoField pipeline_fields[] = {
    {"schedule", PARO_FIELD_ENUM, 0, G_STRUCT_OFFSET(ParoTraining, pipeline_schedule), 0,
     paro_pipe_schedule_names, NULL, "gpipe, 1f1b, interleaved or modular (default 1f1b)"},
    {"accumulation", PARO_FIELD_ENUM, 0, G_STRUCT_OFFSET(ParoTraining, accumulation_order), 0,
     paro_pipe_accumulation_names, NULL,
     "depth-first (default) or layered: every micro-batch through a layer before the next, "
     "so sharded parameters are gathered and gradients reduced once per step"},
    {"virtual", PARO_FIELD_INT, PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(ParoTraining, pipeline_virtual), 0, NULL, NULL,
     "v: model chunks per stage, interleaved only (default 1)", &paro_limit_virtual},
};

static gboolean parse_pipeline(const ParoNode *node, gpointer ptr, gpointer record, GError **error)
{
    return paro_schema_apply(node, "pipeline", pipeline_fields, G_N_ELEMENTS(pipeline_fields), ptr,
                             NULL, NULL, error);
}

static const ParoField training_fields[] = {
    {"micro_batch", PARO_FIELD_INT, PARO_FIELD_POSITIVE, G_STRUCT_OFFSET(ParoTraining, micro_batch),
     0, NULL, NULL, "sequences per GPU per micro-step", &paro_limit_micro_batch},
    {"sequence", PARO_FIELD_INT, PARO_FIELD_POSITIVE, G_STRUCT_OFFSET(ParoTraining, sequence), 0,
     NULL, NULL, "tokens per sequence", &paro_limit_sequence},
    {"accumulation", PARO_FIELD_INT, PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(ParoTraining, accumulation), 0, NULL, NULL, "A: micro-steps per global step",
     &paro_limit_accumulation},
    {"precision", PARO_FIELD_ENUM, 0, G_STRUCT_OFFSET(ParoTraining, precision), 0,
     paro_precision_names, NULL, "parameters and gradients: bf16, fp16 or fp32"},
    {"optimizer_bytes", PARO_FIELD_DOUBLE, PARO_FIELD_NONNEG,
     G_STRUCT_OFFSET(ParoTraining, optimizer_bytes), 0, NULL, NULL,
     "K: optimizer-state bytes per trainable parameter (mixed-precision Adam: 12)"},
    {"trainable", PARO_FIELD_CUSTOM, 0, G_STRUCT_OFFSET(ParoTraining, trainable), 0, NULL,
     parse_trainable, "fraction, count or lora"},
    {"recompute", PARO_FIELD_ENUM, 0, G_STRUCT_OFFSET(ParoTraining, recompute), 0,
     paro_recompute_names, NULL,
     "activation recomputation: none, selective (the attention core), full (each layer "
     "from its input) or op (torchtitan's per-op selective checkpointing: every second "
     "product and the elementwise kernels run again)"},
    {"recompute_every", PARO_FIELD_INT, PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(ParoTraining, recompute_every), 0, NULL, NULL,
     "with recompute: full, only every k-th layer is recomputed (layers k, 2k, ... counted "
     "from 1; the others keep all their activations): torchtitan's selective layer "
     "checkpointing, selective_ac_option k (default 1: every layer)",
     &paro_limit_layers},
    {"efficiency", PARO_FIELD_DOUBLE, PARO_FIELD_NONNEG | PARO_FIELD_UNIT_RANGE,
     G_STRUCT_OFFSET(ParoTraining, efficiency), 0, NULL, NULL,
     "one flat share of peak FLOP/s for every GEMM (default 0: none, the GPU's shape-aware "
     "model of docs/compute.md)"},
    {"attention", PARO_FIELD_ENUM, 0, G_STRUCT_OFFSET(ParoTraining, attention), 0,
     paro_attention_names, NULL,
     "flash (default: FlashAttention-2, no s x s scores kept), flash1 (FlashAttention-1's "
     "kernels), cudnn (cuDNN's fused attention: Transformer Engine on Hopper) or eager "
     "(scores, softmax and dropout kept for the backward)"},
    {"fp8", PARO_FIELD_BOOL, 0, G_STRUCT_OFFSET(ParoTraining, fp8), 0, NULL, NULL,
     "the linear layers' products in fp8 as Transformer Engine runs them (casts, fp8 weight "
     "copies); attention and the output head stay 16-bit (default false; Hopper or later)"},
    {"fp8_params", PARO_FIELD_BOOL, 0, G_STRUCT_OFFSET(ParoTraining, fp8_params), 0, NULL, NULL,
     "with fp8: the linear layers' weights held in fp8 only, the fp8 weight and its transpose "
     "standing for the 16-bit weight (Transformer Engine's fp8_model_init, Megatron's "
     "--fp8-param-gather, NeMo's fp8_params): 2 bytes a weight, not 4 (default false)"},
    {"fp8_attention", PARO_FIELD_BOOL, 0, G_STRUCT_OFFSET(ParoTraining, fp8_attention), 0, NULL,
     NULL,
     "with fp8 and attention: cudnn, the attention in fp8 (Transformer Engine's "
     "fp8_dot_product_attention, NeMo's FP8_DPA): its query, key, value and output kept in "
     "fp8 for the backward, one byte each; timed at the 16-bit rate (default false)"},
    {"memory_overhead", PARO_FIELD_QUANTITY, PARO_FIELD_NONNEG,
     G_STRUCT_OFFSET(ParoTraining, memory_overhead), PARO_QUANTITY_BYTES, NULL, NULL,
     "per-GPU memory outside the model: CUDA context, allocator, NCCL buffers", &paro_limit_bytes},
    {"memory_headroom", PARO_FIELD_CUSTOM, 0, G_STRUCT_OFFSET(ParoTraining, memory_headroom), 0,
     NULL, parse_memory_headroom,
     "the caching allocator's margin: a share of the GPU's memory (default 0.05) or a size "
     "(4 GiB); a peak that fits but leaves less is 'tight'"},
    {"overlap", PARO_FIELD_BOOL, 0, G_STRUCT_OFFSET(ParoTraining, overlap), 0, NULL, NULL,
     "compute and communication on separate streams (false: all in sequence)"},
    {"sm_contention", PARO_FIELD_BOOL, 0, G_STRUCT_OFFSET(ParoTraining, sm_contention), 0, NULL,
     NULL,
     "a data-parallel collective's NCCL kernels hold one SM per channel, which compute running "
     "beside it lacks (default true; false: overlapped compute runs at full speed)"},
    {"prefetch", PARO_FIELD_INT, PARO_FIELD_NONNEG, G_STRUCT_OFFSET(ParoTraining, prefetch), 0,
     NULL, NULL, "layers whose parameters are gathered ahead of use", &paro_limit_prefetch},
    {"bucket", PARO_FIELD_QUANTITY, PARO_FIELD_NONNEG, G_STRUCT_OFFSET(ParoTraining, bucket_bytes),
     PARO_QUANTITY_BYTES, NULL, NULL, "gradient reduce-scatter bucket size", &paro_limit_bytes},
    {"pipeline", PARO_FIELD_CUSTOM, 0, 0, 0, NULL, parse_pipeline,
     "schedule of the pipeline stages (gpipe, 1f1b, interleaved, modular), virtual chunks, "
     "accumulation order"},
    {"moe", PARO_FIELD_CUSTOM, 0, 0, 0, NULL, parse_moe,
     "a mixture of experts' routing: imbalance, capacity_factor"},
    {"offload", PARO_FIELD_CUSTOM, 0, G_STRUCT_OFFSET(ParoTraining, offload), 0, NULL,
     parse_offload,
     "optimizer, parameters (none, cpu, nvme) and activations (none, cpu) "
     "moved off the GPU"},
};

static gboolean parse_training(const ParoNode *node, gpointer ptr, gpointer user_data,
                               GError **error)
{
    return paro_schema_apply(node, "training", training_fields, G_N_ELEMENTS(training_fields), ptr,
                             NULL, NULL, error);
}

/* parallelism.stage_layers: a sequence of counts, or one scalar "5,6,6,5" (for --set);
 * checked against pp and the model's layers in check_stage_layers. */
static gboolean parse_stage_layers(const ParoNode *node, gpointer ptr, gpointer user_data,
                                   GError **error)
{
    GArray **out = ptr;
    g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func((GDestroyNotify)paro_node_free);
    if (node->kind == PARO_NODE_SCALAR) {
        g_auto(GStrv) parts = g_strsplit(node->scalar, ",", -1);
        for (guint i = 0; parts[i] != NULL; i++)
            g_ptr_array_add(items, paro_node_new_scalar(g_strstrip(parts[i]), node->source,
                                                        node->line, node->column));
    } else if (!paro_schema_expect_kind(node, PARO_NODE_SEQUENCE, "stage_layers", error)) {
        return FALSE;
    }
    const GPtrArray *list = node->kind == PARO_NODE_SCALAR ? items : node->values;
    g_autoptr(GArray) layers = g_array_sized_new(FALSE, FALSE, sizeof(gint64), list->len);
    for (guint i = 0; i < list->len; i++) {
        const ParoNode *item = g_ptr_array_index(list, i);
        gint64 count;
        if (!paro_schema_expect_kind(item, PARO_NODE_SCALAR, "a stage's or module's layers",
                                     error) ||
            !paro_schema_parse_int(item, "a stage's or module's layers", &count, error) ||
            !paro_schema_check_limit(&paro_limit_layers, item, "a stage's or module's layers",
                                     (double)count, error))
            return FALSE; /* (the limit's least is one layer) */
        g_array_append_val(layers, count);
    }
    if (list->len == 0) {
        paro_node_error(error, node, PARO_CONFIG_ERROR_RANGE, "stage_layers is empty");
        return FALSE;
    }
    g_clear_pointer(out, g_array_unref);
    *out = g_steal_pointer(&layers);
    return TRUE;
}

static const ParoField parallelism_fields[] = {
    {"group", PARO_FIELD_INT, PARO_FIELD_POSITIVE, G_STRUCT_OFFSET(ParoScenario, group), 0, NULL,
     NULL, "m: data-parallel ranks per PaRO group; default: those on a node", &paro_limit_gpus},
    {"tp", PARO_FIELD_INT, PARO_FIELD_POSITIVE, G_STRUCT_OFFSET(ParoScenario, tp), 0, NULL, NULL,
     "tensor-parallel degree, inside a node (default 1)", &paro_limit_gpus_per_node},
    {"pp", PARO_FIELD_INT, PARO_FIELD_POSITIVE, G_STRUCT_OFFSET(ParoScenario, pp), 0, NULL, NULL,
     "pipeline-parallel stages (default 1)", &paro_limit_layers},
    {"dp", PARO_FIELD_INT, PARO_FIELD_POSITIVE, G_STRUCT_OFFSET(ParoScenario, dp), 0, NULL, NULL,
     "data-parallel degree (default GPUs / (tp*pp))", &paro_limit_gpus},
    {"stage_layers", PARO_FIELD_CUSTOM, 0, G_STRUCT_OFFSET(ParoScenario, stage_layers), 0, NULL,
     parse_stage_layers,
     "the layers of each pipeline stage, first to last, when they differ: pp counts (with "
     "training.pipeline.virtual v, each split equally over the stage's v modules), or pp x v "
     "counts, one a module in layer order (module k on stage k mod pp); summing to the "
     "model's layers; the first module also runs the embeddings, the last the output head; "
     "default: layers / (pp x v) each"},
    {"sequence_parallel", PARO_FIELD_BOOL, 0, G_STRUCT_OFFSET(ParoScenario, sequence_parallel), 0,
     NULL, NULL, "Megatron sequence parallelism with tp (default false)"},
    {"cp", PARO_FIELD_INT, PARO_FIELD_POSITIVE, G_STRUCT_OFFSET(ParoScenario, cp), 0, NULL, NULL,
     "context-parallel degree: each sequence split over cp ranks, placed after TP (default 1)",
     &paro_limit_gpus},
    {"cp_algorithm", PARO_FIELD_ENUM, 0, G_STRUCT_OFFSET(ParoScenario, cp_algorithm), 0,
     paro_cp_algorithm_names, NULL,
     "ring (default: Transformer Engine's ring attention), allgather (torchtitan, Llama 3) or "
     "alltoall (DeepSpeed-Ulysses)"},
    {"ep", PARO_FIELD_INT, PARO_FIELD_POSITIVE, G_STRUCT_OFFSET(ParoScenario, ep), 0, NULL, NULL,
     "expert-parallel degree: the routed experts split over ep of the dp x cp ranks (default 1)",
     &paro_limit_gpus},
    {"etp", PARO_FIELD_INT, PARO_FIELD_POSITIVE, G_STRUCT_OFFSET(ParoScenario, etp), 0, NULL, NULL,
     "expert tensor parallelism: tp (default, as Megatron-Core's) or 1 (whole experts, the "
     "ranks folded into ep x expert-dp)",
     &paro_limit_gpus_per_node},
};

static gboolean parse_parallelism(const ParoNode *node, gpointer ptr, gpointer record,
                                  GError **error)
{
    return paro_schema_apply(node, "parallelism", parallelism_fields,
                             G_N_ELEMENTS(parallelism_fields), record, NULL, NULL, error);
}

static const ParoField collectives_fields[] = {
    {"algorithm", PARO_FIELD_ENUM, 0, G_STRUCT_OFFSET(ParoScenario, algorithm), 0,
     paro_algorithm_names, NULL,
     "global collectives: auto (default: NCCL's choice), ring, tree, nvls, nvlstree, or "
     "PaRO's hierarchical and ho-ring"},
    {"model", PARO_FIELD_ENUM, 0, G_STRUCT_OFFSET(ParoScenario, coll_model), 0,
     paro_coll_model_names, NULL,
     "what times a collective: nccl (default: NCCL's cost model) or flow (its transfers "
     "simulated on the links)"},
    {"chunks", PARO_FIELD_INT, PARO_FIELD_POSITIVE, G_STRUCT_OFFSET(ParoScenario, chunks), 0, NULL,
     NULL, "ho-ring pipeline chunks", &paro_limit_chunks},
    {"network", PARO_FIELD_ENUM, 0, G_STRUCT_OFFSET(ParoScenario, network), 0,
     paro_net_fidelity_names, NULL,
     "the flow model's links: maxmin (link sharing) or analytic (alpha-beta)"},
};

static gboolean parse_collectives(const ParoNode *node, gpointer ptr, gpointer record,
                                  GError **error)
{
    return paro_schema_apply(node, "collectives", collectives_fields,
                             G_N_ELEMENTS(collectives_fields), record, NULL, NULL, error);
}

static gboolean parse_model(const ParoNode *node, gpointer ptr, gpointer record, GError **error)
{
    ParoModel **out = ptr;
    *out = paro_model_from_node(node, error);
    return *out != NULL;
}

static gboolean parse_topology(const ParoNode *node, gpointer ptr, gpointer record, GError **error)
{
    ParoTopology **out = ptr;
    *out = paro_topology_from_node(node, error);
    return *out != NULL;
}

static gboolean parse_calibration(const ParoNode *node, gpointer ptr, gpointer record,
                                  GError **error)
{
    return paro_calib_from_node(node, ptr, error);
}

static gboolean parse_compression(const ParoNode *node, gpointer ptr, gpointer record,
                                  GError **error)
{
    return paro_compress_from_node(node, ptr, error);
}

static const ParoField scenario_fields[] = {
    {"kind", PARO_FIELD_HEADER, 0, 0, 0, NULL, NULL, "scenario"},
    {"schema", PARO_FIELD_HEADER, 0, 0, 0, NULL, NULL, "1"},
    {"name", PARO_FIELD_STRING, 0, G_STRUCT_OFFSET(ParoScenario, name), 0, NULL, NULL,
     "short name; default: the file name"},
    {"description", PARO_FIELD_STRING, 0, G_STRUCT_OFFSET(ParoScenario, description), 0, NULL, NULL,
     "free text"},
    {"model", PARO_FIELD_CUSTOM, PARO_FIELD_REQUIRED, G_STRUCT_OFFSET(ParoScenario, model), 0, NULL,
     parse_model, "model file (path relative to this file) or inline model"},
    {"topology", PARO_FIELD_CUSTOM, PARO_FIELD_REQUIRED, G_STRUCT_OFFSET(ParoScenario, topology), 0,
     NULL, parse_topology, "topology file or inline topology"},
    {"parallelism", PARO_FIELD_CUSTOM, 0, 0, 0, NULL, parse_parallelism,
     "tp, pp, dp degrees and PaRO group size"},
    {"training", PARO_FIELD_CUSTOM, 0, G_STRUCT_OFFSET(ParoScenario, training), 0, NULL,
     parse_training, "batch, accumulation, precision, trainable share"},
    {"collectives", PARO_FIELD_CUSTOM, 0, 0, 0, NULL, parse_collectives,
     "algorithm for global collectives"},
    {"calibration", PARO_FIELD_CUSTOM, 0, G_STRUCT_OFFSET(ParoScenario, calibration), 0, NULL,
     parse_calibration, "calibration file: measured compute rates replacing peak x efficiency"},
    {"compression", PARO_FIELD_CUSTOM, 0, G_STRUCT_OFFSET(ParoScenario, compression), 0, NULL,
     parse_compression, "compression of collectives: a preset and/or a compressor per tensor kind"},
    {"framework", PARO_FIELD_CUSTOM, 0, G_STRUCT_OFFSET(ParoScenario, framework), 0, NULL,
     paro_framework_parse,
     "which framework's schedule: ideal (default), deepspeed, fsdp, megatron, or a mapping "
     "{name, reduce_on_compute, bucket_allreduce, reduce_precision, fused_softmax, "
     "blocking_p2p, tp_overlap, tp_async_dgrad, grad_passes, fused_loss, fused_optimizer, "
     "fused_swiglu, fused_norm, "
     "packed_lora, fsdp2, rope, version}"},
};

/* training.bucket and training.prefetch the scenario does not write take the framework
 * profile's defaults. */
static void apply_framework_defaults(ParoScenario *s, const ParoNode *root)
{
    const ParoNode *training = paro_node_lookup(root, "training");
    gboolean mapping = training && training->kind == PARO_NODE_MAPPING;
    if (!mapping || !paro_node_lookup(training, "bucket"))
        s->training.bucket_bytes = paro_framework_bucket_bytes(
            &s->framework, paro_precision_bytes(s->training.precision), s->training.bucket_bytes);
    if (!mapping || !paro_node_lookup(training, "prefetch"))
        s->training.prefetch = paro_framework_prefetch(
            &s->framework, paro_model_layer_params(s->model) / (double)s->tp, s->training.prefetch);
}

/* Replaces a scalar `model:` or `topology:` reference by the tree of the file it names:
 * relative to @base_dir when given (YAML text, whose label only names it), else to the
 * folder of the file that wrote it; a --set path is relative to the current directory. */
static gboolean resolve_reference(ParoNode *root, const char *key, const char *base_dir,
                                  GError **error)
{
    for (guint i = 0; i < root->keys->len; i++) {
        const ParoNode *k = g_ptr_array_index(root->keys, i);
        ParoNode *v = g_ptr_array_index(root->values, i);
        if (strcmp(k->scalar, key) != 0 || v->kind != PARO_NODE_SCALAR)
            continue;
        g_autofree char *path = NULL;
        if (g_path_is_absolute(v->scalar) || v->source[0] == '-') {
            path = g_strdup(v->scalar);
        } else if (base_dir != NULL) {
            path = g_build_filename(base_dir, v->scalar, NULL);
        } else {
            g_autofree char *dir = g_path_get_dirname(v->source);
            path = g_build_filename(dir, v->scalar, NULL);
        }
        /* a bare name that is no file beside the scenario: a shipped model or topology
         * (model: llama-13b), as `parosim run NAME` finds a scenario; never a file or
         * folder of that name in the current directory (a checkpoint folder `llama-13b`
         * there hid the shipped model, issue #42) */
        static const char *const folders[][2] = {{"model", "models"}, {"topology", "topologies"}};
        for (guint f = 0; f < G_N_ELEMENTS(folders); f++)
            if (strcmp(key, folders[f][0]) == 0 && !g_file_test(path, G_FILE_TEST_IS_REGULAR)) {
                g_autofree char *found = paro_data_find_shipped(folders[f][1], v->scalar);
                if (found != NULL) {
                    g_free(path);
                    path = g_steal_pointer(&found);
                }
            }
        g_autoptr(GError) local = NULL;
        if (!paro_file_check_input(path, &paro_limit_input_bytes, &local)) {
            paro_node_error(error, v, PARO_CONFIG_ERROR_REFERENCE,
                            "%s file '%s' %s (looked for %s)", key, v->scalar, local->message,
                            path);
            return FALSE;
        }
        ParoNode *tree = paro_yaml_load_file(path, error);
        if (tree == NULL)
            return FALSE;
        tree->ref_path = g_strdup(path);
        paro_node_replace_value(root, i, tree);
        return TRUE;
    }
    return TRUE;
}

static gboolean is_reference_override(const ParoOverride *o)
{
    return o->path[1] == NULL &&
           (strcmp(o->path[0], "model") == 0 || strcmp(o->path[0], "topology") == 0 ||
            strcmp(o->path[0], "calibration") == 0);
}

ParoScenario *paro_scenario_load(const char *path, const char *const *overrides, GError **error)
{
    g_return_val_if_fail(path != NULL, NULL);
    /* a bare name finds a shipped scenario from any directory */
    g_autofree char *found = paro_data_find_scenario(path);
    ParoNode *root = paro_yaml_load_file(found, error);
    return root ? paro_scenario_from_node(root, found, overrides, error) : NULL;
}

static ParoScenario *from_node_in(ParoNode *root_in, const char *path, const char *base_dir,
                                  const char *const *overrides, GError **error);

ParoScenario *paro_scenario_load_data(const char *yaml, const char *label, const char *base_dir,
                                      const char *const *overrides, GError **error)
{
    g_return_val_if_fail(yaml != NULL && label != NULL, NULL);
    ParoNode *root = paro_yaml_load_data(yaml, strlen(yaml), label, error);
    return root ? from_node_in(root, label, base_dir ? base_dir : ".", overrides, error) : NULL;
}

ParoScenario *paro_scenario_from_node(ParoNode *root, const char *path,
                                      const char *const *overrides, GError **error)
{
    return from_node_in(root, path, NULL, overrides, error);
}

static ParoScenario *from_node_in(ParoNode *root_in, const char *path, const char *base_dir,
                                  const char *const *overrides, GError **error)
{
    g_autoptr(ParoNode) root = root_in;
    if (!paro_schema_check_header(root, "scenario", error))
        return NULL;

    g_autoptr(GPtrArray) parsed =
        g_ptr_array_new_with_free_func((GDestroyNotify)paro_override_free);
    for (int i = 0; overrides && overrides[i]; i++) {
        ParoOverride *o = paro_override_parse(overrides[i], i + 1, error);
        if (o == NULL)
            return NULL;
        g_ptr_array_add(parsed, o);
    }
    /* Swapping a whole file comes first, so later overrides reach into the new file. */
    for (guint i = 0; i < parsed->len; i++) {
        const ParoOverride *o = g_ptr_array_index(parsed, i);
        if (is_reference_override(o) && !paro_override_apply(root, o, 0, error))
            return NULL;
    }
    if (!resolve_reference(root, "model", base_dir, error) ||
        !resolve_reference(root, "topology", base_dir, error) ||
        !resolve_reference(root, "calibration", base_dir, error))
        return NULL;
    for (guint i = 0; i < parsed->len; i++) {
        const ParoOverride *o = g_ptr_array_index(parsed, i);
        if (!is_reference_override(o) && !paro_override_apply(root, o, 0, error))
            return NULL;
    }
    /* again: --set schema=2 or kind=banana reach the header too (issue #16 W10) */
    if (!paro_schema_check_header(root, "scenario", error))
        return NULL;

    g_autoptr(ParoScenario) s = g_new0(ParoScenario, 1);
    s->training = (ParoTraining){
        .micro_batch = 1,
        .sequence = 2048,
        .accumulation = 1,
        .precision = PARO_PRECISION_BF16,
        .optimizer_bytes = 12,
        .trainable = (ParoTrainable)PARO_TRAINABLE_INIT,
        .recompute = PARO_RECOMPUTE_NONE,
        .recompute_every = 1,
        .efficiency = 0,
        .attention = PARO_ATTENTION_FLASH,
        .memory_overhead = -1, /* unset: the CUDA context (paro_scenario_memory_overhead) */
        .memory_headroom = {PARO_HEADROOM_DEFAULT_SHARE, FALSE},
        .overlap = TRUE,
        .sm_contention = TRUE,
        .prefetch = 1,
        .bucket_bytes = 25.0 * 1048576.0,
    };
    s->algorithm = PARO_ALGO_AUTO;
    s->coll_model = PARO_COLL_MODEL_NCCL;
    s->chunks = 8;
    s->tp = 1;
    s->pp = 1;
    s->cp = 1;
    s->ep = 1;
    s->cp_algorithm = PARO_CP_RING;
    s->training.moe_imbalance = 1.0;
    s->training.pipeline_schedule = PARO_PIPE_1F1B;
    s->training.pipeline_virtual = 1;
    s->training.accumulation_order = PARO_PIPE_DEPTH_FIRST;
    paro_compress_preset(&s->compression, PARO_COMPRESS_NONE);
    s->framework = (ParoFramework)PARO_FRAMEWORK_INIT;
    if (!paro_schema_apply(root, "scenario", scenario_fields, G_N_ELEMENTS(scenario_fields), s, s,
                           NULL, error))
        return NULL;
    paro_calib_apply(&s->calibration, s->coll_model, s->topology);
    if (!paro_scenario_check(s, root, error))
        return NULL;
    apply_framework_defaults(s, root);
    paro_workload_record_sites(s, root);
    s->path = g_strdup(path);
    if (s->name == NULL) {
        g_autofree char *base = g_path_get_basename(path);
        char *dot = strrchr(base, '.');
        if (dot)
            *dot = '\0';
        s->name = g_strdup(base);
    }
    if (!paro_workload_check_clock(s, root, error))
        return NULL;
    return g_steal_pointer(&s);
}
