#!/usr/bin/env bash
# Configures and builds ctxguard, its tests and benchmarks into build/ (warnings are errors).
#
#   scripts/build.sh [extra cmake -D options]
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CTXGUARD_BUILD_DIR:-$repo/build}"

cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCTXGUARD_WERROR=ON "$@" >/dev/null
cmake --build "$build" --parallel "$(nproc)"
