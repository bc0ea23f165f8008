#pragma once
// `ctxguard [options] -- <server command> [args...]`
//
// argv is split at the first `--` before Boost.Program_options sees it: everything after belongs
// to the server, untouched, even if it looks like one of our options.

#include <span>
#include <string>
#include <variant>

#include "config/settings.hpp"

namespace ctxguard::config {

struct CommandLine {
  enum class Action { kRun, kHelp, kVersion };
  Action action = Action::kRun;
  Settings settings;
};

// One line for stderr; the caller exits with status 2.
struct UsageError {
  std::string message;
};

std::variant<CommandLine, UsageError> parse_command_line(std::span<const char* const> argv);

// The text printed by --help: usage, every option with its default, and an example.
std::string help_text();

}  // namespace ctxguard::config
