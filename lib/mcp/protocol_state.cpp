#include "mcp/protocol_state.hpp"

#include <algorithm>

#include "session/session_router.hpp"
#include "support/json_pointer.hpp"
#include "support/json_writer.hpp"

namespace ctxguard::mcp {

namespace json = boost::json;
using session::kCancelled;
using session::kInitialize;
using session::kSubscriptionsAcknowledged;
using session::kSubscriptionsListen;
using session::kToolsListChanged;

namespace {

// Listen streams remembered at most: a client that opens streams and never closes them must not
// grow ctxguard (the SDK's own server refuses past 1024 per connection).
constexpr std::size_t kMaxListenStreams = 1024;

const json::object* object_member(const json::object& object, std::string_view key) {
  const json::value* value = object.if_contains(key);
  return value != nullptr ? value->if_object() : nullptr;
}

const json::object* meta_of_params(const json::object& message) {
  const json::object* params = object_member(message, "params");
  return params != nullptr ? object_member(*params, "_meta") : nullptr;
}

}  // namespace

Era era_of_revision(std::string_view revision) {
  return revision >= kModernRevision ? Era::kModern : Era::kLegacy;
}

std::string_view result_type(const json::object& result) {
  return string_member(result, "resultType").value_or(std::string_view());
}

Era ProtocolState::on_client_request(const json::object& request, std::string_view method) {
  const json::object* meta = meta_of_params(request);
  std::optional<std::string_view> revision;
  if (meta != nullptr) {
    revision = string_member(*meta, kProtocolVersionKey);
    if (const json::value* info = meta->if_contains(kClientInfoKey); info != nullptr) {
      client_info_ = *info;
    }
  }
  if (method == kInitialize) {
    const json::object* params = object_member(request, "params");
    if (const json::value* info = params ? params->if_contains("clientInfo") : nullptr) {
      client_info_ = *info;
    }
  }
  if (!revision && negotiated_revision_) revision = *negotiated_revision_;
  const Era era = revision ? era_of_revision(*revision) : Era::kLegacy;
  session_era_ = era;

  if (method == kSubscriptionsListen) {
    const json::object* params = object_member(request, "params");
    const json::object* wanted = params ? object_member(*params, "notifications") : nullptr;
    const json::value* tools = wanted ? wanted->if_contains("toolsListChanged") : nullptr;
    const json::value& id = request.at("id");
    end_stream(id);  // a reused id replaces the stream it named
    if (streams_.size() >= kMaxListenStreams) streams_.erase(streams_.begin());
    streams_.push_back({id, tools != nullptr && tools->is_bool() && tools->get_bool(), false});
  }
  return era;
}

void ProtocolState::on_client_notification(const json::object& notification,
                                           std::string_view method) {
  if (method != kCancelled || streams_.empty()) return;
  const json::object* params = object_member(notification, "params");
  if (const json::value* id = params ? params->if_contains("requestId") : nullptr) end_stream(*id);
}

void ProtocolState::on_server_result(const json::value& id, const json::object& result,
                                     std::string_view method) {
  if (const json::object* meta = object_member(result, "_meta")) {
    if (const json::value* info = meta->if_contains(kServerInfoKey)) server_info_ = *info;
  }
  if (method == kInitialize) {
    if (auto revision = string_member(result, "protocolVersion")) {
      negotiated_revision_ = std::string(*revision);
    }
    if (const json::value* info = result.if_contains("serverInfo")) server_info_ = *info;
  } else if (method == kSubscriptionsListen) {
    end_stream(id);  // the server tore the stream down
  }
}

void ProtocolState::on_server_notification(const json::object& notification,
                                           std::string_view method) {
  if (method != kSubscriptionsAcknowledged || streams_.empty()) return;
  const json::object* meta = meta_of_params(notification);
  const json::value* id = meta ? meta->if_contains(kSubscriptionIdKey) : nullptr;
  if (id == nullptr) return;
  if (ListenStream* stream = find_stream(*id)) stream->acknowledged = true;
}

void ProtocolState::stamp_own_result(json::object& result, Era era) const {
  if (era != Era::kModern) return;
  result["resultType"] = kResultComplete;
  if (!server_info_.is_null()) {
    result["_meta"] = json::object{{kServerInfoKey, server_info_}};
  }
}

std::string_view ProtocolState::client_name() const {
  const json::object* info = client_info_.if_object();
  const std::string_view name =
      info != nullptr ? string_member(*info, "name").value_or(std::string_view()) : "";
  return name.empty() ? std::string_view(assumed_client_) : name;
}

std::vector<std::string> ProtocolState::tools_list_changed() const {
  std::vector<std::string> messages;
  if (session_era_ == Era::kLegacy) {
    messages.push_back(to_json(json::object{{"jsonrpc", "2.0"}, {"method", kToolsListChanged}}));
    return messages;
  }
  for (const ListenStream& stream : streams_) {
    if (!stream.tools_list_changed || !stream.acknowledged) continue;
    const json::object message{
        {"jsonrpc", "2.0"},
        {"method", kToolsListChanged},
        {"params", json::object{{"_meta", json::object{{kSubscriptionIdKey, stream.id}}}}}};
    messages.push_back(to_json(message));
  }
  return messages;
}

ProtocolState::ListenStream* ProtocolState::find_stream(const json::value& id) {
  const auto stream = std::find_if(streams_.begin(), streams_.end(),
                                   [&](const ListenStream& s) { return s.id == id; });
  return stream != streams_.end() ? &*stream : nullptr;
}

void ProtocolState::end_stream(const json::value& id) {
  std::erase_if(streams_, [&](const ListenStream& stream) { return stream.id == id; });
}

}  // namespace ctxguard::mcp
