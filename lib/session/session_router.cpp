#include "session/session_router.hpp"

namespace ctxguard::session {

std::string_view to_string(Direction direction) {
  return direction == Direction::kClientToServer ? "client->server" : "server->client";
}

RequestTracker& SessionRouter::sent_in(Direction direction) {
  return direction == Direction::kClientToServer ? client_requests_ : server_requests_;
}

RequestTracker& SessionRouter::answered_in(Direction direction) {
  return direction == Direction::kClientToServer ? server_requests_ : client_requests_;
}

std::size_t SessionRouter::in_flight(Direction direction) const {
  return direction == Direction::kClientToServer ? client_requests_.size()
                                                 : server_requests_.size();
}

std::vector<Route> SessionRouter::observe(Direction direction, const jsonrpc::Message& message,
                                          Clock::time_point now) {
  std::vector<Route> routes;
  routes.reserve(message.envelopes.size());
  for (std::size_t i = 0; i < message.envelopes.size(); ++i) {
    const jsonrpc::Envelope& envelope = message.envelopes[i];
    Route route{envelope.kind, {}, std::nullopt};
    switch (envelope.kind) {
      case jsonrpc::Kind::kRequest:
        sent_in(direction).track(envelope.id, envelope.method, now);
        route.method = envelope.method;
        break;
      case jsonrpc::Kind::kNotification:
        route.method = envelope.method;
        if (envelope.method == kCancelled) forget_cancelled(direction, message, i);
        break;
      case jsonrpc::Kind::kResponse:
        if (auto request = answered_in(direction).resolve(envelope.id)) {
          route.method = std::move(request->method);
          route.elapsed = now - request->started;
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
