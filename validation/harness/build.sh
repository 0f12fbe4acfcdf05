#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Builds paro-harness with plain nvcc, without meson, so that it can be built
# on a GPU machine that has only the CUDA toolkit. NCCL is taken from
# $NCCL_HOME, the CUDA toolkit, /usr, or a pip-installed nvidia-nccl package,
# in that order.
#
# usage: validation/harness/build.sh [OUTPUT]        (default: validation/harness/build/paro-harness)
#        validation/harness/build.sh --check        (only find nvcc, cuBLASLt and NCCL; meson uses it)
# environment:
#   ARCH=sm_90        GPU architecture passed as -arch (e.g. sm_80, sm_90a, sm_100)
#   NVCC=...          nvcc to use (default: nvcc on PATH, then $CUDA_HOME/bin/nvcc)
#   CUDA_HOME=...     toolkit root (default: /usr/local/cuda)
#   NCCL_HOME=...     NCCL root with include/ and lib/
#   MPI=1             build the MPI variant (-DPARO_HARNESS_MPI, host compiler $MPICXX or mpicxx)
#   NVCC_FLAGS=...    extra flags
set -eu

here=$(cd "$(dirname "$0")" && pwd)
check_only=0
if [ "${1:-}" = "--check" ]; then
  check_only=1
  shift
fi
out=${1:-"$here/build/paro-harness"}
arch=${ARCH:-${PARO_CUDA_ARCH:-sm_90}}
cuda_home=${CUDA_HOME:-/usr/local/cuda}

if [ -n "${NVCC:-}" ]; then
  nvcc=$NVCC
elif command -v nvcc >/dev/null 2>&1; then
  nvcc=$(command -v nvcc)
elif [ -x "$cuda_home/bin/nvcc" ]; then
  nvcc=$cuda_home/bin/nvcc
else
  echo "build.sh: nvcc not found (set NVCC or CUDA_HOME, or put nvcc on PATH)" >&2
  exit 1
fi
# The toolkit that nvcc belongs to (nvcc may be a wrapper script: ask it).
top=$("$nvcc" --dryrun -c -x cu /dev/null -o /dev/null 2>&1 | sed -n 's/^#\$ TOP=//p' | head -n 1)
if [ -n "$top" ] && [ -d "$top" ]; then
  cuda_home=$(cd "$top" && pwd -P)
else
  cuda_home=$(cd "$(dirname "$nvcc")/.." && pwd)
fi

# ---- NCCL ---------------------------------------------------------------------
nccl_inc=""
nccl_lib=""
find_nccl_in () { # $1 include dir, $2.. lib dirs
  inc=$1
  shift
  [ -f "$inc/nccl.h" ] || return 1
  for d in "$@"; do
    for f in "$d/libnccl.so" "$d/libnccl.so.2"; do
      if [ -e "$f" ]; then
        nccl_inc=$inc
        nccl_lib=$f
        return 0
      fi
    done
  done
  return 1
}

if [ -n "${NCCL_HOME:-}" ] && find_nccl_in "$NCCL_HOME/include" "$NCCL_HOME/lib" "$NCCL_HOME/lib64"; then
  :
elif find_nccl_in "$cuda_home/include" "$cuda_home/lib64" "$cuda_home/lib" "$cuda_home/targets/x86_64-linux/lib"; then
  :
elif find_nccl_in /usr/include /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib64; then
  :
else
  pydir=$(python3 -c 'import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__))' 2>/dev/null \
          || python3 -c 'import nvidia.nccl; print(list(nvidia.nccl.__path__)[0])' 2>/dev/null || true)
  if [ -n "$pydir" ] && find_nccl_in "$pydir/include" "$pydir/lib"; then
    :
  else
    echo "build.sh: NCCL not found (looked in \$NCCL_HOME, $cuda_home, /usr and the pip package nvidia-nccl);" >&2
    echo "          set NCCL_HOME to a directory with include/nccl.h and lib/libnccl.so" >&2
    exit 1
  fi
fi
nccl_libdir=$(dirname "$nccl_lib")

# ---- cuBLASLt: the toolkit's, else a pip-installed nvidia-cublas ---------------
cublas_flags="-lcublasLt"
if ! ls "$cuda_home"/lib64/libcublasLt.so* "$cuda_home"/targets/*/lib/libcublasLt.so* >/dev/null 2>&1; then
  cbdir=$(python3 -c 'import nvidia.cublas, os; print(os.path.dirname(nvidia.cublas.__file__))' 2>/dev/null \
          || python3 -c 'import nvidia.cublas; print(list(nvidia.cublas.__path__)[0])' 2>/dev/null || true)
  cblib=$(find "$cbdir/lib" -maxdepth 1 -name "libcublasLt.so*" 2>/dev/null | head -n 1)
  if [ -n "$cbdir" ] && [ -n "$cblib" ]; then
    cublas_flags="-I$cbdir/include -L$cbdir/lib -l:$(basename "$cblib") -Xlinker -rpath,$cbdir/lib"
    echo "build.sh: cuBLASLt $cblib"
  else
    echo "build.sh: libcublasLt not found in $cuda_home nor in the pip package nvidia-cublas" >&2
    exit 1
  fi
fi

# Link by file name: a pip package ships only libnccl.so.2, without the
# libnccl.so link that -lnccl needs; the rpath finds it at run time.
set -- -O2 -arch="$arch" -std=c++17 -Xcompiler -Wall,-Wextra \
  -I"$nccl_inc" \
  "$here/main.cu" "$here/common.cu" "$here/gemm.cu" "$here/mem.cu" "$here/coll.cu" \
  -o "$out" -L"$nccl_libdir" -l:"$(basename "$nccl_lib")" -Xlinker "-rpath,$nccl_libdir" -ldl

if [ "${MPI:-0}" = 1 ]; then
  set -- -ccbin "${MPICXX:-mpicxx}" -DPARO_HARNESS_MPI "$@"
fi

echo "build.sh: nvcc $nvcc ($("$nvcc" --version | tail -n 1))"
echo "build.sh: NCCL $nccl_inc/nccl.h, $nccl_lib"
if [ "$check_only" = 1 ]; then
  exit 0
fi
mkdir -p "$(dirname "$out")"
# shellcheck disable=SC2086
"$nvcc" "$@" $cublas_flags ${NVCC_FLAGS:-}
echo "build.sh: built $out"
