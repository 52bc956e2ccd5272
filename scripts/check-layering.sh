#!/usr/bin/env bash
# Fails when a header crosses the layering of docs/architecture.md: SimGrid only in sim/*.cpp (and
# tests), CUDA/NCCL/cuBLAS only in calibrate/harness/. Works in a git checkout and in a source tree
# without .git (a release tarball), where it lists the files itself.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$(pwd -P)" ]; then
  sources=$(git ls-files '*.hpp' '*.cpp' '*.cu' '*.h')
else
  # Paths relative to the root, like git's; build trees hold no sources of ours.
  sources=$(find . -path './build*' -prune -o -path './.git' -prune -o \
                 \( -name '*.[ch]pp' -o -name '*.cu' -o -name '*.h' \) -type f -printf '%P\n')
fi
for f in $sources; do
  if grep -qE '#include *[<"]simgrid' "$f"; then
    case "$f" in sim/*.cpp|tests/*) ;; *) echo "layering: SimGrid included in $f" >&2; status=1 ;; esac
  fi
  if grep -qE '#include *[<"](cuda|nccl|cublas)' "$f"; then
    case "$f" in calibrate/harness/*) ;; *) echo "layering: CUDA/NCCL included in $f" >&2; status=1 ;; esac
  fi
done
exit $status
