#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""paro-harness passes: times the frameworks' elementwise passes over a unit's gradient.

parosim charges some frameworks HBM passes over each micro-batch's gradients
(`framework.grad_passes`, docs/decisions.md 42): PyTorch FSDP1 builds a unit's flat
gradient from its parameters' gradients (the split's backward: a cat), casts it to the
reduce dtype and divides it in place before the reduce-scatter; DeepSpeed's BF16_Optimizer
casts each micro-batch's bf16 gradient to fp32 and adds it into its fp32 copy. These are
large flat kernels, not the small per-token kernels of a layer whose bandwidth share
(0.47 of the datasheet on an H100) parosim measured with layer.py. This measures their
own rate, with the kernels PyTorch launches for them, on buffers of the sizes of real
wrapped units (one transformer layer of 125M to 70B models).

Each pass runs on fresh buffers (enough of them that every timed pass reads at least 4x
the L2 cache), median of --reps after --warmup, timed with CUDA events. The copy row is
the reference: an fp32 copy_ of the same element count, bytes = read + written.

A second table times the loss over the logits as PyTorch runs it for a model that computes
its loss in fp32 (llm-foundry, HuggingFace): cross_entropy(logits.float()) forward and
backward, the gradient back in bf16, against the 28 bytes a logit parosim counts
(compute.c PARO_LOSS_BYTES_PER_LOGIT).

Output: a table in nccl-tests layout ('#' header and footer lines, one row an
(op, elements) pair) and, with -J, the same as JSON.
"""
import argparse
import datetime
import json
import statistics
import sys

import torch

VERSION = "0.1.0"

# One transformer layer's parameter tensors (hidden h, MLP width f; LLaMA's gated MLP when
# gated): the pieces FSDP1 concatenates into a unit's flat gradient.
UNITS = (  # name, hidden, ffn, gated
    ("mpt-125m", 768, 3072, False),
    ("mpt-760m", 1536, 6144, False),
    ("llama-7b", 4096, 11008, True),
    ("mpt-30b", 7168, 28672, False),
    ("mpt-70b", 8192, 32768, False),
)


def unit_shapes(h, f, gated):
    shapes = [(3 * h, h), (h, h), (f, h), (h, f), (h,), (h,)]
    if gated:
        shapes.insert(2, (f, h))
    return shapes


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def passes(n, shapes, dev):
    """The timed passes on n elements: name -> (bytes moved, a function of buffer set i, the
    buffer sets' builder)."""
    bf, f32 = torch.bfloat16, torch.float32

    def grads():  # the parameters' own gradients, as autograd leaves them (flat views)
        return [torch.randn(s, device=dev, dtype=bf).view(-1) for s in shapes]

    return {
        "copy_fp32": (8 * n, lambda b: b[1].copy_(b[0]),
                      lambda: (torch.randn(n, device=dev, dtype=f32), torch.empty(n, device=dev, dtype=f32))),
        "cat_bf16": (4 * n, lambda b: torch.cat(b), grads),
        "cast_bf16_fp32": (6 * n, lambda b: b[0].to(f32),
                           lambda: (torch.randn(n, device=dev, dtype=bf),)),
        "div_fp32": (8 * n, lambda b: b[0].div_(8.0),
                     lambda: (torch.randn(n, device=dev, dtype=f32),)),
        "div_bf16": (4 * n, lambda b: b[0].div_(8.0),
                     lambda: (torch.randn(n, device=dev, dtype=bf),)),
        # DeepSpeed's update_hp_grads: hp.add_(lp.to(fp32)): a cast, then an fp32 add
        "add_cast_fp32": (18 * n, lambda b: b[1].add_(b[0].to(f32)),
                          lambda: (torch.randn(n, device=dev, dtype=bf),
                                   torch.randn(n, device=dev, dtype=f32))),
        # adding a later micro-batch's gradient into the step's (decision 59): PyTorch's
        # AccumulateGrad into a 16-bit .grad (read both, write one), and Megatron-LM's
        # main_grad.add_(grad) into an fp32 main_grad (read 2 + 4, write 4)
        "add_bf16": (6 * n, lambda b: b[1].add_(b[0]),
                     lambda: (torch.randn(n, device=dev, dtype=bf),
                              torch.randn(n, device=dev, dtype=bf))),
        "add_bf16_into_fp32": (10 * n, lambda b: b[1].add_(b[0]),
                               lambda: (torch.randn(n, device=dev, dtype=bf),
                                        torch.randn(n, device=dev, dtype=f32))),
        # FSDP1 with an fp32 reduce: cat, cast, divide (2 b_g + (b_g + b_r) + 2 b_r)
        "fsdp1_fp32": (18 * n, lambda b: torch.cat(b).to(f32).div_(8.0), grads),
        # FSDP1 in pure bf16: cat, divide (2 b_g + 2 b_g)
        "fsdp1_bf16": (8 * n, lambda b: torch.cat(b).div_(8.0), grads),
    }


def time_pass(fn, build, bytes_one, l2, warmup, reps):
    sets = []
    while True:  # enough buffer sets that one round of passes touches >= 4x L2
        sets.append(build())
        if len(sets) * bytes_one >= 4 * l2 or len(sets) >= 64:
            break
    for i in range(warmup):
        fn(sets[i % len(sets)])
    torch.cuda.synchronize()
    times = []
    for r in range(reps):
        s = sets[r % len(sets)]
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(s)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3)  # us
    del sets
    torch.cuda.empty_cache()
    return statistics.median(times), min(times)


LOSSES = ((4096, 32000), (8192, 50368), (16384, 50368))  # tokens, vocabulary


def time_loss(tokens, vocab, dev, warmup, reps):
    logits = torch.randn(tokens, vocab, device=dev, dtype=torch.bfloat16).requires_grad_()
    labels = torch.randint(0, vocab, (tokens,), device=dev)
    times = []
    for r in range(warmup + reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.nn.functional.cross_entropy(logits.float(), labels).backward()
        end.record()
        end.synchronize()
        logits.grad = None
        if r >= warmup:
            times.append(start.elapsed_time(end) * 1e3)
    del logits
    torch.cuda.empty_cache()
    return statistics.median(times), min(times)


def check(dev):
    """The composed FSDP1 pass gives what the three steps give, exactly."""
    shapes = unit_shapes(64, 256, True)
    g = [torch.randn(s, device=dev, dtype=torch.bfloat16).view(-1) for s in shapes]
    ref = torch.cat(g).to(torch.float64) / 8.0
    got = torch.cat(g).to(torch.float32).div_(8.0)
    return float((got.double() - ref).abs().max())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="the two smallest units only")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("-J", "--json", help="also write the results as JSON to this file")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("passes.py: no CUDA device")
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    l2 = getattr(props, "L2_cache_size", 50 << 20)
    out = sys.stdout
    header = {"tool": f"paro-harness passes {VERSION}",
              "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
              "device": props.name, "sms": props.multi_processor_count,
              "memory_gib": props.total_memory / 2**30, "l2_mib": l2 / 2**20,
              "torch": torch.__version__, "cuda": torch.version.cuda, "command": " ".join(sys.argv)}
    out.write(f"# {header['tool']}  subcommand: passes (PyTorch)\n# date: {header['date']}\n")
    out.write(f"# device: {props.name}  SMs: {props.multi_processor_count}  memory: "
              f"{header['memory_gib']:.2f} GiB  L2: {header['l2_mib']:.1f} MiB\n")
    out.write(f"# torch: {torch.__version__}  CUDA: {torch.version.cuda}\n# command: {header['command']}\n")
    err = check(dev)
    out.write(f"# check: cat+cast+divide vs float64: worst abs error {err:.2e} (limit 1e-6) "
              f"{'OK' if err <= 1e-6 else 'FAILED'}\n")
    out.write(f"# median of {args.reps} after {args.warmup} warm-ups; bytes moved = read + written; "
              "share = bw / the fp32 copy's bw at the same elements\n")
    out.write(f"#{'unit':>9} {'elements':>11} {'op':>18} {'bytes':>12} {'time(us)':>10} "
              f"{'min(us)':>10} {'bw(GB/s)':>9} {'share':>6}\n")
    units = UNITS[:2] if args.quick else UNITS
    results = []
    for name, h, f, gated in units:
        shapes = unit_shapes(h, f, gated)
        n = sum(numel(s) for s in shapes)
        copy_bw = None
        for op, (nbytes, fn, build) in passes(n, shapes, dev).items():
            med, lo = time_pass(fn, build, nbytes, l2, args.warmup, args.reps)
            bw = nbytes / (med * 1e-6) / 1e9
            copy_bw = copy_bw or bw
            r = {"unit": name, "elements": n, "op": op, "bytes": nbytes, "time_us": med,
                 "min_us": lo, "bw_GBps": bw, "share_of_copy": bw / copy_bw}
            results.append(r)
            out.write(f" {name:>9} {n:11d} {op:>18} {nbytes:12d} {med:10.1f} {lo:10.1f} "
                      f"{bw:9.1f} {bw / copy_bw:6.3f}\n")
            out.flush()
    out.write(f"# loss: cross_entropy(logits.float()) forward + backward; bytes = 28 a logit; "
              f"share = bw / the largest unit's fp32 copy bw\n")
    out.write(f"#{'tokens':>9} {'vocab':>11} {'op':>18} {'bytes':>12} {'time(us)':>10} "
              f"{'min(us)':>10} {'bw(GB/s)':>9} {'share':>6}\n")
    for tokens, vocab in LOSSES[:1] if args.quick else LOSSES:
        med, lo = time_loss(tokens, vocab, dev, args.warmup, args.reps)
        nbytes = 28 * tokens * vocab
        bw = nbytes / (med * 1e-6) / 1e9
        r = {"unit": "loss", "elements": tokens * vocab, "tokens": tokens, "vocab": vocab,
             "op": "cross_entropy_fp32", "bytes": nbytes, "time_us": med, "min_us": lo,
             "bw_GBps": bw, "share_of_copy": bw / copy_bw}
        results.append(r)
        out.write(f" {tokens:9d} {vocab:11d} {r['op']:>18} {nbytes:12d} {med:10.1f} {lo:10.1f} "
                  f"{bw:9.1f} {bw / copy_bw:6.3f}\n")
        out.flush()
    out.write(f"# Rows: {len(results)}  check: {'OK' if err <= 1e-6 else 'FAILED'}\n")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"header": header, "params": vars(args), "results": results}, fh, indent=1)
    return 0 if err <= 1e-6 else 1


if __name__ == "__main__":
    sys.exit(main())
