#include "proxy/interceptor.hpp"

// tools/list and the instructions: what ctxguard changes in them, and what they take in the
// model's context before any call (docs/protocol.md sections 4 and 8, docs/telemetry.md).

#include <spdlog/spdlog.h>

#include <fmt/format.h>
#include "budget/token_estimator.hpp"

#include "budget/answer_size.hpp"
#include "mcp/instructions.hpp"
#include "pipeline/metadata.hpp"
#include "support/json_pointer.hpp"

namespace ctxguard::proxy {

namespace json = boost::json;

bool Interceptor::rewrite_tool_list(json::object& result, const Answer& answer) {
  listing_.served.add_page(result);
  // The client is the one stdio peer: the latest name it gave is the one that asked.
  const mcp::ToolListEdit edit = tool_list_.edit(result, answer.profile, protocol_.client_name());
  if (edit.last_page) {
    if (edit.name_collision) {
      spdlog::warn(
          "the server has a tool named like one of ctxguard's; ctxguard's are called {}, {} "
          "and {}",
          edit.names.fetch, edit.names.search, edit.names.call);
    }
    pipeline_.set_fetch_tool_name(edit.names.fetch);
    own_tools_.set_fetch_name(edit.names.fetch);
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
  listing_.sent.add_page(result);
  if (edit.last_page) record_tool_list(answer);
  return edit.changed;
}

void Interceptor::record_tool_list(const Answer& answer) {
  const std::size_t budget = answer.profile.global().tool_list_budget;
  telemetry::CallEvent event =
      records_.make(telemetry::CallKind::kToolsList, "tools/list", answer.id, answer.line.wall_now);
  event.items_total = listing_.sent.tools();
  event.original_tokens = listing_.served.tokens();
  event.final_tokens = listing_.sent.tokens();
  event.original_bytes = listing_.served.bytes();
  event.final_bytes = listing_.sent.bytes();
  for (const pipeline::ToolSize& tool : listing_.sent.largest()) {
    event.largest_tools.push_back({tool.name, tool.tokens});
  }
  event.instructions_tokens = instructions_tokens_;
  event.budget = budget;
  event.over_budget = budget != 0 && event.final_tokens + instructions_tokens_.value_or(0) > budget;
  event.server_latency = answer.route.elapsed;
  listing_ = {};
  records_.emit(std::move(event));
}

bool Interceptor::rewrite_instructions(json::object& result, const config::Profile& profile) {
  const mcp::OwnToolNames& names = tool_list_.own_tool_names();
  const mcp::ListingNotes notes{.mode = profile.global().tool_list,
                                .search_tool = names.search,
                                .call_tool = names.call,
                                .shared_guidance = tool_list_.shared_guidance(),
                                .shared_parameters = tool_list_.shared_parameters()};
  const bool changed = (profile.enforces_any() || notes.mode != config::ToolListMode::kFull) &&
                       mcp::add_instructions(result, own_tools_.fetch_name(), notes);
  const json::value* instructions = result.if_contains("instructions");
  instructions_tokens_ = instructions != nullptr && instructions->is_string()
                             ? budget::estimate_tokens(instructions->get_string())
                             : 0;
  return changed;
}

Interceptor::OwnCall Interceptor::take_client_message(jsonrpc::Message& message,
                                                      LineContext& line) {
  if (!message.batch && message.envelopes.front().kind == jsonrpc::Kind::kNotification &&
      discovery_.drops_client_notification(message.envelopes.front().method)) {
    spdlog::debug("the client's {} dropped: ctxguard sent the server one before listing its tools",
                  message.envelopes.front().method);
    return {Verdict{Verdict::Action::kDrop, {}}};
  }
  const mcp::Era era = observe_client(message);
  if (auto held = hold_first_listing(message, era)) return {std::move(held)};
  OwnTools::Outcome own = own_tools_.answer(message, era, *profile_, line);
  if (own.reply) return {Verdict{Verdict::Action::kReply, std::move(*own.reply)}};
  return {std::nullopt, own.redirected};
}

}  // namespace ctxguard::proxy
