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
                        [--peak 989e12] [--sms 132]
  --attn       the rows of this kernel (default flash)
  --overhead   keep the per-tile overhead at this value and fit the rate alone
  --check      also print the fit's error on another log's rows (held out)
"""
import argparse
import json
import math


def predict_us(row, rate, overhead, peak, sms):
    heads = row["heads"] // row["tp"]
    flops = 2.0 * row["batch"] * row["seq"] ** 2 * heads * row["head_dim"]
    blocks = math.ceil(row["seq"] / 128)
    tiles = row["batch"] * heads * blocks
    fill = tiles / (math.ceil(tiles / sms) * sms)
    visits = (blocks + 1) / 2
    return 3.5 * flops / (peak * rate * fill * visits / (visits + overhead)) * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("layer_json")
    ap.add_argument("--peak", type=float, default=989e12, help="dense 16-bit FLOP/s")
    ap.add_argument("--sms", type=int, default=132)
    ap.add_argument("--attn", default="flash")
    ap.add_argument("--overhead", type=float)
    ap.add_argument("--check")
    args = ap.parse_args()

    def load(path):
        with open(path) as f:
            return [r for r in json.load(f)["results"]
                    if r["attn"] == args.attn and r["dropout"] == 0]

    rows = load(args.layer_json)
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
    main()
