/* SPDX-License-Identifier: MIT */
/*
 * `paro-harness coll`: NCCL AllReduce, AllGather, ReduceScatter and Broadcast
 * over a size sweep, printed in nccl-tests' table layout with its definitions
 * of size, algbw and busbw, so that parosim's collective model is fitted and
 * validated on the same terms as published nccl-tests logs. One process
 * drives all its GPUs (ncclCommInitAll and group calls); with
 * -DPARO_HARNESS_MPI each MPI process drives -g GPUs of a larger world.
 * Communicators can be split into intra-node and inter-node scopes.
 */
#include "harness.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#define COLL_MAX_DEV 64

typedef enum { C_ALLREDUCE, C_ALLGATHER, C_REDUCESCATTER, C_BROADCAST, C_N } coll_kind;

static const char *coll_names[C_N] = {"allreduce", "allgather", "reducescatter", "broadcast"};

typedef enum { SCOPE_WORLD, SCOPE_INTRA, SCOPE_INTER } coll_scope;
static const char *scope_names[] = {"world", "intra", "inter"};

typedef struct {
    size_t minb, maxb, factor;
    int ngpus, iters, warmup, check;
    int colls[C_N];
    coll_scope scope;
    ph_dtype dtype;
    const char *json_path;
} coll_args;

typedef struct {
    int ndev;         /* GPUs driven by this process */
    int nprocs, proc; /* 1 and 0 without MPI */
    int nranks;       /* world size */
    int cuda_dev[COLL_MAX_DEV];
    int world_rank[COLL_MAX_DEV];
    int node[COLL_MAX_DEV];
    int local_rank[COLL_MAX_DEV]; /* rank among the GPUs of its node */
    ncclComm_t world[COLL_MAX_DEV];
    ncclComm_t comm[COLL_MAX_DEV]; /* communicator of the chosen scope */
    int split[COLL_MAX_DEV];       /* comm[] must be destroyed apart from world[] */
    int srank[COLL_MAX_DEV];
    int ssize[COLL_MAX_DEV];
    cudaStream_t stream[COLL_MAX_DEV];
    void *send[COLL_MAX_DEV], *recv[COLL_MAX_DEV];
    unsigned long long *dwrong[COLL_MAX_DEV];
    size_t buf_bytes;
} coll_ctx;

/* Element counts of one operation (nccl-tests' getCollByteCount). */
typedef struct {
    size_t send, recv, param;        /* elements */
    size_t send_ip_off, recv_ip_off; /* in-place offsets, elements, times the rank */
} coll_counts;

static void coll_counts_of(coll_kind c, size_t count, int n, coll_counts *k)
{
    memset(k, 0, sizeof *k);
    switch (c) {
    case C_ALLREDUCE:
    case C_BROADCAST:
        k->send = k->recv = k->param = count;
        break;
    case C_ALLGATHER:
        k->send = count / n;
        k->recv = (count / n) * n;
        k->param = k->send;
        k->send_ip_off = count / n;
        break;
    case C_REDUCESCATTER:
        k->send = (count / n) * n;
        k->recv = count / n;
        k->param = k->recv;
        k->recv_ip_off = count / n;
        break;
    default:
        break;
    }
}

static ncclDataType_t nccl_type(ph_dtype t)
{
    return t == PH_F32 ? ncclFloat32 : t == PH_F16 ? ncclFloat16 : ncclBfloat16;
}

static const char *nccl_type_name(ph_dtype t)
{
    return t == PH_F32 ? "float" : t == PH_F16 ? "half" : "bfloat16";
}

/* ---- data and its check --------------------------------------------------------- */

/* Small integers, so that every sum is exact in every type and order:
 * values in [0, R) with n*(R-1) < 256 for the 16-bit types. */
__host__ __device__ static inline float coll_val(int rank, size_t i, int R)
{
    uint32_t h = (uint32_t)((i * 2654435761ull) >> 7);
    return (float)((h + 5u * (uint32_t)rank) % (uint32_t)R);
}

static int coll_range(ph_dtype t, int n)
{
    if (t == PH_F32)
        return 8;
    int R = 255 / (n > 0 ? n : 1) + 1;
    return R > 8 ? 8 : (R < 1 ? 1 : R);
}

__device__ static inline void store_val(void *p, size_t i, int t, float v)
{
    if (t == PH_F32)
        ((float *)p)[i] = v;
    else if (t == PH_F16)
        ((__half *)p)[i] = __float2half_rn(v);
    else
        ((__nv_bfloat16 *)p)[i] = __float2bfloat16_rn(v);
}

__device__ static inline float load_val(const void *p, size_t i, int t)
{
    if (t == PH_F32)
        return ((const float *)p)[i];
    if (t == PH_F16)
        return __half2float(((const __half *)p)[i]);
    return __bfloat162float(((const __nv_bfloat16 *)p)[i]);
}

/* buf[i] = val(rank, base + i), i < n */
__global__ void coll_init_kernel(void *buf, size_t n, int t, int rank, size_t base, int R)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        store_val(buf, i, t, coll_val(rank, base + i, R));
}

__global__ void coll_check_kernel(const void *buf, size_t n, int t, int coll, int nranks, int rank,
                                  size_t cnt, int R, unsigned long long *wrong)
{
    unsigned long long bad = 0;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float want = 0.0f;
        if (coll == C_ALLREDUCE) {
            for (int r = 0; r < nranks; r++)
                want += coll_val(r, i, R);
        } else if (coll == C_ALLGATHER) {
            want = coll_val((int)(i / cnt), i % cnt, R);
        } else if (coll == C_REDUCESCATTER) {
            for (int r = 0; r < nranks; r++)
                want += coll_val(r, (size_t)rank * cnt + i, R);
        } else {
            want = coll_val(0, i, R);
        }
        bad += load_val(buf, i, t) != want; /* NaN poison never equals */
    }
    if (bad)
        atomicAdd(wrong, bad);
}

static ph_result launch_init(void *buf, size_t n, ph_dtype t, int rank, size_t base, int R,
                             cudaStream_t s)
{
    if (n == 0)
        return PH_OK;
    size_t blocks = (n + 255) / 256;
    if (blocks > 1024)
        blocks = 1024;
    coll_init_kernel<<<(unsigned)blocks, 256, 0, s>>>(buf, n, (int)t, rank, base, R);
    CUDA_CHECK_LAUNCH();
    return PH_OK;
}

/* ---- one operation ------------------------------------------------------------------ */

static ph_result coll_issue(coll_ctx *cx, coll_kind c, const coll_args *a, const coll_counts *k,
                            int in_place, size_t shift)
{
    size_t es = ph_dtype_size(a->dtype);
    ncclDataType_t dt = nccl_type(a->dtype);
    if (cx->ndev > 1)
        NCCL_CHECK(ncclGroupStart());
    for (int d = 0; d < cx->ndev; d++) {
        char *recvb = (char *)cx->recv[d] + shift;
        char *sendb = (char *)cx->send[d] + shift;
        const void *sb = in_place ? recvb + k->send_ip_off * es * cx->srank[d] : sendb;
        void *rb = in_place ? recvb + k->recv_ip_off * es * cx->srank[d] : recvb;
        switch (c) {
        case C_ALLREDUCE:
            NCCL_CHECK(ncclAllReduce(sb, rb, k->param, dt, ncclSum, cx->comm[d], cx->stream[d]));
            break;
        case C_ALLGATHER:
            NCCL_CHECK(ncclAllGather(sb, rb, k->param, dt, cx->comm[d], cx->stream[d]));
            break;
        case C_REDUCESCATTER:
            NCCL_CHECK(
                ncclReduceScatter(sb, rb, k->param, dt, ncclSum, cx->comm[d], cx->stream[d]));
            break;
        case C_BROADCAST:
            NCCL_CHECK(ncclBroadcast(sb, rb, k->param, dt, 0, cx->comm[d], cx->stream[d]));
            break;
        default:
            return PH_USAGE;
        }
    }
    if (cx->ndev > 1)
        NCCL_CHECK(ncclGroupEnd());
    return PH_OK;
}

static ph_result coll_sync(coll_ctx *cx)
{
    for (int d = 0; d < cx->ndev; d++) {
        CUDA_CHECK(cudaSetDevice(cx->cuda_dev[d]));
        CUDA_CHECK(cudaStreamSynchronize(cx->stream[d]));
    }
    return PH_OK;
}

static ph_result coll_barrier(coll_ctx *cx)
{
    (void)cx;
#ifdef PARO_HARNESS_MPI
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
#endif
    return PH_OK;
}

/* Fills the inputs for a check run, runs the operation once, counts wrong
 * elements over all ranks. */
static ph_result coll_check(coll_ctx *cx, coll_kind c, const coll_args *a, const coll_counts *k,
                            int in_place, long long *wrong)
{
    size_t es = ph_dtype_size(a->dtype);
    for (int d = 0; d < cx->ndev; d++) {
        CUDA_CHECK(cudaSetDevice(cx->cuda_dev[d]));
        cudaStream_t s = cx->stream[d];
        int n = cx->ssize[d], r = cx->srank[d], R = coll_range(a->dtype, n);
        size_t rbytes = (k->recv_ip_off * (size_t)r + k->recv) * es;
        if (rbytes < k->send * es)
            rbytes = k->send * es;
        CUDA_CHECK(cudaMemsetAsync(cx->recv[d], 0xFF, rbytes, s));
        CUDA_CHECK(cudaMemsetAsync(cx->dwrong[d], 0, sizeof(unsigned long long), s));
        char *dst = in_place ? (char *)cx->recv[d] + k->send_ip_off * es * r : (char *)cx->send[d];
        PH_CHECK(launch_init(dst, k->send, a->dtype, r, 0, R, s));
    }
    PH_CHECK(coll_issue(cx, c, a, k, in_place, 0));
    long long sum = 0;
    for (int d = 0; d < cx->ndev; d++) {
        CUDA_CHECK(cudaSetDevice(cx->cuda_dev[d]));
        cudaStream_t s = cx->stream[d];
        int n = cx->ssize[d], r = cx->srank[d], R = coll_range(a->dtype, n);
        const char *out = (const char *)cx->recv[d] + (in_place ? k->recv_ip_off * es * r : 0);
        size_t cnt = c == C_ALLGATHER ? k->send : k->recv;
        if (k->recv > 0) {
            size_t blocks = (k->recv + 255) / 256;
            if (blocks > 1024)
                blocks = 1024;
            coll_check_kernel<<<(unsigned)blocks, 256, 0, s>>>(out, k->recv, (int)a->dtype, (int)c,
                                                               n, r, cnt, R, cx->dwrong[d]);
            CUDA_CHECK_LAUNCH();
        }
        unsigned long long h = 0;
        CUDA_CHECK(cudaMemcpyAsync(&h, cx->dwrong[d], sizeof h, cudaMemcpyDeviceToHost, s));
        CUDA_CHECK(cudaStreamSynchronize(s));
        sum += (long long)h;
    }
#ifdef PARO_HARNESS_MPI
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
#endif
    *wrong = sum;
    return PH_OK;
}

/* nccl-tests' getFloatStr: fits a value into a fixed width. */
static void float_str(double value, int width, char *str)
{
    int power = 0;
    for (uint64_t val = 1; value >= (double)val; val *= 10)
        power++;
    if (power < width - 2)
        sprintf(str, "%*.2f", width, value);
    else if (power < width - 1)
        sprintf(str, "%*.1f", width, value);
    else if (power < width + 1)
        sprintf(str, "%*.0f", width, value);
    else if (width >= 7)
        sprintf(str, "%*.1e", width, value);
    else if (width >= 8)
        sprintf(str, "%*.2e", width, value);
    else
        sprintf(str, "%*.0e", width, value);
}

/* Times `iters` back-to-back operations with a host clock around them, as
 * nccl-tests does, rotating through the buffer to avoid cache reuse. */
static ph_result coll_bench(coll_ctx *cx, coll_kind c, const coll_args *a, const coll_counts *k,
                            int in_place, size_t size, double *time_us, double *algbw,
                            double *busbw, long long *wrong)
{
    size_t es = ph_dtype_size(a->dtype);
    size_t total = (k->send > k->recv ? k->send : k->recv) * es;
    size_t steps = total ? cx->buf_bytes / total : 1;
    if (steps == 0)
        steps = 1;

    PH_CHECK(coll_issue(cx, c, a, k, in_place, 0));
    PH_CHECK(coll_sync(cx));
    PH_CHECK(coll_barrier(cx));
    double t0 = ph_now_s();
    for (int it = 0; it < a->iters; it++)
        PH_CHECK(coll_issue(cx, c, a, k, in_place, total * ((size_t)it % steps)));
    PH_CHECK(coll_sync(cx));
    double dt = (ph_now_s() - t0) / a->iters;
#ifdef PARO_HARNESS_MPI
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    dt /= cx->nprocs;
#endif
    *time_us = dt * 1e6;
    *algbw = (double)size / 1e9 / dt;
    *busbw = *algbw * ph_bus_factor(coll_names[c], cx->ssize[0]);
    *wrong = 0;
    if (a->check)
        PH_CHECK(coll_check(cx, c, a, k, in_place, wrong));
    return PH_OK;
}

static ph_result coll_run(coll_ctx *cx, coll_kind c, const coll_args *a, const ph_env *env,
                          int print)
{
    size_t es = ph_dtype_size(a->dtype);
    int n = cx->ssize[0];
    const char *redop = (c == C_ALLREDUCE || c == C_REDUCESCATTER) ? "sum" : "none";
    int root = c == C_BROADCAST ? 0 : -1;

    if (print) {
        ph_env_print(env, stdout);
        printf("# Collective test starting: %s  scope: %s  ranks per communicator: %d"
               "  communicators: %d\n",
               coll_names[c], scope_names[a->scope], n, cx->nranks / (n ? n : 1));
        printf("# nThread 1 nGpus %d minBytes %zu maxBytes %zu step: %zu(factor) warmup iters: %d"
               " iters: %d agg iters: 1 validation: %d graph: 0\n",
               cx->ndev, a->minb, a->maxb, a->factor, a->warmup, a->iters, a->check);
        printf("#\n# Using devices\n");
    }
#ifdef PARO_HARNESS_MPI
    {
        enum { LINE = 640 };
        char *mine = (char *)calloc((size_t)cx->ndev * LINE, 1);
        char *all = (char *)calloc((size_t)cx->nprocs * cx->ndev * LINE, 1);
        if (mine == NULL || all == NULL)
            return PH_SYS_ERROR;
        for (int d = 0; d < cx->ndev; d++) {
            cudaDeviceProp p;
            CUDA_CHECK(cudaGetDeviceProperties(&p, cx->cuda_dev[d]));
            snprintf(mine + d * LINE, LINE,
                     "#  Rank %2d Group %2d Pid %6d on %10s device %2d [0x%02x] %s",
                     cx->world_rank[d], 0, (int)getpid(), env->hostname, cx->cuda_dev[d],
                     p.pciBusID, p.name);
        }
        MPI_CHECK(MPI_Gather(mine, cx->ndev * LINE, MPI_CHAR, all, cx->ndev * LINE, MPI_CHAR, 0,
                             MPI_COMM_WORLD));
        if (print)
            for (int i = 0; i < cx->nprocs * cx->ndev; i++)
                printf("%s\n", all + (size_t)i * LINE);
        free(mine);
        free(all);
    }
#else
    if (print) {
        for (int d = 0; d < cx->ndev; d++) {
            cudaDeviceProp p;
            CUDA_CHECK(cudaGetDeviceProperties(&p, cx->cuda_dev[d]));
            printf("#  Rank %2d Group %2d Pid %6d on %10s device %2d [0x%02x] %s\n",
                   cx->world_rank[d], 0, (int)getpid(), env->hostname, cx->cuda_dev[d], p.pciBusID,
                   p.name);
        }
    }
#endif
    if (print) {
        for (int d = 0; d < cx->ndev; d++) {
            printf("#  Rank %2d node %d local rank %d: %s communicator rank %d of %d\n",
                   cx->world_rank[d], cx->node[d], cx->local_rank[d], scope_names[a->scope],
                   cx->srank[d], cx->ssize[d]);
        }
        printf("#\n");
        printf("#                                                              out-of-place        "
               "               in-place          \n");
        printf("#       size         count      type   redop    root     time   algbw   busbw "
               "#wrong     time   algbw   busbw #wrong\n");
        printf("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)      "
               "      (us)  (GB/s)  (GB/s)       \n");
        fflush(stdout);
    }
    if (print) {
        ph_json_row_begin();
        ph_json_str("collective", coll_names[c]);
        ph_json_str("scope", scope_names[a->scope]);
        ph_json_int("nranks", n);
        ph_json_int("ncomms", cx->nranks / (n ? n : 1));
        ph_json_str("type", nccl_type_name(a->dtype));
        ph_json_str("redop", redop);
        ph_json_int("root", root);
    }

    /* Warm-up over all sizes with factor 2, out of place (nccl-tests). */
    for (size_t size = a->minb; size <= a->maxb; size *= 2) {
        coll_counts k;
        coll_counts_of(c, size / es, n, &k);
        for (int it = 0; it < a->warmup; it++)
            PH_CHECK(coll_issue(cx, c, a, &k, 0, 0));
        PH_CHECK(coll_sync(cx));
        if (size > a->maxb / 2)
            break;
    }

    double bw_sum = 0.0;
    int bw_count = 0, errors = 0;
    /* JSON: the per-size rows go into a "results" list inside this
     * collective's object, written after the table. */
    typedef struct {
        size_t size, count;
        double t[2], alg[2], bus[2];
        long long wrong[2];
    } row;
    row *rows = NULL;
    int nrows = 0, caprows = 0;
    for (size_t size = a->minb; size <= a->maxb; size *= a->factor) {
        coll_counts k;
        coll_counts_of(c, size / es, n, &k);
        size_t bytes = (k.send > k.recv ? k.send : k.recv) * es;
        if (print)
            printf("%12zu  %12zu  %8s  %6s  %6d", bytes, k.param, nccl_type_name(a->dtype), redop,
                   root);
        if (nrows == caprows) {
            caprows = caprows ? 2 * caprows : 64;
            rows = (row *)realloc(rows, (size_t)caprows * sizeof *rows);
            if (rows == NULL)
                return PH_SYS_ERROR;
        }
        row *rw = &rows[nrows++];
        rw->size = bytes;
        rw->count = k.param;
        for (int ip = 0; ip < 2; ip++) {
            PH_CHECK(coll_bench(cx, c, a, &k, ip, bytes, &rw->t[ip], &rw->alg[ip], &rw->bus[ip],
                                &rw->wrong[ip]));
            if (rw->wrong[ip])
                errors++;
            bw_sum += rw->bus[ip];
            bw_count++;
            if (print) {
                char ts[16], as[16], bs[16];
                float_str(rw->t[ip], 7, ts);
                float_str(rw->alg[ip], 6, as);
                float_str(rw->bus[ip], 6, bs);
                if (a->check)
                    printf("  %7s  %6s  %6s  %6g", ts, as, bs, (double)rw->wrong[ip]);
                else
                    printf("  %7s  %6s  %6s    N/A", ts, as, bs);
            }
        }
        if (print) {
            printf("\n");
            fflush(stdout);
        }
        if (size > a->maxb / a->factor)
            break;
    }
    double avg = bw_count ? bw_sum / bw_count : 0.0;
    if (print) {
        printf("# %-20s : %d %s\n", "Out of bounds values", errors, errors ? "FAILED" : "OK");
        printf("# %-20s : %g \n", "Avg bus bandwidth", avg);
        printf("#\n");
        fflush(stdout);
        ph_json_results_begin();
        for (int i = 0; i < nrows; i++) {
            ph_json_row_begin();
            ph_json_int("size", (long long)rows[i].size);
            ph_json_int("count", (long long)rows[i].count);
            for (int ip = 0; ip < 2; ip++) {
                const char *pfx = ip ? "in_place_" : "out_of_place_";
                char key[48];
                snprintf(key, sizeof key, "%stime_us", pfx);
                ph_json_num(key, rows[i].t[ip]);
                snprintf(key, sizeof key, "%salgbw_gbps", pfx);
                ph_json_num(key, rows[i].alg[ip]);
                snprintf(key, sizeof key, "%sbusbw_gbps", pfx);
                ph_json_num(key, rows[i].bus[ip]);
                snprintf(key, sizeof key, "%swrong", pfx);
                if (a->check)
                    ph_json_int(key, rows[i].wrong[ip]);
                else
                    ph_json_num(key, NAN);
            }
            ph_json_row_end();
        }
        ph_json_results_end();
        ph_json_int("out_of_bounds", errors);
        ph_json_num("avg_busbw_gbps", avg);
        ph_json_row_end();
    }
    free(rows);
    return errors ? PH_CHECK_FAILED : PH_OK;
}

/* ---- setup --------------------------------------------------------------------------- */

static void coll_usage(FILE *fp)
{
    fprintf(fp,
            "usage: paro-harness coll [options]   (nccl-tests option letters where they exist)\n"
            "  --op LIST     comma list of allreduce, allgather, reducescatter, broadcast, or all\n"
            "                (default allreduce); one nccl-tests table per collective\n"
            "  -b SIZE       smallest size (default 8); SIZE takes K, M, G (powers of 1024)\n"
            "  -e SIZE       largest size (default 128M)\n"
            "  -f FACTOR     size multiplier (default 2)\n"
            "  -g N          GPUs driven by this process (default 1)\n"
            "  -n ITERS      timed iterations per size (default 20)\n"
            "  -w WARMUP     warm-up iterations per size (default 5)\n"
            "  -c 0|1        check results (default 1)\n"
            "  -d TYPE       float, half or bfloat16 (default float)\n"
            "  --scope S     world, intra (ranks of one node) or inter (one rank per node)\n"
            "  -J FILE       write the results as JSON too\n"
            "size S is the bytes of the whole array; algbw = S/t; busbw = algbw * factor with\n"
            "factor 2(n-1)/n for allreduce, (n-1)/n for allgather and reducescatter, 1 for "
            "broadcast.\n");
}

static ph_result coll_parse(int argc, char **argv, int first, coll_args *a, int *help)
{
    for (int i = first; i < argc; i++) {
        const char *o = argv[i];
        const char *v = (i + 1 < argc) ? argv[i + 1] : NULL;
        long long x;
        if (strcmp(o, "-h") == 0 || strcmp(o, "--help") == 0) {
            coll_usage(stdout);
            *help = 1;
            return PH_OK;
        }
        if (v == NULL) {
            fprintf(stderr, "paro-harness coll: unknown option or missing value: '%s'\n", o);
            coll_usage(stderr);
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
        } else if (strcmp(o, "-g") == 0 || strcmp(o, "--ngpus") == 0) {
            if (!ph_parse_int(v, &x) || x < 1 || x > COLL_MAX_DEV)
                goto bad;
            a->ngpus = (int)x;
        } else if (strcmp(o, "-n") == 0 || strcmp(o, "--iters") == 0) {
            if (!ph_parse_int(v, &x) || x < 1)
                goto bad;
            a->iters = (int)x;
        } else if (strcmp(o, "-w") == 0 || strcmp(o, "--warmup_iters") == 0) {
            if (!ph_parse_int(v, &x) || x < 0)
                goto bad;
            a->warmup = (int)x;
        } else if (strcmp(o, "-c") == 0 || strcmp(o, "--check") == 0) {
            if (!ph_parse_int(v, &x) || x < 0)
                goto bad;
            a->check = x != 0;
        } else if (strcmp(o, "-d") == 0 || strcmp(o, "--datatype") == 0) {
            if (strcmp(v, "float") == 0)
                a->dtype = PH_F32;
            else if (strcmp(v, "half") == 0)
                a->dtype = PH_F16;
            else if (strcmp(v, "bfloat16") == 0)
                a->dtype = PH_BF16;
            else
                goto bad;
        } else if (strcmp(o, "--scope") == 0) {
            if (strcmp(v, "world") == 0)
                a->scope = SCOPE_WORLD;
            else if (strcmp(v, "intra") == 0)
                a->scope = SCOPE_INTRA;
            else if (strcmp(v, "inter") == 0)
                a->scope = SCOPE_INTER;
            else
                goto bad;
        } else if (strcmp(o, "--op") == 0) {
            char buf[128];
            snprintf(buf, sizeof buf, "%s", v);
            memset(a->colls, 0, sizeof a->colls);
            for (char *t = strtok(buf, ","); t != NULL; t = strtok(NULL, ",")) {
                int found = 0;
                for (int c = 0; c < C_N; c++) {
                    if (strcmp(t, "all") == 0 || strcmp(t, coll_names[c]) == 0) {
                        a->colls[c] = 1;
                        found = 1;
                    }
                }
                if (!found) {
                    fprintf(
                        stderr,
                        "paro-harness coll: unknown collective '%s' (known: allreduce, allgather,"
                        " reducescatter, broadcast, all)\n",
                        t);
                    return PH_USAGE;
                }
            }
        } else if (strcmp(o, "-J") == 0 || strcmp(o, "--json") == 0) {
            a->json_path = v;
        } else {
            fprintf(stderr, "paro-harness coll: unknown option '%s'\n", o);
            coll_usage(stderr);
            return PH_USAGE;
        }
        continue;
    bad:
        fprintf(stderr, "paro-harness coll: bad value '%s' for %s\n", v, o);
        return PH_USAGE;
    }
    if (a->minb > a->maxb) {
        fprintf(stderr, "paro-harness coll: -b is larger than -e\n");
        return PH_USAGE;
    }
    return PH_OK;
}

/* World communicators, node layout, and the scope split. */
static ph_result coll_setup(coll_ctx *cx, const coll_args *a)
{
    int visible = 0;
    CUDA_CHECK(cudaGetDeviceCount(&visible));
    cx->ndev = a->ngpus;
    cx->nprocs = 1;
    cx->proc = 0;
    int local_proc = 0, node = 0;
#ifdef PARO_HARNESS_MPI
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &cx->nprocs));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &cx->proc));
    {
        /* Processes on one node share memory; the node index counts the distinct
         * hosts that come before ours in rank order. */
        MPI_Comm shm;
        MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, cx->proc, MPI_INFO_NULL,
                                      &shm));
        MPI_CHECK(MPI_Comm_rank(shm, &local_proc));
        int leader = local_proc == 0, leader_rank = cx->proc;
        MPI_CHECK(MPI_Bcast(&leader_rank, 1, MPI_INT, 0, shm));
        int *leaders = (int *)calloc((size_t)cx->nprocs, sizeof(int));
        int *lrank = (int *)calloc((size_t)cx->nprocs, sizeof(int));
        if (leaders == NULL || lrank == NULL)
            return PH_SYS_ERROR;
        MPI_CHECK(MPI_Allgather(&leader, 1, MPI_INT, leaders, 1, MPI_INT, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Allgather(&leader_rank, 1, MPI_INT, lrank, 1, MPI_INT, MPI_COMM_WORLD));
        node = 0;
        for (int p = 0; p < lrank[cx->proc]; p++)
            node += leaders[p];
        free(leaders);
        free(lrank);
        MPI_CHECK(MPI_Comm_free(&shm));
    }
#endif
    cx->nranks = cx->nprocs * cx->ndev;
    if ((local_proc + 1) * cx->ndev > visible) {
        fprintf(stderr, "paro-harness coll: -g %d needs %d GPUs on this node, %d are visible\n",
                cx->ndev, (local_proc + 1) * cx->ndev, visible);
        return PH_USAGE;
    }
    for (int d = 0; d < cx->ndev; d++) {
        cx->cuda_dev[d] = local_proc * cx->ndev + d;
        cx->world_rank[d] = cx->proc * cx->ndev + d;
        cx->node[d] = node;
        cx->local_rank[d] = local_proc * cx->ndev + d;
    }
#ifdef PARO_HARNESS_MPI
    {
        ncclUniqueId id;
        if (cx->proc == 0)
            NCCL_CHECK(ncclGetUniqueId(&id));
        MPI_CHECK(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD));
        NCCL_CHECK(ncclGroupStart());
        for (int d = 0; d < cx->ndev; d++) {
            CUDA_CHECK(cudaSetDevice(cx->cuda_dev[d]));
            NCCL_CHECK(ncclCommInitRank(&cx->world[d], cx->nranks, id, cx->world_rank[d]));
        }
        NCCL_CHECK(ncclGroupEnd());
    }
#else
    NCCL_CHECK(ncclCommInitAll(cx->world, cx->ndev, cx->cuda_dev));
#endif
    if (a->scope == SCOPE_WORLD) {
        for (int d = 0; d < cx->ndev; d++) {
            cx->comm[d] = cx->world[d];
            cx->split[d] = 0;
        }
    } else {
        /* intra: one communicator per node; inter: one per local rank, linking
         * the GPUs of equal local rank across nodes (one rank each on one node). */
        NCCL_CHECK(ncclGroupStart());
        for (int d = 0; d < cx->ndev; d++) {
            int color = a->scope == SCOPE_INTRA ? cx->node[d] : cx->local_rank[d];
            int key = a->scope == SCOPE_INTRA ? cx->world_rank[d] : cx->node[d];
            NCCL_CHECK(ncclCommSplit(cx->world[d], color, key, &cx->comm[d], NULL));
            cx->split[d] = 1;
        }
        NCCL_CHECK(ncclGroupEnd());
    }
    for (int d = 0; d < cx->ndev; d++) {
        NCCL_CHECK(ncclCommUserRank(cx->comm[d], &cx->srank[d]));
        NCCL_CHECK(ncclCommCount(cx->comm[d], &cx->ssize[d]));
        if (cx->ssize[d] != cx->ssize[0]) {
            fprintf(stderr,
                    "paro-harness coll: %s communicators differ in size (%d and %d):"
                    " busbw uses %d\n",
                    scope_names[a->scope], cx->ssize[0], cx->ssize[d], cx->ssize[0]);
        }
    }
    /* Buffers of maxbytes each (plus one element for rounding). */
    cx->buf_bytes = a->maxb + 64;
    for (int d = 0; d < cx->ndev; d++) {
        CUDA_CHECK(cudaSetDevice(cx->cuda_dev[d]));
        CUDA_CHECK(cudaStreamCreateWithFlags(&cx->stream[d], cudaStreamNonBlocking));
        CUDA_CHECK(cudaMalloc(&cx->send[d], cx->buf_bytes));
        CUDA_CHECK(cudaMalloc(&cx->recv[d], cx->buf_bytes));
        CUDA_CHECK(cudaMalloc(&cx->dwrong[d], sizeof(unsigned long long)));
        PH_CHECK(launch_init(cx->send[d], cx->buf_bytes / ph_dtype_size(a->dtype), a->dtype,
                             cx->srank[d], 0, coll_range(a->dtype, cx->ssize[d]), cx->stream[d]));
        CUDA_CHECK(cudaMemsetAsync(cx->recv[d], 0, cx->buf_bytes, cx->stream[d]));
    }
    PH_CHECK(coll_sync(cx));
    return PH_OK;
}

static ph_result coll_teardown(coll_ctx *cx)
{
    for (int d = 0; d < cx->ndev; d++) {
        CUDA_CHECK(cudaSetDevice(cx->cuda_dev[d]));
        CUDA_CHECK(cudaFree(cx->send[d]));
        CUDA_CHECK(cudaFree(cx->recv[d]));
        CUDA_CHECK(cudaFree(cx->dwrong[d]));
        CUDA_CHECK(cudaStreamDestroy(cx->stream[d]));
    }
    for (int d = 0; d < cx->ndev; d++) {
        if (cx->split[d])
            NCCL_CHECK(ncclCommDestroy(cx->comm[d]));
    }
    for (int d = 0; d < cx->ndev; d++)
        NCCL_CHECK(ncclCommDestroy(cx->world[d]));
    return PH_OK;
}

ph_result ph_cmd_coll(int argc, char **argv, int first)
{
    coll_args a;
    memset(&a, 0, sizeof a);
    a.minb = 8;
    a.maxb = 128u << 20;
    a.factor = 2;
    a.ngpus = 1;
    a.iters = 20;
    a.warmup = 5;
    a.check = 1;
    a.colls[C_ALLREDUCE] = 1;
    a.scope = SCOPE_WORLD;
    a.dtype = PH_F32;
    int help = 0;
    PH_CHECK(coll_parse(argc, argv, first, &a, &help));
    if (help)
        return PH_OK;

    static coll_ctx cx;
    memset(&cx, 0, sizeof cx);
    PH_CHECK(coll_setup(&cx, &a));
    int print = cx.proc == 0;
    ph_env env;
    CUDA_CHECK(cudaSetDevice(cx.cuda_dev[0]));
    PH_CHECK(ph_env_collect(&env, "coll", cx.cuda_dev[0], argc, argv));
    if (print) {
        PH_CHECK(ph_json_open(a.json_path, &env));
        ph_json_section("params");
        ph_json_int("min_bytes", (long long)a.minb);
        ph_json_int("max_bytes", (long long)a.maxb);
        ph_json_int("step_factor", (long long)a.factor);
        ph_json_int("ngpus_per_process", cx.ndev);
        ph_json_int("nprocs", cx.nprocs);
        ph_json_int("nranks", cx.nranks);
        ph_json_int("iters", a.iters);
        ph_json_int("warmup", a.warmup);
        ph_json_int("check", a.check);
        ph_json_str("scope", scope_names[a.scope]);
        ph_json_str("timing", "host clock around iters back-to-back operations, mean (nccl-tests)");
        ph_json_section_end();
        ph_json_results_begin();
    }
    int failed = 0;
    for (int c = 0; c < C_N; c++) {
        if (!a.colls[c])
            continue;
        ph_result r = coll_run(&cx, (coll_kind)c, &a, &env, print);
        if (r == PH_CHECK_FAILED)
            failed = 1;
        else if (r != PH_OK)
            return r;
    }
    if (print) {
        ph_json_results_end();
        ph_json_close();
    }
    PH_CHECK(coll_teardown(&cx));
    return failed ? PH_CHECK_FAILED : PH_OK;
}
