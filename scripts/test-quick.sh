#!/usr/bin/env bash
# The loop while you work: the source checks (formatting, module order), the build, and the unit
# and integration tests (`ctest -LE e2e`) — no end-to-end tests, package, container, libc++,
# Windows or sanitizer runs, which scripts/test.sh adds. About a minute on 2 cores after a first
# build when one file changed (the first build is scripts/build.sh's, ~8 minutes).
#
#   scripts/test-quick.sh [extra ctest arguments, e.g. -R wrap]
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CTXGUARD_BUILD_DIR:-$repo/build}"

start="$(date +%s)"
"$repo/scripts/check-sources.sh"
"$repo/scripts/build.sh"
ctest --test-dir "$build" --output-on-failure --parallel "$(nproc)" --timeout 600 -LE e2e "$@"
echo "test-quick: $(($(date +%s) - start)) s" >&2
