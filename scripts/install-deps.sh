#!/usr/bin/env bash
# Installs the Debian packages capsim builds with, only those missing; safe to run again.
set -euo pipefail
packages=(build-essential cmake ninja-build pkg-config ccache libsimgrid-dev libeigen3-dev
          nlohmann-json3-dev libcxxopts-dev googletest libgtest-dev libbenchmark-dev
          clang-format
          libyaml-cpp-dev  # Kubernetes, autoscaler and recipe YAML (io/yaml_document.hpp)
          libjemalloc-dev  # the event engine's allocator (CMakeLists.txt)
          chromium  # tests: the plan report renders in a headless browser
          libopenmpi-dev  # MPI: `mpirun -np N capsim plan` sharding (pulls in openmpi-bin)
          # `import capsim` (python/): pybind11 builds the module, pytest runs its tests and
          # matplotlib draws the examples' plots (docs/python.md)
          python3-dev python3-pybind11 python3-pytest python3-matplotlib)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "install-deps: installing ${missing[*]}" >&2
if [ "$(id -u)" -eq 0 ]; then
  apt-get update -qq || true
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
elif command -v sudo >/dev/null; then
  sudo apt-get update -qq || true
  sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
else
  echo "install-deps: missing packages ${missing[*]}; run as root or install them" >&2
  exit 1
fi
