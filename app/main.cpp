// ctxguard: keeps MCP tool results within a model's context budget.
// This file only wires the modules together; see docs/architecture.md.

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <iostream>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <spdlog/spdlog.h>

#include "config/command_line.hpp"
#include "config/profile.hpp"
#include "proxy/child_process.hpp"
#include "proxy/proxy.hpp"
#include "support/logging.hpp"
#include "support/platform_file.hpp"
#include "telemetry/stats_command.hpp"
#include "wrap/wrap_command.hpp"

namespace {

int run(int argc, char** argv) {
  using namespace ctxguard;
  proxy::ensure_standard_descriptors();
  // A report, not the proxy: it keeps the default SIGPIPE so `ctxguard stats f | head` ends
  // quietly, like any filter.
  if (argc >= 2 && std::string_view(argv[1]) == "stats") {
    // Only iostreams from here on; unsynced, `ctxguard stats -` reads stdin several times faster.
    std::ios_base::sync_with_stdio(false);
    return telemetry::run_stats(
        std::span<const char* const>(argv + 2, static_cast<std::size_t>(argc - 2)), std::cin,
        std::cout, std::cerr);
  }
  if (argc >= 2 && (std::string_view(argv[1]) == "wrap" || std::string_view(argv[1]) == "unwrap")) {
    const wrap::Mode mode =
        std::string_view(argv[1]) == "wrap" ? wrap::Mode::kWrap : wrap::Mode::kUnwrap;
    // The path written into the client's file: this binary wherever it was started from.
    const auto self = platform::executable_path(argc > 0 ? argv[0] : "");
    const wrap::WrapContext context{.platform = wrap::Platform::current(std::getenv),
                                    .self_path = self ? self->string() : "ctxguard"};
    return wrap::run_wrap(
        mode, std::span<const char* const>(argv + 2, static_cast<std::size_t>(argc - 2)), context,
        std::cout, std::cerr);
  }
  proxy::ignore_sigpipe();

  auto parsed = config::parse_command_line(std::span<const char* const>(argv, argc));
  if (!parsed) {
    std::fprintf(stderr, "ctxguard: %s\n", parsed.error().message.c_str());
    return proxy::kExitUsage;
  }
  auto& command_line = *parsed;
  switch (command_line.action) {
    case config::CommandLine::Action::kHelp:
      std::fputs(config::help_text().c_str(), stdout);
      return 0;
    case config::CommandLine::Action::kVersion:
      std::puts("ctxguard " CTXGUARD_VERSION);
      return 0;
    case config::CommandLine::Action::kCheckConfig:
    case config::CommandLine::Action::kRun:
      break;
  }

  // The file is read once here (every problem listed, exit 2) and again at every reload.
  auto loaded = config::load_profile(command_line.sources);
  if (!loaded) {
    std::fprintf(stderr, "ctxguard: the configuration is not valid:\n");
    for (const std::string& error : loaded.error().messages) {
      std::fprintf(stderr, "  %s\n", error.c_str());
    }
    return proxy::kExitUsage;
  }
  const config::ProfilePtr profile = *std::move(loaded);
  if (command_line.action == config::CommandLine::Action::kCheckConfig) {
    std::fputs(profile->describe().c_str(), stdout);
    return 0;
  }
  // The global settings (the spill directory; the cache, cursor lifetime and tools/list) as the
  // file says too.
  profile->copy_globals_to(command_line.settings);

  // The secret is read from the environment, not a flag: flags show up in `ps`.
  if (const char* secret = std::getenv("CTXGUARD_CURSOR_SECRET"); secret != nullptr && *secret) {
    if (std::strlen(secret) < 16) {
      std::fprintf(stderr, "ctxguard: CTXGUARD_CURSOR_SECRET must be at least 16 characters\n");
      return proxy::kExitUsage;
    }
    command_line.settings.process.cursor_secret = secret;
  }
  // Kept in ctxguard: the server inherits the environment, and it has no use for the key that
  // makes cursors unforgeable (docs/security.md).
  platform::unset_environment("CTXGUARD_CURSOR_SECRET");
  try {
    logging::install(command_line.settings.log.level, command_line.settings.log.file);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "ctxguard: cannot open the log file: %s\n", error.what());
    return proxy::kExitUsage;
  }
  return proxy::run_proxy(command_line.settings, command_line.sources, profile);
}

}  // namespace

int main(int argc, char** argv) {
  // Anything thrown here is a bug or resource exhaustion at start-up: one line, a clear status.
  try {
    // UTF-8 on every platform (Windows: from the UTF-16 command line, not the ANSI code page).
    std::vector<std::string> arguments = ctxguard::platform::utf8_arguments(argc, argv);
    std::vector<char*> utf8_argv;
    for (std::string& argument : arguments) utf8_argv.push_back(argument.data());
    utf8_argv.push_back(nullptr);
    return run(static_cast<int>(arguments.size()), utf8_argv.data());
  } catch (const std::exception& error) {
    std::fprintf(stderr, "ctxguard: internal error: %s\n", error.what());
  } catch (...) {
    std::fprintf(stderr, "ctxguard: internal error\n");
  }
  return ctxguard::proxy::kExitInternal;
}
