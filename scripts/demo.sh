#!/usr/bin/env bash
# The main job: installs what is missing, builds ctxguard, generates the demo data (a folder of
# thousands of files and a knowledge graph of 2,000 people) and runs one scripted session of the
# real MCP SDK client against server-filesystem and server-memory, directly and through ctxguard.
# Prints, for each call, the bytes and tokens the client received both ways and what ctxguard did.
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
