/* SPDX-License-Identifier: MIT */
/*
 * Entry point of paro-harness: dispatches to the subcommands gemm, hbm, h2d
 * and coll, each of which measures one input of parosim's calibration
 * (GEMM rates, memory bandwidth, host links, NCCL collectives) and prints an
 * nccl-tests-style table. Exit status: 0 success, 1 runtime error or a
 * failed result check, 2 usage error.
 */
#include "harness.h"

#include <string.h>

static void usage(FILE *fp)
{
    fprintf(fp, "usage: paro-harness SUBCOMMAND [options]\n"
                "\n"
                "subcommands:\n"
                "  gemm   cuBLASLt matmul rates (bf16, fp16, tf32) for given or layer shapes\n"
                "  hbm    device memory bandwidth: cudaMemcpy D2D, copy kernel, Adam update\n"
                "  h2d    pinned host<->device copy bandwidth\n"
                "  coll   NCCL collectives, nccl-tests table layout\n"
                "\n"
                "common options: -J FILE (write JSON), --device N (gemm, hbm, h2d), -h\n"
                "'paro-harness SUBCOMMAND -h' lists a subcommand's options.\n");
}

int main(int argc, char **argv)
{
    ph_result r;
#ifdef PARO_HARNESS_MPI
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "paro-harness: MPI_Init failed\n");
        return 1;
    }
#endif
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        usage(argc < 2 ? stderr : stdout);
        r = argc < 2 ? PH_USAGE : PH_OK;
    } else if (strcmp(argv[1], "gemm") == 0) {
        r = ph_cmd_gemm(argc, argv, 2);
    } else if (strcmp(argv[1], "hbm") == 0) {
        r = ph_cmd_hbm(argc, argv, 2);
    } else if (strcmp(argv[1], "h2d") == 0) {
        r = ph_cmd_h2d(argc, argv, 2);
    } else if (strcmp(argv[1], "coll") == 0) {
        r = ph_cmd_coll(argc, argv, 2);
    } else if (strcmp(argv[1], "--version") == 0) {
        printf("paro-harness %s\n", PARO_HARNESS_VERSION);
        r = PH_OK;
    } else {
        fprintf(stderr, "paro-harness: unknown subcommand '%s' (known: gemm, hbm, h2d, coll)\n",
                argv[1]);
        r = PH_USAGE;
    }
    fflush(stdout);
#ifdef PARO_HARNESS_MPI
    if (r == PH_OK || r == PH_USAGE || r == PH_CHECK_FAILED)
        MPI_Finalize();
    else
        MPI_Abort(MPI_COMM_WORLD, 1);
#endif
    if (r == PH_OK)
        return 0;
    if (r == PH_USAGE)
        return 2;
    return 1;
}
