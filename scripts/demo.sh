#!/usr/bin/env bash
# The main job: builds ctxguard and runs a short scripted session of the real MCP SDK client
# against `ctxguard -- server-filesystem <generated data folder>`, printing each call and the size
# of its answer.
#
#   scripts/demo.sh [DATA_DIR]      (default: build/demo-data, regenerated each run)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CTXGUARD_BUILD_DIR:-$repo/build}"
data="${1:-$build/demo-data}"

"$repo/scripts/setup.sh"
"$repo/scripts/build.sh" >/dev/null
"$repo/scripts/demo-data.sh" "$data" >/dev/null
exec node "$repo/tests/e2e/demo-session.mjs" --ctxguard "$build/ctxguard" --data "$data"
