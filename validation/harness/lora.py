#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""paro-harness lora: times LoRA adapters' own kernels, forward and backward, in PyTorch.

A LoRA adapter beside a frozen linear runs kernels of its own on every micro-batch: the
dropout over its input, the down product (tokens x in -> tokens x r), the up product
(r -> out), the scale by alpha / r and the add into the frozen product's output; backward,
the same in reverse plus the two small weight gradients and the add of its input gradient
into the frozen path's. With r = 16 the products are bound by the bytes of the tokens x in
and tokens x out tensors they read or write, not by FLOPs, so parosim charges an adapter its
bytes at the elementwise kernels' rate (docs/decisions.md 52). This measures them.

The adapters are NeMo's (nemo/collections/nlp/modules/common/megatron/adapters/
parallel_adapters.py, ParallelLinearAdapter at NeMo v2.0.0.rc0.beta, which MLPerf Training
v4.0's Llama-2-70B LoRA runs used; identity activation, no norm, dropout "pre"), on one
tensor-parallel rank of t with sequence parallelism: the QKV adapter's input is the gathered
layer-norm output (tokens x h, which Transformer Engine returns gathered), its output one
rank's tokens x (q + 2 kv) / t; the attention-output adapter's input is one rank's
tokens x q / t, its output (after NeMo's all-to-all) tokens / t x h. The collectives (the
all-gather of the down product's r / t columns, the all-to-all) are not run: one GPU.

Each case is timed whole (forward, then forward and backward) on fresh inputs, median of
--reps after --warmup with CUDA events, the GPU given a head start so that the CPU's launches
are not timed; the profiler's sum of the kernels' own times is printed beside it, with the
six longest kernels. The row's bytes are those parosim counts for it
(read + written, per the list in decisions.md 52) and bw = bytes / time.

Output: a table in nccl-tests layout ('#' header and footer lines) and, with -J, JSON.
"""
import json
import statistics
import sys

import torch
import torch.nn.functional as F

from harness_io import argument_parser, check_line, cuda_device, run_header

VERSION = "0.1.0"

# A spin of about 2.5 ms at the H100's and H200's 1,980 MHz before each timed call: the CPU
# queues the call's kernels meanwhile, so the events time the GPU running them back to back
# as it does in training, where the layer's large products keep it ahead of the CPU.
HEAD_START_CYCLES = 5_000_000

# Llama-2-70B (hidden 8192, 64 heads of 128, 8 KV heads), one packed sequence of 8,192 tokens:
# MLPerf Training's llama2_70b_lora; rank 16, alpha 32, dropout 0.1 on the adapters' inputs.
H, Q, KV, TOKENS, RANK, ALPHA, DROPOUT = 8192, 8192, 1024, 8192, 16, 32.0, 0.1


class Adapter:
    """One rank's adapter: inputs (tokens_in x n_in), output (tokens_out x n_out); down
    weight r_local x n_in (r / t columns for a column-parallel down product, r for a
    row-parallel one), up weight n_out x r."""

    def __init__(self, name, tokens_in, n_in, r_local, tokens_out, n_out, dev):
        self.name, self.dev = name, dev
        self.tokens_in, self.n_in, self.r_local = tokens_in, n_in, r_local
        self.tokens_out, self.n_out = tokens_out, n_out
        bf = torch.bfloat16
        self.down = (torch.randn(r_local, n_in, device=dev, dtype=bf) * n_in ** -0.5).requires_grad_()
        up_cols = tokens_out * n_out // tokens_in  # one rank's columns of the up product
        self.up = (torch.randn(up_cols, RANK, device=dev, dtype=bf) * RANK ** -0.5).requires_grad_()

    def inputs(self):
        x = torch.randn(self.tokens_in, self.n_in, device=self.dev, dtype=torch.bfloat16)
        base = torch.randn(self.tokens_out, self.n_out, device=self.dev, dtype=torch.bfloat16)
        return x.requires_grad_(), base.requires_grad_()

    def forward(self, x, base, train=True, p=DROPOUT):
        d = F.dropout(x, p, training=train) if p > 0 else x
        a = F.linear(d, self.down)  # tokens x r_local
        if a.shape[1] < RANK:  # ColumnParallelLinear(gather_output=True): the r columns
            a = a.repeat(1, RANK // a.shape[1])
        b = F.linear(a, self.up)  # tokens_in x (tokens_out * n_out / tokens_in)
        b = b.view(self.tokens_out, self.n_out)  # the all-to-all's layout, not its traffic
        return base + b * (ALPHA / RANK)

    def model_bytes(self):
        """The bytes parosim counts for this adapter (decisions.md 52): forward, backward."""
        e_in, e_out = self.tokens_in * self.n_in, self.tokens_out * self.n_out
        forward = 5 * e_in + 2 * e_in + 2 * e_out + 4 * e_out + 6 * e_out
        backward = 4 * e_out + 4 * e_out + 2 * e_in + 2 * e_in + 5 * e_in + 6 * e_in
        return forward, backward


def kept_bytes(ad, p):
    """Bytes the adapter's forward leaves allocated for its backward (autograd's saved
    tensors; its output not counted), per element of its input, with dropout @p."""
    x, base = ad.inputs()
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    out = ad.forward(x, base, p=p)
    torch.cuda.synchronize()
    kept = torch.cuda.memory_allocated() - before - out.numel() * out.element_size()
    del out
    return kept / (ad.tokens_in * ad.n_in)


def adapters(t, dev):
    return [
        Adapter(f"qkv_t{t}", TOKENS, H, max(1, RANK // t), TOKENS, (Q + 2 * KV) // t, dev),
        Adapter(f"proj_t{t}", TOKENS, Q // t, RANK, TOKENS // t, H, dev),
    ]


def kernel_time(fn, reps):
    """GPU time of @fn's kernels alone (torch.profiler's sum of kernel durations, per call),
    and the kernels' names with their share: the launch gaps an eager loop on one stream
    leaves (CPU-bound when kernels are small) are not in it; in training they are hidden
    behind the layer's large products."""
    from torch.profiler import ProfilerActivity, profile
    runs = [fn.prepare() for _ in range(reps)]
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for args in runs:
            fn(*args)
        torch.cuda.synchronize()
    kernels = {}
    for e in prof.events():
        if str(e.device_type).endswith("CUDA"):
            us = getattr(e, "device_time", None)
            us = e.cuda_time if us is None else us
            kernels[e.name] = kernels.get(e.name, 0.0) + us / reps
    total = sum(kernels.values())
    top = sorted(kernels.items(), key=lambda kv: -kv[1])[:6]
    return total, [(name[:60], us) for name, us in top]


def time_case(fn, warmup, reps):
    times = []
    for r in range(warmup + reps):
        args = fn.prepare()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(HEAD_START_CYCLES)  # the GPU waits while the CPU queues the call
        start.record()
        fn(*args)
        end.record()
        end.synchronize()
        if r >= warmup:
            times.append(start.elapsed_time(end) * 1e3)  # us
    return statistics.median(times), min(times)


class Forward:
    def __init__(self, ad):
        self.ad = ad

    def prepare(self):
        return self.ad.inputs()

    def __call__(self, x, base):
        self.ad.forward(x, base)  # with autograd recording, as in training


class ForwardBackward:
    def __init__(self, ad):
        self.ad = ad

    def prepare(self):
        x, base = self.ad.inputs()
        grad = torch.randn_like(base)
        x_grad = torch.randn_like(x)  # the frozen path's input gradient, the adapter's joins it
        return x, base, grad, x_grad

    def __call__(self, x, base, grad, x_grad):
        out = self.ad.forward(x, base)
        out.backward(grad)
        x_grad.add_(x.grad)
        self.ad.down.grad = self.ad.up.grad = None


class Copy:
    """The reference: a bf16 copy of tokens x h (bytes = read + written)."""

    def __init__(self, src, dst):
        self.src, self.dst = src, dst

    def prepare(self):
        return ()

    def __call__(self):
        self.dst.copy_(self.src)


def check(dev):
    """The adapter's output and input gradient (no dropout) against float64."""
    ad = Adapter("check", 256, 512, RANK, 256, 384, dev)
    x, base = ad.inputs()
    out = ad.forward(x, base, train=False)
    grad = torch.randn_like(out)
    out.backward(grad)
    xd, bd = x.detach().double(), base.detach().double()
    down, up = ad.down.detach().double(), ad.up.detach().double()
    ref = bd + (xd @ down.t() @ up.t()) * (ALPHA / RANK)
    ref_grad = (grad.double() * (ALPHA / RANK)) @ up @ down
    scale = ref.abs().max() + ref_grad.abs().max()
    out, x_grad = out.detach().double(), x.grad.double()
    err = max(float((out - ref).abs().max()), float((x_grad - ref_grad).abs().max()))
    return err / float(scale)


def main():
    ap = argument_parser(__doc__)
    ap.add_argument("--tp", default="1,2,4,8", help="tensor-parallel sizes (comma-separated)")
    args = ap.parse_args()
    dev = cuda_device("lora.py")
    out = sys.stdout
    header = run_header(out, "lora", VERSION, dev)
    err = check(dev)
    ok = err <= 1e-2
    check_line(out, "adapter output and input gradient", err, 1e-2)
    out.write(f"# Llama-2-70B, {TOKENS} tokens, r={RANK}, alpha={ALPHA:g}, dropout={DROPOUT}; "
              f"median of {args.reps} after {args.warmup} warm-ups; bytes = parosim's count\n")
    out.write(f"# kernels(us): the profiler's sum of the kernels' own times a call (no launch gaps); "
              f"bw from it\n")
    out.write(f"#{'adapter':>9} {'in':>13} {'out':>13} {'pass':>8} {'bytes':>11} "
              f"{'time(us)':>9} {'min(us)':>9} {'kernels(us)':>11} {'bw(GB/s)':>9}\n")
    results = []
    src = torch.randn(TOKENS, H, device=dev, dtype=torch.bfloat16)
    dst = torch.empty_like(src)
    copy = Copy(src, dst)
    med, lo = time_case(copy, args.warmup, args.reps)
    gpu, _ = kernel_time(copy, 10)
    nbytes = 4 * TOKENS * H
    results.append({"adapter": "copy", "tp": 0, "in": f"{TOKENS}x{H}", "out": f"{TOKENS}x{H}",
                    "pass": "copy", "bytes": nbytes, "time_us": med, "min_us": lo,
                    "kernels_us": gpu, "bw_GBps": nbytes / (gpu * 1e-6) / 1e9})
    out.write(f" {'copy':>9} {f'{TOKENS}x{H}':>13} {f'{TOKENS}x{H}':>13} {'copy':>8} {nbytes:11d} "
              f"{med:9.1f} {lo:9.1f} {gpu:11.1f} {nbytes / (gpu * 1e-6) / 1e9:9.1f}\n")
    del src, dst, copy
    for t in (int(v) for v in args.tp.split(",")):
        for ad in adapters(t, dev):
            f_bytes, b_bytes = ad.model_bytes()
            for name, fn, nbytes in (("fwd", Forward(ad), f_bytes),
                                     ("fwd+bwd", ForwardBackward(ad), f_bytes + b_bytes)):
                med, lo = time_case(fn, args.warmup, args.reps)
                gpu, top = kernel_time(fn, 10)
                bw = nbytes / (gpu * 1e-6) / 1e9
                shape_in = f"{ad.tokens_in}x{ad.n_in}"
                shape_out = f"{ad.tokens_out}x{ad.n_out}"
                results.append({"adapter": ad.name, "tp": t, "in": shape_in, "out": shape_out,
                                "pass": name, "bytes": nbytes, "time_us": med, "min_us": lo,
                                "kernels_us": gpu, "bw_GBps": bw, "top_kernels": top})
                out.write(f" {ad.name:>9} {shape_in:>13} {shape_out:>13} {name:>8} {nbytes:11d} "
                          f"{med:9.1f} {lo:9.1f} {gpu:11.1f} {bw:9.1f}\n")
                for kname, us in top:
                    out.write(f"#   {us:9.1f} us  {kname}\n")
                out.flush()
            torch.cuda.empty_cache()
    out.write("# memory: bytes the forward allocates and keeps for the backward (autograd's "
              "saved tensors, not the output) per input element; parosim's count: 3 with "
              "dropout (its 16-bit output and one-byte mask), 0 new without (the input it "
              "saves exists already), plus the r-wide tensors\n")
    out.write(f"#{'adapter':>9} {'in':>13} {'dropout 0.1':>12} {'dropout 0':>10}\n")
    for t in (int(v) for v in args.tp.split(",")):
        for ad in adapters(t, dev):
            with_dropout, without = kept_bytes(ad, DROPOUT), kept_bytes(ad, 0.0)
            results.append({"adapter": ad.name, "tp": t, "in": f"{ad.tokens_in}x{ad.n_in}",
                            "pass": "memory", "kept_per_input_element_dropout": with_dropout,
                            "kept_per_input_element_no_dropout": without})
            out.write(f" {ad.name:>9} {f'{ad.tokens_in}x{ad.n_in}':>13} {with_dropout:12.3f} "
                      f"{without:10.3f}\n")
            torch.cuda.empty_cache()
    out.write(f"# Rows: {len(results)}  check: {'OK' if ok else 'FAILED'}\n")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"header": header, "params": vars(args), "results": results}, fh, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
