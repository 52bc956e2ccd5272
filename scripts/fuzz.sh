#!/usr/bin/env bash
# Coverage-guided fuzzing of every input reader (docs/performance.md, "Fuzzing"):
#   scripts/fuzz.sh [TARGET|all] [RUNS]
# Builds the libFuzzer targets with clang 14 under ASan+UBSan in build-fuzz/, runs each for RUNS
# executions (default 1000000) on its corpus (tests/fuzz/corpus/TARGET), merges the inputs that
# reach new coverage into that corpus, copies every crash into tests/fuzz/regressions/TARGET and
# prints one summary line per target. FUZZ_FLAGS adds libFuzzer flags (e.g. -max_total_time=600);
# FUZZ_BUILD=0 runs the targets already built (while another build of build-fuzz/ is running).
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:-all}
runs=${2:-1000000}
targets=(scenario set_override profile validation gpu_spec plan whatif cluster nccl_log nccl_fit gemm_csv
         gemm_fit measurements job_trace_capsim job_trace_philly job_trace_alibaba job_trace_pollux
         job_trace_helios megatron_import bridge_import hf_config yaml_document karpenter kuberay ray_cluster
         cluster_autoscaler slurm_conf)
if [ "$target" != all ]; then
  [[ " ${targets[*]} " == *" $target "* ]] || { echo "fuzz: unknown target $target; one of ${targets[*]}" >&2; exit 2; }
  targets=("$target")
fi

# clang and its libFuzzer runtime (not needed by the normal build).
packages=(clang-14 libclang-rt-14-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq || true
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    --no-install-recommends "${missing[@]}" >&2
fi

if [ "${FUZZ_BUILD:-1}" != 0 ]; then
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # -O1 without NDEBUG: assertions stay on, and the sanitized build compiles faster than at -O3.
  cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE=-O1 \
    -DCMAKE_CXX_COMPILER=clang++-14 "${launcher[@]}" -DCAPSIM_FUZZ=ON -DCAPSIM_BUILD_TESTS=OFF \
    -DCAPSIM_WITH_CUDA=OFF >/dev/null
  nice cmake --build build-fuzz -j"$(nproc)" --target "${targets[@]/%/_fuzz}"
fi

# Prints the last number of the last match of $1 in the fuzzer's log ("" when none).
last_figure() { grep -o "$1" "$work/log.txt" | tail -1 | awk '{print $NF}' || true; }

summary=build-fuzz/runs/summary.txt
mkdir -p build-fuzz/runs
status=0
for t in "${targets[@]}"; do
  work=build-fuzz/runs/$t
  rm -rf "$work" && mkdir -p "$work/new"
  corpus=tests/fuzz/corpus/$t
  regressions=tests/fuzz/regressions/$t
  mkdir -p "$corpus"
  start=$(date +%s)
  # New inputs go to the first folder; the repository's corpus is read only until the merge.
  # A run stops at its first finding (the input is kept and reported below).
  nice build-fuzz/tests/fuzz/targets/"${t}_fuzz" -runs="$runs" -timeout=25 -rss_limit_mb=4096 \
    -print_final_stats=1 -artifact_prefix="$work/" ${FUZZ_FLAGS:-} "$work/new" "$corpus" \
    >"$work/log.txt" 2>&1 || true
  seconds=$(($(date +%s) - start))
  nice build-fuzz/tests/fuzz/targets/"${t}_fuzz" -merge=1 "$corpus" "$work/new" \
    >"$work/merge.txt" 2>&1 || true
  crashes=0
  for f in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
    [ -e "$f" ] || continue
    mkdir -p "$regressions" && cp "$f" "$regressions/"
    crashes=$((crashes + 1))
  done
  execs=$(last_figure 'stat::number_of_executed_units: *[0-9]*')
  rate=$(last_figure 'stat::average_exec_per_sec: *[0-9]*')
  cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$work/log.txt" | tail -1 || true)
  # -fork=N prints no final stats: its last progress line counts the executions.
  [ -n "$execs" ] || execs=$(last_figure '^#[0-9]*' | tr -d '#')
  [ -n "$rate" ] || rate=$((${execs:-0} / (seconds > 0 ? seconds : 1)))
  line="$t: ${execs:-0} executions, ${rate:-0} exec/s, ${seconds} s, ${cov:-cov: ?}, $crashes crashes"
  echo "$line" | tee -a "$summary"
  [ "$crashes" -eq 0 ] || status=1
done
exit $status
