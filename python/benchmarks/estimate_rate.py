"""Measures capsim.estimate's rate: scenarios estimated per second from Python, in both forms.

Compare with the C++ planner screen (build/tests/bench/planner_bench, docs/performance.md).

    PYTHONPATH=build/python python3 python/benchmarks/estimate_rate.py [COUNT]
"""

import itertools
import json
import sys
import time

import capsim

BASE = "scenarios/llama3-70b-p5/scenario.json"


def layouts(count):
    """Returns `count` layouts of the base's 64 GPUs, cycling over degrees and batch settings."""
    space = [{"tensor": t, "pipeline": p, "data": 64 // (t * p * c), "context": c, "micro_batch_size": m, "zero_stage": z,
              "virtual_pipeline_stages": 1 if p == 1 else 5,
              "schedule": "1f1b" if p == 1 else "interleaved-1f1b"}
             for t, p, c, m, z in itertools.product((1, 2, 4, 8), (1, 2, 4), (1, 2), (1, 2),
                                                    (0, 1, 2))]
    return list(itertools.islice(itertools.cycle(space), count))


def rate(label, call, count):
    """Runs `call` (best of 3) and prints scenarios per second of wall and of CPU time (the C++
    benchmarks' rates are per CPU second, which a loaded machine does not skew)."""
    best_wall = best_cpu = float("inf")
    for _ in range(3):
        wall, cpu = time.perf_counter(), time.process_time()
        figures = call()
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    valid = sum("error" not in f for f in figures)
    print(f"{label}: {count / best_wall:,.0f} scenarios/s wall, {count / best_cpu:,.0f} per CPU "
          f"second ({count} in {best_wall:.3f} s, {valid} valid)")


def main(count=5000):
    count = int(count)
    with open(BASE, encoding="utf-8") as f:
        base = json.load(f)
    sweep = layouts(count)
    rate("base + parallelism list", lambda: capsim.estimate(base, parallelism=sweep,
                                                            errors="record"), count)
    scenarios = []
    for layout in sweep:
        scenario = json.loads(json.dumps(base))
        scenario["parallelism"].update(layout)
        scenarios.append(scenario)
    rate("list of scenario dicts", lambda: capsim.estimate(scenarios, errors="record"), count)


if __name__ == "__main__":
    main(*sys.argv[1:])
