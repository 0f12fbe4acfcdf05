#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Jean Zay's calibrated network (topologies/jean-zay-a100x8-opa.yaml, decision 57), as TAP.

BigScience measured one NCCL AllReduce on the cluster that trained BLOOM: 4e9 bytes (1e9
fp32) over 4 nodes x 8 A100s in 1.5296 s, the median of the four trials after the first
(bigscience-workshop/bigscience, experiments/bandwidth/all_reduce_bench-a100-n4.txt,
2022-01-28, NCCL 2.10.3 over Omni-Path). The topology's link bandwidth was set so that the
flow model `run` uses for data-parallel collectives gives that time; this test fails if the
file or the model drifts from it by more than 1%. It also holds that the datasheet's four
100 Gb/s links would have been far too fast (the reason for the calibration): at least 4x.

  bloom_network.py PAROSIM ROOT
"""
import json
import os
import subprocess
import sys

MEASURED_S, SIZE, GPUS, SLACK = 1.5296, 4000000000, 32, 0.01


def allreduce_s(parosim, topology, sets=()):
    cmd = [parosim, "collective", "--model", "flow", "--algo", "ring", "--topology", topology,
           "--op", "allreduce", "--gpus", str(GPUS), "-b", str(SIZE), "-e", str(SIZE),
           "--format", "json"]
    for s in sets:
        cmd += ["--set", s]
    out = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    return out["results"][0]["time"]


def main():
    parosim, root = sys.argv[1], sys.argv[2]
    topology = os.path.join(root, "topologies", "jean-zay-a100x8-opa.yaml")
    t = allreduce_s(parosim, topology)
    err = t / MEASURED_S - 1
    ok1 = abs(err) <= SLACK
    print(f"{'ok' if ok1 else 'not ok'} 1 - 4e9 B AllReduce on 32 GPUs: {t:.4f} s against the "
          f"measured {MEASURED_S} s ({err:+.2%}, at most {SLACK:.0%})")
    nominal = allreduce_s(parosim, topology, ["node.nics.bandwidth=100 Gb/s"])
    ok2 = t >= 4 * nominal
    print(f"{'ok' if ok2 else 'not ok'} 2 - the datasheet's 100 Gb/s links would give "
          f"{nominal:.4f} s, {t / nominal:.1f}x too fast (at least 4x)")
    print("1..2")
    return 0 if ok1 and ok2 else 1


if __name__ == "__main__":
    sys.exit(main())
