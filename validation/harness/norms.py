#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""paro-harness norms: times an RMSNorm written in PyTorch's eager operators against one kernel.

Some training codes normalise with an RMSNorm written as PyTorch expressions (torchtitan's
`rmsnorm` norm_type of 2024, HuggingFace's LlamaRMSNorm): the input cast to fp32, squared,
averaged over the row, the reciprocal square root, the product, the cast back and the
weight's product, each a kernel, and autograd's kernels for each backward. parosim counts a
norm as one kernel (4 bytes an element forward, 10 backward) unless the framework profile
says the norm is eager (`framework.fused_norm: false`, decision 60): then 36 forward and 66
backward, kernel by kernel (decisions.md has the list). This times both on the shapes of
the runs that use it, at bf16, with CUDA events: forward, then forward plus backward (the
input's gradient and the weight's), median of --reps after --warmup. The one-kernel
reference is PyTorch's LayerNorm without bias, which parosim counts the same as a fused
RMSNorm.

Output: a table in nccl-tests layout ('#' header and footer lines) and, with -J, JSON.
"""
import statistics
import sys

import torch

from harness_io import argument_parser, check_line, cuda_device, finish, run_header

VERSION = "0.1.0"
EPS = 1e-6
SHAPES = ((8192, 4096), (16384, 5120), (8192, 8192), (16384, 8192))  # tokens, hidden
# parosim's bytes an element (compute.c): one kernel, and the eager RMSNorm
BYTES = {"fused": (4, 10), "eager": (36, 66)}


def eager_rmsnorm(x, weight):
    """An RMSNorm as PyTorch operators: normalise in fp32, cast back, scale."""
    xf = x.float()
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS)
    return y.type_as(x) * weight


def one_kernel(x, weight):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), weight, None, EPS)


def time_call(fn, x, w, g, backward, warmup, reps):
    times = []
    for r in range(warmup + reps):
        x.grad = w.grad = None
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        y = fn(x, w)
        if backward:
            y.backward(g)
        end.record()
        end.synchronize()
        if r >= warmup:
            times.append(start.elapsed_time(end) * 1e3)  # us
    return statistics.median(times), min(times)


def check(dev):
    """The eager RMSNorm against float64."""
    x = torch.randn(64, 256, device=dev, dtype=torch.bfloat16)
    w = torch.rand(256, device=dev, dtype=torch.bfloat16) + 0.5
    xd = x.double()
    ref = xd / torch.sqrt(xd.pow(2).mean(-1, keepdim=True) + EPS) * w.double()
    return float((eager_rmsnorm(x, w).double() - ref).abs().max() / ref.abs().max())


def main():
    args = argument_parser(__doc__).parse_args()
    dev = cuda_device("norms.py")
    out = sys.stdout
    header = run_header(out, "norms", VERSION, dev)
    err = check(dev)
    check_line(out, "eager RMSNorm", err, 1e-2)
    out.write(f"# bf16; median of {args.reps} after {args.warmup} warm-ups; bytes = parosim's "
              "count (fused 4 + 10, eager 36 + 66 an element); bw = bytes / time\n")
    out.write(f"#{'norm':>6} {'tokens':>7} {'hidden':>7} {'pass':>8} {'bytes':>12} "
              f"{'time(us)':>10} {'min(us)':>10} {'bw(GB/s)':>9}\n")
    results = []
    for tokens, hidden in SHAPES:
        x = torch.randn(tokens, hidden, device=dev, dtype=torch.bfloat16, requires_grad=True)
        w = (torch.rand(hidden, device=dev, dtype=torch.bfloat16) + 0.5).requires_grad_()
        g = torch.randn(tokens, hidden, device=dev, dtype=torch.bfloat16)
        for name, fn in (("fused", one_kernel), ("eager", eager_rmsnorm)):
            fwd_b, bwd_b = BYTES[name]
            for pass_name, backward in (("fwd", False), ("fwd+bwd", True)):
                nbytes = tokens * hidden * (fwd_b + (bwd_b if backward else 0))
                med, lo = time_call(fn, x, w, g, backward, args.warmup, args.reps)
                bw = nbytes / (med * 1e-6) / 1e9
                results.append({"norm": name, "tokens": tokens, "hidden": hidden,
                                "pass": pass_name, "bytes": nbytes, "time_us": med,
                                "min_us": lo, "bw_GBps": bw})
                out.write(f" {name:>6} {tokens:7d} {hidden:7d} {pass_name:>8} {nbytes:12d} "
                          f"{med:10.1f} {lo:10.1f} {bw:9.1f}\n")
                out.flush()
        del x, w, g
        torch.cuda.empty_cache()
    return finish(out, results, header, err, 1e-2, args.json)


if __name__ == "__main__":
    sys.exit(main())
