#!/bin/sh
# SPDX-License-Identifier: MIT
# Benchmark: the table of issue #18, each case run 3 times, printing the min and median
# wall time (and the largest resident memory where GNU time is installed), or the refusal
# when the work estimate refuses the case (the limit of about 10 s a command), then its
# time once with the limit lifted (PAROSIM_WORK_SCALE; BENCH_LIFT_TIMEOUT seconds). Asserts
# nothing; bench/README.md records the figures before and after each change.
# Usage: bench_table.sh PAROSIM SOURCE_ROOT [RUNS]
set -u
parosim=$1
root=$2
runs=${3:-3}
cd "$root" || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
S=scenarios/llama-7b_a100x8-100g_n32.yaml
T=topologies/a100x8-200g.yaml
gnu_time=
[ -x /usr/bin/time ] && gnu_time=/usr/bin/time

# name, then the parosim arguments
case_row() {
    name=$1
    shift
    : >"$work/times"
    rss=0
    for i in $(seq "$runs"); do
        start=$(date +%s.%N)
        if [ -n "$gnu_time" ]; then
            $gnu_time -f "%M" -o "$work/rss" "$parosim" "$@" >"$work/out" 2>"$work/err"
        else
            "$parosim" "$@" >"$work/out" 2>"$work/err"
        fi
        rc=$?
        end=$(date +%s.%N)
        if [ $rc -ne 0 ]; then
            printf '%-58s refused: %s\n' "$name" "$(grep -o 'would take about [^(]*' "$work/err" |
                head -1)$(grep -o 'error: .*' "$work/err" | grep -v 'would take' | head -c 120)"
            lifted "$name" "$@"
            return
        fi
        awk -v s="$start" -v e="$end" 'BEGIN { print e - s }' >>"$work/times"
        [ -n "$gnu_time" ] && rss=$(awk -v r="$rss" 'NR == 1 { print ($1 > r ? $1 : r) }' "$work/rss")
    done
    sort -g "$work/times" | awk -v name="$name" -v rss="$rss" '
        { t[NR] = $1 }
        END {
            med = NR % 2 ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
            printf "%-58s min %8.3f s  median %8.3f s", name, t[1], med
            if (rss > 0) printf "  %6.0f MB", rss / 1024
            printf "\n"
        }'
}

# A refused case once more with the limit lifted (PAROSIM_WORK_SCALE), once, within
# $lift_timeout seconds: what it really takes.
lift_timeout=${BENCH_LIFT_TIMEOUT:-600}
lifted() {
    name=$1
    shift
    start=$(date +%s.%N)
    if [ -n "$gnu_time" ]; then
        PAROSIM_WORK_SCALE=100000 timeout "$lift_timeout" $gnu_time -f "%M" -o "$work/rss" \
            "$parosim" "$@" >"$work/out" 2>"$work/err"
    else
        PAROSIM_WORK_SCALE=100000 timeout "$lift_timeout" "$parosim" "$@" >"$work/out" 2>"$work/err"
    fi
    rc=$?
    end=$(date +%s.%N)
    if [ $rc -ne 0 ]; then
        printf '%-58s limit lifted: exit %d (timeout %s s)\n' "  (the same)" $rc "$lift_timeout"
        return
    fi
    awk -v name="  (the same, limit lifted, 1 run)" -v s="$start" -v e="$end" \
        -v rss="$([ -n "$gnu_time" ] && cat "$work/rss" || echo 0)" \
        'BEGIN { printf "%-58s %8.3f s", name, e - s; if (rss > 0) printf "  %6.0f MB", rss / 1024; printf "\n" }'
}

echo "# issue #18 table: $runs runs each on $(nproc) cores, $(date -u +%Y-%m-%d)"
case_row "sweep 10,000 points (bench_sweep.sh)" sweep $S \
    --vary training.accumulation=1..25 --vary training.micro_batch=1..4 \
    --vary training.trainable.fraction=1,1/2,1/16,3/1000 --vary topology.nodes=2,4,8,16,32 \
    --vary parallelism.group=1,2,4,8,16 -o "$work/sweep.csv"
case_row "plan GPT-3 175B, 4,096 nodes, --lga" plan \
    scenarios/lamy-poirier-gpt3-175b_a100x8-800g.yaml --set topology.nodes=4096 --lga
case_row "run flow, 129 nodes (leaves not filled)" run $S \
    --set collectives.model=flow --set topology.nodes=129
case_row "run flow, tp8 pp8 on 131,584 GPUs" run $S --set collectives.model=flow \
    --set topology.nodes=16448 --set parallelism.tp=8 --set parallelism.pp=8 \
    --set parallelism.dp=2056 --set training.accumulation=32
case_row "run flow, algorithm tree, 131,072 GPUs" run $S \
    --set collectives.model=flow --set collectives.algorithm=tree --set topology.nodes=16384
case_row "collective --explicit ring, 16,384 GPUs" collective --topology $T --op allreduce \
    --model flow --algo ring --gpus 16384 -b 1G -e 1G --explicit
case_row "collective --explicit hierarchical, 8,192 GPUs" collective --topology $T \
    --op allreduce --model flow --algo hierarchical --gpus 8192 -b 1G -e 1G --explicit
case_row "collective --explicit ho-ring, 4,096 GPUs" collective --topology $T --op allreduce \
    --model flow --algo ho-ring --gpus 4096 -b 1G -e 1G --explicit
case_row "run flow, accumulation 1,000, 131,072 GPUs" run $S \
    --set collectives.model=flow --set topology.nodes=16384 --set training.accumulation=1000
