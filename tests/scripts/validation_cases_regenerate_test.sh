#!/usr/bin/env bash
# The shipped cases of published MoE and dense Blackwell runs are what their converters
# (scripts/convert-moe-runs.py, scripts/convert-dense-blackwell.py) make of
# data/validation/moe_dev_runs.json and data/validation/gb300_dense_runs.json, byte for byte: a
# converter change shows in the cases it ships.
set -euo pipefail
source_dir=$1
python=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$source_dir"
runs=data/validation/moe_dev_runs.json
"$python" scripts/convert-moe-runs.py "$runs" "$work/moe-hopper.json" >/dev/null
"$python" scripts/convert-moe-runs.py --blackwell "$runs" "$work/moe-blackwell.json" >/dev/null
"$python" scripts/convert-dense-blackwell.py "$runs" "$work/dense-blackwell.json" >/dev/null
"$python" scripts/convert-dense-blackwell.py data/validation/gb300_dense_runs.json "$work/dense-gb300.json" \
  >/dev/null
for name in moe-hopper moe-blackwell dense-blackwell dense-gb300; do
  if ! cmp -s "$work/$name.json" "scenarios/validation/$name.json"; then
    echo "scenarios/validation/$name.json is not what its converter writes (rerun it)" >&2
    exit 1
  fi
done
