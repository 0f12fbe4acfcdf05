#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""paro-harness layer: times whole transformer layers, forward and backward, in PyTorch.

parosim's compute model (docs/compute.md) adds up a layer from its parts: GEMMs by
shape, the attention core at FlashAttention's rate, elementwise kernels at HBM
bandwidth. The GEMM sweep of paro-harness checks the first part alone; this checks the
sum, on the kernels a framework really launches: a pre-norm GPT layer (LayerNorm, biases,
GeLU MLP of 4h, as Megatron-LM and llm-foundry's MPT build it) or a LLaMA layer
(RMSNorm, no biases, SwiGLU), in bf16, with torch's scaled_dot_product_attention
(backend chosen: flash = FlashAttention-2, cudnn, efficient, math) or eager attention,
optionally one tensor-parallel rank's share (heads and MLP width cut by tp, norms whole).

Each configuration builds a stack of layers with their own weights (enough that the
weights exceed the L2 cache several times, as in a real model), times the stack's forward
and its forward plus backward with CUDA events (median of --reps after --warmup), and
divides by the stack's depth. One profiled iteration splits the GPU time into GEMM,
attention and other kernels, and the wall time into kernels and gaps.

--sustain SECONDS then runs one large layer's forward plus backward back to back and
prints its rate and the SM clock, power and temperature every window: a burst of 50
GEMMs (the GEMM sweep) runs at a clock that a training step does not keep.

Output: a table in nccl-tests layout ('#' header and footer lines, one row a
configuration, times in microseconds per layer) and, with -J, the same as JSON.
"""
import argparse
import datetime
import json
import math
import os
import statistics
import sys
import time
import zlib

import warnings

import torch
import torch.nn.functional as F

# torch's notices (no CUDA context yet for cuBLAS, the profiler's cycles) are not results
warnings.filterwarnings("ignore", category=UserWarning)

VERSION = "0.1.0"


class Shape:
    def __init__(self, arch, hidden, heads, head_dim, ffn, tp, seq, batch, attn, dropout):
        self.arch, self.hidden, self.heads, self.head_dim = arch, hidden, heads, head_dim
        self.ffn, self.tp, self.seq, self.batch = ffn, tp, seq, batch
        self.attn, self.dropout = attn, dropout

    def name(self):
        return (f"{self.arch}.h{self.hidden}.a{self.heads}.d{self.head_dim}.f{self.ffn}"
                f".t{self.tp}.s{self.seq}.b{self.batch}.{self.attn}"
                + (f".p{self.dropout:g}" if self.dropout else ""))

    def local_heads(self):
        return self.heads // self.tp

    def up_width(self):
        """Output width of the MLP's first product on this rank (gate fused for LLaMA)."""
        return (2 if self.arch == "llama" else 1) * self.ffn // self.tp

    def gemm_flops(self):
        """Forward FLOPs of the four linear products of one layer on one rank."""
        t, h = self.seq * self.batch, self.hidden
        q = self.local_heads() * self.head_dim
        return 2.0 * t * h * (3 * q + q + self.up_width() + self.ffn // self.tp)

    def weight_bytes(self):
        return self.gemm_flops() / (self.seq * self.batch)  # 2 bytes a weight, 2 FLOPs a weight


def make_layer(sh, device, dtype, generator):
    """The weights of one layer on one TP rank, nn.Linear's (out, in) layout."""
    h, q = sh.hidden, sh.local_heads() * sh.head_dim
    f_local = sh.ffn // sh.tp

    def w(out_f, in_f):
        t = torch.empty(out_f, in_f, device=device, dtype=dtype)
        t.uniform_(-1.0 / math.sqrt(in_f), 1.0 / math.sqrt(in_f), generator=generator)
        return t.requires_grad_()

    def b(n, value=0.0):
        return torch.full((n,), value, device=device, dtype=dtype).requires_grad_()

    layer = {"qkv": w(3 * q, h), "proj": w(h, q), "up": w(sh.up_width(), h),
             "down": w(h, f_local), "norm1": b(h, 1.0), "norm2": b(h, 1.0)}
    if sh.arch == "gpt":
        layer.update({"norm1_b": b(h), "norm2_b": b(h), "qkv_b": b(3 * q), "proj_b": b(h),
                      "up_b": b(sh.up_width()), "down_b": b(h)})
    return layer


def attention(sh, qkv):
    """Causal self-attention of [b, s, 3q] into [b, s, q]."""
    b, s = sh.batch, sh.seq
    a, d = sh.local_heads(), sh.head_dim
    qkv = qkv.view(b, s, 3, a, d).permute(2, 0, 3, 1, 4)  # 3, b, a, s, d
    q, k, v = qkv[0], qkv[1], qkv[2]
    if sh.attn == "eager":
        scores = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(d))
        mask = torch.ones(s, s, device=qkv.device, dtype=torch.bool).triu_(1)
        scores = scores.masked_fill(mask, float("-inf"))
        probs = F.dropout(torch.softmax(scores.float(), dim=-1).to(q.dtype), sh.dropout)
        out = torch.matmul(probs, v)
    else:
        backend = {"flash": torch.nn.attention.SDPBackend.FLASH_ATTENTION,
                   "cudnn": torch.nn.attention.SDPBackend.CUDNN_ATTENTION,
                   "efficient": torch.nn.attention.SDPBackend.EFFICIENT_ATTENTION,
                   "math": torch.nn.attention.SDPBackend.MATH}[sh.attn]
        with torch.nn.attention.sdpa_kernel(backend):
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                                 dropout_p=sh.dropout)
    return out.transpose(1, 2).reshape(b, s, a * d)


def layer_forward(sh, p, x):
    h = x.shape[-1]
    if sh.arch == "gpt":
        y = F.layer_norm(x, (h,), p["norm1"], p["norm1_b"])
        y = F.linear(y, p["qkv"], p["qkv_b"])
        y = F.linear(attention(sh, y), p["proj"], p["proj_b"])
        x = x + F.dropout(y, sh.dropout)
        y = F.layer_norm(x, (h,), p["norm2"], p["norm2_b"])
        y = F.gelu(F.linear(y, p["up"], p["up_b"]), approximate="tanh")
        y = F.linear(y, p["down"], p["down_b"])
        return x + F.dropout(y, sh.dropout)
    y = F.rms_norm(x, (h,), p["norm1"])
    y = F.linear(attention(sh, F.linear(y, p["qkv"])), p["proj"])
    x = x + y
    y = F.rms_norm(x, (h,), p["norm2"])
    gate, up = F.linear(y, p["up"]).chunk(2, dim=-1)
    return x + F.linear(F.silu(gate) * up, p["down"])


def stack_depth(sh, l2_bytes, cap):
    """Layers in the stack: weights of at least 8x L2 (a real model's do not stay cached),
    at least 2, at most cap."""
    return max(2, min(cap, math.ceil(8 * l2_bytes / sh.weight_bytes())))


def time_ms(fn, warmup, reps):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times), min(times)


def kernel_category(name):
    n = name.lower()
    if any(k in n for k in ("flash", "fmha", "sdpa", "attention", "cudnn_generated")):
        return "attn"
    if any(k in n for k in ("gemm", "nvjet", "xmma", "cutlass", "cublas", "s16816", "sm90_")):
        return "gemm"
    return "other"


def profile_split(fn):
    """GPU time of one call by kernel category (ms), the kernel count, and the wall time."""
    from torch.profiler import ProfilerActivity, profile
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    split = {"gemm": 0.0, "attn": 0.0, "other": 0.0}
    first, last, count = None, None, 0
    for e in prof.events():
        if e.device_type != torch.autograd.DeviceType.CUDA:
            continue
        begin, end = e.time_range.start, e.time_range.end
        split[kernel_category(e.name)] += (end - begin) / 1000.0
        first = begin if first is None else min(first, begin)
        last = end if last is None else max(last, end)
        count += 1
    span = (last - first) / 1000.0 if count else 0.0
    return split, count, span


def check_layer(device):
    """The bf16 layer against the same layer in float64 on upcast weights and inputs: output
    and input gradient within 2e-2 (bf16 storage between products), and nothing NaN."""
    worst = 0.0
    for arch in ("gpt", "llama"):
        sh = Shape(arch, 1024, 8, 128, 2816 if arch == "llama" else 4096, 1, 256, 2, "math", 0.0)
        gen = torch.Generator(device=device).manual_seed(1)
        p = make_layer(sh, device, torch.bfloat16, gen)
        x = torch.randn(sh.batch, sh.seq, sh.hidden, device=device, generator=gen,
                        dtype=torch.bfloat16).requires_grad_()
        gy = torch.randn(sh.batch, sh.seq, sh.hidden, device=device, generator=gen,
                         dtype=torch.bfloat16)
        y = layer_forward(sh, p, x)
        y.backward(gy)
        p64 = {k: v.detach().double().requires_grad_() for k, v in p.items()}
        x64 = x.detach().double().requires_grad_()
        y64 = layer_forward(sh, p64, x64)
        y64.backward(gy.double())
        for got, ref in ((y, y64), (x.grad, x64.grad)):
            if not torch.isfinite(got).all():
                raise RuntimeError(f"check: {arch} layer produced a non-finite value")
            err = ((got.double() - ref).norm() / ref.norm()).item()
            worst = max(worst, err)
            if err > 2e-2:
                raise RuntimeError(f"check: {arch} layer relerr {err:.3e} > 2e-2")
    return worst


def run_shape(sh, args, device, l2_bytes):
    gen = torch.Generator(device=device).manual_seed(zlib.crc32(sh.name().encode()))
    depth = stack_depth(sh, l2_bytes, args.max_depth)
    layers = [make_layer(sh, device, torch.bfloat16, gen) for _ in range(depth)]
    x = torch.randn(sh.batch, sh.seq, sh.hidden, device=device, dtype=torch.bfloat16,
                    generator=gen).requires_grad_()
    gy = torch.randn_like(x)

    def forward():
        y = x
        for p in layers:
            y = layer_forward(sh, p, y)
        return y

    def step():
        forward().backward(gy)
        for p in layers:
            for t in p.values():
                t.grad = None
        x.grad = None

    fwd, fwd_min = time_ms(forward, args.warmup, args.reps)
    both, both_min = time_ms(step, args.warmup, args.reps)
    try:
        split, kernels, span = profile_split(step)
    except Exception as e:  # the split is extra: keep the timings without it
        sys.stderr.write(f"layer.py: no profile of {sh.name()}: {e}\n")
        split, kernels, span = {"gemm": 0.0, "attn": 0.0, "other": 0.0}, 0, 0.0
    n = float(depth)
    gemm_flops = 3.0 * sh.gemm_flops()
    return {"name": sh.name(), "arch": sh.arch, "hidden": sh.hidden, "heads": sh.heads,
            "head_dim": sh.head_dim, "ffn": sh.ffn, "tp": sh.tp, "seq": sh.seq,
            "batch": sh.batch, "attn": sh.attn, "dropout": sh.dropout, "depth": depth,
            "fwd_us": 1000 * fwd / n, "fwdbwd_us": 1000 * both / n,
            "fwdbwd_min_us": 1000 * both_min / n, "gemm_us": 1000 * split["gemm"] / n,
            "attn_us": 1000 * split["attn"] / n, "other_us": 1000 * split["other"] / n,
            "span_us": 1000 * span / n, "kernels": kernels / n,
            "gemm_tflops": gemm_flops / (split["gemm"] / n * 1e-3) / 1e12 if split["gemm"] else 0}


def heldout_shapes():
    """Shapes the models' constants were not fitted on (the standard set was): other
    widths, long sequences as llm-foundry's 16k-64k rows run them, TP 2, LLaMA-13B."""
    out = [Shape("gpt", h, h // 128, 128, 4 * h, 1, s, b, "flash", 0.0)
           for h in (1536, 3072, 6144) for s, b in ((1024, 8), (4096, 2), (16384, 1))]
    out += [Shape("gpt", h, h // 128, 128, 4 * h, 1, 32768, 1, "flash", 0.0)
            for h in (2048, 4096)]
    out += [Shape("gpt", 2048, 16, 128, 8192, 1, 65536, 1, "flash", 0.0)]
    out += [Shape("gpt", h, h // 128, 128, 4 * h, 2, 2048, b, "flash", 0.0)
            for h, b in ((6144, 2), (10240, 1))]
    out += [Shape("llama", 5120, 40, 128, 13824, 1, s, b, "flash", 0.0)
            for s, b in ((2048, 2), (8192, 1))]
    out += [Shape("llama", 3200, 25, 128, 8640, 1, 4096, 2, "flash", 0.0)]
    return out


def standard_shapes(quick):
    """Shapes of the published runs' models (validation/published): MPT 125M to 70B and
    GPT-3 as llm-foundry and Megatron run them, LLaMA-7B and -70B, one TP rank of the
    Megatron runs, and the attention kernels on two of them."""
    gpt = [(768, 12, 64), (1024, 16, 64), (2048, 16, 128), (2560, 20, 128), (4096, 32, 128),
           (5120, 40, 128), (7168, 56, 128), (8192, 64, 128)]
    batches = [(2048, 1), (2048, 4), (512, 8), (8192, 1)]
    if quick:
        gpt, batches = gpt[1:2], batches[:1]
    out = [Shape("gpt", h, a, d, 4 * h, 1, s, b, "flash", 0.0) for h, a, d in gpt
           for s, b in batches]
    if quick:
        return out + [Shape("llama", 1024, 8, 128, 2816, 1, 1024, 1, "flash", 0.0)]
    # one TP rank of Megatron's GPT runs (Narayanan et al. 2021, Korthikanti et al. 2022)
    out += [Shape("gpt", h, a, h // a, 4 * h, t, 2048, b, "flash", 0.0)
            for h, a, t, b in ((8192, 64, 4, 1), (12288, 96, 8, 1), (16384, 128, 8, 1),
                               (20480, 128, 8, 1), (12288, 96, 8, 4))]
    out += [Shape("llama", h, a, 128, f, 1, s, 1, "flash", 0.0)
            for h, a, f in ((4096, 32, 11008), (8192, 64, 28672)) for s in (2048, 4096)]
    for h, a in ((2048, 16), (4096, 32)):
        for attn in ("eager", "cudnn", "efficient"):
            out.append(Shape("gpt", h, a, 128, 4 * h, 1, 2048, 2, attn, 0.0))
        out.append(Shape("gpt", h, a, 128, 4 * h, 1, 2048, 2, "flash", 0.1))
    return out


def nvml_handle():
    try:
        import pynvml
        pynvml.nvmlInit()
        return pynvml, pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())
    except Exception:  # the clock readout is optional: say so in the log instead
        return None, None


def sustain(args, device, out, hidden=8192, seq=4096, batch=1):
    """A GPT layer pair's forward plus backward back to back for args.sustain seconds
    (heads of 128, MLP of 4h): by default one large layer, the most power-hungry case."""
    sh = Shape("gpt", hidden, hidden // 128, 128, 4 * hidden, 1, seq, batch, "flash", 0.0)
    gen = torch.Generator(device=device).manual_seed(7)
    layers = [make_layer(sh, device, torch.bfloat16, gen) for _ in range(2)]
    x = torch.randn(sh.batch, sh.seq, sh.hidden, device=device, dtype=torch.bfloat16,
                    generator=gen).requires_grad_()
    gy = torch.randn_like(x)
    nv, handle = nvml_handle()

    def step():
        y = x
        for p in layers:
            y = layer_forward(sh, p, y)
        y.backward(gy)
        for p in layers:
            for t in p.values():
                t.grad = None

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    out.write(f"# sustained: {sh.name()} x2 layers, forward+backward back to back, "
              f"{args.sustain:g} s in windows of {args.window:g} s\n")
    out.write(f"#{'t(s)':>7} {'steps':>6} {'step(ms)':>9} {'TFLOP/s':>8} {'sm(MHz)':>8} "
              f"{'power(W)':>9} {'temp(C)':>8}\n")
    rows, t_begin = [], time.perf_counter()
    flops_per_step = 2 * 3.0 * sh.gemm_flops()
    while time.perf_counter() - t_begin < args.sustain:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        w0, steps = time.perf_counter(), 0
        start.record()
        while time.perf_counter() - w0 < args.window:
            step()
            steps += 1
            if steps % 4 == 0:
                torch.cuda.synchronize()
        end.record()
        end.synchronize()
        ms = start.elapsed_time(end) / steps
        sm = power = temp = float("nan")
        if nv:
            sm = nv.nvmlDeviceGetClockInfo(handle, nv.NVML_CLOCK_SM)
            power = nv.nvmlDeviceGetPowerUsage(handle) / 1000.0
            temp = nv.nvmlDeviceGetTemperature(handle, nv.NVML_TEMPERATURE_GPU)
        row = {"shape": sh.name(), "t_s": time.perf_counter() - t_begin, "steps": steps,
               "step_ms": ms,
               "gemm_tflops": flops_per_step / (ms * 1e-3) / 1e12, "sm_mhz": sm,
               "power_w": power, "temp_c": temp}
        rows.append(row)
        out.write(f"#{row['t_s']:7.1f} {steps:6d} {ms:9.3f} {row['gemm_tflops']:8.1f} "
                  f"{sm:8.0f} {power:9.1f} {temp:8.0f}\n")
        out.flush()
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="three shapes, for a smoke test")
    ap.add_argument("--heldout", action="store_true",
                    help="the held-out set: shapes the compute model was not fitted on")
    ap.add_argument("--attention", choices=("flash", "cudnn", "efficient"), default="flash",
                    help="the SDPA backend of the set's FlashAttention rows (default flash): "
                         "the same shapes on another fused kernel")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--max-depth", type=int, default=24, help="most layers in a stack")
    ap.add_argument("--sustain", type=float, default=0.0,
                    help="seconds of the sustained run (0: none)")
    ap.add_argument("--window", type=float, default=2.0, help="sustained run's window (s)")
    ap.add_argument("--sustain-shape", action="append", default=[], metavar="H,S,B",
                    help="run the sustained run on GPT layers of hidden H, S tokens, batch B "
                         "instead (repeatable; heads of 128, MLP of 4h)")
    ap.add_argument("--sustain-only", action="store_true",
                    help="skip the timed tables: only the sustained runs")
    ap.add_argument("-J", "--json", help="also write the results as JSON to this file")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("layer.py: no CUDA device")
    device = torch.device("cuda")
    props = torch.cuda.get_device_properties(device)
    l2 = getattr(props, "L2_cache_size", 50 << 20)
    out = sys.stdout
    header = {"tool": f"paro-harness layer {VERSION}",
              "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
              "device": props.name, "sms": props.multi_processor_count,
              "memory_gib": props.total_memory / 2**30, "l2_mib": l2 / 2**20,
              "torch": torch.__version__, "cuda": torch.version.cuda,
              "cudnn": torch.backends.cudnn.version(), "command": " ".join(sys.argv)}
    out.write(f"# {header['tool']}  subcommand: layer (PyTorch)\n")
    out.write(f"# date: {header['date']}\n")
    out.write(f"# device: {props.name}  SMs: {props.multi_processor_count}  memory: "
              f"{header['memory_gib']:.2f} GiB  L2: {header['l2_mib']:.1f} MiB\n")
    out.write(f"# torch: {torch.__version__}  CUDA: {torch.version.cuda}  cuDNN: "
              f"{header['cudnn']}\n# command: {header['command']}\n")
    worst = check_layer(device)
    out.write(f"# check: bf16 layers vs float64, output and input gradient: worst relerr "
              f"{worst:.2e} (limit 2e-2) OK\n")
    out.write("# times per layer of a stack of `depth` layers with their own weights; median of "
              f"{args.reps} after {args.warmup} warm-ups; split from one profiled step\n")
    cols = (f"#{'arch':>5} {'hidden':>6} {'heads':>5} {'hdim':>4} {'ffn':>6} {'tp':>2} "
            f"{'seq':>5} {'batch':>5} {'attn':>9} {'drop':>4} {'depth':>5} {'fwd(us)':>9} "
            f"{'fwdbwd(us)':>10} {'gemm(us)':>9} {'attn(us)':>9} {'other(us)':>9} "
            f"{'span(us)':>9} {'kernels':>7} {'gemmTF':>6}\n")
    out.write(cols)
    results, failures = [], 0
    shapes = ([] if args.sustain_only else
              heldout_shapes() if args.heldout else standard_shapes(args.quick))
    if args.attention != "flash":  # the fused rows only: eager and the backend rows stay
        shapes = [Shape(sh.arch, sh.hidden, sh.heads, sh.head_dim, sh.ffn, sh.tp, sh.seq,
                        sh.batch, args.attention, sh.dropout)
                  for sh in shapes if sh.attn == "flash" and not sh.dropout]
    for sh in shapes:
        try:
            r = run_shape(sh, args, device, l2)
        except Exception as e:  # one shape failing (memory, a backend missing) is reported
            failures += 1
            out.write(f"# FAILED {sh.name()}: {type(e).__name__}: {str(e).splitlines()[0]}\n")
            torch.cuda.empty_cache()
            continue
        results.append(r)
        out.write(f" {r['arch']:>5} {r['hidden']:6d} {r['heads']:5d} {r['head_dim']:4d} "
                  f"{r['ffn']:6d} {r['tp']:2d} {r['seq']:5d} {r['batch']:5d} {r['attn']:>9} "
                  f"{r['dropout']:4.2f} {r['depth']:5d} {r['fwd_us']:9.1f} "
                  f"{r['fwdbwd_us']:10.1f} {r['gemm_us']:9.1f} {r['attn_us']:9.1f} "
                  f"{r['other_us']:9.1f} {r['span_us']:9.1f} {r['kernels']:7.1f} "
                  f"{r['gemm_tflops']:6.0f}\n")
        out.flush()
        torch.cuda.empty_cache()
    sustained = []
    if args.sustain > 0:
        for spec in args.sustain_shape or ["8192,4096,1"]:
            h, s, b = (int(x) for x in spec.split(","))
            sustained += sustain(args, device, out, h, s, b)
    out.write(f"# Configurations: {len(results)}  failed: {failures}\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"header": header, "params": vars(args), "results": results,
                       "sustained": sustained}, f, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
