/* SPDX-License-Identifier: MIT */
/*
 * Shared declarations of paro-harness, the GPU calibration harness of parosim.
 * Errors follow the nccl-tests idiom: every CUDA, cuBLASLt and NCCL call goes
 * through a *_CHECK macro that prints file:line and the library's own error
 * string, then returns a ph_result from the calling function, so that main()
 * alone decides the exit code. Also declared here: the run header (device,
 * driver and library versions), the small JSON writer behind -J, and helpers
 * for timing statistics and argument parsing.
 */
#ifndef PARO_HARNESS_H
#define PARO_HARNESS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <nccl.h>

#ifdef PARO_HARNESS_MPI
#define OMPI_SKIP_MPICXX 1 /* the C API only */
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

#define PARO_HARNESS_VERSION "0.1.0"

/* Result of every harness function; main() maps it to the exit status. */
typedef enum {
    PH_OK = 0,
    PH_CUDA_ERROR = 1,
    PH_CUBLAS_ERROR = 2,
    PH_NCCL_ERROR = 3,
    PH_MPI_ERROR = 4,
    PH_CHECK_FAILED = 5, /* a result was wrong: the run finished but must not be used */
    PH_USAGE = 6,        /* bad command line: exit status 2 */
    PH_SYS_ERROR = 7     /* host-side failure: file I/O, out of host memory */
} ph_result;

#define CUDA_CHECK(cmd)                                                                            \
    do {                                                                                           \
        cudaError_t ph_e_ = (cmd);                                                                 \
        if (ph_e_ != cudaSuccess) {                                                                \
            fprintf(stderr, "%s:%d: CUDA error %d '%s' in %s\n", __FILE__, __LINE__, (int)ph_e_,   \
                    cudaGetErrorString(ph_e_), #cmd);                                              \
            return PH_CUDA_ERROR;                                                                  \
        }                                                                                          \
    } while (0)

/* After a kernel launch: catches launch-configuration errors at once. */
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

#define CUBLAS_CHECK(cmd)                                                                          \
    do {                                                                                           \
        cublasStatus_t ph_s_ = (cmd);                                                              \
        if (ph_s_ != CUBLAS_STATUS_SUCCESS) {                                                      \
            fprintf(stderr, "%s:%d: cuBLASLt error %d '%s' in %s\n", __FILE__, __LINE__,           \
                    (int)ph_s_, cublasLtGetStatusString(ph_s_), #cmd);                             \
            return PH_CUBLAS_ERROR;                                                                \
        }                                                                                          \
    } while (0)

#define NCCL_CHECK(cmd)                                                                            \
    do {                                                                                           \
        ncclResult_t ph_n_ = (cmd);                                                                \
        if (ph_n_ != ncclSuccess) {                                                                \
            fprintf(stderr, "%s:%d: NCCL error %d '%s' in %s\n", __FILE__, __LINE__, (int)ph_n_,   \
                    ncclGetErrorString(ph_n_), #cmd);                                              \
            return PH_NCCL_ERROR;                                                                  \
        }                                                                                          \
    } while (0)

#ifdef PARO_HARNESS_MPI
#define MPI_CHECK(cmd)                                                                             \
    do {                                                                                           \
        int ph_m_ = (cmd);                                                                         \
        if (ph_m_ != MPI_SUCCESS) {                                                                \
            char ph_s_[MPI_MAX_ERROR_STRING];                                                      \
            int ph_l_ = 0;                                                                         \
            MPI_Error_string(ph_m_, ph_s_, &ph_l_);                                                \
            fprintf(stderr, "%s:%d: MPI error %d '%s' in %s\n", __FILE__, __LINE__, ph_m_, ph_s_,  \
                    #cmd);                                                                         \
            return PH_MPI_ERROR;                                                                   \
        }                                                                                          \
    } while (0)
#endif

/* Propagates a ph_result from a callee (nccl-tests' TESTCHECK). */
#define PH_CHECK(cmd)                                                                              \
    do {                                                                                           \
        ph_result ph_r_ = (cmd);                                                                   \
        if (ph_r_ != PH_OK) {                                                                      \
            if (ph_r_ != PH_USAGE && ph_r_ != PH_CHECK_FAILED)                                     \
                fprintf(stderr, "%s:%d: failed in %s\n", __FILE__, __LINE__, #cmd);                \
            return ph_r_;                                                                          \
        }                                                                                          \
    } while (0)

/* ---- element types shared by the kernels ------------------------------- */

typedef enum { PH_F32 = 0, PH_F16 = 1, PH_BF16 = 2, PH_E4M3 = 3 } ph_dtype;

size_t ph_dtype_size(ph_dtype t);

/* ---- run header -------------------------------------------------------- */

/* What every subcommand prints first and stores under "header" in -J. */
typedef struct {
    char subcommand[32];
    char date_utc[32]; /* ISO 8601, e.g. 2026-11-23T10:00:00Z */
    char hostname[256];
    char device_name[256];
    int device;
    int sm_count;
    int cc_major, cc_minor;
    size_t mem_total; /* bytes */
    int l2_bytes;
    int sm_clock_khz; /* maximum clock reported by the driver */
    int mem_clock_khz;
    int mem_bus_bits;
    int pci_bus;
    char driver_version[64]; /* e.g. "580.159.04", from NVML or /proc */
    int cuda_driver_api;     /* cudaDriverGetVersion, e.g. 13000 */
    int cuda_runtime;        /* cudaRuntimeGetVersion */
    size_t cublaslt_version; /* cublasLtGetVersion */
    int nccl_version;        /* ncclGetVersion */
    int nccl_header_version; /* NCCL_VERSION_CODE */
    int ndevices;            /* devices visible to this process */
    char cmdline[4096];
} ph_env;

ph_result ph_env_collect(ph_env *env, const char *subcommand, int device, int argc, char **argv);
void ph_env_print(const ph_env *env, FILE *fp);

/* ---- JSON (-J FILE) ------------------------------------------------------
 * One object: {"tool", "version", "header": {...}, "params": {...},
 * "results": [ {...}, ... ], "summary": {...}}. A NULL path disables all of
 * these calls, so subcommands call them unconditionally. */
ph_result ph_json_open(const char *path, const ph_env *env);
void ph_json_section(const char *name); /* "params" or "summary" object */
void ph_json_section_end(void);
void ph_json_results_begin(void);
void ph_json_results_end(void);
void ph_json_row_begin(void);
void ph_json_row_end(void);
void ph_json_str(const char *key, const char *val);
void ph_json_num(const char *key, double val);
void ph_json_int(const char *key, long long val);
void ph_json_close(void);
int ph_json_enabled(void);

/* ---- helpers -------------------------------------------------------------- */

double ph_median(double *v, int n); /* sorts v in place */
double ph_min(const double *v, int n);
double ph_now_s(void); /* monotonic host clock */

/* "8", "64K", "1M", "4G" (powers of 1024, like nccl-tests); 0 on error. */
int ph_parse_size(const char *s, size_t *out);
int ph_parse_int(const char *s, long long *out);
/* Formats a byte count as "4 KiB" / "1 GiB" style into buf. */
const char *ph_fmt_bytes(size_t b, char *buf, size_t len);

/* Fills n elements of type t with uniform values in [lo, hi) from a counter
 * hash of (seed, index): reproducible, never all zeros. */
ph_result ph_fill_uniform(void *p, size_t n, ph_dtype t, uint64_t seed, float lo, float hi,
                          cudaStream_t s);

/* Subcommands. */
ph_result ph_cmd_gemm(int argc, char **argv, int first);
ph_result ph_cmd_hbm(int argc, char **argv, int first);
ph_result ph_cmd_h2d(int argc, char **argv, int first);
ph_result ph_cmd_coll(int argc, char **argv, int first);

/* Bus-bandwidth factor of nccl-tests (doc/PERFORMANCE.md): busbw = algbw *
 * factor, with algbw = S / t and S the bytes of the whole array. Must stay
 * identical to parosim's paro_coll_bus_factor(). */
double ph_bus_factor(const char *coll, int nranks);

#endif /* PARO_HARNESS_H */
