#!/bin/sh
# SPDX-License-Identifier: MIT
# Benchmark: the 10,000-point sweep of issue #5 (all 29 strategies at every point), on
# all cores; prints the wall time, points/s and rows written. Target: under a minute on
# the 2-core development machine.
set -eu
parosim=$1
root=$2
cd "$root"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
start=$(date +%s.%N)
"$parosim" sweep scenarios/llama-7b_a100x8-100g_n32.yaml \
    --vary training.accumulation=1..25 --vary training.micro_batch=1..4 \
    --vary training.trainable.fraction=1,1/2,1/16,3/1000 --vary topology.nodes=2,4,8,16,32 \
    --vary parallelism.group=1,2,4,8,16 -o "$out"
end=$(date +%s.%N)
rows=$(($(wc -l <"$out") - 1))
awk -v s="$start" -v e="$end" -v rows="$rows" -v cores="$(nproc)" 'BEGIN {
    t = e - s
    printf "sweep 10000 points x 29 strategies: %.1f s on %d cores, %.0f points/s, %d rows\n", t, cores, 10000 / t, rows
}'
