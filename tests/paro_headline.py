#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The PaRO paper's headline against its calibrated cluster (decision 30), as TAP.

The paper's abstract (Wu et al., NeurIPS 2024): PaRO "improves the training speed ... up to
266% that of ZeRO-3", the largest gain over all its scenarios. parosim's node bandwidth for
that cluster (topologies/paro-a100x8-calibrated.yaml) was chosen on the two ratios of the
paper's Figure 3a only (validation/published), not on this figure, on the flow model and
with HuggingFace's kernels (decision 63), which this check runs too. So, as a check the
calibration could fail: no scenario of the paper's that scenarios/ holds may give a PaRO
strategy more than 2.66x ZeRO-3's speed (10% allowed), and the largest gain must reach the
2.28x the paper measured for IIG in one of them (10% allowed). On one 100 Gb/s NIC per
node, the paper's words, the five give far larger gains (scenarios/README.md quotes them,
checked by the doc-figures test).

  paro_headline.py PAROSIM ROOT
"""
import json
import os
import subprocess
import sys

SCENARIOS = ["llama-7b_a100x8-100g_n32", "paro-llama-7b-psi16_n32", "paro-llama-65b-full_n32",
             "paro-llama-65b-psi16_n32", "paro-llama-65b-peft_n32"]
# The strategies the paper proposes: its 14 effective triples less DDP, ZeRO-1/2/3, MiCS.
PARO = ["NNI", "NII", "NIG", "INI", "ING", "IIG", "IGG", "GNG", "GIG"]
HEADLINE, IIG_MEASURED, SLACK = 2.66, 2.28, 1.10


def main():
    parosim, root = sys.argv[1], sys.argv[2]
    topology = os.path.join(root, "topologies", "paro-a100x8-calibrated.yaml")
    n, failed, gains = 0, False, []
    for name in SCENARIOS:
        cmd = [parosim, "run", os.path.join(root, "scenarios", name + ".yaml"), "-f", "json",
               "--set", f"topology={topology}", "--set", "framework.name=deepspeed",
               "--set", "framework.version=0.10.0", "--set", "framework.fused_norm=false",
               "--set", "collectives.model=flow", "--strategies", ",".join(PARO + ["zero-3"])]
        out = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
        step = {s["name"]: s["time"]["step"] for s in out["strategies"] if s["fits"]}
        best = min(PARO, key=lambda k: step.get(k, float("inf")))
        gain = step["GGG"] / step[best]
        gains.append(gain)
        n += 1
        good = gain <= HEADLINE * SLACK
        failed |= not good
        print(f"{'ok' if good else 'not ok'} {n} - {name}: {best} {gain:.2f}x ZeRO-3 "
              f"(paper: at most {HEADLINE}x)")
    n += 1
    good = max(gains) >= IIG_MEASURED / SLACK
    failed |= not good
    print(f"{'ok' if good else 'not ok'} {n} - largest gain {max(gains):.2f}x reaches the "
          f"measured {IIG_MEASURED}x")
    print(f"1..{n}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
