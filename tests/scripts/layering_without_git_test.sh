#!/usr/bin/env bash
# scripts/check-layering.sh on a copy of the tree without .git (as a release tarball unpacks):
# the clean copy passes, and a SimGrid include or an include of io/ planted in models/ is caught.
set -euo pipefail
source_dir=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar -C "$source_dir" --exclude='./.git' --exclude='./build*' -cf - . | tar -C "$work" -xf -
[ ! -e "$work/.git" ]
"$work/scripts/check-layering.sh"
echo '#include <simgrid/s4u.hpp>' >"$work/models/planted_layering_violation.hpp"
if "$work/scripts/check-layering.sh" 2>"$work/err"; then
  echo "check-layering missed a SimGrid include in models/" >&2
  exit 1
fi
grep -q "layering: SimGrid included in models/planted_layering_violation.hpp" "$work/err"

# An arrow against the layering: the cost laws of models/ read no files.
rm "$work/models/planted_layering_violation.hpp"
echo '#include "io/units.hpp"' >"$work/models/planted_arrow.hpp"
if "$work/scripts/check-layering.sh" 2>"$work/err"; then
  echo "check-layering missed an include of io/ in models/" >&2
  exit 1
fi
grep -q "layering: models/planted_arrow.hpp includes io/" "$work/err"
