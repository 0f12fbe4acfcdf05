#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""paro-harness experts: a mixture-of-experts layer's routed experts' GEMMs, expert by expert
and grouped.

parosim times the routed experts of an MoE layer (issue #43) as each local expert's GEMMs
at their own shape (tokens routed to it x hidden x expert ffn), by the GEMM model, one
after another: many small GEMMs are not one large one. Megatron-Core runs them either as a
loop of GEMMs (SequentialMLP) or as one grouped GEMM (TEGroupedMLP, cuBLASLt's or
CUTLASS's grouped kernels). This times both at bf16 on the expert shapes of the published
Qwen3 MoE rows (results.tsv: Qwen3-30B-A3B at ep 8 and 16, Qwen3-235B-A22B at ep 32) over a
range of tokens per expert:

- `loop`: for each local expert, the gated up-projection (T x H by H x 2F), the SwiGLU
  between, the down-projection (T x F by F x H); forward, then forward plus backward (each
  product's input and weight gradients);
- `grouped`: the same products as PyTorch's torch._grouped_mm over all local experts at
  once (where this PyTorch has it).

FLOPs: 2 T H 2F + 2 T F H an expert forward, three times that forward plus backward.
A check compares both forwards with float64 on a small shape.

Output: a table in nccl-tests layout ('#' header and footer lines) and, with -J, JSON.
"""
import sys
import time

import torch
import torch.nn.functional as F

from harness_io import argument_parser, check_line, cuda_device, finish, run_header, time_ms

VERSION = "0.1.0"
# (model, hidden, expert ffn, local experts, tokens per expert ...)
SHAPES = (("qwen3-30b-a3b.ep8", 2048, 768, 16, (256, 512, 1024, 2048, 4096)),
          ("qwen3-30b-a3b.ep16", 2048, 768, 8, (512, 1024, 2048, 4096)),
          ("qwen3-235b-a22b.ep32", 4096, 1536, 4, (512, 1024, 2048, 4096, 8192)))



def swiglu(up):
    gate, lin = up.chunk(2, dim=-1)
    return F.silu(gate) * lin


def loop_forward(xs, w_up, w_down):
    """Each expert's tokens @xs[e] through its up (H x 2F) and down (F x H) weights."""
    return [swiglu(x @ w_up[e]) @ w_down[e] for e, x in enumerate(xs)]


def grouped_forward(x, offs, w_up, w_down):
    up = torch._grouped_mm(x, w_up, offs=offs)
    return torch._grouped_mm(swiglu(up), w_down, offs=offs)


def check(dev):
    """Both forwards against float64 on 3 experts of 64 tokens: the worst error over the
    largest value."""
    g = torch.Generator(device=dev).manual_seed(2)
    e, t, h, f = 3, 64, 256, 128
    x = torch.randn(e * t, h, device=dev, generator=g).to(torch.bfloat16)
    w_up = (torch.randn(e, h, 2 * f, device=dev, generator=g) / h ** 0.5).to(torch.bfloat16)
    w_down = (torch.randn(e, f, h, device=dev, generator=g) / f ** 0.5).to(torch.bfloat16)
    ref = torch.cat(loop_forward(list(x.double().split(t)), w_up.double(), w_down.double()))
    worst = float((torch.cat(loop_forward(list(x.split(t)), w_up, w_down)).double() - ref)
                  .abs().max() / ref.abs().max())
    if hasattr(torch, "_grouped_mm"):
        offs = torch.arange(1, e + 1, device=dev, dtype=torch.int32) * t
        got = grouped_forward(x, offs, w_up, w_down).double()
        worst = max(worst, float((got - ref).abs().max() / ref.abs().max()))
    return worst


def rows_for(name, h, f, experts, tokens, dev, args):
    x = torch.randn(experts * tokens, h, device=dev, dtype=torch.bfloat16, requires_grad=True)
    w_up = (torch.randn(experts, h, 2 * f, device=dev) / h ** 0.5).to(torch.bfloat16)
    w_down = (torch.randn(experts, f, h, device=dev) / f ** 0.5).to(torch.bfloat16)
    w_up.requires_grad_()
    w_down.requires_grad_()
    g = torch.randn(experts * tokens, h, device=dev, dtype=torch.bfloat16)
    offs = torch.arange(1, experts + 1, device=dev, dtype=torch.int32) * tokens
    fwd_flops = experts * (2.0 * tokens * h * 2 * f + 2.0 * tokens * f * h)

    def loop_fwd():
        with torch.no_grad():
            loop_forward(list(x.split(tokens)), w_up, w_down)

    def loop_step():
        torch.cat(loop_forward(list(x.split(tokens)), w_up, w_down)).backward(g)

    def grouped_fwd():
        with torch.no_grad():
            grouped_forward(x, offs, w_up, w_down)

    def grouped_step():
        grouped_forward(x, offs, w_up, w_down).backward(g)

    kinds = [("loop", loop_fwd, loop_step)]
    if hasattr(torch, "_grouped_mm"):
        kinds.append(("grouped", grouped_fwd, grouped_step))
    rows = []
    for kind, fwd, step in kinds:
        for pass_name, fn, flops in (("fwd", fwd, fwd_flops), ("fwd+bwd", step, 3 * fwd_flops)):
            x.grad = w_up.grad = w_down.grad = None
            try:
                med, lo = time_ms(fn, args.warmup, args.reps)
            except Exception as e:  # one kind refusing a shape leaves the other's rows
                rows.append({"shape": name, "kind": kind, "pass": pass_name,
                             "error": f"{type(e).__name__}: {str(e).splitlines()[0][:120]}"})
                continue
            rows.append({"shape": name, "kind": kind, "hidden": h, "ffn": f,
                         "experts": experts, "tokens": tokens, "pass": pass_name,
                         "flops": flops, "time_us": med * 1e3, "min_us": lo * 1e3,
                         "tflops": flops / (med * 1e-3) / 1e12})
    return rows


def main():
    ap = argument_parser(__doc__, warmup=5, reps=20, budget=90.0)
    args = ap.parse_args()
    dev = cuda_device("experts.py")
    out = sys.stdout
    header = run_header(out, "experts", VERSION, dev)
    err = check(dev)
    check_line(out, "experts' forward (loop and grouped)", err, 1e-2)
    out.write(f"# bf16; median of {args.reps} after {args.warmup} warm-ups; grouped: "
              f"torch._grouped_mm {'present' if hasattr(torch, '_grouped_mm') else 'absent'}\n")
    out.write(f"#{'shape':>21} {'kind':>8} {'hidden':>6} {'ffn':>5} {'experts':>7} "
              f"{'tokens':>6} {'pass':>8} {'flops':>10} {'time(us)':>10} {'min(us)':>10} "
              f"{'TFLOP/s':>8}\n")
    results = []
    began = time.monotonic()
    for name, h, f, experts, token_list in SHAPES:
        for tokens in token_list:
            if time.monotonic() - began > args.budget:
                out.write(f"# skipped (budget {args.budget:.0f} s): {name} {tokens}\n")
                continue
            try:
                rows = rows_for(name, h, f, experts, tokens, dev, args)
            except Exception as e:
                out.write(f"# failed: {name} {tokens}: {type(e).__name__}: "
                          f"{str(e).splitlines()[0][:160]}\n")
                continue
            for r in rows:
                if "error" in r:
                    out.write(f"# failed: {name} {tokens} {r['kind']} {r['pass']}: {r['error']}\n")
                    continue
                results.append(r)
                out.write(f" {r['shape']:>21} {r['kind']:>8} {h:6d} {f:5d} {experts:7d} "
                          f"{tokens:6d} {r['pass']:>8} {r['flops']:10.3e} {r['time_us']:10.1f} "
                          f"{r['min_us']:10.1f} {r['tflops']:8.1f}\n")
            out.flush()
            torch.cuda.empty_cache()
    return finish(out, results, header, err, 1e-2, args.json)


if __name__ == "__main__":
    sys.exit(main())
