#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Renders the standard plots into a folder (default gallery/): the README's gallery.
# Each plot is made by parosim commands anyone can rerun; the data files stay beside
# the images. Usage: scripts/gallery.sh [PAROSIM] [FOLDER]
set -euo pipefail
cd "$(dirname "$0")/.."
parosim=${1:-build/src/parosim}
out=${2:-gallery}
mkdir -p "$out"
default=scenarios/llama-7b_a100x8-100g_n32.yaml
step() { echo "gallery: $1" >&2; }

step "strategy bars: LLaMA-7B and LLaMA-65B on 32 A100 (the paper's Figure 3 form)"
"$parosim" run "$default" --format csv >"$out/run-7b.csv"
"$parosim" plot strategies "$out/run-7b.csv" -o "$out/strategies-7b.png" \
    --title 'LLaMA-7B, full training, 32 A100-80GB (4 nodes, 100 Gb/s each)'
"$parosim" run scenarios/paro-llama-65b-full_n32.yaml --format csv >"$out/run-65b.csv"
"$parosim" plot strategies "$out/run-65b.csv" -o "$out/strategies-65b.png" \
    --title 'LLaMA-65B, full training with checkpointing, 32 A100-80GB'

step "best-strategy map: model size x nodes"
"$parosim" sweep "$default" --set training.recompute=full \
    --vary model=models/llama-7b.yaml,models/llama-13b.yaml,models/gpt-neox-20b.yaml,models/llama-65b.yaml \
    --vary topology.nodes=2..32*2 -o "$out/sweep-model-nodes.csv"
"$parosim" plot best-map "$out/sweep-model-nodes.csv" -o "$out/best-map-model-nodes.png" \
    --data "$out/best-map-model-nodes.tsv" \
    --title 'Fastest strategy that fits (margin over the runner-up), 8 A100 per node, 100 Gb/s'

step "best-strategy map: inter-node bandwidth x trainable share"
"$parosim" sweep "$default" \
    --vary 'topology.node.nics.bandwidth=25 Gb/s,100 Gb/s,200 Gb/s,400 Gb/s,800 Gb/s' \
    --vary training.trainable.fraction=1,1/4,1/16,1/64,3/1000 -o "$out/sweep-bandwidth-share.csv"
"$parosim" plot best-map "$out/sweep-bandwidth-share.csv" -o "$out/best-map-bandwidth-share.png" \
    --data "$out/best-map-bandwidth-share.tsv" \
    --title 'LLaMA-7B on 32 A100: fastest strategy by NIC bandwidth and trainable share'

step "collective scaling: 1 GiB AllGather, ring vs hierarchical vs ho-ring (Figure 4 form)"
coll=$out/collective-allgather.csv
# one CSV a algorithm over the GPU counts (--gpus takes a range), an algorithm column added
for algo in ring hierarchical ho-ring; do
    "$parosim" collective --topology topologies/a100x8-100g.yaml --op allgather \
        --algo "$algo" --gpus 16..128*2 -b 1G -e 1G --format csv |
        awk -v a="$algo" 'NR == 1 { if (first) print "algorithm," $0; next } { print a "," $0 }' \
            first=$([ "$algo" = ring ] && echo 1 || echo 0)
done >"$coll"
"$parosim" plot collective-scaling "$coll" -o "$out/collective-scaling.png" \
    --title '1 GiB AllGather on A100 nodes (8 GPUs, 100 Gb/s each)'

step "throughput scaling: LLaMA-7B, 16 to 128 GPUs (Figure 5 form)"
"$parosim" sweep "$default" --vary topology.nodes=2..16*2 \
    --strategies zero-2,zero-3,NIG,IGG,IIG,NII,mics,fsdp-hsz,zero++ -o "$out/sweep-scaling.csv"
"$parosim" plot throughput-scaling "$out/sweep-scaling.csv" -o "$out/throughput-scaling.png" \
    --strategies zero-2,zero-3,NIG,IGG,IIG,NII,mics,fsdp-hsz,zero++ \
    --title 'LLaMA-7B, full training: throughput vs GPUs'

step "plan scaling: each strategy's best plan for the planner's oracle on 4 to 16 GPUs"
# the oracle's small model on small GPUs (tests/data/good/scenario-plan-oracle.yaml): memory
# decides the layout, and its plans take a second or two
for nodes in 1 2 4; do
    "$parosim" plan tests/data/good/scenario-plan-oracle.yaml --set topology.nodes="$nodes" \
        --top 0 --format csv
done >"$out/plans-oracle.csv"
"$parosim" plot plan-scaling "$out/plans-oracle.csv" -o "$out/plan-scaling.png" \
    --strategies zero-1,zero-2,zero-3,NNI,NII,IIG,mics,zero++ --data "$out/plan-scaling.tsv" \
    --title 'Planner oracle (115 M parameters, 640 MiB GPUs, 4 a node): time and GPU-hours to train'

# The best strategy as parosim ranks it: the first row of run-7b.csv that fits (rows come in
# rank order, those that fit first), labelled with its first alias when it has one.
best=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $col["fits"] == "true" { a = $col["aliases"]; sub(/;.*/, "", a)
        print $col["name"] (a == "" ? "" : " (" a ")"); exit }' "$out/run-7b.csv")
[ -n "$best" ] || { echo "gallery: no strategy fits in $out/run-7b.csv" >&2; exit 1; }
step "memory timeline and step Gantt of the best strategy, $best"
"$parosim" run "$default" --strategies "${best%% *}" --trace "$out/trace-best.tsv" >/dev/null
# what the GPU holds with the caching allocator's reserve: the best row's reserved + NCCL's
# buffers + overhead (run's CSV columns; decision 94)
reserve=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $col["fits"] == "true" { print $col["mem_reserved"] + $col["mem_comm_buffers"] + $col["mem_overhead"]; exit }' \
    "$out/run-7b.csv")
"$parosim" plot memory-timeline "$out/trace-best.tsv" --capacity '80 GiB' --reserved "$reserve B" \
    -o "$out/memory-timeline.png" --title "LLaMA-7B, $best, the best: memory per GPU over one step"
"$parosim" plot gantt "$out/trace-best.tsv" -o "$out/gantt.png" \
    --title "LLaMA-7B, $best, the best: one step on the compute and communication streams"

step "calibration check: the H100 fit against held-out LLaMA-13B GEMMs and the HBM log"
data=validation/data/h100/2026-11-23
"$parosim" validate validation/fits/h100-2026-11-23.yaml "${data}_gemm-llama13b.txt" "${data}_hbm.txt" \
    --csv "$out/validate-h100.csv" >"$out/validate-h100.txt"
"$parosim" plot validate "$out/validate-h100.csv" -o "$out/validate-h100.png" \
    --title 'H100: measured vs predicted (LLaMA-13B GEMMs not in the fit; HBM kernels)'

echo "gallery: $(ls "$out"/*.png | wc -l) plots in $out/" >&2
