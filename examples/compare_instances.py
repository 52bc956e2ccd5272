"""Compares instance types for one plan: each instance's cheapest configuration, cost against days.

capsim.plan searches every layout on every instance the plan lists; "by_instance" keeps each
instance's cheapest and fastest configuration that meets the target.

    PYTHONPATH=build/python python3 examples/compare_instances.py OUT_DIR [PLAN.json]
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless: write files, open no window
import matplotlib.pyplot as plt  # noqa: E402

import capsim  # noqa: E402


def main(out_dir, plan=None):
    result = capsim.plan(plan, engine="analytic")
    rows = [(entry["instance"], entry["cheapest"]) for entry in result["by_instance"]]
    for instance, cheapest in rows:
        print(f"{instance} cost_usd={cheapest['cost_usd']:.6g} "
              f"days={cheapest['time_to_train_days']:.6g} nodes={cheapest['num_nodes']}")
    print(f"best {result['best']['instance']} cost_usd={result['best']['cost_usd']:.6g}")

    fig, ax = plt.subplots(figsize=(6, 4))
    for instance, cheapest in rows:
        ax.scatter(cheapest["time_to_train_days"], cheapest["cost_usd"] / 1e6, s=60)
        ax.annotate(f"{instance} ({cheapest['num_nodes']} nodes)",
                    (cheapest["time_to_train_days"], cheapest["cost_usd"] / 1e6),
                    textcoords="offset points", xytext=(6, 4), fontsize=8)
    ax.set_xlabel("days to train")
    ax.set_ylabel("cost (million USD)")
    ax.set_title(f"{result['plan']}: each instance's cheapest configuration")
    fig.tight_layout()
    out = Path(out_dir) / "compare_instances.png"
    fig.savefig(out, dpi=80)
    print(f"wrote {out}")


if __name__ == "__main__":
    main(*sys.argv[1:])
