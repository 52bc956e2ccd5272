#!/usr/bin/env bash
# Fails when a source includes across the layering of docs/architecture.md. Each top-level folder
# may include only the folders listed for it below (tests/ may include any); SimGrid only in
# sim/*.cpp (and tests), CUDA/NCCL/cuBLAS only in calibrate/harness/. Works in a
# git checkout and in a source tree without .git (the files scripts/list-sources.sh lists).
set -euo pipefail
cd "$(dirname "$0")/.."
declare -A allowed=(
  [models]="models"
  [estimate]="estimate models"
  [io]="io estimate models"
  [traces]="traces io models"
  [calibrate]="calibrate estimate io models"
  [sim]="sim estimate traces models"
  [whatif]="whatif sim estimate traces io models"
  [planner]="planner sim estimate traces io models"
  [cli]="cli planner whatif calibrate sim estimate traces io models"
  [python]="planner whatif calibrate sim estimate traces io models"
)
status=0
for f in $(scripts/list-sources.sh); do
  top=${f%%/*}
  if [ -n "${allowed[$top]:-}" ]; then
    for dep in $(grep -oE '^#include "[a-z_]+/' "$f" | sed 's/#include "//; s|/$||' | sort -u); do
      [ -n "${allowed[$dep]:-}" ] || continue  # not a project folder
      [[ " ${allowed[$top]} " == *" $dep "* ]] ||
        { echo "layering: $f includes $dep/ (${top}/ may include ${allowed[$top]// /, })" >&2; status=1; }
    done
  fi
  if grep -qE '#include *[<"]simgrid' "$f"; then
    case "$f" in sim/*.cpp|tests/*) ;; *) echo "layering: SimGrid included in $f" >&2; status=1 ;; esac
  fi
  if grep -qE '#include *[<"](cuda|nccl|cublas)' "$f"; then
    case "$f" in calibrate/harness/*) ;; *) echo "layering: CUDA/NCCL included in $f" >&2; status=1 ;; esac
  fi
done
exit $status
