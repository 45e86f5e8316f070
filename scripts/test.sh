#!/usr/bin/env bash
# Builds Muster and runs every test: the GoogleTest units through ctest, the
# end-to-end tests (pytest) that start real musterd/muster-agent processes,
# then the units again under ASan+UBSan and each libFuzzer target for a
# short time (scripts/sanitize.sh; the sanitizer tree builds at the lowest
# priority while the end-to-end tests run, which mostly wait on processes).
#   scripts/test.sh [pytest args...]
# MUSTER_SANITIZE=0 skips the sanitizer part; MUSTER_FUZZ_SECONDS sets each
# fuzzer's time (5 s). Each part prints the seconds it took.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Each part's time, so a slow run shows where it went.
SECONDS=0
part_start=0
took() { echo "== $1 took $((SECONDS - part_start)) s (test.sh at $SECONDS s)"; part_start=$SECONDS; }

"$root/scripts/build.sh"
took "build"
build_dir=${MUSTER_BUILD_DIR:-$root/build}

echo "== unit tests (ctest)"
ctest --test-dir "$build_dir" --output-on-failure -j "${MUSTER_JOBS:-2}"
took "unit tests"

san_pid=""
if [[ "${MUSTER_SANITIZE:-1}" != 0 ]]; then
  # In a process group of its own, so that an early exit (a failed end-to-end
  # test) stops the whole build, compilers included, not just its script.
  setsid -w nice -n 19 "$root/scripts/sanitize.sh" build >"$build_dir/sanitize-build.log" 2>&1 &
  san_pid=$!
  trap '[[ -n "$san_pid" ]] && kill -- "-$san_pid" 2>/dev/null; true' EXIT
fi

echo "== end-to-end tests (pytest)"
(
  export MUSTER_BIN="$build_dir/bin"
  cd "$root/tests/e2e"
  /usr/bin/python3 -m pytest -q -p no:cacheprovider --durations=10 "$@"
)
took "end-to-end tests"

if [[ -n "$san_pid" ]]; then
  echo "== sanitizer build (clang, ASan+UBSan, libFuzzer)"
  if ! wait "$san_pid"; then
    san_pid=""
    tail -n 80 "$build_dir/sanitize-build.log" >&2
    echo "test.sh: the sanitizer build failed (log: $build_dir/sanitize-build.log)" >&2
    exit 1
  fi
  san_pid=""
  took "rest of the sanitizer build"
  "$root/scripts/sanitize.sh" test
  took "sanitizer units and fuzzers"
fi
