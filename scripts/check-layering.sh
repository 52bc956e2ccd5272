#!/usr/bin/env bash
# Fails when a header crosses the layering of DESIGN.md: SimGrid only in sim/*.cpp (and tests),
# CUDA/NCCL/cuBLAS only in calibrate/harness/.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
sources=$(git ls-files '*.hpp' '*.cpp' '*.cu' '*.h' 2>/dev/null || find . -name '*.[ch]pp')
for f in $sources; do
  if grep -qE '#include *[<"]simgrid' "$f"; then
    case "$f" in sim/*.cpp|tests/*) ;; *) echo "layering: SimGrid included in $f" >&2; status=1 ;; esac
  fi
  if grep -qE '#include *[<"](cuda|nccl|cublas)' "$f"; then
    case "$f" in calibrate/harness/*) ;; *) echo "layering: CUDA/NCCL included in $f" >&2; status=1 ;; esac
  fi
done
exit $status
