#!/usr/bin/env bash
# Generate the deterministic demo data folder used by the demo and the examples in
# docs/protocol.md: nested source files, a big JSON file, a 10,000-line log (logs/app.log), an
# application log with stack traces (logs/service.log), 6,000 bookings (data/bookings.json), an
# incident report with long strings and deep values (data/incident.json), a flat folder of 2,500
# files (inbox/) and a knowledge graph for server-memory (memory/graph.jsonl).
#
#   scripts/demo-data.sh [DIR]     (default: <repo>/demo-data)
#
# An existing DIR is replaced only if it looks like a previous demo folder.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="${1:-$repo/demo-data}"

if [[ ! -d "$repo/tests/e2e/node_modules/@modelcontextprotocol/sdk" ]]; then
  echo "demo-data.sh: run 'npm ci' in $repo/tests/e2e first" >&2
  exit 1
fi

if [[ -e "$dir" ]]; then
  if [[ -f "$dir/logs/app.log" && -f "$dir/data/big.json" ]]; then
    rm -rf -- "$dir"
  elif [[ -n "$(ls -A -- "$dir" 2>/dev/null)" ]]; then
    echo "demo-data.sh: $dir exists and is not a demo data folder; not touching it" >&2
    exit 1
  fi
fi

exec node "$repo/tests/e2e/demo-session.mjs" --generate --data "$dir"
