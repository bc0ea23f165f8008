#include "proxy/interceptor.hpp"

// compact mode: ctxguard lists the server's tools before the client gets the initialize (or
// server/discover) result, so its instructions say once the guidance the descriptions repeat
// (mcp::ToolDiscovery, docs/protocol.md 4.2).

#include <spdlog/spdlog.h>

#include "mcp/tool_compaction.hpp"
#include "support/json_writer.hpp"

namespace ctxguard::proxy {

namespace json = boost::json;

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

void Interceptor::remember_discover_meta(const json::object& request) {
  const json::value* params = request.if_contains("params");
  const json::value* meta = params != nullptr && params->is_object()
                                ? params->get_object().if_contains("_meta")
                                : nullptr;
  discover_meta_ = meta != nullptr && meta->is_object() ? meta->get_object() : json::object{};
}

Verdict Interceptor::start_discovery(jsonrpc::Message& message) {
  const DiscoveryStart start = std::move(*discovery_start_);
  discovery_start_.reset();
  discovery_profile_ = start.profile;
  spdlog::debug("toolList compact: listing the server's tools before its {} result goes out",
                start.era == mcp::Era::kLegacy ? "initialize" : "server/discover");
  Verdict verdict{Verdict::Action::kDrop, {}};
  verdict.to_sender = discovery_.start(std::move(message.document), start.era,
                                       start.era == mcp::Era::kModern ? &discover_meta_ : nullptr);
  verdict.discovery_started = true;
  return verdict;
}

std::optional<Verdict> Interceptor::on_discovery_answer(const jsonrpc::Message& message) {
  mcp::ToolDiscovery::Step step = discovery_.on_server_message(message);
  if (!step.ours) return std::nullopt;
  if (step.finished) return release_discovery();
  Verdict verdict{Verdict::Action::kDrop, {}};
  if (step.next_page) verdict.to_sender.push_back(std::move(*step.next_page));
  return verdict;
}

Verdict Interceptor::release_discovery() {
  mcp::ToolDiscovery::Outcome outcome = discovery_.finish();
  if (outcome.complete) {
    tool_list_.set_shared_guidance(mcp::shared_sentences(outcome.tools));
    spdlog::info("toolList compact: {} tools listed, {} sentences said once in the instructions",
                 outcome.tools.size(), tool_list_.shared_guidance().size());
  } else {
    spdlog::warn(
        "toolList compact: the server's tools could not be listed before the instructions went "
        "out; its descriptions keep the guidance they repeat");
  }
  json::value* result =
      outcome.response.is_object() ? outcome.response.get_object().if_contains("result") : nullptr;
  if (result != nullptr && result->is_object() && discovery_profile_) {
    rewrite_instructions(result->get_object(), *discovery_profile_);
  }
  discovery_profile_.reset();
  Verdict verdict{Verdict::Action::kSend, to_json(outcome.response)};
  verdict.to_destination = std::move(outcome.held);
  return verdict;
}

std::vector<std::string> Interceptor::end_discovery() {
  if (discovery_.phase() != mcp::ToolDiscovery::Phase::kListing) return {};
  Verdict verdict = release_discovery();
  std::vector<std::string> lines{std::move(verdict.text)};
  for (std::string& line : verdict.to_destination) lines.push_back(std::move(line));
  return lines;
}

}  // namespace ctxguard::proxy
