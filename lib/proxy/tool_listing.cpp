#include "proxy/tool_listing.hpp"

// tools/list and the instructions: what ctxguard changes in them, and what they take in the
// model's context before any call (docs/protocol.md sections 4 and 8, docs/telemetry.md).

#include <utility>

#include <spdlog/spdlog.h>

#include "budget/token_estimator.hpp"
#include "mcp/instructions.hpp"
#include "mcp/tool_compaction.hpp"
#include "support/json_writer.hpp"

namespace ctxguard::proxy {

namespace json = boost::json;
using session::Direction;

bool ToolListing::changes_listing(const config::Profile& next,
                                  const config::Profile& running) const {
  return !mcp::lists_tools_alike(next, running, protocol_.client_name());
}

bool ToolListing::rewrite_page(json::object& result, const Answer& answer) {
  pages_.served.add_page(result);
  // The client is the one stdio peer: the latest name it gave is the one that asked.
  const mcp::ToolListEdit edit = editor_.edit(result, answer.profile, protocol_.client_name());
  if (edit.last_page && edit.name_collision) {
    spdlog::warn(
        "the server has a tool named like one of ctxguard's; ctxguard's are called {}, {} and {}",
        edit.names.fetch, edit.names.search, edit.names.call);
  }
  if (edit.output_schemas_removed > 0) {
    spdlog::debug("tools/list: removed {} outputSchema(s) so rewritten results validate",
                  edit.output_schemas_removed);
  }
  if (edit.compaction.keywords_removed + edit.compaction.definitions_removed > 0 ||
      edit.compaction.description_shortened || edit.compaction.shared_removed > 0) {
    spdlog::debug(
        "tools/list compact: {} schema keywords and {} unused definitions removed, {} shared "
        "sentences left to the instructions{}",
        edit.compaction.keywords_removed, edit.compaction.definitions_removed,
        edit.compaction.shared_removed,
        edit.compaction.description_shortened ? ", descriptions shortened" : "");
  }
  pages_.sent.add_page(result);
  if (edit.last_page) record(answer);
  return edit.changed;
}

void ToolListing::record(const Answer& answer) {
  const std::size_t budget = answer.profile.process().tool_list_budget;
  telemetry::CallEvent event =
      records_.make(telemetry::CallKind::kToolsList, "tools/list", answer.id, answer.line.wall_now);
  event.items_total = pages_.sent.tools();
  event.original_tokens = pages_.served.tokens();
  event.final_tokens = pages_.sent.tokens();
  event.original_bytes = pages_.served.bytes();
  event.final_bytes = pages_.sent.bytes();
  for (const mcp::ToolSize& tool : pages_.sent.largest()) {
    event.largest_tools.push_back({tool.name, tool.tokens});
  }
  event.instructions_tokens = instructions_tokens_;
  event.budget = budget;
  event.over_budget = budget != 0 && event.final_tokens + instructions_tokens_.value_or(0) > budget;
  event.server_latency = answer.route.elapsed;
  pages_ = {};
  records_.emit(std::move(event));
}

bool ToolListing::rewrite_instructions(json::object& result, const config::Profile& profile) {
  const mcp::OwnToolNames& names = editor_.own_tool_names();
  const mcp::ListingNotes notes{.mode = profile.process().tool_list,
                                .search_tool = names.search,
                                .call_tool = names.call,
                                .shared_guidance = editor_.shared_guidance(),
                                .shared_parameters = editor_.shared_parameters()};
  const bool changed = (profile.enforces_any() || notes.mode != config::ToolListMode::kFull) &&
                       mcp::add_instructions(result, names.fetch, notes);
  const json::value* instructions = result.if_contains("instructions");
  instructions_tokens_ = instructions != nullptr && instructions->is_string()
                             ? budget::estimate_tokens(instructions->get_string())
                             : 0;
  return changed;
}

// compact mode: ctxguard lists the server's tools before the client gets the initialize (or
// server/discover) result, so its instructions say once the guidance the descriptions repeat.

bool ToolListing::holds_for_discovery(const json::object& result, const Answer& answer) const {
  if (answer.profile.process().tool_list != config::ToolListMode::kCompact || answer.in_batch ||
      discovery_.phase() != mcp::ToolDiscovery::Phase::kIdle) {
    return false;
  }
  // A server without tools answers no tools/list.
  const json::value* capabilities = result.if_contains("capabilities");
  return capabilities != nullptr && capabilities->is_object() &&
         capabilities->get_object().contains("tools");
}

bool ToolListing::rewrite_discovery_result(json::object& result, const Answer& answer,
                                           const config::ProfilePtr& running) {
  if (!holds_for_discovery(result, answer)) return rewrite_instructions(result, answer.profile);
  answer.line.discovery_start = LineContext::DiscoveryStart{
      answer.route.method == session::kInitialize ? mcp::Era::kLegacy : mcp::Era::kModern,
      answer.route.context ? answer.route.context : running};
  return false;  // held: start_discovery takes the message once the line is relayed
}

void ToolListing::remember_discover_meta(const json::object& request) {
  const json::value* params = request.if_contains("params");
  const json::value* meta = params != nullptr && params->is_object()
                                ? params->get_object().if_contains("_meta")
                                : nullptr;
  discover_meta_ = meta != nullptr && meta->is_object() ? meta->get_object() : json::object{};
}

Verdict ToolListing::start_discovery(jsonrpc::Message& message, LineContext::DiscoveryStart start,
                                     Clock::time_point now) {
  discovery_profile_ = std::move(start.profile);
  deadline_ = now + kDiscoveryDeadline;
  spdlog::debug("toolList compact: listing the server's tools before its {} result goes out",
                start.era == mcp::Era::kLegacy ? "initialize" : "server/discover");
  Verdict verdict{Verdict::Action::kDrop, {}};
  verdict.to_sender =
      discovery_.start(std::move(message.document), mcp::ToolDiscovery::Held::kServerResult,
                       start.era, start.era == mcp::Era::kModern ? &discover_meta_ : nullptr);
  return verdict;
}

std::optional<Verdict> ToolListing::hold_first_listing(jsonrpc::Message& message, mcp::Era era,
                                                       const config::ProfilePtr& profile,
                                                       Clock::time_point now) {
  if (era != mcp::Era::kModern || profile->process().tool_list != config::ToolListMode::kCompact ||
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
  discovery_profile_ = profile;
  deadline_ = now + kDiscoveryDeadline;
  spdlog::debug("toolList compact: listing the server's tools before the client's tools/list");
  Verdict verdict{Verdict::Action::kDrop, {}};
  verdict.to_destination = discovery_.start(
      std::move(message.document), mcp::ToolDiscovery::Held::kClientRequest, era, &request_meta);
  return verdict;
}

std::optional<Verdict> ToolListing::on_server_message(const jsonrpc::Message& message,
                                                      Clock::time_point now) {
  mcp::ToolDiscovery::Step step = discovery_.on_server_message(message);
  if (!step.ours) return std::nullopt;
  if (step.finished) return release(now);
  Verdict verdict{Verdict::Action::kDrop, {}};
  if (step.next_page) verdict.to_sender.push_back(std::move(*step.next_page));
  return verdict;
}

bool ToolListing::holds_server_lines() const {
  return discovery_.phase() == mcp::ToolDiscovery::Phase::kListing &&
         discovery_.held_kind() == mcp::ToolDiscovery::Held::kServerResult;
}

Verdict ToolListing::release(Clock::time_point now) {
  const mcp::ToolDiscovery::Held held = discovery_.held_kind();
  mcp::ToolDiscovery::Outcome outcome = discovery_.finish();
  deadline_.reset();
  if (outcome.complete) {
    editor_.set_shared_guidance(mcp::shared_sentences(outcome.tools));
    editor_.set_shared_parameters(mcp::shared_parameters(outcome.tools));
    spdlog::info(
        "toolList compact: {} tools listed, {} sentences and {} parameter descriptions said "
        "once in the instructions",
        outcome.tools.size(), editor_.shared_guidance().size(), editor_.shared_parameters().size());
  } else {
    spdlog::warn(
        "toolList compact: the server's tools could not be listed first; its descriptions keep "
        "the guidance they repeat");
  }
  const config::ProfilePtr profile = std::exchange(discovery_profile_, nullptr);
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

Released ToolListing::on_deadline(Clock::time_point now) {
  Released released = end(now);
  if (!released.to_client.empty() || !released.to_server.empty()) {
    spdlog::warn("the server did not list its tools within {} ms; going on without the listing",
                 kDiscoveryDeadline.count());
  }
  return released;
}

Released ToolListing::end(Clock::time_point now) {
  if (discovery_.phase() != mcp::ToolDiscovery::Phase::kListing) return {};
  Verdict verdict = release(now);
  Released released;
  if (verdict.action == Verdict::Action::kSend) {
    released.to_client.push_back(std::move(verdict.text));
  }
  for (std::string& line : verdict.to_destination) released.to_client.push_back(std::move(line));
  released.to_server = std::move(verdict.to_sender);
  return released;
}

}  // namespace ctxguard::proxy
