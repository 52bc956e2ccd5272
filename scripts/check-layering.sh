#!/usr/bin/env bash
# Fails when a source includes across the layering of docs/architecture.md. Each top-level folder
# may include only the folders listed for it below (tests/ may include any); SimGrid only in
# sim/*.cpp (and tests), CUDA/NCCL/cuBLAS only in calibrate/harness/. Works in a
# git checkout and in a source tree without .git (the files scripts/list-sources.sh lists).
# One grep over every source and one awk pass, so the check takes well under a second.
set -euo pipefail
cd "$(dirname "$0")/.."
allowed='
models=models
estimate=estimate models
io=io estimate models
traces=traces io models
calibrate=calibrate estimate io models
sim=sim estimate traces models
whatif=whatif sim estimate traces io models
planner=planner sim estimate traces io models
cli=cli planner whatif calibrate sim estimate traces io models
python=planner whatif calibrate sim estimate traces io models
'
scripts/list-sources.sh | tr '\n' '\0' | xargs -0 -r grep -HE '#include' -- |
  LC_ALL=C awk -v allowed="$allowed" '
    BEGIN {
      n = split(allowed, rules, "\n")
      for (i = 1; i <= n; i++) {
        if (rules[i] == "") continue
        split(rules[i], kv, "=")
        may[kv[1]] = " " kv[2] " "
      }
      status = 0
    }
    {
      colon = index($0, ":")
      file = substr($0, 1, colon - 1)
      line = substr($0, colon + 1)
      top = file; sub(/\/.*/, "", top)
      if (top in may && match(line, /^#include "[a-z_]+\//)) {
        dep = substr(line, 11, RLENGTH - 11)
        key = file SUBSEP dep
        if ((dep in may) && index(may[top], " " dep " ") == 0 && !(key in seen)) {
          seen[key] = 1
          rule = may[top]; gsub(/^ | $/, "", rule); gsub(/ /, ", ", rule)
          printf "layering: %s includes %s/ (%s/ may include %s)\n", file, dep, top, rule > "/dev/stderr"
          status = 1
        }
      }
      if (line ~ /#include *[<"]simgrid/ && file !~ /^sim\/.*\.cpp$/ && file !~ /^tests\// && !((file, "simgrid") in seen)) {
        seen[file, "simgrid"] = 1
        print "layering: SimGrid included in " file > "/dev/stderr"
        status = 1
      }
      if (line ~ /#include *[<"](cuda|nccl|cublas)/ && file !~ /^calibrate\/harness\// && !((file, "cuda") in seen)) {
        seen[file, "cuda"] = 1
        print "layering: CUDA/NCCL included in " file > "/dev/stderr"
        status = 1
      }
    }
    END { exit status }'
