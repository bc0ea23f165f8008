#include "proxy/own_tools.hpp"

#include <exception>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "mcp/tool_result.hpp"
#include "pipeline/metadata.hpp"
#include "session/session_router.hpp"
#include "support/json_pointer.hpp"
#include "support/json_writer.hpp"

namespace ctxguard::proxy {

namespace json = boost::json;
using telemetry::CallEvent;
using telemetry::CallKind;

namespace {

// The tool whose settings apply to a fetch record ("ctxguard_fetch:<tool>").
std::string_view fetched_tool(std::string_view record_tool) {
  const std::size_t colon = record_tool.find(':');
  return colon == std::string_view::npos ? std::string_view() : record_tool.substr(colon + 1);
}

}  // namespace

OwnTools::Outcome OwnTools::answer(jsonrpc::Message& message, mcp::Era era,
                                   const config::Profile& profile, LineContext& line) {
  auto call = tool_call_of(message);
  if (!call) return {};
  try {
    Outcome catalog_call = answer_catalog_call(*call, era, profile, line);
    if (catalog_call.reply || catalog_call.redirected) return catalog_call;
    return {answer_fetch(*call, era, profile, line)};
  } catch (const std::exception& error) {
    // A bug or an allocation failure must cost this one answer, never the session.
    spdlog::error("answering {} failed: {}", fetch_.name(), error.what());
    return {fetch_failed(call->id, era, line)};
  }
}

std::optional<OwnTools::ToolCall> OwnTools::tool_call_of(jsonrpc::Message& message) {
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
  return ToolCall{message.envelopes.front().id, *params_object, name->get_string(),
                  arguments != nullptr ? *arguments : kNoArguments};
}

std::optional<std::string> OwnTools::answer_fetch(const ToolCall& call, mcp::Era era,
                                                  const config::Profile& profile,
                                                  LineContext& line) {
  if (call.name != fetch_.name()) return std::nullopt;
  const std::string_view client = protocol_.client_name();
  pipeline::FetchAnswer answer = fetch_.answer(
      call.arguments,
      [&profile, client](std::string_view tool) -> const config::BudgetSettings& {
        return profile.for_call(client, tool);
      },
      line.now, line.wall_now);
  std::string response = reply(call.id, std::move(answer.result), era, fetch_.name(), line);
  CallEvent event = records_.make(CallKind::kFetch, answer.record.tool, call.id, line.wall_now);
  const std::string_view tool = fetched_tool(event.tool);
  event.budget = profile.configured_for_call(client, tool).token_budget;
  take_record(event, std::move(answer.record));
  event.final_bytes = response.size();
  event.proxy_latency = line.elapsed();
  records_.emit(std::move(event));
  return response;
}

std::string OwnTools::fetch_failed(const json::value& id, mcp::Era era, LineContext& line) {
  json::object result = mcp::text_tool_result(
      "ctxguard failed to read its cache for this cursor. Call the original tool again.",
      mcp::ToolResult::kError);
  protocol_.stamp_own_result(result, era);
  const json::object response{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
  std::string text = to_json(response);
  CallEvent event = records_.make(CallKind::kFetch, fetch_.name(), id, line.wall_now);
  event.stages = {"fetch-error"};
  event.outcome = telemetry::Outcome::kFetchFailed;
  event.error = "internal";
  event.final_bytes = text.size();
  event.proxy_latency = line.elapsed();
  records_.emit(std::move(event));
  return text;
}

OwnTools::Outcome OwnTools::answer_catalog_call(ToolCall& call, mcp::Era era,
                                                const config::Profile& profile, LineContext& line) {
  const mcp::OwnToolNames& names = tool_list_.own_tool_names();
  const mcp::ToolCatalog& catalog = tool_list_.catalog();
  // The mode in force, or the one the client's list came in (a reload may have changed it since).
  const bool lazy =
      tool_list_.lazy_listed() || profile.process().tool_list == config::ToolListMode::kLazy;
  const std::string_view search = lazy ? std::string_view(names.search) : std::string_view();
  if (call.name == fetch_.name()) {
    const json::object* args = call.arguments.if_object();
    const json::value* tool = args != nullptr ? args->if_contains("tool") : nullptr;
    if (tool == nullptr || !tool->is_string() || args->contains("cursor")) return {};
    return {reply_lookup(call, mcp::describe_tool(catalog, tool->get_string(), search), era, line)};
  }
  if (!lazy) return {};
  if (call.name == names.search) {
    const auto budget =
        budget::FitBudget::of(profile.for_call(protocol_.client_name(), names.search));
    return {reply_lookup(call, mcp::search_tools(catalog, call.arguments, budget), era, line)};
  }
  if (call.name != names.call) return {};
  return redirect_call(call, era, line);
}

OwnTools::Outcome OwnTools::redirect_call(ToolCall& call, mcp::Era era, LineContext& line) {
  const mcp::OwnToolNames& names = tool_list_.own_tool_names();
  const mcp::ToolCatalog& catalog = tool_list_.catalog();
  const json::object* args = call.arguments.if_object();
  const json::value* target = args != nullptr ? args->if_contains("name") : nullptr;
  const json::value* arguments = args != nullptr ? args->if_contains("arguments") : nullptr;
  if (target == nullptr || !target->is_string() ||
      (arguments != nullptr && !arguments->is_object())) {
    mcp::ToolLookup refusal{
        mcp::text_tool_result(
            fmt::format("{} takes {{\"name\": a tool's name, \"arguments\": {{...}}}}.",
                        names.call),
            mcp::ToolResult::kError),
        0, 0, true};
    return {reply_lookup(call, std::move(refusal), era, line)};
  }
  // Before any listing ctxguard knows no tool: the server says whether it has this one.
  if (catalog.size() > 0 && catalog.find(target->get_string()) == nullptr) {
    return {reply_lookup(call, mcp::unknown_tool(catalog, target->get_string(), names.search), era,
                         line)};
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

std::string OwnTools::reply_lookup(const ToolCall& call, mcp::ToolLookup&& lookup, mcp::Era era,
                                   LineContext& line) {
  std::string tool(call.name);
  const json::value id = call.id;
  std::string response = reply(id, std::move(lookup.result), era, tool, line);
  CallEvent event = records_.make(CallKind::kFetch, tool, id, line.wall_now);
  event.stages = {lookup.refused ? "fetch-error" : "tools"};
  event.outcome = lookup.refused ? telemetry::Outcome::kFetchFailed : telemetry::Outcome::kFetched;
  if (lookup.refused) event.error = "tool";
  event.items_total = lookup.found;
  event.items_shown = lookup.shown;
  event.final_bytes = response.size();
  event.proxy_latency = line.elapsed();
  records_.emit(std::move(event));
  return response;
}

std::string OwnTools::reply(const json::value& id, json::object&& result, mcp::Era era,
                            std::string_view tool, LineContext& line) {
  protocol_.stamp_own_result(result, era);
  if (sampler_ != nullptr && sampler_->draw()) {
    sampler_->offer(line.wall_now, tool, protocol_.client_name(), result);
  }
  json::object response{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
  std::string text;
  write_json(text, response);
  return text;
}

}  // namespace ctxguard::proxy
