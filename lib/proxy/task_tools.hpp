#pragma once
// Task-augmented tools/call: which tool each task runs, so that its result, when it comes
// (through tasks/result, or tasks/get in the tasks extension), is fitted with that tool's
// settings (docs/protocol.md 9).

#include <string>
#include <string_view>
#include <unordered_map>

namespace ctxguard::proxy {

class TaskTools {
 public:
  // Task `task_id` runs `tool` (an empty id is none). At most 4,096 tasks are remembered: a
  // client that never fetches its tasks' results must not grow the process.
  void remember(std::string_view task_id, std::string_view tool);
  // The tool task `task_id` runs, or "task:<id>" when its call was not seen.
  std::string tool_of(std::string_view task_id) const;

 private:
  std::unordered_map<std::string, std::string> tools_;
};

}  // namespace ctxguard::proxy
