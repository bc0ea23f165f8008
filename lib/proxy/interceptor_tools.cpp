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
    fetch_.set_name(edit.names.fetch);
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
  const mcp::OwnToolNames& names = tool_list_.own_tool_names();
  const mcp::ListingNotes notes{.mode = profile.global().tool_list,
                                .search_tool = names.search,
                                .call_tool = names.call,
                                .shared_guidance = tool_list_.shared_guidance(),
                                .shared_parameters = tool_list_.shared_parameters()};
  const bool changed = (profile.enforces_any() || notes.mode != config::ToolListMode::kFull) &&
                       mcp::add_instructions(result, fetch_.name(), notes);
  const json::value* instructions = result.if_contains("instructions");
  instructions_tokens_ = instructions != nullptr && instructions->is_string()
                             ? budget::estimate_tokens(instructions->get_string())
                             : 0;
  return changed;
}

Interceptor::OwnCall Interceptor::answer_catalog_call(jsonrpc::Message& message, mcp::Era era,
                                                      WallClock::time_point wall_now,
                                                      Clock::time_point started) {
  const auto call = tool_call_of(message);
  if (!call) return {};
  const mcp::OwnToolNames& names = tool_list_.own_tool_names();
  const mcp::ToolCatalog& catalog = tool_list_.catalog();
  // The mode in force, or the one the client's list came in (a reload may have changed it since).
  const bool lazy =
      tool_list_.lazy_listed() || profile_->global().tool_list == config::ToolListMode::kLazy;
  const std::string_view search = lazy ? std::string_view(names.search) : std::string_view();
  if (call->name == fetch_.name()) {
    const json::object* args = call->arguments.if_object();
    const json::value* tool = args != nullptr ? args->if_contains("tool") : nullptr;
    if (tool == nullptr || !tool->is_string() || args->contains("cursor")) return {};
    return {reply_lookup(*call, pipeline::describe_tool(catalog, tool->get_string(), search), era,
                         wall_now, started)};
  }
  if (!lazy) return {};
  if (call->name == names.search) {
    const config::Profile& profile = *profile_;
    const auto budget =
        budget::FitBudget::of(profile.for_call(protocol_.client_name(), names.search));
    return {reply_lookup(*call, pipeline::search_tools(catalog, call->arguments, budget), era,
                         wall_now, started)};
  }
  if (call->name != names.call) return {};
  return redirect_call(*call, era, wall_now, started);
}

Interceptor::OwnCall Interceptor::redirect_call(const ToolCallRequest& call, mcp::Era era,
                                                WallClock::time_point wall_now,
                                                Clock::time_point started) {
  const mcp::OwnToolNames& names = tool_list_.own_tool_names();
  const mcp::ToolCatalog& catalog = tool_list_.catalog();
  const json::object* args = call.arguments.if_object();
  const json::value* target = args != nullptr ? args->if_contains("name") : nullptr;
  const json::value* arguments = args != nullptr ? args->if_contains("arguments") : nullptr;
  if (target == nullptr || !target->is_string() ||
      (arguments != nullptr && !arguments->is_object())) {
    pipeline::ToolLookup refusal{
        pipeline::text_tool_result(
            fmt::format("{} takes {{\"name\": a tool's name, \"arguments\": {{...}}}}.",
                        names.call),
            pipeline::ToolResult::kError),
        0, 0, true};
    return {reply_lookup(call, std::move(refusal), era, wall_now, started)};
  }
  // Before any listing ctxguard knows no tool: the server says whether it has this one.
  if (catalog.size() > 0 && catalog.find(target->get_string()) == nullptr) {
    return {reply_lookup(call, pipeline::unknown_tool(catalog, target->get_string(), names.search),
                         era, wall_now, started)};
  }
  // The server gets the call it would have had with the tool listed: name and arguments, the
  // rest of params (_meta, task) as they came.
  json::value name = *target;
  json::value given = arguments != nullptr ? *arguments : json::value();
  call.params["name"] = std::move(name);
  if (given.is_null()) {
    erase_member(call.params, "arguments");
  } else {
    call.params["arguments"] = std::move(given);
  }
  return {std::nullopt, true};
}

Verdict Interceptor::reply_lookup(const ToolCallRequest& call, pipeline::ToolLookup&& lookup,
                                  mcp::Era era, WallClock::time_point wall_now,
                                  Clock::time_point started) {
  std::string tool(call.name);
  const json::value id = call.id;
  Verdict verdict = own_reply(id, std::move(lookup.result), era, tool, wall_now);
  telemetry::CallEvent event = new_event(telemetry::CallKind::kFetch, tool, id, wall_now);
  event.stages = {lookup.refused ? "fetch-error" : "tools"};
  event.outcome = lookup.refused ? telemetry::Outcome::kFetchFailed : telemetry::Outcome::kFetched;
  if (lookup.refused) event.error = "tool";
  event.items_total = lookup.found;
  event.items_shown = lookup.shown;
  event.final_bytes = verdict.text.size();
  event.proxy_latency = Clock::now() - started;
  emit(std::move(event));
  return verdict;
}

std::optional<Interceptor::ToolCallRequest> Interceptor::tool_call_of(jsonrpc::Message& message) {
  // Batches (gone from MCP since 2025-06-18) are not split: a call inside one reaches the server.
  if (message.batch || message.envelopes.front().kind != jsonrpc::Kind::kRequest ||
      message.envelopes.front().method != session::kToolsCall) {
    return std::nullopt;
  }
  json::value* params = message.document.as_object().if_contains("params");
  json::object* params_object = params != nullptr ? params->if_object() : nullptr;
  const json::value* name = params_object != nullptr ? params_object->if_contains("name") : nullptr;
  if (name == nullptr || !name->is_string()) return std::nullopt;
  static const json::value kNoArguments;
  const json::value* arguments = params_object->if_contains("arguments");
  return ToolCallRequest{message.envelopes.front().id, *params_object, name->get_string(),
                         arguments != nullptr ? *arguments : kNoArguments};
}

Verdict Interceptor::own_reply(const json::value& id, json::object&& result, mcp::Era era,
                               std::string_view tool, WallClock::time_point wall_now) {
  protocol_.stamp_own_result(result, era);
  if (sampler_ != nullptr && sampler_->draw()) {
    sampler_->offer(wall_now, tool, protocol_.client_name(), result);
  }
  json::object response{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
  Verdict verdict{Verdict::Action::kReply, {}};
  write_json(verdict.text, response);
  return verdict;
}

Interceptor::OwnCall Interceptor::take_client_message(jsonrpc::Message& message,
                                                      Clock::time_point now,
                                                      WallClock::time_point wall_now,
                                                      Clock::time_point started) {
  if (!message.batch && message.envelopes.front().kind == jsonrpc::Kind::kNotification &&
      discovery_.drops_client_notification(message.envelopes.front().method)) {
    spdlog::debug("the client's {} dropped: ctxguard sent the server one before listing its tools",
                  message.envelopes.front().method);
    return {Verdict{Verdict::Action::kDrop, {}}};
  }
  const mcp::Era era = observe_client(message);
  if (auto held = hold_first_listing(message, era)) return {std::move(held)};
  try {
    OwnCall catalog_call = answer_catalog_call(message, era, wall_now, started);
    if (catalog_call.reply || catalog_call.redirected) return catalog_call;
    return {answer_fetch(message, era, now, wall_now, started)};
  } catch (const std::exception& error) {
    // A bug or an allocation failure must cost this one answer, never the session.
    spdlog::error("answering {} failed: {}", fetch_.name(), error.what());
    return {fetch_failed(message.envelopes.front().id, era, wall_now, started)};
  }
}

}  // namespace ctxguard::proxy
