#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The C API against the CLI: the same scenario through parosim_run prints the CLI's JSON
# byte for byte (from a file and from YAML text), parosim_run_rows gives the CLI CSV's
# ranks, names and figures, and a bad input comes back as a located message. TAP.
# usage: tests/api.sh PAROSIM API_DEMO ROOT
set -u
parosim=$1
demo=$2
cd "$3" || exit 1
scenario=scenarios/llama-7b_a100x8-100g_n32.yaml
pick=zero-3,IIG,NII
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"
result() { # status, description
    if [ "$1" = 0 ]; then ok "$2"; else not_ok "$2"; fi
}
"$parosim" run "$scenario" --strategies $pick --format json >"$tmp/cli.json"
"$demo" "$scenario" $pick json >"$tmp/api.json"
cmp -s "$tmp/cli.json" "$tmp/api.json"
result $? "parosim_run prints the CLI's JSON byte for byte"
"$demo" "$scenario" $pick yaml >"$tmp/yaml.json"
cmp -s "$tmp/cli.json" "$tmp/yaml.json"
result $? "from YAML text (references resolved against its folder) too"
"$parosim" run "$scenario" --strategies $pick --format csv |
    awk -F, 'NR > 1 {printf "%s,%s,%s,%s,%s,%s,%s,%s\n", $1, $2, $4, $5, $7, $8, $9, $14}' >"$tmp/cli.rows"
"$demo" "$scenario" $pick rows >"$tmp/api.rows"
# The CLI prints 10 significant digits and the API 9: the same figure within the API's
# rounding (a reprint of the CLI's text at 9 digits could round the other way).
paste -d, "$tmp/cli.rows" "$tmp/api.rows" | awk -F, '
    NF != 16 { bad = 1 }
    { for (i = 1; i <= 8; i++) {
          a = $i; b = $(i + 8)
          if (i >= 4) { d = a - b; if (d < 0) d = -d; if (d > 1e-8 * (a < 0 ? -a : a)) bad = 1 }
          else if (a != b) bad = 1 } }
    END { exit bad || NR == 0 }' && [ "$(wc -l <"$tmp/cli.rows")" = "$(wc -l <"$tmp/api.rows")" ]
result $? "parosim_run_rows: the CLI CSV's ranks, names and figures ($(wc -l <"$tmp/api.rows") rows)"
printf 'kind: scenario\nschema: 1\nname: x\nmodel: %s/models/llama-7b.yaml\ntopology: %s/topologies/a100x8-100g.yaml\ntraining:\n  accumulaton: 3\n' "$PWD" "$PWD" >"$tmp/bad.yaml"
"$demo" "$tmp/bad.yaml" all json 2>"$tmp/err" >/dev/null
[ $? = 1 ] && grep -qF "api_demo: $tmp/bad.yaml:7:3: unknown key 'accumulaton'" "$tmp/err"
result $? "a bad scenario: NULL and a located message ($(head -c 80 "$tmp/err"))"
"$demo" "$scenario" zero-9 json 2>"$tmp/err" >/dev/null
[ $? = 1 ] && grep -q "unknown strategy 'zero-9'" "$tmp/err"
result $? "an unknown strategy is an error, not a crash"
echo "1..$n"
exit "$fail"
