#include "proxy/interceptor.hpp"

// Task-augmented tools/call: which tool a task runs, so that its result, when it comes (through
// tasks/result, or tasks/get in the tasks extension), is fitted with that tool's settings.

namespace ctxguard::proxy {

namespace json = boost::json;

namespace {

// Task ids remembered at most (a client that never fetches its tasks' results must not grow us).
constexpr std::size_t kMaxRememberedTasks = 4096;

}  // namespace

void Interceptor::remember_task(std::string_view task_id, std::string_view tool) {
  if (task_id.empty()) return;
  if (task_tools_.size() >= kMaxRememberedTasks) task_tools_.clear();
  task_tools_[std::string(task_id)] = std::string(tool);
}

std::string Interceptor::task_tool(std::string_view task_id) const {
  const auto task = task_tools_.find(std::string(task_id));
  return task != task_tools_.end() ? task->second : "task:" + std::string(task_id);
}

bool Interceptor::rewrite_task_state(json::object& state, const Answer& answer) {
  // The tasks extension's tasks/get: a completed task carries what the original request would
  // have answered, in `result`; of a tools/call that is a tool result like any other.
  const json::value* status = state.if_contains("status");
  json::value* result = state.if_contains("result");
  if (status == nullptr || *status != "completed" || result == nullptr || !result->is_object()) {
    return false;
  }
  const std::string tool = task_tool(answer.route.subject);
  return rewrite_tool_result(*result, tool, answer,
                             add_event(telemetry::CallKind::kTask, tool, answer));
}

}  // namespace ctxguard::proxy
