#!/bin/sh
# The speed of `muster sim` on the SWF traces of ../shared/traces, each on
# a configuration of the machine it was recorded on (bench/sim/*.conf):
# jobs per second, simulated days per minute and times real time, as the
# replay prints them on standard error. One replay at a time, one core each.
#   bench/sim_bench.sh [TRACE_NAME ...]   (default: every SWF trace there)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
bin=${MUSTER_BIN:-$here/../build/bin}
traces=${MUSTER_TRACES:-$here/../../shared/traces}
run() {  # conf trace
  [ -e "$2" ] || { echo "skipped: $2 is not on this machine"; return; }
  "$bin/muster" sim --quiet --conf "$here/sim/$1.conf" --trace "$2" 2>&1 >/dev/null | tail -1
}
want=${*:-"ipsc lublin gaia curie"}
for name in $want; do
  case $name in
    ipsc) run ipsc "$traces/pwa-nasa-ipsc-1993-excerpt/NASA-iPSC-1993-3.swf" ;;
    lublin) run lublin "$traces/lublin-256-synthetic/lublin_256.swf" ;;
    gaia) run gaia "$traces/pwa-unilu-gaia-2014/UniLu-Gaia-2014-1.swf" ;;
    curie) run curie "$traces/pwa-cea-curie-2011-cln/CEA-Curie-2011-2.1-cln.swf.gz" ;;
    *) echo "unknown trace $name (ipsc, lublin, gaia, curie)" >&2; exit 2 ;;
  esac
done
