#!/usr/bin/env bash
# Builds Muster and runs every test: the GoogleTest units through ctest, then
# the end-to-end tests (pytest) that start real musterd/muster-agent processes.
#   scripts/test.sh [pytest args...]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/build.sh"
build_dir=${MUSTER_BUILD_DIR:-$root/build}

echo "== unit tests (ctest)"
ctest --test-dir "$build_dir" --output-on-failure -j "${MUSTER_JOBS:-2}"

echo "== end-to-end tests (pytest)"
export MUSTER_BIN="$build_dir/bin"
cd "$root/tests/e2e"
/usr/bin/python3 -m pytest -q -p no:cacheprovider "$@"
