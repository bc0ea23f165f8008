#include "proxy/task_tools.hpp"

namespace ctxguard::proxy {

namespace {

constexpr std::size_t kMaxRememberedTasks = 4096;

}  // namespace

void TaskTools::remember(std::string_view task_id, std::string_view tool) {
  if (task_id.empty()) return;
  if (tools_.size() >= kMaxRememberedTasks) tools_.clear();
  tools_[std::string(task_id)] = std::string(tool);
}

std::string TaskTools::tool_of(std::string_view task_id) const {
  const auto task = tools_.find(std::string(task_id));
  return task != tools_.end() ? task->second : "task:" + std::string(task_id);
}

}  // namespace ctxguard::proxy
