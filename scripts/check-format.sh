#!/usr/bin/env bash
# Fails when a C++ file of the project (scripts/list-sources.sh) differs from .clang-format
# (clang-format 14, docs/design/conventions.md §8); works without .git too.
set -euo pipefail
cd "$(dirname "$0")/.."
formatter=$(command -v clang-format-14 || command -v clang-format || true)
if [ -z "$formatter" ]; then
  echo "check-format: clang-format not found" >&2
  exit 1
fi
scripts/list-sources.sh | grep -E '\.(cpp|hpp)$' | xargs "$formatter" --dry-run -Werror
