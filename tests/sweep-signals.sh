#!/bin/sh
# SPDX-License-Identifier: MIT
# Sweeps that stop early or spread out (TAP): a signal ends a sweep with 128 + its number
# and the points done written whole, wherever it lands, and never leaves a temporary file;
# under mpirun (MPI build) the ranks split the points and rank 0 writes the bytes a single
# process writes. The signals are raised by the program itself at named moments
# (parosim-faults, PAROSIM_FAULT=SITE:N:SIGNAL, core/fault.h), never sent after a sleep:
# a sweep that ends before a timed signal arrives made this test fail on fast machines.
set -u
parosim=$1
root=$2
faults=$3
cd "$root" || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/tap.sh"
scenario=scenarios/llama-7b_a100x8-100g_n32.yaml
axes="--vary training.accumulation=1..10 --vary parallelism.group=1,2,4,8"
points=40
strategies=29

# sweep_with FAULT NAME: a 40-point sweep on one worker into $work/NAME.csv, the fault armed;
# sets code, done_points (from the interruption message) and rows
sweep_with() {
    # shellcheck disable=SC2086
    PAROSIM_FAULT=$1 "$faults" sweep "$scenario" $axes --jobs 1 -o "$work/$2.csv" 2>"$work/err"
    code=$?
    done_points=$(sed -n "s/.*interrupted: \([0-9]*\) of $points points done.*/\1/p" "$work/err")
    rows=$(($(wc -l <"$work/$2.csv") - 1))
}

# no_temporary: nothing in $work but the outputs and err
no_temporary() {
    [ -z "$(ls -A "$work" | grep -v -e '\.csv$' -e '^err$' -e '^fifo$')" ]
}

# whole_points FILE: every point written has all its strategies, in point order
whole_points() {
    awk -F, -v n=$strategies 'NR > 1 { if (!($1 in seen)) order[++k] = $1; seen[$1]++ }
        END { for (p in seen) if (seen[p] != n) exit 1; for (i = 2; i <= k; i++)
              if (order[i] + 0 < order[i - 1] + 0) exit 1 }' "$1"
}

# 1. A signal mid-sweep, after the 10th point: no new point starts, the ten are written.
for sig in INT:130 TERM:143; do
    name=${sig%:*}
    want=${sig#*:}
    sweep_with "sweep-point:10:$name" "mid-$name"
    if [ $code = "$want" ] && [ "$done_points" = 10 ] && [ $rows = $((10 * strategies)) ] &&
        whole_points "$work/mid-$name.csv" && no_temporary; then
        ok "SIG$name after point 10 of $points: exit $want, 10 points written whole, no temporary file"
    else
        not_ok "SIG$name mid-sweep: exit $code, '$(tr '\n' ' ' <"$work/err")', $rows rows, $(ls -A "$work")"
    fi
done

# 2. The window around the final write: after the last point, once the temporary file is
# made, once it is written and before its rename, after the rename. Each is one more
# interruption: the whole file, exit 130 and the message, no temporary file.
for site in sweep-point:$points write-open:1 write-temp:1 write-done:1; do
    name=$(echo "$site" | tr ':' '-')
    sweep_with "$site:INT" "$name"
    if [ $code = 130 ] && [ "$done_points" = $points ] && [ $rows = $((points * strategies)) ] &&
        whole_points "$work/$name.csv" && grep -q "written to $work/$name.csv" "$work/err" &&
        no_temporary; then
        ok "SIGINT at $site: exit 130, all $points points written whole, no temporary file"
    else
        not_ok "SIGINT at $site: exit $code, '$(tr '\n' ' ' <"$work/err")', $rows rows, $(ls -A "$work")"
    fi
done

# 3. A second signal while the output is written kills at once: the previous output stays
# as it was, and its temporary file is gone.
printf 'before\n' >"$work/twice.csv"
sweep_with "sweep-point:20:INT,write-temp:1:INT" twice
if [ $code = 130 ] && [ "$(cat "$work/twice.csv")" = before ] && ! grep -q interrupted "$work/err" &&
    no_temporary; then
    ok "a second SIGINT during the write: killed, the old output intact, no temporary file"
else
    not_ok "second SIGINT: exit $code, '$(head -c 200 "$work/twice.csv")', $(ls -A "$work")"
fi

# 4. The same sweep on every core, stopped after its last point: the points are in order
# and whole whatever the threads did.
PAROSIM_FAULT=sweep-point:$points:TERM "$faults" sweep "$scenario" $axes -o "$work/cores.csv" \
    2>"$work/err"
code=$?
if [ $code = 143 ] && whole_points "$work/cores.csv" &&
    [ $(($(wc -l <"$work/cores.csv") - 1)) = $((points * strategies)) ]; then
    ok "SIGTERM after the last point on $(nproc) cores: exit 143, every point whole and in order"
else
    not_ok "SIGTERM on every core: exit $code, '$(tr '\n' ' ' <"$work/err")'"
fi

# 2. MPI: 3 ranks against 1 process, CSV and JSON
if "$parosim" --version | grep -q '(mpi)' && command -v mpirun >/dev/null 2>&1; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
    for format in csv json; do
        "$parosim" sweep "$scenario" --vary training.accumulation=1..7 --vary parallelism.group=2,4,8 \
            --jobs 1 --format $format -o "$work/one.$format"
        mpirun -n 3 "$parosim" sweep "$scenario" --vary training.accumulation=1..7 \
            --vary parallelism.group=2,4,8 --jobs 1 --format $format -o "$work/three.$format" \
            2>"$work/mpi-err"
        if grep -q "21 points over 3 MPI ranks" "$work/mpi-err" &&
            cmp -s "$work/one.$format" "$work/three.$format"; then
            ok "mpirun -n 3 sweep ($format) writes the single-process bytes"
        else
            not_ok "mpirun -n 3 sweep ($format): $(tr '\n' ' ' <"$work/mpi-err")"
        fi
    done
    mpirun -n 2 "$parosim" sweep "$scenario" --vary topology.nodes=2,-1 >/dev/null 2>"$work/mpi-err"
    code=$?
    if [ $code != 0 ] && [ "$(grep -c "must be positive" "$work/mpi-err")" = 1 ]; then
        ok "a bad value under mpirun fails once, on rank 0"
    else
        not_ok "bad value under mpirun: exit $code, $(tr '\n' ' ' <"$work/mpi-err")"
    fi
else
    ok "# SKIP mpirun or an MPI build is missing"
fi
echo "1..$n"
exit $fail
