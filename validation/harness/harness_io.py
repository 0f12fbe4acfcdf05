# SPDX-License-Identifier: MIT
"""What the PyTorch harness scripts (lora.py, norms.py, rope.py) write around their table:
the run header (tool, date, device, versions, command) and, after the table, the row count
footer, the -J JSON document, and the exit status their accuracy check gives."""
import argparse
import datetime
import json
import statistics
import sys

import torch


def argument_parser(doc, warmup=5, reps=30, budget=None):
    """The options every such script takes: --warmup and --reps of each timing, -J for the
    JSON copy, and with @budget (seconds) --budget, after which a script skips its remaining
    rows (a device session's minutes are counted); its description is the first paragraph
    of the script's @doc."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--warmup", type=int, default=warmup)
    ap.add_argument("--reps", type=int, default=reps)
    ap.add_argument("-J", "--json", help="also write the results as JSON to this file")
    if budget is not None:
        ap.add_argument("--budget", type=float, default=budget,
                        help=f"seconds after which the remaining rows are skipped "
                             f"(default {budget:.0f})")
    return ap


def time_ms(fn, warmup, reps):
    """The median and the least of @reps timings of @fn (ms, between CUDA events) after
    @warmup untimed calls."""
    times = []
    for r in range(warmup + reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        if r >= warmup:
            times.append(start.elapsed_time(end))
    return statistics.median(times), min(times)


def cuda_device(script):
    """The GPU, with PyTorch's seed set; exits naming @script when there is none."""
    if not torch.cuda.is_available():
        sys.exit(f"{script}: no CUDA device")
    torch.manual_seed(0)
    return torch.device("cuda")


def run_header(out, tool, version, dev):
    """Writes the '#' header lines of `paro-harness TOOL` on @dev and returns them as the
    JSON header: the GPU's name, SMs and memory, or "cpu" for a smoke run on the CPU."""
    header = {"tool": f"paro-harness {tool} {version}",
              "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
              "device": "cpu", "torch": torch.__version__, "cuda": torch.version.cuda,
              "command": " ".join(sys.argv)}
    device = "cpu"
    if dev.type == "cuda":
        props = torch.cuda.get_device_properties(dev)
        header.update(device=props.name, sms=props.multi_processor_count,
                      memory_gib=props.total_memory / 2**30)
        device = (f"{props.name}  SMs: {props.multi_processor_count}  memory: "
                  f"{header['memory_gib']:.2f} GiB")
    out.write(f"# {header['tool']}  subcommand: {tool} (PyTorch)\n# date: {header['date']}\n")
    out.write(f"# device: {device}\n")
    out.write(f"# torch: {torch.__version__}  CUDA: {torch.version.cuda}\n"
              f"# command: {header['command']}\n")
    return header


def check_line(out, what, check_error, limit):
    """Writes the '# check:' line: the worst error of @what against float64, as a share of
    the largest value, and whether it is within @limit (bf16's)."""
    shown = f"{limit:.0e}".replace("e-0", "e-")  # 1e-2, as the logs have always said
    out.write(f"# check: {what} vs float64: worst error {check_error:.2e} of the largest value "
              f"(limit {shown}, bf16) {'OK' if check_error <= limit else 'FAILED'}\n")


def finish(out, results, header, check_error, limit, json_path):
    """Writes the footer, the JSON file when @json_path is given, and returns 0 when
    @check_error is within @limit, else 1."""
    out.write(f"# {len(results)} rows\n")
    if json_path:
        with open(json_path, "w") as f:
            json.dump({"header": header, "check_error": check_error, "results": results}, f,
                      indent=1)
    return 0 if check_error <= limit else 1
