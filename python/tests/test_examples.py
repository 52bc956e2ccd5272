"""Runs each example headless; checks its plot is written and its printed numbers agree."""

import os
import re
import subprocess
import sys

import pytest

from conftest import REPO


def run_example(name, out_dir):
    done = subprocess.run([sys.executable, str(REPO / "examples" / name), str(out_dir)], cwd=REPO,
                          capture_output=True, text=True, check=False,
                          env=dict(os.environ, MPLBACKEND="Agg"))
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def numbers(line, key):
    return float(re.search(rf"\b{key}=(\S+)", line).group(1))


def check_plot(lines, path):
    assert lines[-1] == f"wrote {path}"
    assert path.stat().st_size > 1000
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_sweep_layout(tmp_path):
    lines = run_example("sweep_layout.py", tmp_path)
    check_plot(lines, tmp_path / "sweep_layout.png")
    rows = [l for l in lines if l.startswith("tp=")]
    best = next(l for l in lines if l.startswith("best "))
    assert len(rows) > 2
    assert numbers(best, "tokens_per_s") == max(numbers(l, "tokens_per_s") for l in rows)
    assert f"of {len(rows)} fitting layouts" in best


def test_compare_instances(tmp_path):
    lines = run_example("compare_instances.py", tmp_path)
    check_plot(lines, tmp_path / "compare_instances.png")
    rows = [l for l in lines if " cost_usd=" in l and not l.startswith("best ")]
    best = next(l for l in lines if l.startswith("best "))
    assert len(rows) >= 2
    assert numbers(best, "cost_usd") == min(numbers(l, "cost_usd") for l in rows)
    assert best.split()[1] in [l.split()[0] for l in rows]


def test_whatif_cost_wait(tmp_path):
    lines = run_example("whatif_cost_wait.py", tmp_path)
    check_plot(lines, tmp_path / "whatif_cost_wait.png")
    rows = [l for l in lines if "queue_wait_p95_s=" in l]
    cheapest = next(l for l in lines if l.startswith("cheapest "))
    assert len(rows) >= 2
    assert numbers(cheapest, "cost_usd") == min(numbers(l, "cost_usd") for l in rows)
