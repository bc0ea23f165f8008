// The call records the interceptor gives telemetry: one per answered tools/call, chunked
// resources/read and ctxguard_fetch, with the sizes on the wire.

#include <catch2/catch.hpp>

#include "../config/profile_from.hpp"
#include "../cursor/altered_cursor.hpp"
#include "interceptor_session.hpp"

using namespace ctxguard::testing;
using ctxguard::config::testing::profile_from;
using ctxguard::telemetry::CallEvent;
using ctxguard::telemetry::CallKind;
using ctxguard::telemetry::Outcome;

TEST_CASE("interceptor events: a small answer is recorded as passed through, measured") {
  Session session;
  session.from_client(call(1, "list"));
  const std::string line = ctxguard::to_json(response(1, big_result(3)));
  REQUIRE(session.from_server_line(line).action == Verdict::Action::kForward);
  REQUIRE(session.events.size() == 1);
  const auto& event = session.events.front();
  CHECK(event.kind == CallKind::kCall);
  CHECK(event.tool == "list");
  CHECK(event.id == 1);
  CHECK(event.outcome == Outcome::kPassthrough);
  CHECK(event.original_tokens > 10);
  CHECK(event.final_tokens == event.original_tokens);
  CHECK(event.original_bytes == line.size());
  CHECK(event.final_bytes == line.size());
  CHECK(event.budget == 4000);
  CHECK_FALSE(event.over_budget);
  CHECK(event.server_latency.has_value());
  CHECK(event.stages.empty());
}

TEST_CASE("interceptor events: a paginated answer records its sizes before and after") {
  Session session;
  session.from_client(call("a-1", "list"));
  const std::string line = ctxguard::to_json(response("a-1", big_result(3000)));
  const Verdict verdict = session.from_server_line(line);
  REQUIRE(verdict.action == Verdict::Action::kSend);
  REQUIRE(session.events.size() == 1);
  const auto& event = session.events.front();
  CHECK(event.id == "a-1");
  CHECK(event.outcome == Outcome::kPaginated);
  CHECK(event.over_budget);
  CHECK(event.original_tokens > 4000);
  CHECK(event.final_tokens <= 4000);
  CHECK(event.original_bytes == line.size());
  CHECK(event.final_bytes == verdict.text.size());
  CHECK(event.items_total == 3000);
  CHECK(event.items_shown > 0);
  CHECK(event.items_shown < 3000);
  CHECK(event.reduction_percent() > 50.0);
}

TEST_CASE("interceptor events: a JSON-RPC error to a tool call is recorded as an error") {
  Session session;
  session.from_client(call(1, "list"));
  session.from_server(json::object{
      {"jsonrpc", "2.0"}, {"id", 1}, {"error", json::object{{"code", -32602}, {"message", "x"}}}});
  REQUIRE(session.events.size() == 1);
  CHECK(session.events.front().outcome == Outcome::kError);
  CHECK(session.events.front().tool == "list");
}

TEST_CASE("interceptor events: other traffic records nothing") {
  Session session;
  session.from_client(json::object{{"jsonrpc", "2.0"}, {"id", 2}, {"method", "ping"}});
  session.from_server(response(2, json::object{}));
  CHECK(session.events.empty());
}

TEST_CASE("interceptor events: a tools/list is one record, all its pages, in both directions") {
  Session session;
  const auto tool = [](const std::string& name, std::size_t words) {
    std::string description;
    for (std::size_t i = 0; i < words; ++i) description += "word ";
    return json::object{{"name", name},
                        {"description", description},
                        {"inputSchema", json::object{{"type", "object"}}},
                        {"outputSchema", json::object{{"type", "object"}}}};
  };
  session.from_client(json::object{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/list"}});
  session.from_server(
      response(1, json::object{{"tools", json::array{tool("small", 3), tool("big", 2000)}},
                               {"nextCursor", "p2"}}));
  CHECK(session.events.empty());  // the listing goes on
  session.from_client(json::object{{"jsonrpc", "2.0"},
                                   {"id", 2},
                                   {"method", "tools/list"},
                                   {"params", json::object{{"cursor", "p2"}}}});
  session.from_server(response(2, json::object{{"tools", json::array{tool("medium", 50)}}}));
  REQUIRE(session.events.size() == 1);
  const CallEvent& listing = session.events.front();
  CHECK(listing.kind == CallKind::kToolsList);
  CHECK(listing.tool == "tools/list");
  CHECK(listing.items_total == 4);  // the server's three and ctxguard_fetch
  // outputSchema is removed, ctxguard_fetch added: both sides are measured.
  CHECK(listing.original_tokens > 0);
  CHECK(listing.final_tokens != listing.original_tokens);
  REQUIRE(listing.largest_tools.size() == 4);
  CHECK(listing.largest_tools.front().name == "big");
  CHECK(listing.largest_tools.at(1).name == "ctxguard_fetch");  // ctxguard's own tool costs too
  CHECK(listing.budget == 10000);
  CHECK_FALSE(listing.over_budget);
}

TEST_CASE("interceptor events: fetches are recorded, failures with their reason") {
  Session session;
  session.from_client(call(7, "list"));
  const json::value first = json::parse(session.from_server(response(7, big_result(3000))).text);
  std::string cursor(inner_json(first).at("_ctxguard").at("nextCursor").as_string());
  session.events.clear();

  const Verdict page = session.from_client(call(8, "ctxguard_fetch", {{"cursor", cursor}}));
  REQUIRE(session.events.size() == 1);
  CHECK(session.events[0].kind == CallKind::kFetch);
  CHECK(session.events[0].tool == "ctxguard_fetch:list");
  CHECK(session.events[0].outcome == Outcome::kFetched);
  CHECK(session.events[0].final_bytes == page.text.size());
  CHECK_FALSE(session.events[0].server_latency.has_value());

  session.from_client(call(9, "ctxguard_fetch", {{"cursor", "garbage"}}));
  cursor = ctxguard::testing::altered_cursor(cursor, cursor.size() / 2);
  session.from_client(call(10, "ctxguard_fetch", {{"cursor", cursor}}));
  session.from_client(call(11, "ctxguard_fetch", {}));
  REQUIRE(session.events.size() == 4);
  CHECK(session.events[1].outcome == Outcome::kFetchFailed);
  CHECK(session.events[1].error == "malformed");
  CHECK(session.events[2].error == "forged");
  CHECK(session.events[3].error == "missing");
  CHECK(session.events[3].id == 11);
}

TEST_CASE("interceptor events: observe mode records what enforce would have sent") {
  Session session;
  session.interceptor.set_profile(profile_from("mode: observe\n"),
                                  std::chrono::steady_clock::now());
  session.from_client(call(1, "list"));
  const std::string line = ctxguard::to_json(response(1, big_result(3000)));
  REQUIRE(session.from_server_line(line).action == Verdict::Action::kForward);
  REQUIRE(session.events.size() == 1);
  const auto& event = session.events.front();
  CHECK(event.observed);
  CHECK(event.outcome == Outcome::kPaginated);
  CHECK(event.original_bytes == line.size());
  CHECK(event.final_bytes < line.size() / 4);
  CHECK(event.final_tokens <= 4000);
}

TEST_CASE("interceptor events: a task's result is recorded at tasks/result, not at creation") {
  Session session;
  json::object request = call(1, "research");
  request["params"].as_object()["task"] = json::object{{"ttl", 60000}};
  session.from_client(request);
  session.from_server(
      response(1, json::object{{"task", json::object{{"taskId", "t-9"}, {"status", "working"}}}}));
  CHECK(session.events.empty());
  session.from_client(json::object{{"jsonrpc", "2.0"},
                                   {"id", 2},
                                   {"method", "tasks/result"},
                                   {"params", json::object{{"taskId", "t-9"}}}});
  session.from_server(response(2, big_result(3000)));
  REQUIRE(session.events.size() == 1);
  CHECK(session.events.front().kind == CallKind::kTask);
  CHECK(session.events.front().tool == "research");
  CHECK(session.events.front().outcome == Outcome::kPaginated);
}

TEST_CASE("interceptor events: the budget reported is the tool's configured one") {
  Session session;
  session.interceptor.set_profile(
      profile_from("tokenBudget: 2000\nestimatorMargin: 20\ntools:\n  - match: big*\n    "
                   "tokenBudget: 8000\n"),
      std::chrono::steady_clock::now());
  session.from_client(call(1, "big_list"));
  session.from_server(response(1, big_result(3)));
  session.from_client(call(2, "other"));
  session.from_server(response(2, big_result(3)));
  REQUIRE(session.events.size() == 2);
  CHECK(session.events[0].budget == 8000);
  CHECK(session.events[1].budget == 2000);
}
