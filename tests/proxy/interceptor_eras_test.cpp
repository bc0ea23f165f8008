// Both protocol eras through the interceptor: what ctxguard composes itself fits the era of the
// request it answers (docs/protocol.md, section 12), and only JSON-RPC from the server goes on.

#include <catch2/catch.hpp>

#include "interceptor_session.hpp"

using namespace ctxguard::testing;
using ctxguard::telemetry::CallKind;

namespace {

const json::object kServerInfo{{"name", "v2-server"}, {"version", "2.4.0"}};

json::object modern_meta() {
  return json::object{
      {"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
      {"io.modelcontextprotocol/clientInfo", json::object{{"name", "claude"}, {"version", "9"}}},
      {"io.modelcontextprotocol/clientCapabilities", json::object{}}};
}

// A request of the 2026-07-28 revision: its era in `params._meta`.
json::object modern(json::object request) {
  json::value& params = request["params"];
  if (!params.is_object()) params = json::object{};
  params.as_object()["_meta"] = modern_meta();
  return request;
}

json::object request(const json::value& id, std::string_view method, json::object params = {}) {
  return json::object{
      {"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}

json::object modern_result(json::object result) {
  result["resultType"] = "complete";
  result["_meta"] = json::object{{"io.modelcontextprotocol/serverInfo", kServerInfo}};
  return result;
}

json::object result_of(const Verdict& verdict) {
  return json::parse(verdict.text).at("result").as_object();
}

// The discovery a modern client opens with instead of initialize.
void discover(Session& session) {
  session.from_client(modern(request("probe", "server/discover")));
  session.from_server(response(
      "probe", modern_result(json::object{{"supportedVersions", json::array{"2026-07-28"}},
                                          {"capabilities", json::object{{"tools", json::object{}}}},
                                          {"ttlMs", 0},
                                          {"cacheScope", "private"}})));
}

json::value first_cursor(Session& session, json::value id, bool modern_era) {
  json::object call_request = call(id, "list");
  const Verdict first =
      session.from_client(modern_era ? modern(std::move(call_request)) : call_request);
  REQUIRE(first.action == Verdict::Action::kForward);
  json::object result = big_result(3000);
  const Verdict rewritten =
      session.from_server(response(id, modern_era ? modern_result(std::move(result)) : result));
  REQUIRE(rewritten.action == Verdict::Action::kSend);
  return inner_json(json::parse(rewritten.text)).at("_ctxguard").at("nextCursor");
}

}  // namespace

TEST_CASE("eras: a modern fetch answer carries resultType and the server's identity") {
  Session session;
  discover(session);
  const json::value cursor = first_cursor(session, 1, true);
  const Verdict reply =
      session.from_client(modern(call(2, "ctxguard_fetch", {{"cursor", cursor}})));
  REQUIRE(reply.action == Verdict::Action::kReply);
  const json::object result = result_of(reply);
  REQUIRE(result.at("resultType") == "complete");
  REQUIRE(result.at("_meta").at("io.modelcontextprotocol/serverInfo") == kServerInfo);
  REQUIRE(inner_json(json::parse(reply.text)).at("items").as_array().size() > 0);
}

TEST_CASE("eras: a modern refusal is a complete result too") {
  Session session;
  discover(session);
  const Verdict reply =
      session.from_client(modern(call(2, "ctxguard_fetch", {{"cursor", "AgHnot-a-cursor"}})));
  REQUIRE(reply.action == Verdict::Action::kReply);
  const json::object result = result_of(reply);
  REQUIRE(result.at("isError") == true);
  REQUIRE(result.at("resultType") == "complete");
  REQUIRE(result.at("_meta").at("io.modelcontextprotocol/serverInfo") == kServerInfo);
}

TEST_CASE("eras: a legacy fetch answer is as it always was") {
  Session session;
  session.from_client(request(0, "initialize", {{"protocolVersion", "2025-11-25"}}));
  session.from_server(
      response(0, json::object{{"protocolVersion", "2025-11-25"}, {"serverInfo", kServerInfo}}));
  const json::value cursor = first_cursor(session, 1, false);
  const Verdict reply = session.from_client(call(2, "ctxguard_fetch", {{"cursor", cursor}}));
  const json::object result = result_of(reply);
  REQUIRE_FALSE(result.contains("resultType"));
  REQUIRE_FALSE(result.contains("_meta"));
  REQUIRE(result.size() == 1);  // content alone
}

TEST_CASE("eras: a rewritten result keeps the server's resultType and _meta") {
  Session session;
  discover(session);
  session.from_client(modern(call(1, "list")));
  const Verdict rewritten = session.from_server(response(1, modern_result(big_result(3000))));
  REQUIRE(rewritten.action == Verdict::Action::kSend);
  const json::object result = result_of(rewritten);
  REQUIRE(result.at("resultType") == "complete");
  REQUIRE(result.at("_meta").at("io.modelcontextprotocol/serverInfo") == kServerInfo);
  REQUIRE(inner_json(json::parse(rewritten.text)).at("_ctxguard").at("hasMore") == true);
}

TEST_CASE("eras: server/discover gets the instructions without any initialize") {
  Session session;
  session.from_client(modern(request("probe", "server/discover")));
  const Verdict answer = session.from_server(
      response("probe", modern_result(json::object{{"supportedVersions", json::array{"2026-07-28"}},
                                                   {"capabilities", json::object{}},
                                                   {"ttlMs", 60000},
                                                   {"cacheScope", "public"}})));
  REQUIRE(answer.action == Verdict::Action::kSend);
  const json::object result = result_of(answer);
  REQUIRE(std::string_view(result.at("instructions").as_string()).find("ctxguard_fetch") !=
          std::string_view::npos);
  REQUIRE(result.at("ttlMs") == 60000);
  REQUIRE(result.at("cacheScope") == "public");
  REQUIRE(session.interceptor.protocol().client_info().at("name") == "claude");
}

TEST_CASE("eras: tools/list keeps ttlMs, cacheScope and the order, ctxguard_fetch last") {
  Session session;
  session.from_client(modern(request(1, "tools/list")));
  const Verdict list = session.from_server(response(
      1, modern_result(json::object{{"tools", json::array{json::object{{"name", "zeta"}},
                                                          json::object{{"name", "alpha"}}}},
                                    {"ttlMs", 30000},
                                    {"cacheScope", "private"}})));
  REQUIRE(list.action == Verdict::Action::kSend);
  const json::object result = result_of(list);
  REQUIRE(result.at("ttlMs") == 30000);
  REQUIRE(result.at("cacheScope") == "private");
  REQUIRE(result.at("resultType") == "complete");
  const json::array& tools = result.at("tools").as_array();
  REQUIRE(tools.size() == 3);
  REQUIRE(tools[0].at("name") == "zeta");
  REQUIRE(tools[1].at("name") == "alpha");
  REQUIRE(tools[2].at("name") == "ctxguard_fetch");
}

TEST_CASE("eras: an input_required result is neither shortened nor counted") {
  Session session;
  session.from_client(modern(call(1, "book")));
  json::object interim = big_result(3000);  // far over the budget
  interim["resultType"] = "input_required";
  interim["inputRequests"] =
      json::object{{"confirm", json::object{{"method", "elicitation/create"},
                                            {"params", json::object{{"message", "Book it?"}}}}}};
  interim["requestState"] = "opaque";
  REQUIRE(session.from_server(response(1, interim)).action == Verdict::Action::kForward);
  REQUIRE(session.events.empty());

  // The retry, with the input, is a call like any other.
  json::object retry = modern(call(2, "book"));
  retry["params"].as_object()["inputResponses"] =
      json::object{{"confirm", json::object{{"action", "accept"}}}};
  session.from_client(retry);
  REQUIRE(session.from_server(response(2, modern_result(big_result(3000)))).action ==
          Verdict::Action::kSend);
  REQUIRE(session.events.size() == 1);
  REQUIRE(session.events.front().kind == CallKind::kCall);
}

TEST_CASE("eras: a task of the tasks extension is rewritten when tasks/get completes it") {
  Session session;
  session.from_client(modern(call(1, "research")));
  const json::object created{{"resultType", "task"},
                             {"taskId", "t-7"},
                             {"status", "working"},
                             {"createdAt", "2026-11-26T10:00:00Z"},
                             {"lastUpdatedAt", "2026-11-26T10:00:00Z"},
                             {"ttlMs", 60000}};
  REQUIRE(session.from_server(response(1, created)).action == Verdict::Action::kForward);
  REQUIRE(session.events.empty());  // the call goes on

  session.from_client(modern(request(2, "tasks/get", {{"taskId", "t-7"}})));
  json::object working = created;
  working["resultType"] = "complete";
  REQUIRE(session.from_server(response(2, working)).action == Verdict::Action::kForward);

  session.from_client(modern(request(3, "tasks/get", {{"taskId", "t-7"}})));
  json::object completed = working;
  completed["status"] = "completed";
  completed["result"] = modern_result(big_result(3000));
  const Verdict done = session.from_server(response(3, completed));
  REQUIRE(done.action == Verdict::Action::kSend);
  const json::value message = json::parse(done.text);
  const json::object& state = message.at("result").as_object();
  REQUIRE(state.at("taskId") == "t-7");
  REQUIRE(state.at("status") == "completed");
  REQUIRE(state.at("resultType") == "complete");
  const json::value page = answer_json(state.at("result"));
  REQUIRE(page.at("_ctxguard").at("totalCount") == 3000);
  REQUIRE(session.events.size() == 1);
  REQUIRE(session.events.front().kind == CallKind::kTask);
  REQUIRE(session.events.front().tool == "research");

  // Its cursor works like any other.
  const Verdict fetched = session.from_client(
      modern(call(4, "ctxguard_fetch", {{"cursor", page.at("_ctxguard").at("nextCursor")}})));
  REQUIRE(fetched.action == Verdict::Action::kReply);
  REQUIRE(json::parse(fetched.text).at("result").at("resultType") == "complete");
}

TEST_CASE("eras: tasks/update and a failed task pass unchanged") {
  Session session;
  session.from_client(modern(request(1, "tasks/update", {{"taskId", "t-1"}})));
  REQUIRE(session.from_server(response(1, json::object{{"resultType", "complete"}})).action ==
          Verdict::Action::kForward);
  session.from_client(modern(request(2, "tasks/get", {{"taskId", "t-1"}})));
  REQUIRE(session
              .from_server(response(
                  2, json::object{{"resultType", "complete"},
                                  {"taskId", "t-1"},
                                  {"status", "failed"},
                                  {"error", json::object{{"code", -32603}, {"message", "x"}}}}))
              .action == Verdict::Action::kForward);
  REQUIRE(session.events.empty());
}

TEST_CASE("eras: ctxguard's tool list notice follows the session's era") {
  Session legacy;
  legacy.from_client(call(1, "list"));
  REQUIRE(legacy.interceptor.tools_list_changed().size() == 1);

  Session session;
  discover(session);
  REQUIRE(session.interceptor.tools_list_changed().empty());
  json::object listen = modern(request("listen-1", "subscriptions/listen"));
  listen["params"].as_object()["notifications"] = json::object{{"toolsListChanged", true}};
  REQUIRE(session.from_client(listen).action == Verdict::Action::kForward);
  REQUIRE(
      session
          .from_server(json::object{
              {"jsonrpc", "2.0"},
              {"method", "notifications/subscriptions/acknowledged"},
              {"params", json::object{{"notifications", json::object{{"toolsListChanged", true}}},
                                      {"_meta", json::object{{"io.modelcontextprotocol/"
                                                              "subscriptionId",
                                                              "listen-1"}}}}}})
          .action == Verdict::Action::kForward);
  const std::vector<std::string> notices = session.interceptor.tools_list_changed();
  REQUIRE(notices.size() == 1);
  REQUIRE(json::parse(notices.front())
              .at("params")
              .at("_meta")
              .at("io.modelcontextprotocol/subscriptionId") == "listen-1");
}

TEST_CASE("eras: a line from the server that is not JSON-RPC is dropped and counted") {
  Session session;
  REQUIRE(session.from_server_line("Server v1.2 listening on stdio").action ==
          Verdict::Action::kDrop);
  REQUIRE(session.from_server_line(R"({"hello":"world"})").action == Verdict::Action::kDrop);
  REQUIRE(session.from_server_line("[1,2,3]").action == Verdict::Action::kDrop);
  REQUIRE(session.from_server_line(R"({"jsonrpc":"2.0","id":4,"result":{"cont)").action ==
          Verdict::Action::kDrop);
  REQUIRE(session.interceptor.non_protocol_lines_dropped() == 4);
  // A notification and a response still pass, and the client's lines are the server's business.
  REQUIRE(
      session.from_server_line(R"({"jsonrpc":"2.0","method":"notifications/progress"})").action ==
      Verdict::Action::kForward);
  REQUIRE(session.interceptor
              .on_line(Direction::kClientToServer, "not json", std::chrono::steady_clock::now(),
                       std::chrono::system_clock::now())
              .action == Verdict::Action::kForward);
  REQUIRE(session.interceptor.non_protocol_lines_dropped() == 4);
}

TEST_CASE("eras: a structuredContent that is an array is paginated as a part of its own") {
  // 2026-07-28 allows any JSON value there.
  Session session;
  session.from_client(modern(call(1, "list")));
  json::array rows;
  for (int i = 0; i < 3000; ++i) rows.push_back(json::object{{"id", i}, {"name", "row"}});
  json::object result{
      {"content", json::array{json::object{{"type", "text"}, {"text", "3000 rows."}}}},
      {"structuredContent", rows}};
  const Verdict rewritten = session.from_server(response(1, modern_result(std::move(result))));
  REQUIRE(rewritten.action == Verdict::Action::kSend);
  const json::object out = result_of(rewritten);
  // The way on first (from structuredContent's cut), then the text as it came.
  REQUIRE(out.at("content").at(0).at("text").as_string().starts_with("ctxguard: "));
  REQUIRE(out.at("content").at(1).at("text") == "3000 rows.");
  const json::object& structured = out.at("structuredContent").as_object();
  REQUIRE(structured.at("_ctxguard").at("wrapped") == true);
  REQUIRE(structured.at("_ctxguard").at("totalCount") == 3000);
  REQUIRE(structured.at("items").as_array().size() < 3000);

  // A scalar one is priced and passes.
  session.from_client(modern(call(2, "count")));
  REQUIRE(session
              .from_server(response(
                  2, modern_result(json::object{
                         {"content", json::array{json::object{{"type", "text"}, {"text", "42"}}}},
                         {"structuredContent", 42}})))
              .action == Verdict::Action::kForward);
}
