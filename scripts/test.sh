#!/usr/bin/env bash
# Installs what is missing, checks the sources (formatting, and that no module includes one above
# it: scripts/check-sources.sh), builds, and runs every test through CTest: unit tests, relay and
# lifecycle tests of the real binary, and the end-to-end tests with the real MCP SDK client
# against real MCP servers; the Debian package and the container image (scripts/package.sh,
# scripts/container-build.sh); every source against libc++ (scripts/check-libcxx.sh); the
# Windows build under Wine (scripts/test-windows.sh); then all of it again built with clang under
# AddressSanitizer and UndefinedBehaviorSanitizer, taking the POSIX path macOS takes, with each
# libFuzzer target run for a bounded time (scripts/test-sanitized.sh). Exits non-zero on any
# failure or sanitizer report.
#
#   scripts/test.sh [extra ctest arguments, e.g. -R relay]
#
# It runs every step whatever the arguments; the quick loop while you work (sources, build, unit
# and integration tests) is scripts/test-quick.sh.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CTXGUARD_BUILD_DIR:-$repo/build}"

# Each step's time on stderr, and all of them at the end: CI allows 90 minutes and this run is
# to stay under 45 on its 2 cores.
steps=()
run_start="$(date +%s)"
step() {  # step NAME COMMAND...: runs it and records how long it took
  local name="$1" start
  shift
  start="$(date +%s)"
  "$@"
  steps+=("$(printf '%-16s %5d s' "$name" "$(($(date +%s) - start))")")
  echo "test: $name took $(($(date +%s) - start)) s" >&2
}
report() {
  printf 'test: %s\n' "${steps[@]}" "$(printf '%-16s %5d s' all "$(($(date +%s) - run_start))")" >&2
}
trap report EXIT

step setup "$repo/scripts/setup.sh"
step check-sources "$repo/scripts/check-sources.sh"
step build "$repo/scripts/build.sh"
step ctest ctest --test-dir "$build" --output-on-failure --parallel 2 --timeout 600 "$@"
# The Debian package of that build, checked in a scratch root; the Dockerfile built for real
# (podman) and its image checked, or its build step without the engine where podman cannot run.
step package "$repo/scripts/package.sh"
step container "$repo/scripts/container-build.sh"
# macOS-ready: every source compiled against LLVM's libc++ (docs/architecture.md, Platforms).
step libcxx "$repo/scripts/check-libcxx.sh"
# Windows: the whole tree cross-built with MinGW-w64, its unit tests and the end-to-end test of
# ctxguard.exe under Wine, then the .zip, checked.
step windows "$repo/scripts/test-windows.sh"
# The same suite again under ASan + UBSan, plus a bounded run of every fuzz target.
step sanitized "$repo/scripts/test-sanitized.sh" "$@"
