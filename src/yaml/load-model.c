/* SPDX-License-Identifier: MIT */
/* Model descriptions: parosim's own `kind: model` YAML, and HuggingFace config.json files
 * (LLaMA-family, GPT-NeoX, GPT-2 and OPT keys), so users can point at the config they
 * already have.
 * HF configs carry dozens of keys irrelevant here, so unknown keys are ignored there
 * only; parosim's own files stay strict. */
#include "yaml/loaders.h"

#include <math.h>
#include <string.h>

#include "yaml/schema.h"

/* PARO_FIELD_ENUM fields are written as ints. */
G_STATIC_ASSERT(sizeof(ParoMlpKind) == sizeof(int));
G_STATIC_ASSERT(sizeof(ParoNormKind) == sizeof(int));

static const char *const mlp_names[] = {"gated", "plain", NULL};
static const char *const norm_names[] = {"rmsnorm", "layernorm", NULL};

typedef struct {
    gint64 hidden, layers, heads, kv_heads, head_dim, ffn, vocab, position_embeddings;
    gint64 experts, experts_per_token;
    gint64 expert_ffn, shared_experts, shared_ffn, dense_layers, moe_every, mtp_layers;
    gint64 q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim;
    gboolean shared_expert_gate, qk_norm;
    int mlp, norm;
    gboolean bias, tied_embeddings;
    double attention_dropout, hidden_dropout;
    double rotary;
} Architecture;

static const ParoField architecture_fields[] = {
    {"hidden", PARO_FIELD_INT, PARO_FIELD_REQUIRED | PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(Architecture, hidden), 0, NULL, NULL, "model width h", &paro_limit_model_dim},
    {"layers", PARO_FIELD_INT, PARO_FIELD_REQUIRED | PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(Architecture, layers), 0, NULL, NULL, "transformer layers L",
     &paro_limit_layers},
    {"heads", PARO_FIELD_INT, PARO_FIELD_REQUIRED | PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(Architecture, heads), 0, NULL, NULL, "attention heads a",
     &paro_limit_model_dim},
    {"kv_heads", PARO_FIELD_INT, PARO_FIELD_POSITIVE, G_STRUCT_OFFSET(Architecture, kv_heads), 0,
     NULL, NULL, "key/value heads (grouped-query attention); default: heads",
     &paro_limit_model_dim},
    {"head_dim", PARO_FIELD_INT, PARO_FIELD_POSITIVE, G_STRUCT_OFFSET(Architecture, head_dim), 0,
     NULL, NULL, "size of one head; default: hidden / heads", &paro_limit_model_dim},
    {"ffn", PARO_FIELD_INT, PARO_FIELD_REQUIRED | PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(Architecture, ffn), 0, NULL, NULL, "MLP inner size", &paro_limit_model_dim},
    {"vocab", PARO_FIELD_INT, PARO_FIELD_REQUIRED | PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(Architecture, vocab), 0, NULL, NULL, "vocabulary size V",
     &paro_limit_model_dim},
    {"position_embeddings", PARO_FIELD_INT, PARO_FIELD_NONNEG,
     G_STRUCT_OFFSET(Architecture, position_embeddings), 0, NULL, NULL,
     "learned position embeddings (GPT-3: 2048); 0 for rotary", &paro_limit_model_dim},
    {"rotary", PARO_FIELD_DOUBLE, PARO_FIELD_UNIT_RANGE, G_STRUCT_OFFSET(Architecture, rotary), 0,
     NULL, NULL,
     "share of each head's dimensions a rotary embedding turns in q and k (LLaMA: 1; "
     "GPT-NeoX: 0.25; 0: none, as with ALiBi); default 1 without position_embeddings, else 0"},
    {"mlp", PARO_FIELD_ENUM, 0, G_STRUCT_OFFSET(Architecture, mlp), 0, mlp_names, NULL,
     "gated (SwiGLU: gate, up, down) or plain (up, down)"},
    {"norm", PARO_FIELD_ENUM, 0, G_STRUCT_OFFSET(Architecture, norm), 0, norm_names, NULL,
     "rmsnorm (weight) or layernorm (weight and bias)"},
    {"bias", PARO_FIELD_BOOL, 0, G_STRUCT_OFFSET(Architecture, bias), 0, NULL, NULL,
     "biases on every linear layer"},
    {"tied_embeddings", PARO_FIELD_BOOL, 0, G_STRUCT_OFFSET(Architecture, tied_embeddings), 0, NULL,
     NULL, "output head shares the input embedding matrix"},
    {"attention_dropout", PARO_FIELD_DOUBLE, PARO_FIELD_UNIT_RANGE,
     G_STRUCT_OFFSET(Architecture, attention_dropout), 0, NULL, NULL,
     "dropout probability on the attention softmax (default 0; Megatron-LM: 0.1)"},
    {"hidden_dropout", PARO_FIELD_DOUBLE, PARO_FIELD_UNIT_RANGE,
     G_STRUCT_OFFSET(Architecture, hidden_dropout), 0, NULL, NULL,
     "dropout probability before each residual add (default 0; Megatron-LM: 0.1)"},
    {"experts", PARO_FIELD_INT, PARO_FIELD_POSITIVE, G_STRUCT_OFFSET(Architecture, experts), 0,
     NULL, NULL, "a mixture of experts: MLPs of width ffn per layer (Mixtral 8x7B: 8)",
     &paro_limit_model_dim},
    {"experts_per_token", PARO_FIELD_INT, PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(Architecture, experts_per_token), 0, NULL, NULL,
     "experts each token is routed to (top-k; Mixtral: 2); with experts", &paro_limit_model_dim},
    {"expert_ffn", PARO_FIELD_INT, PARO_FIELD_POSITIVE, G_STRUCT_OFFSET(Architecture, expert_ffn),
     0, NULL, NULL,
     "a routed expert's width when it differs from the dense layers' ffn (DeepSeek-V3: 2048); "
     "with experts",
     &paro_limit_model_dim},
    {"shared_experts", PARO_FIELD_INT, PARO_FIELD_NONNEG,
     G_STRUCT_OFFSET(Architecture, shared_experts), 0, NULL, NULL,
     "experts every token runs through besides its routed ones (DeepSeek-V3: 1); with experts",
     &paro_limit_model_dim},
    {"shared_ffn", PARO_FIELD_INT, PARO_FIELD_POSITIVE, G_STRUCT_OFFSET(Architecture, shared_ffn),
     0, NULL, NULL,
     "the width of one shared expert (Qwen1.5-MoE-A2.7B: 5632); default: the routed experts'",
     &paro_limit_model_dim},
    {"shared_expert_gate", PARO_FIELD_BOOL, 0, G_STRUCT_OFFSET(Architecture, shared_expert_gate), 0,
     NULL, NULL, "a sigmoid gate (h x 1) on the shared experts' output (Qwen2-MoE)"},
    {"dense_layers", PARO_FIELD_INT, PARO_FIELD_NONNEG, G_STRUCT_OFFSET(Architecture, dense_layers),
     0, NULL, NULL,
     "the first layers keep a dense MLP of width ffn (DeepSeek-V3's first_k_dense_replace: 3)",
     &paro_limit_layers},
    {"moe_every", PARO_FIELD_INT, PARO_FIELD_POSITIVE, G_STRUCT_OFFSET(Architecture, moe_every), 0,
     NULL, NULL,
     "after dense_layers, layer l (from 0) holds experts when (l + 1) is a multiple of it, the "
     "others a dense MLP (Qwen2-MoE's decoder_sparse_step); default 1: every layer",
     &paro_limit_layers},
    {"mtp_layers", PARO_FIELD_INT, PARO_FIELD_NONNEG, G_STRUCT_OFFSET(Architecture, mtp_layers), 0,
     NULL, NULL,
     "multi-token prediction modules (DeepSeek-V3: 1): each a block, its norms and a 2h x h "
     "projection, with the shared head and a loss",
     &paro_limit_layers},
    {"q_lora_rank", PARO_FIELD_INT, PARO_FIELD_NONNEG, G_STRUCT_OFFSET(Architecture, q_lora_rank),
     0, NULL, NULL,
     "latent attention: the queries' latent (DeepSeek-V3: 1536); 0: queries from h directly",
     &paro_limit_model_dim},
    {"kv_lora_rank", PARO_FIELD_INT, PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(Architecture, kv_lora_rank), 0, NULL, NULL,
     "multi-head latent attention: the keys' and values' latent (DeepSeek-V3: 512)",
     &paro_limit_model_dim},
    {"qk_nope_head_dim", PARO_FIELD_INT, PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(Architecture, qk_nope_head_dim), 0, NULL, NULL,
     "latent attention: a head's query and key without rotary (DeepSeek-V3: 128)",
     &paro_limit_model_dim},
    {"qk_rope_head_dim", PARO_FIELD_INT, PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(Architecture, qk_rope_head_dim), 0, NULL, NULL,
     "latent attention: a head's rotary query and the shared rotary key (DeepSeek-V3: 64)",
     &paro_limit_model_dim},
    {"v_head_dim", PARO_FIELD_INT, PARO_FIELD_POSITIVE, G_STRUCT_OFFSET(Architecture, v_head_dim),
     0, NULL, NULL, "latent attention: a head's value (DeepSeek-V3: 128)", &paro_limit_model_dim},
    {"qk_norm", PARO_FIELD_BOOL, 0, G_STRUCT_OFFSET(Architecture, qk_norm), 0, NULL, NULL,
     "RMSNorms over the whole query and key (OLMoE)"},
};

/* The fields of a mixture of experts beyond Mixtral's and of latent attention, whoever
 * gave them (a model file or a HuggingFace config, @where locating each key by name; NULL
 * names: @root): they need what they refine, latent attention all its sizes. Sets the
 * multi-head shape latent attention stands for (model.h). */
static const ParoNode *key_or_root(const ParoNode *root, const char *key)
{
    const ParoNode *v = key ? paro_node_lookup(root, key) : NULL;
    return v ? v : root;
}

typedef struct {
    const char *expert_ffn, *shared_experts, *shared_ffn, *dense_layers, *moe_every, *q_lora_rank,
        *kv_lora_rank, *head_dim;
} ExtensionKeys;

static gboolean check_extensions(Architecture *a, const ParoNode *root, const ExtensionKeys *keys,
                                 GError **error)
{
    struct {
        gint64 value;
        const char *key;
    } need_experts[] = {{a->expert_ffn, keys->expert_ffn},
                        {a->shared_experts, keys->shared_experts},
                        {a->shared_ffn, keys->shared_ffn},
                        {a->dense_layers, keys->dense_layers},
                        {a->moe_every > 1 ? a->moe_every : 0, keys->moe_every}};
    for (guint i = 0; a->experts == 0 && i < G_N_ELEMENTS(need_experts); i++)
        if (need_experts[i].value > 0) {
            paro_node_error(error, key_or_root(root, need_experts[i].key),
                            PARO_CONFIG_ERROR_CONSTRAINT,
                            "'%s' refines a mixture of experts, but the model has no experts",
                            need_experts[i].key ? need_experts[i].key : "shared experts");
            return FALSE;
        }
    if (a->shared_ffn > 0 && a->shared_experts == 0) {
        paro_node_error(error, key_or_root(root, keys->shared_ffn), PARO_CONFIG_ERROR_CONSTRAINT,
                        "'%s' without shared experts", keys->shared_ffn);
        return FALSE;
    }
    if (a->experts > 0 && a->dense_layers >= a->layers) {
        paro_node_error(error, key_or_root(root, keys->dense_layers), PARO_CONFIG_ERROR_CONSTRAINT,
                        "%" G_GINT64_FORMAT " dense layers of %" G_GINT64_FORMAT
                        ": no layer would hold the experts",
                        a->dense_layers, a->layers);
        return FALSE;
    }
    gboolean mla = a->kv_lora_rank > 0;
    if (!mla && a->q_lora_rank == 0 && a->qk_nope_head_dim == 0 && a->qk_rope_head_dim == 0 &&
        a->v_head_dim == 0)
        return TRUE;
    if (!mla || a->qk_nope_head_dim == 0 || a->qk_rope_head_dim == 0 || a->v_head_dim == 0) {
        paro_node_error(error, key_or_root(root, mla ? NULL : keys->q_lora_rank),
                        PARO_CONFIG_ERROR_MISSING_KEY,
                        "multi-head latent attention needs %s, qk_nope_head_dim, "
                        "qk_rope_head_dim and v_head_dim together",
                        keys->kv_lora_rank);
        return FALSE;
    }
    a->head_dim = a->qk_nope_head_dim + a->qk_rope_head_dim;
    a->kv_heads = a->heads;
    return TRUE;
}

static const ExtensionKeys yaml_keys = {"expert_ffn",   "shared_experts", "shared_ffn",
                                        "dense_layers", "moe_every",      "q_lora_rank",
                                        "kv_lora_rank", "head_dim"};

/* experts and experts_per_token come together, k <= experts; @where_k and @where_e locate
 * them (the architecture mapping or the config for a missing one). */
static gboolean check_experts(gint64 experts, gint64 per_token, const ParoNode *where_e,
                              const ParoNode *where_k, GError **error)
{
    if (experts == 0 && per_token == 0)
        return TRUE;
    if (experts == 0 || per_token == 0) {
        paro_node_error(error, experts == 0 ? where_k : where_e, PARO_CONFIG_ERROR_MISSING_KEY,
                        "a mixture of experts needs both the number of experts and the experts "
                        "per token");
        return FALSE;
    }
    if (per_token > experts) {
        paro_node_error(error, where_k, PARO_CONFIG_ERROR_CONSTRAINT,
                        "%" G_GINT64_FORMAT " experts per token, but only %" G_GINT64_FORMAT
                        " experts",
                        per_token, experts);
        return FALSE;
    }
    return TRUE;
}

typedef struct {
    char *name;
    char *description;
    double parameters;
    double published_params;
    Architecture arch;
    gboolean has_arch;
} ModelFile;

static gboolean parse_architecture(const ParoNode *node, gpointer ptr, gpointer user_data,
                                   GError **error)
{
    ModelFile *file = user_data;
    Architecture *arch = ptr;
    guint64 present = 0;
    if (!paro_schema_apply(node, "architecture", architecture_fields,
                           G_N_ELEMENTS(architecture_fields), arch, NULL, &present, error))
        return FALSE;
    if (arch->kv_heads == 0)
        arch->kv_heads = arch->heads;
    if (paro_node_lookup(node, "rotary") == NULL) /* learned positions, or else rotary */
        arch->rotary = arch->position_embeddings > 0 ? 0.0 : 1.0;
    if (arch->kv_lora_rank > 0 && arch->head_dim > 0) {
        paro_node_error(error, paro_node_lookup(node, "head_dim"), PARO_CONFIG_ERROR_CONSTRAINT,
                        "head_dim with latent attention: a head's query and key are "
                        "qk_nope_head_dim + qk_rope_head_dim wide, its value v_head_dim");
        return FALSE;
    }
    if (!check_extensions(arch, node, &yaml_keys, error))
        return FALSE;
    if (arch->head_dim == 0) {
        if (arch->hidden % arch->heads != 0) {
            paro_node_error(error, paro_node_lookup(node, "heads"), PARO_CONFIG_ERROR_CONSTRAINT,
                            "hidden %" G_GINT64_FORMAT
                            " is not divisible by heads %" G_GINT64_FORMAT "; give head_dim",
                            arch->hidden, arch->heads);
            return FALSE;
        }
        arch->head_dim = arch->hidden / arch->heads;
    }
    const ParoNode *e = paro_node_lookup(node, "experts"),
                   *k = paro_node_lookup(node, "experts_per_token");
    if (!check_experts(arch->experts, arch->experts_per_token, e ? e : node, k ? k : node, error))
        return FALSE;
    if (arch->heads % arch->kv_heads != 0) {
        paro_node_error(error, paro_node_lookup(node, "kv_heads"), PARO_CONFIG_ERROR_CONSTRAINT,
                        "heads %" G_GINT64_FORMAT
                        " is not a multiple of kv_heads %" G_GINT64_FORMAT,
                        arch->heads, arch->kv_heads);
        return FALSE;
    }
    file->has_arch = TRUE;
    return TRUE;
}

static const ParoField model_fields[] = {
    {"kind", PARO_FIELD_HEADER, 0, 0, 0, NULL, NULL, "model"},
    {"schema", PARO_FIELD_HEADER, 0, 0, 0, NULL, NULL, "1"},
    {"name", PARO_FIELD_STRING, PARO_FIELD_REQUIRED, G_STRUCT_OFFSET(ModelFile, name), 0, NULL,
     NULL, "short name used in reports"},
    {"description", PARO_FIELD_STRING, 0, G_STRUCT_OFFSET(ModelFile, description), 0, NULL, NULL,
     "free text: source of the figures"},
    {"parameters", PARO_FIELD_DOUBLE, PARO_FIELD_POSITIVE, G_STRUCT_OFFSET(ModelFile, parameters),
     0, NULL, NULL, "parameter count; overrides the count derived from the architecture",
     &paro_limit_parameters},
    {"published_params", PARO_FIELD_DOUBLE, PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(ModelFile, published_params), 0, NULL, NULL,
     "the count the model's authors publish, for reference", &paro_limit_parameters},
    {"architecture", PARO_FIELD_CUSTOM, 0, G_STRUCT_OFFSET(ModelFile, arch), 0, NULL,
     parse_architecture, "transformer shape"},
};

static ParoModel *model_from_record(const ModelFile *f, const char *path)
{
    ParoModel *m = g_new0(ParoModel, 1);
    m->name = g_strdup(f->name);
    m->source_path = g_strdup(path);
    m->has_shape = f->has_arch;
    m->hidden = f->arch.hidden;
    m->layers = f->arch.layers;
    m->heads = f->arch.heads;
    m->kv_heads = f->arch.kv_heads;
    m->head_dim = f->arch.head_dim;
    m->ffn = f->arch.ffn;
    m->vocab = f->arch.vocab;
    m->position_embeddings = f->arch.position_embeddings;
    m->rotary = f->arch.rotary;
    m->mlp = f->arch.mlp;
    m->norm = f->arch.norm;
    m->attn_bias = f->arch.bias;
    m->mlp_bias = f->arch.bias;
    m->tied_embeddings = f->arch.tied_embeddings;
    m->attention_dropout = f->arch.attention_dropout;
    m->hidden_dropout = f->arch.hidden_dropout;
    m->experts = f->arch.experts;
    m->experts_per_token = f->arch.experts_per_token;
    m->expert_ffn = f->arch.expert_ffn;
    m->shared_experts = f->arch.shared_experts;
    m->shared_ffn = f->arch.shared_ffn;
    m->shared_expert_gate = f->arch.shared_expert_gate;
    m->dense_layers = f->arch.dense_layers;
    m->moe_every = f->arch.moe_every;
    m->mtp_layers = f->arch.mtp_layers;
    m->q_lora_rank = f->arch.q_lora_rank;
    m->kv_lora_rank = f->arch.kv_lora_rank;
    m->qk_nope_head_dim = f->arch.qk_nope_head_dim;
    m->qk_rope_head_dim = f->arch.qk_rope_head_dim;
    m->v_head_dim = f->arch.v_head_dim;
    m->qk_norm = f->arch.qk_norm;
    m->params_given = f->parameters;
    m->published_params = f->published_params;
    return m;
}

/* How a HuggingFace model family names a decoder-only transformer's shape in config.json,
 * and what its code builds without saying (read from transformers' modeling files):
 * LLaMA's keys (and its descendants'); GPT-NeoX's, the same keys for a plain MLP with
 * LayerNorm and biases; GPT-2's (n_embd, n_layer; an MLP of 4 n_embd when n_inner is
 * absent; learned positions, biases, tied head); OPT's (ffn_dim; a learned position table
 * of max_position_embeddings + 2 rows, OPTLearnedPositionalEmbedding's offset; ReLU MLP,
 * biases unless enable_bias is false, tied head). Another type (mamba, a mixture of
 * experts, an encoder) would load as a wrong model without a word, so it is refused. */
typedef struct {
    const char *const *types;
    const char *hidden, *ffn, *layers, *heads; /* key names */
    const char *experts, *experts_per_token;   /* a mixture of experts'; NULL: dense */
    const char *positions;                     /* learned position table; NULL: rotary */
    gint64 position_offset;                    /* rows beyond its key's value */
    gint64 ffn_per_hidden;                     /* the MLP's width when its key is absent */
    ParoMlpKind mlp;
    ParoNormKind norm;
    gboolean bias, tied; /* defaults; the config's keys override */
    const char *attention_dropout, *hidden_dropout;
    /* beyond the table: shared experts, dense layers, latent attention (hf_extensions) */
    enum { HF_PLAIN, HF_DEEPSEEK, HF_QWEN2_MOE, HF_OLMOE } extension;
} HfFamily;

static const char *const llama_types[] = {"llama",  "mistral", "qwen2", "qwen3", "gemma",
                                          "gemma2", "olmo",    "phi3",  NULL};
static const char *const neox_types[] = {"gpt_neox", NULL};
static const char *const gpt2_types[] = {"gpt2", NULL};
static const char *const opt_types[] = {"opt", NULL};
static const char *const mixtral_types[] = {"mixtral", NULL};
static const char *const qwen3_moe_types[] = {"qwen3_moe", NULL};
static const char *const deepseek_types[] = {"deepseek_v2", "deepseek_v3", NULL};
static const char *const qwen2_moe_types[] = {"qwen2_moe", NULL};
static const char *const olmoe_types[] = {"olmoe", NULL};

static const HfFamily hf_families[] = {
    {llama_types, "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
     NULL, NULL, NULL, 0, 0, PARO_MLP_GATED, PARO_NORM_RMSNORM, FALSE, FALSE, "attention_dropout",
     "hidden_dropout"},
    {neox_types, "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
     NULL, NULL, NULL, 0, 0, PARO_MLP_PLAIN, PARO_NORM_LAYERNORM, TRUE, FALSE, "attention_dropout",
     "hidden_dropout"},
    {gpt2_types, "n_embd", "n_inner", "n_layer", "n_head", NULL, NULL, "n_positions", 0, 4,
     PARO_MLP_PLAIN, PARO_NORM_LAYERNORM, TRUE, TRUE, "attn_pdrop", "resid_pdrop"},
    {opt_types, "hidden_size", "ffn_dim", "num_hidden_layers", "num_attention_heads", NULL, NULL,
     "max_position_embeddings", 2, 0, PARO_MLP_PLAIN, PARO_NORM_LAYERNORM, TRUE, TRUE,
     "attention_dropout", "dropout"},
    {mixtral_types, "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
     "num_local_experts", "num_experts_per_tok", NULL, 0, 0, PARO_MLP_GATED, PARO_NORM_RMSNORM,
     FALSE, FALSE, "attention_dropout", "hidden_dropout"},
    /* Qwen3's experts: each of width moe_intermediate_size, no shared expert */
    {qwen3_moe_types, "hidden_size", "moe_intermediate_size", "num_hidden_layers",
     "num_attention_heads", "num_experts", "num_experts_per_tok", NULL, 0, 0, PARO_MLP_GATED,
     PARO_NORM_RMSNORM, FALSE, FALSE, "attention_dropout", "hidden_dropout"},
    /* DeepSeek-V2 and V3 (transformers' modeling_deepseek_v2.py and v3's, decision 77):
     * intermediate_size is the dense first layers' MLP, moe_intermediate_size a routed or
     * shared expert's; latent attention */
    {deepseek_types, "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
     "n_routed_experts", "num_experts_per_tok", NULL, 0, 0, PARO_MLP_GATED, PARO_NORM_RMSNORM,
     FALSE, FALSE, "attention_dropout", "hidden_dropout", HF_DEEPSEEK},
    /* Qwen2-MoE (Qwen1.5-MoE): intermediate_size the dense layers', a gated shared expert */
    {qwen2_moe_types, "hidden_size", "intermediate_size", "num_hidden_layers",
     "num_attention_heads", "num_experts", "num_experts_per_tok", NULL, 0, 0, PARO_MLP_GATED,
     PARO_NORM_RMSNORM, FALSE, FALSE, "attention_dropout", "hidden_dropout", HF_QWEN2_MOE},
    /* OLMoE: intermediate_size an expert's; RMSNorms over the whole query and key */
    {olmoe_types, "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
     "num_experts", "num_experts_per_tok", NULL, 0, 0, PARO_MLP_GATED, PARO_NORM_RMSNORM, FALSE,
     FALSE, "attention_dropout", "hidden_dropout", HF_OLMOE},
};

/* The family of @type (NULL or null: a config without model_type, read as LLaMA's), or
 * NULL with a RANGE error at @type naming the types parosim reads. */
static const HfFamily *hf_family(const ParoNode *type, GError **error)
{
    if (type == NULL || paro_node_is_null(type))
        return &hf_families[0];
    for (guint i = 0; type->kind == PARO_NODE_SCALAR && i < G_N_ELEMENTS(hf_families); i++)
        if (g_strv_contains(hf_families[i].types, type->scalar))
            return &hf_families[i];
    g_autoptr(GString) list = g_string_new(NULL);
    for (guint i = 0; i < G_N_ELEMENTS(hf_families); i++)
        for (const char *const *t = hf_families[i].types; *t; t++)
            g_string_append_printf(list, "%s%s", list->len ? ", " : "", *t);
    paro_node_error(error, type, PARO_CONFIG_ERROR_RANGE,
                    "model_type '%s' is not a transformer parosim can model (known: %s)",
                    type->kind == PARO_NODE_SCALAR ? type->scalar : paro_node_kind_name(type->kind),
                    list->str);
    return NULL;
}

/* A count of parameters within paro_limit_parameters, or a RANGE error at @where: the
 * dimensions are each bounded, but their products (h^2 L) are not. */
static gboolean check_params(const ParoModel *m, const ParoNode *where, GError **error)
{
    return paro_schema_check_limit(&paro_limit_parameters, where, "parameters",
                                   paro_model_base_params(m), error);
}

static ParoModel *model_from_yaml(const ParoNode *root, GError **error)
{
    if (!paro_schema_check_header(root, "model", error))
        return NULL;
    ModelFile f = {0};
    f.arch.mlp = PARO_MLP_GATED;
    f.arch.norm = PARO_NORM_RMSNORM;
    gboolean ok = paro_schema_apply(root, "model", model_fields, G_N_ELEMENTS(model_fields), &f, &f,
                                    NULL, error);
    ParoModel *model = NULL;
    if (ok && !f.has_arch && f.parameters == 0)
        paro_node_error(error, root, PARO_CONFIG_ERROR_MISSING_KEY,
                        "a model needs 'architecture', 'parameters', or both");
    else if (ok) {
        model = model_from_record(&f, root->source);
        const ParoNode *where = paro_node_lookup(root, "parameters");
        if (where == NULL)
            where = paro_node_lookup(root, "architecture");
        if (!check_params(model, where ? where : root, error))
            g_clear_pointer(&model, paro_model_free);
    }
    g_free(f.name);
    g_free(f.description);
    return model;
}

/* HuggingFace config.json: the LLaMA-family keys, and GPT-NeoX's naming of the same. */
static gboolean hf_int(const ParoNode *root, const char *key, gboolean required, gint64 *out,
                       const ParoLimit *limit, GError **error)
{
    const ParoNode *v = paro_node_lookup(root, key);
    if (v == NULL || paro_node_is_null(v)) {
        if (required) {
            paro_node_error(error, root, PARO_CONFIG_ERROR_MISSING_KEY,
                            "missing key '%s' in HuggingFace config", key);
            return FALSE;
        }
        return TRUE;
    }
    if (!paro_schema_parse_int(v, key, out, error))
        return FALSE;
    if (*out <= 0) {
        paro_node_error(error, v, PARO_CONFIG_ERROR_RANGE, "'%s' must be positive", key);
        return FALSE;
    }
    return paro_schema_check_limit(limit, v, key, (double)*out, error);
}

static gboolean hf_bool(const ParoNode *root, const char *key, gboolean *out, GError **error)
{
    const ParoNode *v = paro_node_lookup(root, key);
    if (v == NULL || paro_node_is_null(v))
        return TRUE;
    if (v->kind == PARO_NODE_SCALAR && strcmp(v->scalar, "true") == 0)
        *out = TRUE;
    else if (v->kind == PARO_NODE_SCALAR && strcmp(v->scalar, "false") == 0)
        *out = FALSE;
    else {
        paro_node_error(error, v, PARO_CONFIG_ERROR_TYPE, "'%s' must be true or false", key);
        return FALSE;
    }
    return TRUE;
}

/* A probability (a dropout rate): absent or null leaves @out as it is. */
static gboolean hf_probability(const ParoNode *root, const char *key, double *out, GError **error)
{
    const ParoNode *v = paro_node_lookup(root, key);
    if (v == NULL || paro_node_is_null(v))
        return TRUE;
    char *end = NULL;
    double p = v->kind == PARO_NODE_SCALAR ? g_ascii_strtod(v->scalar, &end) : NAN;
    if (end == NULL || end == v->scalar || *end != '\0' || !(p >= 0 && p <= 1)) {
        paro_node_error(error, v, PARO_CONFIG_ERROR_RANGE,
                        "'%s' must lie between 0 and 1, got '%s'", key,
                        v->kind == PARO_NODE_SCALAR ? v->scalar : "a collection");
        return FALSE;
    }
    *out = p;
    return TRUE;
}

/* Mixture-of-experts configs (Mixtral, Qwen-MoE, DeepSeek, DBRX...) name their experts
 * with one of these keys. Mixtral's family is read (its experts and top-k); in another
 * family the keys are refused, located, rather than read as the dense model of its
 * attention and one expert's width (shared experts, dense first layers and their widths
 * are not modelled). */
static gboolean check_hf_dense(const ParoNode *root, const HfFamily *fam, GError **error)
{
    if (fam->experts != NULL) /* a family whose experts parosim reads (Mixtral's) */
        return TRUE;
    static const char *const expert_keys[] = {"num_local_experts", "num_experts",
                                              "n_routed_experts", "moe_num_experts",
                                              "num_experts_per_tok"};
    for (guint i = 0; i < G_N_ELEMENTS(expert_keys); i++) {
        const ParoNode *v = paro_node_lookup(root, expert_keys[i]);
        if (v == NULL || paro_node_is_null(v))
            continue;
        paro_node_error(error, v, PARO_CONFIG_ERROR_RANGE,
                        "'%s': this family's mixture of experts is not modelled (parosim "
                        "reads Mixtral's, model_type mixtral; it would count one expert and "
                        "call it a dense model); describe it in a model file with experts "
                        "and experts_per_token, or as a parameter count",
                        expert_keys[i]);
        return FALSE;
    }
    return TRUE;
}

/* Qwen's MoE configs may keep some layers dense (mlp_only_layers, or a sparse layer every
 * decoder_sparse_step): parosim's layers are all alike, so those are refused, located. */
static gboolean check_hf_every_layer_sparse(const ParoNode *root, GError **error)
{
    const ParoNode *dense = paro_node_lookup(root, "mlp_only_layers");
    /* a number or a string ("0,1") was read as no dense layer, every layer sparse */
    if (dense != NULL && !paro_node_is_null(dense) && dense->kind != PARO_NODE_SEQUENCE) {
        paro_node_error(error, dense, PARO_CONFIG_ERROR_TYPE,
                        "'mlp_only_layers' must be a list of layer indices ([] or [0, 47])");
        return FALSE;
    }
    if (dense != NULL && dense->kind == PARO_NODE_SEQUENCE && dense->values->len > 0) {
        paro_node_error(error, dense, PARO_CONFIG_ERROR_RANGE,
                        "mlp_only_layers: dense layers among the experts' are not modelled "
                        "(every layer is alike in parosim)");
        return FALSE;
    }
    gint64 step = 1;
    if (!hf_int(root, "decoder_sparse_step", FALSE, &step, &paro_limit_layers, error))
        return FALSE;
    if (step != 1) {
        paro_node_error(error, paro_node_lookup(root, "decoder_sparse_step"),
                        PARO_CONFIG_ERROR_RANGE,
                        "decoder_sparse_step %" G_GINT64_FORMAT
                        ": dense layers among the experts' are not modelled (every layer is "
                        "alike in parosim)",
                        step);
        return FALSE;
    }
    return TRUE;
}

/* OPT-350m projects its 512-wide embeddings to the 1024-wide layers and back
 * (word_embed_proj_dim): two matrices parosim's shape does not have. */
static gboolean check_hf_projection(const ParoNode *root, gint64 hidden, GError **error)
{
    gint64 width = hidden;
    if (!hf_int(root, "word_embed_proj_dim", FALSE, &width, &paro_limit_model_dim, error))
        return FALSE;
    if (width == hidden)
        return TRUE;
    paro_node_error(
        error, paro_node_lookup(root, "word_embed_proj_dim"), PARO_CONFIG_ERROR_CONSTRAINT,
        "word_embed_proj_dim %" G_GINT64_FORMAT " differs from hidden_size %" G_GINT64_FORMAT
        ": embeddings projected to another width are not modelled; describe the "
        "model in a model file",
        width, hidden);
    return FALSE;
}

/* A mixture of experts' count and top-k under its family's key names; nothing for a dense
 * family. */
static gboolean hf_experts(const ParoNode *root, const HfFamily *fam, Architecture *a,
                           GError **error)
{
    if (fam->experts == NULL)
        return TRUE;
    const ParoNode *e = paro_node_lookup(root, fam->experts);
    const ParoNode *k = paro_node_lookup(root, fam->experts_per_token);
    /* DeepSeek's configs say a dense model with null experts (DeepseekV2Config) */
    gboolean required = fam->extension != HF_DEEPSEEK;
    return (fam->extension == HF_QWEN2_MOE || check_hf_every_layer_sparse(root, error)) &&
           hf_int(root, fam->experts, required, &a->experts, &paro_limit_model_dim, error) &&
           hf_int(root, fam->experts_per_token, required, &a->experts_per_token,
                  &paro_limit_model_dim, error) &&
           check_experts(a->experts, a->experts_per_token, e ? e : root, k ? k : root, error);
}

/* A non-negative count under @key (absent or null: @out unchanged). */
static gboolean hf_count(const ParoNode *root, const char *key, gint64 *out, const ParoLimit *limit,
                         GError **error)
{
    const ParoNode *v = paro_node_lookup(root, key);
    if (v == NULL || paro_node_is_null(v))
        return TRUE;
    if (!paro_schema_parse_int(v, key, out, error))
        return FALSE;
    if (*out < 0) {
        paro_node_error(error, v, PARO_CONFIG_ERROR_RANGE, "'%s' must not be negative", key);
        return FALSE;
    }
    return paro_schema_check_limit(limit, v, key, (double)*out, error);
}

/* Keys of shapes only some families' configs have: read by theirs (hf_extensions), refused
 * by name elsewhere rather than dropped (a model with a latent attention or a prediction
 * module read as one without). */
static gboolean check_hf_foreign_keys(const ParoNode *root, const HfFamily *fam, GError **error)
{
    static const struct {
        const char *key;
        int family; /* the extension that reads it */
    } keys[] = {{"kv_lora_rank", HF_DEEPSEEK},
                {"q_lora_rank", HF_DEEPSEEK},
                {"num_nextn_predict_layers", HF_DEEPSEEK},
                {"first_k_dense_replace", HF_DEEPSEEK},
                {"n_shared_experts", HF_DEEPSEEK},
                {"shared_expert_intermediate_size", HF_QWEN2_MOE}};
    for (guint i = 0; i < G_N_ELEMENTS(keys); i++) {
        const ParoNode *v = paro_node_lookup(root, keys[i].key);
        if (keys[i].family == (int)fam->extension || v == NULL || paro_node_is_null(v) ||
            (v->kind == PARO_NODE_SCALAR && strcmp(v->scalar, "0") == 0))
            continue;
        paro_node_error(error, v, PARO_CONFIG_ERROR_RANGE,
                        "'%s' is not modelled in this family's configs (parosim reads it in "
                        "model_type %s); describe the model in a model file",
                        keys[i].key,
                        keys[i].family == HF_DEEPSEEK ? "deepseek_v2 or deepseek_v3" : "qwen2_moe");
        return FALSE;
    }
    return TRUE;
}

/* Qwen2-MoE's dense layers: mlp_only_layers, read when they are the first ones ([0, 1, ...
 * k-1], parosim's dense_layers); other lists are refused, located. */
static gboolean hf_mlp_only_layers(const ParoNode *root, Architecture *a, GError **error)
{
    const ParoNode *dense = paro_node_lookup(root, "mlp_only_layers");
    if (dense == NULL || paro_node_is_null(dense))
        return TRUE;
    if (dense->kind != PARO_NODE_SEQUENCE) {
        paro_node_error(error, dense, PARO_CONFIG_ERROR_TYPE,
                        "'mlp_only_layers' must be a list of layer indices ([] or [0, 1])");
        return FALSE;
    }
    for (guint i = 0; i < dense->values->len; i++) {
        const ParoNode *v = g_ptr_array_index(dense->values, i);
        gint64 index = -1;
        if (!paro_schema_parse_int(v, "mlp_only_layers", &index, error))
            return FALSE;
        if (index != (gint64)i) {
            paro_node_error(error, v, PARO_CONFIG_ERROR_RANGE,
                            "mlp_only_layers: dense layers other than the first ones (0, 1, "
                            "...) are not modelled");
            return FALSE;
        }
    }
    a->dense_layers = (gint64)dense->values->len;
    return TRUE;
}

/* What the DeepSeek, Qwen2-MoE and OLMoE configs say beyond the table's keys (decision 77),
 * as transformers' modeling files build it (huggingface/transformers: models/deepseek_v2
 * and deepseek_v3/modular_*.py at commit 000c33fd, qwen2_moe/modular_qwen2_moe.py at
 * 001f85b3, olmoe/modular_olmoe.py's q_norm over h and k_norm over kv); @attn_bias:
 * Qwen2-MoE's q, k and v biases (qkv_bias, true in the released checkpoints). */
static gboolean hf_extensions(const ParoNode *root, const HfFamily *fam, Architecture *a,
                              gboolean *attn_bias, GError **error)
{
    const ParoLimit *dim = &paro_limit_model_dim, *layers = &paro_limit_layers;
    static const ExtensionKeys deepseek_keys = {
        "moe_intermediate_size", "n_shared_experts", NULL, "first_k_dense_replace", NULL,
        "q_lora_rank",           "kv_lora_rank",     NULL};
    static const ExtensionKeys qwen_keys = {"moe_intermediate_size",
                                            "shared_expert_intermediate_size",
                                            "shared_expert_intermediate_size",
                                            "mlp_only_layers",
                                            "decoder_sparse_step",
                                            NULL,
                                            NULL,
                                            NULL};
    switch (fam->extension) {
    case HF_PLAIN:
        return TRUE;
    case HF_OLMOE:
        a->qk_norm = TRUE; /* OlmoeAttention's q_norm (h) and k_norm (kv) */
        return TRUE;
    case HF_QWEN2_MOE: {
        /* Qwen2MoeSparseMoeBlock: experts of moe_intermediate_size, one shared expert of
         * shared_expert_intermediate_size behind an h x 1 gate; a layer is sparse unless in
         * mlp_only_layers or (l + 1) % decoder_sparse_step != 0; q, k, v with biases */
        gint64 shared = 0;
        *attn_bias = TRUE;
        if (!hf_bool(root, "qkv_bias", attn_bias, error) ||
            !hf_int(root, "moe_intermediate_size", a->experts > 0, &a->expert_ffn, dim, error) ||
            !hf_count(root, "shared_expert_intermediate_size", &shared, dim, error) ||
            !hf_int(root, "decoder_sparse_step", FALSE, &a->moe_every, layers, error) ||
            !hf_mlp_only_layers(root, a, error))
            return FALSE;
        if (shared > 0)
            a->shared_experts = 1, a->shared_ffn = shared, a->shared_expert_gate = TRUE;
        return check_extensions(a, root, &qwen_keys, error);
    }
    case HF_DEEPSEEK: {
        /* DeepseekV3MoE: routed experts and n_shared_experts shared ones, each
         * moe_intermediate_size wide, in layers from first_k_dense_replace on; DeepSeek's
         * own code (not transformers') also skips layers by moe_layer_freq */
        gint64 freq = 1;
        if (!hf_int(root, "moe_layer_freq", FALSE, &freq, layers, error))
            return FALSE;
        if (freq != 1) {
            paro_node_error(error, paro_node_lookup(root, "moe_layer_freq"),
                            PARO_CONFIG_ERROR_RANGE,
                            "moe_layer_freq %" G_GINT64_FORMAT
                            ": expert layers other than every one after first_k_dense_replace "
                            "are not modelled; describe the model in a model file",
                            freq);
            return FALSE;
        }
        if (a->experts > 0 &&
            (!hf_int(root, "moe_intermediate_size", TRUE, &a->expert_ffn, dim, error) ||
             !hf_count(root, "n_shared_experts", &a->shared_experts, dim, error) ||
             !hf_count(root, "first_k_dense_replace", &a->dense_layers, layers, error)))
            return FALSE;
        if (!hf_count(root, "q_lora_rank", &a->q_lora_rank, dim, error) ||
            !hf_int(root, "kv_lora_rank", TRUE, &a->kv_lora_rank, dim, error) ||
            !hf_int(root, "qk_nope_head_dim", TRUE, &a->qk_nope_head_dim, dim, error) ||
            !hf_int(root, "qk_rope_head_dim", TRUE, &a->qk_rope_head_dim, dim, error) ||
            !hf_int(root, "v_head_dim", TRUE, &a->v_head_dim, dim, error) ||
            !hf_count(root, "num_nextn_predict_layers", &a->mtp_layers, layers, error))
            return FALSE;
        return check_extensions(a, root, &deepseek_keys, error);
    }
    }
    g_assert_not_reached();
}

static ParoModel *model_from_hf(const ParoNode *root, GError **error)
{
    ModelFile f = {0};
    const HfFamily *fam = hf_family(paro_node_lookup(root, "model_type"), error);
    if (fam == NULL || !check_hf_dense(root, fam, error))
        return NULL;
    Architecture *a = &f.arch;
    a->mlp = fam->mlp;
    a->norm = fam->norm;
    gboolean attn_bias = fam->bias, mlp_bias = fam->bias, tied = fam->tied;
    const ParoLimit *dim = &paro_limit_model_dim;
    if (!hf_int(root, fam->hidden, TRUE, &a->hidden, dim, error) ||
        !hf_int(root, fam->ffn, fam->ffn_per_hidden == 0, &a->ffn, dim, error) ||
        !hf_int(root, fam->layers, TRUE, &a->layers, &paro_limit_layers, error) ||
        !hf_int(root, fam->heads, TRUE, &a->heads, dim, error) ||
        !hf_int(root, "num_key_value_heads", FALSE, &a->kv_heads, dim, error) ||
        !hf_int(root, "head_dim", FALSE, &a->head_dim, dim, error) ||
        !hf_int(root, "vocab_size", TRUE, &a->vocab, dim, error) ||
        (fam->positions &&
         !hf_int(root, fam->positions, TRUE, &a->position_embeddings, dim, error)) ||
        !hf_bool(root, "tie_word_embeddings", &tied, error) ||
        !hf_bool(root, "attention_bias", &attn_bias, error) ||
        !hf_bool(root, "mlp_bias", &mlp_bias, error) ||
        !hf_probability(root, fam->attention_dropout, &a->attention_dropout, error) ||
        !hf_probability(root, fam->hidden_dropout, &a->hidden_dropout, error) ||
        !check_hf_projection(root, a->hidden, error))
        return NULL;
    if (!hf_experts(root, fam, a, error) || !check_hf_foreign_keys(root, fam, error) ||
        !hf_extensions(root, fam, a, &attn_bias, error))
        return NULL;
    gboolean enable_bias = TRUE; /* OPT's switch for every linear layer's bias */
    if (!hf_bool(root, "enable_bias", &enable_bias, error))
        return NULL;
    if (!enable_bias)
        attn_bias = mlp_bias = FALSE;
    if (a->ffn == 0)
        a->ffn = fam->ffn_per_hidden * a->hidden;
    if (a->position_embeddings > 0)
        a->position_embeddings += fam->position_offset;
    /* The rotary families turn every dimension of a head but GPT-NeoX, whose config says
     * which share (rotary_pct, 0.25 by default in GPTNeoXConfig; partial_rotary_factor in
     * newer transformers, which Phi-3 and others also read) */
    gboolean neox = fam == &hf_families[1];
    a->rotary = fam->positions ? 0.0 : neox ? 0.25 : 1.0;
    if (!fam->positions && (!hf_probability(root, "partial_rotary_factor", &a->rotary, error) ||
                            (neox && !hf_probability(root, "rotary_pct", &a->rotary, error))))
        return NULL;
    if (a->kv_heads == 0)
        a->kv_heads = a->heads;
    if (a->head_dim == 0)
        a->head_dim = a->hidden / a->heads;
    if (a->heads % a->kv_heads != 0) {
        paro_node_error(error, paro_node_lookup(root, "num_key_value_heads"),
                        PARO_CONFIG_ERROR_CONSTRAINT,
                        "num_attention_heads is not a multiple of "
                        "num_key_value_heads");
        return NULL;
    }
    f.has_arch = TRUE;
    g_autofree char *base = g_path_get_basename(root->source);
    const ParoNode *name = paro_node_lookup(root, "_name_or_path");
    f.name = (name && name->kind == PARO_NODE_SCALAR && name->scalar[0]) ? name->scalar : base;
    g_autoptr(ParoModel) m = model_from_record(&f, root->source);
    m->attn_bias = attn_bias;
    m->mlp_bias = mlp_bias;
    m->tied_embeddings = tied;
    if (!check_params(m, root, error))
        return NULL;
    return g_steal_pointer(&m);
}

ParoModel *paro_model_from_node(const ParoNode *root, GError **error)
{
    /* a HuggingFace config.json: no `kind`, and its own keys (GPT-2's has model_type but
     * no hidden_size) */
    if (root->kind == PARO_NODE_MAPPING && paro_node_lookup(root, "kind") == NULL &&
        (paro_node_lookup(root, "hidden_size") != NULL ||
         paro_node_lookup(root, "model_type") != NULL ||
         paro_node_lookup(root, "architectures") != NULL))
        return model_from_hf(root, error);
    return model_from_yaml(root, error);
}

ParoModel *paro_model_load(const char *path, GError **error)
{
    g_autoptr(ParoNode) root = paro_yaml_load_file(path, error);
    if (root == NULL)
        return NULL;
    return paro_model_from_node(root, error);
}
