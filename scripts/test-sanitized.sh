#!/usr/bin/env bash
# Builds everything with clang under AddressSanitizer + UndefinedBehaviorSanitizer (and libFuzzer
# coverage) into build-sanitize/, then runs the whole suite there: unit, integration and
# end-to-end tests drive the sanitized binary, and each fuzz target runs for a bounded time
# (CTXGUARD_FUZZ_SECONDS, 20 by default). Every report (ASan, LSan, UBSan) of every process the
# tests start is written under build-sanitize/sanitizer-reports/; any report fails the run, even
# one from a process whose test did not look at its exit status.
#
#   scripts/test-sanitized.sh [extra ctest arguments, e.g. -L fuzz]
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CTXGUARD_SANITIZE_BUILD_DIR:-$repo/build-sanitize}"

"$repo/scripts/build-sanitized.sh"

reports="$build/sanitizer-reports"
rm -rf "$reports" && mkdir -p "$reports"
# log_path: one file per reporting process (name.PID), kept whatever the test did with stderr.
export ASAN_OPTIONS="log_path=$reports/asan:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1"
# Tests that assert memory figures (RSS) scale or skip them: ASan's shadow memory and quarantine
# make a sanitized process several times larger than the product.
export CTXGUARD_SANITIZED=1
export UBSAN_OPTIONS="log_path=$reports/ubsan:print_stacktrace=1:halt_on_error=1"

status=0
# The fuzz targets run last, two at a time, so their CPU does not slow the timing-sensitive
# end-to-end tests down.
ctest --test-dir "$build" --output-on-failure --parallel 2 --timeout 600 -LE fuzz "$@" || status=$?
ctest --test-dir "$build" --output-on-failure --parallel 2 -L fuzz "$@" || status=$?

if compgen -G "$reports/*" >/dev/null; then
  echo "test-sanitized: sanitizer reports:" >&2
  for report in "$reports"/*; do
    echo "=== $report" >&2
    head -c 20000 "$report" >&2
  done
  exit 1
fi
echo "test-sanitized: no sanitizer reports" >&2
exit "$status"
