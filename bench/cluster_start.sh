#!/bin/bash
# A full cluster start over separate test hosts: scripts/hosts.sh up with
# 8 compute hosts of 8 emulated nodes each (64 nodes), three times. Prints
# the whole start (namespaces, bridge, musterd, 9 agents, every node idle)
# and, from musterd's log, the time from musterd serving to the last
# agent's registration. Needs root.
#   bench/cluster_start.sh [HOSTS] [NODES_PER_HOST]
set -euo pipefail
cd "$(dirname "$0")/.."
hosts=${1:-8}
per=${2:-8}
export MUSTER_HOSTS_DIR=/var/tmp/muster-start-bench MUSTER_HOSTS_NODES=$per
trap 'scripts/hosts.sh down > /dev/null 2>&1 || true' EXIT
for run in 1 2 3; do
  s=$(date +%s.%N)
  scripts/hosts.sh up "$hosts" > /dev/null
  e=$(date +%s.%N)
  log=$MUSTER_HOSTS_DIR/ctl/musterd.log
  first=$(grep -m1 "serving cluster" "$log" | cut -d' ' -f1)
  last=$(grep "registered" "$log" | tail -1 | cut -d' ' -f1)
  ms() { date -d "$1" +%s%3N; }
  echo "run $run: $((hosts * per)) nodes on $hosts hosts up in $(echo "($e - $s) * 1000 / 1" | bc) ms;" \
       "registration $(( $(ms "$last") - $(ms "$first") )) ms after musterd served"
  scripts/hosts.sh down > /dev/null
done
