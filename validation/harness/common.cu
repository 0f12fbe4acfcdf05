/* SPDX-License-Identifier: MIT */
/*
 * Shared parts of paro-harness: the run header (device, driver, CUDA, cuBLAS
 * and NCCL versions, date, command line), the -J JSON writer, timing
 * statistics, argument parsing and the random-fill kernel used by every
 * subcommand. Kept apart so that each subcommand file holds only what it
 * measures.
 */
#include "harness.h"

#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

size_t ph_dtype_size(ph_dtype t)
{
    return t == PH_F32 ? 4 : t == PH_E4M3 ? 1 : 2;
}

/* ---- run header ------------------------------------------------------------ */

/* The driver's version string ("580.159.04") comes from NVML, loaded at run
 * time so that the harness links without it; /proc is the fallback. */
static void driver_version_string(char *out, size_t len)
{
    snprintf(out, len, "unknown");
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h != NULL) {
        typedef int (*init_fn)(void);
        typedef int (*ver_fn)(char *, unsigned int);
        init_fn init = (init_fn)dlsym(h, "nvmlInit_v2");
        ver_fn ver = (ver_fn)dlsym(h, "nvmlSystemGetDriverVersion");
        init_fn shut = (init_fn)dlsym(h, "nvmlShutdown");
        char buf[96] = {0};
        if (init != NULL && ver != NULL && init() == 0) {
            if (ver(buf, sizeof buf) == 0 && buf[0] != '\0') {
                snprintf(out, len, "%s", buf);
            }
            if (shut != NULL)
                shut();
        }
        dlclose(h);
        if (strcmp(out, "unknown") != 0)
            return;
    }
    FILE *fp = fopen("/proc/driver/nvidia/version", "r");
    if (fp != NULL) {
        char line[512];
        if (fgets(line, sizeof line, fp) != NULL) {
            /* "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  ..." */
            char *p = strstr(line, "Module");
            if (p != NULL) {
                p += strlen("Module");
                while (*p == ' ')
                    p++;
                size_t n = strcspn(p, " \n");
                if (n > 0 && n < len) {
                    memcpy(out, p, n);
                    out[n] = '\0';
                }
            }
        }
        fclose(fp);
    }
}

ph_result ph_env_collect(ph_env *env, const char *subcommand, int device, int argc, char **argv)
{
    memset(env, 0, sizeof *env);
    snprintf(env->subcommand, sizeof env->subcommand, "%s", subcommand);
    time_t now = time(NULL);
    struct tm tm_utc;
    gmtime_r(&now, &tm_utc);
    strftime(env->date_utc, sizeof env->date_utc, "%Y-%m-%dT%H:%M:%SZ", &tm_utc);
    if (gethostname(env->hostname, sizeof env->hostname - 1) != 0) {
        snprintf(env->hostname, sizeof env->hostname, "unknown");
    }

    CUDA_CHECK(cudaGetDeviceCount(&env->ndevices));
    env->device = device;
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    snprintf(env->device_name, sizeof env->device_name, "%s", prop.name);
    env->sm_count = prop.multiProcessorCount;
    env->cc_major = prop.major;
    env->cc_minor = prop.minor;
    env->mem_total = prop.totalGlobalMem;
    env->l2_bytes = prop.l2CacheSize;
    env->pci_bus = prop.pciBusID;
    /* The clock fields left cudaDeviceProp in CUDA 13; the attributes remain. */
    if (cudaDeviceGetAttribute(&env->sm_clock_khz, cudaDevAttrClockRate, device) != cudaSuccess)
        env->sm_clock_khz = 0;
    if (cudaDeviceGetAttribute(&env->mem_clock_khz, cudaDevAttrMemoryClockRate, device) !=
        cudaSuccess)
        env->mem_clock_khz = 0;
    if (cudaDeviceGetAttribute(&env->mem_bus_bits, cudaDevAttrGlobalMemoryBusWidth, device) !=
        cudaSuccess)
        env->mem_bus_bits = 0;
    (void)cudaGetLastError(); /* clear a refused attribute */

    driver_version_string(env->driver_version, sizeof env->driver_version);
    CUDA_CHECK(cudaDriverGetVersion(&env->cuda_driver_api));
    CUDA_CHECK(cudaRuntimeGetVersion(&env->cuda_runtime));
    env->cublaslt_version = cublasLtGetVersion();
    NCCL_CHECK(ncclGetVersion(&env->nccl_version));
    env->nccl_header_version = NCCL_VERSION_CODE;

    size_t off = 0;
    for (int i = 0; i < argc && off + 2 < sizeof env->cmdline; i++) {
        int n =
            snprintf(env->cmdline + off, sizeof env->cmdline - off, "%s%s", i ? " " : "", argv[i]);
        if (n < 0)
            break;
        off += (size_t)n;
    }
    return PH_OK;
}

static void fmt_cuda_version(int v, char *buf, size_t len)
{
    snprintf(buf, len, "%d.%d", v / 1000, (v % 1000) / 10);
}

static void fmt_nccl_version(int v, char *buf, size_t len)
{
    /* NCCL_VERSION(): below 2.9 the code is X*1000+Y*100+Z, then X*10000+Y*100+Z */
    if (v >= 10000)
        snprintf(buf, len, "%d.%d.%d", v / 10000, (v % 10000) / 100, v % 100);
    else
        snprintf(buf, len, "%d.%d.%d", v / 1000, (v % 1000) / 100, v % 100);
}

static void fmt_cublas_version(size_t v, char *buf, size_t len)
{
    /* CUBLAS_VERSION = MAJOR*10000 + MINOR*100 + PATCH */
    snprintf(buf, len, "%zu.%zu.%zu", v / 10000, (v % 10000) / 100, v % 100);
}

void ph_env_print(const ph_env *env, FILE *fp)
{
    char drv[16], rt[16], nccl[24], ncclh[24], cub[24];
    fmt_cuda_version(env->cuda_driver_api, drv, sizeof drv);
    fmt_cuda_version(env->cuda_runtime, rt, sizeof rt);
    fmt_nccl_version(env->nccl_version, nccl, sizeof nccl);
    fmt_nccl_version(env->nccl_header_version, ncclh, sizeof ncclh);
    fmt_cublas_version(env->cublaslt_version, cub, sizeof cub);
    fprintf(fp, "# paro-harness %s  subcommand: %s\n", PARO_HARNESS_VERSION, env->subcommand);
    fprintf(fp, "# date: %s  host: %s\n", env->date_utc, env->hostname);
    fprintf(fp, "# device %d of %d: %s  sm_%d%d  SMs: %d  memory: %.2f GiB  L2: %.1f MiB\n",
            env->device, env->ndevices, env->device_name, env->cc_major, env->cc_minor,
            env->sm_count, (double)env->mem_total / (1024.0 * 1024.0 * 1024.0),
            (double)env->l2_bytes / (1024.0 * 1024.0));
    fprintf(fp, "# clocks: sm max %d MHz  memory %d MHz  bus %d bit\n", env->sm_clock_khz / 1000,
            env->mem_clock_khz / 1000, env->mem_bus_bits);
    fprintf(fp, "# driver: %s (CUDA %s)  runtime: CUDA %s  cuBLASLt: %s  NCCL: %s (headers %s)\n",
            env->driver_version, drv, rt, cub, nccl, ncclh);
    fprintf(fp, "# command: %s\n", env->cmdline);
}

/* ---- JSON writer ------------------------------------------------------------ */

#define JSON_MAX_DEPTH 8

static struct {
    FILE *fp;
    int depth;
    int count[JSON_MAX_DEPTH]; /* members written at each open level */
} json;

int ph_json_enabled(void)
{
    return json.fp != NULL;
}

static void json_string(const char *s)
{
    fputc('"', json.fp);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"':
            fputs("\\\"", json.fp);
            break;
        case '\\':
            fputs("\\\\", json.fp);
            break;
        case '\n':
            fputs("\\n", json.fp);
            break;
        case '\t':
            fputs("\\t", json.fp);
            break;
        default:
            if (*p < 0x20)
                fprintf(json.fp, "\\u%04x", *p);
            else
                fputc(*p, json.fp);
        }
    }
    fputc('"', json.fp);
}

static void json_sep(void)
{
    if (json.count[json.depth]++ > 0)
        fputc(',', json.fp);
    fputs("\n", json.fp);
    for (int i = 0; i < json.depth; i++)
        fputs("  ", json.fp);
}

static void json_key(const char *key)
{
    json_sep();
    json_string(key);
    fputs(": ", json.fp);
}

static void json_open(char c)
{
    fputc(c, json.fp);
    if (json.depth + 1 < JSON_MAX_DEPTH)
        json.depth++;
    json.count[json.depth] = 0;
}

static void json_close(char c)
{
    json.depth--;
    fputs("\n", json.fp);
    for (int i = 0; i < json.depth; i++)
        fputs("  ", json.fp);
    fputc(c, json.fp);
}

void ph_json_str(const char *key, const char *val)
{
    if (!json.fp)
        return;
    json_key(key);
    json_string(val);
}

void ph_json_num(const char *key, double val)
{
    if (!json.fp)
        return;
    json_key(key);
    if (isfinite(val))
        fprintf(json.fp, "%.6g", val);
    else
        fputs("null", json.fp);
}

void ph_json_int(const char *key, long long val)
{
    if (!json.fp)
        return;
    json_key(key);
    fprintf(json.fp, "%lld", val);
}

ph_result ph_json_open(const char *path, const ph_env *env)
{
    if (path == NULL)
        return PH_OK;
    json.fp = fopen(path, "w");
    if (json.fp == NULL) {
        fprintf(stderr, "paro-harness: cannot write JSON file '%s'\n", path);
        return PH_SYS_ERROR;
    }
    json.depth = 0;
    json.count[0] = 0;
    json_open('{');
    ph_json_str("tool", "paro-harness");
    ph_json_str("version", PARO_HARNESS_VERSION);
    json_key("header");
    json_open('{');
    char buf[32];
    ph_json_str("subcommand", env->subcommand);
    ph_json_str("date_utc", env->date_utc);
    ph_json_str("hostname", env->hostname);
    ph_json_int("device", env->device);
    ph_json_int("ndevices", env->ndevices);
    ph_json_str("device_name", env->device_name);
    snprintf(buf, sizeof buf, "sm_%d%d", env->cc_major, env->cc_minor);
    ph_json_str("arch", buf);
    ph_json_int("sm_count", env->sm_count);
    ph_json_int("memory_bytes", (long long)env->mem_total);
    ph_json_int("l2_bytes", env->l2_bytes);
    ph_json_int("sm_clock_max_khz", env->sm_clock_khz);
    ph_json_int("mem_clock_khz", env->mem_clock_khz);
    ph_json_int("mem_bus_bits", env->mem_bus_bits);
    ph_json_str("driver_version", env->driver_version);
    ph_json_int("cuda_driver_api_version", env->cuda_driver_api);
    ph_json_int("cuda_runtime_version", env->cuda_runtime);
    ph_json_int("cublaslt_version", (long long)env->cublaslt_version);
    ph_json_int("nccl_version", env->nccl_version);
    ph_json_int("nccl_header_version", env->nccl_header_version);
    ph_json_str("command", env->cmdline);
    json_close('}');
    return PH_OK;
}

void ph_json_section(const char *name)
{
    if (!json.fp)
        return;
    json_key(name);
    json_open('{');
}

void ph_json_section_end(void)
{
    if (!json.fp)
        return;
    json_close('}');
}

void ph_json_results_begin(void)
{
    if (!json.fp)
        return;
    json_key("results");
    json_open('[');
}

void ph_json_results_end(void)
{
    if (!json.fp)
        return;
    json_close(']');
}

void ph_json_row_begin(void)
{
    if (!json.fp)
        return;
    json_sep();
    json_open('{');
}

void ph_json_row_end(void)
{
    if (!json.fp)
        return;
    json_close('}');
}

void ph_json_close(void)
{
    if (!json.fp)
        return;
    while (json.depth > 0)
        json_close(json.depth == 1 ? '}' : '}');
    fputc('\n', json.fp);
    fclose(json.fp);
    json.fp = NULL;
}

/* ---- helpers ------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double ph_median(double *v, int n)
{
    if (n <= 0)
        return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return (n % 2) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double ph_min(const double *v, int n)
{
    double m = INFINITY;
    for (int i = 0; i < n; i++)
        m = v[i] < m ? v[i] : m;
    return m;
}

double ph_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int ph_parse_size(const char *s, size_t *out)
{
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || v < 0)
        return 0;
    double mult = 1;
    switch (*end) {
    case '\0':
        break;
    case 'k':
    case 'K':
        mult = 1024.0;
        end++;
        break;
    case 'm':
    case 'M':
        mult = 1024.0 * 1024.0;
        end++;
        break;
    case 'g':
    case 'G':
        mult = 1024.0 * 1024.0 * 1024.0;
        end++;
        break;
    case 't':
    case 'T':
        mult = 1024.0 * 1024.0 * 1024.0 * 1024.0;
        end++;
        break;
    default:
        return 0;
    }
    if (*end == 'i' || *end == 'I')
        end++;
    if (*end == 'b' || *end == 'B')
        end++;
    if (*end != '\0')
        return 0;
    *out = (size_t)(v * mult);
    return 1;
}

int ph_parse_int(const char *s, long long *out)
{
    char *end = NULL;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end != '\0')
        return 0;
    *out = v;
    return 1;
}

const char *ph_fmt_bytes(size_t b, char *buf, size_t len)
{
    static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)b;
    int u = 0;
    while (v >= 1024.0 && u < 4) {
        v /= 1024.0;
        u++;
    }
    snprintf(buf, len, "%.4g %s", v, unit[u]);
    return buf;
}

double ph_bus_factor(const char *coll, int nranks)
{
    double n = (double)nranks;
    if (nranks <= 0)
        return 0.0;
    if (strcmp(coll, "allreduce") == 0)
        return 2.0 * (n - 1.0) / n;
    if (strcmp(coll, "allgather") == 0 || strcmp(coll, "reducescatter") == 0)
        return (n - 1.0) / n;
    if (strcmp(coll, "broadcast") == 0 || strcmp(coll, "reduce") == 0)
        return 1.0;
    return 0.0;
}

/* ---- random fill ------------------------------------------------------------- */

__host__ __device__ static inline uint64_t mix64(uint64_t x)
{
    /* splitmix64 finaliser */
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

__global__ void fill_uniform_kernel(void *p, size_t n, int t, uint64_t seed, float lo, float span)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        uint64_t h = mix64(seed ^ mix64(i));
        float u = (float)(h >> 40) * (1.0f / 16777216.0f); /* [0,1) with 24 bits */
        float v = lo + span * u;
        if (t == PH_F32)
            ((float *)p)[i] = v;
        else if (t == PH_F16)
            ((__half *)p)[i] = __float2half_rn(v);
        else if (t == PH_E4M3)
            ((__nv_fp8_e4m3 *)p)[i] = __nv_fp8_e4m3(v);
        else
            ((__nv_bfloat16 *)p)[i] = __float2bfloat16_rn(v);
    }
}

ph_result ph_fill_uniform(void *p, size_t n, ph_dtype t, uint64_t seed, float lo, float hi,
                          cudaStream_t s)
{
    if (n == 0)
        return PH_OK;
    int dev = 0, sms = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    size_t blocks = (n + 255) / 256;
    size_t maxb = (size_t)sms * 16;
    if (blocks > maxb)
        blocks = maxb;
    fill_uniform_kernel<<<(unsigned)blocks, 256, 0, s>>>(p, n, (int)t, seed, lo, hi - lo);
    CUDA_CHECK_LAUNCH();
    return PH_OK;
}
