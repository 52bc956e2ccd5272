#!/usr/bin/env python3
"""Regenerates the results tables of the docs in place from capsim's and the benchmarks' output.

Usage: scripts/docs-tables.py [CAPSIM] [BENCH_DIR]
                              [--only validation|performance|planner|simulator|calibration]
                              [--block NAME]...

CAPSIM is the capsim binary (default build/cli/capsim), BENCH_DIR the folder of the Google
Benchmark binaries (default build/tests/bench; only the performance page runs them). Each table
sits between `<!-- generated: NAME -->` and `<!-- end generated -->` and is rewritten whole, with
one stamp line above it: the commit (CAPSIM_COMMIT, else `git rev-parse --short HEAD`, else
"unknown"), the CPU (/proc/cpuinfo "model name"), for timings the load average, and the commands
that produced it. Prose outside the markers is kept. Pages: docs/validation.md and
docs/calibration.md take about a minute, docs/simulator.md a few seconds more, docs/planner.md
(every layout of five plan groups simulated) about ten minutes and docs/performance.md (the
benchmarks) about ten on two cores; run the timed pages on a quiet machine.
"""

import argparse
import json
import math
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MINUS = "\u2212"

DEV = "data/validation/dev.json"
CALIBRATION = "scenarios/validation/published-extra.json"
GB200 = "scenarios/validation/gb200-datasheet-check.json"
MOE_HOPPER = "scenarios/validation/moe-hopper.json"
MATERIALIZED = "scenarios/validation/megatron-sc21-materialized.json"
DEV_STACKS = "scenarios/validation/dev-stacks.json"
DENSE_BLACKWELL = "scenarios/validation/dense-blackwell.json"
MOE_BLACKWELL = "scenarios/validation/moe-blackwell.json"
DENSE_GB300 = "scenarios/validation/dense-gb300.json"
BLACKWELL_STACK_PROFILE = "scenarios/plans/blackwell-megatron-bridge.json"
# The dense Blackwell runs by training stack: (label, id prefix after "fit-"/"judged-").
BLACKWELL_STACKS = [("Megatron-Bridge (NeMo containers 25.09 to 26.06)", "mbridge"),
                    ("SimuMax B200 release v1.2", "simumax"),
                    ("both stacks, one factor", "")]

# What each dev.json group holds (the table labels read "GROUP (WHAT)").
DEV_GROUPS = {
    "DGXC benchmarking": "H100, NDR IB, Llama 3.1 8B/70B",
    "MPT llm-foundry": "A100 40/80GB RoCE, H100; FSDP",
    "Megatron-LM SC'21": "Selene A100, PTD-P and ZeRO-3",
}

# The cause of a dev.json case's error, by id prefix: the items of docs/validation.md's
# "Where the error comes from".
CAUSES = [
    ("narayanan21-t2-zero3", "1 (DeepSpeed 2021 ZeRO-3)"),
    ("narayanan21", "2 (2021 Megatron-LM)"),
    ("mpt-h100_80gb-fp8", "3 (fp8 on 2023 H100 software)"),
    ("mpt-h100", "3 (2023 H100 software)"),
    ("mpt-", "4, 5 (in-situ speed, loss kernel)"),
    ("dgxc", "4 (in-situ speed)"),
]

# Subsets of the validation sets and what-ifs on them: (what, file, arguments, engine).
DEV_SUBSETS = [
    ("dev.json without DeepSpeed's 2021 ZeRO-3 rows", DEV,
     "--cases mpt --cases dgxc --cases narayanan21-t1 --cases narayanan21-t2-ptdp", "event"),
    ("MPT A100 80GB tables", DEV, "--cases mpt-a100_80gb", "event"),
    ("MPT A100 40GB tables", DEV, "--cases mpt-a100_40gb", "event"),
    ("MPT H100 table (2023)", DEV, "--cases mpt-h100", "event"),
    ("Megatron SC'21 PTD-P rows", DEV, "--cases narayanan21-t1 --cases narayanan21-t2-ptdp",
     "event"),
    ("Megatron SC'21 ZeRO-3 rows", DEV, "--cases narayanan21-t2-zero3", "event"),
]
WHATIFS = [
    ("MPT without dropout (as llm-foundry trains)", DEV,
     "--cases mpt --set model.dropout=false", "analytic"),
    ("MPT without dropout, with flash-attn's one-kernel loss", DEV,
     "--cases mpt --set model.dropout=false --set model.cross_entropy=single-kernel",
     "analytic"),
    ("MPT with the one-kernel loss", DEV, "--cases mpt --set model.cross_entropy=single-kernel",
     "event"),
    ("Megatron SC'21 with the 2021 stack stated (materialised attention, serial TP backward, "
     "unfused loss)", MATERIALIZED, "", "event"),
    ("the same, PTD-P rows only", MATERIALIZED,
     "--cases narayanan21-t1 --cases narayanan21-t2-ptdp", "event"),
    ("Megatron SC'21 PTD-P rows, gradients reduced after the backward", DEV,
     "--cases narayanan21-t1 --cases narayanan21-t2-ptdp "
     "--set parallelism.overlap_grad_reduce=false", "event"),
    ("calibration set, every TP collective serial", CALIBRATION,
     "--set parallelism.tp_comm_overlap=false", "event"),
    ("Korthikanti 2022 runs in bf16", CALIBRATION,
     "--cases korthikanti --set parallelism.precision=bf16", "event"),
    ("MT-NLG runs with micro-batch 2", CALIBRATION,
     "--cases mtnlg --set parallelism.micro_batch_size=2", "event"),
]

# Each dev.json group as stated and with the training stack its source ran (docs/scenario.md,
# "Training stacks"): (what, file, arguments, engine).
STACKS = [
    ("Megatron SC'21 PTD-P rows as stated", DEV,
     "--cases narayanan21-t1 --cases narayanan21-t2-ptdp", "event"),
    ("the same, Megatron-LM of 2021", DEV,
     "--cases narayanan21-t1 --cases narayanan21-t2-ptdp "
     "--set stack.name=megatron-core --set stack.version=2021", "event"),
    ("Megatron SC'21 ZeRO-3 rows as stated", DEV, "--cases narayanan21-t2-zero3", "event"),
    ("the same, DeepSpeed's 2021 ZeRO-3", DEV,
     "--cases narayanan21-t2-zero3 --set stack.name=deepspeed --set stack.version=2021", "event"),
    ("MPT rows as stated", DEV, "--cases mpt", "event"),
    ("the same, llm-foundry", DEV, "--cases mpt --set stack=llm-foundry", "event"),
    ("DGXC rows as stated", DEV, "--cases dgxc", "event"),
    ("the same, NeMo 1 with the recipes' fused loss", DEV,
     "--cases dgxc --set stack.name=nemo --set stack.version=2023 "
     "--set model.cross_entropy=fused", "event"),
    ("all of dev.json, each group's stack named (`scripts/name-dev-stacks.py`)", DEV_STACKS, "",
     "event"),
]


def fixed(value, decimals):
    return f"{value:.{decimals}f}"


def signed(value, decimals):
    digits = fixed(abs(value), decimals)
    if float(digits) == 0.0:
        return "+" + digits
    return (MINUS if value < 0 else "+") + digits


def commit_stamp():
    if os.environ.get("CAPSIM_COMMIT"):
        return os.environ["CAPSIM_COMMIT"]
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, check=True)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


class Runner:
    """Runs capsim and the benchmarks from the repository root and remembers their outputs."""

    def __init__(self, capsim, bench_dir):
        self.capsim = capsim
        self.bench_dir = bench_dir
        self.cache = {}

    def run(self, argv, **kwargs):
        return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, **kwargs)

    def validate(self, cases_file, args="", engine="event"):
        key = (cases_file, args, engine)
        if key not in self.cache:
            argv = [self.capsim, "validate", cases_file, *shlex.split(args), "--json"]
            if engine != "event":
                argv[3:3] = ["--engine", engine]
            out = self.run(argv)
            if out.returncode != 0:
                sys.exit(f"docs-tables: {' '.join(argv)} exited {out.returncode}: {out.stderr}")
            self.cache[key] = json.loads(out.stdout)
        return self.cache[key]

    def bench(self, name, args):
        key = (name, args)
        if key not in self.cache:
            argv = ["nice", str(Path(self.bench_dir) / name), *shlex.split(args),
                    "--benchmark_format=json"]
            print(f"docs-tables: {' '.join(argv)}", file=sys.stderr)
            out = self.run(argv)
            if out.returncode != 0:
                sys.exit(f"docs-tables: {name} exited {out.returncode}: {out.stderr}")
            self.cache[key] = json.loads(out.stdout)["benchmarks"]
        return self.cache[key]

    def timed(self, argv, env=None, stdout=None):
        """Returns (wall seconds, max RSS in MB, stderr) of one run under /usr/bin/time; its
        standard output goes into the list `stdout` when one is given."""
        with tempfile.NamedTemporaryFile("r", suffix=".time") as times:
            full = ["/usr/bin/time", "-o", times.name, "-f", "%e %M", "nice", *argv]
            print(f"docs-tables: {' '.join(argv)}", file=sys.stderr)
            out = self.run(full, env={**os.environ, **(env or {})})
            if out.returncode != 0:
                sys.exit(f"docs-tables: {' '.join(argv)} exited {out.returncode}: {out.stderr}")
            wall, rss_kb = times.read().split()[-2:]
        if stdout is not None:
            stdout.append(out.stdout)
        return float(wall), int(rss_kb) / 1024.0, out.stderr


def validate_cmd(cases_file, args="", engine="event"):
    engine_arg = "" if engine == "event" else " --engine " + engine
    extra = (" " + args) if args else ""
    return f"capsim validate {cases_file}{engine_arg}{extra} --json"


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return lines


def mape(summary, decimals=1):
    return fixed(summary["mape_pct"], decimals) + "%"


def bias(summary, decimals=1):
    return signed(summary["mean_error_pct"], decimals) + "%"


# ---- docs/validation.md ------------------------------------------------------------------------


def block_validation_dev(r):
    event, analytic = r.validate(DEV)["summary"], r.validate(DEV, engine="analytic")["summary"]
    rows = []
    for group, s in event["by_group"].items():
        a = analytic["by_group"][group]
        label = f"{group} ({DEV_GROUPS.get(group, 'dev.json')})"
        rows.append([label, s["n"], mape(s), mape(a), bias(s), f"{s['within_10_pct']}/{s['n']}"])
    rows.append(["**all**", event["n"], f"**{mape(event, 2)}**", f"**{mape(analytic, 2)}**",
                 bias(event), f"{event['within_10_pct']}/{event['n']}"])
    header = ["group", "n", "event MAPE", "analytic MAPE", "mean signed error",
              "cases within ±10%"]
    return [validate_cmd(DEV), validate_cmd(DEV, engine="analytic")], table(header, rows)


def subsets_block(entries, first):
    def block(r):
        rows = []
        for what, cases_file, args, engine in entries:
            s = r.validate(cases_file, args, engine)["summary"]
            cmd = validate_cmd(cases_file, args, engine).replace(" --json", "")
            rows.append([what, f"`{cmd}`", s["n"], mape(s), bias(s), s["within_10_pct"],
                         s["predicted_out_of_memory"]])
        header = [first, "command", "n", "MAPE", "mean signed error", "within ±10%",
                  "predicted out of memory"]
        return ["each row's command with `--json`"], table(header, rows)
    return block


def relative_gaps(cases_file):
    def gaps(r):
        event = {c["id"]: c["predicted_iteration_time_s"] for c in r.validate(cases_file)["cases"]}
        analytic = {c["id"]: c["predicted_iteration_time_s"]
                    for c in r.validate(cases_file, engine="analytic")["cases"]}
        return [100.0 * abs(event[i] / analytic[i] - 1.0) for i in event if i in analytic]
    return gaps


def block_validation_engines(r):
    rows = []
    commands = []
    for label, cases_file in [("dev.json", DEV), ("calibration set", CALIBRATION),
                              ("GB200 datasheet check", GB200)]:
        gaps = relative_gaps(cases_file)(r)
        rows.append([label, len(gaps), fixed(statistics.mean(gaps), 3) + "%",
                     fixed(max(gaps), 3) + "%"])
        commands += [validate_cmd(cases_file), validate_cmd(cases_file, engine="analytic")]
    header = ["cases", "n", "mean \\|event / analytic − 1\\|", "largest"]
    return commands, table(header, rows)


def block_validation_calibration(r):
    event = r.validate(CALIBRATION)["summary"]
    analytic = r.validate(CALIBRATION, engine="analytic")["summary"]
    rows = []
    for group, s in event["by_group"].items():
        a = analytic["by_group"][group]
        rows.append([group, s["n"], f"{mape(s)} / {bias(s)}", f"{mape(a)} / {bias(a)}"])
    rows.append(["**all**", event["n"],
                 f"**{mape(event, 2)} / {bias(event)}** ({event['within_10_pct']} within ±10%)",
                 f"{mape(analytic, 2)} / {bias(analytic)} ({analytic['within_10_pct']})"])
    header = ["group", "n", "event MAPE / mean signed error", "analytic"]
    return [validate_cmd(CALIBRATION), validate_cmd(CALIBRATION, engine="analytic")], \
        table(header, rows)


def cause_of(case_id):
    for prefix, cause in CAUSES:
        if case_id.startswith(prefix):
            return cause
    return ""


def case_rows(cases):
    return [[f"`{c['id']}`", fixed(c["measured_iteration_time_s"], 2),
             fixed(c["predicted_iteration_time_s"], 2), signed(c["error_pct"], 1) + "%",
             cause_of(c["id"])] for c in cases]


def block_validation_worst(r):
    cases = sorted(r.validate(DEV)["cases"], key=lambda c: -abs(c["error_pct"]))[:10]
    header = ["case", "measured s", "predicted s", "error", "cause (item below)"]
    return [validate_cmd(DEV)], table(header, case_rows(cases))


def block_validation_worst_slow(r):
    cases = sorted(r.validate(DEV)["cases"], key=lambda c: -c["error_pct"])[:3]
    header = ["case", "measured s", "predicted s", "error", "cause (item below)"]
    return [validate_cmd(DEV)], table(header, case_rows(cases))


def block_validation_dev_oom(r):
    cases = [c for c in r.validate(DEV)["cases"] if not c["fits_in_memory"]]
    rows = [[f"`{c['id']}`", fixed(c["predicted_peak_memory_gib"], 1)] for c in cases]
    return [validate_cmd(DEV)], table(["case", "predicted peak GiB"], rows)


def block_validation_calibration_outliers(r):
    cases = [c for c in r.validate(CALIBRATION)["cases"]
             if abs(c["error_pct"]) > 10.0 or not c["fits_in_memory"]]
    rows = [[f"`{c['id']}`", fixed(c["measured_iteration_time_s"], 2),
             fixed(c["predicted_iteration_time_s"], 2), signed(c["error_pct"], 1) + "%",
             fixed(c["predicted_peak_memory_gib"], 1) + ("" if c["fits_in_memory"] else " (!)")]
            for c in cases]
    header = ["case", "measured s", "predicted s", "error", "predicted peak GiB (! = over)"]
    return [validate_cmd(CALIBRATION)], table(header, rows)


def block_validation_moe_hopper(r):
    event, analytic = r.validate(MOE_HOPPER), r.validate(MOE_HOPPER, engine="analytic")
    by_id = {c["id"]: c for c in analytic["cases"]}
    rows = [[f"`{c['id']}`", fixed(c["measured_iteration_time_s"], 3),
             signed(by_id[c["id"]]["error_pct"], 1) + "%", signed(c["error_pct"], 1) + "%",
             fixed(c["predicted_peak_memory_gib"], 1) + ("" if c["fits_in_memory"] else " (!)")]
            for c in event["cases"]]
    worst = lambda result: fixed(max(abs(c["error_pct"]) for c in result["cases"]), 1) + "%"
    rows.append(["**MAPE / worst**", "", f"**{mape(analytic['summary'])} / {worst(analytic)}**",
                 f"**{mape(event['summary'])} / {worst(event)}**", ""])
    header = ["case", "measured (s)", "analytic", "event", "predicted peak GiB (! = over)"]
    return [validate_cmd(MOE_HOPPER), validate_cmd(MOE_HOPPER, engine="analytic")], \
        table(header, rows)


def blackwell_stack_factor():
    """The in-situ factor of the Megatron-Bridge Blackwell profile the shipped plans use."""
    with open(BLACKWELL_STACK_PROFILE) as f:
        return json.load(f)["software_efficiency"]


def block_validation_moe_blackwell(r):
    """Per group, analytic engine: at each case's stack's Blackwell factor (the default) and at
    the dense Megatron-Bridge one for every case."""
    args = f"--set profile={BLACKWELL_STACK_PROFILE}"
    default = r.validate(MOE_BLACKWELL, engine="analytic")["summary"]
    stack = r.validate(MOE_BLACKWELL, args, "analytic")["summary"]
    rows = []
    for group, g in sorted(default["by_group"].items()):
        b = stack["by_group"][group]
        rows.append([group, g["n"], f"{mape(g)} / {bias(g)}", f"{g['within_10_pct']}/{g['n']}",
                     mape(b)])
    rows.append(["**all**", default["n"], f"**{mape(default)}** / {bias(default)}",
                 f"{default['within_10_pct']}/{default['n']}", f"**{mape(stack)}**"])
    header = ["group", "runs",
              "MAPE / mean signed error at the stack's Blackwell factor (the default)",
              "within ±10%",
              f"MAPE at the Megatron-Bridge Blackwell factor ({blackwell_stack_factor():.4f}) "
              "for every run, tensor speed 1"]
    return [validate_cmd(MOE_BLACKWELL, engine="analytic"),
            validate_cmd(MOE_BLACKWELL, args, "analytic")], table(header, rows)


RANKED_FILES = ["data/validation/dev.json", DEV_STACKS, "scenarios/validation/published-extra.json",
                "scenarios/validation/dense-blackwell.json", "scenarios/validation/moe-hopper.json",
                "scenarios/validation/moe-blackwell.json"]


def block_validation_ranking(r):
    rows, commands = [], []
    for path in RANKED_FILES:
        ranking = r.validate(path, engine="analytic")["summary"]["layout_ranking"]
        commands.append(validate_cmd(path, engine="analytic"))
        for g in ranking:
            rows.append([f"`{path}`", g["label"], g["n"], g["layouts"], signed(g["spearman"], 2),
                         fixed(g["pick_cost_pct"], 1) + "%"])
    header = ["file", "group", "runs", "layouts", "Spearman", "pick costs"]
    return commands, table(header, rows)


def block_validation_gb200(r):
    event, analytic = r.validate(GB200), r.validate(GB200, engine="analytic")
    errors = {c["id"]: c["error_pct"] for c in analytic["cases"]}
    rows = [[f"`{c['id']}`", fixed(c["measured_iteration_time_s"], 2),
             fixed(c["predicted_iteration_time_s"], 2), signed(c["error_pct"], 1) + "%",
             signed(errors[c["id"]], 1) + "%"] for c in event["cases"]]
    s, a = event["summary"], analytic["summary"]
    rows.append(["**all** (MAPE)", "", "", f"**{mape(s)}**", mape(a)])
    header = ["case", "measured s", "predicted s", "event error", "analytic error"]
    return [validate_cmd(GB200), validate_cmd(GB200, engine="analytic")], table(header, rows)


# One stack's factor carried to others: (label, calibration-set prefix, base profile).
FIT_SOURCES = [
    ("Korthikanti 2022, Megatron-LM, A100", "korthikanti22", "a100-ib"),
    ("MT-NLG 530B, DeepSpeed + Megatron 2021, A100", "mtnlg", "a100-ib"),
    ("BLOOM 176B, Megatron-DeepSpeed 2022, A100", "bloom", "a100-ib"),
    ("DGXC v25.03, H100", "dgxc2503", "h100-ib"),
    ("NeMo 24.07 and its long-sequence table, H100", "nemo", "h100-ib"),
    ("Megatron-Bridge, H100", "mbridge", "h100-ib"),
]
FIT_TARGETS = {
    "a100-ib": [("dev MPT A100 80GB", DEV, "mpt-a100_80gb"),
                ("dev MPT A100 40GB", DEV, "mpt-a100_40gb"),
                ("Korthikanti 2022", CALIBRATION, "korthikanti22"),
                ("MT-NLG", CALIBRATION, "mtnlg"), ("BLOOM", CALIBRATION, "bloom")],
    "h100-ib": [("dev DGXC", DEV, "dgxc"), ("DGXC v25.03", CALIBRATION, "dgxc2503"),
                ("NeMo 24.07", CALIBRATION, "nemo"), ("Megatron-Bridge", CALIBRATION, "mbridge")],
}


def fit_step(r, prefix, profile, out):
    argv = [r.capsim, "calibrate", "step", CALIBRATION, "--cases", prefix, "--profile",
            f"scenarios/profiles/{profile}.json", "-o", out]
    done = r.run(argv)
    if done.returncode != 0:
        sys.exit(f"docs-tables: {' '.join(argv)} exited {done.returncode}: {done.stderr}")
    return json.loads(Path(out).read_text())["software_efficiency"]


def block_validation_factors(r):
    rows = []
    for family, profile, prefixes in [("A100", "a100-ib", ["korthikanti22", "mtnlg", "bloom"]),
                                      ("H100", "h100-ib", ["dgxc2503", "nemo", "mbridge"])]:
        shipped = json.loads((ROOT / f"scenarios/profiles/{profile}.json").read_text())
        cases = r.validate(CALIBRATION, " ".join(f"--cases {p}" for p in prefixes))["summary"]
        rows.append([family, f"`{' '.join(prefixes)}`", cases["n"],
                     fixed(shipped["software_efficiency"], 3), f"{mape(cases, 2)} / {bias(cases)}"])
    header = ["family", "calibration cases (id prefixes)", "n", "shipped `software_efficiency`",
              "residual: event MAPE / mean signed error"]
    return ["`software_efficiency` of `scenarios/profiles/{a100,h100}-ib.json`",
            validate_cmd(CALIBRATION, "--cases PREFIX...")], table(header, rows)


def block_validation_transfer(r):
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, prefix, profile in FIT_SOURCES:
            out = f"{tmp}/{prefix}.json"
            factor = fit_step(r, prefix, profile, out)
            for target, cases_file, target_prefix in FIT_TARGETS[profile]:
                if target_prefix == prefix:
                    continue
                args = f"--cases {target_prefix} --set profile={out}"
                s = r.validate(cases_file, args)["summary"]
                rows.append([label, fixed(factor, 3), target, f"{mape(s)} / {bias(s)}"])
                del r.cache[(cases_file, args, "event")]
    header = ["fitted on", "factor", "predicts", "event MAPE / mean signed error"]
    commands = ["capsim calibrate step " + CALIBRATION +
                " --cases PREFIX --profile scenarios/profiles/PROFILE.json -o /tmp/f.json",
                "capsim validate FILE --cases PREFIX --set profile=/tmp/f.json --json"]
    return commands, table(header, rows)


def borrowed_factor():
    """The geometric mean of the shipped A100 and H100 in-situ factors, as io/in_situ_prior.cpp
    gives a GPU family capsim has no factor for."""
    factors = [json.loads(Path(f"scenarios/profiles/{name}-ib.json").read_text())["software_efficiency"]
               for name in ("a100", "h100")]
    return round(math.sqrt(factors[0] * factors[1]), 6)


def block_validation_dense_blackwell(r):
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, stack in BLACKWELL_STACKS:
            out = f"{tmp}/{stack or 'all'}.json"
            argv = [r.capsim, "calibrate", "step", DENSE_BLACKWELL, "--cases", "fit-" + stack,
                    "-o", out]
            done = r.run(argv)
            if done.returncode != 0:
                sys.exit(f"docs-tables: {' '.join(argv)} exited {done.returncode}: {done.stderr}")
            profile = json.loads(Path(out).read_text())
            factor = profile["software_efficiency"]
            fit = r.validate(DENSE_BLACKWELL, f"--cases fit-{stack}")["summary"]
            # The factor a family without published runs borrows: the shipped families' mean.
            profile["software_efficiency"] = borrowed_factor()
            borrowed = f"{tmp}/borrowed-{stack or 'all'}.json"
            Path(borrowed).write_text(json.dumps(profile))
            before = r.validate(DENSE_BLACKWELL, f"--cases judged-{stack} --set profile={borrowed}")["summary"]
            args = f"--cases judged-{stack} --set profile={out}"
            event = r.validate(DENSE_BLACKWELL, args)["summary"]
            analytic = r.validate(DENSE_BLACKWELL, args, "analytic")["summary"]
            worst_group = max(g["mape_pct"] for g in event["by_group"].values())
            rows.append([label, fit["n"], fixed(factor, 4), event["n"], mape(before),
                         f"**{mape(event)}** / {bias(event)}", mape(analytic),
                         fixed(worst_group, 1) + "%", f"{event['within_10_pct']}/{event['n']}"])
            for engine in ("event", "analytic"):
                del r.cache[(DENSE_BLACKWELL, args, engine)]
    # As shipped: each case at its stack's factor (io/in_situ_prior.cpp), no profile given.
    event = r.validate(DENSE_BLACKWELL, "--cases judged-")["summary"]
    analytic = r.validate(DENSE_BLACKWELL, "--cases judged-", "analytic")["summary"]
    worst_group = max(g["mape_pct"] for g in event["by_group"].values())
    rows.append(["as shipped: each run at its stack's factor", "", "", event["n"], "",
                 f"**{mape(event)}** / {bias(event)}", mape(analytic),
                 fixed(worst_group, 1) + "%", f"{event['within_10_pct']}/{event['n']}"])
    header = ["stack", "fit runs", "fitted `software_efficiency`", "judged runs",
              f"judged MAPE at the borrowed mean ({borrowed_factor():.3f})", "judged event MAPE / mean signed error",
              "judged analytic MAPE", "worst group (event)", "judged within ±10%"]
    commands = [f"capsim calibrate step {DENSE_BLACKWELL} --cases fit-STACK -o /tmp/f.json",
                validate_cmd(DENSE_BLACKWELL, "--cases judged-STACK --set profile=/tmp/f.json"),
                validate_cmd(DENSE_BLACKWELL, "--cases judged-STACK --set profile=/tmp/f.json",
                             "analytic"),
                validate_cmd(DENSE_BLACKWELL, "--cases judged-")]
    return commands, table(header, rows)


def block_validation_dense_blackwell_cases(r):
    event, analytic = r.validate(DENSE_BLACKWELL), r.validate(DENSE_BLACKWELL, engine="analytic")
    errors = {c["id"]: c["error_pct"] for c in analytic["cases"]}
    rows = [[f"`{c['id']}`", c["group"], fixed(c["measured_iteration_time_s"], 3),
             signed(c["error_pct"], 1) + "%", signed(errors[c["id"]], 1) + "%",
             fixed(c["predicted_peak_memory_gib"], 1) + ("" if c["fits_in_memory"] else " (!)")]
            for c in event["cases"]]
    s, a = event["summary"], analytic["summary"]
    rows.append(["**all** (MAPE)", "", "", f"**{mape(s)}**", mape(a), ""])
    header = ["case", "group", "measured s", "event error", "analytic error",
              "predicted peak GiB (! = over)"]
    return [validate_cmd(DENSE_BLACKWELL), validate_cmd(DENSE_BLACKWELL, engine="analytic")], \
        table(header, rows)


def gb300_groups(r, cases_file, tmp):
    """Per group of a file's GB300 cases: n, MAPE at tensor speed 1 (the datasheet profile at its
    family's in-situ factor, fitted to nothing of GB300's) and as shipped (event, analytic)."""
    out = f"{tmp}/gb300.json"
    argv = [r.capsim, "calibrate", "step", cases_file, "--tensor-speed", "-o", out]
    done = r.run(argv)
    if done.returncode != 0:
        sys.exit(f"docs-tables: {' '.join(argv)} exited {done.returncode}: {done.stderr}")
    profile = json.loads(Path(out).read_text())
    speed = profile.pop("tensor_speed")
    parity = f"{tmp}/parity.json"
    Path(parity).write_text(json.dumps(profile))
    at_one = r.validate(cases_file, f"--set profile={parity}", "analytic")["summary"]
    event = r.validate(cases_file)["summary"]
    analytic = r.validate(cases_file, engine="analytic")["summary"]
    rows = []
    for group, g in event["by_group"].items():
        rows.append([group, g["n"], mape(at_one["by_group"][group]), f"**{mape(g)}** / {bias(g)}",
                     mape(analytic["by_group"][group]), f"{g['within_10_pct']}/{g['n']}"])
    rows.append(["**all**", event["n"], mape(at_one), f"**{mape(event)}** / {bias(event)}",
                 mape(analytic), f"{event['within_10_pct']}/{event['n']}"])
    return speed, rows


def block_validation_dense_gb300(r):
    with tempfile.TemporaryDirectory() as tmp:
        speed, rows = gb300_groups(r, DENSE_GB300, tmp)
    header = ["group", "runs", "MAPE at tensor speed 1 (analytic)",
              f"MAPE / mean signed error as shipped (event; tensor speed {speed:.6g})",
              "analytic MAPE", "within ±10%"]
    commands = [f"capsim calibrate step {DENSE_GB300} --tensor-speed -o /tmp/g.json",
                f"capsim validate {DENSE_GB300} --engine analytic --set profile=/tmp/g.json "
                "--json, its tensor_speed removed",
                validate_cmd(DENSE_GB300), validate_cmd(DENSE_GB300, engine="analytic")]
    return commands, table(header, rows)


# ---- docs/performance.md -----------------------------------------------------------------------

ANALYTIC_ARGS = "--benchmark_repetitions=5 --benchmark_report_aggregates_only=true"
SIM_HEAD_ARGS = "--benchmark_filter='BM_Gpt3_175B|BM_Llama3_405B_16384|BM_DeepSeekV3' --benchmark_min_time=0.5"
SIM_SCALE_ARGS = "--benchmark_filter='BM_Scale_|BM_Gpt3_8_Gpus|BM_Full_' --benchmark_min_time=0.2"
PLANNER_ARGS = ("--benchmark_min_time=1 --benchmark_repetitions=5 "
                "--benchmark_report_aggregates_only=true")
LLAMA_405B = "tests/bench/llama3-405b-16384.json"
GPT3_SCENARIO = "scenarios/gpt3-175b-selene-1024/scenario.json"
NCCL_LOG = "data/nccl/h100_p5_1node_allreduce_awsbatch.txt"


def bench_cmd(name, args):
    return f"build/tests/bench/{name} {args}".strip()


def by_name(benchmarks, aggregate=None):
    out = {}
    for b in benchmarks:
        if aggregate is not None and b.get("aggregate_name") != aggregate:
            continue
        out[b.get("run_name", b["name"])] = b
    return out


def in_unit(b, unit):
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    return b["real_time"] * scale[b["time_unit"]] / scale[unit]


def sig(value, digits=2):
    """A figure with `digits` significant digits and no exponent: 17.6, 9.4, 0.48, 2.0, 123."""
    if value >= 10 ** digits:
        return f"{value:.0f}"
    text = f"{value:#.{digits}g}"
    return text[:-1] if text.endswith(".") else text


ANALYTIC_LABELS = {
    "BM_AnalyticEstimate/gpt3_175b_selene": "GPT-3 175B, 1,024 A100 (TP8 PP8 DP16, 96 micro-batches)",
    "BM_AnalyticEstimateOversubscribed": "the same on a 2:1 oversubscribed fabric, 4 nodes per leaf",
    "BM_AnalyticEstimate/gpt_30b_p4d": "GPT 30B on 16 × p4d (TP8 PP2 DP8)",
    "BM_AnalyticEstimate/llama3_70b_p5": "Llama-3 70B on 8 × p5 (TP4 PP4 CP2 DP2, interleaved v=5)",
    "BM_AnalyticScreenSweep": "layout sweep (micro-batch varies each call)",
    "BM_AnalyticEstimate/deepseek_v3_h100":
        "DeepSeek-V3 on 1,024 H100 (TP2 PP8 EP64, interleaved v=4; MLA, 256 experts)",
    "BM_AnalyticEstimate/qwen3_235b_h100":
        "Qwen3-235B-A22B on 256 H100 (TP2 PP8 EP32, interleaved v=4; 128 experts)",
}


def block_perf_analytic(r):
    runs = r.bench("analytic_bench", ANALYTIC_ARGS)
    median, stddev = by_name(runs, "median"), by_name(runs, "stddev")
    rows = [[ANALYTIC_LABELS.get(name, name), sig(in_unit(b, "us")),
             sig(in_unit(stddev[name], "us"))] for name, b in median.items()]
    header = ["benchmark", "µs per evaluation (median of 5)", "standard deviation, µs"]
    return [bench_cmd("analytic_bench", ANALYTIC_ARGS)], table(header, rows)


def block_perf_stage_balance(r):
    runs = by_name(r.bench("stage_balance_bench", ""))
    rows = []
    for name, b in runs.items():
        family, stages = name.split("/")[:2]
        kind = ("interleaved (2 chunks per stage), bounded" if "Interleaved" in family
                else "1F1B, runs of alike destinations timed at their ends")
        rows.append([f"{int(stages):,}", kind, sig(in_unit(b, "s")) + " s"])
    return [bench_cmd("stage_balance_bench", "")], table(["stages", "search", "wall"], rows)


# Runs of a whole process whose wall time is quoted: the best of this many, since a shared
# 2-core VM's speed varies between runs (max RSS is the largest of them).
WHOLE_PROCESS_RUNS = 3


def best_of_runs(r, argv):
    """(least wall seconds, largest max RSS in MB) over WHOLE_PROCESS_RUNS runs of argv."""
    runs = [r.timed(argv)[:2] for _ in range(WHOLE_PROCESS_RUNS)]
    return min(wall for wall, _ in runs), max(rss for _, rss in runs)


def perf_sim_process(r):
    if "sim_process" not in r.cache:
        wall, rss, _ = r.timed([r.capsim, "simulate", LLAMA_405B])
        every_wall, every_rss = best_of_runs(r, [r.capsim, "simulate", GPT3_SCENARIO, "--every-gpu"])
        r.cache["sim_process"] = (wall, rss, every_wall, every_rss)
    return r.cache["sim_process"]


def perf_sim_every_405b(r):
    """Wall and max RSS of simulating every one of the 405B layout's 16,384 GPUs."""
    if "sim_every_405b" not in r.cache:
        r.cache["sim_every_405b"] = best_of_runs(r, [r.capsim, "simulate", LLAMA_405B, "--every-gpu"])
    return r.cache["sim_every_405b"]


FABRIC_ARGS = "--benchmark_repetitions=3 --benchmark_report_aggregates_only=true"


def four_jobs(r):
    """The median of BM_FourJobs_4096_A100 (tests/bench/fabric_bench.cpp)."""
    return by_name(r.bench("fabric_bench", FABRIC_ARGS), "median")["BM_FourJobs_4096_A100"]


FABRIC_SCALING_ARGS = "--benchmark_filter=BM_SharedFabric"


def block_perf_fabric_scaling(r):
    runs = {name.split("/iterations:")[0]: b
            for name, b in by_name(r.bench("fabric_bench", FABRIC_SCALING_ARGS)).items()}
    jobs, dps = (1, 2, 4), (4, 8, 16)
    rows = []
    for dp in dps:
        cells = [f"{sig(in_unit(runs[f'BM_SharedFabric/jobs:{j}/dp:{dp}'], 's'))} s" for j in jobs]
        rows.append([f"{dp * 64:,} (DP{dp})"] + cells)
    header = ["GPUs per job"] + [f"{j} job{'s' if j > 1 else ''}" for j in jobs]
    return [bench_cmd("fabric_bench", FABRIC_SCALING_ARGS)], table(header, rows)


def block_perf_fabric(r):
    b = four_jobs(r)
    rows = [["four jobs, 4,096 GPUs", f"{sig(in_unit(b, 's'))} s", f"{sig(b['build_wall_s'])} s",
             f"{sig(b['run_wall_s'])} s", f"{b['child_peak_rss_mib']:.0f} MiB"]]
    header = ["run", "wall per simulation (median of 3)", "platform and actors", "replay",
              "child max RSS"]
    return [bench_cmd("fabric_bench", FABRIC_ARGS)], table(header, rows)


def block_perf_sim(r):
    runs = by_name(r.bench("sim_bench", SIM_HEAD_ARGS))
    gpt3, llama = runs["BM_Gpt3_175B_1024_A100"], runs["BM_Llama3_405B_16384_H100"]
    wall, rss, every_wall, every_rss = perf_sim_process(r)
    every_405b_wall, every_405b_rss = perf_sim_every_405b(r)
    deepseek = runs["BM_DeepSeekV3_2048_H100"]
    rows = [
        ["**GPT-3 175B, 1,024 A100** (TP8 PP8 DP16)", "1,024", int(gpt3["micro_batches"]), 8,
         f"**{sig(in_unit(gpt3, 'ms'), 3)} ms**", f"{gpt3['simulated_iteration_s']:.4f} s"],
        ["**Llama-3 405B, 16,384 H100** (TP8 PP16 DP128, stages 7 + 14×8 + 7)", "16,384",
         int(llama["micro_batches"]), 16, f"**{sig(in_unit(llama, 'ms'), 3)} ms**",
         f"{llama['simulated_iteration_s']:.4f} s"],
        ["**DeepSeek-V3, 2,048 H100** (TP2 PP16 DP64 EP64, stages 3 + 14×4 + 2)", "2,048",
         int(deepseek["micro_batches"]), 16, f"**{sig(in_unit(deepseek, 'ms'), 3)} ms**",
         f"{deepseek['simulated_iteration_s']:.4f} s"],
        [f"`capsim simulate {LLAMA_405B}`, whole process", "16,384", int(llama["micro_batches"]),
         16, f"{sig(wall)} s, **{rss:.0f} MB max RSS**", ""],
        [f"`capsim simulate {GPT3_SCENARIO} --every-gpu`, whole process", "1,024",
         int(gpt3["micro_batches"]), "1,024", f"{sig(every_wall, 3)} s, {every_rss:.0f} MB max RSS",
         ""],
        [f"`capsim simulate {LLAMA_405B} --every-gpu`, whole process", "16,384",
         int(llama["micro_batches"]), "16,384",
         f"{sig(every_405b_wall, 3)} s, {every_405b_rss:.0f} MB max RSS", ""],
    ]
    header = ["benchmark", "GPUs", "micro-batches", "simulated GPUs", "wall per simulation",
              "simulated iteration"]
    commands = [bench_cmd("sim_bench", SIM_HEAD_ARGS),
                f'/usr/bin/time -f "%e s %M KB" capsim simulate {LLAMA_405B}',
                f'/usr/bin/time -f "%e s %M KB" capsim simulate {GPT3_SCENARIO} --every-gpu '
                f'(best of {WHOLE_PROCESS_RUNS})',
                f'/usr/bin/time -f "%e s %M KB" capsim simulate {LLAMA_405B} --every-gpu '
                f'(best of {WHOLE_PROCESS_RUNS})']
    return commands, table(header, rows)


def scale_rows(r, family, label_of):
    runs = r.bench("sim_bench", SIM_SCALE_ARGS)
    cells = [], []
    seen = set()
    for b in runs:
        name = b.get("run_name", b["name"])
        if not name.startswith(family + "/") or name in seen:
            continue
        seen.add(name)
        cells[0].append(label_of(b))
        cells[1].append(sig(in_unit(b, "ms"), 3) + " ms")
    return cells


def block_perf_sim_gpus(r):
    runs = by_name(r.bench("sim_bench", SIM_SCALE_ARGS))
    heads = ["8"]
    walls = [sig(in_unit(runs["BM_Gpt3_8_Gpus"], "ms"), 3) + " ms"]
    more_heads, more_walls = scale_rows(r, "BM_Scale_Llama3_405B_Dp",
                                        lambda b: f"{int(b['gpus']):,}")
    header = ["GPUs"] + heads + more_heads
    return [bench_cmd("sim_bench", SIM_SCALE_ARGS)], table(header, [["wall"] + walls + more_walls])


def scaling_block(family, first, label_of=None):
    def block(r):
        heads, walls = scale_rows(r, family, label_of or (lambda b: b["name"].split("/")[1]))
        return [bench_cmd("sim_bench", SIM_SCALE_ARGS)], table([first] + heads, [["wall"] + walls])
    return block


def block_perf_sim_layers(r):
    heads, zero1 = scale_rows(r, "BM_Scale_Gpt3_Layers", lambda b: b["name"].split("/")[1])
    _, zero3 = scale_rows(r, "BM_Scale_Gpt3_Layers_Zero3", lambda b: b["name"].split("/")[1])
    rows = [["wall, ZeRO-1 (`BM_Scale_Gpt3_Layers`)"] + zero1,
            ["wall, ZeRO-3 (`BM_Scale_Gpt3_Layers_Zero3`)"] + zero3]
    return [bench_cmd("sim_bench", SIM_SCALE_ARGS)], table(["layers"] + heads, rows)


def block_perf_sim_full(r):
    runs = r.bench("sim_bench", SIM_SCALE_ARGS)
    heads, walls, rss = [], [], []
    for b in runs:
        if b["name"].startswith("BM_Full_Gpt3_Dp/"):
            heads.append(f"{int(b['gpus']):,}")
            walls.append(sig(in_unit(b, "s"), 3) + " s")
            rss.append(f"{b['child_peak_rss_mib']:.0f} MiB")
    rows = [["wall"] + walls, ["child max RSS"] + rss]
    return [bench_cmd("sim_bench", SIM_SCALE_ARGS)], table(["GPUs"] + heads, rows)


PLANNER_LABELS = {
    "BM_ScreenDefaultPlan/nodes:1/bounds:1":
        "screen of the default plan's space, 1 node count × 3 instances",
    "BM_ScreenDefaultPlan/nodes:4/bounds:1": "same, 4 node counts (16–128)",
    "BM_ScreenDefaultPlan/nodes:1/bounds:0": "1 node count, every layout estimated in full",
    "BM_ScreenDefaultPlan/nodes:4/bounds:0": "4 node counts, every layout estimated in full",
}


def block_perf_planner(r):
    runs = r.bench("planner_bench", PLANNER_ARGS)
    median = by_name(runs, "median")
    rows = []
    for name, label in PLANNER_LABELS.items():
        b = median[name]
        rows.append([label, f"{b['estimator_evals_per_s'] / 1000:.0f}k",
                     f"{b['full_estimates_per_s'] / 1000:.0f}k",
                     f"{100 * b['bounded_share']:.0f}%", sig(in_unit(b, "ms"), 3) + " ms"])
    one = median["BM_ScreenOneCandidate"]
    rows.append(["one surviving candidate: memory model + iteration costs + estimate (30B, "
                 "32 × p5, TP4 PP4 DP16)", "", "", "", sig(in_unit(one, "us"), 2) + " µs"])
    header = ["benchmark (one thread, medians of 5)", "layouts screened/s", "full estimates/s",
              "settled by the bound", "wall per pass"]
    return [bench_cmd("planner_bench", PLANNER_ARGS)], table(header, rows)


def default_plan(r):
    if "default_plan" not in r.cache:
        two = r.timed([r.capsim, "plan", "--timing", "--json"])
        one = r.timed([r.capsim, "plan", "--engine", "analytic", "--jobs", "1", "--timing",
                       "--json"])
        r.cache["default_plan"] = (two, one)
    return r.cache["default_plan"]


def screen_line(stderr):
    match = re.search(r"screened (\d+) of (\d+) candidates in ([0-9.]+) s.*?"
                      r"(\d+) settled by a lower bound", stderr)
    confirm = re.search(r"(\d+) event confirmations in ([0-9.]+) s", stderr)
    return match, confirm


MOE_PLAN = "tests/bench/qwen3-235b-ep-plan.json"


def block_perf_moe_plan(r):
    wall, rss, err = r.timed([r.capsim, "plan", MOE_PLAN, "--timing", "--json"])
    screen, confirm = screen_line(err)
    rows = [[f"`capsim plan {MOE_PLAN}` (2 threads, event confirmations)", f"{sig(wall, 3)} s",
             f"{rss:.0f} MB", f"{int(screen.group(2)):,}", f"{int(screen.group(1)):,}",
             f"{screen.group(3)} s", f"{confirm.group(1)} in {confirm.group(2)} s"]]
    header = ["command", "wall", "max RSS", "candidates", "screened", "screen", "event confirmations"]
    return [f'/usr/bin/time -f "%e s %M KB" capsim plan {MOE_PLAN} --timing --json'], \
        table(header, rows)


def block_perf_default_plan(r):
    (wall, rss, err), (wall1, rss1, err1) = default_plan(r)
    screen, confirm = screen_line(err)
    screen1, _ = screen_line(err1)
    rows = [["`capsim plan` (2 threads, event confirmations)", f"{sig(wall, 3)} s",
             f"{rss:.0f} MB", f"{screen.group(3)} s", f"{int(screen.group(1)):,}",
             f"{int(screen.group(4)):,}", f"{confirm.group(1)} in {confirm.group(2)} s"],
            ["`capsim plan --engine analytic --jobs 1` (one core, screen only)",
             f"{sig(wall1, 3)} s", f"{rss1:.0f} MB", f"{screen1.group(3)} s "
             f"({int(screen1.group(1)) / float(screen1.group(3)) / 1000:.0f}k layouts/s)",
             f"{int(screen1.group(1)):,}", f"{int(screen1.group(4)):,}", "none"]]
    header = ["command", "wall", "max RSS", "screen", "screened", "settled by the bound",
              "event confirmations"]
    commands = ['/usr/bin/time -f "%e s %M KB" capsim plan --timing --json',
                '/usr/bin/time -f "%e s %M KB" capsim plan --engine analytic --jobs 1 --timing '
                '--json (the screen line on stderr)']
    return commands, table(header, rows)


WHATIF_ARGS = "--benchmark_filter='BM_WhatIf/|BM_WhatIfHeavy/'"
# (jobs, nodes, autoscaled): autoscaled 0 runs the static policy, 1 Karpenter's.
WHATIF_SCALE_CONFIGS = [(25000, 2000, 0), (100000, 2000, 0), (250000, 2000, 0), (1000000, 2000, 0),
                        (100000, 500, 0), (100000, 1000, 0), (100000, 4000, 0),
                        (100000, 2000, 1), (1000000, 2000, 1)]


def block_perf_whatif_scale(r):
    # One process per configuration: the child's peak memory is a maximum over every child.
    rows, commands = [], []
    for jobs, nodes, autoscaled in WHATIF_SCALE_CONFIGS:
        args = (f"--benchmark_filter='BM_WhatIfTraceLength/jobs:{jobs}/nodes:{nodes}/"
                f"autoscaled:{autoscaled}/'")
        commands.append(bench_cmd("whatif_bench", args))
        (b,) = r.bench("whatif_bench", args)
        rows.append([f"{jobs:,}", f"{nodes:,}", "karpenter" if autoscaled else "static",
                     sig(b["child_cpu_s"], 3) + " s",
                     f"{b['child_cpu_s'] / jobs * 1e6:.0f} µs", sig(in_unit(b, "s"), 3) + " s",
                     f"{b['child_max_rss_mb']:.0f} MB", f"{int(b['jobs_finished']):,}"])
    first = WHATIF_SCALE_CONFIGS[0]
    return [commands[0].replace(f"jobs:{first[0]}/nodes:{first[1]}/autoscaled:{first[2]}",
                                "jobs:J/nodes:N/autoscaled:A")
            + " for each row's J, N and A (0: static, 1: karpenter)"], \
        table(["jobs (60 days)", "nodes (at most)", "policy", "CPU", "CPU per job",
               "wall (loaded)", "peak memory", "finished"], rows)


def block_perf_whatif(r):
    runs = r.bench("whatif_bench", WHATIF_ARGS)
    light = {b["label"]: b for b in runs if b["name"].startswith("BM_WhatIf/")}
    heavy = {b["label"]: b for b in runs if b["name"].startswith("BM_WhatIfHeavy/")}
    rows = [[preset, sig(in_unit(b, "s")) + " s", sig(in_unit(heavy[preset], "s")) + " s"]
            for preset, b in light.items()]
    return [bench_cmd("whatif_bench", WHATIF_ARGS)], table(["preset", "`BM_WhatIf`", "`BM_WhatIfHeavy`"], rows)


def calibration_times(r):
    if "calibration" not in r.cache:
        with tempfile.TemporaryDirectory() as tmp:
            one, _, _ = r.timed([r.capsim, "calibrate", "fit", NCCL_LOG, "--gpu", "H100-SXM5-80GB",
                                 "-o", f"{tmp}/x.json"])
            every, _, _ = r.timed(["scripts/fit-profiles.sh", r.capsim],
                                  env={"PROFILE_DIR": f"{tmp}/profiles"})
        r.cache["calibration"] = (one, every)
    return r.cache["calibration"]


def block_perf_calibration(r):
    one, every = calibration_times(r)
    rows = [[f"one 32-point log: `capsim calibrate fit {NCCL_LOG} --gpu H100-SXM5-80GB -o "
             "/tmp/x.json`", f"{sig(one)} s"],
            ["all five shipped profiles plus the in-situ factor's two `capsim calibrate step` "
             "fits over the 52 published runs: `PROFILE_DIR=/tmp/prof scripts/fit-profiles.sh "
             "build/cli/capsim`", f"{sig(every)} s"]]
    return ["each row's command under `/usr/bin/time`"], table(["command", "wall"], rows)


def block_perf_targets(r):
    sim = by_name(r.bench("sim_bench", SIM_HEAD_ARGS))
    gpt3_ms = in_unit(sim["BM_Gpt3_175B_1024_A100"], "ms")
    llama_ms = in_unit(sim["BM_Llama3_405B_16384_H100"], "ms")
    wall, rss, every_wall, every_rss = perf_sim_process(r)
    every_405b_wall, every_405b_rss = perf_sim_every_405b(r)
    fabric = four_jobs(r)
    median = by_name(r.bench("planner_bench", PLANNER_ARGS), "median")
    screen = [median[f"BM_ScreenDefaultPlan/nodes:{n}/bounds:1"]["estimator_evals_per_s"]
              for n in (1, 4)]
    full = [median[f"BM_ScreenDefaultPlan/nodes:{n}/bounds:0"]["full_estimates_per_s"]
            for n in (1, 4)]
    (plan_wall, _, _), _ = default_plan(r)
    whatif = [in_unit(b, "s") for b in r.bench("whatif_bench", "")
              if b["name"].startswith("BM_WhatIf/")]

    def met(ok):
        return "yes" if ok else "**no**"

    rows = [
        ["event iteration, GPT-3 175B on 1,024 A100: under 0.5 s",
         f"{sig(gpt3_ms, 3)} ms per simulation", met(gpt3_ms < 500)],
        ["event iteration, Llama-3 405B on 16,384 H100: under 5 s",
         f"{sig(llama_ms, 3)} ms per simulation; {sig(wall)} s and {rss:.0f} MB for the whole "
         "`capsim simulate` process", met(wall < 5)],
        ["event simulator memory: under 2 GiB",
         f"{rss:.0f} MB max RSS (405B, 16,384 GPUs); {every_rss:.0f} MB with every GPU simulated "
         "(1,024 GPUs)", met(max(rss, every_rss) < 2048)],
        ["every GPU simulated: GPT-3 175B on 1,024 A100 under 1 s",
         f"{sig(every_wall, 3)} s for the whole `capsim simulate --every-gpu` process",
         met(every_wall < 1)],
        ["every GPU simulated: Llama-3 405B on 16,384 H100 under 10 s and 4 GiB",
         f"{sig(every_405b_wall, 3)} s and {every_405b_rss / 1024:.1f} GB for the whole process",
         met(every_405b_wall < 10 and every_405b_rss < 4096)],
        ["four jobs sharing 4,096 GPUs under 5 s",
         f"{sig(in_unit(fabric, 's'))} s per shared simulation", met(in_unit(fabric, "s") < 5)],
        ["analytic screen: at least 100,000 configurations per second per core",
         f"medians {screen[0] / 1000:.0f}k (one node count) and {screen[1] / 1000:.0f}k (four) "
         f"layouts screened/s; every layout estimated in full: {full[0] / 1000:.0f}k and "
         f"{full[1] / 1000:.0f}k", met(min(screen) >= 1e5)],
        ["full default plan: under 60 s on two cores", f"{sig(plan_wall, 3)} s",
         met(plan_wall < 60)],
        ["what-if, 10,000 jobs over 30 days on 512 nodes: under 10 s",
         f"{sig(min(whatif))}–{sig(max(whatif))} s per preset", met(max(whatif) < 10)],
    ]
    commands = ["the commands of the sections below"]
    return commands, table(["target", "measured", "met"], rows)


# ---- docs/planner.md ---------------------------------------------------------------------------

DEFAULT_PLAN = "scenarios/plans/default.json"
GPT3_PLAN = "scenarios/plans/gpt3-175b-1024-a100.json"
EXHAUSTIVE_GROUPS = [("p5.48xlarge", 64), ("p4de.24xlarge", 32), ("p4de.24xlarge", 64),
                     ("p4de.24xlarge", 256), ("p4d.24xlarge", 512)]


def layout_text(layout):
    pp = f"PP{layout['pipeline']}{'*' if layout.get('stage_layers') else ''}"
    parts = [f"TP{layout['tensor']}", pp, f"DP{layout['data']}"]
    if layout["context"] > 1:
        parts.append(f"CP{layout['context']}")
    if layout["virtual_pipeline_stages"] > 1:
        parts.append(f"v{layout['virtual_pipeline_stages']}")
    parts.append(f"mb{layout['micro_batch_size']}")
    parts.append(f"ZeRO-{layout['zero_stage']}")
    if layout["sequence_parallel"]:
        parts.append("SP")
    if layout["recompute"] != "none":
        parts.append(f"{layout['recompute']} recompute")
    if layout["schedule"] not in ("1f1b", "interleaved-1f1b"):
        parts.append(layout["schedule"])
    return " ".join(parts)


def plan_json(r, plan_file, extra=(), timed=False):
    argv = [r.capsim, "plan", plan_file, "--json", *extra, "--top", "0"]
    if timed:
        stdout = []
        wall, _, _ = r.timed(argv, stdout=stdout)
        return json.loads(stdout[0]), wall
    out = r.run(argv)
    if out.returncode != 0:
        sys.exit(f"docs-tables: {' '.join(argv)} exited {out.returncode}: {out.stderr}")
    return json.loads(out.stdout), None


def spearman(a, b):
    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        out = [0.0] * len(v)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in range(i, j + 1):
                out[order[k]] = (i + j) / 2.0 + 1.0
            i = j + 1
        return out
    return statistics.correlation(ranks(a), ranks(b))


def block_planner_exhaustive(r):
    rows = []
    base = json.loads((ROOT / DEFAULT_PLAN).read_text())
    with tempfile.TemporaryDirectory() as tmp:
        for instance, nodes in EXHAUSTIVE_GROUPS:
            plan = dict(base, instances=[instance], num_nodes={"values": [nodes]})
            planned, exhaustive = f"{tmp}/planned.json", f"{tmp}/exhaustive.json"
            Path(planned).write_text(json.dumps(plan))
            Path(exhaustive).write_text(json.dumps(dict(plan, confirm_top_k=100000)))
            answer, _ = plan_json(r, planned)
            every, wall = plan_json(r, exhaustive, timed=True)
            ranked = every["ranked"]
            fastest = min(ranked, key=lambda e: e["iteration_time_s"])
            screen_rank = 1 + sum(e["analytic_iteration_time_s"] < fastest["analytic_iteration_time_s"]
                                  for e in ranked)
            diffs = [100.0 * (e["iteration_time_s"] / e["analytic_iteration_time_s"] - 1.0)
                     for e in ranked]
            # Without a layout that meets the target the plan has no `best`; its first ranked
            # entry is still the group's cheapest, so its fastest.
            best = answer["best"] or answer["ranked"][0]
            same = best["layout"] == fastest["layout"]
            rho = spearman([e["analytic_iteration_time_s"] for e in ranked],
                           [e["iteration_time_s"] for e in ranked])
            rows.append([
                f"{nodes} × {instance}", f"{len(ranked):,}", f"{sig(wall)} s",
                f"{layout_text(fastest['layout'])}, {fastest['iteration_time_s']:.3f} s "
                f"({screen_rank} on the screen)",
                ("the same" if same else
                 f"{layout_text(best['layout'])}, {best['iteration_time_s']:.3f} s")
                + f" ({answer['search']['confirmations']} event runs)",
                f"{signed(min(diffs), 1)}…{signed(max(diffs), 1)}%, "
                f"{fixed(statistics.mean(abs(d) for d in diffs), 2)}%",
                sum(abs(d) > 5.0 for d in diffs), fixed(rho, 4)])
    header = ["group", "layouts", "all simulated (2 cores)", "event engine's fastest (its rank "
              "on the screen)", "the planner's answer (`confirm_top_k` 2)",
              "event / screen − 1: range, mean \\|difference\\|", "beyond ±5%", "Spearman ρ"]
    commands = [f"`{DEFAULT_PLAN}` restricted to `\"instances\": [INSTANCE], \"num_nodes\": "
                "{\"values\": [NODES]}`, run with `capsim plan FILE --json --top 0` as it is and "
                "with `\"confirm_top_k\": 100000`"]
    return commands, table(header, rows)


def block_planner_sanity(r):
    result, _ = plan_json(r, GPT3_PLAN, ["--engine", "analytic"])
    ranked = result["ranked"]
    best_s = ranked[0]["iteration_time_s"]

    def mesh(e):
        return (e["layout"]["tensor"], e["layout"]["pipeline"], e["layout"]["data"])

    def event_time(scenario):
        with tempfile.NamedTemporaryFile("w", suffix=".json") as file:
            json.dump(scenario, file)
            file.flush()
            out = r.run([r.capsim, "simulate", file.name, "--engine", "event", "--json"])
        if out.returncode != 0:
            sys.exit(f"docs-tables: simulate of {scenario.get('name')} failed: {out.stderr}")
        return json.loads(out.stdout)["iteration_time_s"]

    def row(what, entries, pick, confirm=False):
        for i, e in enumerate(entries):
            if pick(e):
                event = f"{event_time(e['scenario']):.2f} s" if confirm else ""
                return [what, layout_text(e["layout"]), f"{i + 1} of {len(entries):,}",
                        f"{e['iteration_time_s']:.2f} s",
                        signed(100.0 * (e["iteration_time_s"] / best_s - 1.0), 1) + "%",
                        f"{100.0 * e['mfu']:.0f}%", event]
        return [what, "not screened", "", "", "", "", ""]

    megatron = (8, 8, 16)
    meshes = []
    for e in ranked:
        if mesh(e) not in meshes:
            meshes.append(mesh(e))
    old_options = [e for e in ranked if e["layout"]["recompute"] == "full"
                   and not e["layout"]["sequence_parallel"] and e["layout"]["micro_batch_size"] == 1
                   and e["layout"]["schedule"] in ("1f1b", "interleaved-1f1b")
                   and e["layout"]["zero_stage"] == 0]
    rows = [
        row("the planner's best", ranked, lambda e: True, confirm=True),
        row("Megatron's mesh TP8 PP8 DP16, its best layout", ranked, lambda e: mesh(e) == megatron,
            confirm=True),
        ["the same mesh among the (TP, PP, DP) meshes, each by its best layout", "TP8 PP8 DP16",
         f"{meshes.index(megatron) + 1} of {len(meshes)} meshes", "", "", "", ""],
        row("the published 2021 setting (mb 1, full recompute, ZeRO-0, v6, no SP)", ranked,
            lambda e: mesh(e) == megatron and e["layout"]["micro_batch_size"] == 1
            and e["layout"]["recompute"] == "full" and e["layout"]["zero_stage"] == 0
            and e["layout"]["virtual_pipeline_stages"] == 6
            and not e["layout"]["sequence_parallel"]),
        row("the best of the 2021 options (full recompute, no SP, mb 1, 1F1B or interleaved, "
            "ZeRO-0)", old_options, lambda e: True),
        row("TP8 PP8 DP16 among the 2021 options", old_options,
            lambda e: mesh(e) == megatron),
    ]
    header = ["what", "layout", "rank", "iteration (screen)", "vs the best", "MFU",
              "iteration (event engine)"]
    return [f"capsim plan {GPT3_PLAN} --engine analytic --json --top 0",
            "`capsim simulate ROW.json --engine event` of a row's `scenario`"], table(header, rows)


def block_planner_rank_correlation(r):
    """Spearman's ρ of the screen's tokens/s/GPU against the measured ones, as
    tests/planner/planner_sanity_test.cpp groups dev.json: one model on one GPU type."""
    cases = {c["id"]: c for c in json.loads((ROOT / DEV).read_text())["cases"]}
    groups = {}
    pooled = ([], [])
    for c in r.validate(DEV, engine="analytic")["cases"]:
        scenario = cases[c["id"]]["scenario"]
        p = scenario["parallelism"]
        gpus = p["tensor"] * p["pipeline"] * p["data"] * p["context"]
        tokens = p["global_batch_size"] * scenario["model"]["seq_length"]
        predicted = tokens / c["predicted_iteration_time_s"] / gpus
        measured = cases[c["id"]]["measured"]["tokens_per_s_per_gpu"]
        key = (c["group"], scenario["model"]["name"], scenario["cluster"]["gpu"])
        groups.setdefault(key, ([], []))
        for into in (groups[key], pooled):
            into[0].append(predicted)
            into[1].append(measured)
    rows = []
    rhos, weighted, weight = [], 0.0, 0
    for (group, model, gpu), (predicted, measured) in sorted(groups.items()):
        if len(predicted) < 4:
            continue
        rho = spearman(predicted, measured)
        rhos.append(rho)
        weighted += rho * len(predicted)
        weight += len(predicted)
        shown = fixed(rho, 3) if rho >= 0 else f"**{signed(rho, 3)}**"
        rows.append([group, model, gpu, len(predicted), shown])
    rhos.sort()
    rows.append([f"**pooled**, all {len(pooled[0])} cases", "", "", len(pooled[0]),
                 fixed(spearman(*pooled), 3)])
    rows.append([f"median over the {len(rhos)} groups; size-weighted mean", "", "", "",
                 f"{fixed(rhos[len(rhos) // 2], 3)}; {fixed(weighted / weight, 3)}"])
    header = ["group", "model", "GPU", "n", "ρ"]
    return [validate_cmd(DEV, engine="analytic") + " (predicted tokens/s/GPU = global batch × "
            "sequence / predicted iteration time / GPUs)"], table(header, rows)


# ---- docs/simulator.md -------------------------------------------------------------------------

OVERSUBSCRIBED_ROWS = [
    (None, "non-blocking"),
    (1, "2:1, `nodes_per_leaf` 1 (default, worst case)"),
    (4, "2:1, 4 nodes per leaf (rings cross once per leaf, every PP send crosses)"),
    (16, "2:1, 16 nodes per leaf (a stage per leaf: rings inside, every PP send crosses)"),
    (32, "2:1, 32 nodes per leaf (half the PP boundaries cross; 2:1 absorbs them)"),
]


def simulate_json(r, scenario_file, *extra):
    argv = [r.capsim, "simulate", scenario_file, "--json", *extra]
    out = r.run(argv)
    if out.returncode != 0:
        sys.exit(f"docs-tables: {' '.join(argv)} exited {out.returncode}: {out.stderr}")
    return json.loads(out.stdout)


def block_sim_oversubscribed(r):
    base = json.loads((ROOT / GPT3_SCENARIO).read_text())
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for leaf, label in OVERSUBSCRIBED_ROWS:
            scenario = json.loads(json.dumps(base))
            if leaf is not None:
                scenario["cluster"]["inter_node"].update(topology="oversubscribed",
                                                         oversubscription=2.0, nodes_per_leaf=leaf)
            path = f"{tmp}/ov.json"
            Path(path).write_text(json.dumps(scenario))
            event = simulate_json(r, path)
            every = simulate_json(r, path, "--every-gpu")
            analytic = simulate_json(r, path, "--engine", "analytic")
            b = event["breakdown"]
            rows.append([label, f"{event['iteration_time_s']:.3f} s",
                         f"{every['iteration_time_s']:.3f} s",
                         f"{analytic['iteration_time_s']:.3f} s",
                         f"{b['pp_comm_exposed_s']:.2f} s", f"{b['dp_comm_exposed_s']:.2f} s"])
    header = ["fabric", "iteration, reduced run", "every GPU (`--every-gpu`)",
              "analytic engine", "exposed PP (event)", "exposed DP (event)"]
    commands = ["`capsim simulate /tmp/ov.json [--every-gpu | --engine analytic] --json` of the "
                "shipped GPT-3 175B scenario with the fabric changed as the commands below show"]
    return commands, table(header, rows)


# ---- docs/calibration.md -----------------------------------------------------------------------

STEP_GROUPS = [
    ("MPT A100 80GB (llm-foundry 2023)", DEV, "--cases mpt-a100_80gb", "a100-roce"),
    ("MPT A100 40GB", DEV, "--cases mpt-a100_40gb", "a100-roce"),
    ("MPT H100 (2023 Hopper software)", DEV, "--cases mpt-h100", "h100-ib"),
    ("Megatron-LM SC'21 PTD-P (ZeRO-3 rows excluded)", DEV,
     "--cases narayanan21-t1 --cases narayanan21-t2-ptdp", "a100-ib"),
    ("same, with `\"attention\": \"materialized\"`, `\"tp_backward_overlap\": false` and "
     "`\"cross_entropy\": \"unfused\"` (megatron-sc21-materialized.json)", MATERIALIZED,
     "--cases narayanan21-t1 --cases narayanan21-t2-ptdp", "a100-ib"),
    ("DGXC H100 (NeMo 2025)", DEV, "--cases dgxc", "h100-ib"),
]


# Each dev.json group with its training stack named, calibrated on one run at a time:
# (label, file, arguments, base profile).
STACK_STEP_GROUPS = [
    ("Megatron SC'21 PTD-P rows, Megatron-LM of 2021", DEV,
     "--cases narayanan21-t1 --cases narayanan21-t2-ptdp --set stack.name=megatron-core "
     "--set stack.version=2021", "a100-ib"),
    ("MPT A100 80GB, llm-foundry", DEV, "--cases mpt-a100_80gb --set stack=llm-foundry",
     "a100-roce"),
    ("MPT A100 40GB, llm-foundry", DEV, "--cases mpt-a100_40gb --set stack=llm-foundry",
     "a100-roce"),
    ("MPT H100, llm-foundry", DEV, "--cases mpt-h100 --set stack=llm-foundry", "h100-ib"),
    ("DGXC H100, NeMo 1", DEV,
     "--cases dgxc --set stack.name=nemo --set stack.version=2023 "
     "--set model.cross_entropy=fused", "h100-ib"),
    ("SC'21 ZeRO-3 rows, DeepSpeed 2021", DEV,
     "--cases narayanan21-t2-zero3 --set stack.name=deepspeed --set stack.version=2021",
     "a100-ib"),
]


def step_fit(r, cases_file, args, base, tmp):
    """`capsim calibrate step --cross-validate`: the fit's and the cross-validation's matches."""
    argv = [r.capsim, "calibrate", "step", cases_file, *shlex.split(args), "--profile",
            base, "-o", f"{tmp}/s.json", "--cross-validate"]
    out = r.run(argv)
    if out.returncode != 0:
        sys.exit(f"docs-tables: {' '.join(argv)} exited {out.returncode}: {out.stderr}")
    fit = re.search(r"software_efficiency ([0-9.]+) .*MAPE ([0-9.]+)% -> ([0-9.]+)%", out.stdout)
    cross = re.search(r"MAPE median ([0-9.]+)%, best ([0-9.]+)%, worst ([0-9.]+)%", out.stdout)
    return fit, cross


def block_validation_stack_calibrated(r):
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, cases_file, args, profile in STACK_STEP_GROUPS:
            base = f"scenarios/profiles/{profile}.json"
            fit, cross = step_fit(r, cases_file, args, base, tmp)
            command = (f"capsim calibrate step {cases_file} {args} --profile {base} "
                       f"-o /tmp/s.json --cross-validate")
            n = r.validate(cases_file, args, "analytic")["summary"]["n"]
            rows.append([label, f"`{command}`", n,
                         f"{fixed(float(fit.group(2)), 1)}% → {fixed(float(fit.group(3)), 1)}%",
                         f"{fixed(float(cross.group(1)), 1)}% ({fixed(float(cross.group(2)), 1)}–"
                         f"{fixed(float(cross.group(3)), 1)}%)"])
    header = ["stack group", "command", "n", "MAPE (analytic engine): shipped factor → fitted to all runs",
              "one run calibrates the others: median (best–worst) MAPE"]
    return ["each row's command"], table(header, rows)


def block_calibration_step(r):
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, cases_file, args, profile in STEP_GROUPS:
            base = f"scenarios/profiles/{profile}.json"
            fit, cross = step_fit(r, cases_file, args, base, tmp)
            at_one = json.loads((ROOT / base).read_text())
            at_one["software_efficiency"] = 1.0
            Path(f"{tmp}/one.json").write_text(json.dumps(at_one))
            one = r.validate(cases_file, f"{args} --set profile={tmp}/one.json", "analytic")
            del r.cache[(cases_file, f"{args} --set profile={tmp}/one.json", "analytic")]
            n = one["summary"]["n"]
            rows.append([label, n, fixed(float(fit.group(1)), 3), mape(one["summary"]),
                         f"{fixed(float(fit.group(2)), 1)}% → {fixed(float(fit.group(3)), 1)}%",
                         f"{fixed(float(cross.group(1)), 1)}% ({fixed(float(cross.group(2)), 1)}–"
                         f"{fixed(float(cross.group(3)), 1)}%)"])
    header = ["runs (one stack each)", "n", "fitted `software_efficiency`", "MAPE at 1",
              "MAPE before → after (all runs)",
              "one run calibrates the others: median (best–worst) MAPE"]
    commands = ["the commands below; \"at 1\" is `capsim validate FILE --cases ... --engine "
                "analytic --set profile=ONE.json` with ONE.json the base profile at "
                "`software_efficiency` 1"]
    return commands, table(header, rows)


def block_validation_time_to_train(r):
    out = r.run([sys.executable, "scripts/time-to-train.py", r.capsim])
    if out.returncode != 0:
        sys.exit(f"docs-tables: scripts/time-to-train.py exited {out.returncode}: {out.stderr}")
    return ["`scripts/time-to-train.py CAPSIM` (each case: `capsim plan PLAN --engine analytic "
            "--json`)"], out.stdout.rstrip("\n").split("\n")


BLOCKS = {
    "validation-dev": block_validation_dev,
    "validation-subsets": subsets_block(DEV_SUBSETS, "subset"),
    "validation-whatifs": subsets_block(WHATIFS, "what-if"),
    "validation-stacks": subsets_block(STACKS, "cases"),
    "validation-stack-calibrated": block_validation_stack_calibrated,
    "validation-engines": block_validation_engines,
    "validation-calibration": block_validation_calibration,
    "validation-factors": block_validation_factors,
    "validation-calibration-outliers": block_validation_calibration_outliers,
    "validation-transfer": block_validation_transfer,
    "validation-worst": block_validation_worst,
    "validation-worst-slow": block_validation_worst_slow,
    "validation-dev-oom": block_validation_dev_oom,
    "validation-gb200": block_validation_gb200,
    "validation-moe-hopper": block_validation_moe_hopper,
    "validation-moe-blackwell": block_validation_moe_blackwell,
    "validation-ranking": block_validation_ranking,
    "validation-time-to-train": block_validation_time_to_train,
    "validation-dense-blackwell": block_validation_dense_blackwell,
    "validation-dense-blackwell-cases": block_validation_dense_blackwell_cases,
    "validation-dense-gb300": block_validation_dense_gb300,
    "sim-oversubscribed": block_sim_oversubscribed,
    "calibration-step": block_calibration_step,
    "planner-exhaustive": block_planner_exhaustive,
    "planner-sanity": block_planner_sanity,
    "planner-rank-correlation": block_planner_rank_correlation,
    "perf-targets": block_perf_targets,
    "perf-analytic": block_perf_analytic,
    "perf-stage-balance": block_perf_stage_balance,
    "perf-sim": block_perf_sim,
    "perf-fabric": block_perf_fabric,
    "perf-fabric-scaling": block_perf_fabric_scaling,
    "perf-sim-gpus": block_perf_sim_gpus,
    "perf-sim-micro-batches": scaling_block("BM_Scale_Gpt3_MicroBatches", "micro-batches"),
    "perf-sim-pipeline": scaling_block(
        "BM_Scale_Gpt3_Pipeline", "pipeline stages (GPUs)",
        lambda b: f"{b['name'].split('/')[1]} ({int(b['gpus']):,})"),
    "perf-sim-layers": block_perf_sim_layers,
    "perf-sim-full": block_perf_sim_full,
    "perf-planner": block_perf_planner,
    "perf-default-plan": block_perf_default_plan,
    "perf-moe-plan": block_perf_moe_plan,
    "perf-whatif": block_perf_whatif,
    "perf-whatif-scale": block_perf_whatif_scale,
    "perf-calibration": block_perf_calibration,
}

PAGES = {"validation": "docs/validation.md", "performance": "docs/performance.md",
         "planner": "docs/planner.md", "simulator": "docs/simulator.md",
         "calibration": "docs/calibration.md"}
MARKED = re.compile(r"<!-- generated: ([a-z0-9-]+) -->\n.*?<!-- end generated -->", re.DOTALL)


def load_average():
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "unknown"


def stamp(commit, cpu, commands, timed):
    listed = "; ".join(c if c.startswith(("each", "the ")) or "`" in c else f"`{c}`"
                       for c in commands)
    load = f", load average {load_average()}" if timed else ""
    return f"*Generated by `scripts/docs-tables.py` at {commit} on {cpu}{load}: {listed}.*"


def rewrite(page, runner, commit, cpu, blocks=None):
    """Rewrites the page's generated blocks, or only those named in `blocks`."""
    path = ROOT / page
    text = path.read_text()

    def render(match):
        name = match.group(1)
        if name not in BLOCKS:
            sys.exit(f"docs-tables: {page}: no generator for block '{name}'")
        if blocks and name not in blocks:
            return match.group(0)
        commands, lines = BLOCKS[name](runner)
        body = "\n".join([stamp(commit, cpu, commands, name.startswith("perf-")), ""] + lines)
        return f"<!-- generated: {name} -->\n{body}\n<!-- end generated -->"

    new_text, count = MARKED.subn(render, text)
    if count == 0:
        sys.exit(f"docs-tables: {page} has no generated blocks")
    path.write_text(new_text)
    print(f"docs-tables: {page}: {count} tables", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("capsim", nargs="?", default="build/cli/capsim")
    parser.add_argument("bench_dir", nargs="?", default="build/tests/bench")
    parser.add_argument("--only", choices=sorted(PAGES))
    parser.add_argument("--block", action="append", choices=sorted(BLOCKS),
                        help="regenerate only this block (repeatable); the others stay as they are")
    args = parser.parse_args()
    capsim = str(Path(args.capsim).resolve())
    bench_dir = str(Path(args.bench_dir).resolve())
    if not os.access(capsim, os.X_OK):
        sys.exit(f"docs-tables: {args.capsim} is not an executable capsim")
    runner = Runner(capsim, bench_dir)
    commit, cpu = commit_stamp(), cpu_model()
    for key, page in PAGES.items():
        if args.only in (None, key):
            rewrite(page, runner, commit, cpu, args.block)


if __name__ == "__main__":
    main()
