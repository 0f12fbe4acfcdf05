#!/bin/sh
# SPDX-License-Identifier: MIT
# Every file a command writes goes through the one output writer (core/files.h), and this
# test proves it the same way for each (TAP). It finds the writing options itself, from
# `parosim --help` (every command) and each command's --help (and validate's modes):
# an option taking FILE that is not a known input must have a recipe below, so a new
# command or option is covered the day it lands, or this test fails. On each writer:
#   input    the output is one of the command's inputs: refused, the input unchanged
#   device   a character device (a /dev/null made here with mknod): written through, still
#            a device (as root a rename would have replaced the node)
#   fifo     a FIFO: written through to its reader, still a FIFO
#   link     a regular file of mode 0640 behind a symbolic link: the link stays, the target
#            is replaced whole with its mode kept, no temporary file left
#   folder   a directory: refused, nothing written
#   signal   SIGTERM once the temporary file is written, before its rename (parosim-faults,
#            PAROSIM_FAULT): killed, the old content intact, no temporary file left
set -u
parosim=$1
root=$2
faults=$3
cd "$root" || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/tap.sh"
S=scenarios/llama-7b_a100x8-100g_n32.yaml
H100=validation/data/h100
LOG=$H100/2026-11-23_hbm.txt
FIT=validation/fits/h100-2026-11-23.yaml
CORPUS=validation/nccl-corpus

# Options that take a file but only read it.
inputs_known=" --calibration --topology --scripts --check --corpus "

# ---- the recipes: writer NAME -> the command writing to $2 with binary $1 ----
# (each quick: one strategy, two points, one log; the input each reads is named in input_of)
run_trace() { "$1" run $S --strategies zero-3 --trace "$2"; }
sweep_output() { "$1" sweep $S --vary training.accumulation=1,2 --strategies zero-3 -o "$2"; }
report_output() { "$1" report $S --set topology.nodes=2 -o "$2"; }
plot_output() { "$1" plot strategies "$work/run.csv" -o "$2"; }
plot_data() {
    "$1" plot best-map "$work/sweep.csv" -o "$work/best-map.png" --data "$2"
}
pipeline_trace() { "$1" pipeline --stages 2 --micro 2 --forward '1 ms' --trace "$2"; }
calibrate_output() { "$1" calibrate $LOG --device H100-SXM5-80GB -o "$2"; }
validate_csv() { "$1" validate $FIT $LOG --csv "$2"; }
validate_record() { "$1" validate --corpus $CORPUS --record "$2"; }

# writer  option  command mode  input it reads  suffix the output needs
writers="run_trace --trace run - $S -
sweep_output --output sweep - $S -
report_output --output report - $S .html
plot_output --output plot - $work/run.csv .png
plot_data --data plot - $work/sweep.csv -
pipeline_trace --trace pipeline - - -
calibrate_output --output calibrate - $LOG -
validate_csv --csv validate - $LOG -
validate_record --record validate --corpus $CORPUS/corpus.yaml -"

"$parosim" run $S --strategies zero-3,NII --format csv >"$work/run.csv"
"$parosim" sweep $S --vary training.accumulation=1,2 --vary parallelism.group=4,8 \
    --strategies zero-3,NII -o "$work/sweep.csv"

# ---- 1. every writing option has a recipe ----
helps() { # "command mode" pairs whose --help is read
    "$parosim" --help | sed -n '/^Commands:/,/^$/p' | awk 'NF > 1 { print $1 " -" }'
    printf 'validate --predict\nvalidate --layers\n'
}
helps >"$work/helps"
[ -s "$work/helps" ] || not_ok "no command found in 'parosim --help'"
while read -r command mode; do
    if [ "$mode" = - ]; then
        "$parosim" "$command" --help
    else
        "$parosim" "$command" "$mode" --help
    fi >"$work/help" 2>&1
    # options whose value is a file: "--name=FILE", "--name FILE", "-o, --output=FILE"
    for option in $(sed -n 's/^ *\(-[a-z], \)\{0,1\}\(--[a-z-]*\)[= ]\(FILE\|RECORDED\)\b.*/\2/p' \
        "$work/help" | sort -u); do
        case "$inputs_known" in *" $option "*) continue ;; esac
        if echo "$writers" | awk -v o="$option" -v c="$command" '$2 == o && $3 == c { f = 1 }
            END { exit !f }'; then
            ok "$command $([ "$mode" = - ] || echo "$mode ")$option has its safety cases below"
        else
            not_ok "$command $option writes a file but has no recipe in tests/outputs.sh"
        fi
    done
done <"$work/helps"

# ---- 2. the safety cases on each writer ----
no_temporary() { ! ls -A "$1" | grep -q '^\.'; }

echo "$writers" | while read -r writer option command mode input suffix; do
    [ "$suffix" = - ] && suffix=""
    what="$command $([ "$mode" = - ] || echo "$mode ")$option"
    dir="$work/$writer"
    mkdir "$dir"

    # input
    if [ "$input" != - ]; then
        cp "$input" "$dir/before"
        out_of_input=$input
        if [ -n "$suffix" ]; then # the output needs a suffix: a link with it to the input
            ln -s "$(realpath "$input")" "$dir/input$suffix"
            out_of_input="$dir/input$suffix"
        fi
        "$writer" "$parosim" "$out_of_input" >/dev/null 2>"$dir/err"
        code=$?
        if [ $code != 0 ] && grep -q "is one of this command's inputs" "$dir/err" &&
            cmp -s "$input" "$dir/before"; then
            ok "$what: its input refused as the output, unchanged"
        else
            not_ok "$what onto its input: exit $code, $(head -c 300 "$dir/err")"
        fi
        rm -f "$dir/before" "$dir/input$suffix"
    fi

    # device
    if mknod "$dir/null$suffix" c 1 3 2>/dev/null; then
        "$writer" "$parosim" "$dir/null$suffix" >/dev/null 2>"$dir/err"
        code=$?
        if [ $code = 0 ] && [ -c "$dir/null$suffix" ]; then
            ok "$what: written through a device, still a device"
        else
            not_ok "$what onto a device: exit $code, device kept: $([ -c "$dir/null$suffix" ] &&
                echo yes || echo no), $(head -c 300 "$dir/err")"
        fi
        rm -f "$dir/null$suffix"
    else
        ok "$what: # SKIP mknod needs root"
    fi

    # fifo
    mkfifo "$dir/fifo$suffix"
    cat "$dir/fifo$suffix" >"$dir/from-fifo" &
    reader=$!
    "$writer" "$parosim" "$dir/fifo$suffix" >/dev/null 2>"$dir/err"
    code=$?
    # a command that never opened the FIFO leaves its reader waiting for a writer: opening
    # it read-write never blocks, and closing it gives the reader its end of file
    exec 5<>"$dir/fifo$suffix"
    exec 5>&-
    wait $reader
    if [ $code = 0 ] && [ -p "$dir/fifo$suffix" ] && [ -s "$dir/from-fifo" ]; then
        ok "$what: written through a FIFO to its reader, still a FIFO"
    else
        not_ok "$what onto a FIFO: exit $code, $(wc -c <"$dir/from-fifo") bytes read, $(head -c 300 "$dir/err")"
    fi
    rm -f "$dir/fifo$suffix"

    # link
    printf 'old\n' >"$dir/target$suffix"
    chmod 640 "$dir/target$suffix"
    ln -s "target$suffix" "$dir/link$suffix"
    "$writer" "$parosim" "$dir/link$suffix" >/dev/null 2>"$dir/err"
    code=$?
    if [ $code = 0 ] && [ -L "$dir/link$suffix" ] && [ "$(stat -c %a "$dir/target$suffix")" = 640 ] &&
        [ "$(head -c 4 "$dir/target$suffix")" != "old
" ] && [ -s "$dir/target$suffix" ] && no_temporary "$dir"; then
        ok "$what: through a symbolic link, the link kept, the target replaced with mode 0640"
    else
        not_ok "$what through a link: exit $code, mode $(stat -c %a "$dir/target$suffix"), $(ls -A "$dir" | tr '\n' ' ')"
    fi

    # folder
    mkdir "$dir/folder$suffix"
    "$writer" "$parosim" "$dir/folder$suffix" >/dev/null 2>"$dir/err"
    code=$?
    if [ $code != 0 ] && grep -q "is a directory" "$dir/err" && [ -z "$(ls -A "$dir/folder$suffix")" ]; then
        ok "$what: a folder refused"
    else
        not_ok "$what onto a folder: exit $code, $(head -c 300 "$dir/err")"
    fi

    # signal before the rename
    printf 'old\n' >"$dir/kept$suffix"
    PAROSIM_FAULT=write-temp:1:TERM "$writer" "$faults" "$dir/kept$suffix" >/dev/null 2>"$dir/err"
    code=$?
    if [ "$writer" = sweep_output ]; then
        # a sweep takes its first signal as an interruption and writes the points done
        # (tests/sweep-signals.sh): the new output whole, exit 143
        if [ $code = 143 ] && [ "$(head -c 4 "$dir/kept$suffix")" != "old" ] && no_temporary "$dir"; then
            ok "$what: SIGTERM before the rename: the points written whole, no temporary file"
        else
            not_ok "$what, SIGTERM before the rename: exit $code, $(ls -A "$dir" | tr '\n' ' ')"
        fi
    elif [ $code = 143 ] && [ "$(cat "$dir/kept$suffix")" = old ] && no_temporary "$dir"; then
        ok "$what: SIGTERM before the rename leaves the old output and no temporary file"
    else
        not_ok "$what, SIGTERM before the rename: exit $code, $(head -c 40 "$dir/kept$suffix"), $(ls -A "$dir" | tr '\n' ' ')"
    fi
    # the subshell of the pipe counts: report back through files
    echo "$n $fail" >"$work/count"
done
read -r n fail <"$work/count"
echo "1..$n"
exit "$fail"
