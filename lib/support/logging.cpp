#include "support/logging.hpp"

#include <memory>

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace ctxguard::logging {

std::optional<spdlog::level::level_enum> parse_level(std::string_view name) {
  static constexpr std::pair<std::string_view, spdlog::level::level_enum> kLevels[] = {
      {"trace", spdlog::level::trace}, {"debug", spdlog::level::debug},
      {"info", spdlog::level::info},   {"warn", spdlog::level::warn},
      {"error", spdlog::level::err},   {"critical", spdlog::level::critical},
      {"off", spdlog::level::off},
  };
  for (const auto& [text, level] : kLevels) {
    if (text == name) return level;
  }
  return std::nullopt;
}

void install(spdlog::level::level_enum level, const std::optional<std::string>& file) {
  spdlog::drop("ctxguard");
  std::shared_ptr<spdlog::logger> logger;
  if (file) {
    logger = spdlog::basic_logger_mt("ctxguard", *file);
  } else {
    // Unsynchronised stderr sink: the proxy runs on one thread, and stderr is shared with the child
    // server, whose lines interleave with ours line by line.
    logger = spdlog::stderr_logger_st("ctxguard");
  }
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ ctxguard: %v");
  logger->set_level(level);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(std::move(logger));
}

}  // namespace ctxguard::logging
