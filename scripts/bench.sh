#!/usr/bin/env bash
# Benchmarks (never part of the test run). Figures are ratios and differences measured within one
# run, because the machines are shared and noisy.
#
#   scripts/bench.sh [--requests N]
#
# relay: N small requests one at a time straight to a trivial server and through ctxguard, in
# alternating blocks; prints the added round-trip latency (median, p99) and pipelined throughput.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CTXGUARD_BUILD_DIR:-$repo/build}"
requests=10000
if [[ "${1:-}" == "--requests" ]]; then requests="$2"; fi

"$repo/scripts/setup.sh"
"$repo/scripts/build.sh" >/dev/null
echo "== relay overhead (bench/relay_bench.cpp)"
"$build/bench/relay_bench" --ctxguard "$build/ctxguard" --server "$build/bench/echo_server" \
  --requests "$requests"
# estimate_tokens / estimate_json_tokens throughput in GB/s on 10 MiB generated in memory
# (docs/estimator.md).
echo "== token estimator (bench/estimator_bench.cpp)"
"$build/bench/estimator_bench" --mib 10
# One 10 MiB tools/call answer with a 100,000-item array: first page vs plain parse+serialize,
# a later page served from the cache, and the first page within a client's limits in all four
# units (characters binding) against tokens only (targets: <= 2.5x, < 2 ms, <= 1.1x).
echo "== budget pipeline (bench/pipeline_bench.cpp)"
"$build/bench/pipeline_bench" --items 100000
# chunk_text on a 10 MiB generated application log (entries with stack traces) against one
# estimate_tokens of the same text, chunks of 2,000 tokens; checks the chunks cover the text.
echo "== chunking (bench/chunk_bench.cpp)"
"$build/bench/chunk_bench" --mib 10
echo "== query over a cached array (bench/query_bench.cpp)"
"$build/bench/query_bench" --items 100000
# A burst of paginated calls through the Interceptor while a ConfigReloader reloads the file
# (rewritten every 20 ms, plus reload_now every 25 calls): per-call latency against a quiet phase.
echo "== hot reload during a burst of calls (bench/reload_bench.cpp)"
"$build/bench/reload_bench" --calls 2000 --every-ms 20
# Per-call latency through the Interceptor with telemetry off, on (log line, counters, file) and
# with a writer stuck on its disk (queue full, records dropped): the call must not notice.
echo "== telemetry per call (bench/telemetry_bench.cpp)"
"$build/bench/telemetry_bench" --calls 1000 --rounds 5
# Peak RSS of ctxguard for one answer of 10 and 100 MiB (JSON records, paginated; plain text,
# chunked; an array of one-digit numbers, the worst case: about 2.6 GiB for 100 MiB), as a ratio
# to the answer's size (docs/security.md, "Resource bounds").
echo "== peak memory per answer (scripts/bench-memory.mjs)"
node "$repo/scripts/bench-memory.mjs" --ctxguard "$build/ctxguard" --sizes 10,100
# toolList full / compact / lazy on a generated listing of 1,000 tools with repeated guidance and
# verbose schemas: parse + edit + serialize against parse + serialize (target: compact <= 3x),
# the tokens each mode lists, and a lazy search over the catalog (target: < 5 ms).
echo "== tool list modes (bench/tool_list_bench.cpp)"
"$build/bench/tool_list_bench" --tools 1000
