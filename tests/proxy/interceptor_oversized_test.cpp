// Lines over --max-message-bytes: the interceptor sees only their edges, and must still give the
// peer that waits an error instead of silence.

#include <string>

#include <catch2/catch.hpp>

#include "interceptor_session.hpp"

using namespace ctxguard::testing;

namespace {

constexpr std::size_t kLimit = 1024;
constexpr std::size_t kEdge = 256;

struct OversizedLine {
  std::string text;
  std::string_view head() const { return std::string_view(text).substr(0, kEdge); }
  std::string_view tail() const { return std::string_view(text).substr(text.size() - kEdge); }
};

// `message` with a long string member `pad` so it exceeds kLimit; its envelope members keep
// their place (Boost.JSON serializes members in insertion order).
OversizedLine padded(json::object message, const char* where) {
  message[where] = json::object{{"pad", std::string(4 * kLimit, 'x')}};
  return {ctxguard::to_json(message)};
}

Verdict oversized(Session& session, Direction direction, const OversizedLine& line) {
  return session.interceptor.on_oversized(direction, line.head(), line.tail(), line.text.size(),
                                          kLimit, std::chrono::steady_clock::now(),
                                          std::chrono::system_clock::now());
}

json::object error_of(const Verdict& verdict) {
  const json::value message = json::parse(verdict.text);
  return message.at("error").as_object();
}

}  // namespace

TEST_CASE("oversized: a client request is refused to the client with -32600, never tracked") {
  Session session;
  // The TypeScript SDK's layout: method first, id last.
  json::object request{{"method", "tools/call"}};
  const OversizedLine line = [&] {
    json::object message{{"method", "tools/call"}};
    message["params"] = json::object{{"pad", std::string(4 * kLimit, 'x')}};
    message["jsonrpc"] = "2.0";
    message["id"] = 41;
    return OversizedLine{ctxguard::to_json(message)};
  }();
  const Verdict verdict = oversized(session, Direction::kClientToServer, line);
  REQUIRE(verdict.action == Verdict::Action::kReply);
  CHECK(json::parse(verdict.text).at("id") == json::value(41));
  const json::object error = error_of(verdict);
  CHECK(error.at("code") == json::value(-32600));
  const std::string text(error.at("message").as_string());
  CHECK_THAT(text, Catch::Contains(std::to_string(line.text.size()) + " bytes") &&
                       Catch::Contains("1024") && Catch::Contains("--max-message-bytes"));
  CHECK(session.interceptor.router().in_flight(Direction::kClientToServer) == 0);
}

TEST_CASE("oversized: the server's answer to a call in flight becomes a -32603 error for it") {
  Session session;
  session.from_client(call("c-7", "search"));
  REQUIRE(session.interceptor.router().in_flight(Direction::kClientToServer) == 1);

  // The Python SDK's layout: id first, so the head holds it.
  json::object answer{{"jsonrpc", "2.0"}, {"id", "c-7"}};
  const Verdict verdict = oversized(session, Direction::kServerToClient, padded(answer, "result"));
  REQUIRE(verdict.action == Verdict::Action::kSend);
  CHECK(json::parse(verdict.text).at("id") == json::value("c-7"));
  CHECK(error_of(verdict).at("code") == json::value(-32603));
  CHECK_THAT(std::string(error_of(verdict).at("message").as_string()),
             Catch::Contains("server's answer") && Catch::Contains("Ask for less"));
  // Answered: the request left the router, and the call has its record (an error).
  CHECK(session.interceptor.router().in_flight(Direction::kClientToServer) == 0);
  REQUIRE(session.events.size() == 1);
  CHECK(session.events[0].tool == "search");
  CHECK(session.events[0].outcome == ctxguard::telemetry::Outcome::kError);
}

TEST_CASE("oversized: a response nobody waits for, or a line without an id, is dropped") {
  Session session;
  session.from_client(call(1, "search"));
  json::object stray{{"jsonrpc", "2.0"}, {"id", 2}};
  CHECK(oversized(session, Direction::kServerToClient, padded(stray, "result")).action ==
        Verdict::Action::kDrop);
  json::object notification{{"jsonrpc", "2.0"}, {"method", "notifications/message"}};
  CHECK(oversized(session, Direction::kServerToClient, padded(notification, "params")).action ==
        Verdict::Action::kDrop);
  CHECK(oversized(session, Direction::kServerToClient, {std::string(4 * kLimit, 'g')}).action ==
        Verdict::Action::kDrop);
  // The call is still waiting for its real answer.
  CHECK(session.interceptor.router().in_flight(Direction::kClientToServer) == 1);
}

TEST_CASE("oversized: a server request is refused to the server; a client answer to one errors") {
  Session session;
  json::object request{{"jsonrpc", "2.0"}, {"id", 0}, {"method", "sampling/createMessage"}};
  const Verdict refused = oversized(session, Direction::kServerToClient, padded(request, "params"));
  REQUIRE(refused.action == Verdict::Action::kReply);  // back to the server
  CHECK(error_of(refused).at("code") == json::value(-32600));
  CHECK_THAT(std::string(error_of(refused).at("message").as_string()),
             Catch::Contains("not sent to the client"));

  // A server request that fit, answered by the client with too much: the server gets the error.
  session.from_server(json::object{
      {"jsonrpc", "2.0"}, {"id", 5}, {"method", "roots/list"}, {"params", json::object{}}});
  json::object answer{{"jsonrpc", "2.0"}, {"id", 5}};
  const Verdict verdict = oversized(session, Direction::kClientToServer, padded(answer, "result"));
  REQUIRE(verdict.action == Verdict::Action::kSend);
  CHECK(error_of(verdict).at("code") == json::value(-32603));
  CHECK_THAT(std::string(error_of(verdict).at("message").as_string()),
             Catch::Contains("client's answer"));
  CHECK(session.interceptor.router().in_flight(Direction::kServerToClient) == 0);
}
