#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""paro-harness peaks: a Llama's memory on one GPU under FSDP2, as PyTorch's allocator sees it.

parosim's memory ledger (issue #45) is to be checked against what a real run holds. This
trains Llama-3-style decoders (RMSNorm, rotary embedding, grouped-query attention through
PyTorch SDPA, SwiGLU, untied output head, the loss in fp32 over the logits as torchtitan
computes it) under FSDP2 (`fully_shard` on each block and the model, one rank, parameters
gathered in bf16, gradients reduced in fp32: torchtitan's MixedPrecisionPolicy) with AdamW,
and records, for each configuration:

- `params`, `after_step`: bytes allocated after building the model, and after the first
  step (fp32 parameters, fp32 gradients, AdamW's two fp32 states);
- `fwd_peak`, `step_peak`: the most allocated during the forward of the second step, and
  during its whole forward, backward and optimizer step (torch.cuda.max_memory_allocated
  after a reset);
- `step_reserved`: the most the caching allocator held from the driver in that step
  (max_memory_reserved), and its `alloc_retries` (frees and retries under pressure);
- `context`: memory the driver reports used that PyTorch's allocator does not hold (the
  CUDA context, cuBLAS's and NCCL's own), measured with no tensors live.

Recomputation `none` or `full` (torch.utils.checkpoint around each block, non-reentrant),
the optimizer `foreach` (PyTorch's default) or `fused`.

From 0.2.0 (issue #45, decision 94), also:
- `pool_compute`, `pool_side`: the caching allocator's segments after the second step by the
  stream that owns them (`torch.cuda.memory_snapshot()`, each segment's `stream` and
  `total_size`): the compute stream's, and FSDP's all-gather and reduce-scatter streams'
  together; parosim's reserve is the pools' peaks summed;
- `reserved3`: max_memory_reserved over a third step (is the second step's the steady state);
- runs of two micro-batches, FSDP2 reducing after each (`sync`) or only after the last
  (`nosync`: `set_requires_gradient_sync(False)` before the first, as
  torch.distributed.pipelining's `backward_maybe_with_nosync` runs a stage), whose unsharded
  fp32 gradients parosim holds until the reduction.

Output: a table in nccl-tests layout ('#' header and footer lines) and, with -J, JSON.
"""
import gc
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper

from harness_io import argument_parser, check_line, cuda_device, finish, run_header

VERSION = "0.2.0"
MIB = 2 ** 20
# name: hidden, layers, heads, kv heads, ffn, vocab (Llama 3.2 1B and 3B's shapes, and the
# 1B's with Llama 2's vocabulary, to part the logits from the rest)
SHAPES = {"llama3.2-1b": (2048, 16, 32, 8, 8192, 128256),
          "llama3.2-1b-v32k": (2048, 16, 32, 8, 8192, 32000),
          "llama3.2-3b": (3072, 28, 24, 8, 8192, 128256)}
# (shape, sequence, micro-batch, recomputation, optimizer[, micro-batches a step, sync])
RUNS = (("llama3.2-1b", 8192, 1, "none", "foreach"), ("llama3.2-1b", 8192, 1, "full", "foreach"),
        ("llama3.2-1b", 8192, 1, "none", "fused"), ("llama3.2-1b", 2048, 4, "none", "foreach"),
        ("llama3.2-1b", 2048, 4, "full", "foreach"), ("llama3.2-1b-v32k", 8192, 1, "none", "foreach"),
        ("llama3.2-3b", 8192, 1, "none", "foreach"), ("llama3.2-3b", 8192, 1, "full", "foreach"),
        ("llama3.2-3b", 4096, 2, "none", "fused"),
        ("llama3.2-1b", 4096, 1, "full", "foreach", 2, "sync"),
        ("llama3.2-1b", 4096, 1, "full", "foreach", 2, "nosync"))


def rotary(seq, dim, device):
    inv = 1.0 / (500000.0 ** (torch.arange(0, dim, 2, device=device).float() / dim))
    angles = torch.outer(torch.arange(seq, device=device).float(), inv)
    return torch.cat((angles, angles), -1).cos(), torch.cat((angles, angles), -1).sin()


def rotate(x, cos, sin):
    half = x.shape[-1] // 2
    turned = torch.cat((-x[..., half:], x[..., :half]), -1)
    return x * cos.to(x.dtype) + turned * sin.to(x.dtype)


class Block(nn.Module):
    def __init__(self, hidden, heads, kv_heads, ffn):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, hidden // heads
        self.attn_norm = nn.RMSNorm(hidden, eps=1e-5)
        self.wq = nn.Linear(hidden, heads * self.head_dim, bias=False)
        self.wk = nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(heads * self.head_dim, hidden, bias=False)
        self.ffn_norm = nn.RMSNorm(hidden, eps=1e-5)
        self.w1 = nn.Linear(hidden, ffn, bias=False)
        self.w3 = nn.Linear(hidden, ffn, bias=False)
        self.w2 = nn.Linear(ffn, hidden, bias=False)

    def forward(self, x, cos, sin):
        b, s, _ = x.shape
        h = self.attn_norm(x)
        q = self.wq(h).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = self.wk(h).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.wv(h).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        x = x + self.wo(o.transpose(1, 2).reshape(b, s, -1))
        h = self.ffn_norm(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


class Llama(nn.Module):
    def __init__(self, hidden, layers, heads, kv_heads, ffn, vocab, recompute):
        super().__init__()
        self.recompute = recompute
        self.embed = nn.Embedding(vocab, hidden)
        # full recomputation as torchtitan applies it: each block in a non-reentrant
        # checkpoint wrapper, under fully_shard
        wrap = checkpoint_wrapper if recompute == "full" else (lambda block: block)
        self.layers = nn.ModuleList(wrap(Block(hidden, heads, kv_heads, ffn))
                                    for _ in range(layers))
        self.norm = nn.RMSNorm(hidden, eps=1e-5)
        self.output = nn.Linear(hidden, vocab, bias=False)

    def forward(self, tokens, cos, sin):
        x = self.embed(tokens)
        for layer in self.layers:
            x = layer(x, cos, sin)
        return self.output(self.norm(x))


def loss_of(logits, targets):
    """The loss in fp32 over the logits (torchtitan's cross_entropy_loss)."""
    return F.cross_entropy(logits.flatten(0, 1).float(), targets.flatten(0, 1))


def check(dev):
    """A 2-layer model's loss and one weight's gradient (norm of the difference over the
    norm) against the same model in float64 on random tokens, the worse of the two (the
    model is the one measured, at a small shape, without FSDP)."""
    torch.manual_seed(3)
    m = Llama(256, 2, 4, 2, 512, 1000, "none").to(dev)
    ref = Llama(256, 2, 4, 2, 512, 1000, "none").to(dev).double()
    ref.load_state_dict({k: v.double() for k, v in m.state_dict().items()})
    tokens = torch.randint(0, 1000, (2, 64), device=dev)
    targets = torch.randint(0, 1000, (2, 64), device=dev)
    cos, sin = rotary(64, 64, dev)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = loss_of(m(tokens, cos, sin), targets)
    loss.backward()
    loss_ref = F.cross_entropy(ref(tokens, cos.double(), sin.double()).flatten(0, 1),
                               targets.flatten(0, 1))
    loss_ref.backward()
    g, g_ref = m.layers[0].w1.weight.grad.double(), ref.layers[0].w1.weight.grad
    return max(abs(loss.item() - loss_ref.item()) / abs(loss_ref.item()),
               float((g - g_ref).norm() / g_ref.norm()))


def pools(stream):
    """Bytes the caching allocator holds from the driver, by the stream that owns each
    segment: @stream's (the compute stream) and all the others'."""
    mine = others = 0
    for seg in torch.cuda.memory_snapshot():
        if seg.get("stream") == stream:
            mine += seg["total_size"]
        else:
            others += seg["total_size"]
    return mine, others


def one_run(name, seq, batch, recompute, optim, accum=1, sync="sync", dev=None):
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    hidden, layers, heads, kv, ffn, vocab = SHAPES[name]
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    with torch.device(dev):  # built on the GPU, as a meta-device init would place it
        model = Llama(hidden, layers, heads, kv, ffn, vocab, recompute)
    policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for layer in model.layers:
        fully_shard(layer, mp_policy=policy)
    fully_shard(model, mp_policy=policy)
    n_params = sum(p.numel() for p in model.parameters())
    params = torch.cuda.memory_allocated() - base
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=optim == "foreach",
                            fused=optim == "fused")
    cos, sin = rotary(seq, hidden // heads, dev)
    tokens = torch.randint(0, vocab, (batch, seq), device=dev)
    targets = torch.randint(0, vocab, (batch, seq), device=dev)

    def step(marks):
        torch.cuda.reset_peak_memory_stats()
        for micro in range(accum):
            if sync == "nosync":  # reduce after the last micro-batch only
                model.set_requires_gradient_sync(micro == accum - 1)
            loss = loss_of(model(tokens, cos, sin), targets)
            if micro == 0:
                marks["fwd_peak"] = torch.cuda.max_memory_allocated() - base
            loss.backward()
        marks["bwd_end"] = torch.cuda.memory_allocated() - base
        opt.step()
        opt.zero_grad(set_to_none=True)
        marks["step_peak"] = torch.cuda.max_memory_allocated() - base
        marks["step_reserved"] = torch.cuda.max_memory_reserved()
        stats = torch.cuda.memory_stats()
        # what was asked for before the allocator's rounding, the split blocks' idle bytes
        # (fragmentation) and the segments, at their peaks in the step
        marks["requested_peak"] = stats.get("requested_bytes.all.peak", 0) - base
        marks["inactive_split_peak"] = stats.get("inactive_split_bytes.all.peak", 0)
        marks["segments_peak"] = stats.get("segment.all.peak", 0)
        return loss.item()

    first = {}
    step(first)
    after_step = torch.cuda.memory_allocated() - base
    retries = torch.cuda.memory_stats().get("num_alloc_retries", 0)
    marks = {}
    loss = step(marks)
    pool_compute, pool_side = pools(torch.cuda.current_stream().cuda_stream)
    third = {}
    step(third)
    row = {"shape": name, "hidden": hidden, "layers": layers, "heads": heads, "kv_heads": kv,
           "ffn": ffn, "vocab": vocab, "seq": seq, "batch": batch, "recompute": recompute,
           "optimizer": optim, "n_params": n_params, "params": params,
           "after_step": after_step, "fwd_peak": marks["fwd_peak"],
           "bwd_end": marks["bwd_end"], "step_peak": marks["step_peak"],
           "step_reserved": marks["step_reserved"],
           "first_step_peak": first["step_peak"],
           "requested_peak": marks["requested_peak"],
           "inactive_split_peak": marks["inactive_split_peak"],
           "segments_peak": marks["segments_peak"],
           "alloc_retries": torch.cuda.memory_stats().get("num_alloc_retries", 0) - retries,
           "accumulation": accum, "sync": sync, "pool_compute": pool_compute,
           "pool_side": pool_side, "reserved3": third["step_reserved"], "loss": loss}
    del model, opt, tokens, targets, cos, sin
    gc.collect()
    torch.cuda.empty_cache()
    return row


def main():
    ap = argument_parser(__doc__, warmup=1, reps=1, budget=150.0)
    args = ap.parse_args()
    dev = cuda_device("peaks.py")
    dev = torch.device("cuda", torch.cuda.current_device())
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29517")
    dist.init_process_group("nccl", rank=0, world_size=1, device_id=dev)
    torch.cuda.set_device(dev)
    out = sys.stdout
    header = run_header(out, "peaks", VERSION, dev)
    err = check(dev)
    gc.collect()
    torch.cuda.empty_cache()
    check_line(out, "a 2-layer Llama's loss and gradient", err, 2e-2)
    out.write(f"# cudnn: {torch.backends.cudnn.version()}  nccl: "
              f"{torch.cuda.nccl.version()}\n")
    free, total = torch.cuda.mem_get_info()
    context = total - free - torch.cuda.memory_reserved()
    header["context_bytes"] = context
    out.write(f"# context: {context / MIB:.0f} MiB used outside PyTorch's allocator (CUDA "
              f"context, cuBLAS, NCCL) of {total / MIB:.0f} MiB\n")
    out.write("# MiB allocated (reserved where said); FSDP2 on one rank, bf16 parameters "
              "gathered, fp32 reductions; step = forward, backward, AdamW\n")
    out.write(f"#{'shape':>17} {'seq':>5} {'b':>2} {'recomp':>6} {'optim':>7} {'params(M)':>9} "
              f"{'params':>8} {'after1':>8} {'fwdpeak':>8} {'bwdend':>8} {'steppeak':>8} "
              f"{'reserved':>8} {'requestd':>8} {'inactive':>8} {'segs':>5} {'retries':>7} "
              f"{'A':>2} {'sync':>6} {'poolcomp':>8} {'poolside':>8} {'reserv3':>8}\n")
    results = []
    began = time.monotonic()
    for run in RUNS:
        if time.monotonic() - began > args.budget:
            out.write(f"# skipped (budget {args.budget:.0f} s): {run}\n")
            continue
        try:
            r = one_run(*run, dev=dev)
        except torch.OutOfMemoryError as e:
            out.write(f"# out of memory: {run}: {str(e).splitlines()[0][:160]}\n")
            gc.collect()
            torch.cuda.empty_cache()
            continue
        results.append(r)
        out.write(f" {r['shape']:>17} {r['seq']:5d} {r['batch']:2d} {r['recompute']:>6} "
                  f"{r['optimizer']:>7} {r['n_params'] / 1e6:9.1f} {r['params'] / MIB:8.0f} "
                  f"{r['after_step'] / MIB:8.0f} {r['fwd_peak'] / MIB:8.0f} "
                  f"{r['bwd_end'] / MIB:8.0f} {r['step_peak'] / MIB:8.0f} "
                  f"{r['step_reserved'] / MIB:8.0f} {r['requested_peak'] / MIB:8.0f} "
                  f"{r['inactive_split_peak'] / MIB:8.0f} {r['segments_peak']:5d} "
                  f"{r['alloc_retries']:7d} {r['accumulation']:2d} {r['sync']:>6} "
                  f"{r['pool_compute'] / MIB:8.0f} {r['pool_side'] / MIB:8.0f} "
                  f"{r['reserved3'] / MIB:8.0f}\n")
        out.flush()
    code = finish(out, results, header, err, 2e-2, args.json)
    dist.destroy_process_group()
    return code


if __name__ == "__main__":
    sys.exit(main())
