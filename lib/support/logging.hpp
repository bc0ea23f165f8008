#pragma once
// Logging goes to stderr or a file, never to stdout: stdout is the MCP protocol wire.

#include <optional>
#include <string>
#include <string_view>

#include <spdlog/common.h>

namespace ctxguard::logging {

// Parses "trace", "debug", "info", "warn", "error", "critical" or "off".
std::optional<spdlog::level::level_enum> parse_level(std::string_view name);

// Replaces spdlog's default logger (which writes to stdout) with one writing to stderr, or to
// `file` when given. Call before anything logs. Throws spdlog::spdlog_ex if the file cannot be
// opened: this is start-up, where exceptions are allowed.
void install(spdlog::level::level_enum level, const std::optional<std::string>& file);

}  // namespace ctxguard::logging
