#pragma once
// The effective settings of one ctxguard process: a plain aggregate with its defaults in place.

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <spdlog/common.h>

namespace ctxguard::config {

struct LogSettings {
  spdlog::level::level_enum level = spdlog::level::info;
  std::optional<std::string> file;  // stderr when empty
};

struct LifecycleSettings {
  // After the client closes stdin: how long the server may take to exit before SIGTERM.
  std::chrono::milliseconds shutdown_timeout{5000};
  // After SIGTERM: how long before SIGKILL.
  std::chrono::milliseconds kill_timeout{2000};
};

struct Settings {
  std::vector<std::string> server_command;  // argv of the MCP server; [0] is looked up on PATH
  LogSettings log;
  LifecycleSettings lifecycle;
  std::size_t max_message_bytes = std::size_t{256} << 20;  // longer lines are refused
};

}  // namespace ctxguard::config
