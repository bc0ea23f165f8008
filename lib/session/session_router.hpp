#pragma once
// Knows which response answers which request, in both directions.
//
// The client and the server each number their own requests, so ids are tracked per direction:
// server-everything sends `roots/list` with id 0 while the client's `initialize` was id 0 too. The
// router needs no `initialize` to have been seen; it starts tracking with the first message.
// It rewrites nothing: it only observes and tells the caller what each message is, so later
// stages can pick out the answers to `tools/call`, `tools/list`, `initialize` and
// `server/discover`.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "jsonrpc/message.hpp"
#include "session/request_tracker.hpp"

namespace ctxguard::session {

enum class Direction { kClientToServer, kServerToClient };

std::string_view to_string(Direction direction);

constexpr Direction opposite(Direction direction) {
  return direction == Direction::kClientToServer ? Direction::kServerToClient
                                                 : Direction::kClientToServer;
}

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
  std::shared_ptr<const void> context;
};

class SessionRouter {
 public:
  // Observes `message` travelling in `direction` at `now`; returns one Route per envelope.
  // Never fails: what it cannot match it reports with an empty method. `context` is kept with
  // each request in `message` and handed back in the Route of its response.
  std::vector<Route> observe(Direction direction, const jsonrpc::Message& message,
                             Clock::time_point now,
                             const std::shared_ptr<const void>& context = {});

  // Requests the client sent that the server never answered, in arrival order; the tracker is
  // emptied. Called when the server is gone, so each can get an error response.
  std::vector<PendingRequest> abandon_client_requests() { return client_requests_.take_all(); }

  std::size_t in_flight(Direction direction) const;

  // Whether a response with `id` travelling in `direction` would answer a request in flight.
  bool awaits_answer(Direction direction, const boost::json::value& id) const;

 private:
  // Requests sent in `direction`, and the ones the opposite peer sent (answered in `direction`).
  RequestTracker& sent_in(Direction direction);
  RequestTracker& answered_in(Direction direction);
  void forget_cancelled(Direction direction, const jsonrpc::Message& message, std::size_t index);

  RequestTracker client_requests_;  // client -> server, answered by the server
  RequestTracker server_requests_;  // server -> client, answered by the client
};

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

}  // namespace ctxguard::session
