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

# description, exit code, message (grep -F), then the parosim arguments; 10 s and 2 GB
expect() {
    what=$1
    want=$2
    message=$3
    shift 3
    (
        ulimit -v 2097152 2>/dev/null
        exec timeout 10 "$parosim" "$@"
    ) >"$work/out" 2>"$work/err" </dev/null
    got=$?
    if [ "$got" = "$want" ] && grep -qF -- "$message" "$work/err" "$work/out"; then
        ok "$what: exit $want, '$message'"
    else
        not_ok "$what: exit $got (want $want), stderr: $(head -c 400 "$work/err")"
    fi
}

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
expect "W10 collective --gpus 0" 2 "--gpus, --group, --channels and --chunks must be at least 1" \
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

# ---- H3, H1: collective work estimated before simulating ----
expect "H3 --explicit --gpus 16384" 1 \
    "simulating this collective would take about 14 s (16,384 GPUs simulated x 1 channel x 1,024 steps" \
    collective --topology $T --op allreduce --explicit --gpus 16384 -b 1G -e 1G
expect "H3 --explicit --gpus 131072" 1 "lower --gpus (with --explicit" \
    collective --topology $T --op allreduce --explicit --gpus 131072 -b 1G -e 1G
sed 's/gpus: 8/gpus: 1024/' $T >"$work/t1024.yaml"
expect "H1 a node of 1,024 GPUs" 1 "lower the GPUs per node (node.gpus" \
    collective --topology "$work/t1024.yaml" --op allreduce

echo "1..$n"
exit $fail
