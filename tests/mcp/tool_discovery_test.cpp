#include <catch2/catch.hpp>

#include <string>

#include <boost/json.hpp>

#include "jsonrpc/message.hpp"
#include "mcp/tool_discovery.hpp"
#include "support/json_writer.hpp"

namespace json = boost::json;
using ctxguard::mcp::Era;
using ctxguard::mcp::ToolDiscovery;

namespace {

ctxguard::jsonrpc::Message message_of(const json::value& value) {
  return *ctxguard::jsonrpc::parse_message(ctxguard::to_json(value));
}

json::object page(const json::value& id, json::array tools, const char* next = nullptr) {
  json::object result{{"tools", std::move(tools)}};
  if (next != nullptr) result["nextCursor"] = next;
  return json::object{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

json::object init_response() {
  return json::object{{"jsonrpc", "2.0"}, {"id", 0}, {"result", json::object{}}};
}

}  // namespace

TEST_CASE("discovery, legacy: initialized first, then tools/list page by page") {
  ToolDiscovery discovery;
  const auto lines =
      discovery.start(init_response(), ToolDiscovery::Held::kServerResult, Era::kLegacy, nullptr);
  REQUIRE(lines.size() == 2);
  CHECK(json::parse(lines[0]) ==
        json::parse(R"({"jsonrpc":"2.0","method":"notifications/initialized"})"));
  const json::value first = json::parse(lines[1]);
  CHECK(first.at("method") == "tools/list");
  CHECK(first.at("id") == "ctxguard-tools-1");

  // Not ours: a request from the server, a response with another id.
  CHECK_FALSE(discovery
                  .on_server_message(
                      message_of(json::parse(R"({"jsonrpc":"2.0","id":0,"method":"roots/list"})")))
                  .ours);
  CHECK_FALSE(discovery.on_server_message(message_of(page(7, {}))).ours);

  const auto step = discovery.on_server_message(
      message_of(page("ctxguard-tools-1", json::array{json::object{{"name", "a"}}}, "p2")));
  CHECK(step.ours);
  CHECK_FALSE(step.finished);
  REQUIRE(step.next_page);
  const json::value second = json::parse(*step.next_page);
  CHECK(second.at("id") == "ctxguard-tools-2");
  CHECK(second.at("params").at("cursor") == "p2");

  discovery.hold("held line");
  const auto last = discovery.on_server_message(
      message_of(page("ctxguard-tools-2", json::array{json::object{{"name", "b"}}})));
  CHECK(last.finished);
  const auto outcome = discovery.finish();
  CHECK(outcome.complete);
  CHECK(outcome.tools.size() == 2);
  CHECK(outcome.held == std::vector<std::string>{"held line"});
  CHECK(outcome.message == json::value(init_response()));
  CHECK(discovery.phase() == ToolDiscovery::Phase::kDone);

  // The client's own notifications/initialized is dropped, once.
  CHECK_FALSE(discovery.drops_client_notification("notifications/cancelled"));
  CHECK(discovery.drops_client_notification("notifications/initialized"));
  CHECK_FALSE(discovery.drops_client_notification("notifications/initialized"));
}

TEST_CASE("discovery, modern: no notification, the request carries the client's _meta") {
  ToolDiscovery discovery;
  const json::object meta{{"io.modelcontextprotocol/protocolVersion", "2026-07-28"}};
  const auto lines =
      discovery.start(init_response(), ToolDiscovery::Held::kServerResult, Era::kModern, &meta);
  REQUIRE(lines.size() == 1);
  CHECK(json::parse(lines[0]).at("params").at("_meta") == meta);
  CHECK_FALSE(discovery.drops_client_notification("notifications/initialized"));
}

TEST_CASE("discovery: an error ends it incomplete; a late answer is still ctxguard's") {
  ToolDiscovery discovery;
  discovery.start(init_response(), ToolDiscovery::Held::kServerResult, Era::kLegacy, nullptr);
  const auto error = discovery.on_server_message(message_of(json::parse(
      R"({"jsonrpc":"2.0","id":"ctxguard-tools-1","error":{"code":-32601,"message":"no"}})")));
  CHECK(error.finished);
  CHECK_FALSE(discovery.finish().complete);

  ToolDiscovery slow;
  slow.start(init_response(), ToolDiscovery::Held::kServerResult, Era::kLegacy, nullptr);
  CHECK_FALSE(slow.finish().complete);  // the deadline
  const auto late = slow.on_server_message(message_of(page("ctxguard-tools-1", {})));
  CHECK(late.ours);
  CHECK_FALSE(late.finished);
  CHECK_FALSE(slow.on_server_message(message_of(page("ctxguard-tools-1", {}))).ours);
}
