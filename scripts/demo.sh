#!/usr/bin/env bash
# The main job: installs what is missing, builds ctxguard, generates the demo data (a folder of
# thousands of files, a 1.5 MB application log with stack traces, 6,000 bookings as JSON, and a
# knowledge graph of 2,000 people), starts a scratch PostgreSQL with 4,000 orders, and runs one
# scripted session of the real MCP SDK client against server-filesystem, server-memory and
# server-postgres, directly and through ctxguard. Prints, for each call, the bytes and tokens the
# client received both ways and what ctxguard did, then the log, the bookings and the orders
# before and after in detail (first chunk, a line range, a search; digest, projection, a search,
# one record in full; aggregates) and ctxguard's log lines; then `ctxguard stats` over the call
# records the ctxguard processes wrote.
#
#   scripts/demo.sh [DATA_DIR]      (default: build/demo-data, regenerated each run)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CTXGUARD_BUILD_DIR:-$repo/build}"
data="${1:-$build/demo-data}"

"$repo/scripts/setup.sh"
"$repo/scripts/build.sh" >/dev/null
"$repo/scripts/demo-data.sh" "$data" >/dev/null
# Each ctxguard of the session writes its call records (--telemetry-file); `ctxguard stats`
# reports on them afterwards, as an engineer would (docs/telemetry.md).
telemetry="$build/demo-telemetry"
rm -rf "$telemetry" && mkdir -p "$telemetry"
node "$repo/tests/e2e/demo-session.mjs" --ctxguard "$build/ctxguard" --data "$data" \
  --telemetry "$telemetry"
echo
echo "ctxguard stats $telemetry/*.jsonl"
"$build/ctxguard" stats "$telemetry"/*.jsonl
