#!/usr/bin/env bash
# Fails when clang-tidy 14 (.clang-tidy, docs/design/conventions.md §8) warns on a first-party
# source file: every tracked .cpp in the build's compile_commands.json outside tests/ (the suites,
# the fuzz tests and the generated header-check units are left out), plus the project headers
# those include (HeaderFilterRegex). Usage: scripts/check-tidy.sh [BUILD_DIR]  (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
tidy=$(command -v run-clang-tidy-14 || command -v run-clang-tidy || true)
if [ -z "$tidy" ]; then
  echo "check-tidy: run-clang-tidy not found" >&2
  exit 1
fi
if [ ! -f "$build/compile_commands.json" ]; then
  echo "check-tidy: no $build/compile_commands.json; configure with CMAKE_EXPORT_COMPILE_COMMANDS=ON" >&2
  exit 1
fi
db=$(mktemp -d)
trap 'rm -rf "$db"' EXIT
git ls-files '*.cpp' >"$db/tracked"
python3 - "$build/compile_commands.json" "$db/tracked" "$db/compile_commands.json" <<'EOF'
import json, os, sys
commands, tracked, out = sys.argv[1:]
keep = {line.strip() for line in open(tracked) if not line.startswith("tests/")}
entries = [e for e in json.load(open(commands))
           if os.path.relpath(os.path.join(e["directory"], e["file"])) in keep]
if not entries:
    sys.exit("check-tidy: no first-party source in " + commands +
             " (a unity build lists its units, not its sources: configure with -DCAPSIM_UNITY_BUILD=OFF)")
json.dump(entries, open(out, "w"), indent=1)
EOF
# The GCC-only flags of capsim_warnings (-Wno-stringop-overflow, -Wno-restrict) are unknown to
# clang and, under -Werror, would stop every file.
status=0
"$tidy" -p "$db" -quiet -j "$(nproc)" -extra-arg=-Wno-unknown-warning-option >"$db/log" 2>&1 ||
  status=$?
sed 's/\x1b\[[0-9;]*m//g' "$db/log" |
  grep -vE '^(clang-tidy(-[0-9]+)? |[0-9]+ warnings? (and [0-9]+ errors? )?generated\.$)' >"$db/report" || true
if grep -qE '(warning|error):' "$db/report" || [ "$status" -ne 0 ]; then
  cat "$db/report" >&2
  echo "check-tidy: per check:" >&2
  grep -E ':[0-9]+:[0-9]+: (warning|error):.*\]$' "$db/report" | sort -u |
    sed -E 's/.*\[([^]]+)\]$/\1/' | sort | uniq -c >&2 || true
  exit 1
fi
echo "check-tidy: $(grep -c '"file"' "$db/compile_commands.json") files, no warnings"
