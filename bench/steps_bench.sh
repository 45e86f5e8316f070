#!/bin/bash
# Job steps: how fast srun starts and ends steps inside an allocation.
#   bench/steps_bench.sh [--slurm | --hosts]
# Default: Muster on one host (`muster up`, srun starts the tasks itself);
# --hosts: Muster over scripts/hosts.sh (3 compute hosts, auth/slurm; the
# agents start the tasks and stream them back); --slurm: the oracle
# (../shared/slurm-oracle, up). Prints steps per second for 200 serial
# `srun -n1 true`, and the time of one `srun -N2 -n64 true`, each measured
# inside one allocation (the allocation's own wait is not counted).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-local}
inner='
s=$(date +%s.%N); for i in $(seq 200); do srun -n1 -N1 true; done; e=$(date +%s.%N)
echo "steps: 200 serial srun -n1 true in $(echo "$e - $s" | bc) s = $(echo "200 / ($e - $s)" | bc) steps/s"
for k in 1 2 3; do
  s=$(date +%s.%N); srun -N2 -n64 true; e=$(date +%s.%N)
  echo "srun -N2 -n64 true: $(echo "($e - $s) * 1000" | bc | cut -d. -f1) ms"
done'
case "$mode" in
  --slurm)
    echo "[slurm]"
    PATH=/usr/bin:/bin salloc -Q -p short -N2 -n64 bash -c "$inner"
    ;;
  --hosts)
    echo "[muster, 3 hosts over TCP]"
    export MUSTER_HOSTS_DIR=/var/tmp/muster-steps-bench MUSTER_HOSTS_CPUS=32
    scripts/hosts.sh up 3 > /dev/null
    trap 'scripts/hosts.sh down > /dev/null' EXIT
    scripts/hosts.sh exec login salloc -Q -N2 -n64 -w node01,node03 bash -c "cd /; $inner"
    ;;
  *)
    echo "[muster, one host]"
    dir=$(mktemp -d)
    export PATH=$PWD/build/bin:$PATH
    eval "$(muster up --state-dir "$dir" | tail -1)"
    trap 'muster down > /dev/null; rm -rf "$dir"' EXIT
    salloc -Q -N2 -n64 bash -c "$inner"
    ;;
esac
