#!/bin/sh
# SPDX-License-Identifier: MIT
# The matrix of issue #16 (TAP): every numeric key of a scenario, its model and topology
# (and the compression, LoRA and trainable keys), set with --set to 0, a negative number,
# 1e-300, 1e300, 2^31, 2^63 and the spellings of NaN and infinity (with the key's unit for
# quantities), through `strategies` and, where strategies accepts the input, `run` of one
# strategy. Each must exit 0 with finite numbers only (CSV: no inf, no nan) or exit 1 with
# one located message (file:line:column), within 2 GB an input (120 s guards a hang; under the
# sanitizers, ASan's own RSS limit, since its shadow memory defeats ulimit -v). One TAP
# line per key, naming the values that failed. A last check keeps the key list complete:
# every numeric field of the schema tables must appear in it.
# The readers of measurements (issue #42) get the same values, and the edges of the limits
# (core/limits.c) their columns are held to, in every number they read: a field of an
# nccl-tests row (validate --predict), of a harness GEMM and HBM row (validate), of a layer
# row (validate --layers) and of the corpus record (validate --corpus --check). Each must
# exit 0 with finite, printable numbers or exit 1 with one located message.
set -u
parosim=$1
root=$2
cd "$root" || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/tap.sh"

# The default scenario with absolute references and no trainable section, so that either
# trainable.fraction or trainable.count can be set.
sed -e "s|\.\./|$root/|" -e '/^  trainable:/,/^    fraction:/d' \
    scenarios/llama-7b_a100x8-100g_n32.yaml >"$work/base.yaml"
lora=tests/data/good/scenario-hf-lora.yaml
# The same with everything offloaded to NVMe and the checkpoints to the host, so that the
# host figures are read where they time and size something (decisions 80-82)
sed -e '/^node:/a\  host: {nvme_read: 24 GB/s, nvme_write: 12 GB/s}' topologies/a100x8-100g.yaml \
    >"$work/topology-nvme.yaml"
sed -e 's|^  recompute: none|  recompute: full\n  offload: {optimizer: nvme, parameters: nvme, activations: cpu}|' \
    -e "s|^topology: .*|topology: $work/topology-nvme.yaml|" "$work/base.yaml" >"$work/offload.yaml"

# Memory: ulimit -v where it works; ASan reserves terabytes of address space, so there
# its hard RSS limit stands in.
limit=ulimit
if grep -qa __asan_init "$parosim"; then
    limit=asan
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}hard_rss_limit_mb=2048"
fi
bounded() {
    if [ $limit = ulimit ]; then
        (
            ulimit -v 2097152
            exec timeout 120 "$parosim" "$@"
        )
    else
        timeout 120 "$parosim" "$@"
    fi
}

# One input: exit 0 and finite CSV, or exit 1 and a located message. Prints nothing when
# it holds, else a short reason.
check() { # command, scenario, key=value
    bounded "$1" "$2" --set "$3" --format csv ${4:+--strategies "$4"} >"$work/out" \
        2>"$work/err" </dev/null
    code=$?
    case $code in
    0)
        if grep -qiE '(^|,)[-+]?(inf|nan|null)(,|$)' "$work/out"; then
            echo "$1 exit 0 with a non-finite number"
        elif [ ! -s "$work/out" ]; then
            echo "$1 exit 0 with no output"
        fi
        ;;
    1)
        first=$(head -n 1 "$work/err")
        if ! printf '%s\n' "$first" | grep -qE '^parosim: error: [^ ]+:[0-9]+:[0-9]+: '; then
            echo "$1 exit 1 unlocated: $(printf '%s' "$first" | cut -c1-160)"
        fi
        ;;
    *) echo "$1 exit $code: $(head -c 200 "$work/err" | tr '\n' ' ')" ;;
    esac
    return $code
}

values="0 -1 1e-300 1e300 2147483648 9223372036854775808 nan NaN .nan inf -inf"
count="model.architecture.hidden model.architecture.layers model.architecture.heads
model.architecture.kv_heads model.architecture.head_dim model.architecture.ffn
model.architecture.vocab model.architecture.position_embeddings model.architecture.attention_dropout
model.architecture.hidden_dropout model.architecture.rotary model.parameters
model.published_params topology.nodes topology.node.gpus topology.node.nics.count
topology.network.nodes_per_leaf topology.network.oversubscription topology.nccl.channels
topology.gpu.sms topology.gpu.matmul_efficiency topology.gpu.attention_efficiency
topology.gpu.elementwise_efficiency topology.gpu.cudnn_attention_efficiency
topology.gpu.fp8_matmul_efficiency topology.gpu.flash1_attention_efficiency
topology.gpu.long_attention_efficiency
topology.gpu.flat_pass_efficiency topology.gpu.gemm_power_knee topology.gpu.gemm_power_slope
topology.nccl.chunks parallelism.group parallelism.tp parallelism.pp parallelism.dp
parallelism.cp
training.micro_batch training.sequence training.accumulation training.optimizer_bytes training.recompute_every
training.efficiency training.prefetch training.trainable.fraction training.trainable.count
training.pipeline.virtual collectives.chunks compression.gradients.ratio"
bytes="topology.gpu.memory training.memory_overhead training.bucket
compression.gradients.threshold compression.gradients.chunk"
bandwidth="topology.gpu.hbm_bandwidth topology.node.fabric.bandwidth
topology.node.nics.bandwidth compression.gradients.compress compression.gradients.decompress"
time="topology.node.fabric.latency topology.node.nics.latency topology.network.latency
topology.nccl.step_overhead topology.nccl.net_latency"
flops="topology.gpu.peak_flops"

# key, unit ('' for counts), scenario
row() {
    key=$1
    unit=$2
    scenario=$3
    bad=""
    for v in $values; do
        value=$v
        [ -n "$unit" ] && [ "$v" != 0 ] && value="$v $unit"
        why=$(check strategies "$scenario" "$key=$value")
        code=$?
        [ -n "$why" ] && bad="$bad [$value: $why]"
        # run simulates what strategies accepts: one strategy, the smallest test of it
        if [ $code = 0 ]; then
            why=$(check run "$scenario" "$key=$value" zero-3)
            [ -n "$why" ] && bad="$bad [$value: $why]"
        fi
    done
    if [ -z "$bad" ]; then
        ok "$key: exit 0 with finite output or exit 1 located, for $values"
    else
        not_ok "$key:$bad"
    fi
}

for key in $count; do row "$key" "" "$work/base.yaml"; done
for key in $bytes; do row "$key" B "$work/base.yaml"; done
for key in $bandwidth; do row "$key" B/s "$work/base.yaml"; done
for key in $time; do row "$key" s "$work/base.yaml"; done
for key in $flops; do row "$key" FLOP/s "$work/base.yaml"; done
row training.trainable.lora.rank "" $lora
row training.trainable.lora.dropout "" $lora
# a share of the GPU's memory without a unit, a size with one (decision 84)
row training.memory_headroom "" "$work/base.yaml"
row training.memory_headroom B "$work/base.yaml"
for key in topology.node.host.optimizer_rate; do row "$key" "" "$work/offload.yaml"; done
row topology.node.host.memory B "$work/offload.yaml"
for key in topology.node.host.pcie_bandwidth topology.node.host.nvme_read \
    topology.node.host.nvme_write; do
    row "$key" B/s "$work/offload.yaml"
done
moe=tests/data/good/scenario-moe.yaml
moe_keys="model.architecture.experts model.architecture.experts_per_token parallelism.ep
parallelism.etp training.moe.imbalance training.moe.capacity_factor"
for key in $moe_keys; do
    row "$key" "" $moe
done
# the fields of DeepSeek-like models (decision 77): latent attention, shared experts,
# dense first layers, multi-token prediction
mla=tests/data/good/scenario-moe-mla.yaml
mla_keys="model.architecture.expert_ffn model.architecture.shared_experts
model.architecture.shared_ffn model.architecture.dense_layers model.architecture.moe_every
model.architecture.mtp_layers model.architecture.q_lora_rank model.architecture.kv_lora_rank
model.architecture.qk_nope_head_dim model.architecture.qk_rope_head_dim
model.architecture.v_head_dim"
for key in $mla_keys; do row "$key" "" $mla; done

# ---- the readers of measurements ----
# One run of a reading command on the log in $work/log.txt: exit 0 with finite numbers of
# fewer than 25 digits (a time of 1e-300 us was once printed as a 38-digit percentage), or
# exit 1 located; --check may also exit 1 on a regression it prints.
read_check() {
    bounded "$@" >"$work/out" 2>"$work/err" </dev/null
    code=$?
    sed -i "s|$work|WORK|g" "$work/out"
    case $code in
    0)
        if grep -qiE '(^|[^a-z])[-+]?(inf|nan)([^a-z]|$)' "$work/out"; then
            echo "exit 0 with a non-finite number"
        elif grep -qE '[0-9]{25}' "$work/out"; then
            echo "exit 0 with a number of 25 digits or more"
        elif [ ! -s "$work/out" ]; then
            echo "exit 0 with no output"
        fi
        ;;
    1)
        first=$(head -n 1 "$work/err")
        if ! printf '%s\n' "$first" | grep -qE '^parosim: error: [^ ]+:[0-9]+:[0-9]+: ' &&
            ! { [ ! -s "$work/err" ] && grep -q 'REGRESSED\|has no rows now' "$work/out"; }; then
            echo "exit 1 unlocated: $(printf '%s' "$first" | cut -c1-160)"
        fi
        ;;
    *) echo "exit $code: $(head -c 200 "$work/err" | tr '\n' ' ')" ;;
    esac
}

# The values of the scenarios' matrix but YAML's own spellings of NaN (NaN, .nan): the logs
# are read with g_ascii_strtod, for which nan in any case is one input.
log_values="0 -1 1e-300 1e300 2147483648 9223372036854775808 nan inf -inf"

# label, fixture, line, field, separator, values at the edges of its limit, then the
# command that reads the log (which comes last): one TAP line per column.
column() {
    label=$1
    fixture=$2
    line=$3
    field=$4
    sep=$5
    edges=$6
    shift 6
    bad=""
    for v in $log_values $edges; do
        awk -F "$sep" -v OFS="$sep" -v l="$line" -v f="$field" -v v="$v" \
            'NR == l { $f = v } { print }' "$fixture" >"$work/log.txt"
        why=$(read_check "$@" "$work/log.txt")
        [ -n "$why" ] && bad="$bad [$v: $why]"
    done
    if [ -z "$bad" ]; then
        ok "$label: exit 0 with finite output or exit 1 located, for $log_values $edges"
    else
        not_ok "$label:$bad"
    fi
}

# Edges: a measured time of 1 ns to an hour (in us), a size up to 2^60 B, a bandwidth of
# 1 B/s to 1e18 B/s (in GB/s), a model dimension and a sequence up to 2^24, a micro-batch
# up to 2^20, tp up to 4,096 GPUs a node, a probability, a relative error up to 1e6, a
# GEMM dimension up to 2^53 (an exact count).
time_us="0.001 0.000999 3600000000 3700000000"
size="1152921504606846976 1.2e18"
busbw="0.000000001 1000000000 1100000000"
dim="16777216 16777217"
nccl=validation/nccl-corpus/dgx-h100/dgx-h100-1n8-allreduce.txt # line 31: 8 bytes
predict="validate --predict topologies/dgx-h100x8.yaml"
column "nccl-tests size" $nccl 31 1 " " "$size" $predict
column "nccl-tests time" $nccl 31 6 " " "$time_us" $predict
column "nccl-tests busbw" $nccl 31 8 " " "$busbw" $predict
column "nccl-tests in-place time" $nccl 31 10 " " "$time_us" $predict
fit=validation/fits/h100-2026-11-23.yaml
gemm=validation/data/h100/2026-11-23_gemm-llama13b.txt # line 12: the first GEMM
for f in 1 2 3; do
    column "harness GEMM dimension $f" $gemm 12 $f " " "9007199254740992 9007199254740994" \
        validate $fit
done
column "harness GEMM time" $gemm 12 5 " " "$time_us" validate $fit
hbm=validation/data/h100/2026-11-23_hbm.txt # line 12: the first copy
column "harness HBM size" $hbm 12 1 " " "$size" validate $fit
column "harness HBM bytes" $hbm 12 3 " " "$size" validate $fit
column "harness HBM time" $hbm 12 4 " " "$time_us" validate $fit
layers=validation/data/h100/2026-11-25_layer.txt # line 9: the first layer
check_layers="validate --layers topologies/dgx-h100x8.yaml"
for f in 2:hidden 3:heads 4:hdim 5:ffn; do
    column "layer ${f#*:}" $layers 9 ${f%%:*} " " "$dim" $check_layers
done
column "layer tp" $layers 9 6 " " "4096 4097" $check_layers
column "layer seq" $layers 9 7 " " "$dim" $check_layers
column "layer batch" $layers 9 8 " " "1048576 1048577" $check_layers
column "layer drop" $layers 9 10 " " "1 1.0000001" $check_layers
for f in 12:fwd 13:fwdbwd 14:gemm 15:attn 16:other; do
    column "layer ${f#*:} time" $layers 9 ${f%%:*} " " "$time_us" $check_layers
done
printf 'dgx-h100\t<64K\t0.5\t0.9\n' >"$work/record.tsv"
tab=$(printf '\t')
for f in 3:median 4:worst; do
    column "corpus record ${f#*:}" "$work/record.tsv" 1 ${f%%:*} "$tab" "1000000 1100000" \
        validate --corpus validation/nccl-corpus --check
done

# Every numeric field of the schema tables is in the matrix (by its last key).
all="$count $bytes $bandwidth $time $flops training.trainable.lora.rank
training.trainable.lora.dropout training.memory_headroom $moe_keys
$mla_keys
topology.node.host.optimizer_rate topology.node.host.memory topology.node.host.pcie_bandwidth
topology.node.host.nvme_read topology.node.host.nvme_write"
missing=""
for field in $(grep -hoE '\{"[a-z_]+", PARO_FIELD_(INT|DOUBLE|RATIO|QUANTITY)' \
    src/yaml/load-model.c src/yaml/load-topology.c src/scenario/scenario.c \
    src/compress/compress-load.c | sed -E 's/\{"([a-z_]+)".*/\1/' | sort -u); do
    printf '%s\n' $all | grep -qE "(^|\.)$field\$" || missing="$missing $field"
done
[ -z "$missing" ] && ok "every numeric schema field is in the matrix" ||
    not_ok "numeric fields missing from the matrix:$missing"
echo "1..$n"
exit $fail
