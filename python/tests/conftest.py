"""Shared helpers: the repository root, and the capsim CLI the module's answers are checked against."""

import json
import os
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
CAPSIM = os.environ.get("CAPSIM_BINARY", str(REPO / "build" / "cli" / "capsim"))
SCENARIOS = sorted(str(p.relative_to(REPO)) for p in REPO.glob("scenarios/*/scenario.json"))


@pytest.fixture(autouse=True)
def in_repository(monkeypatch):
    """Runs every test from the repository root, where the shipped inputs' paths start."""
    monkeypatch.chdir(REPO)


def run_cli(*args):
    """Runs the capsim CLI from the repository root; returns the CompletedProcess."""
    return subprocess.run([CAPSIM, *args], cwd=REPO, capture_output=True, text=True, check=False)


def cli_json(*args):
    """Returns what `capsim ARGS --json` prints, parsed; fails the test on a non-zero exit."""
    done = run_cli(*args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)
