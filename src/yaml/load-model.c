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
};

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
} HfFamily;

static const char *const llama_types[] = {"llama",  "mistral", "qwen2", "qwen3", "gemma",
                                          "gemma2", "olmo",    "phi3",  NULL};
static const char *const neox_types[] = {"gpt_neox", NULL};
static const char *const gpt2_types[] = {"gpt2", NULL};
static const char *const opt_types[] = {"opt", NULL};
static const char *const mixtral_types[] = {"mixtral", NULL};
static const char *const qwen3_moe_types[] = {"qwen3_moe", NULL};

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
    return check_hf_every_layer_sparse(root, error) &&
           hf_int(root, fam->experts, TRUE, &a->experts, &paro_limit_model_dim, error) &&
           hf_int(root, fam->experts_per_token, TRUE, &a->experts_per_token, &paro_limit_model_dim,
                  error) &&
           check_experts(a->experts, a->experts_per_token, e ? e : root, k ? k : root, error);
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
    if (!hf_experts(root, fam, a, error))
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
