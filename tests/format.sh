#!/bin/sh
# SPDX-License-Identifier: MIT
# The tree is formatted by .clang-format (TAP, one line per top-level folder of C sources):
# a deviation fails with the first offending lines. Skipped (exit 77) only where no
# clang-format is installed; scripts/quickstart.sh installs it, so CI never skips.
set -u
root=$1
cd "$root" || exit 1
command -v clang-format >/dev/null 2>&1 || { echo "1..0 # SKIP clang-format not installed"; exit 77; }
. "$(dirname "$0")/tap.sh"
for dir in src tests bench fuzz validation; do
    files=$(git ls-files "$dir" 2>/dev/null | grep -E '\.(c|h|cu)$')
    [ -n "$files" ] || files=$(find "$dir" -name '*.[ch]' -o -name '*.cu' 2>/dev/null)
    [ -n "$files" ] || continue
    # shellcheck disable=SC2086
    if out=$(clang-format --dry-run -Werror $files 2>&1) && [ -z "$out" ]; then
        ok "$dir is clang-formatted"
    else
        echo "$out" | head -20 >&2
        not_ok "$dir is not clang-formatted (clang-format -i on the files named above)"
    fi
done
echo "1..$n"
exit $fail
