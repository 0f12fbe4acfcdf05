#!/bin/sh
# SPDX-License-Identifier: MIT
# Inputs and outputs of the commands (issue #16 H4, W1, W9; TAP): inputs are regular files
# of bounded size (a FIFO, a device, a folder or a symlink loop is refused at once, with
# what it is); outputs go through a temporary file and a rename onto regular files (mode,
# symbolic and hard links kept) and directly onto devices, FIFOs and /dev/stdout, write
# errors reported, and an output that is one of the command's inputs is refused.
set -u
parosim=$1
root=$2
cd "$root" || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/tap.sh"
scenario=scenarios/llama-7b_a100x8-100g_n32.yaml
sweep() { "$parosim" sweep "$scenario" --vary topology.nodes=2,4 --strategies zero-3 "$@"; }

expect() { # description, exit code, message (grep -F), then the parosim arguments
    what=$1
    want=$2
    message=$3
    shift 3
    timeout 120 "$parosim" "$@" >"$work/out" 2>"$work/err" </dev/null # a hang guard, not a speed
    got=$?
    if [ "$got" = "$want" ] && grep -qF -- "$message" "$work/err"; then
        ok "$what: exit $want, '$message'"
    else
        not_ok "$what: exit $got (want $want), stderr: $(head -c 300 "$work/err" | tr "\n" " ")"
    fi
}

# ---- inputs (H4) ----
mkfifo "$work/fifo"
expect "a FIFO as the scenario" 1 "fifo: is a FIFO (named pipe), not a regular file" \
    strategies "$work/fifo"
expect "/dev/zero as the scenario" 1 "/dev/zero: is a character device, not a regular file" \
    run /dev/zero
expect "a device as the model" 1 \
    "model file '/dev/zero' is a character device, not a regular file (looked for /dev/zero)" \
    strategies "$scenario" --set model=/dev/zero
expect "a folder as the model" 1 "model file 'models' is a directory, not a file" \
    strategies "$scenario" --set model=models
ln -s "$work/loop2" "$work/loop1"
ln -s "$work/loop1" "$work/loop2"
expect "a symlink loop as the model" 1 "is a loop of symbolic links" \
    strategies "$scenario" --set "model=$work/loop1"
expect "a missing model" 1 "model file 'nothing.yaml' does not exist" \
    strategies "$scenario" --set model=nothing.yaml
head -c 17000000 /dev/zero | tr '\0' ' ' >"$work/huge.yaml"
expect "a 17 MB scenario" 1 "is 16.2 MiB, above the limit of 16 MiB for a file" strategies "$work/huge.yaml"
expect "a FIFO as a calibration log" 1 "is a FIFO (named pipe), not a regular file" \
    calibrate "$work/fifo"
expect "a folder as a plot input" 1 "is a directory, not a file" \
    plot strategies tests -o "$work/x.png"

# ---- outputs onto devices, FIFOs, stdout (W1) ----
if [ "$(id -u)" = 0 ] && mknod "$work/null" c 1 3 2>/dev/null; then
    # as root a rename replaced /dev/null by a regular file: a private node stands for it
    sweep -o "$work/null" && [ -c "$work/null" ] && ok "-o a null device: still a device" ||
        not_ok "-o a null device replaced it"
    "$parosim" run "$scenario" --strategies zero-3 --trace "$work/null" >/dev/null &&
        [ -c "$work/null" ] && ok "--trace a null device: still a device" ||
        not_ok "--trace a null device replaced it"
else
    echo "ok $((n = n + 1)) - # SKIP device nodes need root"
fi
expect "-o /dev/full" 1 "/dev/full: cannot write: No space left on device" \
    sweep "$scenario" --vary topology.nodes=2,4 --strategies zero-3 -o /dev/full
expect "pipeline --trace /dev/full" 1 "cannot write: No space left on device" \
    pipeline --stages 2 --micro 2 --trace /dev/full
expect "calibrate -o /dev/full" 1 "cannot write: No space left on device" \
    calibrate tests/data/calib/nccl-tests-a100-8-allreduce.txt -o /dev/full
lines=$(sweep -o /dev/stdout | wc -l)
[ "$lines" = 3 ] && ok "-o /dev/stdout prints the sweep" || not_ok "-o /dev/stdout: $lines lines"
cat "$work/fifo" >"$work/from-fifo" &
reader=$!
sweep -o "$work/fifo"
code=$?
wait $reader
[ $code = 0 ] && [ "$(wc -l <"$work/from-fifo")" = 3 ] && [ -p "$work/fifo" ] &&
    ok "-o a FIFO: written through, still a FIFO" || not_ok "-o a FIFO: exit $code"

# ---- outputs that are inputs, modes and links (W9) ----
sed 's|\.\./|'"$root"'/|' "$scenario" >"$work/s.yaml"
cp tests/data/calib/nccl-tests-a100-8-allreduce.txt "$work/log.txt"
cp "$work/s.yaml" "$work/s.orig"
expect "sweep -o its scenario" 1 "s.yaml: is one of this command's inputs; refusing" \
    sweep "$work/s.yaml" --vary topology.nodes=2,4 -o "$work/s.yaml"
expect "run --trace its scenario" 1 "is one of this command's inputs" \
    run "$work/s.yaml" --strategies zero-3 --trace "$work/s.yaml"
expect "run --trace its model" 1 "llama-7b.yaml: is one of this command's inputs" \
    run "$work/s.yaml" --strategies zero-3 --trace models/llama-7b.yaml
expect "calibrate -o its log" 1 "log.txt: is one of this command's inputs" \
    calibrate "$work/log.txt" -o "$work/log.txt"
expect "validate --csv its log" 1 "log.txt: is one of this command's inputs" \
    validate validation/fits/h100-2026-11-23.yaml "$work/log.txt" --csv "$work/log.txt"
cmp -s "$work/s.yaml" "$work/s.orig" && ok "the refused scenario is unchanged" ||
    not_ok "the scenario was overwritten"
ln -s "$work/s.yaml" "$work/alias.yaml"
expect "run --trace a symlink to its scenario" 1 "is one of this command's inputs" \
    run "$work/s.yaml" --strategies zero-3 --trace "$work/alias.yaml"
expect "run --trace a folder" 1 "is a directory, not a file" \
    run "$scenario" --strategies zero-3 --trace "$work"
echo old >"$work/out.csv"
chmod 640 "$work/out.csv"
ln "$work/out.csv" "$work/hard.csv"
ln -s out.csv "$work/link.csv"
sweep -o "$work/link.csv" &&
    [ -L "$work/link.csv" ] && [ "$(stat -c %a "$work/out.csv")" = 640 ] &&
    [ "$(wc -l <"$work/hard.csv")" = 3 ] &&
    ok "replacing a file keeps its mode, a symlink to it and its hard links" ||
    not_ok "mode $(stat -c %a "$work/out.csv"), link $(ls -l "$work/link.csv")"
echo old >"$work/m.csv"
chmod 604 "$work/m.csv"
sweep -o "$work/m.csv" && [ "$(stat -c %a "$work/m.csv")" = 604 ] &&
    [ "$(wc -l <"$work/m.csv")" = 3 ] && ok "a replaced file keeps its mode (604)" ||
    not_ok "mode $(stat -c %a "$work/m.csv")"
left=$(ls -A "$work" | grep '^\.' || true)
[ -z "$left" ] && ok "no temporary file left" || not_ok "left: $left"

# ---- an interrupted plot leaves nothing (gnuplot replaced by a slow stand-in) ----
# Synchronised on events, never on a sleep: the stand-in says it started through one FIFO,
# and holds another open until it dies, so reading that one to its end waits for its death
# (timeout only guards against a hang).
mkdir "$work/tmp"
mkfifo "$work/started" "$work/alive"
printf '#!/bin/sh\nexec 3>"%s"\necho started >"%s"\nexec sleep 31.7\n' "$work/alive" \
    "$work/started" >"$work/slow-gnuplot"
chmod +x "$work/slow-gnuplot"
"$parosim" run "$scenario" --strategies zero-3 --format csv >"$work/run.csv"
TMPDIR="$work/tmp" PAROSIM_GNUPLOT="$work/slow-gnuplot" \
    "$parosim" plot strategies "$work/run.csv" -o "$work/p.png" 2>/dev/null &
pid=$!
exec 4<"$work/alive" # returns once the stand-in opens its end
read -r _ <"$work/started"
kill -TERM $pid
wait $pid
code=$?
gone=no
timeout 60 cat <&4 >/dev/null && gone=yes # end of file: no process holds the stand-in's end
exec 4<&-
if [ $code = 143 ] && [ -z "$(ls -A "$work/tmp")" ] && [ ! -e "$work/p.png" ] && [ $gone = yes ]; then
    ok "SIGTERM during plot: exit 143, gnuplot gone, no temporary folder or partial file"
else
    not_ok "SIGTERM during plot: exit $code, gnuplot gone: $gone, left: $(ls -A "$work/tmp") $(ls "$work" | grep png)"
fi
echo "1..$n"
exit $fail
