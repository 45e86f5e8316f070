#!/usr/bin/env bash
# Builds Muster and its Debian package: build/muster_<version>_amd64.deb
# (packaging/: the programs, systemd units for musterd and muster-agent,
# /etc/default files and a sample configuration). Install it on each
# server with `apt install ./muster_<version>_amd64.deb`.
#   scripts/package.sh [extra cmake args]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${MUSTER_BUILD_DIR:-$root/build}
"$root/scripts/build.sh" "$@"
cpack --config "$build_dir/CPackConfig.cmake" -G DEB -B "$build_dir/package" >/dev/null
deb=$(ls -t "$build_dir"/package/muster_*.deb | head -n1)
mv "$deb" "$build_dir/"
echo "$build_dir/$(basename "$deb")"
