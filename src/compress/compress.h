/* SPDX-License-Identifier: MIT */
/* Compression of collectives: a compressor per tensor kind (parameters, gradients,
 * optimizer output, activations), presets after the hybrid-compression paper (ZFP/MPC) and
 * ZeRO++ (qwZ/qgZ), and the cost of a compressed collective. The network moves S/ratio
 * bytes; the compression and decompression kernels run on the collective's own stream,
 * either pipelined with the transfer piece by piece (MVAPICH's multi-stream codec) or in
 * series with it (ZeRO++'s quantize-then-communicate kernels), and are reported apart as
 * "compress" time. compress.c derives the formulas; docs/decisions.md says why. */
#pragma once

#include <glib.h>

#include "coll/analytic.h"
#include "coll/collective.h"
#include "strategy/strategy.h"
#include "yaml/yaml.h"

G_BEGIN_DECLS

/* What a collective carries; the strategy's phase decides it (paro_compress_tensor_of). */
typedef enum {
    PARO_TENSOR_PARAMETERS,  /* all-gathers of weights (forward, backward) */
    PARO_TENSOR_GRADIENTS,   /* per-micro-step reduce-scatters and the gradient sync */
    PARO_TENSOR_OPTIMIZER,   /* the once-per-step sync of the optimizer's output (os -> p) */
    PARO_TENSOR_ACTIVATIONS, /* tensor-parallel collectives of a layer's activations */
    PARO_TENSOR_PIPELINE,    /* pipeline send/recv of stage-boundary activations, gradients */
    PARO_TENSOR_N,
} ParoTensorKind;

extern const char *const paro_tensor_kind_names[]; /* "parameters", ..., "pipeline", NULL */

typedef struct {
    gboolean enabled;       /* FALSE: the kind travels as it is, at no cost */
    const char *codec;      /* static: "zfp", "mpc", "int8", "int4", "custom" */
    double ratio;           /* input bytes / output bytes, >= 1 */
    double compress_Bps;    /* theta_c, uncompressed bytes per second; INFINITY = free */
    double decompress_Bps;  /* theta_d, uncompressed (output) bytes per second */
    double threshold_bytes; /* collectives of fewer bytes (S, the whole array) go as they are */
    double chunk_bytes;     /* pieces the codec pipelines with the transfer; 0: in series */
    gboolean lossless;
} ParoCompressor;

typedef enum {
    PARO_COMPRESS_NONE,
    PARO_COMPRESS_NAIVE,
    PARO_COMPRESS_HYBRID,
    PARO_COMPRESS_QWZ,
    PARO_COMPRESS_QGZ,
    PARO_COMPRESS_ZEROPP,
    PARO_COMPRESS_CUSTOM, /* no preset given, only explicit kinds (not a preset name) */
} ParoCompressPreset;

extern const char *const paro_compress_preset_names[]; /* "none" ... "zeropp", NULL */

typedef struct {
    ParoCompressPreset preset;
    ParoCompressor kinds[PARO_TENSOR_N];
} ParoCompression;

/* The default threshold: MVAPICH-Plus's PT2PT_GPU_COMPRESSION_THRESHOLD (1 MB) in IEC. */
#define PARO_COMPRESS_THRESHOLD_BYTES 1048576.0

/** paro_compress_preset: @c set to @preset's compressors. */
void paro_compress_preset(ParoCompression *c, ParoCompressPreset preset);

/* The default piece of a pipelined codec: the threshold, the smallest message MVAPICH
 * compresses at all, so a message at the threshold runs in series. */
#define PARO_COMPRESS_CHUNK_BYTES PARO_COMPRESS_THRESHOLD_BYTES

/** paro_compress_identity: an enabled compressor that changes nothing (ratio 1,
 * infinite throughputs, threshold and chunk 1 MiB, lossy flag off): the start of an
 * explicit kind. */
ParoCompressor paro_compress_identity(void);

/** paro_compress_is_active: some kind is enabled. */
gboolean paro_compress_is_active(const ParoCompression *c);

/** paro_compress_tensor_of: the tensor kind a strategy's collective carries in @phase. */
ParoTensorKind paro_compress_tensor_of(ParoPhase phase);

/** paro_compress_ranks: k, the GPUs of a collective of @scope: m, n/m or n. */
gint64 paro_compress_ranks(ParoScope scope, gint64 n, gint64 m);

typedef struct {
    gboolean applied;  /* enabled and S >= threshold */
    double wire_bytes; /* S/ratio when applied, else S: the size the network moves */
    double codec_s;    /* compression + decompression kernel time of one GPU */
    double pieces;     /* pipeline depth D: codec input / chunk, 1 when in series */
} ParoCompressCost;

/**
 * paro_compress_cost:
 * The cost of compressing a collective @op of @size_bytes (S, the whole array) over @k
 * GPUs with @c (nullable: none). With ratio 1 and infinite throughputs the result is
 * exactly {S, 0}, so such a compressor changes no time.
 */
ParoCompressCost paro_compress_cost(const ParoCompressor *c, ParoCollKind op, gint64 k,
                                    double size_bytes);

/** paro_compress_saved_bytes: bytes one GPU does not send thanks to @cc in a collective
 * of @size_bytes: its traffic (paro_coll_traffic on @cm) at S less that at the wire size;
 * 0 when not applied. */
double paro_compress_saved_bytes(const ParoCommModel *cm, ParoCollKind op, ParoScope scope,
                                 double size_bytes, const ParoCompressCost *cc);

/**
 * paro_compress_time_s:
 * The duration of a compressed collective whose network part takes @net_s (its S/ratio
 * bytes on the wire): codec and transfer as a two-stage pipeline of cc->pieces pieces,
 * max(net, codec) + min(net, codec)/D; D = 1 is the serial sum net + codec. Without
 * compression (or with free codecs) exactly @net_s.
 */
double paro_compress_time_s(const ParoCompressCost *cc, double net_s);

/** paro_compress_describe: (transfer full) one line per enabled kind, for report headers
 * ("# compression: ..."), or "" when none is active. */
char *paro_compress_describe(const ParoCompression *c);

/**
 * paro_compress_from_node:
 * Reads `compression: {preset: NAME, parameters: {...}, ...}`: the preset first (whatever
 * the key order), then each explicit kind over the preset's compressor for that kind (or
 * over paro_compress_identity when the preset leaves it off). Errors: located
 * PARO_CONFIG_ERROR (unknown preset or key, ratio < 1, throughput <= 0, negative threshold).
 */
gboolean paro_compress_from_node(const ParoNode *node, ParoCompression *c, GError **error);

G_END_DECLS
