"""Sweeps the tensor x pipeline layouts of one scenario with capsim.estimate and plots throughput.

The analytic estimator evaluates the whole sweep in one call; layouts that break a rule of the
scenario (a degree that does not divide the heads or layers) come back as errors and are left out.

    PYTHONPATH=build/python python3 examples/sweep_layout.py OUT_DIR [SCENARIO.json]
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless: write files, open no window
import matplotlib.pyplot as plt  # noqa: E402

import capsim  # noqa: E402


def main(out_dir, scenario="scenarios/llama3-70b-p5/scenario.json"):
    base = capsim.simulate(scenario, engine="analytic")
    gpus = base["num_gpus"]
    # One schedule for every depth, so the layouts differ in their degrees alone.
    layouts = [{"tensor": t, "pipeline": p, "data": gpus // (t * p), "context": 1,
                "virtual_pipeline_stages": 1, "schedule": "1f1b"}
               for t in (1, 2, 4, 8) for p in (1, 2, 4, 8, 16) if gpus % (t * p) == 0]
    figures = capsim.estimate(scenario, parallelism=layouts, errors="record")
    rows = [(layout, f) for layout, f in zip(layouts, figures) if "error" not in f and f["fits"]]
    for layout, f in rows:
        print(f"tp={layout['tensor']} pp={layout['pipeline']} dp={layout['data']} "
              f"tokens_per_s={f['tokens_per_s']:.6g} mfu={f['mfu']:.4f}")
    best_layout, best = max(rows, key=lambda row: row[1]["tokens_per_s"])
    print(f"best tp={best_layout['tensor']} pp={best_layout['pipeline']} "
          f"tokens_per_s={best['tokens_per_s']:.6g} of {len(rows)} fitting layouts "
          f"({len(layouts)} tried)")

    labels = [f"TP{l['tensor']} PP{l['pipeline']}" for l, _ in rows]
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.bar(labels, [f["tokens_per_s"] for _, f in rows], color="tab:blue")
    ax.set_ylabel("tokens/s (analytic)")
    ax.set_title(f"{base['scenario']}: layouts on {gpus} GPUs that fit in memory")
    ax.tick_params(axis="x", rotation=60)
    fig.tight_layout()
    out = Path(out_dir) / "sweep_layout.png"
    fig.savefig(out, dpi=80)
    print(f"wrote {out}")


if __name__ == "__main__":
    main(*sys.argv[1:])
