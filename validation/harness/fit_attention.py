#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Fits parosim's FlashAttention kernel model to a layer log's JSON (layer.py -J).

The model (src/model/compute.c, attention_core): the causal forward's 2 b s^2 (a/t) d FLOPs
at peak x rate x fill x n / (n + overhead), the backward 2.5x the forward; fill is the
share of SMs the last wave of b (a/t) ceil(s/128) query tiles keeps busy, n the key blocks
a causal tile visits on average, (ceil(s/128) + 1) / 2. A grid search picks the rate (steps
of 0.005) and the per-tile overhead (steps of 0.25 key blocks) with the least median
relative error over the log's FlashAttention rows without dropout; ties go to the smaller
worst error. Prints the fit and each row's error.

usage: fit_attention.py LAYER.json [--attn flash|cudnn] [--overhead BLOCKS] [--check HELDOUT.json]
                        [--longseq LONGSEQ.json [--ceiling [--rate RATE]]] [--peak 989e12]
                        [--sms 132]
  --attn       the rows of this kernel (default flash)
  --longseq    also fit longseq.py's rows of this backend (forward plus backward, the kernels
               alone, not inside a layer): whole causal kernels of 4k to 128k tokens and
               one rank's ring attention of 32k to 1M tokens over cp 2-32
  --ceiling    with --longseq: keep the layer log's fit (--rate, --overhead; default
               parosim's 0.27 and 2.75) and fit, on the
               long-sequence kernels alone, the second tile model parosim takes the larger
               rate of (gpu.long_attention_efficiency, PARO_ATTENTION_LONG_TILE_OVERHEAD:
               FlashAttention-2 on Hopper, decision 92), on the kernels longer than the
               layer log's longest sequence, its tile cost set so that it meets the layer
               fit there (the layer fit's rows keep their prediction); the layer log's rows
               and the shorter kernels are then held out
  --overhead   keep the per-tile overhead at this value and fit the rate alone
  --check      also print the fit's error on another log's rows (held out)
"""
import argparse
import json
import math
import sys


def predict_us(row, rate, overhead, peak, sms):
    heads = row["heads"] // row["tp"]
    # with context parallelism a rank's s/cp queries meet all s keys (compute.c)
    queries = row.get("queries", row["seq"])
    flops = 2.0 * row["batch"] * queries * row["seq"] * heads * row["head_dim"]
    blocks = math.ceil(row["seq"] / 128)
    tiles = row["batch"] * heads * math.ceil(queries / 128)
    fill = tiles / (math.ceil(tiles / sms) * sms)
    visits = (blocks + 1) / 2
    return 3.5 * flops / (peak * rate * fill * visits / (visits + overhead)) * 1e6


def load_layer(path, attn):
    """A layer log's rows of kernel @attn without dropout."""
    with open(path) as f:
        return [r for r in json.load(f)["results"] if r["attn"] == attn and r["dropout"] == 0]


def fit_ceiling(args, layer_rows, long_rows):
    """The long-sequence tile model (rate, overhead) whose larger-of prediction with the
    layer fit's has the least median relative error on @long_rows (ties: the smaller worst),
    and both sets' errors under it."""
    base = (0.27 if args.rate is None else args.rate,
            2.75 if args.overhead is None else args.overhead)
    longest = max(r["seq"] for r in layer_rows)
    held_kernels = [r for r in long_rows if r["seq"] <= longest]
    long_rows = [r for r in long_rows if r["seq"] > longest]

    def predict(r, ceiling):
        return min(predict_us(r, *base, args.peak, args.sms),
                   predict_us(r, *ceiling, args.peak, args.sms))

    def errors(rows, ceiling):
        return [predict(r, ceiling) / r["attn_us"] - 1 for r in rows]

    # the ceiling meets the layer fit at the longest sequence it was fitted on, and only
    # rises above it beyond: its tile cost is fixed by its rate there
    joint = (math.ceil(longest / 128) + 1) / 2
    base_rate = base[0] * joint / (joint + base[1])
    best = None
    for rate in (x / 1000 for x in range(100, 900, 5)):
        if rate <= base[0]:
            continue
        overhead = joint * (rate / base_rate - 1)
        ranked = sorted(abs(e) for e in errors(long_rows, (rate, overhead)))
        key = (ranked[len(ranked) // 2], ranked[-1])
        if best is None or key < best[0]:
            best = (key, (rate, overhead))
    ceiling = best[1]
    print(f"# ceiling over the {len(long_rows)} kernels (whole or ring) longer than {longest} tokens: rate {ceiling[0]:.3f} of "
          f"peak, per-tile overhead {ceiling[1]:.2f} key blocks (beside {base[0]:.3f}, "
          f"{base[1]:.2f})")
    for name, rows in (("long-sequence kernels (fitted)", long_rows),
                       (f"kernels of {longest} tokens or fewer (held out)", held_kernels),
                       (f"{args.layer_json} (held out)", layer_rows)) + \
            (((f"{args.check} (held out)", load_layer(args.check, args.attn)),)
             if args.check else ()):
        for label, c in (("without the ceiling", (1e-9, 0)), ("with it", ceiling)):
            ranked = sorted(abs(e) for e in errors(rows, c))
            print(f"# {name}, {label}: median |error| {100 * ranked[len(ranked) // 2]:.1f}%, "
                  f"worst {100 * ranked[-1]:.1f}%")
    every = long_rows + held_kernels + layer_rows
    for r, e in zip(every, errors(every, ceiling)):
        print(f"{r['name']:48s} {r['attn_us']:9.1f} us {100 * e:+6.1f}%")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("layer_json")
    ap.add_argument("--peak", type=float, default=989e12, help="dense 16-bit FLOP/s")
    ap.add_argument("--sms", type=int, default=132)
    ap.add_argument("--attn", default="flash")
    ap.add_argument("--overhead", type=float)
    ap.add_argument("--check")
    ap.add_argument("--longseq")
    ap.add_argument("--ceiling", action="store_true")
    ap.add_argument("--rate", type=float, help="with --ceiling: the layer fit's rate")
    args = ap.parse_args()

    def load(path):
        return load_layer(path, args.attn)

    rows = load(args.layer_json)
    long_rows = []
    if args.longseq:
        with open(args.longseq) as f:
            long_rows = [{"name": f"longseq.{r['kind']}.s{r['seq']}.cp{r['cp']}.r{r['rank']}"
                                  f".h{r['heads']}.{r['backend']}",
                          "heads": r["heads"], "tp": 1, "batch": 1, "seq": r["seq"],
                          "queries": r["seq"] // r["cp"], "head_dim": 128,
                          "attn_us": r["time_ms"] * 1e3}
                         for r in json.load(f)["results"]
                         if r["kind"] in ("causal", "ring") and r["backend"] == args.attn
                         and r["pass"] == "fwd+bwd"]
    if args.ceiling:
        if not long_rows:
            ap.error("--ceiling needs --longseq with rows of this kernel")
        return fit_ceiling(args, rows, long_rows)
    rows += long_rows
    overheads = [args.overhead] if args.overhead is not None else [x / 4 for x in range(0, 41)]
    best = None
    for rate in (x / 1000 for x in range(100, 900, 5)):
        for overhead in overheads:
            errors = sorted(abs(predict_us(r, rate, overhead, args.peak, args.sms) /
                                r["attn_us"] - 1) for r in rows)
            key = (errors[len(errors) // 2], errors[-1])
            if best is None or key < best[0]:
                best = (key, rate, overhead)
    (median, worst), rate, overhead = best
    print(f"# {len(rows)} rows: rate {rate:.3f} of peak, per-tile overhead {overhead:.2f} key "
          f"blocks; median |error| {100 * median:.1f}%, worst {100 * worst:.1f}%")
    for r in rows:
        e = predict_us(r, rate, overhead, args.peak, args.sms) / r["attn_us"] - 1
        print(f"{r['name']:48s} {r['attn_us']:9.1f} us {100 * e:+6.1f}%")
    if args.check:
        held = load(args.check)
        errors = [predict_us(r, rate, overhead, args.peak, args.sms) / r["attn_us"] - 1
                  for r in held]
        ranked = sorted(abs(e) for e in errors)
        print(f"# held out, {len(held)} rows of {args.check}: median |error| "
              f"{100 * ranked[len(ranked) // 2]:.1f}%, worst {100 * ranked[-1]:.1f}%")
        for r, e in zip(held, errors):
            print(f"{r['name']:48s} {r['attn_us']:9.1f} us {100 * e:+6.1f}%")


if __name__ == "__main__":
    sys.exit(main())
