#!/bin/sh
# SPDX-License-Identifier: MIT
# Golden CLI tests (TAP): runs parosim on the default scenario in each format and diffs
# with tests/golden/; also checks exit codes for usage and input errors. With --update,
# rewrites the golden files instead (review the diff before committing).
set -u
parosim=$1
root=$2
update=${3:-}
cd "$root" || exit 1
scenario=scenarios/llama-7b_a100x8-100g_n32.yaml
. "$(dirname "$0")/tap.sh"

golden() { # name, then the parosim arguments
    name=$1
    shift
    out=$(mktemp)
    "$parosim" "$@" >"$out" 2>&1
    if [ "$update" = "--update" ]; then
        cp "$out" "tests/golden/$name"
        ok "$name updated"
    elif diff -u "tests/golden/$name" "$out" >&2; then
        ok "$name"
    else
        not_ok "$name differs from tests/golden/$name"
    fi
    rm -f "$out"
}

exit_code() { # description, expected code, then the parosim arguments
    what=$1
    want=$2
    shift 2
    "$parosim" "$@" >/dev/null 2>&1
    got=$?
    if [ "$got" = "$want" ]; then ok "$what exits $want"; else not_ok "$what exits $got, want $want"; fi
}

golden run-default.txt run "$scenario"
golden run-default.json run "$scenario" --format json --strategies zero-2,zero-3,NIG,IIG
golden run-ho-ring.csv run "$scenario" --format csv --set collectives.algorithm=ho-ring
# fp8 linears and cuDNN attention under Megatron's 3D layout (decisions 33, 34)
golden run-llama3-70b-fp8.txt run scenarios/llama3-70b_dgx-h100x8_n64-fp8.yaml \
    --strategies zero-1,ddp,zero-3
# LoRA adapters' kernels and memory, fp8 attention, the H200 (decisions 52-54)
golden run-llama2-70b-lora.txt run scenarios/llama2-70b-lora_hgx-h200x8-mlperf.yaml \
    --strategies ddp,zero-1,zero-3
golden run-calibrated.txt run scenarios/llama-7b_dgx-h100x8_n32-calibrated.yaml \
    --strategies zero-1,zero-2,zero-3,NIG,IIG,mics
golden strategies-default.txt strategies "$scenario"
# context parallelism (Llama-3-70B at 128K tokens, tp 8 x cp 16 on 16 nodes) and expert
# parallelism (the shipped Mixtral scenario with ep 8): issue #43's checks, as printed
golden run-long-context-cp16.txt run scenarios/llama3-70b-128k_dgx-h100x8_n16-cp16.yaml \
    --strategies zero-3
golden run-mixtral-ep8.json run scenarios/mixtral-8x7b_dgx-h100x8_n32-fsdp.yaml \
    --format json --strategies zero-3,zero-2 --set parallelism.ep=8
golden strategies-mixtral-ep8.txt strategies scenarios/mixtral-8x7b_dgx-h100x8_n32-fsdp.yaml \
    --set parallelism.ep=8
# the framework line names a dated profile and the kernels it runs for LLaMA (decision 61)
golden run-deepspeed-dated.json run "$scenario" --format json --strategies zero-2 \
    --set framework=deepspeed --set framework.version=0.10.0
# FSDP2 copies each gather out and builds its reduce-scatter input in one cast (decision 62)
golden run-fsdp2.txt run "$scenario" --strategies zero-3,zero-2 --set framework=fsdp \
    --set framework.fsdp2=true --set framework.reduce_precision=fp32
golden run-zeropp.txt run scenarios/paro-llama-7b-zeropp_n32.yaml \
    --strategies zero-1,zero-2,zero-3,zero++,NII,NGI
golden run-naive.json run "$scenario" --set compression.preset=naive --strategies zero-3,NII \
    --format json
golden run-neox-3d-hybrid.txt run scenarios/neox-20b_lassen-v100x4_3d.yaml \
    --strategies zero-1,zero-2,zero-3 --set compression.preset=hybrid
golden strategies-default.json strategies "$scenario" --format json
# DeepSeek-V3's config.json (decision 77): its params line holds the main model and the MTP
# module's own weights, 682.6B, between the card's 671B and HF's 685B
golden run-deepseek-v3.txt run scenarios/mixtral-8x7b_dgx-h100x8_n32-fsdp.yaml \
    --set model=models/hf/deepseek-v3-config.json --strategies zero-3,zero-2
golden strategies-default.csv strategies "$scenario" --format csv
# offloading (decisions 80-82): issue #43's Llama-2-70B ZeRO-3 on one DGX A100 of 80 GB GPUs,
# the host figures' datasheet default named in the header, and the host overflowing in JSON
offload70=scenarios/llama2-70b_dgx-a100x8-80g-offload.yaml
golden run-llama2-70b-offload.txt run "$offload70" --strategies zero-3,zero-2 \
    --set training.offload.optimizer=cpu --set training.offload.parameters=cpu
golden run-offload-host-default.txt run "$scenario" --strategies zero-3,zero-1 \
    --set training.offload.optimizer=cpu
golden run-offload-host-overflow.json run "$offload70" --format json --strategies zero-3 \
    --set training.offload.optimizer=cpu --set training.offload.parameters=cpu \
    --set training.offload.activations=cpu --set 'topology.node.host.memory=1 TB'
golden strategies-offload.txt strategies "$offload70" --set training.offload.optimizer=cpu \
    --set training.offload.parameters=cpu
golden strategies-offload-overflow.json strategies "$offload70" --format json \
    --set training.offload.optimizer=cpu --set training.offload.parameters=cpu \
    --set 'topology.node.host.memory=1 TB'
golden strategies-65b-partial.txt strategies "$scenario" --set model=models/llama-65b.yaml \
    --set training.trainable.fraction=1/16 --set training.recompute=full \
    --set collectives.algorithm=ho-ring
golden collective-allreduce-ring.txt collective --topology topologies/a100x8-200g.yaml --model flow \
    --op allreduce --algo ring -b 1K -e 1G -f 32
golden collective-allgather-ho-ring.csv collective --topology topologies/dgx-h100x8.yaml --model flow \
    --op allgather --algo ho-ring -b 1M -e 1G -f 8 --format csv
golden collective-reducescatter-explicit.json collective --topology topologies/lassen-v100x4.yaml \
    --model flow --op reducescatter --algo hierarchical --gpus 32 -b 64M -e 64M --explicit --format json
golden collective-gpus-list.csv collective --topology topologies/a100x8-100g.yaml --op allgather \
    --algo ho-ring --gpus 16..128*2 -b 1G -e 1G --format csv
golden collective-set.csv collective --topology topologies/a100x8-100g.yaml --op allgather \
    --gpus 32 -b 1G -e 1G --set 'node.nics.bandwidth=400 Gb/s' --format csv
golden collective-allreduce-tree.txt collective --topology topologies/a100x8-100g.yaml \
    --model flow --op allreduce --algo tree -b 8 -e 64M -f 64
# NCCL's model (the default): its choice of algorithm and protocol by size, on one H100 node
# (NVLS) and on 16 (rings and trees over 8 rails), and PaRO's ho-ring composed of its phases
golden collective-nccl-h100-1node.txt collective --topology topologies/dgx-h100x8.yaml \
    --op allreduce --gpus 8 -b 8 -e 8G -f 16
golden collective-nccl-h100-16nodes.csv collective --topology topologies/dgx-h100x8.yaml \
    --op allreduce --gpus 128 -b 1K -e 4G -f 8 --format csv
golden collective-nccl-ho-ring.json collective --topology topologies/a100x8-100g.yaml \
    --op allgather --algo ho-ring -b 1M -e 256M -f 16 --format json
golden collective-nccl-ring-simple.txt collective --topology topologies/a100x8-200g.yaml \
    --op reducescatter --algo ring --proto simple -b 1K -e 1G -f 32
# All-to-all (issue #43): NCCL's grouped send/receive on 8 DGX H100 nodes (the issue's
# command), the flow model's flows on 2, 8 and 32 nodes, and a real alltoall_perf log predicted
golden collective-alltoall.txt collective --topology topologies/dgx-h100x8.yaml --op alltoall \
    --gpus 64 -b 1M -e 1G
golden collective-alltoall-flow.csv collective --topology topologies/dgx-h100x8.yaml --op alltoall \
    --model flow --gpus 16,64,256 -b 1M -e 1G -f 32 --format csv
golden validate-alltoall.txt validate --predict topologies/dgx-h100x8.yaml \
    tests/data/calib/nccl-tests-h100-8-alltoall.txt
golden pipeline-compare-bv6.txt pipeline --stages 8 --micro 8 --virtual 8 --forward 8ms --compare
golden pipeline-1f1b-p2p.txt pipeline --stages 4 --micro 8 --schedule 1f1b --forward '10 ms' \
    --p2p '20 us' --p2p-bytes 32MiB --p2p-bandwidth '50 GB/s'
golden pipeline-interleaved.json pipeline --stages 4 --micro 8 --schedule interleaved --virtual 2 \
    --forward '10 ms' --backward '25 ms' --p2p '5 us' --format json
golden pipeline-compare.csv pipeline --stages 4 --micro 8 --virtual 3 --p2p '5 us' --compare \
    --format csv
golden pipeline-compare-skip.txt pipeline --stages 4 --micro 6 --compare
golden sweep-nodes-share.csv sweep "$scenario" --vary topology.nodes=2..8*2 \
    --vary training.trainable.fraction=1,1/16 --strategies zero-2,zero-3,NII,IIG --jobs 2
golden sweep-bandwidth.json sweep "$scenario" --vary 'topology.node.nics.bandwidth=100 Gb/s,400 Gb/s' \
    --strategies NII,zero-3 --format json
# a fixed global batch: nodes and accumulation varied together (--zip), not crossed
golden sweep-zip.csv sweep "$scenario" --vary topology.nodes=2,4,8 --zip training.accumulation=40,20,10 \
    --strategies NII,zero-3
golden error-zip-count.txt sweep "$scenario" --vary topology.nodes=2,4,8 --zip training.accumulation=40,20
golden error-vary.txt sweep "$scenario" --vary topology.nodes=2,4,-1
golden error-vary-range.txt sweep "$scenario" --vary topology.nodes=8..2*2
golden calibrate-nccl-tests.yaml calibrate tests/data/calib/nccl-tests-a100-8-allreduce.txt \
    tests/data/calib/nccl-tests-h100-2x8-allreduce.txt
golden validate-h100-llama13b.txt validate validation/fits/h100-2026-11-23.yaml \
    validation/data/h100/2026-11-23_gemm-llama13b.txt validation/data/h100/2026-11-23_hbm.txt
golden validate-nccl-tests.txt validate tests/golden/calibrate-nccl-tests.yaml \
    tests/data/calib/nccl-tests-a100-8-allreduce.txt tests/data/calib/nccl-tests-h100-2x8-allreduce.txt
golden error-bad-log.txt calibrate tests/data/calib/bad-log-time-not-number.txt
# The NCCL corpus: every log predicted from its datasheet topology (validation/README.md);
# its check (the meson test nccl-corpus) fails against a tighter record.
golden validate-corpus.txt validate --corpus validation/nccl-corpus --transfer
# NCCL's model calibrated on H100 AllReduce logs (one node, two nodes), then an AllGather log
# of the same machine predicted with it
golden calibrate-nccl-h100.yaml calibrate --topology topologies/dgx-h100x8.yaml \
    validation/nccl-corpus/hgx-h100/h100-1n8-allreduce-nccl2.29.2.txt \
    validation/nccl-corpus/nebius-h100-ib/nebius-2n16-allreduce.txt
golden validate-calibrated-allgather.txt validate --predict topologies/dgx-h100x8.yaml \
    validation/nccl-corpus/hgx-h100/h100-1n8-allgather-nccl2.29.2.txt \
    --calibration tests/golden/calibrate-nccl-h100.yaml
exit_code "validate --corpus --check a tighter record" 1 validate --corpus validation/nccl-corpus \
    --check tests/data/calib/corpus-tighter.tsv
golden error-gemm-dimension.txt calibrate tests/data/calib/bad-log-gemm-dimension.txt
# Whole layers timed on an H100 (validation/harness/layer.py) against the compute model
golden validate-layers-h100.txt validate --layers topologies/dgx-h100x8.yaml \
    validation/data/h100/2026-11-25_layer.txt
# ... and on the held-out layers (shapes the compute model's constants were not fitted on)
golden validate-layers-h100-heldout.txt validate --layers topologies/dgx-h100x8.yaml \
    validation/data/h100/2026-11-25_layer-heldout.txt
# ... and on an H200 (same SMs and clocks, 1.43x the HBM bandwidth: its elementwise share)
golden validate-layers-h200.txt validate --layers topologies/hgx-h200x8.yaml \
    validation/data/h200/2026-11-26_layer.txt
golden validate-layers-h200-heldout.txt validate --layers topologies/hgx-h200x8.yaml \
    validation/data/h200/2026-11-26_layer-heldout.txt
# ... and cuDNN's fused attention in the same H100 layers (the set and the held-out set)
golden validate-layers-h100-cudnn.txt validate --layers topologies/dgx-h100x8.yaml \
    validation/data/h100/2026-11-26_layer-cudnn.txt
golden validate-layers-h100-cudnn-heldout.txt validate --layers topologies/dgx-h100x8.yaml \
    validation/data/h100/2026-11-26_layer-cudnn-heldout.txt
golden validate-layers-h200-cudnn.txt validate --layers topologies/hgx-h200x8.yaml \
    validation/data/h200/2026-11-26_layer-cudnn.txt
golden error-bad-layer-log.txt validate --layers topologies/dgx-h100x8.yaml \
    tests/data/calib/bad-layer-short-row.txt
# plan searches the whole space: on the 8-GPU cluster of its oracle test (test_plan_space.c),
# where memory decides, in the law's mode with --explain, with a fixed batch, and with --lga
oracle=tests/data/good/scenario-plan-oracle.yaml
golden plan-oracle-explain.txt plan $oracle --top 4 --explain
golden plan-oracle-all.txt plan $oracle --batch-tokens 32768 --top 8 --all
golden plan-oracle-budget.csv plan $oracle --tokens 1e9 --top 5 --format csv --dp-only
golden plan-oracle-lga.txt plan $oracle --lga --top 12
# the plan-scaling plot's table (--data) of the oracle's plans on 1, 2 and 4 nodes, as
# tests/data/plot/plan-oracle.csv keeps them (for n in 1 2 4; do parosim plan $oracle
# --set topology.nodes=$n --format csv; done): needs gnuplot, since the table is kept only
# when the plot renders
if command -v gnuplot >/dev/null 2>&1; then
    png=$(mktemp -d)
    golden plot-plan-scaling.tsv plot plan-scaling tests/data/plot/plan-oracle.csv \
        -o "$png/plan.png" --data /dev/stdout
    rm -rf "$png"
else
    ok "plot-plan-scaling.tsv # SKIP gnuplot is not installed"
fi
golden error-unknown-key.txt strategies tests/data/bad/scenario-unknown-key.yaml
golden error-set.txt strategies "$scenario" --set training.accumulaton=8
# a parallel sweep prints the same bytes as a serial one
serial=$(mktemp)
parallel=$(mktemp)
"$parosim" sweep "$scenario" --vary training.accumulation=1..6 --vary parallelism.group=2,4,8 \
    --jobs 1 -o "$serial"
"$parosim" sweep "$scenario" --vary training.accumulation=1..6 --vary parallelism.group=2,4,8 \
    --jobs 4 -o "$parallel"
if [ -s "$serial" ] && cmp -s "$serial" "$parallel"; then
    ok "sweep --jobs 4 gives the bytes of --jobs 1"
else
    not_ok "sweep --jobs 4 differs from --jobs 1"
fi
rm -f "$serial" "$parallel"
exit_code "sweep without --vary" 2 sweep "$scenario"
exit_code "sweep unknown path" 1 sweep "$scenario" --vary training.accumulaton=1,2
# Points that fail while others run: the collective cache must not keep anything of a
# failed point's scenario (once a heap-use-after-free under ASan, issue #13).
for jobs in 1 2; do
    exit_code "sweep with failing points, --jobs $jobs" 1 sweep "$scenario" \
        --vary training.efficiency=1e-15,0.5 --vary training.trainable.fraction=1,1/16 --jobs $jobs
done
exit_code "plan bad tokens" 2 plan "$scenario" --tokens -5
exit_code "help" 0 --help
exit_code "run help" 0 run --help
exit_code "run unknown strategy" 2 run "$scenario" --strategies zero-4
exit_code "collective help" 0 collective --help
exit_code "collective without --op" 2 collective --topology topologies/a100x8-100g.yaml
exit_code "collective bad size" 2 collective --topology topologies/a100x8-100g.yaml --op allreduce -b 1X
exit_code "collective infeasible group" 1 collective --topology topologies/a100x8-100g.yaml \
    --op allgather --algo hierarchical --group 3 --gpus 24
exit_code "collective alltoall with an algorithm" 2 collective \
    --topology topologies/dgx-h100x8.yaml --op alltoall --algo ring
exit_code "collective alltoall with a protocol" 2 collective \
    --topology topologies/dgx-h100x8.yaml --op alltoall --proto LL
exit_code "collective alltoall explicit beyond the work limit" 1 collective \
    --topology topologies/dgx-h100x8.yaml --op alltoall --model flow --explicit --gpus 4096
exit_code "pipeline help" 0 pipeline --help
exit_code "pipeline without --micro" 2 pipeline --stages 4
exit_code "pipeline time without unit" 2 pipeline --stages 4 --micro 8 --forward 5
exit_code "pipeline 1f1b with --virtual" 2 pipeline --stages 4 --micro 8 --virtual 2
exit_code "pipeline interleaved M not a multiple of P" 1 pipeline --stages 4 --micro 6 \
    --schedule interleaved
exit_code "pipeline 1f1b layered" 1 pipeline --stages 4 --micro 8 --accumulation layered
exit_code "calibrate without logs" 2 calibrate
exit_code "validate help" 0 validate --help
exit_code "calibrate bad log" 1 calibrate tests/data/calib/bad-log-short-row.txt
exit_code "no command" 2
exit_code "unknown command" 2 frobnicate
exit_code "unknown option" 2 strategies --frob "$scenario"
exit_code "bad format" 2 strategies "$scenario" --format xml
exit_code "missing file" 1 strategies no-such-file.yaml
exit_code "bad input" 1 strategies tests/data/bad/scenario-nan-efficiency.yaml
# No partial output on error: stdout stays empty.
if [ -z "$("$parosim" strategies tests/data/bad/scenario-bad-unit.yaml 2>/dev/null)" ]; then
    ok "nothing on stdout on error"
else
    not_ok "stdout written on error"
fi
# The trace: TSV with a header, Chrome JSON that parses.
trace=$(mktemp -d)
if "$parosim" run "$scenario" --strategies IIG --trace "$trace/t.tsv" >/dev/null &&
    grep -q "^task	IIG	compute	forward	0	0	" "$trace/t.tsv" &&
    grep -q "^memory	IIG	" "$trace/t.tsv"; then
    ok "trace TSV"
else
    not_ok "trace TSV"
fi
if "$parosim" run "$scenario" --strategies IIG,zero-3 --trace "$trace/t.json" >/dev/null &&
    python3 - "$trace/t.json" <<'EOF'
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
assert len(events) > 1000
# numeric pid and tid (Perfetto's direct path), each named by a metadata event first
names = {}
for e in events:
    assert isinstance(e["pid"], int) and isinstance(e.get("tid", 0), int), e
    if e["name"] == "process_name":
        names[e["pid"]] = e["args"]["name"]
    elif e["name"] == "thread_name":
        names[(e["pid"], e["tid"])] = e["args"]["name"]
    elif e["ph"] == "X":
        assert e["pid"] in names and (e["pid"], e["tid"]) in names, e
assert sorted(v for k, v in names.items() if isinstance(k, int)) == ["GGG", "IIG"], names
EOF
then
    ok "trace Chrome JSON"
else
    not_ok "trace Chrome JSON"
fi
rm -rf "$trace"
# The pipeline trace: a header and one line per task (2 S M = 2 x 8 x 8 for interleaved v = 2).
trace=$(mktemp -d)
if "$parosim" pipeline --stages 4 --micro 8 --schedule interleaved --trace "$trace/p.tsv" \
    >/dev/null && [ "$(grep -c '^interleaved	' "$trace/p.tsv")" = 128 ] &&
    grep -q "^interleaved	0	0	0	forward	0	0.0005$" "$trace/p.tsv"; then
    ok "pipeline trace TSV"
else
    not_ok "pipeline trace TSV"
fi
rm -rf "$trace"
# Determinism: two runs, identical bytes.
a=$("$parosim" strategies "$scenario" --format json)
b=$("$parosim" strategies "$scenario" --format json)
if [ "$a" = "$b" ]; then ok "deterministic"; else not_ok "two runs differ"; fi
echo "1..$n"
exit $fail
