#!/bin/sh
# SPDX-License-Identifier: MIT
# Benchmark: issue #44's two searches of the whole space on 2 threads, each run 3 times
# (min and median wall time): Llama-3-70B (8,192 tokens, FSDP profile) on 16,384 H100 in
# the law's mode, and GPT-3 175B with --lga on 56,320 A100 (7,040 nodes). Target: 3 s
# each on the 2-core development machine. Prints figures, never asserts.
set -eu
parosim=$1
root=$2
runs=${3:-3}
cd "$root"
time_case() { # label, then the plan arguments
    label=$1
    shift
    times=""
    i=0
    while [ "$i" -lt "$runs" ]; do
        start=$(date +%s.%N)
        "$parosim" plan "$@" --jobs 2 --top 1 >/dev/null
        end=$(date +%s.%N)
        times="$times $(awk -v s="$start" -v e="$end" 'BEGIN { print e - s }')"
        i=$((i + 1))
    done
    echo "$times" | tr ' ' '\n' | sed '/^$/d' | sort -n | awk -v label="$label" '
        { t[NR] = $1 } END { printf "%s: min %.2f s, median %.2f s (%d runs, 2 threads)\n",
                             label, t[1], t[int((NR + 1) / 2)], NR }'
}
time_case "plan Llama-3-70B, 16,384 H100, whole space" \
    scenarios/llama3-70b_dgx-h100x8_n16-fsdp.yaml --set topology.nodes=2048
time_case "plan GPT-3 175B --lga, 56,320 A100" \
    scenarios/lamy-poirier-gpt3-175b_a100x8-800g.yaml --set topology.nodes=7040 --lga
