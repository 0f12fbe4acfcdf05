#!/bin/sh
# SPDX-License-Identifier: MIT
# The matrix of issue #16 (TAP): every numeric key of a scenario, its model and topology
# (and the compression, LoRA and trainable keys), set with --set to 0, a negative number,
# 1e-300, 1e300, 2^31, 2^63 and the spellings of NaN and infinity (with the key's unit for
# quantities), through `strategies` and, where strategies accepts the input, `run` of one
# strategy. Each must exit 0 with finite numbers only (CSV: no inf, no nan) or exit 1 with
# one located message (file:line:column), within 10 s and 2 GB an input (under the
# sanitizers, ASan's own RSS limit, since its shadow memory defeats ulimit -v). One TAP
# line per key, naming the values that failed. A last check keeps the key list complete:
# every numeric field of the schema tables must appear in it.
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
            exec timeout 10 "$parosim" "$@"
        )
    else
        timeout 10 "$parosim" "$@"
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
topology.gpu.flat_pass_efficiency topology.gpu.gemm_power_knee topology.gpu.gemm_power_slope
topology.nccl.chunks parallelism.group parallelism.tp parallelism.pp parallelism.dp
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
moe=tests/data/good/scenario-moe.yaml
for key in model.architecture.experts model.architecture.experts_per_token; do
    row "$key" "" $moe
done

# Every numeric field of the schema tables is in the matrix (by its last key).
all="$count $bytes $bandwidth $time $flops training.trainable.lora.rank
training.trainable.lora.dropout model.architecture.experts model.architecture.experts_per_token"
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
