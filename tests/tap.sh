# SPDX-License-Identifier: MIT
# Sourced by the shell test scripts: TAP lines numbered as they go; $fail says whether any
# failed. Each script ends with: echo "1..$n"; exit $fail
n=0
fail=0
ok() { n=$((n + 1)); printf "ok %s - %s\n" "$n" "$1"; }
not_ok() { n=$((n + 1)); fail=1; printf "not ok %s - %s\n" "$n" "$1"; }
