/* SPDX-License-Identifier: MIT */
/* Framework profiles (framework.h); the defaults and their sources are docs/frameworks.md's. */
#include "scenario/framework.h"

#include <math.h>
#include <string.h>

#include "yaml/schema.h"

const char *const paro_framework_names[] = {"ideal", "deepspeed", "fsdp", "megatron", NULL};
const char *const paro_setting_names[] = {"default", "false", "true", NULL};
const char *const paro_reduce_precision_names[] = {"default", "bf16", "fp16", "fp32", NULL};
const char *const paro_rope_names[] = {"default", "fused", "complex", "rotate_half", NULL};

/* DeepSpeed zero/config.py: reduce_bucket_size and stage3_prefetch_bucket_size, elements. */
#define DEEPSPEED_REDUCE_BUCKET_ELEMENTS 5e8
#define DEEPSPEED_PREFETCH_ELEMENTS 5e7

/* "MAJOR.MINOR" or "MAJOR.MINOR.PATCH", each part a number below 1000. */
static gboolean parse_version(const ParoNode *node, gpointer ptr, gpointer user_data,
                              GError **error)
{
    g_auto(GStrv) parts = node->kind == PARO_NODE_SCALAR ? g_strsplit(node->scalar, ".", 4) : NULL;
    guint n = parts ? g_strv_length(parts) : 0;
    gint64 value = 0;
    gboolean ok = n == 2 || n == 3;
    for (guint i = 0; ok && i < 3; i++) {
        guint64 part = 0;
        ok = i >= n || (parts[i][0] != '\0' && strspn(parts[i], "0123456789") == strlen(parts[i]) &&
                        g_ascii_string_to_unsigned(parts[i], 10, 0, 999, &part, NULL));
        value = value * 1000 + (gint64)part;
    }
    if (!ok) {
        paro_node_error(error, node, PARO_CONFIG_ERROR_TYPE,
                        "'version' must read MAJOR.MINOR or MAJOR.MINOR.PATCH, such as 0.10.0");
        return FALSE;
    }
    *(gint64 *)ptr = value;
    return TRUE;
}

static const ParoField framework_fields[] = {
    /* Not required: `--set framework.KEY=VALUE` on a scenario without a framework keeps the
     * ideal profile and changes one of its keys. */
    {"name", PARO_FIELD_ENUM, 0, G_STRUCT_OFFSET(ParoFramework, kind), 0, paro_framework_names,
     NULL, "ideal (default), deepspeed, fsdp or megatron"},
    {"reduce_on_compute", PARO_FIELD_ENUM, 0, G_STRUCT_OFFSET(ParoFramework, reduce_on_compute), 0,
     paro_setting_names, NULL,
     "gradient reductions block the compute stream (default: the profile's; DeepSpeed "
     "stages 1-2: true)"},
    {"bucket_allreduce", PARO_FIELD_ENUM, 0, G_STRUCT_OFFSET(ParoFramework, bucket_allreduce), 0,
     paro_setting_names, NULL,
     "a gradient bucket is all-reduced and each rank keeps its part (default: the profile's; "
     "DeepSpeed stages 1-2: true)"},
    {"reduce_precision", PARO_FIELD_ENUM, 0, G_STRUCT_OFFSET(ParoFramework, reduce_precision), 0,
     paro_reduce_precision_names, NULL,
     "element type of gradient reductions (default: training.precision; FSDP's "
     "MixedPrecision.reduce_dtype)"},
    {"fused_softmax", PARO_FIELD_ENUM, 0, G_STRUCT_OFFSET(ParoFramework, fused_softmax), 0,
     paro_setting_names, NULL,
     "eager attention's scale, mask and softmax run as one kernel (default: the profile's; "
     "Megatron's --masked-softmax-fusion: true; fsdp: false)"},
    {"blocking_p2p", PARO_FIELD_ENUM, 0, G_STRUCT_OFFSET(ParoFramework, blocking_p2p), 0,
     paro_setting_names, NULL,
     "a pipeline send holds its stage's compute until delivered (default: the profile's; "
     "megatron and deepspeed: true)"},
    {"tp_overlap", PARO_FIELD_ENUM, 0, G_STRUCT_OFFSET(ParoFramework, tp_overlap), 0,
     paro_setting_names, NULL,
     "tensor-parallel collectives overlap the products they feed, one of tp chunks exposed "
     "(Megatron-Core's tp_comm_overlap; default false)"},
    {"tp_async_dgrad", PARO_FIELD_ENUM, 0, G_STRUCT_OFFSET(ParoFramework, tp_async_dgrad), 0,
     paro_setting_names, NULL,
     "each column-parallel product's backward input-gradient collective runs beside its "
     "weight-gradient product (default: the profile's; megatron: true, except version 1.0 "
     "to 2.6)"},
    {"grad_passes", PARO_FIELD_ENUM, 0, G_STRUCT_OFFSET(ParoFramework, grad_passes), 0,
     paro_setting_names, NULL,
     "the gradient handling's elementwise passes after each micro-batch's backward (default: "
     "the profile's; fsdp: flat gradient, cast, pre-division; deepspeed with bf16 and whole "
     "gradients: BF16_Optimizer's fp32 accumulation; deepspeed before 0.13 at stages 0-1 and "
     "megatron 1.0 to 2.6: each later micro-batch's gradients added by a kernel of their own)"},
    {"fused_loss", PARO_FIELD_ENUM, 0, G_STRUCT_OFFSET(ParoFramework, fused_loss), 0,
     paro_setting_names, NULL,
     "the loss over the logits is one fused kernel forward and one backward in 16 bits "
     "(flash-attn's CrossEntropyLoss, llm-foundry's default; default false: unfused fp32)"},
    {"fused_optimizer", PARO_FIELD_ENUM, 0, G_STRUCT_OFFSET(ParoFramework, fused_optimizer), 0,
     paro_setting_names, NULL,
     "the optimizer step is one fused kernel (default: the profile's; deepspeed, megatron, "
     "ideal: true; fsdp: false, PyTorch's AdamW as eight elementwise passes)"},
    {"fused_swiglu", PARO_FIELD_ENUM, 0, G_STRUCT_OFFSET(ParoFramework, fused_swiglu), 0,
     paro_setting_names, NULL,
     "a gated MLP's SiLU and product are one fused kernel keeping only its input (default: "
     "the profile's; megatron: true, Megatron-Core's bias_swiglu_impl; else false, PyTorch's "
     "kernels also keep the SiLU's output)"},
    {"fused_norm", PARO_FIELD_ENUM, 0, G_STRUCT_OFFSET(ParoFramework, fused_norm), 0,
     paro_setting_names, NULL,
     "an RMSNorm is one kernel forward and one backward (default true in every profile; "
     "false: PyTorch's operators as HuggingFace's LlamaRMSNorm and torchtitan's rmsnorm "
     "write it, decision 60)"},
    {"packed_lora", PARO_FIELD_ENUM, 0, G_STRUCT_OFFSET(ParoFramework, packed_lora), 0,
     paro_setting_names, NULL,
     "LoRA on q, k, v (gate, up) is one adapter over the packed product (default: the "
     "profile's; megatron: true, NeMo's LoraKQVAdapter; else false, one a projection as "
     "HuggingFace PEFT)"},
    {"fsdp2", PARO_FIELD_ENUM, 0, G_STRUCT_OFFSET(ParoFramework, fsdp2), 0, paro_setting_names,
     NULL,
     "fsdp only: PyTorch's FSDP2 (fully_shard, per-parameter sharding; torchtitan), which "
     "copies each all-gather's output into the parameters on the compute stream and "
     "concatenates the gradients into the reduce-scatter's input (default false: FSDP1, "
     "gathering into the flat parameter in place; decision 62)"},
    {"rope", PARO_FIELD_ENUM, 0, G_STRUCT_OFFSET(ParoFramework, rope), 0, paro_rope_names, NULL,
     "a rotary embedding's kernels (default: the profile's; megatron and ideal: fused, one "
     "kernel each way; deepspeed and fsdp: rotate_half, HuggingFace's operators; complex: "
     "torchtitan's fp32 complex product; the unfused codes also copy k and v to every head "
     "under grouped-query attention)"},
    {"version", PARO_FIELD_CUSTOM, 0, G_STRUCT_OFFSET(ParoFramework, version), 0, NULL,
     parse_version,
     "the framework's version where its behaviour changed (deepspeed before 0.12.4: a "
     "bucket reduced to each owner, not all-reduced; megatron 1.0 to 2.6: the backward's "
     "TP collectives in series)"},
};

gboolean paro_framework_parse(const ParoNode *node, gpointer out, gpointer record, GError **error)
{
    ParoFramework *f = out;
    if (node->kind == PARO_NODE_SCALAR) {
        ParoNode *mapping = paro_node_new_mapping(node->source, node->line, node->column);
        paro_node_set(mapping, paro_node_new_scalar("name", node->source, node->line, node->column),
                      paro_node_new_scalar(node->scalar, node->source, node->line, node->column));
        gboolean ok = paro_schema_apply(mapping, "framework", framework_fields,
                                        G_N_ELEMENTS(framework_fields), f, NULL, NULL, error);
        paro_node_free(mapping);
        return ok;
    }
    return paro_schema_apply(node, "framework", framework_fields, G_N_ELEMENTS(framework_fields), f,
                             NULL, NULL, error);
}

static gboolean decide(int setting, gboolean profile)
{
    return setting == PARO_SETTING_DEFAULT ? profile : setting == PARO_SETTING_TRUE;
}

gboolean paro_framework_reduce_on_compute(const ParoFramework *f, gboolean params_sharded)
{
    return decide(f->reduce_on_compute, f->kind == PARO_FRAMEWORK_DEEPSPEED && !params_sharded);
}

gboolean paro_framework_bucket_allreduce(const ParoFramework *f, gboolean params_sharded)
{
    gboolean multi_rank = f->version == 0 || f->version >= PARO_DEEPSPEED_BUCKET_ALLREDUCE_SINCE;
    return decide(f->bucket_allreduce,
                  f->kind == PARO_FRAMEWORK_DEEPSPEED && !params_sharded && multi_rank);
}

gboolean paro_framework_bf16_optimizer(const ParoFramework *f, gboolean bf16,
                                       gboolean pipeline_stage0)
{
    return f->kind == PARO_FRAMEWORK_DEEPSPEED && bf16 && pipeline_stage0;
}

gboolean paro_framework_blocking_p2p(const ParoFramework *f)
{
    return decide(f->blocking_p2p,
                  f->kind == PARO_FRAMEWORK_MEGATRON || f->kind == PARO_FRAMEWORK_DEEPSPEED);
}

/* Megatron-LM's tags v1.0 to v2.6: before the asynchronous input-gradient all-reduce and
 * gradient accumulation fusion (decisions 58, 59). */
static gboolean megatron_before_2021_09(const ParoFramework *f)
{
    return f->kind == PARO_FRAMEWORK_MEGATRON && f->version >= PARO_MEGATRON_SERIAL_DGRAD_FROM &&
           f->version < PARO_MEGATRON_ASYNC_DGRAD_SINCE;
}

gboolean paro_framework_tp_async_dgrad(const ParoFramework *f)
{
    return decide(f->tp_async_dgrad,
                  f->kind == PARO_FRAMEWORK_MEGATRON && !megatron_before_2021_09(f));
}

gboolean paro_framework_tp_overlap(const ParoFramework *f)
{
    return decide(f->tp_overlap, FALSE);
}

gboolean paro_framework_fused_softmax(const ParoFramework *f)
{
    return decide(f->fused_softmax, f->kind != PARO_FRAMEWORK_FSDP);
}

gboolean paro_framework_fused_loss(const ParoFramework *f)
{
    return decide(f->fused_loss, FALSE);
}

gboolean paro_framework_packed_lora(const ParoFramework *f)
{
    return decide(f->packed_lora, f->kind == PARO_FRAMEWORK_MEGATRON);
}

ParoRope paro_framework_rope(const ParoFramework *f)
{
    if (f->rope > 0)
        return (ParoRope)(f->rope - 1);
    gboolean eager = f->kind == PARO_FRAMEWORK_DEEPSPEED || f->kind == PARO_FRAMEWORK_FSDP;
    return eager ? PARO_ROPE_ROTATE_HALF : PARO_ROPE_FUSED;
}

gboolean paro_framework_fused_norm(const ParoFramework *f)
{
    return decide(f->fused_norm, TRUE);
}

gboolean paro_framework_fused_swiglu(const ParoFramework *f)
{
    return decide(f->fused_swiglu, f->kind == PARO_FRAMEWORK_MEGATRON);
}

ParoLossMemory paro_framework_loss_memory(const ParoFramework *f)
{
    if (paro_framework_fused_loss(f))
        return (ParoLossMemory){2.0, 2.0, 4.0};
    if (f->kind == PARO_FRAMEWORK_MEGATRON || f->kind == PARO_FRAMEWORK_DEEPSPEED)
        return (ParoLossMemory){6.0, 4.0, 6.0};
    return (ParoLossMemory){10.0, 4.0, 12.0};
}

gboolean paro_framework_fused_optimizer(const ParoFramework *f)
{
    return decide(f->fused_optimizer, f->kind != PARO_FRAMEWORK_FSDP);
}

gboolean paro_framework_pytorch_runtime(const ParoFramework *f)
{
    return f->kind == PARO_FRAMEWORK_FSDP;
}

/* FSDP1 (_runtime_utils.py): autograd assembles a unit's flat gradient from its views' (a
 * copy), `_post_backward_hook` casts it to reduce_dtype, `_reduce_grad` divides it by the
 * pre-divide factor in place before the reduce-scatter. DeepSpeed's BF16_Optimizer
 * (bf16_optimizer.py, update_hp_grads after each micro-batch's backward):
 * hp_grad.add_(lp.grad.to(float32)), a cast (read 2, write 4) and an add (read 8, write 4). */
#define BF16_OPTIMIZER_PASS_BYTES (2.0 + 4.0 + 12.0)

double paro_framework_grad_pass_bytes(const ParoFramework *f, double grad_bytes,
                                      double reduce_bytes, gboolean bf16_optimizer)
{
    /* FSDP1: copy (2 b_g), cast where the types differ (b_g + b_r), pre-divide (2 b_r).
     * FSDP2 (_fsdp_collectives.py foreach_reduce_scatter_copy_in: torch.cat into the
     * reduce_dtype input, then _div_if_needed): one copy that casts (b_g + b_r) and the
     * pre-divide (2 b_r). */
    double fsdp = paro_framework_fsdp2(f)
                      ? grad_bytes + reduce_bytes + 2.0 * reduce_bytes
                      : 2.0 * grad_bytes +
                            (reduce_bytes != grad_bytes ? grad_bytes + reduce_bytes : 0) +
                            2.0 * reduce_bytes;
    gboolean known =
        f->kind == PARO_FRAMEWORK_FSDP || (f->kind == PARO_FRAMEWORK_DEEPSPEED && bf16_optimizer);
    if (!known || !decide(f->grad_passes, TRUE))
        return 0;
    return f->kind == PARO_FRAMEWORK_FSDP ? fsdp : BF16_OPTIMIZER_PASS_BYTES;
}

gboolean paro_framework_fsdp2(const ParoFramework *f)
{
    return f->kind == PARO_FRAMEWORK_FSDP && decide(f->fsdp2, FALSE);
}

/* FSDP2's copy-out reads the all-gather's buffer and writes each parameter's tensor. */
#define FSDP2_COPY_OUT_BYTES_PER_GATHERED_BYTE 2.0

double paro_framework_gather_copy_bytes(const ParoFramework *f)
{
    return paro_framework_fsdp2(f) ? FSDP2_COPY_OUT_BYTES_PER_GATHERED_BYTE : 0;
}

double paro_framework_accumulate_bytes(const ParoFramework *f, double grad_bytes, gboolean bf16,
                                       gboolean grads_whole, gboolean bf16_optimizer)
{
    if (!decide(f->grad_passes, TRUE))
        return 0;
    if (megatron_before_2021_09(f))
        return bf16 ? 2.0 + 4.0 + 4.0 : 3.0 * grad_bytes;
    gboolean deepspeed_before = f->kind == PARO_FRAMEWORK_DEEPSPEED && f->version > 0 &&
                                f->version < PARO_DEEPSPEED_STAGE1_HOOKS_SINCE;
    if (deepspeed_before && grads_whole && !bf16_optimizer)
        return 3.0 * grad_bytes;
    return 0;
}

double paro_framework_bucket_bytes(const ParoFramework *f, double grad_bytes, double ideal)
{
    switch (f->kind) {
    case PARO_FRAMEWORK_DEEPSPEED:
        return DEEPSPEED_REDUCE_BUCKET_ELEMENTS * grad_bytes;
    case PARO_FRAMEWORK_FSDP:
        return 0; /* each wrapped unit's gradient is reduce-scattered on its own */
    default:
        return ideal;
    }
}

gint64 paro_framework_prefetch(const ParoFramework *f, double layer_params, gint64 ideal)
{
    switch (f->kind) {
    case PARO_FRAMEWORK_DEEPSPEED:
        /* the next 5e7 elements of the trace: whole layers of them, at least the next one */
        return layer_params > 0 ? MAX(1, (gint64)floor(DEEPSPEED_PREFETCH_ELEMENTS / layer_params))
                                : 1;
    case PARO_FRAMEWORK_FSDP:
        return 1; /* backward_prefetch_limit = 1; limit_all_gathers keeps 2 units alive */
    default:
        return ideal;
    }
}
