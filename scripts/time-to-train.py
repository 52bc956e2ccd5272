#!/usr/bin/env python3
"""Compares capsim plan's all-in GPU-hours with published totals of whole pre-training runs.

usage: scripts/time-to-train.py [CAPSIM] [--markdown]

Runs `CAPSIM plan PLAN --engine analytic --json` for every case of
data/validation/time-to-train.json and prints predicted (steady and all-in) against published
GPU-hours, the error of each and the mean absolute error. Exit 0 always: the table reports
misses, it does not judge them.
"""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = "data/validation/time-to-train.json"


def run_case(capsim, case):
    argv = [capsim, "plan", case["plan"], "--engine", "analytic", "--json"]
    out = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"time-to-train: {' '.join(argv)} exited {out.returncode}: {out.stderr}")
    best = json.loads(out.stdout)["best"]
    if best is None:
        sys.exit(f"time-to-train: {case['plan']} has no best configuration")
    return best


def rows(capsim):
    cases = json.loads((ROOT / CASES).read_text())["cases"]
    out = []
    for case in cases:
        best = run_case(capsim, case)
        published = case["published_gpu_hours"]
        layout = best["layout"]
        out.append({
            "id": case["id"], "published": published,
            "gpus": best["num_gpus"],
            "layout": f"TP{layout['tensor']} PP{layout['pipeline']} DP{layout['data']}",
            "mfu": best["mfu"],
            "steady": best["steady_gpu_hours"], "all_in": best["gpu_hours"],
            "goodput": best["goodput_pct"],
            "steady_error": 100.0 * (best["steady_gpu_hours"] / published - 1.0),
            "error": 100.0 * (best["gpu_hours"] / published - 1.0)})
    return out


def markdown(results):
    lines = ["| run | GPUs, layout | MFU | published GPU-h | steady GPU-h (error) | "
             "all-in GPU-h (error) | goodput |", "|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append(
            f"| {r['id']} | {r['gpus']:,}, {r['layout']} | {100 * r['mfu']:.1f}% | "
            f"{r['published']:,.0f} | {r['steady']:,.0f} ({r['steady_error']:+.1f}%) | "
            f"{r['all_in']:,.0f} ({r['error']:+.1f}%) | {r['goodput']:.1f}% |")
    mean_steady = sum(abs(r["steady_error"]) for r in results) / len(results)
    mean = sum(abs(r["error"]) for r in results) / len(results)
    within = sum(abs(r["error"]) <= 25.0 for r in results)
    lines.append(f"| **mean \\|error\\|** | | | | {mean_steady:.1f}% | **{mean:.1f}%** | |")
    lines.append("")
    lines.append(f"{within} of {len(results)} runs within 25% all-in.")
    return lines


def main():
    capsim = next((a for a in sys.argv[1:] if not a.startswith("--")), "build/cli/capsim")
    print("\n".join(markdown(rows(capsim))))


if __name__ == "__main__":
    main()
