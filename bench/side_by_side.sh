#!/bin/bash
# The speed bars of DESIGN.md, Muster and the Slurm oracle in one run, so the
# figures are comparable: each benchmark runs on Muster, then on the oracle's
# default configuration, then (with --htc) on its high-throughput one.
#
#   bench/side_by_side.sh [--htc] [LOG]      (default LOG: bench-side-by-side.log)
#
# Run it on a quiet machine with the oracle up (../shared/slurm-oracle/oracle.sh
# up); --htc restarts the oracle with ANCHOR_CONFIG=htc and back to its default
# at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
htc=0
if [[ "${1:-}" == "--htc" ]]; then htc=1; shift; fi
log=${1:-bench-side-by-side.log}
oracle=../shared/slurm-oracle/oracle.sh
bench=bench/muster_bench.py

run() { echo "# $*"; /usr/bin/python3 "$bench" "$@"; }

{
  echo "# $(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
  for what in sbatch throughput latency api; do run "$what"; done
  run array --jobs 2000
  run squeue --queued 10000,100000 --fill-api
  for what in sbatch throughput latency; do run "$what" --slurm; done
  run array --jobs 2000 --slurm
  # Filling the oracle through sbatch runs at ~140/s: 100,000 jobs would take 12 minutes.
  run squeue --queued 10000 --slurm
  if ((htc)); then
    ANCHOR_CONFIG=htc "$oracle" down && ANCHOR_CONFIG=htc "$oracle" up
    for what in sbatch throughput latency; do run "$what" --slurm; done
    "$oracle" down && "$oracle" up
  fi
} 2>&1 | tee "$log"
