#!/usr/bin/env python3
"""Compares the analytic and event engines on oversubscribed fabrics (docs/estimator.md).

For 10 layouts of the test scenario (GPT 13B on A100 nodes with 8 x 200 Gb/s), prints the
analytic/event difference without oversubscription and at 3:1 with 1, 2 and 4 nodes per leaf.
Usage: scripts/oversubscribed-engines.py [path/to/capsim]
"""
import json
import os
import subprocess
import sys
import tempfile

CAPSIM = sys.argv[1] if len(sys.argv) > 1 else "build/cli/capsim"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BASE = json.load(open(os.path.join(ROOT, "tests/data/scenarios/valid.json")))
LAYOUTS = [(8, 1, 4, 1), (8, 1, 8, 1), (8, 2, 4, 1), (8, 4, 2, 1), (4, 2, 4, 1), (8, 4, 2, 2),
           (2, 4, 8, 1), (8, 2, 4, 2), (4, 4, 4, 1), (4, 8, 1, 1)]  # tp, pp, dp, virtual stages


def iteration_s(scenario, engine):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(scenario, f)
    out = subprocess.run([CAPSIM, "simulate", f.name, "--engine", engine, "--json"],
                         capture_output=True, text=True, check=True)
    os.unlink(f.name)
    return json.loads(out.stdout)["iteration_time_s"]


print("layout              leaf  analytic s   event s   diff %   diff - non-blocking diff")
for tp, pp, dp, v in LAYOUTS:
    plain_gap = None
    for leaf in [0, 1, 2, 4]:
        nodes = tp * pp * dp // 8
        if leaf >= nodes:
            continue
        s = json.loads(json.dumps(BASE))
        s["cluster"]["num_nodes"] = nodes
        if leaf:
            s["cluster"]["inter_node"].update(topology="oversubscribed", oversubscription=3.0,
                                              nodes_per_leaf=leaf)
        s["parallelism"].update(tensor=tp, pipeline=pp, data=dp, virtual_pipeline_stages=v,
                                schedule="interleaved-1f1b" if v > 1 else "1f1b",
                                global_batch_size=max(64, dp * pp * 2))
        a, e = iteration_s(s, "analytic"), iteration_s(s, "event")
        gap = 100 * (a - e) / e
        plain_gap = gap if leaf == 0 else plain_gap
        name = f"TP{tp} PP{pp} DP{dp} v{v}"
        extra = "" if leaf == 0 else f"{gap - plain_gap:+.2f}"
        print(f"{name:<20}{leaf or '-':>4}  {a:10.4f}{e:10.4f}  {gap:+6.2f}   {extra}")
