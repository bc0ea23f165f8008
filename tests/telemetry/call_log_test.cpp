#include "telemetry/call_log.hpp"

#include <catch2/catch.hpp>

using namespace ctxguard::telemetry;
using namespace std::chrono_literals;

namespace {

CallEvent fetched() {
  CallEvent event;
  event.id = 4;
  event.kind = CallKind::kFetch;
  event.tool = "ctxguard_fetch:read_graph";
  event.stages = {"fetch"};
  event.outcome = outcome_of(event.kind, event.stages);
  event.budget = 4000;
  event.final_tokens = 1949;
  event.final_bytes = 7862;
  event.items_total = 2000;
  event.items_shown = 50;
  event.proxy_latency = 259us;
  return event;
}

}  // namespace

TEST_CASE("call_log: the decision line says what happened, field by field") {
  CHECK(format_call_line(fetched()) ==
        "call tool=ctxguard_fetch:read_graph tokens=0->1949 bytes=0->7862 items=50/2000 "
        "stages=fetch outcome=fetched reduction=0.0% budget=4000 id=4 proxy_ms=0.259");
}

TEST_CASE("call_log: the client's name comes quoted, before the latencies") {
  CallEvent event = fetched();
  event.client = "claude-code";
  CHECK(format_call_line(event).ends_with(" id=4 client=\"claude-code\" proxy_ms=0.259"));
  // A name with spaces, or one that mimics a field, stays one value.
  event.client = "Visual Studio Code proxy_ms=0";
  CHECK(format_call_line(event).ends_with(
      " client=\"Visual Studio Code proxy_ms=0\" proxy_ms=0.259"));
}

TEST_CASE("call_log: a rewritten answer says the limit it was held to and how much of it it uses") {
  CallEvent event = fetched();
  event.limit = "tokens";
  event.fill_pct = 97.45;
  CHECK(format_call_line(event).find(" budget=4000 limit=tokens fill=97.5% id=4 ") !=
        std::string::npos);
}
