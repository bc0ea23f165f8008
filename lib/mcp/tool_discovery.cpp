#include "mcp/tool_discovery.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "support/json_writer.hpp"

namespace ctxguard::mcp {

namespace json = boost::json;

namespace {

constexpr std::string_view kInitialized = "notifications/initialized";

}  // namespace

std::vector<std::string> ToolDiscovery::start(json::value message, Held held, Era era,
                                              const json::object* meta) {
  phase_ = Phase::kListing;
  held_kind_ = held;
  message_ = std::move(message);
  if (meta != nullptr) meta_ = *meta;
  std::vector<std::string> lines;
  if (era == Era::kLegacy) {
    lines.push_back(to_json(json::object{{"jsonrpc", "2.0"}, {"method", kInitialized}}));
    client_initialized_due_ = true;
  }
  lines.push_back(next_request(nullptr));
  return lines;
}

std::string ToolDiscovery::next_request(const json::value* cursor) {
  pending_id_ = fmt::format("ctxguard-tools-{}", ++requests_);
  json::object params;
  if (cursor != nullptr) params["cursor"] = *cursor;
  if (!meta_.empty()) params["_meta"] = meta_;
  return to_json(json::object{
      {"jsonrpc", "2.0"}, {"id", pending_id_}, {"method", "tools/list"}, {"params", params}});
}

ToolDiscovery::Step ToolDiscovery::on_server_message(const jsonrpc::Message& message) {
  if (message.batch || message.envelopes.size() != 1 ||
      message.envelopes.front().kind != jsonrpc::Kind::kResponse) {
    return {};
  }
  const json::string* id = message.envelopes.front().id.if_string();
  if (id == nullptr) return {};
  const auto stale = std::find(stale_ids_.begin(), stale_ids_.end(), std::string_view(*id));
  if (stale != stale_ids_.end()) {
    stale_ids_.erase(stale);
    return Step{.ours = true};
  }
  if (phase_ != Phase::kListing || *id != pending_id_) return {};
  pending_id_.clear();
  ++pages_;
  const json::value* result = message.document.as_object().if_contains("result");
  const json::value* tools = result != nullptr && result->is_object()
                                 ? result->get_object().if_contains("tools")
                                 : nullptr;
  if (tools == nullptr || !tools->is_array()) return Step{.ours = true, .finished = true};
  for (const json::value& tool : tools->get_array()) tools_.push_back(tool);
  const json::value* cursor = result->get_object().if_contains("nextCursor");
  if (cursor == nullptr || cursor->is_null()) {
    complete_ = true;
    return Step{.ours = true, .finished = true};
  }
  if (!cursor->is_string() || pages_ >= kDiscoveryPages)
    return Step{.ours = true, .finished = true};
  return Step{.ours = true, .next_page = next_request(cursor)};
}

ToolDiscovery::Outcome ToolDiscovery::finish() {
  phase_ = Phase::kDone;
  if (!pending_id_.empty()) stale_ids_.push_back(std::move(pending_id_));
  pending_id_.clear();
  Outcome outcome{std::move(message_), std::move(held_), std::move(tools_), complete_};
  message_ = nullptr;
  held_.clear();
  tools_.clear();
  return outcome;
}

bool ToolDiscovery::drops_client_notification(std::string_view method) {
  if (!client_initialized_due_ || method != kInitialized) return false;
  client_initialized_due_ = false;
  return true;
}

}  // namespace ctxguard::mcp
