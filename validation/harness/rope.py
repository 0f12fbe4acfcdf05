#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""paro-harness rope: times a rotary embedding over q and k as the training codes write it.

parosim counts a rotary embedding's kernels by the bytes they move (decision 61,
src/model/compute.h): Transformer Engine's fused kernel reads and writes each element once
each way (4 + 4 bytes an element of q and k); HuggingFace's LLaMA writes
`q * cos + rotate_half(q) * sin` as five operators (20 forward, 30 backward, autograd's
kernels included); torchtitan and Meta's reference code turn an fp32 complex view of q and k
(20 + 20); and the unfused codes copy k and v to every query head under grouped-query
attention (`repeat_kv`, 4 (q + kv) bytes each way a token). Those counts were made from
the operators, not timed. This times each form on the shapes of the corpus's runs, at
bf16: forward, then forward plus backward of q and k together (and of k and v through
`repeat_kv`), median of --reps after --warmup with CUDA events. The one-kernel reference is
the rotate_half form compiled by torch.compile (Inductor fuses it into one kernel a pass);
without a working compiler that row is left out. bw = parosim's bytes / time: compare it
with the elementwise share parosim times these kernels at (0.47 of the datasheet on an
H100, PARO_ELEMENTWISE_BW_SHARE).

Output: a table in nccl-tests layout ('#' header and footer lines) and, with -J, JSON.
--device cpu runs the same code paths on the CPU with wall-clock timing (a smoke test of
the script; its times mean nothing).
"""
import statistics
import sys
import time

import torch

from harness_io import argument_parser, check_line, cuda_device, finish, run_header

VERSION = "0.1.0"
# tokens a micro-batch, query heads, key/value heads, head size: torchtitan's Llama 3 8B
# (8192 x 1), Llama 2 13B (4096 x 2), Llama 2 70B (4096 x 1), and the PaRO paper's LLaMA-7B
# (512 x 4)
SHAPES = ((8192, 32, 8, 128), (8192, 40, 40, 128), (4096, 64, 8, 128), (2048, 32, 32, 128))
# parosim's bytes an element of q and k turned, forward and backward (compute.h)
BYTES = {"fused": (4, 4), "complex": (20, 20), "rotate_half": (20, 30)}
REPEAT_BYTES = 4  # repeat_kv: 4 (q + kv) bytes a token each way, for k and v together


def tables(seq, head_dim, dev):
    """cos and sin for rotate_half ([seq, head_dim], 16 bits as HuggingFace casts them) and
    the complex frequencies for torchtitan's form ([seq, head_dim / 2], complex64)."""
    inv = 1.0 / (10000.0 ** (torch.arange(0, head_dim, 2, device=dev).float() / head_dim))
    angles = torch.outer(torch.arange(seq, device=dev).float(), inv)
    emb = torch.cat((angles, angles), dim=-1)
    return (emb.cos().to(torch.bfloat16), emb.sin().to(torch.bfloat16),
            torch.polar(torch.ones_like(angles), angles))


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def hf_rope(q, k, cos, sin):
    """HuggingFace's apply_rotary_pos_emb on [batch, seq, heads, head_dim] tensors."""
    c, s = cos[None, :, None, :], sin[None, :, None, :]
    return q * c + rotate_half(q) * s, k * c + rotate_half(k) * s


def complex_rope(q, k, freqs):
    """torchtitan's apply_rotary_emb (model.py at 1ea476e9)."""
    f = freqs[None, :, None, :]
    q_ = torch.view_as_complex(q.float().reshape(*q.shape[:-1], -1, 2))
    k_ = torch.view_as_complex(k.float().reshape(*k.shape[:-1], -1, 2))
    return (torch.view_as_real(q_ * f).flatten(3).type_as(q),
            torch.view_as_real(k_ * f).flatten(3).type_as(k))


def repeat_kv(k, v, n_rep):
    """torchtitan's and HuggingFace's copies of k and v to every query head."""
    def rep(x):
        b, s, h, d = x.shape
        return x[:, :, :, None, :].expand(b, s, h, n_rep, d).reshape(b, s, h * n_rep, d)
    return rep(k), rep(v)


def check(dev):
    """Each form against its own rotation in float64: the largest error over the largest
    value (both pair conventions turn each pair by the same angle)."""
    seq, heads, dim = 64, 4, 32
    cos, sin, freqs = tables(seq, dim, dev)
    q = torch.randn(1, seq, heads, dim, device=dev, dtype=torch.bfloat16)
    qd = q.double()
    c64, s64 = cos.double()[None, :, None, :], sin.double()[None, :, None, :]
    ref_half = qd * c64 + rotate_half(qd) * s64
    worst = float((hf_rope(q, q, cos, sin)[0].double() - ref_half).abs().max()
                  / ref_half.abs().max())
    pairs = qd.reshape(1, seq, heads, dim // 2, 2)
    ang = freqs.angle().double()[None, :, None, :]
    ref_pair = torch.stack((pairs[..., 0] * ang.cos() - pairs[..., 1] * ang.sin(),
                            pairs[..., 0] * ang.sin() + pairs[..., 1] * ang.cos()),
                           dim=-1).flatten(3)
    got = complex_rope(q, q, freqs)[0].double()
    return max(worst, float((got - ref_pair).abs().max() / ref_pair.abs().max()))


def time_call(fn, inputs, grads, backward, warmup, reps, cuda):
    times = []
    for r in range(warmup + reps):
        for x in inputs:
            x.grad = None
        if cuda:
            start, end = (torch.cuda.Event(enable_timing=True),
                          torch.cuda.Event(enable_timing=True))
            start.record()
        else:
            t0 = time.perf_counter()
        outs = fn(*inputs)
        if backward:
            torch.autograd.backward(outs, grads)
        if cuda:
            end.record()
            end.synchronize()
            elapsed = start.elapsed_time(end) * 1e3  # us
        else:
            elapsed = (time.perf_counter() - t0) * 1e6
        if r >= warmup:
            times.append(elapsed)
    return statistics.median(times), min(times)


def compiled_rope():
    """rotate_half compiled into one kernel a pass, or None without a working compiler."""
    try:
        fn = torch.compile(hf_rope)
        return fn
    except Exception:  # noqa: BLE001  (torch.compile's absence or failure: row left out)
        return None


def main():
    ap = argument_parser(__doc__)
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                    help="cpu: a smoke test of the script on small shapes (times mean nothing)")
    args = ap.parse_args()
    cuda = args.device == "cuda"
    dev = cuda_device("rope.py") if cuda else torch.device("cpu")
    torch.manual_seed(0)
    shapes = SHAPES if cuda else tuple((64, h, kv, d) for _, h, kv, d in SHAPES[:2])
    out = sys.stdout
    header = run_header(out, "rope", VERSION, dev)
    err = check(dev)
    check_line(out, "both forms", err, 2e-2)
    out.write(f"# bf16; median of {args.reps} after {args.warmup} warm-ups; bytes = parosim's "
              "count over q and k (fused 4 + 4, complex 20 + 20, rotate_half 20 + 30 an "
              "element; repeat_kv 4 (q + kv) a token each way); bw = bytes / time\n")
    out.write(f"#{'form':>12} {'tokens':>7} {'heads':>6} {'kv':>4} {'dim':>4} {'pass':>8} "
              f"{'bytes':>12} {'time(us)':>10} {'min(us)':>10} {'bw(GB/s)':>9}\n")
    fused = compiled_rope() if cuda else None
    results = []
    for tokens, heads, kv_heads, dim in shapes:
        cos, sin, freqs = tables(tokens, dim, dev)
        q = torch.randn(1, tokens, heads, dim, device=dev, dtype=torch.bfloat16,
                        requires_grad=True)
        k = torch.randn(1, tokens, kv_heads, dim, device=dev, dtype=torch.bfloat16,
                        requires_grad=True)
        v = torch.randn_like(k, requires_grad=True)
        turned = tokens * (heads + kv_heads) * dim  # elements of q and k
        forms = [("rotate_half", lambda a, b: hf_rope(a, b, cos, sin)),
                 ("complex", lambda a, b: complex_rope(a, b, freqs))]
        if fused is not None:
            forms.insert(0, ("fused", lambda a, b: fused(a, b, cos, sin)))
        runs = [(f, fn, (q, k), turned, BYTES[f]) for f, fn in forms]
        if kv_heads < heads:
            per_token = REPEAT_BYTES * (heads + kv_heads) * dim
            runs.append(("repeat_kv", lambda a, b: repeat_kv(a, b, heads // kv_heads), (k, v),
                         tokens, (per_token, per_token)))
        for form, fn, inputs, count, (fwd_b, bwd_b) in runs:
            grads = [torch.randn_like(o) for o in fn(*inputs)]
            for pass_name, backward in (("fwd", False), ("fwd+bwd", True)):
                nbytes = count * (fwd_b + (bwd_b if backward else 0))
                try:
                    med, lo = time_call(fn, inputs, grads, backward, args.warmup, args.reps,
                                        cuda)
                except Exception as e:  # noqa: BLE001  (a compiler failing at its first call)
                    if form != "fused":
                        raise
                    out.write(f"# fused row left out: {type(e).__name__}\n")
                    break
                bw = nbytes / (med * 1e-6) / 1e9
                results.append({"form": form, "tokens": tokens, "heads": heads,
                                "kv_heads": kv_heads, "head_dim": dim, "pass": pass_name,
                                "bytes": nbytes, "time_us": med, "min_us": lo, "bw_GBps": bw})
                out.write(f" {form:>12} {tokens:7d} {heads:6d} {kv_heads:4d} {dim:4d} "
                          f"{pass_name:>8} {nbytes:12d} {med:10.1f} {lo:10.1f} {bw:9.1f}\n")
                out.flush()
        del q, k, v
        if cuda:
            torch.cuda.empty_cache()
    return finish(out, results, header, err, 2e-2, args.json)


if __name__ == "__main__":
    sys.exit(main())
