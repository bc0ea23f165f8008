#pragma once
// An Interceptor fed JSON-RPC messages as a client and a server would send them, and builders
// for those messages (the interceptor tests).

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include "pipeline/metadata.hpp"
#include "proxy/interceptor.hpp"
#include "support/json_writer.hpp"

namespace ctxguard::testing {

namespace json = boost::json;
using proxy::Interceptor;
using proxy::Verdict;
using session::Direction;

struct Session {
  ctxguard::cursor::CursorCodec codec{{std::string(32, 's')}, std::chrono::seconds(600)};
  Interceptor interceptor{ctxguard::config::Profile::of({}), codec};
  std::vector<telemetry::CallEvent> events;  // what the interceptor recorded

  Session() {
    interceptor.set_call_sink(
        [this](telemetry::CallEvent&& event) { events.push_back(std::move(event)); });
  }

  Verdict from_client(const json::value& message) {
    return interceptor.on_line(Direction::kClientToServer, ctxguard::to_json(message),
                               std::chrono::steady_clock::now(), std::chrono::system_clock::now());
  }
  Verdict from_server(const json::value& message) {
    return from_server_line(ctxguard::to_json(message));
  }
  // The server's line as written (tests that compare sizes on the wire).
  Verdict from_server_line(std::string_view line) {
    return interceptor.on_line(Direction::kServerToClient, line, std::chrono::steady_clock::now(),
                               std::chrono::system_clock::now());
  }
};

inline json::object call(json::value id, const char* tool, json::object arguments = {}) {
  return json::object{
      {"jsonrpc", "2.0"},
      {"id", std::move(id)},
      {"method", "tools/call"},
      {"params", json::object{{"name", tool}, {"arguments", std::move(arguments)}}}};
}

inline json::object big_result(std::size_t rows) {
  json::array items;
  for (std::size_t i = 0; i < rows; ++i) items.push_back(json::object{{"id", i}, {"name", "row"}});
  return json::object{
      {"content",
       json::array{json::object{{"type", "text"},
                                {"text", ctxguard::to_json(json::object{{"rows", items}})}}}}};
}

inline json::object response(json::value id, json::object result) {
  return json::object{{"jsonrpc", "2.0"}, {"id", std::move(id)}, {"result", std::move(result)}};
}

// The JSON of a rewritten result's first item after its way on (docs/protocol.md 3.1), which
// must name the answer's cursor.
inline json::value answer_json(const json::value& result) {
  const json::array& content = result.at("content").as_array();
  const std::string_view first = content.at(0).at("text").as_string();
  if (!first.starts_with("ctxguard: ")) return json::parse(first);
  const json::value answer = json::parse(content.at(1).at("text").as_string());
  const json::object& meta = answer.at("_ctxguard").as_object();
  for (const std::string_view key : pipeline::kWayOnCursors) {
    if (const json::value* cursor = meta.if_contains(key)) {
      REQUIRE(first.find(std::string(cursor->as_string())) != std::string_view::npos);
      break;
    }
  }
  return answer;
}

inline json::value inner_json(const json::value& message) {
  return answer_json(message.at("result"));
}

}  // namespace ctxguard::testing
