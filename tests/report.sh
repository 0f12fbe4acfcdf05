#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `parosim report`: the page is written, self-contained (nothing fetched from a network),
# ranks what `parosim run` ranks, and fails cleanly on bad use; then a real browser
# (Debian's headless chromium, when installed) opens it: a screenshot is taken, the page
# logs nothing to its console, and the rendered table's first row names the best strategy.
# TAP. usage: tests/report.sh PAROSIM ROOT
set -u
parosim=$1
cd "$2" || exit 1
if ! command -v gnuplot >/dev/null 2>&1; then
    echo "1..0 # SKIP gnuplot is not installed"
    exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"
scenario=scenarios/llama-7b_a100x8-100g_n32.yaml
best=$("$parosim" run "$scenario" | sed -n 's/^# best: \([^ ]*\) .*/\1/p')
page=$work/report.html
if "$parosim" report "$scenario" --strategy zero-3 -o "$page" 2>"$work/err" && [ -s "$page" ] &&
    [ ! -s "$work/err" ]; then
    ok "report writes a page, without warnings"
else
    not_ok "report: $(tr '\n' ' ' <"$work/err")"
fi
if ! grep -qiE '(src|href|data)="(https?:)?//' "$page" && grep -q 'data:image/svg+xml;base64,' "$page" &&
    [ "$(grep -c 'data:image/png;base64,' "$page")" = 4 ]; then
    ok "self-contained: the bars as SVG, two timelines and two Gantt charts as PNG, nothing remote"
else
    not_ok "self-contained page"
fi
# every parallel degree by its name, and memory in GiB everywhere on the page (issue #42)
# (and the memory's headroom, decision 84)
if grep -q 'gpus: 32 (4 nodes x 8 A100-SXM4-80GB, 80 GiB, headroom 4 GiB (5%))  tp 1  pp 1  dp 32  group m: 8' "$page" &&
    grep -q '<th>peak (GiB)</th>' "$page" && grep -q 'GiB per GPU at its peak' "$page" &&
    ! grep -qE '[0-9] GB[ )]|\(GB\)' "$page"; then
    ok "the header names gpus, tp, pp and dp; memory in GiB"
else
    not_ok "header or memory unit: $(grep -o 'gpus[^<]*groups' "$page" | head -1)"
fi
first=$(python3 -c '
import re, sys
body = open(sys.argv[1]).read().split("<tbody>", 1)[1]
print(re.findall(r"<td>(.*?)</td>", body.split("</tr>", 1)[0])[1])' "$page")
if [ -n "$best" ] && [ "$first" = "$best" ]; then
    ok "the table's first row is run's best ($best)"
else
    not_ok "first row '$first', run's best '$best'"
fi
"$parosim" report "$scenario" 2>/dev/null
if [ $? = 2 ]; then ok "no -o: usage error"; else not_ok "no -o"; fi
"$parosim" report "$scenario" --strategy zero-9 -o "$work/x.html" 2>/dev/null
if [ $? = 2 ] && [ ! -e "$work/x.html" ]; then
    ok "an unknown strategy: usage error, no file"
else
    not_ok "unknown strategy"
fi
cp "$scenario" "$work/s.yaml"
sed -i 's#\.\./#'"$PWD"'/#' "$work/s.yaml"
"$parosim" report "$work/s.yaml" -o "$work/s.yaml" 2>/dev/null
if [ $? = 1 ] && cmp -s "$scenario" <(sed 's#'"$PWD"'/#../#' "$work/s.yaml"); then
    ok "the scenario as output: refused, untouched"
else
    not_ok "output over the input"
fi

browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
    echo "ok $((n + 1)) # SKIP no chromium: the browser test needs Debian's chromium"
    echo "1..$((n + 1))"
    exit "$fail"
fi
flags=(--headless --no-sandbox --disable-gpu --enable-logging=stderr --v=0
    --virtual-time-budget=20000 --window-size=1280,4200)
timeout 120 "$browser" "${flags[@]}" --screenshot="$work/shot.png" "file://$page" \
    >/dev/null 2>"$work/console"
timeout 120 "$browser" "${flags[@]}" --dump-dom "file://$page" >"$work/dom.html" 2>>"$work/console"
rendered=$(python3 -c '
import re, sys
body = open(sys.argv[1]).read().split("<tbody>", 1)[1]
print(re.findall(r"<td>(.*?)</td>", body.split("</tr>", 1)[0])[1])' "$work/dom.html" 2>/dev/null)
if [ -s "$work/shot.png" ] && ! grep -q ':CONSOLE' "$work/console" && [ "$rendered" = "$best" ]; then
    ok "chromium renders it: screenshot taken, no console messages, first row $rendered"
else
    not_ok "browser: screenshot $(wc -c <"$work/shot.png" 2>/dev/null) B, console: $(grep ':CONSOLE' "$work/console" | head -3 | tr '\n' ' '), first row '$rendered'"
fi
echo "1..$n"
exit "$fail"
