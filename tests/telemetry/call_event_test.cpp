#include "telemetry/call_event.hpp"

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>

using namespace ctxguard::telemetry;
using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

CallEvent paginated_call() {
  CallEvent event;
  event.time = *parse_time("2026-11-22T10:04:05.123Z");
  event.id = 7;
  event.kind = CallKind::kCall;
  event.tool = "list_bookings";
  event.client = "claude-code";
  event.limit = "chars";
  event.stages = {"compact", "paginate"};
  event.outcome = outcome_of(event.kind, event.stages);
  event.budget = 4000;
  event.original_tokens = 52011;
  event.final_tokens = 3871;
  event.original_bytes = 180233;
  event.final_bytes = 14020;
  event.items_total = 500;
  event.items_shown = 41;
  event.fill_pct = 96.784;
  event.over_budget = true;
  event.proxy_latency = 1234567ns;
  event.server_latency = 45600us;
  return event;
}

}  // namespace

TEST_CASE("call_event: a record is one JSON line with the seeds' fields and no payload") {
  const std::string line = to_json_line(paginated_call());
  REQUIRE(line.find('\n') == std::string::npos);
  const json::object object = json::parse(line).as_object();
  CHECK(object.at("time") == "2026-11-22T10:04:05.123Z");
  CHECK(object.at("id") == 7);
  CHECK(object.at("kind") == "call");
  CHECK(object.at("client") == "claude-code");
  CHECK(object.at("limit") == "chars");
  CHECK(object.at("mode") == "enforce");
  CHECK(object.at("outcome") == "paginated");
  CHECK(object.at("original_tokens") == 52011);
  CHECK(object.at("final_tokens") == 3871);
  CHECK(object.at("reduction_pct").as_double() == Approx(92.56));
  CHECK(object.at("fill_pct").as_double() == 96.78);
  CHECK(object.at("over_budget") == true);
  CHECK(object.at("pagination_used") == true);
  CHECK(object.at("summarization_used") == false);
  CHECK(object.at("chunking_used") == false);
  CHECK(object.at("compaction_used") == true);
  CHECK(object.at("proxy_ms").as_double() == Approx(1.235));
  CHECK(object.at("server_ms").as_double() == Approx(45.6));
  CHECK(object.if_contains("error") == nullptr);
}

TEST_CASE("call_event: a written record reads back equal") {
  const CallEvent event = paginated_call();
  auto back = parse_call_event(to_json_line(event));
  REQUIRE(back.has_value());
  CHECK(back->time == std::chrono::floor<std::chrono::milliseconds>(event.time));
  CHECK(back->id == event.id);
  CHECK(back->kind == event.kind);
  CHECK(back->tool == event.tool);
  CHECK(back->client == "claude-code");
  CHECK(back->limit == "chars");
  CHECK(back->outcome == Outcome::kPaginated);
  CHECK(back->stages == event.stages);
  CHECK(back->budget == 4000);
  CHECK(back->original_tokens == event.original_tokens);
  CHECK(back->final_tokens == event.final_tokens);
  CHECK(back->original_bytes == event.original_bytes);
  CHECK(back->final_bytes == event.final_bytes);
  CHECK(back->items_total == 500);
  CHECK(back->items_shown == 41);
  CHECK(back->fill_pct == 96.78);
  CHECK(back->over_budget);
  CHECK(back->proxy_latency == 1235us);
  REQUIRE(back->server_latency.has_value());
  CHECK(*back->server_latency == 45600us);
}

TEST_CASE("call_event: a failed fetch keeps its reason and has no server time") {
  CallEvent event;
  event.time = *parse_time("2026-01-02");
  event.id = "req-1";
  event.kind = CallKind::kFetch;
  event.tool = "ctxguard_fetch";
  event.stages = {"fetch-error"};
  event.outcome = outcome_of(event.kind, event.stages);
  event.error = "expired";
  const std::string line = to_json_line(event);
  CHECK(line.find("server_ms") == std::string::npos);
  CHECK(line.find("client") == std::string::npos);  // a client that gave no name
  CHECK(line.find("limit") == std::string::npos);   // nothing rewritten
  CHECK(line.find("fill_pct") == std::string::npos);
  auto back = parse_call_event(line);
  REQUIRE(back.has_value());
  CHECK(back->outcome == Outcome::kFetchFailed);
  CHECK(back->error == "expired");
  CHECK(back->id == "req-1");
  CHECK_FALSE(back->server_latency.has_value());
}

TEST_CASE("call_event: the most telling stage names the outcome") {
  CHECK(outcome_of(CallKind::kCall, {}) == Outcome::kPassthrough);
  CHECK(outcome_of(CallKind::kCall, {"compact"}) == Outcome::kCompacted);
  CHECK(outcome_of(CallKind::kCall, {"compact", "tables"}) == Outcome::kCompacted);
  CHECK(outcome_of(CallKind::kCall, {"compact", "hard-cap"}) == Outcome::kSummarized);
  CHECK(outcome_of(CallKind::kCall, {"summarize", "project"}) == Outcome::kSummarized);
  CHECK(outcome_of(CallKind::kCall, {"compact", "paginate", "summarize"}) == Outcome::kPaginated);
  CHECK(outcome_of(CallKind::kResource, {"chunk"}) == Outcome::kChunked);
  CHECK(outcome_of(CallKind::kFetch, {"fetch"}) == Outcome::kFetched);
  CHECK(outcome_of(CallKind::kFetch, {"fetch-error"}) == Outcome::kFetchFailed);
  for (const Outcome outcome : kAllOutcomes) CHECK(parse_outcome(to_string(outcome)) == outcome);
}

TEST_CASE("call_event: lines that are not records are refused with a reason") {
  CHECK(parse_call_event("not json").error() == ctxguard::Error::kInvalidJson);
  CHECK(parse_call_event("[1,2]").error() == ctxguard::Error::kInvalidRecord);
  CHECK(parse_call_event(R"({"time":"2026-11-22T10:00:00Z","kind":"call","tool":"t"})").error() ==
        ctxguard::Error::kInvalidRecord);  // no outcome
  CHECK(parse_call_event(R"({"time":"yesterday","kind":"call","tool":"t","outcome":"passthrough"})")
            .error() == ctxguard::Error::kInvalidRecord);
  CHECK(parse_call_event(
            R"({"time":"2026-11-22T10:00:00Z","kind":"call","tool":"t","outcome":"odd"})")
            .error() == ctxguard::Error::kInvalidRecord);
  CHECK(parse_call_event(R"({"time":"2026-11-22T10:00:00Z","kind":"call","tool":"t",)"
                         R"("outcome":"paginated","fill_pct":"full"})")
            .error() == ctxguard::Error::kInvalidRecord);
  CHECK(parse_call_event(R"({"time":"2026-11-22T10:00:00Z","kind":"call","tool":"t",)"
                         R"("outcome":"passthrough","final_tokens":-3})")
            .error() == ctxguard::Error::kInvalidRecord);
  // The minimum a hand-written record needs; unknown fields are ignored.
  auto minimal = parse_call_event(R"({"time":"2026-11-22T10:00:00+01:00","kind":"call",)"
                                  R"("tool":"t","outcome":"passthrough","future_field":[1]})");
  REQUIRE(minimal.has_value());
  CHECK(format_time(minimal->time) == "2026-11-22T09:00:00.000Z");
}

TEST_CASE("call_event: times are RFC 3339 in UTC with milliseconds") {
  CHECK(format_time(std::chrono::system_clock::time_point{}) == "1970-01-01T00:00:00.000Z");
  const auto time = parse_time("2024-02-29T23:59:59.9876Z");
  REQUIRE(time.has_value());
  CHECK(format_time(*time) == "2024-02-29T23:59:59.987Z");
  CHECK_FALSE(parse_time("2023-02-29").has_value());
  CHECK_FALSE(parse_time("").has_value());
}
