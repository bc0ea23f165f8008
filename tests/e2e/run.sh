#!/usr/bin/env bash
# Run the ctxguard end-to-end suite (or the given test files).
#
#   tests/e2e/run.sh                      all *.test.mjs
#   tests/e2e/run.sh lifecycle.test.mjs   one file
#
# CTXGUARD_BIN selects the binary (default: <repo>/build/ctxguard).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
export CTXGUARD_BIN="${CTXGUARD_BIN:-$(cd ../.. && pwd)/build/ctxguard}"
if [[ ! -d node_modules/@modelcontextprotocol/sdk ]]; then
  echo "run.sh: node_modules missing; run 'npm ci' in $(pwd)" >&2
  exit 1
fi
if [[ $# -eq 0 ]]; then set -- *.test.mjs; fi
exec node --test --test-concurrency=2 "$@"
