#include "proxy/interceptor.hpp"

// tools/list and the instructions: what ctxguard changes in them, and what they take in the
// model's context before any call (docs/protocol.md sections 4 and 8, docs/telemetry.md).

#include <spdlog/spdlog.h>

#include "budget/token_estimator.hpp"
#include "mcp/instructions.hpp"

namespace ctxguard::proxy {

namespace json = boost::json;

bool Interceptor::rewrite_tool_list(json::object& result, const Answer& answer) {
  listing_.served.add_page(result);
  // The client is the one stdio peer: the latest name it gave is the one that asked.
  const mcp::ToolListEdit edit = tool_list_.edit(result, answer.profile, protocol_.client_name());
  if (edit.fetch_tool_added) {
    if (edit.name_collision) {
      spdlog::warn("the server has its own tool named {}; ctxguard's is called {}",
                   mcp::kFetchToolName, edit.fetch_tool_name);
    }
    pipeline_.set_fetch_tool_name(edit.fetch_tool_name);
    fetch_.set_name(edit.fetch_tool_name);
  }
  if (edit.output_schemas_removed > 0) {
    spdlog::debug("tools/list: removed {} outputSchema(s) so rewritten results validate",
                  edit.output_schemas_removed);
  }
  listing_.sent.add_page(result);
  if (edit.last_page) record_tool_list(answer);
  return edit.changed;
}

void Interceptor::record_tool_list(const Answer& answer) {
  const std::size_t budget = answer.profile.global().tool_list_budget;
  telemetry::CallEvent event =
      new_event(telemetry::CallKind::kToolsList, "tools/list", answer.id, answer.wall_now);
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
  emit(std::move(event));
}

bool Interceptor::rewrite_instructions(json::object& result, const config::Profile& profile) {
  const bool changed = profile.enforces_any() && mcp::add_instructions(result, fetch_.name());
  const json::value* instructions = result.if_contains("instructions");
  instructions_tokens_ = instructions != nullptr && instructions->is_string()
                             ? budget::estimate_tokens(instructions->get_string())
                             : 0;
  return changed;
}

}  // namespace ctxguard::proxy
