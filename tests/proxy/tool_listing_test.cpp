// ToolListing on its own: the listing's record over its pages, the relist decision, and compact
// mode's listing against its deadline, fed messages as the Interceptor hands them over.

#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "../config/profile_from.hpp"
#include "proxy/tool_listing.hpp"
#include "support/json_writer.hpp"

namespace {

namespace json = boost::json;
using ctxguard::config::ProfilePtr;
using ctxguard::config::testing::profile_from;
using ctxguard::proxy::Answer;
using ctxguard::proxy::LineContext;
using ctxguard::proxy::Route;
using ctxguard::proxy::ToolListing;
using ctxguard::proxy::Verdict;
using ctxguard::session::Direction;
using ctxguard::telemetry::CallEvent;
using Clock = std::chrono::steady_clock;

json::array tools(std::initializer_list<const char*> names) {
  json::array list;
  for (const char* name : names) {
    list.push_back(json::object{{"name", name},
                                {"description", std::string("Does ") + name + "."},
                                {"inputSchema", json::object{{"type", "object"}}},
                                {"outputSchema", json::object{{"type", "object"}}}});
  }
  return list;
}

// The bytes of a page's tools, each as minified JSON: what a listing's record adds up.
std::size_t tool_bytes(const json::object& page) {
  std::size_t bytes = 0;
  for (const json::value& tool : page.at("tools").as_array())
    bytes += ctxguard::to_json(tool).size();
  return bytes;
}

ctxguard::jsonrpc::Message message_of(const json::value& value) {
  auto parsed = ctxguard::jsonrpc::parse_message(ctxguard::to_json(value));
  REQUIRE(parsed.has_value());
  return std::move(*parsed);
}

struct Bench {
  ctxguard::proxy::Router router;
  ctxguard::mcp::ProtocolState protocol;
  ctxguard::proxy::CallRecords records{protocol};
  ToolListing listing{router, protocol, records};
  std::vector<CallEvent> events;
  Clock::time_point now = Clock::time_point{} + std::chrono::hours(1);

  Bench() {
    records.set_sink([this](CallEvent&& event) { events.push_back(std::move(event)); });
  }

  // `result`, the answer to a `method` request routed under `profile`, through `rewrite`.
  template <typename Rewrite>
  bool answer(const char* method, const ProfilePtr& profile, LineContext& line, Rewrite rewrite) {
    Route route;
    route.kind = ctxguard::jsonrpc::Kind::kResponse;
    route.method = method;
    route.context = profile;
    const json::value id = 1;
    return rewrite(Answer{route, id, *profile, line});
  }
};

}  // namespace

TEST_CASE("ToolListing: one record a listing, of all its pages as served and as sent") {
  Bench bench;
  const ProfilePtr profile = profile_from("toolListBudget: 10\n");
  LineContext line(bench.now, std::chrono::system_clock::now());
  json::object init{{"capabilities", json::object{{"tools", json::object{}}}}};
  bench.answer("initialize", profile, line, [&](const Answer& answer) {
    return bench.listing.rewrite_discovery_result(init, answer, profile);
  });
  REQUIRE(init.contains("instructions"));  // ctxguard's paragraph: it enforces budgets

  json::object first{{"tools", tools({"alpha", "beta"})}, {"nextCursor", "2"}};
  const std::size_t first_served = tool_bytes(first);
  CHECK(bench.answer("tools/list", profile, line, [&](const Answer& answer) {
    return bench.listing.rewrite_page(first, answer);
  }));
  CHECK(bench.events.empty());  // not before the last page
  CHECK_FALSE(first.at("tools").at(0).as_object().contains("outputSchema"));

  json::object last{{"tools", tools({"gamma"})}};
  const std::size_t last_served = tool_bytes(last);
  bench.answer("tools/list", profile, line,
               [&](const Answer& answer) { return bench.listing.rewrite_page(last, answer); });
  REQUIRE(bench.events.size() == 1);
  const CallEvent& record = bench.events.front();
  CHECK(record.kind == ctxguard::telemetry::CallKind::kToolsList);
  CHECK(record.items_total == 4);  // the server's three and ctxguard_fetch
  CHECK(record.original_bytes == first_served + last_served);
  CHECK(record.final_bytes == tool_bytes(first) + tool_bytes(last));
  CHECK(record.final_bytes > record.original_bytes);  // ctxguard_fetch outweighs the schemas
  REQUIRE(record.instructions_tokens.has_value());
  CHECK(*record.instructions_tokens > 0);
  CHECK(record.budget == 10);
  CHECK(record.over_budget);
}

TEST_CASE("ToolListing: a new configuration changes the list when what it shows changes") {
  Bench bench;
  const ProfilePtr capped = profile_from("hardCap: 8000\n");
  CHECK_FALSE(bench.listing.changes_listing(*profile_from("hardCap: 9000\n"), *capped));
  CHECK(bench.listing.changes_listing(*profile_from("toolList: compact\n"), *capped));
  // Claude Code's list holds each tool's hard cap.
  bench.protocol.assume_client_name("claude-code");
  CHECK(bench.listing.changes_listing(*profile_from("hardCap: 9000\n"), *capped));
}

TEST_CASE("ToolListing: compact mode holds the result until its listing ends or its deadline") {
  Bench bench;
  const ProfilePtr profile = profile_from("toolList: compact\n");
  LineContext line(bench.now, std::chrono::system_clock::now());
  json::object result{{"capabilities", json::object{{"tools", json::object{}}}}};
  CHECK_FALSE(bench.answer("initialize", profile, line, [&](const Answer& answer) {
    return bench.listing.rewrite_discovery_result(result, answer, profile);
  }));
  REQUIRE(line.discovery_start.has_value());
  CHECK_FALSE(bench.listing.deadline().has_value());

  ctxguard::jsonrpc::Message held =
      message_of(json::object{{"jsonrpc", "2.0"}, {"id", 0}, {"result", result}});
  const Verdict start = bench.listing.start_discovery(held, *line.discovery_start, bench.now);
  CHECK(start.action == Verdict::Action::kDrop);
  REQUIRE(start.to_sender.size() == 2);  // notifications/initialized, then ctxguard's tools/list
  CHECK(bench.listing.deadline() == bench.now + ToolListing::kDiscoveryDeadline);
  CHECK(bench.listing.holds_server_lines());
  bench.listing.hold(R"({"jsonrpc":"2.0","method":"notifications/message"})");

  // The server answers a page, then nothing more: the deadline lets the held lines go, in order.
  const Verdict page = *bench.listing.on_server_message(
      message_of(json::object{
          {"jsonrpc", "2.0"},
          {"id", "ctxguard-tools-1"},
          {"result", json::object{{"tools", tools({"alpha"})}, {"nextCursor", "p2"}}}}),
      bench.now);
  CHECK(page.action == Verdict::Action::kDrop);
  REQUIRE(page.to_sender.size() == 1);  // the next page's request
  const auto released = bench.listing.on_deadline(*bench.listing.deadline());
  REQUIRE(released.to_client.size() == 2);
  const json::value sent = json::parse(released.to_client[0]);
  CHECK(sent.at("id") == 0);
  CHECK(sent.at("result").as_object().contains("instructions"));
  CHECK(json::parse(released.to_client[1]).at("method") == "notifications/message");
  CHECK_FALSE(bench.listing.deadline().has_value());
  CHECK_FALSE(bench.listing.holds_server_lines());
  CHECK(bench.listing.on_deadline(bench.now).to_client.empty());
}

TEST_CASE("ToolListing: a modern client's held tools/list is routed when it goes on") {
  Bench bench;
  const ProfilePtr profile = profile_from("toolList: compact\n");
  const json::object request{{"jsonrpc", "2.0"}, {"id", 7}, {"method", "tools/list"}};
  ctxguard::jsonrpc::Message message = message_of(request);
  const auto held =
      bench.listing.hold_first_listing(message, ctxguard::mcp::Era::kModern, profile, bench.now);
  REQUIRE(held.has_value());
  REQUIRE(held->to_destination.size() == 1);  // ctxguard's own listing, to the server
  CHECK(bench.listing.deadline() == bench.now + ToolListing::kDiscoveryDeadline);
  CHECK_FALSE(bench.listing.holds_server_lines());  // the server's lines still reach the client
  CHECK_FALSE(bench.router.awaits_answer(Direction::kServerToClient, json::value(7)));

  const Verdict released = *bench.listing.on_server_message(
      message_of(json::object{{"jsonrpc", "2.0"},
                              {"id", "ctxguard-tools-1"},
                              {"result", json::object{{"tools", tools({"alpha", "beta"})}}}}),
      bench.now);
  REQUIRE(released.to_sender.size() == 1);
  CHECK(json::parse(released.to_sender[0]) == json::value(request));
  CHECK(bench.router.awaits_answer(Direction::kServerToClient, json::value(7)));
  CHECK_FALSE(bench.listing.deadline().has_value());
}
