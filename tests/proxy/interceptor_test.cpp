#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include "../config/profile_from.hpp"
#include "interceptor_session.hpp"

namespace json = boost::json;
using namespace ctxguard::testing;
using ctxguard::proxy::Verdict;
using ctxguard::session::Direction;

TEST_CASE("interceptor: a small answer passes as it came; what is not JSON-RPC does not") {
  Session session;
  REQUIRE(session.from_client(call(1, "list")).action == Verdict::Action::kForward);
  REQUIRE(session.from_server(response(1, big_result(3))).action == Verdict::Action::kForward);
  REQUIRE(session.interceptor
              .on_line(Direction::kServerToClient, "not json", std::chrono::steady_clock::now(),
                       std::chrono::system_clock::now())
              .action == Verdict::Action::kDrop);
}

TEST_CASE("interceptor: a large tools/call answer is rewritten with the same id") {
  Session session;
  session.from_client(call("a-1", "list"));
  const Verdict verdict = session.from_server(response("a-1", big_result(3000)));
  REQUIRE(verdict.action == Verdict::Action::kSend);
  const json::value message = json::parse(verdict.text);
  REQUIRE(message.at("id").as_string() == "a-1");
  REQUIRE(inner_json(message).at("_ctxguard").at("totalCount").as_int64() == 3000);
}

TEST_CASE("interceptor: ctxguard_fetch is answered locally and never reaches the server") {
  Session session;
  session.from_client(call(7, "list"));
  const json::value first = json::parse(session.from_server(response(7, big_result(3000))).text);
  const json::value cursor = inner_json(first).at("_ctxguard").at("nextCursor");
  const Verdict reply = session.from_client(call(8, "ctxguard_fetch", {{"cursor", cursor}}));
  REQUIRE(reply.action == Verdict::Action::kReply);
  const json::value page = json::parse(reply.text);
  REQUIRE(page.at("id").as_int64() == 8);
  REQUIRE(inner_json(page).at("items").as_array().front().at("id").as_int64() > 0);
  // Not tracked as a request the server owes an answer to.
  REQUIRE(session.interceptor.router().abandon_client_requests().empty());
}

TEST_CASE("interceptor: initialize gets the instructions and tools/list the fetch tool") {
  Session session;
  session.from_client(json::object{{"jsonrpc", "2.0"}, {"id", 0}, {"method", "initialize"}});
  const Verdict init = session.from_server(
      response(0, json::object{{"protocolVersion", "2025-06-18"}, {"instructions", "Mine."}}));
  REQUIRE(init.action == Verdict::Action::kSend);
  const std::string instructions(
      json::parse(init.text).at("result").at("instructions").as_string());
  REQUIRE(instructions.find("ctxguard_fetch") < instructions.find("Mine."));
  session.from_client(json::object{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/list"}});
  const Verdict list = session.from_server(
      response(1, json::object{{"tools", json::array{json::object{{"name", "t"}}}}}));
  REQUIRE(list.action == Verdict::Action::kSend);
  REQUIRE(json::parse(list.text).at("result").at("tools").as_array().back().at("name") ==
          "ctxguard_fetch");
}

TEST_CASE("interceptor: the result of a task-augmented call is rewritten at tasks/result") {
  Session session;
  json::object request = call(1, "research");
  request["params"].as_object()["task"] = json::object{{"ttl", 60000}};
  session.from_client(request);
  const Verdict created = session.from_server(
      response(1, json::object{{"task", json::object{{"taskId", "t-9"}, {"status", "working"}}}}));
  REQUIRE(created.action == Verdict::Action::kForward);
  session.from_client(json::object{{"jsonrpc", "2.0"},
                                   {"id", 2},
                                   {"method", "tasks/result"},
                                   {"params", json::object{{"taskId", "t-9"}}}});
  const Verdict result = session.from_server(response(2, big_result(3000)));
  REQUIRE(result.action == Verdict::Action::kSend);
  REQUIRE(inner_json(json::parse(result.text)).at("_ctxguard").at("hasMore").as_bool());
}

TEST_CASE("interceptor: error responses and answers in a batch are handled") {
  Session session;
  session.from_client(call(1, "list"));
  const json::object error{
      {"jsonrpc", "2.0"}, {"id", 1}, {"error", json::object{{"code", -32602}, {"message", "bad"}}}};
  REQUIRE(session.from_server(error).action == Verdict::Action::kForward);
  session.from_client(json::array{call(2, "list"), call(3, "list")});
  const Verdict batch =
      session.from_server(json::array{response(2, big_result(2)), response(3, big_result(3000))});
  REQUIRE(batch.action == Verdict::Action::kSend);
  const json::value sent = json::parse(batch.text);
  REQUIRE(sent.as_array().size() == 2);
  REQUIRE_FALSE(inner_json(sent.as_array()[0]).as_object().contains("_ctxguard"));
  REQUIRE(inner_json(sent.as_array()[1]).as_object().contains("_ctxguard"));
}

TEST_CASE("interceptor: server/discover (stateless opening) gets the instructions too") {
  Session session;
  session.from_client(json::object{{"jsonrpc", "2.0"}, {"id", "d"}, {"method", "server/discover"}});
  const Verdict verdict = session.from_server(
      response("d", json::object{{"supportedVersions", json::array{"2026-07-28"}}}));
  REQUIRE(verdict.action == Verdict::Action::kSend);
  REQUIRE(json::parse(verdict.text)
              .at("result")
              .at("instructions")
              .as_string()
              .find("ctxguard_fetch") != json::string::npos);
}

TEST_CASE("interceptor: a long resources/read text is chunked and named after its uri") {
  Session session;
  // The pipeline sees the resource's uri as the "tool" (logs, spill file names, rules). It once
  // pointed into a destroyed temporary: the spill writer, handed that name, catches it.
  std::string spilled_for;
  session.interceptor.set_spill_writer(
      [&](std::string_view tool, std::string_view,
          std::string_view) -> std::optional<ctxguard::pipeline::SpilledFile> {
        spilled_for = std::string(tool);
        return std::nullopt;
      });
  const std::string uri = "file:///var/log/some-service/application-server.log";
  std::string log;
  for (int i = 0; i < 4000; ++i)
    log += "2026-11-22T10:00:00Z INFO line " + std::to_string(i) + "\n";
  session.from_client(json::object{{"jsonrpc", "2.0"},
                                   {"id", 3},
                                   {"method", "resources/read"},
                                   {"params", json::object{{"uri", uri}}}});
  const Verdict verdict = session.from_server(response(
      3,
      json::object{{"contents", json::array{json::object{
                                    {"uri", uri}, {"mimeType", "text/plain"}, {"text", log}}}}}));
  REQUIRE(verdict.action == Verdict::Action::kSend);
  const json::value message = json::parse(verdict.text);
  const json::array& contents = message.at("result").at("contents").as_array();
  REQUIRE(contents.size() == 2);
  CHECK(log.starts_with(std::string(contents.at(0).at("text").as_string())));
  CHECK(contents.at(1).at("uri").as_string() == uri);
  CHECK(spilled_for == uri);
}

using ctxguard::config::testing::profile_from;

TEST_CASE("interceptor: observe mode forwards every answer as it came") {
  Session session;
  session.interceptor.set_profile(profile_from("mode: observe\n"),
                                  std::chrono::steady_clock::now());
  session.from_client(json::object{{"jsonrpc", "2.0"}, {"id", 0}, {"method", "initialize"}});
  CHECK(session.from_server(response(0, json::object{{"instructions", "Mine."}})).action ==
        Verdict::Action::kForward);
  session.from_client(json::object{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/list"}});
  CHECK(session
            .from_server(response(
                1, json::object{{"tools", json::array{json::object{
                                              {"name", "t"}, {"outputSchema", json::object{}}}}}}))
            .action == Verdict::Action::kForward);
  session.from_client(call(2, "list"));
  CHECK(session.from_server(response(2, big_result(3000))).action == Verdict::Action::kForward);
  // Nothing was cached: the shadow rewrite ran against a scratch cache.
  CHECK(session.interceptor.cache().stats().entries == 0);
}

TEST_CASE("interceptor: a rule shadows only its tools") {
  Session session;
  session.interceptor.set_profile(profile_from("tools:\n  - match: beta_*\n    mode: observe\n"),
                                  std::chrono::steady_clock::now());
  session.from_client(call(1, "beta_list"));
  CHECK(session.from_server(response(1, big_result(3000))).action == Verdict::Action::kForward);
  session.from_client(call(2, "list"));
  CHECK(session.from_server(response(2, big_result(3000))).action == Verdict::Action::kSend);
}

TEST_CASE("interceptor: an answer is rewritten with the profile its request came under") {
  Session session;
  const auto now = std::chrono::steady_clock::now();
  session.interceptor.set_profile(profile_from("pageSize: 20\n"), now);
  session.from_client(call(1, "list"));  // in flight across the reload
  session.interceptor.set_profile(profile_from("pageSize: 70\n"), now);
  session.from_client(call(2, "list"));
  // Answered out of order: each keeps its own settings.
  const json::value second = json::parse(session.from_server(response(2, big_result(3000))).text);
  const json::value first = json::parse(session.from_server(response(1, big_result(3000))).text);
  CHECK(inner_json(first).at("rows").as_array().size() == 20);
  CHECK(inner_json(second).at("rows").as_array().size() == 70);
  // A cursor from before the reload still pages; a fetch is a new call: the new page size.
  const json::value cursor = inner_json(first).at("_ctxguard").at("nextCursor");
  const Verdict page = session.from_client(call(3, "ctxguard_fetch", {{"cursor", cursor}}));
  REQUIRE(page.action == Verdict::Action::kReply);
  const json::value items = inner_json(json::parse(page.text)).at("items");
  CHECK(items.as_array().size() == 70);
  CHECK(items.as_array().front().at("id") == 20);
}

TEST_CASE("interceptor: a smaller cacheSize at reload evicts at once") {
  Session session;
  const auto now = std::chrono::steady_clock::now();
  session.from_client(call(1, "list"));
  session.from_server(response(1, big_result(60000)));
  REQUIRE(session.interceptor.cache().stats().entries == 1);
  REQUIRE(session.interceptor.cache().stats().bytes > (std::size_t{1} << 20));
  session.interceptor.set_profile(profile_from("cacheSize: 1M\n"), now);
  CHECK(session.interceptor.cache().stats().entries == 0);
}
