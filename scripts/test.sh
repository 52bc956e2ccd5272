#!/usr/bin/env bash
# Installs what is missing, builds with warnings as errors, and runs every test (CI entry point).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/check-layering.sh
scripts/check-stock-cmake.sh
scripts/check-format.sh
scripts/build.sh -DCAPSIM_WERROR=ON -DCAPSIM_BUILD_TESTS=ON -DCAPSIM_BUILD_BENCHMARKS=ON "$@"
ctest --test-dir build --output-on-failure -j"$(nproc)" -LE gpu
