#!/bin/sh
# SPDX-License-Identifier: MIT
# fuzz/run.sh TARGET SECONDS: runs one libFuzzer target for SECONDS with its seed corpus
# (fuzz/corpus/TARGET, read only) and its dictionary. New inputs go to fuzz/work/TARGET,
# crashes, leaks and timeouts to fuzz/crashes/TARGET-*, the log to fuzz/logs/TARGET.log;
# none of these is committed. One worker: the machine is shared.
# Build first: CC=clang meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined \
#   -Db_lundef=false && ninja -C build-fuzz      (or set PARO_FUZZ_BUILD to another folder)
set -eu
[ $# -eq 2 ] || { echo "usage: $0 TARGET SECONDS" >&2; exit 2; }
target=$1 seconds=$2
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PARO_FUZZ_BUILD:-$root/build-fuzz}
exe=$build/fuzz/fuzz_$target
[ -x "$exe" ] || { echo "$exe not built (see fuzz/README.md)" >&2; exit 2; }
case $target in
  yaml_model|yaml_topology|scenario|scenario_refs|step) dict=yaml ;;
  *) dict=$target ;;
esac
# Seconds one input may take before libFuzzer calls it a hang: `step` and the command-line
# targets simulate, which under ASan and UBSan runs some 30 times slower than a release
# build.
case $target in
  step|cli_*) per_input=10 ;;
  *) per_input=1 ;;
esac
set --
[ -f "$root/fuzz/dict/$dict.dict" ] && set -- "-dict=$root/fuzz/dict/$dict.dict"
mkdir -p "$root/fuzz/work/$target" "$root/fuzz/crashes" "$root/fuzz/logs"
export PARO_SOURCE_ROOT="$root"
# Leaks are checked; a halt on the first UBSan report makes undefined behaviour a crash.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:abort_on_error=1:print_stacktrace=1}"
# libFuzzer stops itself at -max_total_time; timeout is the backstop.
timeout --signal=INT --kill-after=30 $((seconds + 60)) "$exe" "$@" \
  -max_total_time="$seconds" -timeout=$per_input -rss_limit_mb=2048 -max_len=65536 \
  -print_final_stats=1 -artifact_prefix="$root/fuzz/crashes/$target-" \
  "$root/fuzz/work/$target" "$root/fuzz/corpus/$target" 2>&1 | tee "$root/fuzz/logs/$target.log" |
  grep -E '^(#[0-9]+[[:space:]]+(INITED|DONE|RELOAD)|Done |==[0-9]+==ERROR|SUMMARY|artifact_prefix|Test unit written|stat::)' || true
echo "corpus: $(ls "$root/fuzz/work/$target" | wc -l) new + $(ls "$root/fuzz/corpus/$target" | wc -l) seeds"
