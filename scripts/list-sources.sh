#!/usr/bin/env bash
# Prints the project's C++ and CUDA sources, one path a line relative to the root: git's list in a
# checkout, else (a release tarball, `git archive`) the tree's own files outside build folders.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$(pwd -P)" ]; then
  git ls-files '*.hpp' '*.cpp' '*.cu' '*.h'
else
  find . -path './build*' -prune -o -path './.git' -prune -o \
       \( -name '*.[ch]pp' -o -name '*.cu' -o -name '*.h' \) -type f -printf '%P\n' | LC_ALL=C sort
fi
