#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The compute model against whole layers timed on real GPUs, as TAP.

`parosim validate --layers` predicts each layer that validation/harness/layer.py timed
(forward plus backward, split into GEMM, attention and other kernels). The H100 logs set
the model's constants (the fitting set) or were kept aside (held out); the H200 logs were
measured after, on a GPU of the same SMs and clocks with 1.43x the HBM bandwidth
(validation/data/h200/README.md). Each bound below is the median |error| recorded when the
model last changed, plus one point: a change that makes any of them worse fails here. The
H200's `other` bound is what its elementwise share (0.38, src/topo/topology.c) buys: at the
H100's share of its bandwidth the same kernels missed by 20.5% (fitting) and 17.4% (held
out). The cuDNN logs time the same layers with cuDNN's fused attention on the H100; its
rate (0.55 of peak, src/topo/topology.c) was fitted on the first and not on the held-out
one; at FlashAttention-2's rate the held-out set's attention missed by 107%. The H200's
cuDNN logs were measured after the rate was set: fitted alone they give the same 0.550.
The power cap on GEMM-heavy layers (decision 45, knee and slope fitted on the first H100
log alone by validation/harness/fit_power.py) took the GEMM and forward-plus-backward
medians of every log down: the H100's from 4.9-6.7% to 2.0-2.7%, the H200's from 5.0-9.2%
to 2.6-3.8%.

  layer_accuracy.py PAROSIM ROOT
"""
import os
import subprocess
import sys

# (topology, log, {column: median |error| bound in %})
CASES = [
    ("dgx-h100x8", "h100/2026-11-25_layer.txt", {"fwd+bwd": 3.7, "gemm": 3.4, "other": 5.6}),
    ("dgx-h100x8", "h100/2026-11-25_layer-heldout.txt",
     {"fwd+bwd": 3.1, "gemm": 3.0, "other": 5.5}),
    ("hgx-h200x8", "h200/2026-11-26_layer.txt", {"fwd+bwd": 4.8, "gemm": 4.8, "other": 7.5}),
    ("hgx-h200x8", "h200/2026-11-26_layer-heldout.txt",
     {"fwd+bwd": 4.4, "gemm": 3.6, "other": 6.1}),
    ("dgx-h100x8", "h100/2026-11-26_layer-cudnn.txt", {"fwd+bwd": 3.0, "attention": 7.2}),
    ("dgx-h100x8", "h100/2026-11-26_layer-cudnn-heldout.txt",
     {"fwd+bwd": 3.1, "attention": 7.6}),
    ("hgx-h200x8", "h200/2026-11-26_layer-cudnn.txt", {"fwd+bwd": 4.7, "attention": 6.9}),
    ("hgx-h200x8", "h200/2026-11-26_layer-cudnn-heldout.txt",
     {"fwd+bwd": 4.5, "attention": 5.2}),
]


def medians(parosim, root, topology, log):
    """The summary block's median |error| per column (`# column rows median|e| worst`)."""
    out = subprocess.run([parosim, "validate", "--layers",
                          os.path.join(root, "topologies", topology + ".yaml"),
                          os.path.join(root, "validation", "data", log)],
                         capture_output=True, text=True, check=True).stdout
    got = {}
    for line in out.splitlines():
        f = line.lstrip("# ").split()
        if len(f) == 4 and f[2].endswith("%") and f[1].isdigit():
            got[f[0]] = float(f[2].rstrip("%"))
    return got


def main():
    parosim, root = sys.argv[1], sys.argv[2]
    n, failed = 0, False
    for topology, log, bounds in CASES:
        got = medians(parosim, root, topology, log)
        for column, bound in bounds.items():
            n += 1
            value = got.get(column)
            ok = value is not None and value <= bound
            failed |= not ok
            print(f"{'ok' if ok else 'not ok'} {n} - {log} on {topology}: {column} median "
                  f"|error| {value}% (bound {bound}%)")
    print(f"1..{n}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
