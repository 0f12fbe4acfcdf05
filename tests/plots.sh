#!/bin/sh
# SPDX-License-Identifier: MIT
# Plot rendering (TAP lines, judged by exit code so that 77 skips): each kind renders a non-empty PNG (and one an SVG) from small
# inputs made by parosim itself; a failed plot leaves no output behind. Skips (exit 77)
# where gnuplot is not installed.
set -u
parosim=$1
root=$2
cd "$root" || exit 1
if ! command -v gnuplot >/dev/null 2>&1; then
    echo "1..0 # SKIP gnuplot is not installed"
    exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/tap.sh"

is_png() { # a PNG signature and more than a header's worth of bytes
    [ -s "$1" ] && [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] &&
        [ "$(wc -c <"$1")" -gt 2000 ]
}

render() { # kind, input, then extra options
    kind=$1
    input=$2
    shift 2
    png=$work/$kind.png
    if "$parosim" plot "$kind" "$input" -o "$png" "$@" 2>"$work/err" && is_png "$png"; then
        ok "$kind renders a PNG"
    else
        not_ok "$kind: $(tr '\n' ' ' <"$work/err")"
    fi
}

scenario=scenarios/llama-7b_a100x8-100g_n32.yaml
"$parosim" run "$scenario" --set training.accumulation=2 --format csv >"$work/run.csv"
"$parosim" run "$scenario" --set training.accumulation=2 --strategies NII,zero-3 \
    --trace "$work/trace.tsv" >/dev/null
"$parosim" sweep "$scenario" --vary topology.nodes=2,4 --vary training.trainable.fraction=1,1/16 \
    --set training.accumulation=2 --strategies NII,zero-2,zero-3 -o "$work/sweep.csv"
header=$("$parosim" collective --topology topologies/a100x8-100g.yaml --op allgather \
    --gpus 16 -b 64M -e 64M --format csv | head -1)
echo "algorithm,gpus,$header" >"$work/coll.csv"
for algo in ring ho-ring; do
    for gpus in 16 32; do
        printf '%s,%s,' "$algo" "$gpus" >>"$work/coll.csv"
        "$parosim" collective --topology topologies/a100x8-100g.yaml --op allgather --algo "$algo" \
            --gpus "$gpus" -b 64M -e 64M --format csv | tail -1 >>"$work/coll.csv"
    done
done

render strategies "$work/run.csv" --title 'test'
render best-map "$work/sweep.csv"
render collective-scaling "$work/coll.csv" --metric time
render throughput-scaling "$work/sweep.csv" --strategies NII,zero-3 --size 640x400
render memory-timeline "$work/trace.tsv" --strategy zero-3 --capacity '80 GiB' --reserved '60 GiB'
render gantt "$work/trace.tsv"
# plans of the oracle on 1, 2 and 4 nodes concatenated, each with its header (the live
# pipeline, plan then plot, runs in the gallery below)
render plan-scaling tests/data/plot/plan-oracle.csv --strategies zero-1,NNI,NII --size 800x700
if [ -f plots/validate.gp ]; then
    render validate tests/data/plot/validate.csv
fi

if "$parosim" plot gantt "$work/trace.tsv" -o "$work/gantt.svg" && grep -q '<svg' "$work/gantt.svg"; then
    ok "an .svg output is SVG"
else
    not_ok "svg output"
fi

# a best-map's ticks are the swept values whole: '25 Gb/s' and '1/64' are no file paths
"$parosim" sweep "$scenario" --vary 'topology.node.nics.bandwidth=25 Gb/s,100 Gb/s' \
    --vary training.trainable.fraction=1,1/64 --set training.accumulation=2 \
    --strategies NII,zero-3 -o "$work/sweep-units.csv"
if "$parosim" plot best-map "$work/sweep-units.csv" -o "$work/map.svg" &&
    grep -q '>25 Gb/s<' "$work/map.svg" && grep -q '>1/64<' "$work/map.svg"; then
    ok "best-map ticks keep values with slashes whole"
else
    not_ok "best-map ticks: $(grep -o '>[^<]*Gb/s<\|>[0-9/]*<' "$work/map.svg" | tr '\n' ' ')"
fi

# failures: exit 1, a message, and no file left where the plot would have gone
"$parosim" plot best-map "$work/run.csv" -o "$work/bad.png" 2>"$work/err"
code=$?
if [ $code = 1 ] && grep -q "not a sweep" "$work/err" && [ ! -e "$work/bad.png" ] &&
    [ -z "$(ls -A "$work" | grep partial)" ]; then
    ok "a run CSV given to best-map fails cleanly"
else
    not_ok "best-map on a run CSV: exit $code, $(tr '\n' ' ' <"$work/err")"
fi
"$parosim" plot plan-scaling "$work/run.csv" -o "$work/bad.png" 2>"$work/err"
code=$?
if [ $code = 1 ] && grep -q "not a plan" "$work/err" && [ ! -e "$work/bad.png" ]; then
    ok "a run CSV given to plan-scaling fails cleanly"
else
    not_ok "plan-scaling on a run CSV: exit $code, $(tr '\n' ' ' <"$work/err")"
fi
PAROSIM_GNUPLOT=/bin/false "$parosim" plot strategies "$work/run.csv" -o "$work/none.png" 2>"$work/err"
code=$?
if [ $code = 1 ] && grep -q "gnuplot" "$work/err" && [ ! -e "$work/none.png" ]; then
    ok "a failing gnuplot leaves no output"
else
    not_ok "failing gnuplot: exit $code, $(tr '\n' ' ' <"$work/err")"
fi
"$parosim" plot pie "$work/run.csv" -o "$work/pie.png" 2>/dev/null
if [ $? = 2 ]; then ok "an unknown kind is a usage error"; else not_ok "unknown kind"; fi

# The gallery (scripts/gallery.sh) renders its ten plots, and its "best strategy" is the
# first row that fits in parosim's own ranking (issue #42: it once said NII, ranked 4th).
best=$("$parosim" run "$scenario" --format json | python3 -c '
import json, sys
print(next(s["name"] for s in json.load(sys.stdin)["strategies"] if s["fits"]))')
if bash scripts/gallery.sh "$parosim" "$work/gallery" 2>"$work/gallery.log" &&
    [ "$(ls "$work/gallery"/*.png | wc -l)" = 10 ] && is_png "$work/gallery/gantt.png" &&
    grep -qE "of the best strategy, $best( |\(|\$)" "$work/gallery.log" &&
    [ "$(grep -c "^task	$best	" "$work/gallery/trace-best.tsv")" -gt 0 ]; then
    ok "the gallery renders, its best strategy is run's first that fits ($best)"
else
    not_ok "gallery: best '$best'; $(grep 'best strategy' "$work/gallery.log" | tr '\n' ' ')"
fi

echo "1..$n"
exit $fail
