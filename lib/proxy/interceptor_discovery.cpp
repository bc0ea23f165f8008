#include "proxy/interceptor.hpp"

// compact mode: ctxguard lists the server's tools before the client gets the initialize (or
// server/discover) result, so its instructions say once the guidance the descriptions repeat
// (mcp::ToolDiscovery, docs/protocol.md 4.2).

#include <spdlog/spdlog.h>

#include "mcp/tool_compaction.hpp"
#include "support/json_writer.hpp"

namespace ctxguard::proxy {

namespace json = boost::json;
using session::Direction;

bool Interceptor::holds_for_discovery(const json::object& result, const Answer& answer) const {
  if (answer.profile.global().tool_list != config::ToolListMode::kCompact || answer.in_batch ||
      discovery_.phase() != mcp::ToolDiscovery::Phase::kIdle) {
    return false;
  }
  // A server without tools answers no tools/list.
  const json::value* capabilities = result.if_contains("capabilities");
  return capabilities != nullptr && capabilities->is_object() &&
         capabilities->get_object().contains("tools");
}

bool Interceptor::rewrite_discovery_result(json::object& result, const Answer& answer) {
  if (!holds_for_discovery(result, answer)) return rewrite_instructions(result, answer.profile);
  answer.line.discovery_start = LineContext::DiscoveryStart{
      answer.route.method == session::kInitialize ? mcp::Era::kLegacy : mcp::Era::kModern,
      answer.route.context ? answer.route.context : profile_};
  return false;  // held: start_discovery takes the message once the line is relayed
}

void Interceptor::remember_discover_meta(const json::object& request) {
  const json::value* params = request.if_contains("params");
  const json::value* meta = params != nullptr && params->is_object()
                                ? params->get_object().if_contains("_meta")
                                : nullptr;
  discover_meta_ = meta != nullptr && meta->is_object() ? meta->get_object() : json::object{};
}

Verdict Interceptor::start_discovery(jsonrpc::Message& message, LineContext::DiscoveryStart start) {
  discovery_profile_ = std::move(start.profile);
  spdlog::debug("toolList compact: listing the server's tools before its {} result goes out",
                start.era == mcp::Era::kLegacy ? "initialize" : "server/discover");
  Verdict verdict{Verdict::Action::kDrop, {}};
  verdict.to_sender =
      discovery_.start(std::move(message.document), mcp::ToolDiscovery::Held::kServerResult,
                       start.era, start.era == mcp::Era::kModern ? &discover_meta_ : nullptr);
  verdict.discovery_started = true;
  return verdict;
}

std::optional<Verdict> Interceptor::hold_first_listing(jsonrpc::Message& message, mcp::Era era) {
  if (era != mcp::Era::kModern || profile_->global().tool_list != config::ToolListMode::kCompact ||
      discovery_.phase() != mcp::ToolDiscovery::Phase::kIdle || message.batch ||
      message.envelopes.front().kind != jsonrpc::Kind::kRequest ||
      message.envelopes.front().method != session::kToolsList) {
    return std::nullopt;
  }
  const json::value* params = message.document.as_object().if_contains("params");
  const json::object* params_object = params != nullptr ? params->if_object() : nullptr;
  if (params_object != nullptr && params_object->contains("cursor")) return std::nullopt;
  const json::value* meta =
      params_object != nullptr ? params_object->if_contains("_meta") : nullptr;
  const json::object request_meta =
      meta != nullptr && meta->is_object() ? meta->get_object() : json::object{};
  discovery_profile_ = profile_;
  spdlog::debug("toolList compact: listing the server's tools before the client's tools/list");
  Verdict verdict{Verdict::Action::kDrop, {}};
  verdict.to_destination = discovery_.start(
      std::move(message.document), mcp::ToolDiscovery::Held::kClientRequest, era, &request_meta);
  verdict.discovery_started = true;
  return verdict;
}

std::optional<Verdict> Interceptor::on_discovery_answer(const jsonrpc::Message& message,
                                                        Clock::time_point now) {
  mcp::ToolDiscovery::Step step = discovery_.on_server_message(message);
  if (!step.ours) return std::nullopt;
  if (step.finished) return release_discovery(now);
  Verdict verdict{Verdict::Action::kDrop, {}};
  if (step.next_page) verdict.to_sender.push_back(std::move(*step.next_page));
  return verdict;
}

Verdict Interceptor::release_discovery(Clock::time_point now) {
  const mcp::ToolDiscovery::Held held = discovery_.held_kind();
  mcp::ToolDiscovery::Outcome outcome = discovery_.finish();
  if (outcome.complete) {
    tool_list_.set_shared_guidance(mcp::shared_sentences(outcome.tools));
    tool_list_.set_shared_parameters(mcp::shared_parameters(outcome.tools));
    spdlog::info(
        "toolList compact: {} tools listed, {} sentences and {} parameter descriptions said "
        "once in the instructions",
        outcome.tools.size(), tool_list_.shared_guidance().size(),
        tool_list_.shared_parameters().size());
  } else {
    spdlog::warn(
        "toolList compact: the server's tools could not be listed first; its descriptions keep "
        "the guidance they repeat");
  }
  const config::ProfilePtr profile = std::move(discovery_profile_);
  discovery_profile_.reset();
  if (held == mcp::ToolDiscovery::Held::kClientRequest) {
    // Now on its way: routed like any request, so its answer is edited as a listing.
    std::string request = to_json(outcome.message);
    if (auto parsed = jsonrpc::parse_message(request))
      router_.observe(Direction::kClientToServer, *parsed, now, profile);
    Verdict verdict{Verdict::Action::kDrop, {}};
    verdict.to_sender.push_back(std::move(request));
    return verdict;
  }
  json::value* result =
      outcome.message.is_object() ? outcome.message.get_object().if_contains("result") : nullptr;
  if (result != nullptr && result->is_object() && profile) {
    rewrite_instructions(result->get_object(), *profile);
  }
  Verdict verdict{Verdict::Action::kSend, to_json(outcome.message)};
  verdict.to_destination = std::move(outcome.held);
  return verdict;
}

Interceptor::Released Interceptor::end_discovery(Clock::time_point now) {
  if (discovery_.phase() != mcp::ToolDiscovery::Phase::kListing) return {};
  Verdict verdict = release_discovery(now);
  Released released;
  if (verdict.action == Verdict::Action::kSend)
    released.to_client.push_back(std::move(verdict.text));
  for (std::string& line : verdict.to_destination) released.to_client.push_back(std::move(line));
  released.to_server = std::move(verdict.to_sender);
  return released;
}

}  // namespace ctxguard::proxy
