#!/usr/bin/env bash
# Regenerates the shipped profiles scenarios/profiles/*.json (byte-identically) and their fit
# reports from the logs in data/. Usage: scripts/fit-profiles.sh [path/to/capsim] [report-dir]
# PROFILE_DIR=dir writes the profiles there instead (the regeneration test compares them).
# Which logs feed which profile, and why the others do not, is explained in docs/calibration.md.
set -euo pipefail
cd "$(dirname "$0")/.."
capsim=${1:-build/cli/capsim}
reports=${2:-}
out=${PROFILE_DIR:-scenarios/profiles}
mkdir -p "$out" ${reports:+"$reports"}
N=data/nccl
GEMM=data/gemm/gemm_measurements.csv
A100_INTRA="$N/a100_1node_allreduce_mpi8_thanos.txt $N/a100_oci_1node_allreduce_10G_ocitut.txt $N/a100_1node_sendrecv_liplus.txt"
H100_INTRA="$N/h100_p5_1node_allreduce_awsbatch.txt $N/h100_1node_allreduce_nccltests290.txt"

fit() {  # fit NAME GPU FABRIC NIC LOGS...
  local name=$1 gpu=$2 fabric=$3 nic=$4
  shift 4
  local report=()
  if [[ -n "$reports" ]]; then report=(--report "$reports/$name.html"); fi
  "$capsim" calibrate fit "$@" $GEMM --name "$name" --gpu "$gpu" --fabric "$fabric" \
    --node-nic-bandwidth "$nic" -o "$out/$name.json" "${report[@]}"
}

# The in-situ factor (software_efficiency): how much slower kernels run inside a training stack
# than alone. Fitted per GPU family to every published run of that family in the calibration set
# (never to data/validation/dev.json, which judges the result), on the InfiniBand profile, where
# those runs ran, and copied into the family's other profiles (docs/calibration.md).
RUNS=scenarios/validation/published-extra.json
in_situ() {  # in_situ NAME CASE_PREFIXES...
  local name=$1
  shift
  local cases=()
  for prefix in "$@"; do cases+=(--cases "$prefix"); done
  "$capsim" calibrate step $RUNS "${cases[@]}" --profile "$out/$name.json" -o "$out/$name.json" \
    >/dev/null
}

fit a100-ib A100-SXM4-80GB infiniband 1600Gbps $A100_INTRA \
  $N/a100_ibhdr_4node32gpu_allreduce_coreweave2023jan.txt
in_situ a100-ib korthikanti22 mtnlg bloom
fit a100-roce A100-SXM4-80GB roce 1600Gbps $A100_INTRA \
  $N/a100_oci_roce_2node_allreduce_10G_ocitut.txt --software-efficiency-from "$out/a100-ib.json"
fit a100-efa A100-SXM4-80GB efa 400Gbps $A100_INTRA \
  $N/a100_p4de_2node_allreduce_awsome.txt $N/a100_p4de_2node_allreduce_pclusterworkshop.txt \
  --software-efficiency-from "$out/a100-ib.json"
fit h100-ib H100-SXM5-80GB infiniband 3200Gbps $H100_INTRA \
  $N/h100_ibndr_8node64gpu_allreduce_sharp_coreweave.txt
in_situ h100-ib dgxc2503 nemo mbridge
fit h100-efa H100-SXM5-80GB efa 3200Gbps $H100_INTRA \
  $N/h100_p5_2node_allreduce_awsome.txt --software-efficiency-from "$out/h100-ib.json"
