"""Plots each autoscaling policy's cost against its jobs' queue wait, from one what-if replay.

capsim.whatif replays a job trace on an autoscaled cluster under every policy the what-if lists;
cheaper policies keep fewer nodes up and make jobs wait longer.

    PYTHONPATH=build/python python3 examples/whatif_cost_wait.py OUT_DIR [WHATIF.json]
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless: write files, open no window
import matplotlib.pyplot as plt  # noqa: E402

import capsim  # noqa: E402


def main(out_dir, whatif=None):
    result = capsim.whatif(whatif)
    policies = result["policies"]
    for p in policies:
        print(f"{p['name']} cost_usd={p['cost_usd']:.6g} "
              f"queue_wait_p95_s={p['queue_wait_p95_s']:.6g}")
    cheapest = min(policies, key=lambda p: p["cost_usd"])
    print(f"cheapest {cheapest['name']} cost_usd={cheapest['cost_usd']:.6g}")

    fig, ax = plt.subplots(figsize=(6, 4))
    markers = "osD^vP*Xh"
    for i, p in enumerate(policies):  # a legend, since policies often land on the same spot
        ax.scatter(p["queue_wait_p95_s"] / 60, p["cost_usd"], s=50, marker=markers[i % 9],
                   label=p["name"])
    ax.legend(fontsize=7)
    ax.set_xlabel("queue wait, 95th percentile (min)")
    ax.set_ylabel("cost (USD)")
    ax.set_title(f"{result['name']}: cost against queue wait per policy")
    fig.tight_layout()
    out = Path(out_dir) / "whatif_cost_wait.png"
    fig.savefig(out, dpi=80)
    print(f"wrote {out}")


if __name__ == "__main__":
    main(*sys.argv[1:])
