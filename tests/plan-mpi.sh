#!/bin/sh
# SPDX-License-Identifier: MIT
# `parosim plan` under mpirun (TAP): the ranks split the configurations and rank 0 writes
# the bytes a single process writes, table and CSV, with --lga, and with a fixed batch
# where the ranks' own bests differ (the oracle's cluster of 8 small GPUs: a few seconds a
# search); bad input and a bad option are reported once. Skipped without an MPI
# build or mpirun.
set -u
parosim=$1
root=$2
cd "$root" || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/tap.sh"
scenario=tests/data/good/scenario-plan-oracle.yaml
if ! "$parosim" --version | grep -q '(mpi)' || ! command -v mpirun >/dev/null 2>&1; then
    ok "# SKIP mpirun or an MPI build is missing"
    echo "1..$n"
    exit 0
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

# same RANKS LABEL ARGS...: mpirun -n RANKS plan ARGS against one process
same() {
    ranks=$1
    label=$2
    shift 2
    "$parosim" plan "$scenario" "$@" >"$work/one" 2>/dev/null
    mpirun -n "$ranks" "$parosim" plan "$scenario" "$@" >"$work/ranks" 2>"$work/err"
    code=$?
    if [ $code = 0 ] && [ -s "$work/one" ] && cmp -s "$work/one" "$work/ranks" &&
        grep -q "configurations over $ranks MPI ranks" "$work/err"; then
        ok "mpirun -n $ranks plan $label writes the single-process bytes"
    else
        not_ok "mpirun -n $ranks plan $label: exit $code, $(tr '\n' ' ' <"$work/err")"
        diff "$work/one" "$work/ranks" | head -5 | sed 's/^/# /'
    fi
}
same 3 "(table)" --top 8 --all --jobs 1
same 2 "(csv)" --top 8 --all --format csv --jobs 1
same 2 "--lga" --top 8 --all --lga --jobs 1
# rank 1 finds the best here, and rank 0 alone keeps rows beyond its window: rank 0 must
# filter the gathered rows with the best of all ranks
same 2 "--batch-tokens (every row, --explain)" --batch-tokens 32768 --all --top 0 --explain \
    --jobs 1

mpirun -n 2 "$parosim" plan "$scenario" --set topology.nodes=-1 >"$work/out" 2>"$work/err"
code=$?
if [ $code = 1 ] && [ "$(grep -c "must be positive" "$work/err")" = 1 ] && [ ! -s "$work/out" ]; then
    ok "bad input under mpirun: exit 1, reported once"
else
    not_ok "bad input under mpirun: exit $code, $(tr '\n' ' ' <"$work/err")"
fi
mpirun -n 2 "$parosim" plan "$scenario" --lga --dp-only >"$work/out" 2>"$work/err"
code=$?
if [ $code = 2 ] && [ "$(grep -c "exclude each other" "$work/err")" = 1 ]; then
    ok "a usage error under mpirun: exit 2, reported once"
else
    not_ok "usage error under mpirun: exit $code, $(tr '\n' ' ' <"$work/err")"
fi
echo "1..$n"
exit $fail
