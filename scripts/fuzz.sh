#!/usr/bin/env bash
# The long fuzzing campaign: every libFuzzer target of tests/fuzz/ in turn,
# at the lowest priority, each for --seconds-per-target, starting from the
# tree's seeds; prints a table of runs, coverage, corpus and findings.
#   scripts/fuzz.sh [--seconds-per-target N] [--scratch DIR] [--table FILE] [--build]
# --build (re)builds build-san/ first (scripts/sanitize.sh build, at -O1
# unless MUSTER_SAN_OPT says otherwise). What a
# run finds (the grown corpus, any crash input) stays in --scratch.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
san_dir=${MUSTER_SAN_DIR:-$root/build-san}
seconds=300
scratch=""
table=""
while (($#)); do
  case "$1" in
    --seconds-per-target) seconds=$2; shift 2 ;;
    --scratch) scratch=$2; shift 2 ;;
    --table) table=$2; shift 2 ;;
    --build) MUSTER_SAN_OPT=${MUSTER_SAN_OPT:--O1} "$root/scripts/sanitize.sh" build; shift ;;
    *) echo "fuzz.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ -x "$san_dir/bin/conf_fuzz" ]] || { echo "fuzz.sh: no $san_dir; run with --build" >&2; exit 1; }
scratch=${scratch:-$(mktemp -d /tmp/muster-fuzz-campaign.XXXXXX)}
mkdir -p "$scratch"
symbolizer=$(command -v llvm-symbolizer || true)
[[ -n "$symbolizer" ]] && export ASAN_SYMBOLIZER_PATH=$symbolizer
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

out=$(printf '%-12s %8s %12s %8s %8s %8s  %s\n' target seconds runs cov features corpus result)
echo "$out"
total_runs=0 failures=0
while read -r name; do
  [[ -z "$name" ]] && continue
  mkdir -p "$scratch/$name"
  log="$scratch/$name.log"
  result=ok
  nice -n 19 "$san_dir/bin/${name}_fuzz" -max_total_time="$seconds" -close_fd_mask=3 \
    -artifact_prefix="$scratch/$name-" -print_final_stats=1 \
    "$scratch/$name" "$root/tests/fuzz/corpus/$name" >"$log" 2>&1 || result=FAILED
  # A crash prints the final stats twice: the last line counts.
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  last=$(grep -E '^#[0-9]+' "$log" | tail -1)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corpus=$(find "$scratch/$name" -type f | wc -l)
  [[ "$result" == ok ]] && grep -qE 'ERROR: (Address|Leak|UndefinedBehavior)Sanitizer|runtime error:' "$log" && result=REPORT
  [[ "$result" != ok ]] && failures=$((failures + 1))
  total_runs=$((total_runs + ${runs:-0}))
  line=$(printf '%-12s %8s %12s %8s %8s %8s  %s' "$name" "$seconds" "${runs:-?}" "${cov:-?}" "${ft:-?}" "$corpus" "$result")
  echo "$line"
  out+=$'\n'"$line"
done <"$san_dir/fuzzers.txt"
summary="total runs: $total_runs; targets failed or reported: $failures; scratch: $scratch"
echo "$summary"
[[ -n "$table" ]] && printf '%s\n%s\n' "$out" "$summary" >"$table"
((failures == 0))
