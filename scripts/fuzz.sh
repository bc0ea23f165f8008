#!/usr/bin/env bash
# Runs the libFuzzer targets (tests/fuzz) longer than the test suite does, one after another, and
# prints what each reached: executions, executions per second, coverage (libFuzzer's `cov:` edges,
# also as a share of the edges instrumented in the binary, and `ft:` features) and the corpus.
#
#   scripts/fuzz.sh [--seconds N] [--merge] [target...]
#
#   --seconds N  how long each target runs (600)
#   --merge      afterwards, minimize what the run found into tests/fuzz/corpus/<target>/ (only
#                inputs that add coverage over the seeds are added; review and commit them)
#   target       line_framer_fuzz, session_router_fuzz, pipeline_fuzz, cursor_fuzz, chunker_fuzz,
#                config_fuzz, tool_list_fuzz, config_edit_fuzz (all by default)
#
# Builds build-sanitize/ first (scripts/build-sanitized.sh). Each target's corpus grows in
# build-sanitize/fuzz/<target>/corpus across runs (seeded from the committed corpus, which is
# only read); logs and crash inputs are kept beside it. Exits non-zero when a target failed.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CTXGUARD_SANITIZE_BUILD_DIR:-$repo/build-sanitize}"
# Every target of tests/fuzz/CMakeLists.txt (check-sources.sh checks the two lists agree).
all_targets=(line_framer_fuzz session_router_fuzz pipeline_fuzz cursor_fuzz chunker_fuzz config_fuzz
  tool_list_fuzz config_edit_fuzz)

seconds=600
merge=0
targets=()
while (($#)); do
  case "$1" in
    --seconds)
      seconds="$2"
      shift 2
      ;;
    --merge)
      merge=1
      shift
      ;;
    -h | --help)
      sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    -*)
      echo "fuzz.sh: unknown option $1" >&2
      exit 2
      ;;
    *)
      targets+=("$1")
      shift
      ;;
  esac
done
((${#targets[@]})) || targets=("${all_targets[@]}")

"$repo/scripts/build-sanitized.sh" --target "${targets[@]}"

dictionary_of() {
  case "$1" in
    session_router_fuzz | pipeline_fuzz) echo "$repo/tests/fuzz/json.dict" ;;
    config_fuzz) echo "$repo/tests/fuzz/yaml.dict" ;;
  esac
}

# The value after `key` on the last line of `log` that has it ("cov: 123" -> 123).
last_field() {
  grep -o "$2[[:space:]]*[0-9]*" "$1" | tail -n 1 | grep -o '[0-9]*$' || true
}

rows=()
status=0
for target in "${targets[@]}"; do
  fuzzer="$build/tests/fuzz/$target"
  seeds="$repo/tests/fuzz/corpus/$target"
  work="$build/fuzz/$target"
  mkdir -p "$work/corpus" "$work/artifacts"
  log="$work/last-run.log"
  options=(-max_total_time="$seconds" -print_final_stats=1 -rss_limit_mb=2048 -timeout=10
    -artifact_prefix="$work/artifacts/")
  dictionary="$(dictionary_of "$target")"
  [[ -z "$dictionary" ]] || options+=(-dict="$dictionary")

  echo "fuzz.sh: $target for ${seconds}s (log: $log)" >&2
  result=ok
  # New inputs go to the first directory only: the seeds are read, never written.
  if ! "$fuzzer" "${options[@]}" "$work/corpus" "$seeds" >"$log" 2>&1; then
    result="FAILED: see $log and $work/artifacts/"
    status=1
    tail -n 30 "$log" >&2
  fi
  if ((merge)) && [[ "$result" == ok ]]; then
    before=$(find "$seeds" -type f | wc -l)
    "$fuzzer" -merge=1 "${options[@]:1}" "$seeds" "$work/corpus" >"$work/merge.log" 2>&1
    echo "fuzz.sh: $target: merged $(($(find "$seeds" -type f | wc -l) - before)) inputs into $seeds" >&2
  fi

  executions=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$log")
  per_second=$(sed -n 's/^stat::average_exec_per_sec: *\([0-9]*\).*/\1/p' "$log")
  edges=$(last_field "$log" 'cov:')
  features=$(last_field "$log" 'ft:')
  counters=$(sed -n 's/.*(\([0-9]*\) inline 8-bit counters).*/\1/p' "$log" | head -n 1)
  share="-"
  if [[ -n "$edges" && -n "$counters" && "$counters" -gt 0 ]]; then
    share="$(awk -v e="$edges" -v c="$counters" 'BEGIN { printf "%.1f%%", 100 * e / c }')"
  fi
  files=$(find "$work/corpus" -type f | wc -l)
  bytes=$(du -sb "$work/corpus" | cut -f1)
  rows+=("$(printf '%-20s %12s %8s %7s %7s %7s %7s %10s  %s' "$target" "${executions:--}" \
    "${per_second:--}" "${edges:--}" "$share" "${features:--}" "$files" "$bytes" "$result")")
done

printf '\n%-20s %12s %8s %7s %7s %7s %7s %10s  %s\n' target executions exec/s cov 'cov%' ft \
  files bytes result
printf '%s\n' "${rows[@]}"
echo "(${seconds}s each; cov: edges reached, cov%: of the edges instrumented in the binary," \
  "ft: features; files/bytes: the run's corpus)"
exit "$status"
