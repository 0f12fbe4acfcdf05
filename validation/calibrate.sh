#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Runs parosim's standard single-node calibration set on the GPU machine it
# runs on: builds paro-harness with harness/build.sh, then GEMM rates for the
# LLaMA-7B and LLaMA-13B layer shapes and square sizes, HBM and host-link
# bandwidth, and NCCL collective sweeps, writing one log (and JSON) per run
# into OUTDIR as YYYY-MM-DD_<run>.txt. It only reads the GPU's settings
# (nvidia-smi queries) and never changes them.
#
# usage: validation/calibrate.sh OUTDIR [NGPUS]
#   NGPUS  GPUs for the collective runs (-g), default: all visible
# environment: ARCH (default sm_90), QUICK=1 (small sweeps, for a smoke test),
#              SANITIZE=1 (also run small cases under compute-sanitizer)
set -u

here=$(cd "$(dirname "$0")" && pwd)
outdir=${1:?usage: calibrate.sh OUTDIR [NGPUS]}
mkdir -p "$outdir"
day=$(date -u +%F)
p="$outdir/${day}_"
status="$outdir/${day}_status.txt"
: >"$status"

step () { # NAME LOGFILE COMMAND...: runs COMMAND into LOGFILE, notes rc and duration
  name=$1
  log=$2
  shift 2
  t0=$(date +%s)
  "$@" >"$log" 2>&1
  rc=$?
  echo "$name rc=$rc seconds=$(( $(date +%s) - t0 ))" | tee -a "$status"
  return $rc
}

{
  echo "# date: $(date -u +%FT%TZ)"
  echo "# host: $(hostname)  kernel: $(uname -r)"
  nvidia-smi 2>&1
  nvidia-smi --query-gpu=index,name,driver_version,pstate,persistence_mode,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.draw,power.limit,temperature.gpu,memory.total,ecc.mode.current --format=csv 2>&1
  nvidia-smi topo -m 2>&1
  echo "# nvcc: $(nvcc --version 2>&1 | tail -n 1)"
  python3 -c 'import nvidia.nccl; print("# pip nvidia.nccl:", list(nvidia.nccl.__path__)[0])' 2>&1
} >"${p}system.txt" 2>&1

exe="$here/harness/build/paro-harness"
step build "${p}build.txt" sh "$here/harness/build.sh" "$exe" || {
  cat "${p}build.txt"
  exit 1
}

ngpus=${2:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')}
[ "$ngpus" -ge 1 ] 2>/dev/null || ngpus=1

if [ "${QUICK:-0}" = 1 ]; then
  hbm_max=64M h2d_max=16M coll_max=16M squares="--shape 1024,1024,1024"
else
  hbm_max=4G h2d_max=1G coll_max=1G
  squares="--shape 1024,1024,1024 --shape 2048,2048,2048 --shape 4096,4096,4096 --shape 8192,8192,8192"
fi

export NCCL_DEBUG="${NCCL_DEBUG:-WARN}"

# GEMMs: LLaMA-7B layer (fitting set), LLaMA-13B layer (held out), squares.
step gemm-llama7b "${p}gemm-llama7b.txt" "$exe" gemm --hidden 4096 --ffn 11008 --heads 32 --tokens 2048 --gated \
  --prefix llama7b. --dtype bf16,fp16,tf32 -J "${p}gemm-llama7b.json"
step gemm-llama13b "${p}gemm-llama13b.txt" "$exe" gemm --hidden 5120 --ffn 13824 --heads 40 --tokens 2048 --gated \
  --prefix llama13b. --dtype bf16,fp16,tf32 -J "${p}gemm-llama13b.json"
# shellcheck disable=SC2086
step gemm-square "${p}gemm-square.txt" "$exe" gemm --name square $squares --dtype bf16,fp16,tf32 \
  -J "${p}gemm-square.json"

# fp8 (E4M3 into bf16, every product TN as Transformer Engine runs it) beside bf16 in the
# same run: the LLaMA-7B layer, one TP-4 rank of Llama-3-70B at 8192 tokens (qkv, attn_out,
# mlp_up_gate, mlp_down; forward, dgrad, wgrad), and the squares. Own logs: parosim's
# calibrate reads the bf16/fp16/tf32 ones.
step gemm-fp8-llama7b "${p}gemm-fp8-llama7b.txt" "$exe" gemm --hidden 4096 --ffn 11008 --heads 32 \
  --tokens 2048 --gated --prefix llama7b. --dtype bf16,fp8,fp8fast -J "${p}gemm-fp8-llama7b.json"
l70=""
for lin in qkv:8192:2560 attn_out:2048:8192 mlp_up_gate:8192:14336 mlp_down:7168:8192; do
  n=${lin%%:*}; io=${lin#*:}; in=${io%%:*}; out=${io#*:}
  l70="$l70 --name llama3-70b-tp4.$n.fwd --shape 8192,$out,$in"
  l70="$l70 --name llama3-70b-tp4.$n.dgrad --shape 8192,$in,$out"
  l70="$l70 --name llama3-70b-tp4.$n.wgrad --shape $out,$in,8192"
done
# shellcheck disable=SC2086
step gemm-fp8-llama70b-tp4 "${p}gemm-fp8-llama70b-tp4.txt" "$exe" gemm $l70 --dtype bf16,fp8,fp8fast \
  -J "${p}gemm-fp8-llama70b-tp4.json"
# shellcheck disable=SC2086
step gemm-fp8-square "${p}gemm-fp8-square.txt" "$exe" gemm --name square $squares \
  --dtype bf16,fp8,fp8fast -J "${p}gemm-fp8-square.json"

step hbm "${p}hbm.txt" "$exe" hbm -b 1M -e "$hbm_max" -f 2 -J "${p}hbm.json"
step h2d "${p}h2d.txt" "$exe" h2d -b 4K -e "$h2d_max" -f 2 -J "${p}h2d.json"

for op in allreduce allgather reducescatter broadcast; do
  step "coll-$op" "${p}coll-$op.txt" "$exe" coll --op "$op" -b 8 -e "$coll_max" -f 2 -g "$ngpus" \
    --scope world -J "${p}coll-$op.json"
done
# The intra- and inter-node splits (on one node, inter is one rank per communicator).
for scope in intra inter; do
  step "coll-$scope" "${p}coll-$scope.txt" "$exe" coll --op all -b 8 -e 16M -f 4 -g "$ngpus" \
    --scope "$scope" -J "${p}coll-$scope.json"
done

if [ "${SANITIZE:-0}" = 1 ] && command -v compute-sanitizer >/dev/null 2>&1; then
  {
    timeout 120 compute-sanitizer --tool memcheck --report-api-errors no "$exe" gemm --shape 256,384,320 --layout NT --reps 20 --warmup 1
    timeout 120 compute-sanitizer --tool memcheck --report-api-errors no "$exe" gemm --shape 256,384,320 --dtype fp8,fp8fast --reps 20 --warmup 1
    timeout 120 compute-sanitizer --tool memcheck --report-api-errors no "$exe" hbm -b 1M -e 2M -n 20 -w 1
    timeout 120 compute-sanitizer --tool memcheck --report-api-errors no "$exe" h2d -b 4K -e 64K -n 20 -w 1
    timeout 120 compute-sanitizer --tool memcheck --report-api-errors no "$exe" coll --op all -b 8 -e 64K -f 8 -n 2 -w 1
  } >"${p}sanitizer.txt" 2>&1
  echo "sanitizer rc=$? errors: $(grep -c 'ERROR SUMMARY: [1-9]' "${p}sanitizer.txt")" | tee -a "$status"
fi
nvidia-smi --query-gpu=index,pstate,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv >>"$status" 2>&1
echo "calibrate.sh: logs in $outdir"
