#!/usr/bin/env bash
# Prints the fit-quality tables of docs/calibration.md: every log fitted on its own, and
# leave-one-log-out validation across logs of the same hardware and scope.
# Usage: scripts/calibration-tables.sh [path/to/capsim]
set -euo pipefail
cd "$(dirname "$0")/.."
capsim=${1:-build/cli/capsim}
N=data/nccl
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# gpu fabric node-NIC-bandwidth for a log, from its file name (data/nccl/INDEX.md,
# docs/design/hardware-facts.md §2).
hw() {
  case $1 in
    h100_*) gpu=H100-SXM5-80GB ;;
    *) gpu=A100-SXM4-80GB ;;
  esac
  case $1 in
    a100_p4d*|a100_p4de*) fabric=efa nic=400Gbps ;;
    a100_oci_roce*) fabric=roce nic=1600Gbps ;;
    a100_ib_hdr_4node2gpu*) fabric=infiniband nic=200Gbps ;;
    a100_ibhdr*) fabric=infiniband nic=1600Gbps ;;
    h100_p5*) fabric=efa nic=3200Gbps ;;
    h100_gcp*) fabric=roce nic=1600Gbps ;;
    h100_ibndr*) fabric=infiniband nic=3200Gbps ;;
    *) fabric=nvswitch nic=0 ;;
  esac
}

run() {  # run LOGS... ; prints the capsim summary lines
  local first
  first=$(basename "$1")
  hw "$first"
  local extra=(--gpu "$gpu" --fabric "$fabric")
  [[ $nic != 0 ]] && extra+=(--node-nic-bandwidth "$nic")
  "$capsim" calibrate fit "$@" "${extra[@]}" -o "$tmp/p.json" 2>/dev/null
}

echo "## Own fit (each log alone)"
echo "| log | curve | points | MAPE all % | points >= 1 MiB | MAPE >= 1 MiB % |"
echo "|---|---|---|---|---|---|"
for f in "$N"/*.txt; do
  run "$f" > /dev/null
  python3 -c '
import json, sys
for r in json.load(open(sys.argv[1]))["fit_quality"]:
    if r["curve"].startswith("gemm"): continue
    print("| %s | %s | %d | %.2f | %d | %.2f |" % (r["source"], r["curve"], r["points"],
          r["mape_pct"], r["points_large"], r["mape_large_pct"]))' "$tmp/p.json"
done
echo
echo "## Leave one log out (fit on the others of the group, evaluate on the held-out one)"
echo "| group | held-out log | MAPE all % | MAPE >= 1 MiB % |"
echo "|---|---|---|---|"
# Groups of logs from the same hardware and scope. The first groups hold comparable runs
# (same software generation and launch mode); the "drift" groups mix software generations,
# process modes or scales on purpose, to show how far one log predicts another.
groups=(
  "A100 NVSwitch, 1 process per GPU|a100_1node_allreduce_mpi8_thanos a100_oci_1node_allreduce_10G_ocitut"
  "A100 NVSwitch, 1 process for 8 GPUs|a100_1node_allreduce_g8_thanos a100_1node_allreduce_1M-1G_galvatronfixture"
  "A100 NVSwitch, drift (both launch modes)|a100_1node_allreduce_mpi8_thanos a100_1node_allreduce_g8_thanos a100_1node_allreduce_1M-1G_galvatronfixture a100_oci_1node_allreduce_10G_ocitut"
  "A100 p4d/p4de EFA 2 nodes (2023-24 software)|a100_p4d_2node_allreduce_awsdlami2024 a100_p4de_2node_allreduce_awsome a100_p4de_2node_allreduce_pclusterworkshop"
  "A100 p4d EFA, drift (2020 NCCL 2.7.8 ring)|a100_p4d_2node_allreduce_awsdlami2020ring a100_p4d_2node_allreduce_awsdlami2024 a100_p4de_2node_allreduce_awsome a100_p4de_2node_allreduce_pclusterworkshop"
  "A100 CoreWeave HDR IB, drift (2022/2023 images, 4 vs 16 nodes)|a100_ibhdr_4node32gpu_allreduce_coreweave2023jan a100_ibhdr_4node32gpu_allreduce_coreweave2023jun_partial a100_ibhdr_16node128gpu_allreduce_coreweave2022"
  "H100 NVSwitch|h100_p5_1node_allreduce_awsbatch h100_1node_allreduce_nccltests290"
  "H100 p5 EFA 2 nodes, drift (NCCL 2.18.5 vs newer)|h100_p5_2node_allreduce_awsome h100_p5_2node_allreduce_awsomeEKS_partial"
  "H100 NDR IB, drift (healthy 12-node SHARP vs misconfigured 2-node)|h100_ibndr_8node64gpu_allreduce_sharp_coreweave h100_ibndr_2node_allreduce_default_nccltests290 h100_ibndr_2node_allreduce_ring_nccltests290"
)
for g in "${groups[@]}"; do
  name=${g%%|*}
  read -r -a logs <<< "${g#*|}"
  for held in "${logs[@]}"; do
    train=()
    for l in "${logs[@]}"; do [[ $l != "$held" ]] && train+=("$N/$l.txt"); done
    hw "$held"
    extra=(--gpu "$gpu" --fabric "$fabric")
    [[ $nic != 0 ]] && extra+=(--node-nic-bandwidth "$nic")
    "$capsim" calibrate fit "${train[@]}" "${extra[@]}" --validate "$N/$held.txt" -o "$tmp/p.json" 2>/dev/null |
      awk -v g="$name" -v h="$held" '/^held-out/ {n=NF; printf "| %s | %s | %s | %s |\n", g, h, $(n-4), $(n-2)}'
  done
done
