/* SPDX-License-Identifier: MIT */
/*
 * `paro-harness gemm`: times cuBLASLt matmuls in bf16, fp16, tf32 and fp8 for
 * explicit shapes or for the forward and backward GEMMs of one transformer
 * layer, so that parosim's compute model can be fitted to the rates a real
 * GPU reaches on the shapes a model actually runs. Each product is checked
 * against a float64 reference on sampled output elements before it is timed.
 */
#include "harness.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#define GEMM_MAX_SHAPES 128
#define GEMM_SAMPLES 512

typedef struct {
    long long M, N, K; /* row-major view: C[M,N] = A[M,K] . B[K,N] */
    char layout[3];    /* cuBLAS column-major opA opB, e.g. "TN" */
    char name[40];
} gemm_shape;

typedef struct {
    const char *name; /* bf16, fp16, tf32, fp8, fp8fast */
    ph_dtype elem;    /* storage type of A and B */
    cudaDataType_t cuda_type;
    ph_dtype out_elem; /* storage type of C */
    cudaDataType_t out_cuda_type;
    cublasComputeType_t compute;
    double tol;     /* relative error bound, see METHOD.md */
    int tn_only;    /* Hopper's fp8 products take op(A) = T, op(B) = N only */
    int fast_accum; /* CUBLASLT_MATMUL_DESC_FAST_ACCUM */
} gemm_dtype;

/* fp8 is E4M3 operands into a bf16 output with fp32 accumulation, as Transformer Engine
 * runs its fp8 linears: every product in the TN layout (it keeps transposed fp8 copies for
 * the backward pass); `fp8fast` adds the fast accumulation TE uses for the forward product
 * by default (its split accumulator is on for dgrad and wgrad). */
static const gemm_dtype gemm_dtypes[] = {
    {"bf16", PH_BF16, CUDA_R_16BF, PH_BF16, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 1e-2, 0, 0},
    {"fp16", PH_F16, CUDA_R_16F, PH_F16, CUDA_R_16F, CUBLAS_COMPUTE_32F, 5e-3, 0, 0},
    {"tf32", PH_F32, CUDA_R_32F, PH_F32, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 2e-3, 0, 0},
    {"fp8", PH_E4M3, CUDA_R_8F_E4M3, PH_BF16, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 1e-2, 1, 0},
    {"fp8fast", PH_E4M3, CUDA_R_8F_E4M3, PH_BF16, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2e-2, 1, 1},
};
#define N_GEMM_DTYPES ((int)(sizeof gemm_dtypes / sizeof gemm_dtypes[0]))

static void gemm_usage(FILE *fp)
{
    fprintf(
        fp,
        "usage: paro-harness gemm [options]\n"
        "  --shape M,N,K        a product C[M,N] = A[M,K] B[K,N] (repeatable)\n"
        "  --layout TN|NN|NT|TT cuBLAS column-major op(A) op(B) of --shape entries (default TN,\n"
        "                       what torch.nn.Linear's forward calls)\n"
        "  --name LABEL         label of the following --shape entries (default 'shape')\n"
        "  transformer layer (forward, input-grad and weight-grad GEMMs of each linear):\n"
        "  --hidden H --ffn F --heads A [--kv-heads KV] --tokens T [--gated] [--prefix P]\n"
        "  --dtype LIST         comma list of bf16, fp16, tf32, fp8, fp8fast (default\n"
        "                       bf16,fp16,tf32; fp8 runs every product as TN)\n"
        "  --reps N             timed repetitions, median reported (default 50, at least 20)\n"
        "  --warmup N           untimed repetitions first (default 10)\n"
        "  --workspace BYTES    cuBLASLt workspace (default 32M)\n"
        "  --device N           CUDA device (default 0)\n"
        "  --no-check           skip the reference check\n"
        "  -J FILE              write the results as JSON too\n");
}

static int add_shape(gemm_shape *sh, int *n, long long M, long long N, long long K,
                     const char *layout, const char *name)
{
    if (*n >= GEMM_MAX_SHAPES) {
        fprintf(stderr, "paro-harness gemm: more than %d shapes\n", GEMM_MAX_SHAPES);
        return 0;
    }
    gemm_shape *s = &sh[(*n)++];
    s->M = M;
    s->N = N;
    s->K = K;
    snprintf(s->layout, sizeof s->layout, "%s", layout);
    snprintf(s->name, sizeof s->name, "%s", name);
    return 1;
}

/* A linear layer Y[T,out] = X[T,in] W[out,in]^T as PyTorch runs it:
 * forward (TN), input grad dX = dY W (NN), weight grad dW = dY^T X (NT). */
static int add_linear(gemm_shape *sh, int *n, const char *prefix, const char *lin, long long T,
                      long long in, long long out)
{
    char name[40];
    snprintf(name, sizeof name, "%s%s.fwd", prefix, lin);
    if (!add_shape(sh, n, T, out, in, "TN", name))
        return 0;
    snprintf(name, sizeof name, "%s%s.dgrad", prefix, lin);
    if (!add_shape(sh, n, T, in, out, "NN", name))
        return 0;
    snprintf(name, sizeof name, "%s%s.wgrad", prefix, lin);
    if (!add_shape(sh, n, out, in, T, "NT", name))
        return 0;
    return 1;
}

/* ---- reference check ---------------------------------------------------------- */

__device__ static inline double load_elem(const void *p, size_t i, int t)
{
    if (t == PH_F32)
        return (double)((const float *)p)[i];
    if (t == PH_F16)
        return (double)__half2float(((const __half *)p)[i]);
    if (t == PH_E4M3)
        return (double)(float)((const __nv_fp8_e4m3 *)p)[i];
    return (double)__bfloat162float(((const __nv_bfloat16 *)p)[i]);
}

/* Column-major cuBLAS view: C(m x n) = op(A) op(B), ldc = m. One thread per
 * sampled element, summing in float64 over the (already rounded) inputs. */
__global__ void gemm_ref_kernel(const void *A, const void *B, const void *C, int t, int tc,
                                long long m, long long n, long long k, int ta, int tb,
                                const long long *si, const long long *sj, int ns, double *ref,
                                double *got)
{
    int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= ns)
        return;
    long long i = si[s], j = sj[s];
    double acc = 0.0;
    for (long long l = 0; l < k; l++) {
        double a = ta ? load_elem(A, (size_t)(l + i * k), t) : load_elem(A, (size_t)(i + l * m), t);
        double b = tb ? load_elem(B, (size_t)(j + l * n), t) : load_elem(B, (size_t)(l + j * k), t);
        acc += a * b;
    }
    ref[s] = acc;
    got[s] = load_elem(C, (size_t)(i + j * m), tc);
}

/* Counts elements that are not finite: the output was poisoned with NaN. */
__global__ void count_nonfinite_kernel(const void *C, size_t n, int t, unsigned long long *bad)
{
    unsigned long long local = 0;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        double v = load_elem(C, i, t);
        if (!isfinite(v))
            local++;
    }
    if (local)
        atomicAdd(bad, local);
}

typedef struct {
    cublasLtHandle_t lt;
    void *workspace;
    size_t ws_bytes;
    cudaStream_t stream;
    int l2_bytes;
    int sms;
    int reps, warmup, check;
} gemm_ctx;

typedef struct {
    double median_us, min_us;
    double relerr;
    long long nonfinite;
    int nbuf;
    int pass;
} gemm_out;

static ph_result run_one(gemm_ctx *ctx, const gemm_shape *sh, const gemm_dtype *dt, uint64_t seed,
                         gemm_out *out)
{
    /* cuBLAS column-major dims of the row-major product C[M,N] = A[M,K] B[K,N]:
     * C^T (N x M) = B^T A^T, so m = N, n = M and the row-major A is cuBLAS's B. */
    long long m = sh->N, n = sh->M, k = sh->K;
    int ta = sh->layout[0] == 'T', tb = sh->layout[1] == 'T';
    size_t es = ph_dtype_size(dt->elem), esc = ph_dtype_size(dt->out_elem);
    size_t na = (size_t)m * k, nb = (size_t)k * n, nc = (size_t)m * n;
    size_t bytes = (na + nb) * es + nc * esc;

    /* Rotate among several operand sets when one set would stay in L2. */
    int nbuf = 1;
    size_t target = 4 * (size_t)ctx->l2_bytes;
    if (bytes < target)
        nbuf = (int)((target + bytes - 1) / bytes);
    if (nbuf > 64)
        nbuf = 64;
    out->nbuf = nbuf;

    void *A[64], *B[64], *C[64];
    memset(A, 0, sizeof A);
    memset(B, 0, sizeof B);
    memset(C, 0, sizeof C);
    for (int b = 0; b < nbuf; b++) {
        CUDA_CHECK(cudaMalloc(&A[b], na * es));
        CUDA_CHECK(cudaMalloc(&B[b], nb * es));
        CUDA_CHECK(cudaMalloc(&C[b], nc * esc));
        PH_CHECK(ph_fill_uniform(A[b], na, dt->elem, seed * 131 + 2 * b, -1.0f, 1.0f, ctx->stream));
        PH_CHECK(
            ph_fill_uniform(B[b], nb, dt->elem, seed * 131 + 2 * b + 1, -1.0f, 1.0f, ctx->stream));
        CUDA_CHECK(cudaMemsetAsync(C[b], 0, nc * esc, ctx->stream));
    }

    cublasLtMatmulDesc_t op = NULL;
    cublasLtMatrixLayout_t la = NULL, lb = NULL, lc = NULL;
    cublasLtMatmulPreference_t pref = NULL;
    cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    CUBLAS_CHECK(cublasLtMatmulDescCreate(&op, dt->compute, CUDA_R_32F));
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof opa));
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof opb));
    if (dt->fast_accum) {
        int8_t fast = 1;
        CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast,
                                                    sizeof fast));
    }
    CUBLAS_CHECK(
        cublasLtMatrixLayoutCreate(&la, dt->cuda_type, ta ? k : m, ta ? m : k, ta ? k : m));
    CUBLAS_CHECK(
        cublasLtMatrixLayoutCreate(&lb, dt->cuda_type, tb ? n : k, tb ? k : n, tb ? n : k));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&lc, dt->out_cuda_type, m, n, m));
    CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ctx->ws_bytes, sizeof ctx->ws_bytes));
    cublasLtMatmulHeuristicResult_t heur;
    int nres = 0;
    CUBLAS_CHECK(
        cublasLtMatmulAlgoGetHeuristic(ctx->lt, op, la, lb, lc, lc, pref, 1, &heur, &nres));
    if (nres < 1) {
        fprintf(stderr, "paro-harness gemm: no cuBLASLt algorithm for %s %lldx%lldx%lld %s\n",
                dt->name, sh->M, sh->N, sh->K, sh->layout);
        return PH_CUBLAS_ERROR;
    }
    float alpha = 1.0f, beta = 0.0f;

    /* Check outside the timed loop: poison C, run once, compare samples. */
    out->relerr = NAN;
    out->nonfinite = -1;
    out->pass = 1;
    if (ctx->check) {
        CUDA_CHECK(cudaMemsetAsync(C[0], 0xFF, nc * esc, ctx->stream)); /* NaN in C's types */
        CUBLAS_CHECK(cublasLtMatmul(ctx->lt, op, &alpha, A[0], la, B[0], lb, &beta, C[0], lc, C[0],
                                    lc, &heur.algo, ctx->workspace, ctx->ws_bytes, ctx->stream));
        long long hsi[GEMM_SAMPLES], hsj[GEMM_SAMPLES];
        uint64_t st = seed * 0x9e3779b97f4a7c15ull + 12345;
        for (int s = 0; s < GEMM_SAMPLES; s++) {
            st = st * 6364136223846793005ull + 1442695040888963407ull;
            hsi[s] = (long long)((st >> 33) % (uint64_t)m);
            st = st * 6364136223846793005ull + 1442695040888963407ull;
            hsj[s] = (long long)((st >> 33) % (uint64_t)n);
        }
        hsi[0] = 0;
        hsj[0] = 0; /* the corners catch off-by-one layouts */
        hsi[1] = m - 1;
        hsj[1] = n - 1;
        long long *dsi, *dsj;
        double *dref, *dgot;
        unsigned long long *dbad;
        CUDA_CHECK(cudaMalloc(&dsi, sizeof hsi));
        CUDA_CHECK(cudaMalloc(&dsj, sizeof hsj));
        CUDA_CHECK(cudaMalloc(&dref, GEMM_SAMPLES * sizeof(double)));
        CUDA_CHECK(cudaMalloc(&dgot, GEMM_SAMPLES * sizeof(double)));
        CUDA_CHECK(cudaMalloc(&dbad, sizeof *dbad));
        CUDA_CHECK(cudaMemcpyAsync(dsi, hsi, sizeof hsi, cudaMemcpyHostToDevice, ctx->stream));
        CUDA_CHECK(cudaMemcpyAsync(dsj, hsj, sizeof hsj, cudaMemcpyHostToDevice, ctx->stream));
        CUDA_CHECK(cudaMemsetAsync(dbad, 0, sizeof *dbad, ctx->stream));
        gemm_ref_kernel<<<(GEMM_SAMPLES + 63) / 64, 64, 0, ctx->stream>>>(
            A[0], B[0], C[0], (int)dt->elem, (int)dt->out_elem, m, n, k, ta, tb, dsi, dsj,
            GEMM_SAMPLES, dref, dgot);
        CUDA_CHECK_LAUNCH();
        count_nonfinite_kernel<<<ctx->sms * 8, 256, 0, ctx->stream>>>(C[0], nc, (int)dt->out_elem,
                                                                      dbad);
        CUDA_CHECK_LAUNCH();
        double href[GEMM_SAMPLES], hgot[GEMM_SAMPLES];
        unsigned long long hbad = 0;
        CUDA_CHECK(cudaMemcpyAsync(href, dref, sizeof href, cudaMemcpyDeviceToHost, ctx->stream));
        CUDA_CHECK(cudaMemcpyAsync(hgot, dgot, sizeof hgot, cudaMemcpyDeviceToHost, ctx->stream));
        CUDA_CHECK(cudaMemcpyAsync(&hbad, dbad, sizeof hbad, cudaMemcpyDeviceToHost, ctx->stream));
        CUDA_CHECK(cudaStreamSynchronize(ctx->stream));
        double num = 0.0, den = 0.0;
        for (int s = 0; s < GEMM_SAMPLES; s++) {
            double d = hgot[s] - href[s];
            num += d * d;
            den += href[s] * href[s];
        }
        out->relerr = den > 0 ? sqrt(num / den) : INFINITY;
        out->nonfinite = (long long)hbad;
        out->pass = isfinite(out->relerr) && out->relerr <= dt->tol && hbad == 0;
        CUDA_CHECK(cudaFree(dsi));
        CUDA_CHECK(cudaFree(dsj));
        CUDA_CHECK(cudaFree(dref));
        CUDA_CHECK(cudaFree(dgot));
        CUDA_CHECK(cudaFree(dbad));
    }

    /* Warm-up, then one event pair per repetition, all enqueued back to back. */
    for (int r = 0; r < ctx->warmup; r++) {
        int b = r % nbuf;
        CUBLAS_CHECK(cublasLtMatmul(ctx->lt, op, &alpha, A[b], la, B[b], lb, &beta, C[b], lc, C[b],
                                    lc, &heur.algo, ctx->workspace, ctx->ws_bytes, ctx->stream));
    }
    int reps = ctx->reps;
    cudaEvent_t *ev = (cudaEvent_t *)calloc((size_t)2 * reps, sizeof *ev);
    double *t = (double *)calloc((size_t)reps, sizeof *t);
    if (ev == NULL || t == NULL)
        return PH_SYS_ERROR;
    for (int r = 0; r < 2 * reps; r++)
        CUDA_CHECK(cudaEventCreate(&ev[r]));
    for (int r = 0; r < reps; r++) {
        int b = (r + ctx->warmup) % nbuf;
        CUDA_CHECK(cudaEventRecord(ev[2 * r], ctx->stream));
        CUBLAS_CHECK(cublasLtMatmul(ctx->lt, op, &alpha, A[b], la, B[b], lb, &beta, C[b], lc, C[b],
                                    lc, &heur.algo, ctx->workspace, ctx->ws_bytes, ctx->stream));
        CUDA_CHECK(cudaEventRecord(ev[2 * r + 1], ctx->stream));
    }
    CUDA_CHECK(cudaStreamSynchronize(ctx->stream));
    for (int r = 0; r < reps; r++) {
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, ev[2 * r], ev[2 * r + 1]));
        t[r] = 1e3 * (double)ms;
    }
    out->min_us = ph_min(t, reps);
    out->median_us = ph_median(t, reps);
    for (int r = 0; r < 2 * reps; r++)
        CUDA_CHECK(cudaEventDestroy(ev[r]));
    free(ev);
    free(t);

    CUBLAS_CHECK(cublasLtMatmulPreferenceDestroy(pref));
    CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(la));
    CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(lb));
    CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(lc));
    CUBLAS_CHECK(cublasLtMatmulDescDestroy(op));
    for (int b = 0; b < nbuf; b++) {
        CUDA_CHECK(cudaFree(A[b]));
        CUDA_CHECK(cudaFree(B[b]));
        CUDA_CHECK(cudaFree(C[b]));
    }
    return PH_OK;
}

ph_result ph_cmd_gemm(int argc, char **argv, int first)
{
    static gemm_shape shapes[GEMM_MAX_SHAPES];
    int nshapes = 0;
    char layout[3] = "TN", label[40] = "shape", prefix[24] = "";
    long long hidden = 0, ffn = 0, heads = 0, kv_heads = 0, tokens = 0;
    int gated = 0;
    int use_dt[N_GEMM_DTYPES] = {1, 1, 1, 0, 0};
    gemm_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.reps = 50;
    ctx.warmup = 10;
    ctx.check = 1;
    ctx.ws_bytes = 32u << 20;
    int device = 0;
    const char *json_path = NULL;

    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        const char *v = (i + 1 < argc) ? argv[i + 1] : NULL;
        long long x;
        size_t sz;
#define NEED_VALUE()                                                                               \
    do {                                                                                           \
        if (v == NULL) {                                                                           \
            fprintf(stderr, "paro-harness gemm: %s needs a value\n", a);                           \
            return PH_USAGE;                                                                       \
        }                                                                                          \
        i++;                                                                                       \
    } while (0)
#define INT_VALUE(dst)                                                                             \
    do {                                                                                           \
        NEED_VALUE();                                                                              \
        if (!ph_parse_int(v, &x) || x < 0) {                                                       \
            fprintf(stderr, "paro-harness gemm: bad value '%s' for %s\n", v, a);                   \
            return PH_USAGE;                                                                       \
        }                                                                                          \
        dst = x;                                                                                   \
    } while (0)
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            gemm_usage(stdout);
            return PH_OK;
        } else if (strcmp(a, "--shape") == 0) {
            NEED_VALUE();
            long long M, N, K;
            char extra;
            if (sscanf(v, "%lld,%lld,%lld%c", &M, &N, &K, &extra) != 3 || M <= 0 || N <= 0 ||
                K <= 0) {
                fprintf(stderr, "paro-harness gemm: bad --shape '%s' (want M,N,K)\n", v);
                return PH_USAGE;
            }
            if (!add_shape(shapes, &nshapes, M, N, K, layout, label))
                return PH_USAGE;
        } else if (strcmp(a, "--layout") == 0) {
            NEED_VALUE();
            if (strlen(v) != 2 || (v[0] != 'N' && v[0] != 'T') || (v[1] != 'N' && v[1] != 'T')) {
                fprintf(stderr, "paro-harness gemm: bad --layout '%s' (want NN, NT, TN or TT)\n",
                        v);
                return PH_USAGE;
            }
            snprintf(layout, sizeof layout, "%s", v);
        } else if (strcmp(a, "--name") == 0) {
            NEED_VALUE();
            snprintf(label, sizeof label, "%s", v);
        } else if (strcmp(a, "--prefix") == 0) {
            NEED_VALUE();
            snprintf(prefix, sizeof prefix, "%s", v);
        } else if (strcmp(a, "--hidden") == 0) {
            INT_VALUE(hidden);
        } else if (strcmp(a, "--ffn") == 0) {
            INT_VALUE(ffn);
        } else if (strcmp(a, "--heads") == 0) {
            INT_VALUE(heads);
        } else if (strcmp(a, "--kv-heads") == 0) {
            INT_VALUE(kv_heads);
        } else if (strcmp(a, "--tokens") == 0) {
            INT_VALUE(tokens);
        } else if (strcmp(a, "--gated") == 0) {
            gated = 1;
        } else if (strcmp(a, "--dtype") == 0) {
            NEED_VALUE();
            char buf[128];
            snprintf(buf, sizeof buf, "%s", v);
            for (int d = 0; d < N_GEMM_DTYPES; d++)
                use_dt[d] = 0;
            for (char *tok = strtok(buf, ","); tok != NULL; tok = strtok(NULL, ",")) {
                int found = 0;
                for (int d = 0; d < N_GEMM_DTYPES; d++) {
                    if (strcmp(tok, gemm_dtypes[d].name) == 0) {
                        use_dt[d] = 1;
                        found = 1;
                    }
                }
                if (!found) {
                    fprintf(stderr,
                            "paro-harness gemm: unknown dtype '%s' (known: bf16, fp16, tf32, fp8,"
                            " fp8fast)\n",
                            tok);
                    return PH_USAGE;
                }
            }
        } else if (strcmp(a, "--reps") == 0) {
            INT_VALUE(ctx.reps);
            if (ctx.reps < 20) {
                fprintf(stderr, "paro-harness gemm: --reps must be at least 20\n");
                return PH_USAGE;
            }
        } else if (strcmp(a, "--warmup") == 0) {
            INT_VALUE(ctx.warmup);
        } else if (strcmp(a, "--workspace") == 0) {
            NEED_VALUE();
            if (!ph_parse_size(v, &sz)) {
                fprintf(stderr, "paro-harness gemm: bad --workspace '%s'\n", v);
                return PH_USAGE;
            }
            ctx.ws_bytes = sz;
        } else if (strcmp(a, "--device") == 0) {
            INT_VALUE(device);
        } else if (strcmp(a, "--no-check") == 0) {
            ctx.check = 0;
        } else if (strcmp(a, "-J") == 0 || strcmp(a, "--json") == 0) {
            NEED_VALUE();
            json_path = v;
        } else {
            fprintf(stderr, "paro-harness gemm: unknown option '%s'\n", a);
            gemm_usage(stderr);
            return PH_USAGE;
        }
#undef INT_VALUE
#undef NEED_VALUE
    }

    if (hidden || ffn || heads || tokens) {
        if (!hidden || !ffn || !heads || !tokens) {
            fprintf(stderr,
                    "paro-harness gemm: a layer needs --hidden, --ffn, --heads and --tokens\n");
            return PH_USAGE;
        }
        if (hidden % heads != 0) {
            fprintf(stderr, "paro-harness gemm: --hidden %lld is not a multiple of --heads %lld\n",
                    hidden, heads);
            return PH_USAGE;
        }
        if (kv_heads == 0)
            kv_heads = heads;
        long long hd = hidden / heads;
        if (!add_linear(shapes, &nshapes, prefix, "qkv", tokens, hidden,
                        (heads + 2 * kv_heads) * hd) ||
            !add_linear(shapes, &nshapes, prefix, "attn_out", tokens, heads * hd, hidden) ||
            !add_linear(shapes, &nshapes, prefix, gated ? "mlp_up_gate" : "mlp_up", tokens, hidden,
                        gated ? 2 * ffn : ffn) ||
            !add_linear(shapes, &nshapes, prefix, "mlp_down", tokens, ffn, hidden))
            return PH_USAGE;
    }
    if (nshapes == 0) {
        fprintf(stderr, "paro-harness gemm: no shapes (use --shape or the layer options)\n");
        gemm_usage(stderr);
        return PH_USAGE;
    }

    CUDA_CHECK(cudaSetDevice(device));
    ph_env env;
    PH_CHECK(ph_env_collect(&env, "gemm", device, argc, argv));
    ctx.l2_bytes = env.l2_bytes;
    ctx.sms = env.sm_count;
    CUDA_CHECK(cudaStreamCreateWithFlags(&ctx.stream, cudaStreamNonBlocking));
    CUBLAS_CHECK(cublasLtCreate(&ctx.lt));
    CUDA_CHECK(cudaMalloc(&ctx.workspace, ctx.ws_bytes));

    ph_env_print(&env, stdout);
    printf("# C[M,N] = A[M,K] B[K,N] row-major; layout = cuBLAS column-major op(A)op(B)"
           " (TN fwd, NN dgrad, NT wgrad of nn.Linear)\n");
    if (tokens) {
        printf("# layer: hidden %lld  ffn %lld  heads %lld  kv_heads %lld  tokens %lld  gated %d\n",
               hidden, ffn, heads, kv_heads, tokens, gated);
    }
    printf("# reps %d (median)  warmup %d  workspace %zu B  algo: cuBLASLt heuristic #1"
           "  check: %s (%d sampled outputs vs float64)\n",
           ctx.reps, ctx.warmup, ctx.ws_bytes, ctx.check ? "on" : "off", GEMM_SAMPLES);
    printf("# FLOPs = 2*M*N*K; nbuf = operand sets rotated to defeat L2\n");
    printf("#%8s %8s %8s %6s %11s %9s %6s %-28s %4s %9s %11s\n", "M", "N", "K", "dtype", "time(us)",
           "TFLOP/s", "layout", "name", "nbuf", "relerr", "min(us)");

    PH_CHECK(ph_json_open(json_path, &env));
    ph_json_section("params");
    ph_json_int("reps", ctx.reps);
    ph_json_int("warmup", ctx.warmup);
    ph_json_int("workspace_bytes", (long long)ctx.ws_bytes);
    ph_json_int("check", ctx.check);
    if (tokens) {
        ph_json_int("hidden", hidden);
        ph_json_int("ffn", ffn);
        ph_json_int("heads", heads);
        ph_json_int("kv_heads", kv_heads);
        ph_json_int("tokens", tokens);
        ph_json_int("gated", gated);
    }
    ph_json_section_end();
    ph_json_results_begin();

    int failures = 0;
    double best = 0.0;
    uint64_t seed = 1;
    for (int d = 0; d < N_GEMM_DTYPES; d++) {
        if (!use_dt[d])
            continue;
        const gemm_dtype *dt = &gemm_dtypes[d];
        for (int s = 0; s < nshapes; s++) {
            gemm_shape shape = shapes[s];
            if (dt->tn_only)
                snprintf(shape.layout, sizeof shape.layout, "TN");
            const gemm_shape *sh = &shape;
            gemm_out o;
            PH_CHECK(run_one(&ctx, sh, dt, seed++, &o));
            double flops = 2.0 * (double)sh->M * (double)sh->N * (double)sh->K;
            double tflops = flops / (o.median_us * 1e-6) / 1e12;
            if (tflops > best)
                best = tflops;
            printf(" %8lld %8lld %8lld %6s %11.2f %9.2f %6s %-28s %4d %9.2e %11.2f%s\n", sh->M,
                   sh->N, sh->K, dt->name, o.median_us, tflops, sh->layout, sh->name, o.nbuf,
                   o.relerr, o.min_us, o.pass ? "" : "  CHECK-FAILED");
            fflush(stdout);
            if (!o.pass) {
                failures++;
                fprintf(stderr,
                        "paro-harness gemm: check failed for %s %lldx%lldx%lld %s: relerr %.3e"
                        " (bound %.1e), %lld non-finite outputs\n",
                        dt->name, sh->M, sh->N, sh->K, sh->layout, o.relerr, dt->tol, o.nonfinite);
            }
            ph_json_row_begin();
            ph_json_int("M", sh->M);
            ph_json_int("N", sh->N);
            ph_json_int("K", sh->K);
            ph_json_str("dtype", dt->name);
            ph_json_num("time_us", o.median_us);
            ph_json_num("min_time_us", o.min_us);
            ph_json_num("tflops", tflops);
            ph_json_str("layout", sh->layout);
            ph_json_str("name", sh->name);
            ph_json_int("nbuf", o.nbuf);
            ph_json_num("relerr", o.relerr);
            ph_json_int("nonfinite", o.nonfinite);
            ph_json_int("pass", o.pass);
            ph_json_row_end();
        }
    }
    ph_json_results_end();
    ph_json_section("summary");
    ph_json_num("best_tflops", best);
    ph_json_int("check_failures", failures);
    ph_json_section_end();
    ph_json_close();
    printf("# Best rate: %.2f TFLOP/s\n", best);
    printf("# Check failures: %d %s\n#\n", failures, failures ? "FAILED" : "OK");

    CUDA_CHECK(cudaFree(ctx.workspace));
    CUBLAS_CHECK(cublasLtDestroy(ctx.lt));
    CUDA_CHECK(cudaStreamDestroy(ctx.stream));
    return failures ? PH_CHECK_FAILED : PH_OK;
}
