#!/bin/sh
# SPDX-License-Identifier: MIT
# The reproducers of issue #16 ("Hostile inputs"), each with the exit code and the message
# it must now give (TAP). Every command runs under a time and memory limit: a crash, a hang
# or an allocation beyond 2 GB fails its check. Inputs and outputs are in files.sh, the
# matrix of numeric keys in matrix.sh.
set -u
parosim=$1
root=$2
cd "$root" || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/tap.sh"
S=scenarios/llama-7b_a100x8-100g_n32.yaml
T=topologies/a100x8-100g.yaml

. "$(dirname "$0")/expect.sh"

# ---- C4, C5: collective options ----
expect "C4 --channels 2^31" 2 "'--channels' is 2,147,483,648, above the limit of 64" \
    collective --topology $T --op allreduce --channels 2147483648
expect "C4 --chunks 1e8" 2 "'--chunks' is 100,000,000, above the limit of 1,024" \
    collective --topology $T --op allreduce --algo ho-ring --chunks 100000000
expect "C4 --channels 1e6" 2 "'--channels' is 1,000,000, above the limit of 64" \
    collective --topology $T --op allreduce --channels 1000000
expect "C5 -b 0 -e 8" 2 "-b must be positive when -e is larger" \
    collective --topology $T --op allreduce -b 0 -e 8
expect "C5 -f 1.0000001" 2 "'the sizes of -b, -e and -f' is 187,149,748, above the limit of 1,000" \
    collective --topology $T --op allreduce -f 1.0000001
expect "W10 collective --gpus 0" 2 "--gpus must be at least 1" \
    collective --topology $T --op allreduce --gpus 0
expect "W10 collective --group 0" 2 "must be at least 1" \
    collective --topology $T --op allreduce --group 0
expect "W10 collective --channels 0" 2 "must be at least 1" \
    collective --topology $T --op allreduce --channels 0
expect "W10 collective --chunks 0" 2 "must be at least 1" \
    collective --topology $T --op allreduce --chunks 0
expect "W10 collective -f inf" 2 "-f must be a finite number greater than 1" \
    collective --topology $T --op allreduce -f inf
expect "W10 collective -b 1.5" 2 "bad -b/-e: whole byte counts" \
    collective --topology $T --op allreduce -b 1.5
expect "collective -e 2^61" 2 "'-e' is 2.30584e+18 B, above the limit of 1.15292e+18 B" \
    collective --topology $T --op allreduce -e 2097152T

# ---- H3, H1: collective work estimated before simulating (the link-level model; NCCL's
# model, the default, is closed form). A ring of one channel shares no link and is timed
# by its recurrence in a fraction of a second (coll/recurrence.c); by events (--events)
# the same work is refused. ----
expect "H3 --explicit --gpus 32768 --events" 1 \
    "simulating this collective would take about 17 s (32,768 GPUs simulated x 1 channel x 1,024 steps" \
    collective --topology $T --model flow --op allreduce --explicit --gpus 32768 -b 1G -e 1G --events
expect "H3 --explicit --gpus 32768, by recurrence" 0 "Avg bus bandwidth" \
    collective --topology $T --model flow --op allreduce --explicit --gpus 32768 -b 1G -e 1G
expect "H3 ho-ring --explicit --gpus 131072: its inter-node stage by recurrence" 1 \
    "99% of them by recurrence" \
    collective --topology $T --model flow --op allreduce --algo ho-ring --explicit --gpus 131072 -b 1G -e 1G
expect "H3 --explicit --gpus 131072 --events" 1 "lower --gpus (with --explicit" \
    collective --topology $T --model flow --op allreduce --explicit --gpus 131072 -b 1G -e 1G --events
expect "H3 --explicit --gpus 131072, 4 channels" 1 "lower --gpus (with --explicit" \
    collective --topology $T --model flow --op allreduce --explicit --gpus 131072 -b 1G -e 1G -c 4
sed 's/gpus: 8/gpus: 1024/' $T >"$work/t1024.yaml"
expect "H1 a node of 1,024 GPUs --events" 1 "lower the GPUs per node (node.gpus" \
    collective --topology "$work/t1024.yaml" --model flow --op allreduce --events

# ---- C1-C3, C7: counts bounded where they are written ----
expect "C1 prefetch 2^31-1" 1 "--set[1]:1:19: 'prefetch' is 2,147,483,647, above the limit of 4,096" \
    run $S --set training.prefetch=2147483647
expect "C1 prefetch 2^32" 1 "'prefetch' is 4,294,967,296, above the limit of 4,096" \
    run $S --set training.prefetch=4294967296
expect "C2 accumulation 2^31" 1 "'accumulation' is 2,147,483,648, above the limit of 1,048,576" \
    run $S --set training.accumulation=2147483648
# A step without pipeline is read off 2 + 3 + 4 micro-batches (step/extrapolate.c), so a
# long accumulation is cheap; simulated whole (--no-extrapolate) it is refused as before.
expect "C2 accumulation 1e6, extrapolated" 0 "zero-3" \
    run $S --set training.accumulation=1000000
expect "C2 accumulation 1e6" 1 \
    "a step of 32,000,000 layer-steps would need about 38.4 GB to simulate, beyond the limit of 1.07 GB for one simulation; lower training.accumulation" \
    run $S --set training.accumulation=1000000 --no-extrapolate
expect "C2 accumulation 1e5" 1 "--set[1]:1:23: a step of 3,200,000 layer-steps would need about 3.84 GB" \
    run $S --set training.accumulation=100000 --no-extrapolate
expect "C2 accumulation 1e4 (29 strategies)" 1 \
    "simulating 29 strategies would take about 19 s (a step of 320,000 layer-steps: 0.64 s each" \
    run $S --set training.accumulation=10000 --no-extrapolate
expect "C2 accumulation 1e5 in a pipeline (not extrapolated)" 1 \
    "a step of 3,200,000 layer-steps would need about" \
    run $S --set training.accumulation=100000 --set parallelism.tp=1 --set parallelism.pp=2 \
    --set parallelism.dp=16
expect "C3 layers 2^40 (run)" 1 "--set[1]:1:27: 'layers' is 1,099,511,627,776, above the limit of 4,096" \
    run $S --set model.architecture.layers=1099511627776
expect "C3 layers 2^40 (strategies)" 1 "'layers' is 1,099,511,627,776, above the limit of 4,096" \
    strategies $S --set model.architecture.layers=1099511627776
expect "C3 layers 2^40 (plan)" 1 "'layers' is 1,099,511,627,776, above the limit of 4,096" \
    plan $S --set model.architecture.layers=1099511627776
expect "C3 layers 1e5" 1 "'layers' is 100,000, above the limit of 4,096" \
    run $S --set model.architecture.layers=100000
printf '{"hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 2147483648,\n "num_attention_heads": 32, "vocab_size": 32000}\n' >"$work/hf.json"
expect "C3 HuggingFace num_hidden_layers 2^31" 1 \
    "hf.json:1:72: 'num_hidden_layers' is 2,147,483,648, above the limit of 4,096" \
    strategies $S --set "model=$work/hf.json"
# plan's estimate counts the shapes it bounds and the data-parallel configurations every
# search simulates (plan-budget.c): about 100 s here, so half the limit refuses it
if ! PAROSIM_WORK_SCALE=0.5 "$parosim" plan $S --set topology.nodes=16384 --set collectives.model=flow \
    --set collectives.algorithm=tree >/dev/null 2>"$work/err" &&
    grep -qF -- "--set[1]:1:16: planning would bound 1960 shapes and simulate at least 36 configurations of 29 strategies, about 100 s" "$work/err"; then
    ok "plan of trees on 16,384 nodes (simulated GPU by GPU), over half the limit: refused at topology.nodes"
else
    not_ok "plan of trees on 16,384 nodes was not refused: $(cat "$work/err")"
fi
expect "plan --batch-tokens 1e15" 1 "needs up to 6.1e+10 micro-steps a step, above the limit of 1,048,576" \
    plan $S --batch-tokens 1e15
expect "C7 NICs 2^31" 1 "'count' is 2,147,483,648, above the limit of 64" \
    run $S --set topology.node.nics.count=2147483648
expect "C7 NICs 16,384" 1 "'count' is 16,384, above the limit of 64" \
    run $S --set topology.node.nics.count=16384
expect "GPUs per node 2^31, at the value" 1 "--set[1]:1:20: 'gpus' is 2,147,483,648, above the limit of 4,096" \
    strategies $S --set topology.node.gpus=2147483648
expect "tp 7 at tp" 1 "--set[1]:1:16: tp 7 x pp 1 does not divide the 32 GPUs" \
    strategies $S --set parallelism.tp=7

# ---- C6, C8, W6: sweeps ----
expect "C6 1e8 points" 1 "--vary[2]:1:1: the sweep has 100,000,000 points (10,000 x 10,000), above the limit of 100,000" \
    sweep $S --vary training.accumulation=1..10000 --vary training.micro_batch=1..10000
expect "C8 --jobs 100000" 2 "'--jobs' is 100,000, above the limit of 256" \
    sweep $S --vary topology.nodes=2,4 --jobs 100000
expect "W6 an axis varied twice" 1 "--vary[2]:1:1: 'training.accumulation' is varied twice (also by --vary[1])" \
    sweep $S --vary training.accumulation=1,2 --vary training.accumulation=3,4
expect "a sweep point beyond the work limit names its values" 1 \
    "--vary[1]:1:18: at topology.nodes=16384: simulating 29 strategies would take about 22 s" \
    sweep $S --set collectives.model=flow --set collectives.algorithm=tree \
    --set collectives.chunks=64 --vary topology.nodes=2,16384

# ---- H1, H2, C9: the step's work estimated before simulating ----
expect "H1 a node of 4,096 GPUs (run), 2 channels" 1 \
    "simulating 29 strategies would take about 35 s (a step of 288 layer-steps: 0.00058 s each; about 24 collectives of up to 4,096 GPUs" \
    run $S --set topology.node.gpus=4096 --set parallelism.group=4096 --set collectives.model=flow \
    --set topology.nccl.channels=2
expect "H1 a node of 4,096 GPUs (run), one channel: rings by recurrence" 0 "# best:" \
    run $S --set topology.node.gpus=4096 --set parallelism.group=4096 --set collectives.model=flow
expect "H2 257 nodes (the last leaf part full: folded) run" 0 "# best:" \
    run $S --set topology.nodes=257 --set collectives.model=flow
# the work limits scale with PAROSIM_WORK_SCALE: a refused case runs, a bad value is named
if ! PAROSIM_WORK_SCALE=0.01 "$parosim" collective --topology $T --model flow --op allreduce \
    --explicit --gpus 2048 -b 1M -e 1M --events >/dev/null 2>"$work/err" &&
    grep -qF "beyond the limit of 0.1 s" "$work/err"; then
    ok "PAROSIM_WORK_SCALE=0.01 refuses a 2,048-GPU explicit ring by events (about 1 s)"
else
    not_ok "PAROSIM_WORK_SCALE=0.01 did not scale the limit: $(cat "$work/err")"
fi
if PAROSIM_WORK_SCALE=abc "$parosim" --version 2>"$work/err" >/dev/null; [ $? = 2 ] &&
    grep -qF "PAROSIM_WORK_SCALE='abc' is not a number in (0, 1e6]" "$work/err"; then
    ok "PAROSIM_WORK_SCALE=abc: exit 2, named"
else
    not_ok "PAROSIM_WORK_SCALE=abc: $(cat "$work/err")"
fi
expect "C9 a trace of 300 micro-steps and 29 strategies" 1 \
    "the trace of 29 strategies would be about 919 MB (9,600 layer-steps each), beyond the limit of 268 MB" \
    run $S --set training.accumulation=300 --trace "$work/t.json"
expect "H2 33 nodes (simulated GPU by GPU) still run" 0 "# parosim" run $S --set topology.nodes=33 --strategies zero-3

# ---- W4, W10: calibration fits and logs ----
C=tests/data/calib
expect "W4 a log of two sizes is not fitted" 0 \
    'reason: "2 distinct sizes: at least 3 are needed to tell the latency from the bandwidth' \
    calibrate $C/w4-two-sizes.txt
expect "W4 a log of one size is not split into latency and bandwidth" 0 \
    'reason: "1 distinct size: at least 3 are needed' calibrate $C/w4-one-size.txt
expect "W4 times that do not grow with the size" 0 \
    'reason: "the data do not determine the bandwidth: 58.4 GB/s with a standard error of 76% (r2 0.22)"' \
    calibrate $C/w4-flat.txt
expect "W4 tiny GEMM times" 1 \
    "w4-tiny-gemm.txt:16:24: 'time' is 1e-300 us (1e-306 s), below the limit of 1e-09 s" \
    calibrate $C/w4-tiny-gemm.txt
expect "W4 a GEMM rate no GPU has" 1 \
    "the bf16 GEMM rows give 5.63e+21 FLOP/s (5.63e+14 FLOP in 0.1 us), outside 1e+06 to 1e+21 FLOP/s: not a measurement" \
    calibrate $C/w4-fast-gemm.txt
expect "W10 non-ASCII digits" 1 "22:6: a data row whose first field '١٠٢٤' is not a number (ASCII digits only)" \
    calibrate $C/bad-log-non-ascii-digits.txt
expect "W10 a number of 1,000 digits" 1 "is not a number (too long to be a measurement)" \
    calibrate $C/bad-log-long-number.txt
expect "W10 an unknown GEMM dtype" 1 "17:31: unknown GEMM dtype 'bf17' (known: bf16, fp16, tf32, fp32, fp8, fp8fast)" \
    calibrate $C/bad-log-gemm-dtype.txt
expect "W10 an unknown memory op" 1 "18:18: unknown memory op 'memcopy'" calibrate $C/bad-log-mem-op.txt
expect "W10 calibrate --dtype banana" 2 "unknown --dtype 'banana' (known: bf16, fp16, tf32)" \
    calibrate $C/nccl-tests-a100-8-allreduce.txt --dtype banana
expect "a truncated nccl-tests row" 1 \
    "19:35: time must be positive, got -1; is the row cut short? (read as size count type [redop] [root] time algbw busbw #wrong)" \
    calibrate $C/bad-log-truncated-row.txt

# ---- W10: accepted silently before ----
expect "W10 parameters 1e-300" 1 "--set[1]:1:18: 'parameters' is 1e-300, below the limit of 1" \
    strategies $S --set model.parameters=1e-300
expect "W10 --set schema=2" 1 "--set[1]:1:8: unsupported schema 2" strategies $S --set schema=2
expect "W10 --set kind=banana" 1 "--set[1]:1:6: expected 'kind: scenario', got 'banana'" \
    strategies $S --set kind=banana
{ cat $S; printf -- '---\nfoo: [\n'; } >"$work/two.yaml"
sed -i 's|\.\./|'"$root"'/|' "$work/two.yaml"
expect "W10 a second, malformed YAML document" 1 "(in a second document: parosim reads one a file)" \
    strategies "$work/two.yaml"
printf '{"model_type": "mamba", "hidden_size": 4096, "intermediate_size": 11008,\n "num_hidden_layers": 32, "num_attention_heads": 32, "vocab_size": 32000}\n' >"$work/mamba.json"
expect "W10 HuggingFace model_type mamba" 1 "model_type 'mamba' is not a transformer parosim can model" \
    strategies $S --set "model=$work/mamba.json"
expect "W10 --p2p-bandwidth 0" 2 "'--p2p-bandwidth' is 0 B/s, below the limit of 1 B/s" \
    pipeline --stages 4 --micro 8 --p2p-bytes 1GiB --p2p-bandwidth '0 Gb/s'
expect "W10 --strategies ''" 2 "--strategies names no strategy" run $S --strategies ''
expect "W10 --lga --dp-only" 2 "--lga (modular pipelines) and --dp-only (tp = pp = 1) exclude each other" \
    plan $S --lga --dp-only
"$parosim" run $S --strategies zero-3 --trace "$work/t.tsv" >/dev/null
expect "W10 plot --capacity '-1 GiB'" 2 "--capacity must be a positive size" \
    plot memory-timeline "$work/t.tsv" -o "$work/x.png" --capacity '-1 GiB'
expect "W10b plot --reserved on a gantt" 2 "--reserved applies to memory-timeline only" \
    plot gantt "$work/t.tsv" -o "$work/x.png" --reserved '70 GiB'
expect "W10 plot --metric banana" 2 "--metric must be busbw or time" \
    plot collective-scaling "$work/t.tsv" -o "$work/x.png" --metric banana
expect "W10 pipeline --trace x.json" 2 "--trace writes TSV (one line a task); name it .tsv" \
    pipeline --stages 4 --micro 8 --trace "$work/x.json"
expect "pipeline of 819 million tasks" 1 "819,200,000 tasks (2 x stages x modules a stage x micro-batches, each schedule) would take about 205 s" \
    pipeline --stages 4096 --micro 100000

# ---- W7: large numbers ----
expect "W7 memory_overhead 1e300 B" 1 "'memory_overhead' is 1e300 B (1e+300 B), above the limit of 1.15292e+18 B" \
    strategies $S --set 'training.memory_overhead=1e300 B'
expect "W7 plan --tokens 1e300" 2 "'--tokens' is 1e+300, above the limit of 1e+18" plan $S --tokens 1e300
expect "W7 sizes beyond 15 digits in scientific notation" 0 \
    " 1.12590e+15  281474976710656     float     sum      -1  174514485569.61    6.45   12.50    N/A   1.2216e+17   1.7451e+16" \
    collective --topology $T --model flow --op allreduce -b 1T -e 1024T -f 1024  # widest columns
if [ "$(awk '!/^#/ { if (length($0) > m) m = length($0) } END { print m }' "$work/out")" -le 160 ]; then
    ok "W7 no row of the collective table is longer than 160 characters"
else
    not_ok "W7 a row of the collective table is longer than 160 characters"
fi

# ---- W8: a plan whose fixed budget stops short of the scaling law's loss says so ----
TINY=tests/data/good/scenario-tiny.yaml
expect "W8 a budget of 1e9 tokens on 1,024 nodes" 0 \
    "warning: 3 of the 3 configurations printed stop short of the scaling law's loss: the budget of 1e+09 tokens gives as few as 0.18 of the steps S_min (1 + B_crit / B) the law needs at their batch" \
    plan $TINY --set topology.nodes=1024 --dp-only --top 3 --tokens 1e9
grep -q "^# warning: 3 of the 3 configurations" "$work/out" && ok "W8 the warning is in the table too" ||
    not_ok "W8 no warning line in the table"
expect "W8 the tiny plan in the law's mode has no warning" 0 "# parosim" plan $TINY --dp-only --top 3
grep -q "warning" "$work/err" && not_ok "W8 the law's plan warns" || ok "W8 no warning with the law's steps"

# ---- messages that misled ----
expect "a range to 1e300 stops at the first point beyond the limits" 1 \
    "--vary[1]:1:23: 'accumulation' is 2,097,152, above the limit of 1,048,576" \
    sweep $S --vary 'training.accumulation=1..1e300*2' --strategies zero-3
expect "a range to 1e300 stops at the first point beyond the work limit (--no-extrapolate)" 1 \
    "--vary[1]:1:23: at training.accumulation=32768: a step of 1,048,576 layer-steps" \
    sweep $S --vary 'training.accumulation=1..1e300*2' --strategies zero-3 --no-extrapolate
expect "a count beyond 2^53" 1 "'accumulation' is 1e+17, beyond the counts parosim takes" \
    strategies $S --set training.accumulation=1e17
"$parosim" sweep $TINY --vary topology.nodes=1,2 --vary training.micro_batch=1,2 --strategies zero-3 \
    -o "$work/map.csv"
expect "best-map --x P --y P" 1 "--x and --y name the same axis 'topology.nodes': a map needs two" \
    plot best-map "$work/map.csv" --x topology.nodes --y topology.nodes -o "$work/map.png"
expect "a scenario name with a newline and an ESC, escaped in the header" 0 \
    '# scenario: a\n\x1bb (' strategies $S --set "name=$(printf 'a\n\033b')"
if ! grep -q "$(printf '\033')" "$work/out"; then ok "no raw ESC in the output"; else not_ok "a raw ESC"; fi

# ---- W5: RFC 4180 quoting of sweep values ----
cp models/llama-7b.yaml "$work/q\"m.yaml"
cp models/llama-7b.yaml "$work/n
l.yaml"
"$parosim" sweep $S --vary "model=$work/q\"m.yaml,$work/n
l.yaml" --vary training.micro_batch=1,2 --strategies zero-3 -o "$work/q.csv" 2>"$work/err"
if python3 -c '
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
assert len(rows) == 5 and all(len(r) == len(rows[0]) for r in rows), rows
assert rows[1][1].endswith("q\"m.yaml") and rows[3][1].endswith("n\nl.yaml"), rows
' "$work/q.csv"; then
    ok "W5 values with a quote and a line break read back as one field each"
else
    not_ok "W5 sweep CSV: $(head -3 "$work/q.csv" | cut -c1-120)"
fi
if command -v gnuplot >/dev/null 2>&1; then
    "$parosim" plot best-map "$work/q.csv" -o "$work/q.png" 2>"$work/err" && [ -s "$work/q.png" ] &&
        ok "W5 such a sweep plots (quoted line breaks read back)" ||
        not_ok "W5 plot of the quoted sweep: $(head -c 300 "$work/err" | tr '\n' ' ')"
else
    ok "# SKIP gnuplot is missing"
fi

echo "1..$n"
exit $fail
