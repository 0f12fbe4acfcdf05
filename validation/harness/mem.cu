/* SPDX-License-Identifier: MIT */
/*
 * `paro-harness hbm` and `paro-harness h2d`: device-memory bandwidth (a
 * cudaMemcpy device-to-device copy, a vectorised copy kernel and an
 * Adam-like read-modify-write kernel) and pinned host<->device copy
 * bandwidth over a size sweep. parosim fits its memory-bound kernel times
 * (optimizer step, copies, offload) from these tables.
 */
#include "harness.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_bf16.h>

#define MAX_NBUF 64

typedef struct {
    size_t minb, maxb, factor;
    int reps, warmup, check, device;
    const char *json_path;
    int ops; /* bit mask */
    int help;
} mem_args;

enum { OP_MEMCPY = 1, OP_COPY = 2, OP_ADAM = 4, OP_H2D = 8, OP_D2H = 16 };

static ph_result parse_mem_args(const char *cmd, int argc, char **argv, int first, mem_args *a,
                                void (*usage)(FILE *))
{
    for (int i = first; i < argc; i++) {
        const char *o = argv[i];
        const char *v = (i + 1 < argc) ? argv[i + 1] : NULL;
        long long x;
        if (strcmp(o, "-h") == 0 || strcmp(o, "--help") == 0) {
            usage(stdout);
            a->help = 1;
            return PH_OK;
        }
        if (strcmp(o, "--no-check") == 0) {
            a->check = 0;
            continue;
        }
        if (v == NULL) {
            fprintf(stderr, "paro-harness %s: unknown option or missing value: '%s'\n", cmd, o);
            usage(stderr);
            return PH_USAGE;
        }
        i++;
        if (strcmp(o, "-b") == 0 || strcmp(o, "--minbytes") == 0) {
            if (!ph_parse_size(v, &a->minb) || a->minb == 0)
                goto bad;
        } else if (strcmp(o, "-e") == 0 || strcmp(o, "--maxbytes") == 0) {
            if (!ph_parse_size(v, &a->maxb) || a->maxb == 0)
                goto bad;
        } else if (strcmp(o, "-f") == 0 || strcmp(o, "--stepfactor") == 0) {
            if (!ph_parse_int(v, &x) || x < 2)
                goto bad;
            a->factor = (size_t)x;
        } else if (strcmp(o, "-n") == 0 || strcmp(o, "--reps") == 0) {
            if (!ph_parse_int(v, &x) || x < 20) {
                fprintf(stderr, "paro-harness %s: %s must be at least 20\n", cmd, o);
                return PH_USAGE;
            }
            a->reps = (int)x;
        } else if (strcmp(o, "-w") == 0 || strcmp(o, "--warmup") == 0) {
            if (!ph_parse_int(v, &x) || x < 0)
                goto bad;
            a->warmup = (int)x;
        } else if (strcmp(o, "--device") == 0) {
            if (!ph_parse_int(v, &x) || x < 0)
                goto bad;
            a->device = (int)x;
        } else if (strcmp(o, "-J") == 0 || strcmp(o, "--json") == 0) {
            a->json_path = v;
        } else if (strcmp(o, "--ops") == 0) {
            char buf[128];
            int mask = 0;
            snprintf(buf, sizeof buf, "%s", v);
            for (char *t = strtok(buf, ","); t != NULL; t = strtok(NULL, ",")) {
                if (strcmp(t, "memcpy") == 0)
                    mask |= OP_MEMCPY;
                else if (strcmp(t, "copy") == 0)
                    mask |= OP_COPY;
                else if (strcmp(t, "adam") == 0)
                    mask |= OP_ADAM;
                else if (strcmp(t, "h2d") == 0)
                    mask |= OP_H2D;
                else if (strcmp(t, "d2h") == 0)
                    mask |= OP_D2H;
                else {
                    fprintf(stderr, "paro-harness %s: unknown op '%s'\n", cmd, t);
                    return PH_USAGE;
                }
            }
            a->ops = mask;
        } else {
            fprintf(stderr, "paro-harness %s: unknown option '%s'\n", cmd, o);
            usage(stderr);
            return PH_USAGE;
        }
        continue;
    bad:
        fprintf(stderr, "paro-harness %s: bad value '%s' for %s\n", cmd, v, o);
        return PH_USAGE;
    }
    if (a->minb > a->maxb) {
        fprintf(stderr, "paro-harness %s: -b is larger than -e\n", cmd);
        return PH_USAGE;
    }
    return PH_OK;
}

/* ---- kernels ------------------------------------------------------------------ */

/* 16-byte loads and stores, several in flight per thread; n16 = bytes / 16. */
__global__ void copy16_kernel(int4 *__restrict__ dst, const int4 *__restrict__ src, size_t n16)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n16; i += 4 * stride) {
        int4 a = src[i], b = src[i + stride], c = src[i + 2 * stride], d = src[i + 3 * stride];
        dst[i] = a;
        dst[i + stride] = b;
        dst[i + 2 * stride] = c;
        dst[i + 3 * stride] = d;
    }
    for (; i < n16; i += stride)
        dst[i] = src[i];
}

/* Tail bytes that do not fill a 16-byte word. */
__global__ void copy_tail_kernel(char *dst, const char *src, size_t from, size_t n)
{
    size_t i = from + (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        dst[i] = src[i];
}

typedef struct {
    float lr, beta1, beta2, eps, wd, bc1, bc2;
} adam_hparams;

__device__ __host__ static inline void adam_elem(float *p, float g, float *m, float *v,
                                                 const adam_hparams h)
{
    float mm = h.beta1 * *m + (1.0f - h.beta1) * g;
    float vv = h.beta2 * *v + (1.0f - h.beta2) * g * g;
    float mhat = mm / h.bc1;
    float vhat = vv / h.bc2;
    *p = *p - h.lr * (mhat / (sqrtf(vhat) + h.eps) + h.wd * *p);
    *m = mm;
    *v = vv;
}

/* AdamW step: reads param fp32, grad bf16, m fp32, v fp32; writes param, m,
 * v: 26 bytes per element. Four elements per thread with vector accesses. */
__global__ void adam_kernel(float *__restrict__ p, const __nv_bfloat16 *__restrict__ g,
                            float *__restrict__ m, float *__restrict__ v, size_t n, adam_hparams h)
{
    size_t n4 = n / 4;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
        float4 pp = ((float4 *)p)[i];
        float4 mm = ((float4 *)m)[i];
        float4 vv = ((float4 *)v)[i];
        uint2 graw = ((const uint2 *)g)[i];
        __nv_bfloat162 g01 = *(__nv_bfloat162 *)&graw.x;
        __nv_bfloat162 g23 = *(__nv_bfloat162 *)&graw.y;
        float2 f01 = __bfloat1622float2(g01), f23 = __bfloat1622float2(g23);
        adam_elem(&pp.x, f01.x, &mm.x, &vv.x, h);
        adam_elem(&pp.y, f01.y, &mm.y, &vv.y, h);
        adam_elem(&pp.z, f23.x, &mm.z, &vv.z, h);
        adam_elem(&pp.w, f23.y, &mm.w, &vv.w, h);
        ((float4 *)p)[i] = pp;
        ((float4 *)m)[i] = mm;
        ((float4 *)v)[i] = vv;
    }
    for (size_t i = n4 * 4 + (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        adam_elem(&p[i], __bfloat162float(g[i]), &m[i], &v[i], h);
    }
}

__global__ void count_diff_kernel(const unsigned char *a, const unsigned char *b, size_t n,
                                  unsigned long long *bad)
{
    unsigned long long local = 0;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        local += a[i] != b[i];
    if (local)
        atomicAdd(bad, local);
}

/* ---- hbm ------------------------------------------------------------------------ */

static void hbm_usage(FILE *fp)
{
    fprintf(fp, "usage: paro-harness hbm [options]\n"
                "  -b SIZE     smallest size (default 1M); SIZE takes K, M, G (powers of 1024)\n"
                "  -e SIZE     largest size (default 4G)\n"
                "  -f FACTOR   size multiplier (default 2)\n"
                "  --ops LIST  comma list of memcpy, copy, adam (default all)\n"
                "  -n REPS     timed repetitions, median reported (default 20, at least 20)\n"
                "  -w WARMUP   untimed repetitions (default 5)\n"
                "  --device N  CUDA device (default 0)\n"
                "  --no-check  skip the result checks\n"
                "  -J FILE     write the results as JSON too\n"
                "size is the bytes of one copied buffer; for adam, of the fp32 parameters\n"
                "(n = size/4 elements). bytes moved count reads plus writes: 2*size for the\n"
                "copies, 26*n for adam.\n");
}

typedef struct {
    void *a[MAX_NBUF], *b[MAX_NBUF], *c[MAX_NBUF], *d[MAX_NBUF];
} bufset;

static int rotation(size_t footprint, int l2_bytes)
{
    size_t target = 4 * (size_t)l2_bytes;
    int nbuf = 1;
    if (footprint < target)
        nbuf = (int)((target + footprint - 1) / footprint);
    return nbuf > MAX_NBUF ? MAX_NBUF : nbuf;
}

static ph_result time_reps(cudaStream_t s, int reps, double *t_us, cudaEvent_t *ev)
{
    CUDA_CHECK(cudaStreamSynchronize(s));
    for (int r = 0; r < reps; r++) {
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, ev[2 * r], ev[2 * r + 1]));
        t_us[r] = 1e3 * (double)ms;
    }
    return PH_OK;
}

static ph_result launch_copy(void *dst, const void *src, size_t bytes, int sms, cudaStream_t s)
{
    size_t n16 = bytes / 16;
    if (n16 > 0) {
        size_t blocks = (n16 + 255) / 256;
        size_t maxb = (size_t)sms * 8;
        if (blocks > maxb)
            blocks = maxb;
        copy16_kernel<<<(unsigned)blocks, 256, 0, s>>>((int4 *)dst, (const int4 *)src, n16);
        CUDA_CHECK_LAUNCH();
    }
    if (bytes % 16) {
        copy_tail_kernel<<<1, 16, 0, s>>>((char *)dst, (const char *)src, n16 * 16, bytes);
        CUDA_CHECK_LAUNCH();
    }
    return PH_OK;
}

static ph_result launch_adam(float *p, const __nv_bfloat16 *g, float *m, float *v, size_t n,
                             int sms, adam_hparams h, cudaStream_t s)
{
    size_t blocks = (n / 4 + 255) / 256;
    size_t maxb = (size_t)sms * 8;
    if (blocks > maxb)
        blocks = maxb;
    if (blocks == 0)
        blocks = 1;
    adam_kernel<<<(unsigned)blocks, 256, 0, s>>>(p, g, m, v, n, h);
    CUDA_CHECK_LAUNCH();
    return PH_OK;
}

/* lr, beta1, beta2, eps, weight decay, bias corrections 1-beta^t at step t = 1 */
static const adam_hparams adam_h = {1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, 0.1f, 0.001f};

static ph_result check_copy(const void *dst, const void *src, size_t bytes, int sms, cudaStream_t s,
                            long long *wrong)
{
    unsigned long long *d, h = 0;
    CUDA_CHECK(cudaMalloc(&d, sizeof *d));
    CUDA_CHECK(cudaMemsetAsync(d, 0, sizeof *d, s));
    count_diff_kernel<<<sms * 8, 256, 0, s>>>((const unsigned char *)dst,
                                              (const unsigned char *)src, bytes, d);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpyAsync(&h, d, sizeof h, cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    CUDA_CHECK(cudaFree(d));
    *wrong = (long long)h;
    return PH_OK;
}

/* Runs adam once on fresh data and compares sampled elements with the same
 * update computed on the host from the inputs read back first. */
static ph_result check_adam(float *p, __nv_bfloat16 *g, float *m, float *v, size_t n, int sms,
                            cudaStream_t s, long long *wrong)
{
    enum { NS = 256 };
    PH_CHECK(ph_fill_uniform(p, n, PH_F32, 901, -1.0f, 1.0f, s));
    PH_CHECK(ph_fill_uniform(g, n, PH_BF16, 902, -1.0f, 1.0f, s));
    PH_CHECK(ph_fill_uniform(m, n, PH_F32, 903, -0.1f, 0.1f, s));
    PH_CHECK(ph_fill_uniform(v, n, PH_F32, 904, 0.0f, 0.01f, s));
    size_t idx[NS];
    float hp[NS], hm[NS], hv[NS];
    __nv_bfloat16 hg[NS];
    uint64_t st = 77;
    for (int k = 0; k < NS; k++) {
        st = st * 6364136223846793005ull + 1442695040888963407ull;
        idx[k] = (size_t)((st >> 20) % n);
    }
    idx[0] = 0;
    idx[1] = n - 1;
    for (int k = 0; k < NS; k++) {
        CUDA_CHECK(cudaMemcpyAsync(&hp[k], p + idx[k], 4, cudaMemcpyDeviceToHost, s));
        CUDA_CHECK(cudaMemcpyAsync(&hg[k], g + idx[k], 2, cudaMemcpyDeviceToHost, s));
        CUDA_CHECK(cudaMemcpyAsync(&hm[k], m + idx[k], 4, cudaMemcpyDeviceToHost, s));
        CUDA_CHECK(cudaMemcpyAsync(&hv[k], v + idx[k], 4, cudaMemcpyDeviceToHost, s));
    }
    CUDA_CHECK(cudaStreamSynchronize(s));
    PH_CHECK(launch_adam(p, g, m, v, n, sms, adam_h, s));
    float dp[NS], dm[NS], dv[NS];
    for (int k = 0; k < NS; k++) {
        CUDA_CHECK(cudaMemcpyAsync(&dp[k], p + idx[k], 4, cudaMemcpyDeviceToHost, s));
        CUDA_CHECK(cudaMemcpyAsync(&dm[k], m + idx[k], 4, cudaMemcpyDeviceToHost, s));
        CUDA_CHECK(cudaMemcpyAsync(&dv[k], v + idx[k], 4, cudaMemcpyDeviceToHost, s));
    }
    CUDA_CHECK(cudaStreamSynchronize(s));
    long long bad = 0;
    for (int k = 0; k < NS; k++) {
        float gp = hp[k], gm = hm[k], gv = hv[k];
        adam_elem(&gp, __bfloat162float(hg[k]), &gm, &gv, adam_h);
        /* Same float formula on both sides; allow for FMA contraction and sqrt. */
        if (!(fabsf(gp - dp[k]) <= 1e-5f * (1.0f + fabsf(gp))) ||
            !(fabsf(gm - dm[k]) <= 1e-5f * (1.0f + fabsf(gm))) ||
            !(fabsf(gv - dv[k]) <= 1e-5f * (1.0f + fabsf(gv))))
            bad++;
    }
    *wrong = bad;
    return PH_OK;
}

static void mem_table_header(void)
{
    printf("#%13s %8s %14s %11s %9s %4s %6s %11s\n", "size", "op", "bytes", "time", "bw", "nbuf",
           "#wrong", "min");
    printf("#%13s %8s %14s %11s %9s %4s %6s %11s\n", "(B)", "", "(moved)", "(us)", "(GB/s)", "", "",
           "(us)");
}

static void mem_row(size_t size, const char *op, double bytes, double *t, int reps, int nbuf,
                    long long wrong, double *best)
{
    double tmin = ph_min(t, reps);
    double tmed = ph_median(t, reps);
    double bw = bytes / (tmed * 1e-6) / 1e9;
    if (bw > *best)
        *best = bw;
    printf(" %13zu %8s %14.0f %11.2f %9.2f %4d %6lld %11.2f\n", size, op, bytes, tmed, bw, nbuf,
           wrong, tmin);
    fflush(stdout);
    ph_json_row_begin();
    ph_json_int("size", (long long)size);
    ph_json_str("op", op);
    ph_json_num("bytes_moved", bytes);
    ph_json_num("time_us", tmed);
    ph_json_num("min_time_us", tmin);
    ph_json_num("bw_gbps", bw);
    ph_json_int("nbuf", nbuf);
    ph_json_int("wrong", wrong);
    ph_json_row_end();
}

ph_result ph_cmd_hbm(int argc, char **argv, int first)
{
    mem_args a = {1u << 20, (size_t)4 << 30, 2, 20, 5, 1, 0, NULL, OP_MEMCPY | OP_COPY | OP_ADAM,
                  0};
    PH_CHECK(parse_mem_args("hbm", argc, argv, first, &a, hbm_usage));
    if (a.help)
        return PH_OK;
    if (a.ops & (OP_H2D | OP_D2H)) {
        fprintf(stderr, "paro-harness hbm: h2d/d2h belong to the h2d subcommand\n");
        return PH_USAGE;
    }
    CUDA_CHECK(cudaSetDevice(a.device));
    ph_env env;
    PH_CHECK(ph_env_collect(&env, "hbm", a.device, argc, argv));
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    int sms = env.sm_count;

    ph_env_print(&env, stdout);
    printf("# minBytes %zu maxBytes %zu step: %zu(factor) warmup iters: %d iters: %d (median)"
           "  validation: %d\n",
           a.minb, a.maxb, a.factor, a.warmup, a.reps, a.check);
    printf("# ops: memcpy = cudaMemcpyAsync D2D; copy = 16-byte vector copy kernel;"
           " adam = AdamW step (p,m,v fp32, g bf16), n = size/4\n");
    printf("# bytes moved = read + written; bw = bytes / time / 1e9; buffers rotate (nbuf)"
           " so that >= 4x L2 is touched\n");
    mem_table_header();
    PH_CHECK(ph_json_open(a.json_path, &env));
    ph_json_section("params");
    ph_json_int("min_bytes", (long long)a.minb);
    ph_json_int("max_bytes", (long long)a.maxb);
    ph_json_int("step_factor", (long long)a.factor);
    ph_json_int("reps", a.reps);
    ph_json_int("warmup", a.warmup);
    ph_json_section_end();
    ph_json_results_begin();

    cudaEvent_t *ev = (cudaEvent_t *)calloc((size_t)2 * a.reps, sizeof *ev);
    double *t = (double *)calloc((size_t)a.reps, sizeof *t);
    if (ev == NULL || t == NULL)
        return PH_SYS_ERROR;
    for (int r = 0; r < 2 * a.reps; r++)
        CUDA_CHECK(cudaEventCreate(&ev[r]));
    double best_copy = 0, best_adam = 0;
    long long total_wrong = 0;

    static const int op_order[] = {OP_MEMCPY, OP_COPY, OP_ADAM};
    for (int oi = 0; oi < 3; oi++) {
        int op = op_order[oi];
        if (!(a.ops & op))
            continue;
        for (size_t size = a.minb; size <= a.maxb; size *= a.factor) {
            bufset bs;
            memset(&bs, 0, sizeof bs);
            size_t n = size / 4;
            size_t footprint = op == OP_ADAM ? 14 * n : 2 * size;
            int nbuf = rotation(footprint, env.l2_bytes);
            for (int b = 0; b < nbuf; b++) {
                if (op == OP_ADAM) {
                    CUDA_CHECK(cudaMalloc(&bs.a[b], n * 4));
                    CUDA_CHECK(cudaMalloc(&bs.b[b], n * 2));
                    CUDA_CHECK(cudaMalloc(&bs.c[b], n * 4));
                    CUDA_CHECK(cudaMalloc(&bs.d[b], n * 4));
                    PH_CHECK(ph_fill_uniform(bs.a[b], n, PH_F32, 11 + b, -1.0f, 1.0f, s));
                    PH_CHECK(ph_fill_uniform(bs.b[b], n, PH_BF16, 12 + b, -1.0f, 1.0f, s));
                    PH_CHECK(ph_fill_uniform(bs.c[b], n, PH_F32, 13 + b, -0.1f, 0.1f, s));
                    PH_CHECK(ph_fill_uniform(bs.d[b], n, PH_F32, 14 + b, 0.0f, 0.01f, s));
                } else {
                    CUDA_CHECK(cudaMalloc(&bs.a[b], size));
                    CUDA_CHECK(cudaMalloc(&bs.b[b], size));
                    PH_CHECK(ph_fill_uniform(bs.a[b], size / 4, PH_F32, 21 + b, -1.0f, 1.0f, s));
                    CUDA_CHECK(cudaMemsetAsync(bs.b[b], 0, size, s));
                }
            }
            const char *name = op == OP_MEMCPY ? "memcpy" : op == OP_COPY ? "copy" : "adam";
            double bytes = op == OP_ADAM ? 26.0 * (double)n : 2.0 * (double)size;
            for (int r = -a.warmup; r < a.reps; r++) {
                int b = (r + a.warmup) % nbuf;
                if (r >= 0)
                    CUDA_CHECK(cudaEventRecord(ev[2 * r], s));
                if (op == OP_MEMCPY) {
                    CUDA_CHECK(
                        cudaMemcpyAsync(bs.b[b], bs.a[b], size, cudaMemcpyDeviceToDevice, s));
                } else if (op == OP_COPY) {
                    PH_CHECK(launch_copy(bs.b[b], bs.a[b], size, sms, s));
                } else {
                    PH_CHECK(launch_adam((float *)bs.a[b], (const __nv_bfloat16 *)bs.b[b],
                                         (float *)bs.c[b], (float *)bs.d[b], n, sms, adam_h, s));
                }
                if (r >= 0)
                    CUDA_CHECK(cudaEventRecord(ev[2 * r + 1], s));
            }
            PH_CHECK(time_reps(s, a.reps, t, ev));

            long long wrong = 0;
            if (a.check) {
                if (op == OP_ADAM) {
                    PH_CHECK(check_adam((float *)bs.a[0], (__nv_bfloat16 *)bs.b[0],
                                        (float *)bs.c[0], (float *)bs.d[0], n, sms, s, &wrong));
                } else {
                    PH_CHECK(ph_fill_uniform(bs.a[0], size / 4, PH_F32, 99, -1.0f, 1.0f, s));
                    CUDA_CHECK(cudaMemsetAsync(bs.b[0], 0xFF, size, s));
                    if (op == OP_MEMCPY)
                        CUDA_CHECK(
                            cudaMemcpyAsync(bs.b[0], bs.a[0], size, cudaMemcpyDeviceToDevice, s));
                    else
                        PH_CHECK(launch_copy(bs.b[0], bs.a[0], size, sms, s));
                    PH_CHECK(check_copy(bs.b[0], bs.a[0], size, sms, s, &wrong));
                }
            }
            total_wrong += wrong;
            mem_row(size, name, bytes, t, a.reps, nbuf, wrong,
                    op == OP_ADAM ? &best_adam : &best_copy);
            for (int b = 0; b < nbuf; b++) {
                if (bs.a[b])
                    CUDA_CHECK(cudaFree(bs.a[b]));
                if (bs.b[b])
                    CUDA_CHECK(cudaFree(bs.b[b]));
                if (bs.c[b])
                    CUDA_CHECK(cudaFree(bs.c[b]));
                if (bs.d[b])
                    CUDA_CHECK(cudaFree(bs.d[b]));
            }
            if (size > a.maxb / a.factor)
                break; /* avoid overflow of size *= factor */
        }
    }
    ph_json_results_end();
    ph_json_section("summary");
    ph_json_num("best_copy_gbps", best_copy);
    ph_json_num("best_adam_gbps", best_adam);
    ph_json_int("wrong", total_wrong);
    ph_json_section_end();
    ph_json_close();
    printf("# Out of bounds values : %lld %s\n", total_wrong, total_wrong ? "FAILED" : "OK");
    printf("# Best copy bandwidth  : %.2f GB/s\n", best_copy);
    printf("# Best adam bandwidth  : %.2f GB/s\n#\n", best_adam);
    for (int r = 0; r < 2 * a.reps; r++)
        CUDA_CHECK(cudaEventDestroy(ev[r]));
    free(ev);
    free(t);
    CUDA_CHECK(cudaStreamDestroy(s));
    return total_wrong ? PH_CHECK_FAILED : PH_OK;
}

/* ---- h2d -------------------------------------------------------------------------- */

static void h2d_usage(FILE *fp)
{
    fprintf(fp, "usage: paro-harness h2d [options]\n"
                "  -b SIZE     smallest size (default 4K); SIZE takes K, M, G (powers of 1024)\n"
                "  -e SIZE     largest size (default 1G)\n"
                "  -f FACTOR   size multiplier (default 2)\n"
                "  --ops LIST  comma list of h2d, d2h (default both)\n"
                "  -n REPS     timed repetitions, median reported (default 20, at least 20)\n"
                "  -w WARMUP   untimed repetitions (default 5)\n"
                "  --device N  CUDA device (default 0)\n"
                "  --no-check  skip the round-trip check\n"
                "  -J FILE     write the results as JSON too\n"
                "host buffers are pinned (cudaMallocHost); bw = size / time / 1e9.\n");
}

ph_result ph_cmd_h2d(int argc, char **argv, int first)
{
    mem_args a = {4u << 10, 1u << 30, 2, 20, 5, 1, 0, NULL, OP_H2D | OP_D2H, 0};
    PH_CHECK(parse_mem_args("h2d", argc, argv, first, &a, h2d_usage));
    if (a.help)
        return PH_OK;
    if (a.ops & (OP_MEMCPY | OP_COPY | OP_ADAM)) {
        fprintf(stderr, "paro-harness h2d: memcpy/copy/adam belong to the hbm subcommand\n");
        return PH_USAGE;
    }
    CUDA_CHECK(cudaSetDevice(a.device));
    ph_env env;
    PH_CHECK(ph_env_collect(&env, "h2d", a.device, argc, argv));
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    ph_env_print(&env, stdout);
    printf("# minBytes %zu maxBytes %zu step: %zu(factor) warmup iters: %d iters: %d (median)"
           "  validation: %d\n",
           a.minb, a.maxb, a.factor, a.warmup, a.reps, a.check);
    printf("# ops: h2d / d2h = cudaMemcpyAsync between pinned host memory and the device\n");
    printf("# bytes moved = size (one direction); bw = size / time / 1e9\n");
    mem_table_header();
    PH_CHECK(ph_json_open(a.json_path, &env));
    ph_json_section("params");
    ph_json_int("min_bytes", (long long)a.minb);
    ph_json_int("max_bytes", (long long)a.maxb);
    ph_json_int("step_factor", (long long)a.factor);
    ph_json_int("reps", a.reps);
    ph_json_int("warmup", a.warmup);
    ph_json_section_end();
    ph_json_results_begin();

    unsigned char *host = NULL, *host2 = NULL;
    void *dev = NULL;
    CUDA_CHECK(cudaMallocHost((void **)&host, a.maxb));
    CUDA_CHECK(cudaMallocHost((void **)&host2, a.maxb));
    CUDA_CHECK(cudaMalloc(&dev, a.maxb));
    for (size_t i = 0; i < a.maxb; i++)
        host[i] = (unsigned char)((i * 2654435761u) >> 13);
    cudaEvent_t *ev = (cudaEvent_t *)calloc((size_t)2 * a.reps, sizeof *ev);
    double *t = (double *)calloc((size_t)a.reps, sizeof *t);
    if (ev == NULL || t == NULL)
        return PH_SYS_ERROR;
    for (int r = 0; r < 2 * a.reps; r++)
        CUDA_CHECK(cudaEventCreate(&ev[r]));
    double best_h2d = 0, best_d2h = 0;
    long long total_wrong = 0;

    static const int op_order[] = {OP_H2D, OP_D2H};
    for (int oi = 0; oi < 2; oi++) {
        int op = op_order[oi];
        if (!(a.ops & op))
            continue;
        for (size_t size = a.minb; size <= a.maxb; size *= a.factor) {
            for (int r = -a.warmup; r < a.reps; r++) {
                if (r >= 0)
                    CUDA_CHECK(cudaEventRecord(ev[2 * r], s));
                if (op == OP_H2D)
                    CUDA_CHECK(cudaMemcpyAsync(dev, host, size, cudaMemcpyHostToDevice, s));
                else
                    CUDA_CHECK(cudaMemcpyAsync(host2, dev, size, cudaMemcpyDeviceToHost, s));
                if (r >= 0)
                    CUDA_CHECK(cudaEventRecord(ev[2 * r + 1], s));
            }
            PH_CHECK(time_reps(s, a.reps, t, ev));
            long long wrong = 0;
            if (a.check) {
                /* Round trip of fresh bytes: host -> device -> host2. */
                memset(host2, 0xA5, size);
                host[0] ^= (unsigned char)size;
                CUDA_CHECK(cudaMemcpyAsync(dev, host, size, cudaMemcpyHostToDevice, s));
                CUDA_CHECK(cudaMemcpyAsync(host2, dev, size, cudaMemcpyDeviceToHost, s));
                CUDA_CHECK(cudaStreamSynchronize(s));
                for (size_t i = 0; i < size; i++)
                    wrong += host[i] != host2[i];
            }
            total_wrong += wrong;
            mem_row(size, op == OP_H2D ? "h2d" : "d2h", (double)size, t, a.reps, 1, wrong,
                    op == OP_H2D ? &best_h2d : &best_d2h);
            if (size > a.maxb / a.factor)
                break;
        }
    }
    ph_json_results_end();
    ph_json_section("summary");
    ph_json_num("best_h2d_gbps", best_h2d);
    ph_json_num("best_d2h_gbps", best_d2h);
    ph_json_int("wrong", total_wrong);
    ph_json_section_end();
    ph_json_close();
    printf("# Out of bounds values : %lld %s\n", total_wrong, total_wrong ? "FAILED" : "OK");
    printf("# Best h2d bandwidth   : %.2f GB/s\n", best_h2d);
    printf("# Best d2h bandwidth   : %.2f GB/s\n#\n", best_d2h);
    for (int r = 0; r < 2 * a.reps; r++)
        CUDA_CHECK(cudaEventDestroy(ev[r]));
    free(ev);
    free(t);
    CUDA_CHECK(cudaFreeHost(host));
    CUDA_CHECK(cudaFreeHost(host2));
    CUDA_CHECK(cudaFree(dev));
    CUDA_CHECK(cudaStreamDestroy(s));
    return total_wrong ? PH_CHECK_FAILED : PH_OK;
}
