#!/usr/bin/env bash
# The sanitizer tree: every library and unit test built with clang,
# AddressSanitizer and UndefinedBehaviorSanitizer (any report fails), and
# the libFuzzer targets of tests/fuzz/. Installs clang with apt if missing.
#   scripts/sanitize.sh build   # configure and build build-san/
#   scripts/sanitize.sh test    # build, run the units, run each fuzzer briefly
# MUSTER_SAN_OPT sets the optimisation (-O0); MUSTER_FUZZ_SECONDS
# (default 5) is each fuzzer's time in `test`; their
# seeds are tests/fuzz/corpus/<name>/, left unchanged (what a run finds
# goes to a scratch directory). scripts/fuzz.sh runs the long campaign.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
san_dir=${MUSTER_SAN_DIR:-$root/build-san}
mode=${1:-test}

need_pkgs=()
# libclang-rt-14-dev (the sanitizer and libFuzzer runtimes) is only a
# recommendation of clang, so it is named.
for p in clang llvm libclang-rt-14-dev; do dpkg -s "$p" >/dev/null 2>&1 || need_pkgs+=("$p"); done
if ((${#need_pkgs[@]})); then
  echo "sanitize.sh: installing ${need_pkgs[*]}" >&2
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >/dev/null
fi

# Reports with file:line (llvm's symbolizer), and a report is a failure.
symbolizer=$(command -v llvm-symbolizer || ls /usr/bin/llvm-symbolizer-* 2>/dev/null | head -1 || true)
[[ -n "$symbolizer" ]] && export ASAN_SYMBOLIZER_PATH=$symbolizer
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

build() {
  # Line tables only: readable reports. -O0 by default: the tree is built
  # from scratch on every CI run, and -O0 halves its compile time (9.5
  # minutes against 17 on 2 cores) for two more minutes of units; the long
  # fuzzing campaign (scripts/fuzz.sh --build) asks for -O1, which runs
  # the fuzzers 3 to 10 times faster.
  CC=clang CXX=clang++ cmake -S "$root" -B "$san_dir" -G Ninja -DCMAKE_BUILD_TYPE=San \
    -DCMAKE_CXX_FLAGS_SAN="${MUSTER_SAN_OPT:--O0} -gline-tables-only" -DMUSTER_FUZZ=ON >/dev/null
  cmake --build "$san_dir" -j "${MUSTER_JOBS:-2}"
}

run_fuzzers() {
  local seconds=${MUSTER_FUZZ_SECONDS:-5}
  local scratch
  scratch=$(mktemp -d /tmp/muster-fuzz.XXXXXX)
  trap 'rm -rf "$scratch"' RETURN
  local failed=0 name
  while read -r name; do
    [[ -z "$name" ]] && continue
    mkdir -p "$scratch/$name"
    # New inputs go to the scratch corpus (first); the tree's seeds are read.
    # close_fd_mask=3: the code's own logging is not the fuzzer's output.
    if "$san_dir/bin/${name}_fuzz" -max_total_time="$seconds" -close_fd_mask=3 \
         -artifact_prefix="$scratch/$name-" -print_final_stats=1 \
         "$scratch/$name" "$root/tests/fuzz/corpus/$name" >"$scratch/$name.log" 2>&1; then
      runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$scratch/$name.log" | tail -n 1)
      echo "fuzz $name: ${seconds}s, ${runs:-?} runs, no crash, no report"
    else
      echo "fuzz $name: FAILED" >&2
      tail -n 60 "$scratch/$name.log" >&2
      mkdir -p "$root/build-san/fuzz-failures"
      cp "$scratch/$name-"* "$root/build-san/fuzz-failures/" 2>/dev/null || true
      failed=1
    fi
  done <"$san_dir/fuzzers.txt"
  return "$failed"
}

case "$mode" in
  build) build ;;
  test)
    build
    echo "== unit tests under ASan+UBSan (ctest)"
    ctest --test-dir "$san_dir" --output-on-failure -j "${MUSTER_JOBS:-2}"
    echo "== fuzzers (${MUSTER_FUZZ_SECONDS:-5} s each)"
    run_fuzzers
    ;;
  *) echo "usage: scripts/sanitize.sh [build|test]" >&2; exit 2 ;;
esac
