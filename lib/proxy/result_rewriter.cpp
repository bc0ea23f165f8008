#include "proxy/result_rewriter.hpp"

// The answers ctxguard may rewrite through the budget pipeline, and their call records
// (docs/protocol.md sections 2 and 3, docs/telemetry.md).

#include <string>
#include <utility>

#include "mcp/protocol_state.hpp"
#include "support/json_pointer.hpp"
#include "support/json_writer.hpp"

namespace ctxguard::proxy {

namespace json = boost::json;
using telemetry::CallEvent;
using telemetry::CallKind;

CallEvent& ResultRewriter::add_event(CallKind kind, std::string_view tool, const Answer& answer) {
  CallEvent& event =
      answer.line.events.emplace_back(records_.make(kind, tool, answer.id, answer.line.wall_now));
  event.original_bytes = answer.line_bytes;
  event.server_latency = answer.route.elapsed;
  return event;
}

bool ResultRewriter::rewrite(json::value& response, json::object* result, const Answer& answer) {
  const Route& route = answer.route;
  const config::Profile& profile = answer.profile;
  if (result == nullptr) {
    // An error response, or a malformed one: relayed as is, and counted for tool calls.
    if (route.method == session::kToolsCall || route.method == session::kTasksResult) {
      const bool task = route.method == session::kTasksResult;
      CallEvent& event = add_event(task ? CallKind::kTask : CallKind::kCall, route.subject, answer);
      event.outcome = telemetry::Outcome::kError;
      event.budget = profile.configured_for_call(event.client, route.subject).token_budget;
    }
    return false;
  }
  const std::string_view result_type = mcp::result_type(*result);
  // An interim answer asking the client for input: the call is not over (its retry, with the
  // input, is a call of its own), so it is neither shortened nor counted.
  if (result_type == mcp::kResultInputRequired) return false;
  if (route.method == session::kToolsCall) {
    // A task-augmented call answers with the task; the tool's result comes later, through
    // tasks/result (2025-11-25: {"task": {...}}) or tasks/get (the tasks extension: the task's
    // fields in the result itself, resultType "task").
    if (const json::value* task = result->if_contains("task");
        task != nullptr && task->is_object()) {
      task_tools_.remember(string_member(task->as_object(), "taskId").value_or(""), route.subject);
      return false;
    }
    if (result_type == mcp::kResultTask) {
      task_tools_.remember(string_member(*result, "taskId").value_or(""), route.subject);
      return false;
    }
    return rewrite_tool_result(response.as_object().at("result"), route.subject, answer,
                               add_event(CallKind::kCall, route.subject, answer));
  }
  if (route.method == session::kTasksResult) {
    const std::string tool = task_tools_.tool_of(route.subject);
    // Kept: a client may ask for the same result again (a retry after a lost answer).
    return rewrite_tool_result(response.as_object().at("result"), tool, answer,
                               add_event(CallKind::kTask, tool, answer));
  }
  if (route.method == session::kTasksGet) return rewrite_task_state(*result, answer);
  if (route.method == session::kResourcesRead) {
    // Both arms views: a std::string temporary here would leave `tool` dangling.
    const std::string_view name =
        route.subject.empty() ? std::string_view("resource") : std::string_view(route.subject);
    // Resources are no tool's: the global settings apply.
    if (profile.global().observe) return false;
    const pipeline::CallContext context{
        .tool = name, .rewrite = true, .now = answer.line.now, .wall_now = answer.line.wall_now};
    auto rewritten = pipeline_.process_resource(*result, profile.for_resources(), context);
    if (!rewritten) return false;  // only chunked resources are recorded
    response.as_object()["result"] = std::move(rewritten->result);
    CallEvent& event = add_event(CallKind::kResource, name, answer);
    event.budget = profile.global().token_budget;
    event.over_budget = rewritten->record.original_tokens > profile.for_resources().token_budget;
    take_record(event, std::move(rewritten->record));
    return true;
  }
  return false;
}

bool ResultRewriter::rewrite_task_state(json::object& state, const Answer& answer) {
  // The tasks extension's tasks/get: a completed task carries what the original request would
  // have answered, in `result`; of a tools/call that is a tool result like any other.
  const json::value* status = state.if_contains("status");
  json::value* result = state.if_contains("result");
  if (status == nullptr || *status != "completed" || result == nullptr || !result->is_object()) {
    return false;
  }
  const std::string tool = task_tools_.tool_of(answer.route.subject);
  return rewrite_tool_result(*result, tool, answer, add_event(CallKind::kTask, tool, answer));
}

bool ResultRewriter::rewrite_tool_result(json::value& slot, std::string_view tool,
                                         const Answer& answer, CallEvent& event) {
  json::object& result = slot.as_object();
  const config::BudgetSettings& budget = answer.profile.for_call(event.client, tool);
  event.budget = answer.profile.configured_for_call(event.client, tool).token_budget;
  const auto measured = [&](std::size_t original_tokens) {
    // Against the budget the pipeline plans with: the estimator margin included.
    event.over_budget = original_tokens > budget.token_budget;
    event.original_tokens = event.final_tokens = original_tokens;
  };
  // --sample-answers: drawn now, and taken of what goes out before the pipeline may move from it.
  const bool sampled = sampler_ != nullptr && sampler_->draw();
  const auto sample = [&](const json::object& sent) {
    if (sampled) sampler_->offer(answer.line.wall_now, tool, event.client, sent);
  };
  if (budget.observe) {
    sample(result);
    // The line goes out as it came. The pipeline may move values out of what it is given, which
    // only matters when other members of a batch are rewritten and the document re-serialized.
    event.observed = true;
    json::object copy;
    if (answer.in_batch) copy = result;
    json::object& subject = answer.in_batch ? copy : result;
    pipeline::ProcessedResult would_be = pipeline_.process(subject, budget,
                                                           {.tool = tool,
                                                            .rewrite = true,
                                                            .now = answer.line.now,
                                                            .wall_now = answer.line.wall_now,
                                                            .dry_run = true});
    measured(would_be.original_tokens);
    event.final_bytes = answer.line_bytes;
    if (would_be.rewritten) {
      // What enforce would have sent, measured as it would have gone out.
      json::object would_send{
          {"jsonrpc", "2.0"}, {"id", answer.id}, {"result", std::move(would_be.rewritten->result)}};
      event.final_bytes = to_json(would_send).size();
      take_record(event, std::move(would_be.rewritten->record));
    }
    return false;
  }
  const pipeline::CallContext context{
      .tool = tool, .rewrite = true, .now = answer.line.now, .wall_now = answer.line.wall_now};
  pipeline::ProcessedResult processed = pipeline_.process(result, budget, context);
  measured(processed.original_tokens);
  if (!processed.rewritten) {
    sample(result);
    return false;
  }
  slot = std::move(processed.rewritten->result);
  sample(slot.as_object());
  take_record(event, std::move(processed.rewritten->record));
  return true;
}

}  // namespace ctxguard::proxy
