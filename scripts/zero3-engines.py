#!/usr/bin/env python3
"""Compares the analytic and event engines on ZeRO-3 layouts (docs/estimator.md, ZeRO-3).

300 layouts across nodes of 8 x A100 with 8 x 200 Gb/s InfiniBand: GPT 13B, a 4-layer GPT and
Llama 70B; TP/PP/DP 1/1/64, 8/1/8, 2/2/16, 2/4/8 (interleaved, v2) and 1/1/8; recompute none,
selective, full; micro-batch 1 and 2; bf16 and fp32 gradient reduction; a non-blocking fabric
and 3:1 oversubscription with one node per leaf (layouts the scenario rules reject are
skipped). Prints the summary per fabric and every non-blocking layout beyond 1%.
Usage: scripts/zero3-engines.py [path/to/capsim]   (two simulations per layout, ~1 minute)
"""
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile

CAPSIM = sys.argv[1] if len(sys.argv) > 1 else "build/cli/capsim"
MODELS = {
    "13b": {"name": "gpt-13b", "num_layers": 40, "hidden_size": 5120, "num_attention_heads": 40,
            "num_kv_heads": 40, "ffn_hidden_size": 20480, "ffn_activation": "gelu",
            "seq_length": 2048, "vocab_size": 51200},
    "tiny": {"name": "tiny", "num_layers": 4, "hidden_size": 1024, "num_attention_heads": 16,
             "num_kv_heads": 16, "ffn_hidden_size": 4096, "ffn_activation": "gelu",
             "seq_length": 2048, "vocab_size": 51200},
    "70b": {"name": "llama-70b", "num_layers": 80, "hidden_size": 8192, "num_attention_heads": 64,
            "num_kv_heads": 8, "ffn_hidden_size": 28672, "ffn_activation": "swiglu",
            "seq_length": 4096, "vocab_size": 128256},
}
LAYOUTS = [(1, 1, 64, 1), (8, 1, 8, 1), (2, 2, 16, 1), (2, 4, 8, 2), (1, 1, 8, 1)]  # tp pp dp v


def scenario(model, layout, recompute, micro_batch, grads, oversubscribed):
    tp, pp, dp, v = layout
    nodes = max(1, tp * pp * dp // 8)
    cluster = {"gpu": "A100-SXM4-80GB", "gpus_per_node": 8, "num_nodes": nodes}
    if nodes > 1:
        cluster["inter_node"] = {"fabric": "infiniband", "nics_per_node": 8,
                                 "nic_bandwidth": "200Gbps", "topology": "rail-optimized"}
        if oversubscribed:
            cluster["inter_node"].update(topology="oversubscribed", oversubscription=3.0,
                                         nodes_per_leaf=1)
    par = {"tensor": tp, "pipeline": pp, "data": dp, "micro_batch_size": micro_batch,
           "global_batch_size": dp * micro_batch * (2 * pp if pp > 1 else 4),
           "schedule": "interleaved-1f1b" if v > 1 else "1f1b", "zero_stage": 3,
           "precision": "bf16", "recompute": recompute}
    if v > 1:
        par["virtual_pipeline_stages"] = v
    if grads:
        par["grad_reduce_precision"] = grads
    return {"schema": "capsim.scenario/v1", "name": "zero3-sweep", "model": MODELS[model],
            "cluster": cluster, "parallelism": par}


def iteration_s(path, engine):
    out = subprocess.run([CAPSIM, "simulate", path, "--engine", engine, "--json"],
                         capture_output=True, text=True)
    return json.loads(out.stdout)["iteration_time_s"] if out.returncode == 0 else None


results = {False: [], True: []}
for model, layout, rc, mb, grads, over in itertools.product(
        MODELS, LAYOUTS, ["none", "selective", "full"], [1, 2], [None, "fp32"], [False, True]):
    if over and layout[0] * layout[1] * layout[2] <= 8:
        continue
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(scenario(model, layout, rc, mb, grads, over), f)
    a, e = iteration_s(f.name, "analytic"), iteration_s(f.name, "event")
    os.unlink(f.name)
    if a is None or e is None:
        continue
    name = f"{model} TP{layout[0]} PP{layout[1]} DP{layout[2]} v{layout[3]} {rc} mb{mb} {grads or 'bf16'}"
    results[over].append((100 * (a / e - 1), name))

for over, rows in results.items():
    gaps = [g for g, _ in rows]
    print(f"{'3:1 oversubscribed' if over else 'non-blocking'}: {len(rows)} layouts, "
          f"mean |analytic/event - 1| {statistics.mean(map(abs, gaps)):.2f}%, "
          f"{sum(abs(g) > 1 for g in gaps)} beyond 1%, {min(gaps):+.2f}% to {max(gaps):+.2f}%")
for gap, name in sorted(results[False]):
    if abs(gap) > 1:
        print(f"  {gap:+6.2f}%  {name}")
