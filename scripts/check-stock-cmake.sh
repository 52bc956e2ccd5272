#!/usr/bin/env bash
# Configures capsim against the CMake modules exactly as Debian's cmake-data package ships them
# (a development machine's own modules may be patched), so a find module's bug that a stock
# install hits shows here. Needs CUDA installed to exercise FindCUDAToolkit; skips otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "check-stock-cmake: no CUDA toolkit here, FindCUDAToolkit is not exercised; skipped" >&2
  exit 0
fi
version=$(dpkg-query -W -f='${Version}' cmake-data)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! (cd "$work" && apt-get download -qq "cmake-data=$version" >/dev/null 2>&1); then
  echo "check-stock-cmake: cannot download cmake-data $version from the Debian archive" >&2
  # Offline users may skip; CI must run the check.
  [ "${CI:-}" = "true" ] && exit 1
  exit 0
fi
dpkg-deb -x "$work"/cmake-data_*.deb "$work/root"
modules=$(echo "$work"/root/usr/share/cmake-*/Modules)
if ! cmake -S . -B "$work/build" -G Ninja -DCMAKE_MODULE_PATH="$modules" -DCAPSIM_BUILD_TESTS=OFF \
     >"$work/log" 2>&1; then
  cat "$work/log" >&2
  echo "check-stock-cmake: configure fails with the stock modules of cmake-data $version" >&2
  exit 1
fi
grep -h "capsim-calibrate:" "$work/log" | sed 's/^-- /check-stock-cmake: /' >&2
