#include "session/session_router.hpp"

namespace ctxguard::session {
namespace {

// The member of `params` that names what a request is about, for the methods that have one.
std::string subject_of(const boost::json::value& element, std::string_view method) {
  std::string_view member;
  if (method == kToolsCall) {
    member = "name";
  } else if (method == kTasksResult || method == kTasksGet) {
    member = "taskId";
  } else if (method == kResourcesRead) {
    member = "uri";
  } else {
    return {};
  }
  const auto* params = element.as_object().if_contains("params");
  if (params == nullptr || !params->is_object()) return {};
  const auto* value = params->as_object().if_contains(member);
  if (value == nullptr || !value->is_string()) return {};
  return std::string(value->get_string());
}

}  // namespace

std::string_view to_string(Direction direction) {
  return direction == Direction::kClientToServer ? "client->server" : "server->client";
}

RequestTracker& SessionRouter::sent_in(Direction direction) {
  return direction == Direction::kClientToServer ? client_requests_ : server_requests_;
}

RequestTracker& SessionRouter::answered_in(Direction direction) {
  return direction == Direction::kClientToServer ? server_requests_ : client_requests_;
}

bool SessionRouter::awaits_answer(Direction direction, const boost::json::value& id) const {
  // Answers travelling client -> server resolve the server's requests, and the reverse.
  const RequestTracker& requests =
      direction == Direction::kClientToServer ? server_requests_ : client_requests_;
  return requests.contains(id);
}

std::size_t SessionRouter::in_flight(Direction direction) const {
  return direction == Direction::kClientToServer ? client_requests_.size()
                                                 : server_requests_.size();
}

std::vector<Route> SessionRouter::observe(Direction direction, const jsonrpc::Message& message,
                                          Clock::time_point now,
                                          const std::shared_ptr<const void>& context) {
  std::vector<Route> routes;
  routes.reserve(message.envelopes.size());
  for (std::size_t i = 0; i < message.envelopes.size(); ++i) {
    const jsonrpc::Envelope& envelope = message.envelopes[i];
    Route route{envelope.kind, {}, {}, std::nullopt, {}};
    const boost::json::value& element =
        message.batch ? message.document.as_array()[i] : message.document;
    switch (envelope.kind) {
      case jsonrpc::Kind::kRequest:
        route.method = envelope.method;
        route.subject = subject_of(element, envelope.method);
        sent_in(direction).track(envelope.id, envelope.method, now, route.subject, context);
        break;
      case jsonrpc::Kind::kNotification:
        route.method = envelope.method;
        if (envelope.method == kCancelled) forget_cancelled(direction, message, i);
        break;
      case jsonrpc::Kind::kResponse:
        if (auto request = answered_in(direction).resolve(envelope.id)) {
          route.method = std::move(request->method);
          route.subject = std::move(request->subject);
          route.elapsed = now - request->started;
          route.context = std::move(request->context);
        }
        break;
      case jsonrpc::Kind::kUnknown:
        break;
    }
    routes.push_back(std::move(route));
  }
  return routes;
}

void SessionRouter::forget_cancelled(Direction direction, const jsonrpc::Message& message,
                                     std::size_t index) {
  // A cancelled request will not be answered (MCP: the receiver SHOULD NOT respond), so keeping it
  // would leak an entry and later produce a bogus error. A late answer is still forwarded.
  const boost::json::value& element =
      message.batch ? message.document.as_array()[index] : message.document;
  const auto* params = element.as_object().if_contains("params");
  if (params == nullptr || !params->is_object()) return;
  if (const auto* request_id = params->as_object().if_contains("requestId")) {
    sent_in(direction).resolve(*request_id);
  }
}

}  // namespace ctxguard::session
