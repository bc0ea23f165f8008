#include "session/session_router.hpp"

namespace ctxguard::session {

std::string_view to_string(Direction direction) {
  return direction == Direction::kClientToServer ? "client->server" : "server->client";
}

std::string_view sender(Direction direction) {
  return direction == Direction::kClientToServer ? "client" : "server";
}

const boost::json::value& message_element(const jsonrpc::Message& message, std::size_t index) {
  return message.batch ? message.document.as_array()[index] : message.document;
}

std::string request_subject(const boost::json::value& element, std::string_view method) {
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

const boost::json::value* cancelled_request_id(const boost::json::value& element) {
  const auto* params = element.as_object().if_contains("params");
  if (params == nullptr || !params->is_object()) return nullptr;
  return params->as_object().if_contains("requestId");
}

}  // namespace ctxguard::session
