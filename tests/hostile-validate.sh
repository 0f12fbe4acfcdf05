#!/bin/sh
# SPDX-License-Identifier: MIT
# The reproducers of issue #42 ("validate accepts what calibrate refuses"), each with the
# exit code and the message it must now give (TAP): times and counts of nccl-tests, harness
# and layer logs outside the named limits of core/limits.c, logs with nothing to predict,
# the corpus record written over the corpus or a device and read back with nan or nothing,
# and the corpus folder as shell completion types it. Every command runs under a time and
# memory limit, as in hostile.sh; what it writes goes to a scratch copy of the corpus.
set -u
parosim=$1
root=$2
cd "$root" || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/tap.sh"
T=topologies/dgx-h100x8.yaml
LOG=validation/nccl-corpus/dgx-h100/dgx-h100-1n8-allreduce.txt # line 31: the 8-byte row
LAYERS=validation/data/h100/2026-11-25_layer.txt
C=tests/data/calib

. "$(dirname "$0")/expect.sh"

# ---- 1. validate --predict: times outside the limit, logs with nothing to predict ----
# Line 31 is the 8-byte row: "8 2 float sum -1 13.67 0.00 0.00 0 13.03 0.00 0.00 0",
# its out-of-place time at column 57, its in-place time at column 89.
row() { # file, sed substitution on line 31 of the corpus log
    sed "31s/$2/" $LOG >"$work/$1"
}
row big.txt ' 13.67 / 1e308 '
expect "#42.1 a time of 1e308 us" 1 \
    "big.txt:31:57: 'time' is 1e308 us (1e+302 s), above the limit of 3600 s" \
    validate --predict $T "$work/big.txt"
row tiny.txt ' 13.67 / 1e-300 '
expect "#42.1 a time of 1e-300 us" 1 \
    "tiny.txt:31:57: 'time' is 1e-300 us (1e-306 s), below the limit of 1e-09 s" \
    validate --predict $T "$work/tiny.txt"
row inplace.txt ' 13.03 / 1e308 '
expect "#42.1 an in-place time of 1e308 us" 1 \
    "inplace.txt:31:89: 'in-place time' is 1e308 us (1e+302 s), above the limit of 3600 s" \
    validate --predict $T "$work/inplace.txt"
python3 -c 'import random, sys
random.seed(42)
sys.stdout.buffer.write(bytes(random.getrandbits(8) for _ in range(4096)))' >"$work/random.bin"
expect "#42.1 random bytes" 1 \
    "random.bin:1:1: no collective row of more than 0 bytes to predict: not a log of nccl-tests" \
    validate --predict $T "$work/random.bin"
expect "#42.1 random bytes, as calibrate refuses them" 1 \
    "none of the 1 logs holds an nccl-tests or paro-harness table" calibrate "$work/random.bin"
expect "#42.1 an ib_write_bw log" 1 \
    "ib-write-bw.txt:1:1: no collective row of more than 0 bytes to predict" \
    validate --predict $T $C/ib-write-bw.txt
expect "#42.1 a GEMM log has no collective to predict" 1 \
    "2026-11-23_gemm-llama7b.txt:1:1: no collective row of more than 0 bytes to predict" \
    validate --predict $T validation/data/h100/2026-11-23_gemm-llama7b.txt
expect "#42.1 a real log still predicts" 0 "ring/LL" validate --predict $T $LOG

# ---- 2. validate --corpus --record: never over an input, through devices and FIFOs ----
mkdir -p "$work/repo/validation"
cp -R validation/nccl-corpus "$work/repo/validation/"
cp -R topologies "$work/repo/"
corpus=$work/repo/validation/nccl-corpus
cp -R "$corpus" "$work/pristine"
expect "#42.2 --record the corpus index" 1 \
    "corpus.yaml: is one of this command's inputs; refusing to overwrite it" \
    validate --corpus "$corpus" --record "$corpus/corpus.yaml"
expect "#42.2 --record one of the corpus logs" 1 \
    "dgx-h100-1n8-allreduce.txt: is one of this command's inputs; refusing to overwrite it" \
    validate --corpus "$corpus" --record "$corpus/dgx-h100/dgx-h100-1n8-allreduce.txt"
expect "#42.2 --record a topology the corpus names" 1 \
    "aws-p5.yaml: is one of this command's inputs" \
    validate --corpus "$corpus" --record "$work/repo/topologies/aws-p5.yaml"
expect "#42.2 --record the record --check reads" 1 \
    "recorded.tsv: is one of this command's inputs" \
    validate --corpus "$corpus" --check "$corpus/recorded.tsv" --record "$corpus/recorded.tsv"
diff -r "$work/pristine" "$corpus" >/dev/null && ok "#42.2 the refused index and log are unchanged" ||
    not_ok "#42.2 --record changed the corpus: $(diff -rq "$work/pristine" "$corpus" | head -3)"
"$parosim" validate --corpus "$corpus" --record "$work/fresh.tsv" >/dev/null 2>"$work/err" &&
    cmp -s "$work/fresh.tsv" validation/nccl-corpus/recorded.tsv &&
    ok "#42.2 --record a new file writes the figures --check reads" ||
    not_ok "#42.2 --record a new file: $(head -c 300 "$work/err")"
cp "$work/fresh.tsv" "$work/kept.tsv"
printf 'stale\n' >"$work/kept.tsv"
chmod 640 "$work/kept.tsv"
"$parosim" validate --corpus "$corpus" --record "$work/kept.tsv" >/dev/null 2>"$work/err" &&
    [ "$(stat -c %a "$work/kept.tsv")" = 640 ] && cmp -s "$work/kept.tsv" "$work/fresh.tsv" &&
    ok "#42.2 --record replaces a regular file, keeping its mode" ||
    not_ok "#42.2 --record a file of mode 640: mode $(stat -c %a "$work/kept.tsv")"
# A device: first a private null device where one can be made (as root, the old rename
# replaced the node), and /dev/null itself only once the private one stayed a device.
device_ok=no
if [ "$(id -u)" = 0 ] && mknod "$work/null" c 1 3 2>/dev/null; then
    "$parosim" validate --corpus "$corpus" --record "$work/null" >/dev/null &&
        [ -c "$work/null" ] && device_ok=yes
    [ $device_ok = yes ] && ok "#42.2 --record a null device: still a character device" ||
        not_ok "#42.2 --record a null device replaced it"
else
    device_ok=yes
    echo "ok $((n = n + 1)) - # SKIP device nodes need root"
fi
if [ $device_ok = yes ]; then
    expect "#42.2 --record /dev/null" 0 "# class" validate --corpus "$corpus" --record /dev/null
    [ -c /dev/null ] && ok "#42.2 /dev/null stays a character device after --record /dev/null" ||
        not_ok "#42.2 /dev/null is no longer a character device"
else
    not_ok "#42.2 --record /dev/null not tried: the private null device was replaced"
fi
mkfifo "$work/fifo"
timeout 120 cat "$work/fifo" >"$work/from-fifo" &
reader=$!
timeout 120 "$parosim" validate --corpus "$corpus" --record "$work/fifo" >/dev/null 2>"$work/err"
code=$?
[ $code != 0 ] && : >"$work/fifo" 2>/dev/null & # a reader left waiting: let it end
wait $reader
[ $code = 0 ] && [ -p "$work/fifo" ] && cmp -s "$work/from-fifo" "$work/fresh.tsv" &&
    ok "#42.2 --record a FIFO: written through, still a FIFO" ||
    not_ok "#42.2 --record a FIFO: exit $code, $(head -c 300 "$work/err")"

# ---- 3. validate --corpus --check: a record must say something checkable ----
printf 'dgx-h100\t<64K\tnan\tnan\n' >"$work/nan.tsv"
expect "#42.3 a recorded nan median" 1 \
    "nan.tsv:1:15: the median |error| must be a finite number (a fraction), got 'nan'" \
    validate --corpus validation/nccl-corpus --check "$work/nan.tsv"
printf 'dgx-h100\t<64K\t0.1\tinf\n' >"$work/inf.tsv"
expect "#42.3 a recorded infinite worst" 1 \
    "inf.tsv:1:19: the worst |error| must be a finite number (a fraction), got 'inf'" \
    validate --corpus validation/nccl-corpus --check "$work/inf.tsv"
printf '# class\tband\tmedian\tworst\n' >"$work/none.tsv"
expect "#42.3 a record with no rows" 1 "none.tsv:1:1: no recorded figures" \
    validate --corpus validation/nccl-corpus --check "$work/none.tsv"
: >"$work/empty.tsv"
expect "#42.3 an empty record" 1 "empty.tsv:1:1: no recorded figures" \
    validate --corpus validation/nccl-corpus --check "$work/empty.tsv"
printf 'dgx-h100\t<64K\t-0.5\t0.2\n' >"$work/negative.tsv"
expect "#42.3 a negative recorded median" 1 \
    "negative.tsv:1:15: 'median' is -0.5, below the limit of 0" \
    validate --corpus validation/nccl-corpus --check "$work/negative.tsv"
printf 'dgx-h100\t<64k\t0.1\t0.2\n' >"$work/band.tsv"
expect "#42.3 an unknown band" 1 \
    "band.tsv:1:10: unknown band '<64k' (known: <64K, 64K-16M, >=32M)" \
    validate --corpus validation/nccl-corpus --check "$work/band.tsv"
printf 'dgx-h100 <64K 0.1 0.2\n' >"$work/spaces.tsv"
expect "#42.3 fields not separated by tabs" 1 \
    "spaces.tsv:1:1: expected class, band, median and worst |error|, four fields separated by tabs" \
    validate --corpus validation/nccl-corpus --check "$work/spaces.tsv"
printf 'dgx-h100\t<64K\t0.9\t0.9\ndgx-h100\t<64K\t0.001\t0.001\n' >"$work/twice.tsv"
expect "#42.3 a class and band recorded twice" 1 \
    "twice.tsv:2:1: dgx-h100 <64K is recorded twice (also on line 1)" \
    validate --corpus validation/nccl-corpus --check "$work/twice.tsv"
expect "#42.3 the shipped record still passes" 0 "# check: dgx-h100" \
    validate --corpus validation/nccl-corpus --check validation/nccl-corpus/recorded.tsv

# ---- 4. the corpus folder as shell completion types it ----
"$parosim" validate --corpus validation/nccl-corpus | tail -n +2 >"$work/plain.txt"
same() { # the folder as written, the folder it is written in
    (cd "$2" && timeout 120 "$parosim" validate --corpus "$1") >"$work/out" 2>"$work/err"
    code=$?
    if [ $code = 0 ] && tail -n +2 "$work/out" | cmp -s - "$work/plain.txt"; then
        ok "#42.4 --corpus $1 (in $2): exit 0, the same predictions"
    else
        not_ok "#42.4 --corpus $1 (in $2): exit $code, $(head -c 300 "$work/err")"
    fi
}
same validation/nccl-corpus/ .
same validation/nccl-corpus// .
same ./validation/nccl-corpus .
same ./validation//nccl-corpus/ .
same nccl-corpus/ validation
same . validation/nccl-corpus
same "$root/validation/nccl-corpus/" /

# ---- 5. validate --layers: each value of a row within the limits scenarios use ----
# The first row of the H100 layer log, with one field replaced (columns as printed below).
layer() { # file, field number, value
    awk -v f="$2" -v v="$3" '!/^#/ && NF == 19 { $f = v; print; exit }' OFS=' ' $LAYERS \
        >"$work/$1"
}
expect "#42.5 validate --layers --help, as the usage hint says" 0 \
    "the limits a scenario is held to (a dimension above 2^24" validate --layers --help
layer hidden.txt 2 100000000000
expect "#42.5 hidden size 1e11" 1 \
    "hidden.txt:1:5: 'hidden' is 100,000,000,000, above the limit of 16,777,216" \
    validate --layers $T "$work/hidden.txt"
layer seq.txt 7 4294967296
expect "#42.5 sequence 2^32" 1 "seq.txt:1:22: 'seq' is 4,294,967,296, above the limit of 16,777,216" \
    validate --layers $T "$work/seq.txt"
layer drop.txt 10 1.5
expect "#42.5 dropout 1.5" 1 "drop.txt:1:35: 'drop' is 1.5, above the limit of 1: a dropout rate is a probability" \
    validate --layers $T "$work/drop.txt"
layer time.txt 12 1e308
expect "#42.5 a forward time of 1e308 us" 1 \
    "time.txt:1:43: 'fwd(us)' is 1e308 us (1e+302 s), above the limit of 3600 s" \
    validate --layers $T "$work/time.txt"
layer other.txt 16 1e-300
expect "#42.5 an 'other' time of 1e-300 us" 1 \
    "other.txt:1:68: 'other(us)' is 1e-300 us (1e-306 s), below the limit of 1e-09 s" \
    validate --layers $T "$work/other.txt"
layer zero.txt 2 0
expect "#42.5 hidden size 0" 1 "zero.txt:1:5: 'hidden' is 0, below the limit of 1" \
    validate --layers $T "$work/zero.txt"
layer negative.txt 3 -12
expect "#42.5 heads -12" 1 "negative.txt:1:9: 'heads' is -12, below the limit of 1" \
    validate --layers $T "$work/negative.txt"
layer batch.txt 8 2097152
expect "#42.5 batch 2^21" 1 "batch.txt:1:27: 'batch' is 2,097,152, above the limit of 1,048,576" \
    validate --layers $T "$work/batch.txt"
layer tp.txt 6 8192
expect "#42.5 tp 8,192" 1 "tp.txt:1:20: 'tp' is 8,192, above the limit of 4,096" \
    validate --layers $T "$work/tp.txt"
layer tp5.txt 6 5
expect "#42.5 tp 5 does not divide 12 heads" 1 \
    "tp5.txt:1:20: 'tp' 5 must divide 'heads' (12) and 'ffn' (3072)" \
    validate --layers $T "$work/tp5.txt"
layer half.txt 2 768.5
expect "#42.5 hidden size 768.5" 1 "half.txt:1:5: 'hidden' must be a whole number, got '768.5'" \
    validate --layers $T "$work/half.txt"
layer nan.txt 13 nan
expect "#42.5 a forward-backward time of nan" 1 \
    "nan.txt:1:49: 'fwdbwd(us)' must be a finite number, got 'nan'" \
    validate --layers $T "$work/nan.txt"
layer arch.txt 1 mamba
expect "#42.5 an unknown arch" 1 "arch.txt:1:1: unknown arch 'mamba' (known: gpt, llama)" \
    validate --layers $T "$work/arch.txt"
layer eager.txt 15 0
expect "#42.5 an attention time of 0 (no such kernel) is read" 0 "# column" \
    validate --layers $T "$work/eager.txt"

# ---- 6. the other numbers of the log readers, against the same limits ----
row size.txt '^        ...8 /        1e30 '
expect "#42.6 a size of 1e30 B" 1 "size.txt:31:9: 'size' is 1e30 B (1e+30 B), above the limit of 1.15292e+18 B" \
    validate --predict $T "$work/size.txt"
row busbw.txt '0.00    0.00      0    13.03/0.00   1e300     0    13.03'
expect "#42.6 a busbw of 1e300 GB/s" 1 "busbw.txt:31:73: 'busbw' is 1e300 GB/s (inf B/s), above the limit of 1e+18 B/s" \
    validate --predict $T "$work/busbw.txt"
expect "#42.6 a GEMM time of 1e-300 us, refused where it is written" 1 \
    "w4-tiny-gemm.txt:16:24: 'time' is 1e-300 us (1e-306 s), below the limit of 1e-09 s" \
    calibrate $C/w4-tiny-gemm.txt
expect "#42.6 ... also by validate" 1 "w4-tiny-gemm.txt:16:24: 'time' is 1e-300 us" \
    validate validation/fits/h100-2026-11-23.yaml $C/w4-tiny-gemm.txt
expect "#42.6 a GEMM rate no GPU has, from a time within the limit (issue #16 W4)" 1 \
    "the bf16 GEMM rows give 5.63e+21 FLOP/s (5.63e+14 FLOP in 0.1 us), outside 1e+06 to 1e+21 FLOP/s" \
    calibrate $C/w4-fast-gemm.txt
awk '/^ *[0-9]/ && !done { $4 = "1e308"; done = 1 } { print }' \
    validation/data/h100/2026-11-23_hbm.txt >"$work/hbm.txt"
line=$(grep -n '^ *[0-9]' validation/data/h100/2026-11-23_hbm.txt | head -1 | cut -d: -f1)
expect "#42.6 an HBM time of 1e308 us" 1 "hbm.txt:$line:" \
    calibrate "$work/hbm.txt"
grep -qF "'time' is 1e308 us (1e+302 s), above the limit of 3600 s" "$work/err" &&
    ok "#42.6 ... named by the limit of a measured time" || not_ok "#42.6 hbm: $(head -c 300 "$work/err")"
sed 's/^# corpus: ranks: 8 nodes: 1$/# corpus: ranks: 16777216 nodes: 1/' $LOG >"$work/ranks.txt"
expect "#42.6 a corpus log of 2^24 ranks on one node" 1 \
    "ranks.txt:11:18: 'ranks per node' is 16,777,216, above the limit of 4,096" \
    validate --predict $T "$work/ranks.txt"
sed 's/^# corpus: ranks: 8 nodes: 1$/# corpus: ranks: 33554432 nodes: 33554432/' $LOG >"$work/nodes.txt"
expect "#42.6 a corpus log of 2^25 nodes" 1 \
    "nodes.txt:11:34: 'nodes' is 33,554,432, above the limit of 16,777,216" \
    validate --predict $T "$work/nodes.txt"

echo "1..$n"
exit $fail
