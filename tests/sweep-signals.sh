#!/bin/sh
# SPDX-License-Identifier: MIT
# Sweeps that stop early or spread out (TAP lines, judged by exit code): SIGINT ends a
# sweep with exit 130 and the points done written whole; under mpirun (MPI build) the
# ranks split the points and rank 0 writes the bytes a single process writes.
set -u
parosim=$1
root=$2
cd "$root" || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/tap.sh"
scenario=scenarios/llama-7b_a100x8-100g_n32.yaml

# 1. SIGINT: a sweep far longer than the wait, stopped after a second
"$parosim" sweep "$scenario" --vary training.accumulation=1..100 --vary topology.nodes=2..64*2 \
    --vary parallelism.group=1,2,4,8 --jobs 1 -o "$work/big.csv" 2>"$work/err" &
pid=$!
sleep 1
kill -INT $pid
wait $pid
code=$?
done_points=$(sed -n 's/.*interrupted: \([0-9]*\) of 2400 points done.*/\1/p' "$work/err")
rows=$(($(wc -l <"$work/big.csv") - 1))
if [ $code = 130 ] && [ -n "$done_points" ] && [ "$done_points" -lt 2400 ] &&
    [ $rows = $((done_points * 29)) ]; then
    ok "SIGINT: exit 130, $done_points points written whole ($rows rows)"
else
    not_ok "SIGINT: exit $code, '$(tr '\n' ' ' <"$work/err")', $rows rows"
fi
if [ -z "$(ls "$work" | grep -v -e '^big.csv$' -e '^err$')" ]; then
    ok "SIGINT leaves no temporary file"
else
    not_ok "left behind: $(ls "$work")"
fi
# the rows written are the first points in order, each with all its strategies
if awk -F, 'NR > 1 { seen[$1]++ } END { for (p in seen) if (seen[p] != 29) exit 1 }' "$work/big.csv"; then
    ok "every point written has all 29 strategies"
else
    not_ok "a point was written in part"
fi

# 1b. SIGTERM alike (mpirun turns Ctrl-C into SIGTERM to every rank): exit 143, points written
"$parosim" sweep "$scenario" --vary training.accumulation=1..100 --vary topology.nodes=2..64*2 \
    --vary parallelism.group=1,2,4,8 --jobs 1 -o "$work/term.csv" 2>"$work/err" &
pid=$!
sleep 1
kill -TERM $pid
wait $pid
code=$?
done_points=$(sed -n 's/.*interrupted: \([0-9]*\) of 2400 points done.*/\1/p' "$work/err")
rows=$(($(wc -l <"$work/term.csv") - 1))
if [ $code = 143 ] && [ -n "$done_points" ] && [ $rows = $((done_points * 29)) ]; then
    ok "SIGTERM: exit 143, $done_points points written whole"
else
    not_ok "SIGTERM: exit $code, '$(tr '\n' ' ' <"$work/err")', $rows rows"
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
