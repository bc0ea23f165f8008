#pragma once
// Knows which response answers which request, in both directions.
//
// The client and the server each number their own requests, so ids are tracked per direction:
// server-everything sends `roots/list` with id 0 while the client's `initialize` was id 0 too. The
// router needs no `initialize` to have been seen; it starts tracking with the first message.
// It rewrites nothing: it only observes and tells the caller what each message is, so later
// stages can pick out the answers to `tools/call`, `tools/list`, `initialize` and
// `server/discover`.
//
// `Context` is what the caller keeps with each request (RequestTracker); ctxguard's proxy uses
// `config::Profile`, which lives above this module, hence a template parameter.

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jsonrpc/message.hpp"
#include "session/request_tracker.hpp"

namespace ctxguard::session {

enum class Direction { kClientToServer, kServerToClient };

std::string_view to_string(Direction direction);
// Who sent a message going this way: "client" or "server".
std::string_view sender(Direction direction);

constexpr Direction opposite(Direction direction) {
  return direction == Direction::kClientToServer ? Direction::kServerToClient
                                                 : Direction::kClientToServer;
}

// Method names the pipeline cares about.
inline constexpr std::string_view kInitialize = "initialize";
inline constexpr std::string_view kServerDiscover = "server/discover";
inline constexpr std::string_view kToolsList = "tools/list";
inline constexpr std::string_view kResourcesRead = "resources/read";
inline constexpr std::string_view kToolsCall = "tools/call";
inline constexpr std::string_view kTasksResult = "tasks/result";
inline constexpr std::string_view kTasksGet = "tasks/get";
inline constexpr std::string_view kCancelled = "notifications/cancelled";
inline constexpr std::string_view kSubscriptionsListen = "subscriptions/listen";
inline constexpr std::string_view kSubscriptionsAcknowledged =
    "notifications/subscriptions/acknowledged";
inline constexpr std::string_view kToolsListChanged = "notifications/tools/list_changed";

template <typename Context>
struct Route {
  jsonrpc::Kind kind = jsonrpc::Kind::kUnknown;
  // Requests and notifications: their method. Responses: the method of the request answered,
  // empty when the id matches no request in flight (the response is forwarded all the same).
  std::string method;
  // tools/call: the tool's name; tasks/result and tasks/get: the task id; resources/read: the
  // uri (requests and their responses).
  std::string subject;
  // Responses to a known request: the time since that request passed through.
  std::optional<Clock::duration> elapsed;
  // Responses to a known request: what observe() was given with that request.
  std::shared_ptr<const Context> context;
};

// The element of `message` that envelope `index` describes (the document itself, or one element
// of a batch).
const boost::json::value& message_element(const jsonrpc::Message& message, std::size_t index);
// What a request with `method` is about (its Route's subject), read from `element`'s params; empty
// for other methods.
std::string request_subject(const boost::json::value& element, std::string_view method);
// The `requestId` a notifications/cancelled `element` names, or null.
const boost::json::value* cancelled_request_id(const boost::json::value& element);

template <typename Context>
class SessionRouter {
 public:
  using RouteType = Route<Context>;
  using Pending = PendingRequest<Context>;

  // Observes `message` travelling in `direction` at `now`; returns one Route per envelope.
  // Never fails: what it cannot match it reports with an empty method. `context` is kept with
  // each request in `message` and handed back in the Route of its response.
  std::vector<RouteType> observe(Direction direction, const jsonrpc::Message& message,
                                 Clock::time_point now,
                                 const std::shared_ptr<const Context>& context = {});

  // Requests the client sent that the server never answered, in arrival order; the tracker is
  // emptied. Called when the server is gone, so each can get an error response.
  std::vector<Pending> abandon_client_requests() { return client_requests_.take_all(); }

  std::size_t in_flight(Direction direction) const {
    return direction == Direction::kClientToServer ? client_requests_.size()
                                                   : server_requests_.size();
  }

  // Whether a response with `id` travelling in `direction` would answer a request in flight.
  bool awaits_answer(Direction direction, const boost::json::value& id) const {
    // Answers travelling client -> server resolve the server's requests, and the reverse.
    return (direction == Direction::kClientToServer ? server_requests_ : client_requests_)
        .contains(id);
  }

 private:
  // Requests sent in `direction`, and the ones the opposite peer sent (answered in `direction`).
  RequestTracker<Context>& sent_in(Direction direction) {
    return direction == Direction::kClientToServer ? client_requests_ : server_requests_;
  }
  RequestTracker<Context>& answered_in(Direction direction) {
    return direction == Direction::kClientToServer ? server_requests_ : client_requests_;
  }

  RequestTracker<Context> client_requests_;  // client -> server, answered by the server
  RequestTracker<Context> server_requests_;  // server -> client, answered by the client
};

template <typename Context>
std::vector<Route<Context>> SessionRouter<Context>::observe(
    Direction direction, const jsonrpc::Message& message, Clock::time_point now,
    const std::shared_ptr<const Context>& context) {
  std::vector<RouteType> routes;
  routes.reserve(message.envelopes.size());
  for (std::size_t i = 0; i < message.envelopes.size(); ++i) {
    const jsonrpc::Envelope& envelope = message.envelopes[i];
    RouteType route{envelope.kind, {}, {}, std::nullopt, {}};
    const boost::json::value& element = message_element(message, i);
    switch (envelope.kind) {
      case jsonrpc::Kind::kRequest:
        route.method = envelope.method;
        route.subject = request_subject(element, envelope.method);
        sent_in(direction).track(envelope.id, envelope.method, now, route.subject, context);
        break;
      case jsonrpc::Kind::kNotification:
        route.method = envelope.method;
        // A cancelled request will not be answered (MCP: the receiver SHOULD NOT respond), so
        // keeping it would leak an entry and later produce a bogus error. A late answer is still
        // forwarded.
        if (envelope.method == kCancelled) {
          if (const auto* request_id = cancelled_request_id(element)) {
            sent_in(direction).resolve(*request_id);
          }
        }
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

}  // namespace ctxguard::session
