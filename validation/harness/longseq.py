#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""paro-harness longseq: causal attention at long sequences, whole and as ring attention's steps.

parosim times a causal FlashAttention-style kernel with one rate and a tile model
(docs/compute.md) fitted on whole layers of at most 8k tokens; context parallelism's ring
(Transformer Engine's, issue #43) runs the same work as cp kernels a direction, each over one
block of keys, plus the softmax corrections between them. This times, at bf16 and head
dimension 128, on one GPU:

- `causal`: one causal kernel over s tokens and h heads (PyTorch SDPA, the cuDNN and the
  FlashAttention-2 backends), forward and forward plus backward, at 4k to 128k tokens;
- `ring`: what one rank of Transformer Engine 1.4's ring computes for a causal sequence of
  s tokens over cp ranks with load balancing (AttnFuncWithCP: 2 cp chunks, rank r holding
  chunks r and 2cp-1-r): the diagonal step as a causal kernel over its 2 chunks, then cp-1
  non-causal steps of its 2 query chunks over one key chunk (steps i <= r) or its second
  query chunk over both key chunks (i > r); forward with the log-sum-exp and output
  corrections TE makes (in double and in the output's dtype), backward step by step with
  the dq and dkv accumulations. Rank 0 and rank cp-1 (their steps' shapes differ); no
  communication (one GPU): the compute side of the ring. `ring-kernels` is the same
  without the corrections and accumulations.

FLOPs are the causal count (FlashAttention's benchmarks' convention): forward 2 s^2 h d
for a causal kernel, 4 sq sk h d for a block, backward 2.5x the forward. A check first
merges the ring's blocks, with their log-sum-exps, in float64 and compares them with the
whole causal attention.

Output: a table in nccl-tests layout ('#' header and footer lines) and, with -J, JSON.
"""
import math
import sys
import time

import torch
import torch.nn.functional as F

from harness_io import argument_parser, check_line, cuda_device, finish, run_header, time_ms

VERSION = "0.1.0"
HEAD_DIM = 128
# (tokens, heads): a Llama-2-7B layer's heads over tp 1-8 (32 / tp), the lengths the
# NeMo long-sequence rows run on one GPU without CP
CAUSAL = ((4096, 32), (8192, 32), (16384, 16), (16384, 32), (32768, 8), (32768, 16),
          (65536, 4), (65536, 8), (131072, 4))
# (sequence, cp, heads per rank): the NeMo long-sequence rows with CP (results.tsv)
RING = ((32768, 2, 16), (65536, 2, 8), (131072, 4, 8), (262144, 8, 8), (524288, 16, 4),
        (1048576, 32, 4))
BACKENDS = {"cudnn": torch.nn.attention.SDPBackend.CUDNN_ATTENTION,
            "flash": torch.nn.attention.SDPBackend.FLASH_ATTENTION}


def sdpa(backend, q, k, v, causal):
    with torch.nn.attention.sdpa_kernel(BACKENDS[backend]):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)



def ring_steps(cp, rank, c):
    """The (query rows, key rows, causal) blocks of rank @rank's steps, chunks of @c tokens:
    the query rows as 'both' or 'second' of its two chunks, the keys as 'both' or 'first'."""
    steps = [("both", "both", True)]
    for i in range(1, cp):
        steps.append(("both", "first", False) if i <= rank else ("second", "both", False))
    return steps


def math_attention(q, k, v, mask):
    """Float64 attention with its log-sum-exp; @mask is True where a key is visible."""
    s = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    s = s.masked_fill(~mask, float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    return torch.softmax(s, dim=-1) @ v, lse


def check(dev):
    """The ring's blocks of every rank merged by log-sum-exp against whole causal attention
    (float64, 2 heads, cp 4): the largest error over the largest value."""
    cp, c, h, d = 4, 64, 2, 32
    s = 2 * cp * c
    g = torch.Generator(device=dev).manual_seed(1)
    q, k, v = (torch.randn(h, s, d, device=dev, dtype=torch.float64, generator=g)
               for _ in range(3))
    pos = torch.arange(s, device=dev)
    ref, _ = math_attention(q, k, v, pos[None, :] <= pos[:, None])
    worst = 0.0
    chunks = [torch.arange(j * c, (j + 1) * c, device=dev) for j in range(2 * cp)]
    for rank in range(cp):
        # what rank @rank holds, and what the ring brings it at step i: rank (rank - i)'s
        mine = torch.cat((chunks[rank], chunks[2 * cp - 1 - rank]))
        out = torch.zeros(h, 2 * c, d, device=dev, dtype=torch.float64)
        lse = torch.full((h, 2 * c), float("-inf"), device=dev, dtype=torch.float64)
        for i, (qrows, krows, causal) in enumerate(ring_steps(cp, rank, c)):
            src = (rank - i) % cp
            theirs = torch.cat((chunks[src], chunks[2 * cp - 1 - src]))
            qi = mine if qrows == "both" else mine[c:]
            ki = theirs if krows == "both" else theirs[:c]
            mask = (ki[None, :] <= qi[:, None]) if causal else \
                torch.ones(len(qi), len(ki), dtype=torch.bool, device=dev)
            # non-causal steps must see only keys before every query: the balancing's claim
            assert causal or bool((ki[None, :] <= qi[:, None]).all())
            o_i, l_i = math_attention(q[:, qi], k[:, ki], v[:, ki], mask)
            rows = slice(0, 2 * c) if qrows == "both" else slice(c, 2 * c)
            new = torch.logaddexp(lse[:, rows], l_i)
            out[:, rows] = (out[:, rows] * torch.exp(lse[:, rows] - new)[..., None]
                            + o_i * torch.exp(l_i - new)[..., None])
            lse[:, rows] = new
        worst = max(worst, float((out - ref[:, mine]).abs().max() / ref.abs().max()))
    return worst


def causal_row(backend, s, h, dev, args):
    q, k, v = (torch.randn(1, h, s, HEAD_DIM, device=dev, dtype=torch.bfloat16,
                           requires_grad=True) for _ in range(3))
    g = torch.randn(1, h, s, HEAD_DIM, device=dev, dtype=torch.bfloat16)
    fwd_flops = 2.0 * s * s * h * HEAD_DIM

    def fwd():
        with torch.no_grad():
            sdpa(backend, q, k, v, True)

    def step():
        sdpa(backend, q, k, v, True).backward(g)

    rows = []
    for pass_name, fn, flops in (("fwd", fwd, fwd_flops), ("fwd+bwd", step, 3.5 * fwd_flops)):
        med, lo = time_ms(fn, args.warmup, args.reps)
        rows.append({"kind": "causal", "backend": backend, "seq": s, "cp": 1, "rank": 0,
                     "heads": h, "pass": pass_name, "flops": flops, "time_ms": med,
                     "min_ms": lo, "tflops": flops / (med * 1e-3) / 1e12})
    return rows


def ring_row(backend, s, cp, h, rank, dev, args, corrections):
    """One rank's ring attention, forward then backward step by step (module doc)."""
    c = s // (2 * cp)
    bf = dict(device=dev, dtype=torch.bfloat16)
    q = torch.randn(1, h, 2 * c, HEAD_DIM, **bf)
    kvs = [torch.randn(2, 1, h, 2 * c, HEAD_DIM, **bf) for _ in range(2)]  # 2 receive buffers
    steps = ring_steps(cp, rank, c)
    flops = 0.0
    for qrows, krows, causal in steps:
        sq = 2 * c if qrows == "both" else c
        sk = 2 * c if krows == "both" else c
        flops += 4.0 * sq * sk * h * HEAD_DIM * (0.5 if causal else 1.0)

    # each step's inputs, log-sum-exp and output gradient made before the timing, contiguous
    # as TE's [b, 2, s/2, h, d] views of its chunks are
    inputs = []
    for i, (qrows, krows, causal) in enumerate(steps):
        kv = kvs[i % 2]
        qi = (q if qrows == "both" else q[:, :, c:]).detach().clone()
        ki = (kv[0] if krows == "both" else kv[0][:, :, :c]).detach().clone()
        vi = (kv[1] if krows == "both" else kv[1][:, :, :c]).detach().clone()
        l_i = torch.randn(1, h, qi.shape[2], device=dev, dtype=torch.float32)
        inputs.append((qi.requires_grad_(), ki.requires_grad_(), vi.requires_grad_(), l_i,
                       torch.randn_like(qi)))

    def run():
        saved, lse = [], None
        for (qi, ki, vi, l_i, _), (qrows, krows, causal) in zip(inputs, steps):
            saved.append(sdpa(backend, qi, ki, vi, causal))
            if corrections:  # TE's log-sum-exp correction, in double (AttnFuncWithCP)
                if lse is None:
                    lse = l_i.to(torch.double)
                else:
                    part = lse if qrows == "both" else lse[..., c:]
                    part.copy_(torch.logaddexp(part, l_i.to(torch.double)))
        if corrections:  # the output correction of every step, in the output's dtype
            out = torch.zeros_like(q)
            lse_f = lse.float()
            for o, (_, _, _, l_i, _), (qrows, _, _) in zip(saved, inputs, steps):
                part = out if qrows == "both" else out[:, :, c:]
                ref = lse_f if qrows == "both" else lse_f[..., c:]
                part.add_(o * torch.exp(l_i - ref).unsqueeze(-1).to(o.dtype))
        dq = torch.zeros_like(q)
        dkv = torch.zeros(2, 1, h, 2 * c, HEAD_DIM, **bf)
        for o, (qi, ki, vi, _, dout), (qrows, krows, _) in zip(reversed(saved),
                                                               reversed(inputs),
                                                               reversed(steps)):
            gq, gk, gv = torch.autograd.grad(o, (qi, ki, vi), dout)  # backward, reverse order
            if corrections:
                (dq if qrows == "both" else dq[:, :, c:]).add_(gq)
                target = dkv if krows == "both" else dkv[:, :, :, :c]
                target[0].add_(gk)
                target[1].add_(gv)

    med, lo = time_ms(run, args.warmup, args.reps)
    return {"kind": "ring" if corrections else "ring-kernels", "backend": backend, "seq": s,
            "cp": cp, "rank": rank, "heads": h, "pass": "fwd+bwd", "flops": 3.5 * flops,
            "time_ms": med, "min_ms": lo, "tflops": 3.5 * flops / (med * 1e-3) / 1e12}


def main():
    ap = argument_parser(__doc__, warmup=2, reps=5, budget=240.0)
    ap.add_argument("--backends", default="cudnn,flash")
    args = ap.parse_args()
    dev = cuda_device("longseq.py")
    out = sys.stdout
    header = run_header(out, "longseq", VERSION, dev)
    header["cudnn"] = torch.backends.cudnn.version()
    out.write(f"# cudnn: {header['cudnn']}\n")
    err = check(dev)
    check_line(out, "ring attention's merged blocks", err, 1e-10)
    out.write(f"# bf16, head dim {HEAD_DIM}, batch 1; median of {args.reps} after "
              f"{args.warmup} warm-ups; flops = causal count, backward 2.5x forward\n")
    out.write(f"#{'kind':>12} {'backend':>7} {'seq':>8} {'cp':>3} {'rank':>4} {'heads':>5} "
              f"{'pass':>8} {'flops':>10} {'time(ms)':>10} {'min(ms)':>10} {'TFLOP/s':>8}\n")
    results = []
    began = time.monotonic()

    def emit(rows):
        for r in rows:
            results.append(r)
            out.write(f" {r['kind']:>12} {r['backend']:>7} {r['seq']:8d} {r['cp']:3d} "
                      f"{r['rank']:4d} {r['heads']:5d} {r['pass']:>8} {r['flops']:10.3e} "
                      f"{r['time_ms']:10.3f} {r['min_ms']:10.3f} {r['tflops']:8.1f}\n")
        out.flush()

    jobs = []
    for backend in args.backends.split(","):
        jobs += [("ring", backend, s, cp, h, rank, corr) for s, cp, h in RING
                 for rank in (0, cp - 1) for corr in (True, False)]
        jobs += [("causal", backend, s, h) for s, h in CAUSAL]
    for job in jobs:
        if time.monotonic() - began > args.budget:
            out.write(f"# skipped (budget {args.budget:.0f} s): {job}\n")
            continue
        try:
            if job[0] == "causal":
                emit(causal_row(job[1], job[2], job[3], dev, args))
            else:
                emit([ring_row(job[1], job[2], job[3], job[4], job[5], dev, args, job[6])])
        except Exception as e:  # a backend refusing a shape is reported, the rest go on
            out.write(f"# failed: {job}: {type(e).__name__}: {str(e).splitlines()[0][:160]}\n")
        torch.cuda.empty_cache()
    return finish(out, results, header, err, 1e-10, args.json)


if __name__ == "__main__":
    sys.exit(main())
