#!/usr/bin/env bash
# Fails when a header crosses the layering of docs/architecture.md: SimGrid only in sim/*.cpp (and
# tests), CUDA/NCCL/cuBLAS only in calibrate/harness/. Works in a git checkout and in a source tree
# without .git (the files scripts/list-sources.sh lists).
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
sources=$(scripts/list-sources.sh)
for f in $sources; do
  if grep -qE '#include *[<"]simgrid' "$f"; then
    case "$f" in sim/*.cpp|tests/*) ;; *) echo "layering: SimGrid included in $f" >&2; status=1 ;; esac
  fi
  if grep -qE '#include *[<"](cuda|nccl|cublas)' "$f"; then
    case "$f" in calibrate/harness/*) ;; *) echo "layering: CUDA/NCCL included in $f" >&2; status=1 ;; esac
  fi
done
exit $status
