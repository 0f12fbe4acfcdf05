#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""paro-harness compile: a Llama block's forward and backward, eager against torch.compile.

Issue #47 asks what `torch.compile` changes in a training step (published FSDP runs are
about 23% faster with it). This times torchtitan's Llama 3 block as its model code writes it
(RMSNorm as PyTorch's operators on fp32, the rotary embedding as an fp32 complex product,
grouped-query attention through SDPA's FlashAttention, SwiGLU as silu(w1 x) * w3 x, the
residual adds), in bf16 on one GPU, forward plus backward over a stack of blocks, eager and
with each block compiled (`torch.compile(block)`, Inductor's default mode, as torchtitan's
`apply_compile` does per TransformerBlock), and splits one profiled step's kernel time into
GEMMs, attention and the rest (the elementwise kernels compile fuses).

Output: a table in nccl-tests layout ('#' header and footer lines) and, with -J, JSON.
"""
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from harness_io import argument_parser, check_line, cuda_device, finish, run_header, time_ms

VERSION = "0.1.0"
# name: hidden, heads, kv heads, ffn (Llama 3 8B's block, a 1024-wide block with 70B's
# per-rank heads and FFN width under TP 8 -- not a TP rank, whose residual stays 8192 wide --
# and Llama 3.2 1B's), sequence, layers in the stack; SDPA picks its backend
SHAPES = (("llama3-8b", 4096, 32, 8, 14336, 8192, 4),
          ("llama3-8b-s2k", 4096, 32, 8, 14336, 2048, 8),
          ("llama3-70b-tp8", 1024, 8, 1, 3584, 8192, 8),
          ("llama3.2-1b", 2048, 32, 8, 8192, 8192, 8))


class RMSNorm(nn.Module):
    """torchtitan's norm_type 'rmsnorm' of 2024: PyTorch operators on fp32."""

    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5)).type_as(x) * self.weight


def freqs(seq, dim, device):
    inv = 1.0 / (500000.0 ** (torch.arange(0, dim, 2, device=device).float() / dim))
    return torch.polar(torch.ones(seq, dim // 2, device=device),
                       torch.outer(torch.arange(seq, device=device).float(), inv))


def rotary(x, cis):
    """torchtitan's apply_rotary_emb: an fp32 complex product."""
    xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(xc * cis[None, :, None, :]).flatten(3).type_as(x)


class Block(nn.Module):
    def __init__(self, hidden, heads, kv_heads, ffn):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, hidden // heads
        self.attention_norm, self.ffn_norm = RMSNorm(hidden), RMSNorm(hidden)
        self.wq = nn.Linear(hidden, heads * self.head_dim, bias=False)
        self.wk = nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(heads * self.head_dim, hidden, bias=False)
        self.w1 = nn.Linear(hidden, ffn, bias=False)
        self.w2 = nn.Linear(ffn, hidden, bias=False)
        self.w3 = nn.Linear(hidden, ffn, bias=False)

    def forward(self, x, cis):
        b, s, _ = x.shape
        h = self.attention_norm(x)
        q = rotary(self.wq(h).view(b, s, self.heads, self.head_dim), cis)
        k = rotary(self.wk(h).view(b, s, self.kv_heads, self.head_dim), cis)
        v = self.wv(h).view(b, s, self.kv_heads, self.head_dim)
        o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2),
                                           v.transpose(1, 2), is_causal=True, enable_gqa=True)
        x = x + self.wo(o.transpose(1, 2).reshape(b, s, -1))
        h = self.ffn_norm(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


def category(name):
    n = name.lower()
    if any(k in n for k in ("flash", "fmha", "attention", "cudnn")):
        return "attention"
    if any(k in n for k in ("gemm", "sm90_xmma", "cutlass", "ampere", "nvjet", "cublas", "wgmma")):
        return "gemm"
    return "other"


def split(fn):
    """One profiled call of @fn: (kernels, {category: us})."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    out, count = {"gemm": 0.0, "attention": 0.0, "other": 0.0}, 0
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            out[category(e.name)] += e.device_time_total if hasattr(e, "device_time_total") \
                else e.cuda_time_total
            count += 1
    return count, out


def check(dev):
    """The compiled block's output and input gradient against the eager one, in bf16 (the
    same function: the worse relative error of the two)."""
    torch.manual_seed(5)
    block = Block(256, 4, 2, 512).to(dev, torch.bfloat16)
    x = torch.randn(2, 128, 256, device=dev, dtype=torch.bfloat16, requires_grad=True)
    cis = freqs(128, 64, dev)
    y = block(x, cis)
    y.float().pow(2).sum().backward()
    g = x.grad.clone()
    x.grad = None
    yc = torch.compile(block)(x, cis)
    yc.float().pow(2).sum().backward()
    return max(float((yc - y).float().norm() / y.float().norm()),
               float((x.grad - g).float().norm() / g.float().norm()))


def main():
    ap = argument_parser(__doc__, warmup=3, reps=10, budget=150.0)
    args = ap.parse_args()
    dev = cuda_device("compile.py")
    out = sys.stdout
    header = run_header(out, "compile", VERSION, dev)
    try:
        err = check(dev)
    except Exception as e:  # compile refusing the block: say so, time what runs
        out.write(f"# check raised {type(e).__name__}: {str(e).splitlines()[0][:160]}\n")
        err = float("inf")
    check_line(out, "the compiled block against the eager one", err, 2e-2)
    out.write(f"# bf16, batch 1; a stack of blocks forward plus backward, median of {args.reps} "
              f"after {args.warmup} warm-ups (compiling included in the first); us a block\n")
    out.write(f"#{'shape':>15} {'seq':>5} {'depth':>5} {'mode':>8} {'time(us)':>10} "
              f"{'min(us)':>10} {'gemm(us)':>9} {'attn(us)':>9} {'other(us)':>9} {'kernels':>7}\n")
    results = []
    began = time.monotonic()
    for name, hidden, heads, kv, ffn, seq, depth in SHAPES:
        if time.monotonic() - began > args.budget:
            out.write(f"# skipped (budget): {name}\n")
            continue
        try:
            blocks = [Block(hidden, heads, kv, ffn).to(dev, torch.bfloat16) for _ in range(depth)]
            cis = freqs(seq, hidden // heads, dev)
            x = torch.randn(1, seq, hidden, device=dev, dtype=torch.bfloat16, requires_grad=True)
            g = torch.randn_like(x)
            for mode in ("eager", "compiled"):
                run = blocks if mode == "eager" else [torch.compile(b) for b in blocks]

                def step():
                    y = x
                    for b in run:
                        y = b(y, cis)
                    y.backward(g)

                med, lo = time_ms(step, args.warmup, args.reps)
                try:
                    kernels, parts = split(step)
                except Exception:  # a profiler without these fields: the times stand alone
                    kernels, parts = 0, {"gemm": 0.0, "attention": 0.0, "other": 0.0}
                r = {"shape": name, "hidden": hidden, "heads": heads, "kv_heads": kv, "ffn": ffn,
                     "seq": seq, "depth": depth, "mode": mode, "time_us": med * 1e3 / depth,
                     "min_us": lo * 1e3 / depth, "kernels": kernels / depth,
                     **{k + "_us": v / depth for k, v in parts.items()}}
                results.append(r)
                out.write(f" {name:>15} {seq:5d} {depth:5d} {mode:>8} {r['time_us']:10.1f} "
                          f"{r['min_us']:10.1f} {r['gemm_us']:9.1f} {r['attention_us']:9.1f} "
                          f"{r['other_us']:9.1f} {r['kernels']:7.1f}\n")
                out.flush()
            del blocks, x, g
            torch.cuda.empty_cache()
        except Exception as e:
            out.write(f"# failed: {name}: {type(e).__name__}: {str(e).splitlines()[0][:160]}\n")
    return finish(out, results, header, err, 2e-2, args.json)


if __name__ == "__main__":
    sys.exit(main())
