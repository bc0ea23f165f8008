#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include "mcp/protocol_state.hpp"

namespace json = boost::json;
using ctxguard::mcp::Era;
using ctxguard::mcp::ProtocolState;

namespace {

const json::object kServerInfo{{"name", "v2-server"}, {"version", "1.2.3"}};

json::object modern_request(json::value id, std::string_view method, json::object params = {}) {
  params["_meta"] = json::object{
      {"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
      {"io.modelcontextprotocol/clientInfo", json::object{{"name", "claude"}, {"version", "9"}}},
      {"io.modelcontextprotocol/clientCapabilities", json::object{}}};
  return json::object{
      {"jsonrpc", "2.0"}, {"id", std::move(id)}, {"method", method}, {"params", std::move(params)}};
}

json::object legacy_request(json::value id, std::string_view method, json::object params = {}) {
  return json::object{
      {"jsonrpc", "2.0"}, {"id", std::move(id)}, {"method", method}, {"params", std::move(params)}};
}

json::object listen_request(json::value id, bool tools) {
  return modern_request(
      std::move(id), "subscriptions/listen",
      json::object{{"notifications",
                    json::object{{"toolsListChanged", tools}, {"resourcesListChanged", true}}}});
}

json::object acknowledgement(json::value id) {
  return json::object{
      {"jsonrpc", "2.0"},
      {"method", "notifications/subscriptions/acknowledged"},
      {"params",
       json::object{{"notifications", json::object{{"toolsListChanged", true}}},
                    {"_meta", json::object{{"io.modelcontextprotocol/subscriptionId", id}}}}}};
}

}  // namespace

TEST_CASE("protocol state: a request's era is the revision in its _meta") {
  ProtocolState state;
  REQUIRE(state.on_client_request(modern_request(1, "tools/list"), "tools/list") == Era::kModern);
  REQUIRE(state.session_era() == Era::kModern);
  REQUIRE(state.on_client_request(legacy_request(2, "tools/list"), "tools/list") == Era::kLegacy);
  json::object older = modern_request(3, "tools/list");
  older["params"].as_object()["_meta"].as_object()["io.modelcontextprotocol/protocolVersion"] =
      "2025-11-25";
  REQUIRE(state.on_client_request(older, "tools/list") == Era::kLegacy);
  json::object later = modern_request(4, "tools/list");
  later["params"].as_object()["_meta"].as_object()["io.modelcontextprotocol/protocolVersion"] =
      "2027-01-01";
  REQUIRE(state.on_client_request(later, "tools/list") == Era::kModern);
}

TEST_CASE("protocol state: without _meta a request has the era initialize negotiated") {
  ProtocolState state;
  REQUIRE(state.on_client_request(legacy_request(0, "initialize"), "initialize") == Era::kLegacy);
  state.on_server_result(
      0, json::object{{"protocolVersion", "2025-11-25"}, {"serverInfo", kServerInfo}},
      "initialize");
  REQUIRE(state.on_client_request(legacy_request(1, "tools/call"), "tools/call") == Era::kLegacy);
  REQUIRE(state.server_info() == kServerInfo);

  ProtocolState odd;  // an initialize that settles on a modern revision
  odd.on_server_result(0, json::object{{"protocolVersion", "2026-07-28"}}, "initialize");
  REQUIRE(odd.on_client_request(legacy_request(1, "tools/call"), "tools/call") == Era::kModern);
}

TEST_CASE("protocol state: the identities come from initialize, _meta and server/discover") {
  ProtocolState state;
  REQUIRE(state.client_info().is_null());
  REQUIRE(state.server_info().is_null());
  state.on_client_request(
      legacy_request(0, "initialize",
                     json::object{{"clientInfo", json::object{{"name", "old"}, {"version", "1"}}}}),
      "initialize");
  REQUIRE(state.client_info().at("name") == "old");
  state.on_client_request(modern_request(1, "server/discover"), "server/discover");
  REQUIRE(state.client_info().at("name") == "claude");  // the latest wins
  state.on_server_result(
      1,
      json::object{{"supportedVersions", json::array{"2026-07-28"}},
                   {"resultType", "complete"},
                   {"_meta", json::object{{"io.modelcontextprotocol/serverInfo", kServerInfo}}}},
      "server/discover");
  REQUIRE(state.server_info() == kServerInfo);
  // Any result's _meta updates it; a result without one leaves it.
  state.on_server_result(2, json::object{{"content", json::array{}}}, "tools/call");
  REQUIRE(state.server_info() == kServerInfo);
}

TEST_CASE("protocol state: the client's name is its clientInfo's, when it is a string") {
  ProtocolState state;
  REQUIRE(state.client_name().empty());
  state.on_client_request(
      legacy_request(0, "initialize",
                     json::object{{"clientInfo", json::object{{"name", "claude-code"}}}}),
      "initialize");
  REQUIRE(state.client_name() == "claude-code");
  state.on_client_request(modern_request(1, "tools/list"), "tools/list");
  REQUIRE(state.client_name() == "claude");
  json::object odd = modern_request(2, "tools/list");
  odd["params"].as_object()["_meta"].as_object()["io.modelcontextprotocol/clientInfo"] =
      json::object{{"name", 7}};
  state.on_client_request(odd, "tools/list");
  REQUIRE(state.client_name().empty());
}

TEST_CASE("protocol state: --client names a client that gives no name, never one that does") {
  ProtocolState state;
  state.assume_client_name("codex-mcp-client");
  REQUIRE(state.client_name() == "codex-mcp-client");
  state.on_client_request(
      legacy_request(0, "initialize", json::object{{"clientInfo", json::object{}}}), "initialize");
  REQUIRE(state.client_name() == "codex-mcp-client");
  state.on_client_request(
      legacy_request(1, "initialize",
                     json::object{{"clientInfo", json::object{{"name", "claude-code"}}}}),
      "initialize");
  REQUIRE(state.client_name() == "claude-code");
}

TEST_CASE("protocol state: ctxguard's own results carry resultType and serverInfo when modern") {
  ProtocolState state;
  json::object legacy{{"content", json::array{}}};
  state.stamp_own_result(legacy, Era::kLegacy);
  REQUIRE(legacy == json::object{{"content", json::array{}}});

  json::object unknown_server{{"content", json::array{}}};
  state.stamp_own_result(unknown_server, Era::kModern);
  REQUIRE(unknown_server.at("resultType") == "complete");
  REQUIRE_FALSE(unknown_server.contains("_meta"));  // nothing known to say

  state.on_server_result(
      1, json::object{{"_meta", json::object{{"io.modelcontextprotocol/serverInfo", kServerInfo}}}},
      "tools/list");
  json::object modern{{"content", json::array{}}, {"isError", true}};
  state.stamp_own_result(modern, Era::kModern);
  REQUIRE(modern.at("resultType") == "complete");
  REQUIRE(modern.at("_meta").at("io.modelcontextprotocol/serverInfo") == kServerInfo);
  REQUIRE(modern.at("isError") == true);
}

TEST_CASE("protocol state: a legacy session hears of tool list changes unsolicited") {
  ProtocolState state;
  REQUIRE(
      state.tools_list_changed() ==
      std::vector<std::string>{R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})"});
}

TEST_CASE("protocol state: a modern session hears of them only on acknowledged listen streams") {
  ProtocolState state;
  state.on_client_request(modern_request(1, "tools/list"), "tools/list");
  REQUIRE(state.tools_list_changed().empty());  // no stream: never unsolicited

  state.on_client_request(listen_request("listen-1", true), "subscriptions/listen");
  state.on_client_request(listen_request(7, false), "subscriptions/listen");
  REQUIRE(state.listen_streams() == 2);
  REQUIRE(state.tools_list_changed().empty());  // not acknowledged yet

  state.on_server_notification(acknowledgement("listen-1"),
                               "notifications/subscriptions/acknowledged");
  state.on_server_notification(acknowledgement(7), "notifications/subscriptions/acknowledged");
  const std::vector<std::string> notices = state.tools_list_changed();
  REQUIRE(notices.size() == 1);  // stream 7 did not ask for tool list changes
  const json::value notice = json::parse(notices.front());
  REQUIRE(notice.at("method") == "notifications/tools/list_changed");
  REQUIRE(notice.at("params").at("_meta").at("io.modelcontextprotocol/subscriptionId") ==
          "listen-1");
}

TEST_CASE("protocol state: a listen stream ends with its answer or its cancellation") {
  ProtocolState state;
  state.on_client_request(listen_request(1, true), "subscriptions/listen");
  state.on_client_request(listen_request(2, true), "subscriptions/listen");
  state.on_server_notification(acknowledgement(1), "notifications/subscriptions/acknowledged");
  state.on_server_notification(acknowledgement(2), "notifications/subscriptions/acknowledged");
  REQUIRE(state.tools_list_changed().size() == 2);

  state.on_server_result(1, json::object{{"resultType", "complete"}}, "subscriptions/listen");
  REQUIRE(state.tools_list_changed().size() == 1);
  state.on_client_notification(json::object{{"jsonrpc", "2.0"},
                                            {"method", "notifications/cancelled"},
                                            {"params", json::object{{"requestId", 2}}}},
                               "notifications/cancelled");
  REQUIRE(state.listen_streams() == 0);
  REQUIRE(state.tools_list_changed().empty());
}

TEST_CASE("protocol state: ids keep their JSON type and the streams are bounded") {
  ProtocolState state;
  state.on_client_request(listen_request(1, true), "subscriptions/listen");
  state.on_server_notification(acknowledgement("1"), "notifications/subscriptions/acknowledged");
  REQUIRE(state.tools_list_changed().empty());  // "1" is not 1

  for (int id = 0; id < 5000; ++id) {
    state.on_client_request(listen_request(id, true), "subscriptions/listen");
  }
  REQUIRE(state.listen_streams() == 1024);
}

TEST_CASE("protocol state: result types") {
  REQUIRE(ctxguard::mcp::result_type(json::object{}).empty());
  REQUIRE(ctxguard::mcp::result_type(json::object{{"resultType", "input_required"}}) ==
          "input_required");
  REQUIRE(ctxguard::mcp::result_type(json::object{{"resultType", 3}}).empty());
  REQUIRE(ctxguard::mcp::era_of_revision("2025-06-18") == Era::kLegacy);
  REQUIRE(ctxguard::mcp::era_of_revision("2026-07-28") == Era::kModern);
}
