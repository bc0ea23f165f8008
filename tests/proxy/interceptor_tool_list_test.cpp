// The tool list modes through the Interceptor: compact's own listing before the instructions go
// out, and lazy's search and call tools (docs/protocol.md 4.2).

#include <catch2/catch.hpp>

#include <string>

#include "../config/profile_from.hpp"
#include "interceptor_session.hpp"

using namespace ctxguard::testing;
using ctxguard::config::testing::profile_from;

namespace {

const std::string kShared = "Every call is logged for audit, with its arguments and its caller.";

json::array tools_with_guidance() {
  json::array tools;
  for (const char* name : {"alpha", "beta", "gamma"}) {
    tools.push_back(json::object{{"name", name},
                                 {"description", std::string("Does ") + name + ". " + kShared},
                                 {"inputSchema", json::object{{"type", "object"}}}});
  }
  return tools;
}

json::object request(json::value id, const char* method) {
  return json::object{{"jsonrpc", "2.0"}, {"id", std::move(id)}, {"method", method}};
}

void use_profile(Session& session, const char* yaml) {
  session.interceptor.set_profile(profile_from(yaml), std::chrono::steady_clock::now());
}

}  // namespace

TEST_CASE("compact: the initialize result waits for ctxguard's listing, then says the guidance") {
  Session session;
  use_profile(session, "toolList: compact\n");
  session.from_client(request(0, "initialize"));
  const Verdict held = session.from_server(
      response(0, json::object{{"capabilities", json::object{{"tools", json::object{}}}}}));
  CHECK(held.action == Verdict::Action::kDrop);
  CHECK(session.interceptor.deadline().has_value());
  REQUIRE(held.to_sender.size() == 2);
  CHECK(json::parse(held.to_sender[0]).at("method") == "notifications/initialized");
  CHECK(json::parse(held.to_sender[1]).at("method") == "tools/list");

  // The server asks the client something meanwhile: held, in order.
  const Verdict roots = session.from_server(request(0, "roots/list"));
  CHECK(roots.action == Verdict::Action::kDrop);

  const Verdict released = session.from_server(
      response("ctxguard-tools-1", json::object{{"tools", tools_with_guidance()}}));
  REQUIRE(released.action == Verdict::Action::kSend);
  const std::string instructions(
      json::parse(released.text).at("result").at("instructions").as_string());
  CHECK(instructions.find(kShared) != std::string::npos);
  REQUIRE(released.to_destination.size() == 1);
  CHECK(json::parse(released.to_destination[0]).at("method") == "roots/list");

  // The client's own notifications/initialized: the server had one.
  const Verdict initialized = session.from_client(
      json::object{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
  CHECK(initialized.action == Verdict::Action::kDrop);

  // The client's listing: the guidance is no longer in each description.
  session.from_client(request(1, "tools/list"));
  const Verdict list =
      session.from_server(response(1, json::object{{"tools", tools_with_guidance()}}));
  REQUIRE(list.action == Verdict::Action::kSend);
  const auto tools = json::parse(list.text).at("result").at("tools").as_array();
  CHECK(tools.at(0).at("description") == "Does alpha.");
  CHECK(tools.back().at("name") == "ctxguard_fetch");
}

TEST_CASE("compact: a server without tools, or full mode, answers at once") {
  Session session;
  use_profile(session, "toolList: compact\n");
  session.from_client(request(0, "initialize"));
  const Verdict plain =
      session.from_server(response(0, json::object{{"capabilities", json::object{}}}));
  CHECK(plain.action == Verdict::Action::kSend);
  CHECK_FALSE(session.interceptor.deadline().has_value());
}

TEST_CASE("compact: when the listing never ends, its deadline releases what was held") {
  Session session;
  use_profile(session, "toolList: compact\n");
  session.from_client(request(0, "initialize"));
  session.from_server(
      response(0, json::object{{"capabilities", json::object{{"tools", json::object{}}}}}));
  session.from_server(json::object{{"jsonrpc", "2.0"}, {"method", "notifications/message"}});
  const auto deadline = session.interceptor.deadline();
  REQUIRE(deadline.has_value());
  const auto lines = session.interceptor.on_deadline(*deadline).to_client;
  REQUIRE(lines.size() == 2);
  CHECK(json::parse(lines[0]).at("id") == 0);
  CHECK(json::parse(lines[1]).at("method") == "notifications/message");
  CHECK_FALSE(session.interceptor.deadline().has_value());
  CHECK(session.interceptor.on_deadline(*deadline).to_client.empty());
  CHECK(session.interceptor.end_discovery(*deadline).to_client.empty());
  // Its answer, late, goes nowhere.
  CHECK(session.from_server(response("ctxguard-tools-1", json::object{{"tools", json::array{}}}))
            .action == Verdict::Action::kDrop);
}

TEST_CASE("lazy: the search answers from the listing, the call tool becomes the real call") {
  Session session;
  use_profile(session, "toolList: lazy\n");
  session.from_client(request(1, "tools/list"));
  const Verdict list =
      session.from_server(response(1, json::object{{"tools", tools_with_guidance()}}));
  const auto listed = json::parse(list.text).at("result").at("tools").as_array();
  CHECK(listed.size() == 3);
  CHECK(listed.at(0).at("name") == "ctxguard_search_tools");

  const Verdict found = session.from_client(call(2, "ctxguard_search_tools", {{"query", "beta"}}));
  REQUIRE(found.action == Verdict::Action::kReply);
  const json::value answer = inner_json(json::parse(found.text));
  CHECK(answer.at("tools").at(0).at("name") == "beta");

  const Verdict redirected = session.from_client(
      call(3, "ctxguard_call_tool", {{"name", "gamma"}, {"arguments", {{"x", 1}}}}));
  REQUIRE(redirected.action == Verdict::Action::kSend);
  const json::value sent = json::parse(redirected.text);
  CHECK(sent.at("params") == json::parse(R"({"name":"gamma","arguments":{"x":1}})"));
  session.from_server(response(3, big_result(3000)));
  REQUIRE_FALSE(session.events.empty());
  CHECK(session.events.back().tool == "gamma");
  CHECK(session.events.back().kind == ctxguard::telemetry::CallKind::kCall);

  const Verdict unknown = session.from_client(call(4, "ctxguard_call_tool", {{"name", "delta"}}));
  REQUIRE(unknown.action == Verdict::Action::kReply);
  CHECK(json::parse(unknown.text).at("result").at("isError") == true);
  const Verdict malformed = session.from_client(call(5, "ctxguard_call_tool", {{"arguments", 3}}));
  CHECK(json::parse(malformed.text).at("result").at("isError") == true);
}

TEST_CASE("lazy: a call before any listing goes to the server, which knows its tools") {
  Session session;
  use_profile(session, "toolList: lazy\n");
  const Verdict redirected = session.from_client(call(1, "ctxguard_call_tool", {{"name", "beta"}}));
  REQUIRE(redirected.action == Verdict::Action::kSend);
  CHECK(json::parse(redirected.text).at("params").at("name") == "beta");
}

TEST_CASE("ctxguard_fetch {tool}: a definition as the server sent it, in any mode") {
  Session session;
  session.from_client(request(1, "tools/list"));
  session.from_server(response(1, json::object{{"tools", tools_with_guidance()}}));
  const Verdict reply = session.from_client(call(2, "ctxguard_fetch", {{"tool", "alpha"}}));
  REQUIRE(reply.action == Verdict::Action::kReply);
  CHECK(inner_json(json::parse(reply.text)) == tools_with_guidance().at(0));
}

TEST_CASE("compact, modern: a process that saw no server/discover lists before the client") {
  Session session;
  use_profile(session, "toolList: compact\n");
  const json::object meta{{"io.modelcontextprotocol/protocolVersion", "2026-07-28"}};
  json::object list = request(1, "tools/list");
  list["params"] = json::object{{"_meta", meta}};
  const Verdict held = session.from_client(list);
  CHECK(held.action == Verdict::Action::kDrop);
  CHECK(session.interceptor.deadline().has_value());
  REQUIRE(held.to_destination.size() == 1);  // no notifications/initialized in this era
  const json::value own = json::parse(held.to_destination[0]);
  CHECK(own.at("params").at("_meta") == meta);

  const Verdict released = session.from_server(
      response("ctxguard-tools-1", json::object{{"tools", tools_with_guidance()}}));
  CHECK(released.action == Verdict::Action::kDrop);
  REQUIRE(released.to_sender.size() == 1);
  CHECK(json::parse(released.to_sender[0]) == json::value(list));

  // The client's listing, answered now, without the guidance the sibling's instructions said.
  const Verdict answer =
      session.from_server(response(1, json::object{{"tools", tools_with_guidance()}}));
  REQUIRE(answer.action == Verdict::Action::kSend);
  CHECK(json::parse(answer.text).at("result").at("tools").at(1).at("description") == "Does beta.");
}
