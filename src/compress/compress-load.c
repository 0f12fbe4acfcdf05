/* SPDX-License-Identifier: MIT */
/* The scenario's `compression:` mapping. A preset fills every kind; explicit kinds then
 * change the preset's compressor for that kind key by key, so
 * `--set compression.parameters.threshold=4MiB` tunes a preset instead of replacing it.
 * The walk first only records where each kind is (so the preset applies first whatever
 * the key order), then reads each kind over the preset's compressor. */
#include "compress/compress.h"

#include <string.h>

#include "yaml/schema.h"

/* PARO_FIELD_ENUM fields are written as ints. */
G_STATIC_ASSERT(sizeof(ParoCompressPreset) == sizeof(int));

typedef struct {
    int preset;
    const ParoNode *kinds[PARO_TENSOR_N];
} Parsed;

static gboolean remember_node(const ParoNode *node, gpointer ptr, gpointer user_data,
                              GError **error)
{
    *(const ParoNode **)ptr = node;
    return TRUE;
}

static const ParoField compression_fields[] = {
    {"preset", PARO_FIELD_ENUM, 0, G_STRUCT_OFFSET(Parsed, preset), 0, paro_compress_preset_names,
     NULL, "none, naive, hybrid (compression paper), qwz, qgz, zeropp (ZeRO++)"},
    {"parameters", PARO_FIELD_CUSTOM, 0, G_STRUCT_OFFSET(Parsed, kinds[PARO_TENSOR_PARAMETERS]), 0,
     NULL, remember_node, "parameter all-gathers: a compressor or none"},
    {"gradients", PARO_FIELD_CUSTOM, 0, G_STRUCT_OFFSET(Parsed, kinds[PARO_TENSOR_GRADIENTS]), 0,
     NULL, remember_node, "gradient reduce-scatters, all-reduces and sync: a compressor or none"},
    {"optimizer", PARO_FIELD_CUSTOM, 0, G_STRUCT_OFFSET(Parsed, kinds[PARO_TENSOR_OPTIMIZER]), 0,
     NULL, remember_node, "the parameter sync after the optimizer: a compressor or none"},
    {"activations", PARO_FIELD_CUSTOM, 0, G_STRUCT_OFFSET(Parsed, kinds[PARO_TENSOR_ACTIVATIONS]),
     0, NULL, remember_node, "tensor-parallel collectives of activations: a compressor or none"},
    {"pipeline", PARO_FIELD_CUSTOM, 0, G_STRUCT_OFFSET(Parsed, kinds[PARO_TENSOR_PIPELINE]), 0,
     NULL, remember_node, "pipeline sends between stages: a compressor or none"},
};

static const ParoField compressor_fields[] = {
    {"ratio", PARO_FIELD_RATIO, PARO_FIELD_POSITIVE, G_STRUCT_OFFSET(ParoCompressor, ratio), 0,
     NULL, NULL, "input bytes / output bytes, >= 1"},
    {"compress", PARO_FIELD_QUANTITY, PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(ParoCompressor, compress_Bps), PARO_QUANTITY_BANDWIDTH, NULL, NULL,
     "compression throughput, uncompressed bytes/s; default: free", &paro_limit_bandwidth},
    {"decompress", PARO_FIELD_QUANTITY, PARO_FIELD_POSITIVE,
     G_STRUCT_OFFSET(ParoCompressor, decompress_Bps), PARO_QUANTITY_BANDWIDTH, NULL, NULL,
     "decompression throughput, uncompressed bytes/s; default: free", &paro_limit_bandwidth},
    {"threshold", PARO_FIELD_QUANTITY, PARO_FIELD_NONNEG,
     G_STRUCT_OFFSET(ParoCompressor, threshold_bytes), PARO_QUANTITY_BYTES, NULL, NULL,
     "collectives smaller than this go uncompressed; default 1 MiB", &paro_limit_bytes},
    {"chunk", PARO_FIELD_QUANTITY, PARO_FIELD_NONNEG, G_STRUCT_OFFSET(ParoCompressor, chunk_bytes),
     PARO_QUANTITY_BYTES, NULL, NULL,
     "pieces the codec pipelines with the transfer; 0: codec in series; default 1 MiB",
     &paro_limit_bytes},
    {"lossless", PARO_FIELD_BOOL, 0, G_STRUCT_OFFSET(ParoCompressor, lossless), 0, NULL, NULL,
     "the codec is lossless (reported; no effect on time)"},
};

static gboolean read_kind(const ParoNode *node, ParoTensorKind kind, ParoCompressor *out,
                          GError **error)
{
    const char *name = paro_tensor_kind_names[kind];
    if (node->kind == PARO_NODE_SCALAR && strcmp(node->scalar, "none") == 0) {
        *out = (ParoCompressor){0};
        return TRUE;
    }
    if (!out->enabled)
        *out = paro_compress_identity();
    if (!paro_schema_apply(node, name, compressor_fields, G_N_ELEMENTS(compressor_fields), out,
                           NULL, NULL, error))
        return FALSE;
    if (out->ratio < 1) {
        paro_node_error(error, paro_node_lookup(node, "ratio"), PARO_CONFIG_ERROR_RANGE,
                        "'ratio' of %s compression must be at least 1 (input bytes / output "
                        "bytes), got %g",
                        name, out->ratio);
        return FALSE;
    }
    return TRUE;
}

gboolean paro_compress_from_node(const ParoNode *node, ParoCompression *c, GError **error)
{
    Parsed parsed = {.preset = PARO_COMPRESS_CUSTOM};
    if (!paro_schema_apply(node, "compression", compression_fields,
                           G_N_ELEMENTS(compression_fields), &parsed, NULL, NULL, error))
        return FALSE;
    paro_compress_preset(c, (ParoCompressPreset)parsed.preset);
    for (int k = 0; k < PARO_TENSOR_N; k++)
        if (parsed.kinds[k] && !read_kind(parsed.kinds[k], k, &c->kinds[k], error))
            return FALSE;
    return TRUE;
}
