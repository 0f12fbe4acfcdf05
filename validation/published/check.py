#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""parosim against published end-to-end training throughput (issue #15).

Each row of results.tsv is one published measurement (SOURCES.md cites them). This script
turns a row into a scenario (an inline model of the row's shape on the topology file of its
machine class, with the row's nodes, NICs, layout, batch, recomputation and attention),
runs `parosim run` on the strategy the row's framework used, converts the published figure
into a step time with the source's own FLOP count, and prints the error of parosim's step
against it. Nothing is fitted per row: every row uses the same model and the GPU figures of
docs/compute.md.

  check.py PAROSIM ROOT                 table of every row, then the summary
  check.py PAROSIM ROOT --record FILE   also write the predictions (recorded.tsv)
  check.py PAROSIM ROOT --check FILE    exit 1 if a prediction differs from FILE (TAP)

comparisons.tsv lists the runs a source made as alternatives for one job (strategies,
recomputation, layouts, precisions); after the tables, each comparison's measured winner by
tokens a second a GPU, its lead, parosim's lead and pick and what following parosim costs,
recorded and checked as `comparison:ID` (parosim's pick).

memory.tsv holds measured peak memory per GPU of some runs (results.tsv's, or pending's:
torchtitan.tsv and memory-runs.tsv), each the allocator figure its `metric` names; each is
predicted with its own overrides (and a pipeline split its notes give as stage_layers=) and
printed after the throughput summary with the median and worst |error| by metric, the
published rows apart from our own harness's, and recorded and checked as `memory:ID`; the
rows parosim puts out of memory (each ran, so none should be) as `fits:out-of-memory`.
fits.tsv holds published verdicts (a run that ran, `fits`, beside one that ran out of its
GPU's memory, `oom`): parosim's verdict on each is recorded and checked as `fits:ID`.

Last, the groups of data-parallel runs that give every GPU the same work and were measured
more than 8% apart (equal_work): where the smaller run is the slower, a bound on any model's
error there (printed: the least error a model that never predicts the smaller run slower
must make on one of the group's runs); where the larger runs are, a cost growing with scale
that parosim lacks.

Rules where a source is silent (each counted in the `assumed` column):
  micro-batch unknown -> 1; NICs unknown -> the machine class's (DGX A100: 8 x 200 Gb/s,
  DGX H100: 8 x 400 Gb/s); dp sharding unknown -> none (Megatron's DDP); interleaving
  unknown -> none; sequence parallelism unknown -> off; precision unknown -> bf16;
  dropout (no source gives it) -> the framework's default (Megatron's 0.1, else 0);
  attention unknown -> FlashAttention, but eager (HuggingFace LLaMA's, PyTorch's softmax
  kernels) for the PaRO fork of 2023; a node bandwidth a source does not publish but
  measured ratios on (rows marked node_bw=leave-one-out) -> the bandwidth its other marked
  rows give (leave_one_out, decision 30), its collectives on the flow model (decision 63).
A source whose cluster's collectives were measured and published runs on that cluster's
calibrated topology instead of its datasheet NICs (CLUSTER: BLOOM's Jean Zay, decision 57).
Rows parosim cannot model are listed as skipped with the reason (fp8 GEMMs, a layout or a
batch the source does not give, a FLOP count that cannot be inverted).

Issue #43's rows (context parallelism, mixtures of experts, offloading: results.tsv's last
ten columns, `hf_config=` in the notes) run with the keys they name; while parosim lacks one
they are skipped as "needs KEY (issue #43)" and held apart until recorded, under one switch,
PENDING_ISSUE_43 (decision 83).
"""
import csv
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

STRATEGY = {"none": "ddp", "zero1": "zero-1", "zero2": "zero-2", "zero3": "zero-3",
            "fsdp-full": "zero-3", "fsdp-hybrid": "fsdp-hybrid", "paro-iig": "IIG",
            "paro-nii": "NII"}
MACHINE = {  # gpu, memory (GB) -> topology file, GPU overrides
    ("A100-SXM4", "40"): ("dgx-a100x8.yaml", []),
    ("A100-SXM4", "80"): ("dgx-a100x8.yaml", ["topology.gpu.name=A100-SXM4-80GB",
                                              "topology.gpu.memory=80 GiB",
                                              "topology.gpu.hbm_bandwidth=2039 GB/s"]),
    ("H100-SXM5", "80"): ("dgx-h100x8.yaml", []),
    ("H200-SXM5", "141"): ("hgx-h200x8.yaml", []),
}
# A source whose cluster's network was measured (one calibration per machine class, never per
# row) runs on that cluster's topology file, NICs included: the row's NIC columns stay the
# datasheet's. BigScience's Jean Zay: decision 57, topologies/jean-zay-a100x8-opa.yaml.
CLUSTER = {"bigscience-bloom": ("jean-zay-a100x8-opa.yaml", [])}
# A comparison the measurement decides by less than this is a tie: BLOOM's layout table ran
# one layout twice (tp4pp12dp8, 110.48 s and 113.54 s, the notes of its row), 2.8% apart.
NOISE = 0.02

# ---------------------------------------------------------------------------------------------
# Issue #43: context parallelism, mixture-of-experts layouts and offloading (decision 83).
# results.tsv's last ten columns (cp, cp_algorithm, ep, etp, experts, experts_per_token,
# moe_ffn, shared_experts, dense_layers, offload) are `-` on every row before issue #43; a
# row that sets one runs with the scenario key it names (FEATURE_KEYS), passed as a --set
# override (the model's, inline in the model), and `hf_config=FILE` in its notes takes the
# model from models/hf/FILE (DeepSeek's latent attention and Qwen3's 128-wide heads are not
# in the shape columns).
#
# PENDING_ISSUE_43 is the one switch for the time those keys are being built: while it is
# True, a key that `parosim run` refuses as unknown (probed once, probe_keys) or an hf_config
# file that is not there yet makes the row skipped as "needs KEY (issue #43)", and --check
# accepts a row of issue #43 that recorded.tsv does not hold yet (TAP `# SKIP`), so the lead
# records them once. Set it to False when the keys have landed and the rows are recorded:
# then nothing is probed and a refusal or a missing record fails like any other row's.
PENDING_ISSUE_43 = False
NEW_COLUMNS = ("cp", "cp_algorithm", "ep", "etp", "experts", "experts_per_token", "moe_ffn",
               "shared_experts", "dense_layers", "offload")
# column -> the scenario key it sets, and a value the probe may set it to
FEATURE_KEYS = {
    "cp": ("parallelism.cp", "1"),
    "cp_algorithm": ("parallelism.cp_algorithm", "ring"),
    "ep": ("parallelism.ep", "1"),
    "etp": ("parallelism.etp", "1"),
    "experts": ("model.architecture.experts", "1"),
    "experts_per_token": ("model.architecture.experts_per_token", "1"),
    "moe_ffn": ("model.architecture.expert_ffn", "1"),
    "shared_experts": ("model.architecture.shared_experts", "1"),
    "dense_layers": ("model.architecture.dense_layers", "1"),
    "offload.optimizer": ("training.offload.optimizer", "cpu"),
    "offload.parameters": ("training.offload.parameters", "cpu"),
    "offload.activations": ("training.offload.activations", "cpu"),
}


def note(r, key, pattern, default):
    """The value a row's notes give as `key=VALUE` (VALUE matching @pattern), else @default:
    settings a source states that the row's columns do not carry."""
    found = re.search(rf"\b{key}=({pattern})\b", r["notes"])
    return found.group(1) if found else default


def known(v):
    return v not in ("", "-", "unknown") and not v.startswith("unknown")


def as_int(v):
    try:
        return int(v)
    except ValueError:
        return None


def megatron_flops(r, B, recompute_passes):
    """Narayanan et al. 2021 eq. 3 (4 passes with recomputation) or its 3-pass MFU form."""
    s, l, h, V = (float(r[k]) for k in ("seq", "layers", "hidden", "vocab"))
    if recompute_passes == 4:
        return 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h))
    return 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h))


def nemo_llama2_flops(r, B):
    """NeMo's model FLOPs of a Llama step (SOURCES.md, `nemo-llama2`): B s L h^2 (12 +
    12 g/a + 18 f/h + 12 s/h + 6 V/(L h)), attention counted whole (not causal), no
    recomputation; it gives the 780 TFLOP/s NeMo 24.07 prints beside Llama 2 7B's 16,934
    tokens/s a GPU (row nemo2407-llama2-7b-h100-8gpu-fp8)."""
    s, L, h, a, f, V = (float(r[k]) for k in ("seq", "layers", "hidden", "heads", "ffn", "vocab"))
    g = float(r["kv_heads"]) if known(r["kv_heads"]) else a
    return B * s * L * h * h * (12 + 12 * g / a + 18 * f / h + 12 * s / h + 6 * V / (L * h))


def measured_step(r, gpus, batch, peak):
    """The published figure as seconds per step, or (None, why)."""
    metric, v = r["metric"], float(r["value"])
    tokens = batch * float(r["seq"])
    if metric == "step_s":
        return v, None
    if metric == "tokens_per_s_per_gpu":
        return tokens / (v * gpus), None
    if metric == "tokens_per_s":
        return tokens / v, None
    if metric == "samples_per_s":
        return batch / v, None
    if metric == "tflops_per_gpu" and r["flops_formula"] == "megatron-96":
        return megatron_flops(r, batch, 4) / (v * 1e12 * gpus), None
    if metric == "mfu" and r["flops_formula"] == "megatron-mfu-72":
        return megatron_flops(r, batch, 3) / (v / 100 * peak * gpus), None
    if metric == "model_tflops_per_gpu" and r["flops_formula"] == "nemo-llama2":
        return nemo_llama2_flops(r, batch) / (v * 1e12 * gpus), None
    return None, f"{metric} counted as '{r['flops_formula']}' cannot be inverted"


def framework(r):
    """The row's framework profile (docs/frameworks.md), as a scenario's `framework:` block.

    One profile per framework, set from what the framework's version did, never per row:
    DeepSpeed before use_multi_rank_bucket_allreduce (0.6 to 0.10, the PaRO fork included)
    reduced a stage-1/2 bucket with one dist.reduce per owning rank, not an all-reduce;
    Composer's FSDP `mixed_precision: DEFAULT` (every llm-foundry row) reduces gradients
    in fp32, and so does torchtitan's FSDP2 (`MixedPrecisionPolicy(param_dtype=bfloat16,
    reduce_dtype=float32)`, hard-coded in parallelize_llama.py at 1ea476e9, 2024-04);
    llm-foundry's MPT computes its loss with flash-attn's fused CrossEntropyLoss
    (`loss_fn` defaults to fused_crossentropy in modeling_mpt.py, 2023-2024; setup.py's
    xentropy-cuda-lib), no benchmark yaml sets another."""
    fw = r["framework"]
    # an RMSNorm written as PyTorch operators where the run's config says so (torchtitan's
    # norm_type; decision 60)
    eager_norm = "  fused_norm: false\n" if "norm_type=rmsnorm" in r["notes"] else ""
    if "FSDP" in fw:
        fp32 = ("fsdp_mixed_precision=DEFAULT" in r["notes"] or "torchtitan" in fw
                or "reduce_dtype=float32" in r["notes"])  # FSDP2's MixedPrecisionPolicy, stated
        fused = "llm-foundry" in fw
        # torchtitan's model code turns q and k as Meta's reference does, an fp32 complex
        # product (model.py apply_rotary_emb at 1ea476e9); the fsdp profile's default is
        # HuggingFace's rotate_half (decision 61)
        complex_rope = "  rope: complex\n" if "torchtitan" in fw else ""
        # torchtitan shards with FSDP2's fully_shard (parallelize_llama.py at 1ea476e9),
        # llm-foundry with Composer's FSDP1 (decision 62)
        fsdp2 = "  fsdp2: true\n" if "FSDP2" in fw else ""
        return ("framework:\n  name: fsdp\n" + ("  reduce_precision: fp32\n" if fp32 else "") +
                ("  fused_loss: true\n" if fused else "") + eager_norm + complex_rope + fsdp2)
    if "DeepSpeed" in fw or "GPT-NeoX" in fw:
        # the version where the row states it; else DeepSpeed's last release before the
        # row's date (0.5.0 of 2021-08 for 2021, 0.5.10 of 2022-01 for February 2022, 0.6.0
        # of 2022-03 for the rest of 2022): before 0.12.4's bucket all-reduce and 0.13's
        # stage-1 gradient hooks, which is what the version decides
        stated = re.search(r"DeepSpeed (\d+\.\d+(?:\.\d+)?)", fw)
        dated = "0.5.0" if "2021" in fw else "0.5.10" if "Feb 2022" in fw else "0.6.0"
        old = f"  version: {stated.group(1) if stated else dated}\n"
        # HuggingFace's LLaMA under the PaRO fork: PyTorch's softmax kernels and its
        # LlamaRMSNorm written as operators (the rotary embedding is the profile's
        # default, HuggingFace's rotate_half; decisions 60, 61 and 63)
        eager_hf = "  fused_softmax: false\n  fused_norm: false\n" if "PaRO" in fw else ""
        return "framework:\n  name: deepspeed\n" + old + eager_hf + eager_norm
    # Megatron-Bridge's performance recipes and NVIDIA's MLPerf runs overlap TP communication
    # (userbuffers; SOURCES.md): the row says so
    # (a Bridge recipe that turns it off says tp_overlap=false: Qwen3 235B's, issue #43)
    if ("Megatron-Bridge" in fw and "tp_overlap=false" not in r["notes"]) or (
            "Megatron" in fw and "tp_overlap=true" in r["notes"]):
        return "framework:\n  name: megatron\n  tp_overlap: true\n"
    if "Megatron-LM (2021" in fw:
        # Megatron-LM of 2021 (SC'21's sc21 branch, the v2.5 tag; the README's 175B figure of
        # 2021-01): before the asynchronous input-gradient all-reduce (decision 58)
        return "framework:\n  name: megatron\n  version: 2.5\n"
    if "Megatron" in fw:
        return "framework: megatron\n"
    return ""


def deepspeed_pipeline_before_bf16(r):
    """A DeepSpeed pipeline run from before DeepSpeed's pipeline engine took bf16.

    bf16 came to the pipeline engine in 0.6.2 (April 2022, "bf16+pipeline parallelism",
    #1801), through the BF16_Optimizer at ZeRO stage 0 only: `_exec_reduce_grads` raises
    NotImplementedError for bf16 at stage 1. So a Megatron-DeepSpeed pipeline run of 2021
    (MT-NLG) or of early 2022 (BLOOM's February sweeps, at ZeRO stage 1) whose precision is
    not published ran fp16 (decision 42)."""
    dated = re.search(r"\b20(19|20|21)\b|\b(Jan|Feb|Mar) 2022\b", r["framework"])
    return ("DeepSpeed" in r["framework"] and known(r["pp"]) and int(r["pp"]) > 1
            and dated is not None)


def dropout(r):
    """The row's dropout probability where its source gives none: the framework's default.

    Megatron-LM's --attention-dropout and --hidden-dropout default to 0.1 (arguments.py,
    _add_regularization_args), and Megatron-DeepSpeed and GPT-NeoX inherit its model code;
    BLOOM's tr11 script sets neither. MPT (llm-foundry) and LLaMA (PaRO) train without."""
    fw = r["framework"]
    if "Megatron-Bridge" in fw:  # its Llama models, converted from HF configs: no dropout
        return 0.0
    if re.search(r"\bdropout=0\b(?!\.)", r["notes"]):  # the run's own configuration sets none
        return 0.0
    return 0.1 if "Megatron" in fw or "NeoX" in fw or "metaseq" in fw else 0.0


# Scenario keys `parosim run` refuses as unknown (probe_keys; empty until probed)
UNSUPPORTED = set()
PROBE_SCENARIO = os.path.join("scenarios", "llama-7b_a100x8-100g_n32.yaml")


def probe_keys(parosim, root, pool):
    """Fill UNSUPPORTED with the FEATURE_KEYS `parosim run` refuses as unknown keys: each set
    once on a scenario of the repository; any other refusal (a value the key does not take
    there) means the key exists. Only while PENDING_ISSUE_43 is on."""
    if not PENDING_ISSUE_43:
        return

    def refused(kv):
        p = subprocess.run([parosim, "run", os.path.join(root, PROBE_SCENARIO), "-f", "json",
                            "--strategies", "zero-1", "--set", f"{kv[0]}={kv[1]}"],
                           capture_output=True, text=True)
        return kv[0] if p.returncode != 0 and "unknown key" in p.stderr else None

    UNSUPPORTED.update(k for k in pool.map(refused, FEATURE_KEYS.values()) if k)


def issue43_row(r):
    """Row @r sets one of issue #43's columns."""
    return any(known(r.get(c, "-")) for c in NEW_COLUMNS)


def issue43(r, root):
    """Row @r's issue-#43 columns as a scenario: (--set overrides, lines for the inline
    model's architecture, the model file its notes name as hf_config or None, the scenario
    keys and files it needs). Defaults (cp and ep of 1, etp of tp, no offload) set nothing, so a row
    that states them runs without the key; a row with none of the columns gets nothing."""
    sets, arch, needs = [], "", []

    def int_col(c):
        return as_int(r.get(c, "-")) if known(r.get(c, "-")) else None

    cp = int_col("cp")
    if cp is not None and cp != 1:
        sets.append(f"parallelism.cp={cp}")
        needs.append(FEATURE_KEYS["cp"][0])
        if known(r.get("cp_algorithm", "-")):
            sets.append(f"parallelism.cp_algorithm={r['cp_algorithm']}")
            needs.append(FEATURE_KEYS["cp_algorithm"][0])
    # etp's default is tp (Megatron-Core's and parosim's), ep's 1
    tp = as_int(r["tp"]) if known(r.get("tp", "-")) else 1
    for c, default in (("ep", 1), ("etp", tp)):
        v = int_col(c)
        if v is not None and v != default:
            sets.append(f"{FEATURE_KEYS[c][0]}={v}")
            needs.append(FEATURE_KEYS[c][0])
    hf = note(r, "hf_config", r"[A-Za-z0-9._-]+\.json", None)
    hf_path = os.path.join(root, "models", "hf", hf) if hf else None
    if hf_path is not None and not os.path.exists(hf_path):
        needs.append(os.path.join("models", "hf", hf))
    experts = int_col("experts")
    if hf_path is None and experts:
        # the shape columns' model with its experts (the hf_config file carries its own)
        arch += f"    experts: {experts}\n    experts_per_token: {r['experts_per_token']}\n"
        moe_ffn, shared, dense = int_col("moe_ffn"), int_col("shared_experts"), int_col(
            "dense_layers")
        for c, v, key in (("moe_ffn", moe_ffn if moe_ffn != as_int(r["ffn"]) else None,
                           "expert_ffn"), ("shared_experts", shared or None, "shared_experts"),
                          ("dense_layers", dense or None, "dense_layers")):
            if v is not None:
                arch += f"    {key}: {v}\n"
                needs.append(FEATURE_KEYS[c][0])
    offload = r.get("offload", "-")
    if known(offload) and offload != "none":
        for part in offload.split(","):
            what, where = part.split("=")
            sets.append(f"training.offload.{what}={where}")
            needs.append(FEATURE_KEYS["offload." + what][0])
    return sets, arch, hf_path, needs


def scenario(r, root):
    """(YAML text, --set list, strategy, assumed, None) or (None, ..., why)."""
    machine = MACHINE.get((r["gpu"], r["gpu_mem_gb"]))
    if machine is None:
        return None, None, None, None, f"no topology for {r['gpu']} {r['gpu_mem_gb']} GB"
    tp, pp, dp, nodes, gpn = (as_int(r[k]) for k in ("tp", "pp", "dp", "nodes", "gpus_per_node"))
    batch = as_int(r["global_batch"])
    if None in (tp, pp, dp, nodes, gpn, batch):
        return None, None, None, None, "layout or global batch not published"
    if as_int(r["heads"]) is None:
        return None, None, None, None, "attention heads not published"
    stage_layers = re.search(r"stage_layers=([0-9,]+)", r["notes"])
    stage_layers = [int(x) for x in stage_layers.group(1).split(",")] if stage_layers else None
    if int(r["layers"]) % pp != 0 and stage_layers is None:
        return None, None, None, None, (f"{r['layers']} layers on {pp} stages: the split "
                                        "is not published")
    assumed = []
    mb = as_int(r["micro_batch"])
    if mb is None:
        mb = 1
        assumed.append("micro-batch")
    if batch % (mb * dp) != 0:
        return None, None, None, None, f"global batch {batch} is not a multiple of {mb} x dp {dp}"
    sharding = r["dp_sharding"] if known(r["dp_sharding"]) else "none"
    if not known(r["dp_sharding"]):
        assumed.append("sharding")
    if sharding not in STRATEGY:
        return None, None, None, None, f"sharding '{sharding}' not mapped"
    topo_file, gpu_sets = CLUSTER.get(r["source_key"], machine)
    sets = list(gpu_sets) + [f"topology.nodes={nodes}", f"topology.node.gpus={gpn}"]
    if r["source_key"] in CLUSTER:
        pass  # the cluster's measured network, not the datasheet's NICs
    elif r.get("node_gbps"):  # calibrated on the source's other rows (leave_one_out)
        # on the flow model, whose collective times follow a link's bandwidth continuously;
        # NCCL's tuning model moves in its search's speed steps, which a fitted bandwidth
        # would jump between (decision 63)
        sets += ["topology.node.nics.count=1", f"topology.node.nics.bandwidth={r['node_gbps']} Gb/s",
                 "collectives.model=flow"]
        assumed.append(f"bandwidth={r['node_gbps']}G(others)")
    elif known(r["nic_count"]) and known(r["nic_gbps"]):
        sets += [f"topology.node.nics.count={r['nic_count']}",
                 f"topology.node.nics.bandwidth={r['nic_gbps']} Gb/s"]
    elif known(r["nic_gbps"]):  # a node's bandwidth stated, its NICs not: one NIC
        sets += ["topology.node.nics.count=1", f"topology.node.nics.bandwidth={r['nic_gbps']} Gb/s"]
        assumed.append("nics")
    else:
        assumed.append("nics")
    vpp = as_int(r["vpp"]) if known(r["vpp"]) else None
    if r["vpp"] == "unknown":
        assumed.append("interleaving")
    precision = "fp16" if "fp16" in r["precision"] and "bf16" not in r["precision"] else "bf16"
    if not known(r["precision"]):
        assumed.append("precision")
        if deepspeed_pipeline_before_bf16(r):
            precision = "fp16"
    gated = r["mlp"].startswith("gated")
    # optimizer state a parameter: Adam's fp32 master weights and moments (12), unless the
    # row's framework keeps less (NeMo's distributed Adam over a bf16 model: 16-bit
    # remainders of the master weights, 10; SOURCES.md section 12)
    optimizer_bytes = note(r, "optimizer_bytes", r"\d+", "12")
    # a shape the MLP's kind does not imply, stated in the notes (Nemotron-4: a plain MLP
    # without biases, untied embeddings, half of each head rotated)
    bias = note(r, "bias", "true|false", "false" if gated else "true")
    tied = note(r, "tied", "true|false", "false" if gated else "true")
    rotary = note(r, "rotary", r"[0-9.]+", None)
    learned_positions = not gated and rotary is None
    kv = r["kv_heads"] if known(r["kv_heads"]) else r["heads"]
    recompute = r["recompute"] if known(r["recompute"]) else "none"
    if not known(r["recompute"]):
        assumed.append("recompute")
    # torchtitan's selective layer checkpointing: full recomputation of every k-th block
    every = re.search(r"recompute_every=(\d+)", r["notes"])
    if every and "k not published" in r["notes"]:
        assumed.append("recompute_every")
    p_drop = dropout(r)
    if p_drop > 0:
        assumed.append("dropout")
    attention = "eager" if r["attention"].startswith("eager") else "flash"
    if not known(r["attention"]) and "PaRO" in r["framework"]:
        # HuggingFace's LLaMA ran eager attention until FlashAttention-2 came to it in
        # transformers 4.34 (October 2023), after the PaRO fork's DeepSpeed 0.10 (July 2023)
        attention = "eager"
        assumed.append("attention")
    if "attention=triton" in r["notes"] or r["attention"].startswith("flash1"):
        attention = "flash1"  # MosaicML's Triton kernel of 2022, flash_attn 1.x: SOURCES.md
    if r["attention"].startswith("cudnn"):  # Transformer Engine's choice on Hopper
        attention = "cudnn"
    fp8 = "  fp8: true\n" if "fp8" in r["precision"] else ""
    # the weights held in fp8 only, as a row's notes state it (a tag or the run's variable,
    # not any mention of the word)
    if fp8 and re.search(r"\(fp8_params\)|\bFP8_PARAMS=True\b|\bfp8_params=true\b", r["notes"]):
        fp8 += "  fp8_params: true\n"  # weights held in fp8 only (decision 39)
    if fp8 and attention == "cudnn" and "FP8_DPA=1" in r["notes"]:
        fp8 += "  fp8_attention: true\n"  # q, k, v, O kept in fp8 (decision 53)
    # LoRA fine-tuning: "lora=RANK:targets[:dropout]" in the notes (the frozen weights train
    # nothing; the adapters' own kernels and what they keep: decision 52)
    lora = re.search(r"lora=(\d+):([a-z,]+)(?::([0-9.]+))?", r["notes"])
    trainable = ""
    if lora:
        adapter_dropout = f", dropout: {lora.group(3)}" if lora.group(3) else ""
        trainable = (f"  trainable: {{lora: {{rank: {lora.group(1)}, targets: "
                     f"[{lora.group(2).replace(',', ', ')}]{adapter_dropout}}}}}\n")
    pipeline = ""
    legacy = os.environ.get("PAROSIM_CHECK_BEFORE_ISSUE_15") == "1"  # no `attention` key
    if vpp and vpp > 1:
        pipeline = f"  pipeline:\n    schedule: interleaved\n    virtual: {vpp}\n"
    sets43, arch43, hf_path, needs = issue43(r, root)
    missing = [k for k in needs if k in UNSUPPORTED or os.sep in k]
    if PENDING_ISSUE_43 and missing:
        return None, None, None, None, f"needs {', '.join(missing)} (issue #43)"
    sets += sets43
    text = f"""kind: scenario
schema: 1
name: {r['id']}
model:
  kind: model
  schema: 1
  name: {r['id']}
  architecture:
    hidden: {r['hidden']}
    layers: {r['layers']}
    heads: {r['heads']}
    kv_heads: {kv}
    ffn: {r['ffn']}
    vocab: {r['vocab']}
{'    position_embeddings: ' + r['seq'] + chr(10) if learned_positions else ''}{'    rotary: ' + rotary + chr(10) if rotary else ''}    mlp: {'gated' if gated else 'plain'}
    norm: {'rmsnorm' if gated else 'layernorm'}
    bias: {bias}
    tied_embeddings: {tied}
{"" if legacy else f"    attention_dropout: {p_drop}{chr(10)}    hidden_dropout: {p_drop}{chr(10)}"}{arch43}topology: {os.path.join(root, 'topologies', topo_file)}
parallelism:
  tp: {tp}
  pp: {pp}
  dp: {dp}
  sequence_parallel: {'true' if r['sp'] == 'true' else 'false'}
{f"  stage_layers: {stage_layers}{chr(10)}" if stage_layers else ""}training:
  micro_batch: {mb}
  sequence: {r['seq']}
  accumulation: {batch // (mb * dp)}
  precision: {precision}
  optimizer_bytes: {optimizer_bytes}
  recompute: {recompute}
{f"  recompute_every: {every.group(1)}{chr(10)}" if every else ""}  {'efficiency: 0.5' if legacy else 'attention: ' + attention}
{fp8}{trainable}{pipeline}{'' if legacy else framework(r)}"""
    if hf_path is not None:  # the model from its HuggingFace config (issue #43's rows)
        head, rest = text.split("model:\n", 1)
        text = head + f"model: {hf_path}\n" + rest[rest.index("topology:"):]
    return text, sets, STRATEGY[sharding], assumed, None


# Node bandwidths (Gb/s) tried where a source's cluster has an unpublished inter-node
# bandwidth: 100 to 774 in steps of 5%.
NODE_GBPS = [round(100 * 1.05 ** i, 1) for i in range(43)]


def leave_one_out(parosim, root, tmp, rows, pool):
    """Set node_gbps on every row marked `node_bw=leave-one-out` (decision 30).

    A source that ran several comparisons on one cluster without saying how much bandwidth
    its nodes had (the PaRO paper: "100 Gbps of inter-node bandwidth", NICs per node not
    stated) gives that one figure through its measurements. Each such row is predicted
    with the node bandwidth that best reproduces the source's *other* marked rows (least
    squares in log ratio over NODE_GBPS; of equally good ones, the middle), so no row is
    predicted from its own measurement. The bandwidth is one figure per cluster, the same
    kind of figure as a NIC count, and the topology file that records it
    (topologies/paro-a100x8-calibrated.yaml) is fitted on all the marked rows together. The
    rows run on the flow model (scenario(): decision 63), in which a step's time follows the
    bandwidth continuously, so the fit has one minimum instead of NCCL's speed steps."""
    marked = [r for r in rows if "node_bw=leave-one-out" in r["notes"]]
    if len(marked) < 2:
        return

    def ratio(args):
        r, gbps = args
        x = run_one(parosim, root, tmp, dict(r, node_gbps=gbps, id=f"{r['id']}-{gbps}"))
        return x["predicted"] if "skip" not in x else None

    grid = [(r, g) for r in marked for g in NODE_GBPS]
    predicted = dict(zip([(r["id"], g) for r, g in grid], pool.map(ratio, grid)))
    for r in marked:
        others = [o for o in marked if o is not r and o["source_key"] == r["source_key"]]
        if not others:
            continue

        def cost(g):  # a bandwidth where an other row does not run is never chosen
            ratios = [predicted[(o["id"], g)] for o in others]
            if None in ratios:
                return math.inf
            return sum(math.log(p / float(o["value"])) ** 2 for p, o in zip(ratios, others))

        best = min(cost(g) for g in NODE_GBPS)
        ties = [g for g in NODE_GBPS if cost(g) <= best + 1e-12]
        r["node_gbps"] = ties[len(ties) // 2]


def run_parosim(parosim, tmp, r, text, strategies, sets):
    """`parosim run` of scenario @text (row @r's) on @strategies with `--set`s @sets: its
    JSON output, or (None, why) when parosim refuses it."""
    path = os.path.join(tmp, r["id"] + ".yaml")
    with open(path, "w") as f:
        f.write(text)
    cmd = [parosim, "run", path, "-f", "json", "--strategies", ",".join(strategies)]
    for s in sets:
        cmd += ["--set", s]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None, "parosim: " + p.stderr.strip().splitlines()[0][:120]
    return json.loads(p.stdout), None


def run_one(parosim, root, tmp, r, extra_sets=()):
    """Predict row @r; @extra_sets are more `--set` overrides (a calibration's grid)."""
    text, sets, strategy, assumed, why = scenario(r, root)
    if text is None:
        return {"id": r["id"], "skip": why}
    strategies = [strategy]
    if r["metric"] == "speedup":
        over = dict(kv.split("=") for kv in r["notes"].split() if "=" in kv).get("over", "")
        over = over.rstrip(";,")
        strategies.append(STRATEGY.get(over, over))
    out, why = run_parosim(parosim, tmp, r, text, strategies, list(sets) + list(extra_sets))
    if out is None:
        return {"id": r["id"], "skip": why}
    steps = {}
    for st in out["strategies"]:
        for name in [st["name"]] + st["aliases"]:
            steps[name] = (st["time"]["step"], st["fits"])
    pred, fits = steps[strategies[0]]
    gpus = int(r["nodes"]) * int(r["gpus_per_node"])
    if r["metric"] == "speedup":
        base, _ = steps[strategies[1]]
        return {"id": r["id"], "source": r["source_key"], "metric": "speedup",
                "measured": float(r["value"]), "predicted": base / pred, "fits": fits,
                "assumed": assumed}
    peak = 989e12 if r["gpu"].startswith("H100") else 312e12
    meas, why = measured_step(r, gpus, int(r["global_batch"]), peak)
    if meas is None:
        return {"id": r["id"], "skip": why}
    return {"id": r["id"], "source": r["source_key"], "metric": "step_s", "measured": meas,
            "predicted": pred, "fits": fits, "assumed": assumed}


def published_runs(root):
    """Every transcribed run by id: results.tsv's, then pending/'s (torchtitan.tsv,
    memory-runs.tsv), a later file's row replacing an earlier one of the same id."""
    here = os.path.join(root, "validation", "published")
    runs = {}
    for name in ("results.tsv", os.path.join("pending", "torchtitan.tsv"),
                 os.path.join("pending", "memory-runs.tsv")):
        with open(os.path.join(here, name)) as f:
            runs.update({r["id"]: r for r in csv.DictReader(f, delimiter="\t")})
    return runs


def memory_rows(root, runs):
    """(memory.tsv row, the run it measured) pairs: the run's row from @runs
    (published_runs: a row whose throughput parosim does not predict can still give its
    memory)."""
    with open(os.path.join(root, "validation", "published", "memory.tsv")) as f:
        return [(m, runs[m["run"]]) for m in csv.DictReader(f, delimiter="\t")]


def fits_rows(root, runs):
    """(fits.tsv row, the run it names) pairs: a published verdict (`fits`: the run ran;
    `oom`: it ran out of its GPU's memory) on a run of @runs, often beside one that ran (the
    same job with a larger micro-batch)."""
    with open(os.path.join(root, "validation", "published", "fits.tsv")) as f:
        return [(v, runs[v["run"]]) for v in csv.DictReader(f, delimiter="\t")]


def run_fits(parosim, root, tmp, v, r):
    """parosim's verdict on run @r under fits.tsv row @v's overrides, against the published one:
    recorded as `fits:ID`, its prediction `fits` or `oom`."""
    x = run_memory(parosim, root, tmp, dict(v, id="fits-" + v["id"]), r)
    if "skip" in x:
        return {"id": "fits:" + v["id"], "skip": x["skip"]}
    return {"id": "fits:" + v["id"], "predicted": "fits" if x["fits"] else "oom",
            "verdict": v["verdict"], "peak": x["device"], "capacity": x["capacity"]}


def run_memory(parosim, root, tmp, m, r):
    """Peak memory per GPU (GiB) parosim predicts for run @r with memory row @m's overrides:
    the machine class whose topology it takes (`machine_gb`) and `--set`s (`sets`)."""
    r = dict(r, gpu_mem_gb=m["machine_gb"], id="memory-" + m["id"])
    # a pipeline split the memory row states (its source's default split, read from the
    # framework's code) where the run's row has none
    split = re.search(r"\bstage_layers=[0-9,]+", m["notes"])
    if split and "stage_layers=" not in r["notes"]:
        r["notes"] += "; " + split.group(0)
    text, sets, strategy, assumed, why = scenario(r, root)
    if text is None:
        return {"id": "memory:" + m["id"], "skip": why}
    out, why = run_parosim(parosim, tmp, r, text, [strategy],
                           list(sets) + [x for x in m["sets"].split(";") if x])
    if out is None:
        return {"id": "memory:" + m["id"], "skip": why}
    st = out["strategies"][0]
    # the allocator's figure the row measured (decision 94): max_reserved against parosim's
    # reserve, max_allocated against its allocated peak; both leave NCCL and the context out
    figure = {"max_reserved": "reserved", "max_allocated": "allocated"}[m.get("metric", "max_allocated")]
    return {"id": "memory:" + m["id"], "measured": float(m.get("measured_gib", "nan")),
            "predicted": st["memory"][figure] / 2**30, "fits": st["fits"],
            "device": st["memory"]["peak"] / 2**30,
            "capacity": out["gpu_memory"] / 2**30}


def short_name(rid, ids):
    """Row @rid's id without the words every id of its comparison @ids starts or ends with."""
    words = [i.split("-") for i in ids]
    w = rid.split("-")
    head = 0
    while head < len(w) - 1 and all(len(x) > head and x[head] == w[head] for x in words):
        head += 1
    tail = 0
    while tail < len(w) - head - 1 and all(len(x) > tail and x[-1 - tail] == w[-1 - tail]
                                           for x in words):
        tail += 1
    return "-".join(w[head:len(w) - tail])


def comparisons(root, rows, results):
    """Each published comparison (comparisons.tsv: runs a source made as alternatives for one
    job) as {id, winner, margin, pick, regret}, or {id, skip}: the measured winner by tokens
    a second a GPU (a speed-up row: its `of` strategy when above 1), its lead over the
    runner-up, parosim's pick by the same measure on its predicted steps, and what following
    parosim would have cost (the measured winner's rate over the pick's, minus 1)."""
    with open(os.path.join(root, "validation", "published", "comparisons.tsv")) as f:
        groups = list(csv.DictReader(f, delimiter="\t"))
    by_id = {x["id"]: x for x in results}
    row = {r["id"]: r for r in rows}
    out = []
    for g in groups:
        ids = g["rows"].split(",")
        xs = [by_id.get(i) for i in ids]
        missing = [i for i, x in zip(ids, xs) if x is None or "skip" in x]
        if missing:
            out.append({"id": g["id"], "skip": f"{missing[0]} not predicted"})
            continue
        if len(xs) == 1 and xs[0]["metric"] == "speedup":
            of, over = re.findall(r"\b(?:of|over)=([^;,\s]+)", row[ids[0]]["notes"])[:2]
            m, p = xs[0]["measured"], xs[0]["predicted"]
            winner, pick = (of if m > 1 else over), (of if p > 1 else over)
            margin = max(m, 1 / m) - 1
            regret = 0.0 if winner == pick else margin
            lead = (p if m > 1 else 1 / p) - 1
        else:
            def rate(x, key):  # tokens a second a GPU
                r = row[x["id"]]
                gpus = int(r["nodes"]) * int(r["gpus_per_node"])
                return int(r["global_batch"]) * int(r["seq"]) / (x[key] * gpus)
            measured = sorted(xs, key=lambda x: -rate(x, "measured"))
            winner = measured[0]["id"]
            margin = rate(measured[0], "measured") / rate(measured[1], "measured") - 1
            chosen = max(xs, key=lambda x: rate(x, "predicted"))
            pick = chosen["id"]
            regret = rate(measured[0], "measured") / rate(chosen, "measured") - 1
            lead = rate(measured[0], "predicted") / rate(measured[1], "predicted") - 1
        if len(ids) > 1:
            winner, pick = short_name(winner, ids), short_name(pick, ids)
        out.append({"id": g["id"], "winner": winner, "margin": margin, "pick": pick,
                    "regret": regret, "lead": lead, "predicted": pick})
    return out


# Runs of equal work per GPU whose measured step times differ by more than this are printed
EQUAL_WORK_SPREAD = 0.08


def equal_work(rows, results):
    """Groups of a source's data-parallel runs (tp = pp = 1) that give every GPU the same work:
    the same GPU, model, sequence, micro-batch and samples a GPU, only the GPU count
    differing. A data-parallel step's compute a GPU is then the same and its collectives only
    grow with the GPU count, so no model of that kind can predict the smaller run slower: a
    group whose smaller run measured slower bounds every such model's error on it; one whose
    larger runs measured much slower names a cost that grows with scale. Returns (spread,
    [(gpus, measured s, parosim's error, id)]) for groups spread beyond EQUAL_WORK_SPREAD."""
    by_id = {x["id"]: x for x in results if "skip" not in x and x["metric"] == "step_s"}
    groups = {}
    for r in rows:
        x = by_id.get(r["id"])
        if x is None or as_int(r["tp"]) != 1 or as_int(r["pp"]) != 1:
            continue
        gpus = int(r["nodes"]) * int(r["gpus_per_node"])
        if int(r["global_batch"]) % gpus:
            continue
        key = (r["source_key"], r["gpu"], r["gpu_mem_gb"], r["layers"], r["hidden"], r["seq"],
               r["micro_batch"], int(r["global_batch"]) // gpus, r["precision"], r["recompute"])
        groups.setdefault(key, []).append((gpus, x["measured"], x["predicted"] / x["measured"]
                                           - 1, r["id"]))
    out = []
    for runs in groups.values():
        times = [t for _, t, _, _ in runs]
        if len(runs) > 1 and max(times) / min(times) - 1 > EQUAL_WORK_SPREAD:
            out.append((max(times) / min(times) - 1, sorted(runs)))
    return sorted(out, key=lambda g: -g[0])


def least_error(slow, fast):
    """The least worst error any model that must predict `slow` no slower than `fast` can
    make on the pair: both predicted at the harmonic mean 2 slow fast / (slow + fast)."""
    return (slow - fast) / (slow + fast)


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    parosim, root = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    mode = sys.argv[3] if len(sys.argv) > 3 else None
    target = sys.argv[4] if len(sys.argv) > 4 else None
    here = os.path.join(root, "validation", "published")
    with open(os.path.join(here, "results.tsv")) as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        probe_keys(parosim, root, pool)
        leave_one_out(parosim, root, tmp, rows, pool)
        results = list(pool.map(lambda r: run_one(parosim, root, tmp, r), rows))
        runs = published_runs(root)
        measured = memory_rows(root, runs)
        memory = list(pool.map(lambda mr: run_memory(parosim, root, tmp, *mr), measured))
        verdicts = list(pool.map(lambda vr: run_fits(parosim, root, tmp, *vr),
                                 fits_rows(root, runs)))
    done = [x for x in results if "skip" not in x]
    for x in done + [x for x in memory if "skip" not in x]:
        x["error"] = x["predicted"] / x["measured"] - 1
    compared = [dict(x, id="comparison:" + x["id"]) for x in comparisons(root, rows, results)]
    # Every run of the corpus ran, so each should fit in parosim's memory too: the ones that
    # do not are recorded (and checked) as one more row, `fits:out-of-memory`.
    # (issue #43's rows stay out of it until they are recorded: PENDING_ISSUE_43)
    new43 = {r["id"] for r in rows if issue43_row(r)} if PENDING_ISSUE_43 else set()
    oom = [x["id"] for x in done if not x["fits"] and x["id"] not in new43]
    oom43 = [x["id"] for x in done if not x["fits"] and x["id"] in new43]
    memory.append({"id": "fits:out-of-memory", "predicted": ",".join(oom) or "none"})
    # memory rows are of runs that ran: parosim should let each fit
    memory_oom = [x["id"] for x in memory if "fits" in x and not x["fits"]]
    memory += verdicts
    if mode == "--check":
        with open(target) as f:
            recorded = {r["id"]: r for r in csv.DictReader(f, delimiter="\t")}
        n = bad = 0
        # issue #43's rows before the lead records them (PENDING_ISSUE_43)
        unrecorded = {r["id"] for r in rows if issue43_row(r) and r["id"] not in recorded
                      and PENDING_ISSUE_43}
        for x in results + memory + compared:
            n += 1
            was = recorded.get(x["id"])
            now = ("skip" if "skip" in x else x["predicted"] if isinstance(x["predicted"], str)
                   else f"{x['predicted']:.6g}")
            if x["id"] in unrecorded:
                print(f"ok {n} - {x['id']} {now} # SKIP not recorded yet (issue #43"
                      f"{': ' + x['skip'] if 'skip' in x else ''})")
                continue
            if was is None or was["predicted"] != now:
                bad += 1
                print(f"not ok {n} - {x['id']}: predicted {now}, recorded "
                      f"{was['predicted'] if was else 'nothing'} (re-record with --record)")
            else:
                print(f"ok {n} - {x['id']} {now}")
        errs = sorted(abs(x["error"]) for x in done)
        print(f"# {len(done)} rows compared, median |error| {statistics.median(errs):.1%}, "
              f"worst {errs[-1]:.1%}")
        print(f"1..{n}")
        return 1 if bad else 0
    print(f"{'id':62} {'measured':>10} {'parosim':>10} {'error':>8}  assumed")
    for x in results:
        if "skip" in x:
            print(f"{x['id']:62} skipped: {x['skip']}")
        else:
            unit = "x" if x["metric"] == "speedup" else "s"
            fit = "" if x["fits"] else " (OOM in parosim)"
            print(f"{x['id']:62} {x['measured']:9.4g}{unit} {x['predicted']:9.4g}{unit} "
                  f"{x['error']:+8.1%}  {','.join(x['assumed']) or '-'}{fit}")
    print()
    print(f"{'source':28} {'rows':>5} {'median |err|':>13} {'worst':>8} {'median err':>11}")
    # issue #43's rows join the corpus's figures once recorded (PENDING_ISSUE_43): until
    # then they have a line of their own
    corpus = [x for x in done if x["id"] not in new43]
    sources = sorted({x["source"] for x in corpus})
    for s in sources + ["all"]:
        errs = [x["error"] for x in corpus if s in ("all", x["source"])]
        a = sorted(abs(e) for e in errs)
        print(f"{s:28} {len(errs):5d} {statistics.median(a):12.1%} {a[-1]:8.1%} "
              f"{statistics.median(errs):+11.1%}")
    skipped = [x for x in results if "skip" in x and x["id"] not in new43]
    print(f"# {len(corpus)} rows compared, {len(skipped)} skipped")
    if new43:
        errs = [x["error"] for x in done if x["id"] in new43]
        a = sorted(abs(e) for e in errs)
        print(f"# issue #43's rows, not recorded yet: {len(errs)} compared"
              + (f" (median |error| {statistics.median(a):.1%}, worst {a[-1]:.1%})" if a else "")
              + f", {sum('skip' in x for x in results if x['id'] in new43)} skipped")
    print()
    print(f"{'peak memory per GPU (memory.tsv)':62} {'measured':>10} {'parosim':>10} {'error':>8}")
    for x in memory:
        if "skip" in x:
            print(f"{x['id']:62} skipped: {x['skip']}")
        elif x["id"] == "fits:out-of-memory":
            print(f"# runs that ran but exceed their GPU's memory in parosim: {x['predicted']}")
            if oom43:
                print(f"# and of issue #43's rows, not recorded yet: {','.join(oom43)}")
        elif x["id"].startswith("fits:"):
            right = "right" if x["predicted"] == x["verdict"] else "WRONG"
            print(f"{x['id']:62} {x['verdict']:>10} {x['predicted']:>10}  {right} "
                  f"(parosim's peak {x['peak']:.1f} of {x['capacity']:.1f} GiB)")
        else:
            print(f"{x['id']:62} {x['measured']:6.1f} GiB {x['predicted']:6.1f} GiB "
                  f"{x['error']:+8.1%}")
    told = [x for x in verdicts if "skip" not in x]
    print(f"# published fits/out-of-memory verdicts (fits.tsv): {sum(x['predicted'] == x['verdict'] for x in told)} "
          f"of {len(told)} right; memory rows parosim puts out of memory: {','.join(memory_oom) or 'none'}")
    # the |error| by the allocator's figure each row measured (allocated or reserved), the
    # published rows apart from our own harness's (runs in pending/memory-runs.tsv, id harness-)
    metric = {"memory:" + m["id"]: m["metric"] for m, _ in measured}
    for own in (False, True):
        for kind in sorted({v for v in metric.values()}):
            errs = sorted(abs(x["error"]) for x in memory if "error" in x
                          and metric.get(x["id"]) == kind
                          and x["id"].startswith("memory:harness-") == own)
            if errs:
                print(f"# {'our own H200 harness' if own else 'published'}, {kind}: {len(errs)} rows, "
                      f"median |error| {statistics.median(errs):.1%}, worst {errs[-1]:.1%}")
    print()
    print(f"{'published comparisons (comparisons.tsv)':36} {'measured winner':>26} {'lead':>6} "
          f"{'parosim':>7}  {'parosim picks':>26} {'cost':>6}")
    for x in compared:
        if "skip" in x:
            print(f"{x['id'][11:]:36} skipped: {x['skip']}")
            continue
        w, p = x["winner"], x["pick"]
        print(f"{x['id'][11:]:36} {w:>26} {x['margin']:6.1%} {x['lead']:+7.1%}  "
              f"{p if p != w else 'the same':>26} {x['regret']:6.1%}")
    told = [x for x in compared if "skip" not in x]
    same = [x for x in told if x["pick"] == x["winner"]]
    decided = [x for x in told if x["margin"] > NOISE]
    print(f"# {len(same)} of {len(told)} comparisons give parosim's pick the measured winner, "
          f"{sum(x in same for x in decided)} of the {len(decided)} that the measurement decides by "
          f"more than {NOISE:.0%}; at worst following parosim costs "
          f"{max((x['regret'] for x in told), default=0):.1%} of tokens/s")
    print("# lead: the measured winner's tokens/s over the runner-up's (parosim: the same two "
          "runs' predicted); cost: the measured winner's tokens/s over those of parosim's pick")
    print()
    print(f"runs of equal work per GPU measured more than {EQUAL_WORK_SPREAD:.0%} apart "
          "(GPUs: measured step, parosim's error; bound: the least error any model must make on "
          "one of them where a smaller run measured slower than a larger one)")
    for spread, runs in equal_work(rows, results):
        slower_small = [least_error(a[1], b[1]) for a in runs for b in runs if a[0] < b[0]]
        bound = max(slower_small, default=0)
        print(f"{spread:6.1%}  {runs[0][3]}: " +
              ", ".join(f"{g} GPUs {t:.4g} s {e:+.1%}" for g, t, e, _ in runs) +
              (f"; bound {bound:.1%}" if bound > 0 else ""))
    if mode == "--record":
        with open(target, "w") as f:
            f.write("id\tpredicted\terror\n")
            for x in results + memory + compared:
                if "skip" in x:
                    f.write(f"{x['id']}\tskip\t-\n")
                elif isinstance(x["predicted"], str):
                    f.write(f"{x['id']}\t{x['predicted']}\t-\n")
                else:
                    f.write(f"{x['id']}\t{x['predicted']:.6g}\t{x['error']:+.4f}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
