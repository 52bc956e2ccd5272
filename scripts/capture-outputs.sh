#!/usr/bin/env bash
# Runs capsim on every shipped input (each scenario on both engines, each plan, each what-if,
# validate of the dev set and the calibration sets, the profile fits and their reports) and writes
# each command's standard output, standard error and exit code into OUT_DIR, one file per command.
# Two builds give the same outputs when `diff -r` of their folders is empty:
#   scripts/capture-outputs.sh build/cli/capsim /tmp/outputs-a
#   scripts/capture-outputs.sh other/capsim /tmp/outputs-b && diff -r /tmp/outputs-a /tmp/outputs-b
# Wall-clock figures (the plan's progress line) are masked; everything else is deterministic.
set -euo pipefail
cd "$(dirname "$0")/.."
capsim=$(realpath "${1:?usage: scripts/capture-outputs.sh CAPSIM OUT_DIR}")
out=${2:?usage: scripts/capture-outputs.sh CAPSIM OUT_DIR}
mkdir -p "$out"
out=$(realpath "$out")
files=$(mktemp -d)
trap 'rm -rf "$files"' EXIT

# run NAME ARGS...: capsim ARGS > NAME.out, 2> NAME.err, exit code in NAME.rc. Inputs are named
# by repository-relative paths and the scratch folder is renamed FILES at the end, so the outputs
# do not depend on where the tree or the scratch folder lives.
run() {
  local name=$1
  shift
  local rc=0
  "$capsim" "$@" >"$out/$name.out" 2>"$out/$name.err" || rc=$?
  echo "$rc" >"$out/$name.rc"
}

for dir in scenarios/*/; do
  [ -f "$dir/scenario.json" ] || continue
  s=$(basename "$dir")
  for engine in analytic event; do
    run "simulate-$s-$engine" simulate "$dir/scenario.json" --engine "$engine"
    run "simulate-$s-$engine-json" simulate "$dir/scenario.json" --engine "$engine" --json
  done
  run "simulate-$s-kernels" simulate "$dir/scenario.json" --engine analytic --kernels
done
for p in scenarios/profiles/*.json; do
  run "simulate-gpt-30b-p4d-profile-$(basename "$p" .json)" simulate \
    scenarios/gpt-30b-p4d/scenario.json --engine analytic --profile "$p" --json
done
run simulate-gpt-30b-p4d-trace simulate scenarios/gpt-30b-p4d/scenario.json --engine event \
  --trace "$files/trace.json"
cp "$files/trace.json" "$out/simulate-gpt-30b-p4d-trace.trace.json"

for p in scenarios/plans/*.json; do
  n=$(basename "$p" .json)
  run "plan-$n" plan "$p"
  run "plan-$n-json" plan "$p" --json --out-scenario "$files/winner.json"
  cp "$files/winner.json" "$out/plan-$n-winner.json" 2>/dev/null || true
done

for w in scenarios/whatif/*.json; do
  n=$(basename "$w" .json)
  run "whatif-$n" whatif "$w"
  run "whatif-$n-json" whatif "$w" --json --timeline "$files/timeline.csv" \
    --report "$files/report.html"
  cp "$files/timeline.csv" "$out/whatif-$n-timeline.csv" 2>/dev/null || true
  cp "$files/report.html" "$out/whatif-$n-report.html" 2>/dev/null || true
done
run whatif-print-default whatif --print-default

for v in data/validation/dev.json scenarios/validation/*.json; do
  n=$(basename "$v" .json)
  for engine in analytic event; do
    run "validate-$n-$engine" validate "$v" --engine "$engine"
    run "validate-$n-$engine-json" validate "$v" --engine "$engine" --json
  done
done

# The shipped profiles' fits and in-situ steps, with their HTML reports.
PROFILE_DIR="$files/profiles" scripts/fit-profiles.sh "$capsim" "$files/reports" \
  >"$out/fit-profiles.out" 2>"$out/fit-profiles.err"
for f in "$files"/profiles/* "$files"/reports/*; do cp "$f" "$out/fit-$(basename "$f")"; done
run calibrate-step-cross-validate calibrate step scenarios/validation/published-extra.json \
  --profile scenarios/profiles/a100-ib.json --cases korthikanti22 --cross-validate \
  -o "$files/step.json"
sed -i "s|$files|FILES|g" "$out"/*
# The plan's progress line on standard error states wall-clock times and rates.
sed -i -E 's/in [0-9.]+ s/in T s/g; s/\([0-9]+ candidates\/s/(R candidates\/s/g' "$out"/plan-*.err
