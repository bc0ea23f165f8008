// Fuzz target: jsonrpc::parse_message, session::SessionRouter and mcp::ProtocolState, which every
// line between the client and the server passes.
//
// Input: lines. The first byte of a line says what it is: '>' a message from the client, '<' one
// from the server, '!' the server gone (abandon_client_requests); any other byte picks a
// direction by its low bit. The rest of the line is the message.
// Invariants, against a reference model kept here (per direction, the requests sent and not yet
// answered or cancelled, in arrival order):
//   - parse_message and observe never throw; observe returns one route per envelope, and each
//     envelope's kind is what the message's members say (message.hpp);
//   - in_flight() in each direction equals the model's count after every line;
//   - a response routes to the method and subject of the request it answers, with that
//     request's context and the time since it passed; a response to no request routes to "";
//   - abandon_client_requests() returns the client's open requests in arrival order;
//   - ProtocolState, fed each message as the interceptor feeds it, never throws, keeps at most
//     1024 listen streams, and what it would send (tools_list_changed) is, in the session's era,
//     one unsolicited notification (2025) or one tools/list_changed per stream, each tagged with
//     a subscription id (2026-07-28); a result it stamps for the modern era is "complete".

#include <algorithm>
#include <bit>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "fuzz_support.hpp"
#include "jsonrpc/message.hpp"
#include "mcp/protocol_state.hpp"
#include "session/session_router.hpp"

namespace {

namespace json = boost::json;
using ctxguard::fuzz::require;
using ctxguard::jsonrpc::Kind;
using ctxguard::session::Clock;
using ctxguard::session::Direction;

// JSON-RPC ids match by their exact JSON form: same type and value (1 and "1" and 1.0 differ).
// Objects and arrays are no valid ids; the router matches them by their serialized text, and
// so does the model.
bool same_id(const json::value& a, const json::value& b) {
  if (a.is_int64() && b.is_uint64()) {
    return a.get_int64() >= 0 && static_cast<std::uint64_t>(a.get_int64()) == b.get_uint64();
  }
  if (a.is_uint64() && b.is_int64()) return same_id(b, a);
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case json::kind::null:
      return true;
    case json::kind::bool_:
      return a.get_bool() == b.get_bool();
    case json::kind::int64:
      return a.get_int64() == b.get_int64();
    case json::kind::uint64:
      return a.get_uint64() == b.get_uint64();
    case json::kind::double_:
      return std::bit_cast<std::uint64_t>(a.get_double()) ==
             std::bit_cast<std::uint64_t>(b.get_double());
    case json::kind::string:
      return a.get_string() == b.get_string();
    case json::kind::array:
    case json::kind::object:
      return json::serialize(a) == json::serialize(b);
  }
  return false;
}

// What a message element is, by its members (message.hpp), written out again for the model.
struct Expected {
  Kind kind = Kind::kUnknown;
  const json::value* id = nullptr;
  std::string method;
};

Expected expected_of(const json::value& element) {
  Expected expected;
  const json::object* object = element.if_object();
  if (object == nullptr) return expected;
  expected.id = object->if_contains("id");
  if (const json::value* method = object->if_contains("method")) {
    if (method->is_string()) {
      expected.method = std::string(method->get_string());
      expected.kind = expected.id != nullptr ? Kind::kRequest : Kind::kNotification;
    }
    return expected;
  }
  if (expected.id != nullptr && (object->contains("result") || object->contains("error"))) {
    expected.kind = Kind::kResponse;
  }
  return expected;
}

// The member of params a request is about (session_router.hpp: tools/call, tasks/result,
// resources/read, tasks/get).
std::string subject_of(const json::value& element, std::string_view method) {
  std::string_view member;
  if (method == "tools/call") member = "name";
  if (method == "tasks/result" || method == "tasks/get") member = "taskId";
  if (method == "resources/read") member = "uri";
  if (member.empty()) return {};
  const json::value* params = element.as_object().if_contains("params");
  if (params == nullptr || !params->is_object()) return {};
  const json::value* value = params->as_object().if_contains(member);
  return value != nullptr && value->is_string() ? std::string(value->get_string()) : std::string();
}

struct Pending {
  json::value id;
  std::string method;
  std::string subject;
  Clock::time_point started;
  std::shared_ptr<const std::size_t> context;
};

class Model {
 public:
  std::vector<Pending>& sent_in(Direction direction) {
    return direction == Direction::kClientToServer ? client_ : server_;
  }
  std::vector<Pending>& answered_in(Direction direction) {
    return direction == Direction::kClientToServer ? server_ : client_;
  }

  // The request `id` names, removed; nullopt when there is none.
  static std::optional<Pending> take(std::vector<Pending>& pending, const json::value& id) {
    const auto found = std::find_if(pending.begin(), pending.end(), [&id](const Pending& request) {
      return same_id(request.id, id);
    });
    if (found == pending.end()) return std::nullopt;
    Pending request = std::move(*found);
    pending.erase(found);
    return request;
  }

 private:
  std::vector<Pending> client_;  // client -> server, in arrival order
  std::vector<Pending> server_;
};

// Feeds one message element to `state` as the interceptor does: the client's requests and
// notifications, the server's results (with the method they answer) and notifications.
void observe(ctxguard::mcp::ProtocolState& state, Direction direction, const json::value& element,
             const ctxguard::session::Route<std::size_t>& route) {
  const json::object& object = element.as_object();
  if (direction == Direction::kClientToServer) {
    if (route.kind == Kind::kRequest) state.on_client_request(object, route.method);
    if (route.kind == Kind::kNotification) state.on_client_notification(object, route.method);
    return;
  }
  if (route.kind == Kind::kNotification) state.on_server_notification(object, route.method);
  const json::value* result = object.if_contains("result");
  if (route.kind == Kind::kResponse && result != nullptr && result->is_object()) {
    state.on_server_result(object.at("id"), result->get_object(), route.method);
  }
}

void check_protocol_state(const ctxguard::mcp::ProtocolState& state) {
  using ctxguard::mcp::Era;
  require(state.listen_streams() <= 1024, "listen streams are bounded");
  const std::vector<std::string> notices = state.tools_list_changed();
  if (state.session_era() == Era::kLegacy) {
    require(notices.size() == 1, "a 2025 session is told once, unsolicited");
  }
  require(notices.size() <= state.listen_streams() || state.session_era() == Era::kLegacy,
          "at most one notice per listen stream");
  for (const std::string& notice : notices) {
    const json::value parsed = json::parse(notice);
    require(parsed.at("method") == "notifications/tools/list_changed",
            "a notice is a tools/list_changed notification", notice);
    if (state.session_era() == Era::kModern) {
      require(parsed.at("params").at("_meta").as_object().contains(
                  "io.modelcontextprotocol/subscriptionId"),
              "a 2026-07-28 notice names its stream", notice);
    }
  }
  json::object own{{"content", json::array{}}};
  state.stamp_own_result(own, Era::kModern);
  require(own.at("resultType") == "complete", "ctxguard's own modern results are complete");
}

std::string count_detail(std::size_t router, std::size_t model) {
  return "router " + std::to_string(router) + ", model " + std::to_string(model);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  ctxguard::session::SessionRouter<std::size_t> router;
  ctxguard::mcp::ProtocolState protocol;
  Model model;
  const Clock::time_point start{};
  std::size_t line_number = 0;
  try {
    for (std::size_t at = 0; at < input.size(); ++line_number) {
      std::size_t end = input.find('\n', at);
      if (end == std::string_view::npos) end = input.size();
      const std::string_view line = input.substr(at, end - at);
      at = end + 1;
      if (line.empty()) continue;
      const Clock::time_point now = start + std::chrono::milliseconds(line_number);

      if (line.front() == '!') {
        const auto abandoned = router.abandon_client_requests();
        auto& open = model.sent_in(Direction::kClientToServer);
        require(abandoned.size() == open.size(), "abandon returns every open client request",
                count_detail(abandoned.size(), open.size()));
        for (std::size_t i = 0; i < open.size(); ++i) {
          require(same_id(abandoned[i].id, open[i].id) && abandoned[i].method == open[i].method,
                  "abandoned requests come in arrival order", [&] {
                    return "position " + std::to_string(i) + ": " +
                           json::serialize(abandoned[i].id) + " vs " + json::serialize(open[i].id);
                  });
        }
        open.clear();
        continue;
      }
      const Direction direction = line.front() == '>'   ? Direction::kClientToServer
                                  : line.front() == '<' ? Direction::kServerToClient
                                  : (static_cast<unsigned char>(line.front()) & 1) != 0
                                      ? Direction::kServerToClient
                                      : Direction::kClientToServer;
      auto message = ctxguard::jsonrpc::parse_message(line.substr(1));
      if (!message) continue;  // forwarded unrouted by the proxy
      const auto context = std::make_shared<const std::size_t>(line_number);
      const auto routes = router.observe(direction, *message, now, context);
      require(routes.size() == message->envelopes.size(), "one route per envelope");

      for (std::size_t i = 0; i < routes.size(); ++i) {
        const json::value& element =
            message->batch ? message->document.as_array()[i] : message->document;
        const Expected expected = expected_of(element);
        const auto& route = routes[i];
        if (route.kind != Kind::kUnknown) observe(protocol, direction, element, route);
        const auto where = [&] {
          return "line " + std::to_string(line_number) + " element " + std::to_string(i) + ": " +
                 ctxguard::fuzz::excerpt(line);
        };
        require(message->envelopes[i].kind == expected.kind && route.kind == expected.kind,
                "each envelope is classified by its members", where);
        switch (expected.kind) {
          case Kind::kRequest: {
            require(route.method == expected.method, "a request routes to its own method", where);
            auto& sent = model.sent_in(direction);
            Model::take(sent, *expected.id);  // a reused id: the newer request replaces it
            sent.push_back(Pending{*expected.id, expected.method,
                                   subject_of(element, expected.method), now, context});
            require(route.subject == sent.back().subject, "a request's subject", where);
            break;
          }
          case Kind::kNotification: {
            require(route.method == expected.method, "a notification routes to its method", where);
            const json::value* params = element.as_object().if_contains("params");
            if (expected.method == "notifications/cancelled" && params != nullptr &&
                params->is_object()) {
              if (const json::value* id = params->as_object().if_contains("requestId")) {
                Model::take(model.sent_in(direction), *id);
              }
            }
            break;
          }
          case Kind::kResponse: {
            const auto request = Model::take(model.answered_in(direction), *expected.id);
            if (!request) {
              require(route.method.empty() && route.subject.empty() && !route.elapsed &&
                          route.context == nullptr,
                      "a response to no open request routes nowhere", where);
              break;
            }
            require(route.method == request->method && route.subject == request->subject,
                    "a response routes to the method of its request", [&] {
                      return where() + " (routed to \"" + route.method + "\", request was \"" +
                             request->method + "\")";
                    });
            require(route.elapsed == now - request->started, "elapsed since the request", where);
            require(route.context == request->context, "the request's context comes back", where);
            break;
          }
          case Kind::kUnknown:
            require(route.method.empty(), "an unknown message routes nowhere", where);
            break;
        }
      }
      check_protocol_state(protocol);
      for (const Direction d : {Direction::kClientToServer, Direction::kServerToClient}) {
        require(router.in_flight(d) == model.sent_in(d).size(),
                "in_flight equals requests minus answered and cancelled", [&] {
                  return std::string(ctxguard::session::to_string(d)) + " after line " +
                         std::to_string(line_number) + ": " +
                         count_detail(router.in_flight(d), model.sent_in(d).size());
                });
      }
    }
  } catch (const std::exception& error) {
    ctxguard::fuzz::invariant_broken("the message path never throws", error.what());
  }
  return 0;
}
